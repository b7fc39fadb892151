//! Same scenario + seed => identical results for 1, 2 and 4 threads.

use netstep_core::engine::WindowMode;

use crate::common::*;

fn check(name: &str, mut s: netstep_scenario::Scenario) {
    s.model.record_deliveries = true;
    let one = run_window(&s, 1, WindowMode::Exact);
    assert!(one.stats.packet_hops > 0, "{name}: nothing simulated");
    for threads in [2, 4] {
        let many = run_window(&s, threads, WindowMode::Exact);
        assert_same_simulation(&one, &many, &format!("{name}, {threads} threads"));
        assert_eq!(one.stats.windows, many.stats.windows);
    }
}

#[test]
fn quickstart_is_identical_for_any_thread_count() {
    check(
        "quickstart",
        scenario_file("scenarios/quickstart.toml", &["traffic.0.duration=\"3ms\""]),
    );
}

#[test]
fn days_baseline_is_identical_for_any_thread_count() {
    check(
        "days k4 f64",
        scenario_file(
            "scenarios/days-baseline/fattree-k4-f64.toml",
            &["traffic.0.packets=40"],
        ),
    );
}

#[test]
fn quantized_runs_are_deterministic_too() {
    let mut s = scenario_file("scenarios/quickstart.toml", &["traffic.0.duration=\"3ms\""]);
    s.model.record_deliveries = true;
    let q = WindowMode::Quantized(netstep_core::units::SimTime::from_us(10));
    let one = run_window(&s, 1, q);
    let two = run_window(&s, 2, q);
    assert_same_simulation(&one, &two, "quantized");
}

#[test]
fn lossy_links_are_deterministic() {
    let text = dumbbell_tcp(4, "1Gbps", "10us", "100KB", "300KB", "");
    check(
        "lossy dumbbell",
        scenario(&text, &["topology.links.loss=0.01"]),
    );
}

/// HPCC carries telemetry stacks between LPs beside the events: 1, 2 and 4 threads (and so
/// different chunk boundaries) still simulate the same, with coalesced ACKs and wire loss.
#[test]
fn hpcc_telemetry_is_identical_for_any_thread_count() {
    check(
        "hpcc",
        scenario_file(
            "scenarios/transports/hpcc.toml",
            &[
                "traffic.0.flows.0.size=\"1MB\"",
                "traffic.0.flows.1.size=\"1MB\"",
                "traffic.0.flows.1.start=\"50us\"",
                "topology.fabric_links.loss=0.002",
                "transport.ack_every=2",
            ],
        ),
    );
}

/// Quantization delays only what must wait: src -(1 Gb/s, 1 us)- sw -(1 Gb/s, 30 us)- dst, one
/// 1,000 B packet (8 us to serialize), q = 18 us (two lookaheads of 9 us). Sent at 0 it reaches
/// sw at 9 us, inside its window [0, 18): it waits until 18 us. Sent on at 18 us it reaches dst
/// at 18 + 8 + 30 = 56 us, past its window's end (36 us): it keeps that exact time (rounding
/// every arrival up to the grid would give 72 us). The exact run delivers at 9 + 8 + 30 = 47 us.
#[test]
fn quantization_delays_only_arrivals_inside_their_window() {
    let text = r#"
[topology]
kind = "custom"
hosts = ["src", "dst"]
switches = ["sw"]
links = [
  { a = "src", b = "sw", rate = "1Gbps", delay = "1us" },
  { a = "sw", b = "dst", rate = "1Gbps", delay = "30us" },
]
[[traffic]]
kind = "flows"
transport = { kind = "open_loop", packet_size = "1000B", interval = "1ms" }
flows = [{ src = "src", dst = "dst", packets = 1 }]
"#;
    let mut s = scenario(text, &[]);
    s.model.record_deliveries = true;
    let us = |t: u64| t * 1_000_000;
    let delivered = |window| run_window(&s, 1, window).deliveries[0].arrived_ps;
    assert_eq!(delivered(WindowMode::Exact), us(47));
    let q = WindowMode::Quantized(netstep_core::units::SimTime::from_us(18));
    assert_eq!(delivered(q), us(56));
    assert_eq!(run_window(&s, 2, q).deliveries[0].arrived_ps, us(56));
}

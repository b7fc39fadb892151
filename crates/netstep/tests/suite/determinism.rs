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

//! Exact mode equals the sequential reference engine, row for row, on every golden scenario.

use crate::common::*;

fn check(name: &str, mut s: netstep_scenario::Scenario) {
    s.model.record_deliveries = true;
    let reference = exact_on(&s, name, &[1, 2]);
    assert!(reference.stats.packet_hops > 0, "{name}: nothing simulated");
}

#[test]
fn quickstart_matches_reference() {
    check(
        "quickstart",
        scenario_file("scenarios/quickstart.toml", &["traffic.0.duration=\"3ms\""]),
    );
}

#[test]
fn days_baseline_matches_reference() {
    check(
        "days k8 f64",
        scenario_file(
            "scenarios/days-baseline/fattree-k8-f64.toml",
            &["traffic.0.packets=30"],
        ),
    );
}

#[test]
fn queueing_scenario_matches_reference() {
    check(
        "mm1",
        scenario_file(
            "scenarios/queueing/mm1-rho09.toml",
            &["traffic.0.flows.0.packets=5000"],
        ),
    );
}

#[test]
fn congested_tcp_dumbbell_with_loss_matches_reference() {
    let text = dumbbell_tcp(6, "1Gbps", "5us", "30KB", "400KB", "");
    check(
        "tcp dumbbell",
        scenario(&text, &["topology.links.loss=0.005"]),
    );
}

#[test]
fn explicit_paths_and_leaf_spine_match_reference() {
    let text = r#"
[topology]
kind = "leaf_spine"
leaves = 3
spines = 2
hosts_per_leaf = 2
[topology.links]
rate = "10Gbps"
delay = "2us"
buffer = "50KB"
[[traffic]]
kind = "flows"
flows = [
  { src = "h0", dst = "h5", size = "200KB", path = ["h0", "leaf0", "spine1", "leaf2", "h5"] },
  { src = "h1", dst = "h4", size = "300KB", start = "5us" },
]
[[traffic]]
kind = "poisson"
load = 0.6
cdf = "../datasets/websearch.toml"
duration = "1ms"
"#;
    let s = scenario(text, &[]);
    check("leaf-spine", s);
}

#[test]
fn stopping_at_a_duration_matches_reference() {
    let text = dumbbell_tcp(
        3,
        "1Gbps",
        "5us",
        "30KB",
        "10MB",
        "[simulation]\nduration = \"2ms\"\n",
    );
    check("duration", scenario(&text, &[]));
}

#[test]
fn busy_host_nics_match_reference() {
    // Hosts with many flows each, so the NIC's socket queues, budgets and both schedulers are
    // exercised; plus a lossy fabric so drops and retransmissions happen.
    for scheduler in ["round_robin", "fifo"] {
        check(
            &format!("quickstart with busy NICs ({scheduler})"),
            scenario_file(
                "scenarios/quickstart.toml",
                &[
                    "traffic.0.duration=\"2ms\"",
                    "traffic.0.load=0.8",
                    "nic.buffer=\"6pkts\"",
                    "nic.per_flow=\"3KB\"",
                    &format!("nic.scheduler=\"{scheduler}\""),
                    "topology.links.loss=0.001",
                ],
            ),
        );
    }
}

/// A k = 4 FatTree of RDMA senders under Poisson web-search load, their NICs pulling
/// (`[nic] scheduler = "pull"`), with `cc` and RED marking at dequeue on every link.
fn pulled_rdma(cc: &str) -> String {
    format!(
        r#"
[simulation]
seed = 5
[topology]
kind = "fat_tree"
k = 4
[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "256KB"
aqm = {{ kind = "red", min = "5KB", max = "50KB", max_p = 0.2, weight = 1, ecn = true, spread = false, mark_at = "dequeue" }}
[nic]
scheduler = "pull"
[transport]
kind = "rdma"
cc = "{cc}"
[[traffic]]
kind = "poisson"
load = 0.8
cdf = "../datasets/websearch.toml"
duration = "2ms"
"#
    )
}

#[test]
fn pulling_rdma_nics_match_reference() {
    // Hosts with several RDMA flows at once: the pulled turn order, pacing from the pull,
    // wake-ups and finished queue pairs leaving the turns, for each rate control.
    for cc in ["dcqcn", "timely", "hpcc", "dctcp"] {
        let mut s = scenario(&pulled_rdma(cc), &[]);
        s.model.record_deliveries = true;
        let reference = exact_on_1_and_4_threads(&s, &format!("pulling NICs ({cc})"));
        // Several flows of one host overlap, so turns are taken.
        let overlapping = s.model.flows.flows.iter().enumerate().any(|(i, f)| {
            let end = reference
                .flows
                .get(i)
                .end
                .unwrap_or(netstep_core::units::SimTime::MAX);
            s.model.flows.flows[i + 1..]
                .iter()
                .any(|g| g.src == f.src && g.start < end)
        });
        assert!(overlapping, "{cc}: no host runs two flows at once");
    }
}

/// FIFO switch ports send a window's departures as a batch (`engine/node/port/batch.rs`): the
/// same simulation, hop records and queue samples as one event per departure, on congested
/// runs where batches form (drops by a byte and a packet limit and by `admission_room`, wire
/// loss, exact and quantized windows, 1 and 2 threads).
#[test]
fn batched_departures_equal_one_event_per_departure() {
    use netstep_core::engine::trace::{HopFilter, MemoryTrace};
    use netstep_core::engine::window::WindowEngine;
    use netstep_core::engine::{EngineConfig, WindowMode};
    use netstep_core::units::SimTime;
    let cases = [
        (
            "mm1",
            scenario_file(
                "scenarios/queueing/mm1-rho09.toml",
                &["traffic.0.flows.0.packets=3000"],
            ),
        ),
        (
            "tcp dumbbell, byte buffer, lossy",
            scenario(
                &dumbbell_tcp(6, "10Gbps", "5us", "30KB", "400KB", ""),
                &["topology.links.loss=0.005"],
            ),
        ),
        (
            "tcp dumbbell, admission room",
            scenario(
                &dumbbell_tcp(6, "10Gbps", "5us", "30KB", "400KB", ""),
                &["switch.admission_room=\"1500B\""],
            ),
        ),
        (
            "tcp dumbbell, packet buffer",
            scenario(
                &dumbbell_tcp(8, "10Gbps", "4us", "12pkts", "300KB", ""),
                &[],
            ),
        ),
        (
            "quickstart",
            scenario_file("scenarios/quickstart.toml", &["traffic.0.duration=\"2ms\""]),
        ),
    ];
    for (name, mut s) in cases {
        assert!(s.model.batches_departures(), "{name}: no batches here");
        s.model.record_deliveries = true;
        s.model.trace.packet_hops = Some(HopFilter::all());
        s.model.trace.queue_samples = Some(SimTime::from_us(7));
        let quantum = WindowMode::Quantized(SimTime(s.model.lookahead().0 * 3));
        for (threads, window) in [(1, WindowMode::Exact), (2, WindowMode::Exact), (2, quantum)] {
            let run = |per_event: bool| {
                let config = EngineConfig {
                    threads,
                    window,
                    end: s.meta.duration,
                };
                let mut engine = WindowEngine::new(&s.model, config).unwrap();
                if per_event {
                    engine = engine.per_event_departures();
                }
                let mut trace = MemoryTrace::default();
                let out = engine.run_traced(|_| {}, &mut trace).expect("run");
                (out, trace)
            };
            let what = format!("{name}, {threads} threads, {window:?}");
            let ((batched, tb), (single, ts)) = (run(false), run(true));
            assert!(batched.stats.batched > 0, "{what}: no batch formed");
            assert_eq!(single.stats.batched, 0, "{what}");
            assert!(batched.stats.drops > 0 || name != "tcp dumbbell, packet buffer");
            assert_same_simulation(&batched, &single, &what);
            same_rows(&tb.hops, &ts.hops, &format!("{what}: hop record"));
            same_rows(&tb.samples, &ts.samples, &format!("{what}: queue sample"));
        }
    }
}

/// LPs whose next event is far ahead wait off the active list (`engine/far.rs`): a fan-in of
/// 800 one-message TCP senders, each holding its 1 s retransmission timer while the server's
/// link drains the messages over 666 us (about 650 windows), parks them and brings them back
/// with their ACKs; the simulation is the reference engine's on 1 and 4 threads (exact), and a
/// quantized run parks too and drops nothing.
#[test]
fn far_ahead_lps_wait_off_the_active_list_and_match_reference() {
    use netstep_core::engine::WindowMode;
    use netstep_core::units::SimTime;
    let s = scenario(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 8\nspines = 2\nhosts_per_leaf = 101\n\n\
         [topology.links]\nrate = \"10Gbps\"\ndelay = \"1us\"\nbuffer = \"8MB\"\n\n\
         [transport]\nkind = \"tcp\"\n\n\
         [[traffic]]\nkind = \"incast\"\nreceiver = \"h0\"\nsenders = 800\nsize = \"1KB\"\n",
        &[],
    );
    let reference = exact_on(&s, "fan-in", &[1, 4]);
    assert_eq!(reference.stats.drops, 0);
    assert!(
        reference.flows.iter().all(|f| f.end.is_some()),
        "every message arrives"
    );
    for threads in [1, 4] {
        let exact = run_window(&s, threads, WindowMode::Exact);
        assert!(
            exact.stats.parked >= 800,
            "{threads} threads: {} LPs parked",
            exact.stats.parked
        );
    }
    let quantized = run_window(&s, 2, WindowMode::Quantized(SimTime::from_us(3)));
    assert!(quantized.stats.parked > 0);
    assert_eq!(quantized.stats.drops, 0);
}

/// Asserts two traces hold the same rows, naming the first that differs (not the whole lists).
fn same_rows<T: PartialEq + std::fmt::Debug>(a: &[T], b: &[T], what: &str) {
    assert_eq!(a.len(), b.len(), "{what} counts differ");
    if let Some(i) = (0..a.len()).find(|&i| a[i] != b[i]) {
        panic!("{what} {i} differs: {:?} vs {:?}", a[i], b[i]);
    }
}

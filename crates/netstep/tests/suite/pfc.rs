//! PFC (IEEE 802.1Qbb): an 8-to-1 incast into a buffer smaller than the incast loses nothing
//! with the class lossless and loses packets without; PAUSE and RESUME alternate on every
//! paused link; a cyclic buffer dependency is reported as a deadlock, not a hang; exactness
//! and thread invariance.

use netstep_core::engine::WindowMode;

use crate::common::*;

const INCAST: &str = "scenarios/elements/pfc-incast.toml";

#[test]
fn an_incast_into_a_small_buffer_is_lossless_with_pfc() {
    let s = scenario_file(INCAST, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    let delivered: u64 = out.flows.iter().map(|f| f.packets_delivered).sum();
    println!(
        "PFC: {} drops, {delivered} delivered, {} frames, end {:?}",
        out.stats.drops,
        out.pfc_events.len(),
        out.flows.iter().filter_map(|f| f.end).max()
    );
    assert_eq!(out.stats.drops, 0);
    assert_eq!(delivered, 3200);
    assert_eq!(out.pfc_headroom_exceeded, 0);
    assert_eq!(out.pfc_deadlock, None);
    // The receiver's link is the bottleneck and stays busy: 3200 packets of 1500 B at
    // 10 Gb/s take 3.84 ms; the last arrives within a few link delays of that.
    let end = out.flows.iter().filter_map(|f| f.end).max().unwrap().0;
    assert!((3_840_000_000..3_850_000_000).contains(&end), "{end}");
    // Frames go from the switch (node 9) to every sender, PAUSE and RESUME alternating.
    let net = &s.model.net;
    for sender in 0..8u32 {
        let port = net.port_id(9, net.port_towards(9, sender).unwrap());
        let frames: Vec<bool> = out
            .pfc_events
            .iter()
            .filter(|e| e.port == port)
            .map(|e| e.pause)
            .collect();
        assert!(frames.len() >= 2, "sender {sender}: {frames:?}");
        for (i, &pause) in frames.iter().enumerate() {
            assert_eq!(pause, i % 2 == 0, "sender {sender}: {frames:?}");
        }
        assert!(out.pfc_events.iter().all(|e| e.node == 9 && e.class == 3));
    }
    // The same incast with class 3 lossy: the 100 KB buffer overflows.
    let lossy = scenario_file(INCAST, &["switch.pfc.classes=[5]"]);
    let out = run_window(&lossy, 1, WindowMode::Exact);
    println!("without PFC: {} drops", out.stats.drops);
    assert!(out.stats.drops > 1000);
    assert!(out.pfc_events.is_empty());
}

#[test]
fn pfc_is_exact_and_thread_invariant() {
    let s = scenario_file(INCAST, &[]);
    let reference = exact_on_1_and_4_threads(&s, "pfc");
    assert!(!reference.pfc_events.is_empty());
}

/// Three switches in a ring, each flow going two hops round it: every ring link carries two
/// line-rate flows, every switch pauses its upstream, and the pauses form a cycle.
const RING: &str = r#"
[simulation]
seed = 1
[topology]
kind = "custom"
hosts = ["ha", "hb", "hc"]
switches = ["a", "b", "c"]
defaults = { rate = "10Gbps", delay = "1us", buffer = "1MB" }
links = [
  { a = "ha", b = "a" }, { a = "hb", b = "b" }, { a = "hc", b = "c" },
  { a = "a", b = "b" }, { a = "b", b = "c" }, { a = "c", b = "a" },
]
[switch]
pfc = { classes = [0], xoff = "20KB", xon = "10KB" }
[transport]
kind = "open_loop"
packet_size = "1500B"
rate = "10Gbps"
[[traffic]]
kind = "flows"
flows = [
  { src = "ha", dst = "hc", packets = 2000, path = ["ha", "a", "b", "c", "hc"] },
  { src = "hb", dst = "ha", packets = 2000, path = ["hb", "b", "c", "a", "ha"] },
  { src = "hc", dst = "hb", packets = 2000, path = ["hc", "c", "a", "b", "hb"] },
]
"#;

#[test]
fn a_cyclic_pause_is_reported_as_a_deadlock() {
    let s = scenario(RING, &[]);
    let out = run_window(&s, 2, WindowMode::Exact);
    // The run ends (no event is left) with every flow stuck and the cycle a -> b -> c named.
    assert!(out.flows.iter().all(|f| f.end.is_none()));
    assert_eq!(out.stats.drops, 0);
    let mut cycle = out.pfc_deadlock.clone().expect("deadlock reported");
    cycle.sort();
    assert_eq!(cycle, [3, 4, 5]);
    assert_same_simulation(&run_reference(&s), &out, "deadlock");
    // One flow alone goes through: no cycle.
    let one = scenario(
        RING,
        &[
            "traffic.0.flows=[{ src = \"ha\", dst = \"hc\", packets = 2000, path = [\"ha\", \"a\", \"b\", \"c\", \"hc\"] }]",
        ],
    );
    let out = run_window(&one, 1, WindowMode::Exact);
    assert_eq!(out.pfc_deadlock, None);
    assert!(out.flows[0].end.is_some());
}

#[test]
fn pfc_settings_are_checked() {
    for (set, needle) in [
        (
            r#"switch.pfc={ classes = [3], xoff = "10KB", xon = "20KB" }"#,
            "switch.pfc.xon: need 0 < xoff and xon <= xoff",
        ),
        (
            r#"switch.pfc={ classes = [9], xoff = "10KB", xon = "5KB" }"#,
            "switch.pfc.classes[0]: traffic classes are 0-7, got 9",
        ),
        (
            r#"switch.pfc={ classes = [], xoff = "10KB", xon = "5KB" }"#,
            "switch.pfc.classes: name at least one lossless class",
        ),
        (
            r#"topology.defaults.scheduler={ kind = "drr" }"#,
            "PFC pauses classes on fifo and strict_priority ports",
        ),
    ] {
        let err = load_error(INCAST, &[set]);
        assert!(err.contains(needle), "{set}: {err}");
    }
}

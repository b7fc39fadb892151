//! Link failures: a flow over a failed core link completes over another path, packets on or
//! sent onto a dead link are lost as `link_down`, a host link that comes back lets its flow
//! finish; exactness and thread invariance with failures; bad failure entries are refused.

use netstep_core::engine::trace::DropReason;
use netstep_core::packet::PacketKind;

use crate::common::*;

const FILE: &str = "scenarios/elements/link-failure.toml";

#[test]
fn a_flow_over_a_failed_core_link_completes_over_another_path() {
    let mut s = scenario_file(FILE, &[]);
    let net = s.model.net.clone();
    let node = |name: &str| {
        // FatTree k = 4 numbering: hosts 0-15, edges 16-23, aggregation 24-31, cores 32-35.
        match name {
            "agg0_0" => 24,
            "core0_0" => 32,
            "core0_1" => 33,
            "edge2_0" => 20,
            "h8" => 8,
            _ => unreachable!(),
        }
    };
    let port = |a: &str, b: &str| {
        let (a, b) = (node(a), node(b));
        net.port_id(a, net.port_towards(a, b).unwrap())
    };
    let dead_core = port("agg0_0", "core0_1");
    let live_core = port("agg0_0", "core0_0");
    let (out, trace) = traced(&mut s);
    let down_ps = 500_000_000;
    let data0 = |p: u32| {
        trace
            .hops
            .iter()
            .filter(move |h| h.flow == 0 && h.kind == PacketKind::Data && h.port == p)
    };
    // Before the failure the flow uses its ECMP uplink; nothing crosses it once it is down.
    assert!(data0(dead_core).any(|h| h.depart_ps.unwrap() < down_ps));
    assert_eq!(
        data0(dead_core)
            .filter(|h| h.drop.is_none() && h.depart_ps.unwrap() > down_ps)
            .count(),
        0
    );
    // After it, the surviving uplink carries the flow.
    let moved = data0(live_core)
        .filter(|h| h.drop.is_none() && h.depart_ps.unwrap() > down_ps)
        .count();
    assert!(
        moved > 500,
        "{moved} packets over core0_0 after the failure"
    );
    // What was on the wire at 500 us is lost as link_down; no other drop anywhere.
    let lost: Vec<_> = trace.hops.iter().filter(|h| h.drop.is_some()).collect();
    assert!(lost.iter().all(|h| h.drop == Some(DropReason::LinkDown)));
    assert!(lost.iter().any(|h| h.flow == 0 && h.port == dead_core));
    let f0 = &out.flows[0];
    let f1 = &out.flows[1];
    println!(
        "flow 0: end {:?}, {} dropped, {} retransmits; flow 1: end {:?}, {} dropped, {} timeouts",
        f0.end, f0.packets_dropped, f0.retransmits, f1.end, f1.packets_dropped, f1.timeouts
    );
    assert!(f0.end.is_some(), "flow 0 completes");
    // Flow 1's destination link is down from 100 us to 2 ms: it completes only after, with
    // retransmission timeouts while it is down, and everything it lost was link_down at the
    // dead host link (sent towards it by edge2_0, or the ACK h8 sent onto it).
    let end1 = f1.end.expect("flow 1 completes");
    assert!(end1.0 > 2_000_000_000, "{end1}");
    assert!(f1.timeouts > 0);
    let host_link = [port("edge2_0", "h8"), port("h8", "edge2_0")];
    assert!(
        lost.iter()
            .filter(|h| h.flow == 1)
            .all(|h| host_link.contains(&h.port))
    );
    assert_eq!(
        lost.len() as u64,
        out.stats.drops,
        "every drop is in the trace as link_down"
    );
}

#[test]
fn failures_are_exact_and_thread_invariant_with_every_routing_mode() {
    for mode in ["ecmp", "spray_random", "adaptive"] {
        let s = scenario_file(FILE, &[&format!("routing.mode=\"{mode}\"")]);
        let reference = exact_on_1_and_4_threads(&s, mode);
        assert!(reference.stats.drops > 0);
    }
}

#[test]
fn bad_failure_entries_are_refused() {
    for (set, needle) in [
        (
            r#"failures.0.link=["agg0_0"]"#,
            "failures[0].link: names the link's two end nodes",
        ),
        (
            r#"failures.0.link=["agg0_0", "core9"]"#,
            "failures[0].link: no node named \"core9\"",
        ),
        (
            r#"failures.0.link=["h0", "h1"]"#,
            "failures[0].link: no link joins \"h0\" and \"h1\"",
        ),
        (
            r#"failures.1.up="50us""#,
            "failures[1].up: must be after down",
        ),
        (r#"failures.0.down="soon""#, "failures[0].down"),
    ] {
        let err = load_error(FILE, &[set]);
        assert!(err.contains(needle), "{set}: {err}");
    }
}

#[test]
fn a_failure_must_name_one_of_parallel_links() {
    let text = r#"
[topology]
kind = "custom"
hosts = ["a", "b"]
switches = ["s1", "s2"]
links = [{ a = "a", b = "s1" }, { a = "s1", b = "s2" }, { a = "s1", b = "s2" }, { a = "s2", b = "b" }]
[[traffic]]
kind = "flows"
flows = [{ src = "a", dst = "b", size = "10KB" }]
[[failures]]
link = ["s2", "s1"]
down = "1us"
"#;
    let err = netstep_scenario::load_str(
        text,
        "test.toml",
        "test",
        None,
        &[],
        &netstep_scenario::Limits::machine(),
    )
    .err()
    .expect("refused")
    .to_string();
    assert!(
        err.contains("failures[0].link: 2 parallel links join \"s2\" and \"s1\""),
        "{err}"
    );
}

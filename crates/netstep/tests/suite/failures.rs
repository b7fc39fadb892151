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
    let f0 = &out.flows.get(0);
    let f1 = &out.flows.get(1);
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
    let err = text_error(text);
    assert!(
        err.contains("failures[0].link: 2 parallel links join \"s2\" and \"s1\""),
        "{err}"
    );
}

/// A ring of ten switches with a shortcut: hosts `a` (on s0) and `b` (on s1) are two switches
/// apart over the shortcut, ten the long way round (s0, s2, ..., s9, s1).
fn ring(flow: &str, failures: &str) -> String {
    let mut links = vec![
        "{ a = \"a\", b = \"s0\" }".to_string(),
        "{ a = \"b\", b = \"s1\" }".to_string(),
        "{ a = \"s0\", b = \"s1\" }".to_string(),
        "{ a = \"s0\", b = \"s2\" }".to_string(),
    ];
    links.extend((2..9).map(|i| format!("{{ a = \"s{i}\", b = \"s{}\" }}", i + 1)));
    links.push("{ a = \"s9\", b = \"s1\" }".to_string());
    let switches: Vec<String> = (0..10).map(|i| format!("\"s{i}\"")).collect();
    format!(
        "[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nswitches = [{}]\nlinks = [{}]\n[topology.defaults]\nrate = \"10Gbps\"\ndelay = \"1us\"\n[[traffic]]\nkind = \"flows\"\n{flow}\n{failures}",
        switches.join(", "),
        links.join(", ")
    )
}

/// HPCC's telemetry holds 8 records: a path over more switches is refused the same way
/// whether a flow's own route or a failure's reroute makes it (issue "errors at the door",
/// class 5); a packet that still gets there in flight stops the run with an error.
#[test]
fn an_hpcc_path_longer_than_its_telemetry_is_refused_however_it_arises() {
    let hpcc = "transport = { kind = \"rdma\", cc = \"hpcc\" }\nflows = [{ src = \"a\", dst = \"b\", size = \"100KB\" }]";
    // The shortcut alone: two switches, accepted.
    scenario(&ring(hpcc, ""), &[]);
    for failure in [
        "[[failures]]\nlink = [\"s0\", \"s1\"]\ndown = \"0s\"",
        "[[failures]]\nlink = [\"s0\", \"s1\"]\ndown = \"50us\"\nup = \"80us\"",
    ] {
        let error = load_error_text(&ring(hpcc, failure));
        assert!(
            error.contains("failures")
                && error.contains("crosses 10 switches")
                && error.contains("8 per-hop telemetry records"),
            "{error}"
        );
    }
    // An explicit path the long way round: refused by the same rule.
    let long = "flows = [{ src = \"a\", dst = \"b\", size = \"100KB\", path = [\"a\", \"s0\", \"s2\", \"s3\", \"s4\", \"s5\", \"s6\", \"s7\", \"s8\", \"s9\", \"s1\", \"b\"] }]";
    let error = load_error_text(&ring(
        &format!("transport = {{ kind = \"rdma\", cc = \"hpcc\" }}\n{long}"),
        "",
    ));
    assert!(error.contains("crosses 10 switches"), "{error}");
    // At run time (a packet that reaches a ninth switch: here the long explicit path given to
    // the engine directly): the run stops with an error, on any engine.
    let mut s = scenario(&ring(hpcc, ""), &[]);
    let open_loop = scenario(
        &ring(
            &format!(
                "transport = {{ kind = \"open_loop\", packet_size = \"1000B\", interval = \"1us\" }}\n{long}"
            ),
            "",
        ),
        &[],
    );
    s.model.flows.flows[0].path = open_loop.model.flows.flows[0].path.clone();
    let config = netstep_core::engine::EngineConfig {
        threads: 1,
        window: netstep_core::engine::WindowMode::Exact,
        end: None,
    };
    let err = netstep_core::engine::window::WindowEngine::new(&s.model, config)
        .unwrap()
        .run(|_| {})
        .unwrap_err();
    assert!(
        matches!(
            err,
            netstep_core::engine::RunError::TelemetryOverflow { flow: 0, .. }
        ),
        "{err}"
    );
    assert_eq!(
        netstep_core::engine::reference::run(&s.model, None).unwrap_err(),
        err
    );
}

fn load_error_text(text: &str) -> String {
    let limits = netstep_scenario::Limits::machine();
    netstep_scenario::load_str(text, "ring.toml", "ring", None, &[], &limits)
        .err()
        .expect("refused")
        .to_string()
}

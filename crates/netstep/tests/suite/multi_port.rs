//! Hosts of several ports (a GPU with an NVLink and a NIC link, as `netstep import simai`
//! builds them): each flow leaves by the first port of its route, each port has its own NIC
//! and line rate, and the run is exact on every thread count.

use crate::common::{exact_on_1_and_4_threads, scenario};

/// Host `a` has two ports: port 0 to `s1` at 10 Gb/s, port 1 to `s2` at 40 Gb/s; `b` hangs
/// off `s1`, `c` off `s2`, and `s1`-`s2` joins them (so every pair has a route either way).
fn two_port_host(nic: &str, transport: &str, flows: &str) -> String {
    format!(
        r#"
[simulation]
seed = 3
[topology]
kind = "custom"
hosts = ["a", "b", "c"]
switches = ["s1", "s2"]
links = [
  {{ a = "a", b = "s1", rate = "10Gbps" }},
  {{ a = "a", b = "s2", rate = "40Gbps" }},
  {{ a = "s1", b = "b", rate = "10Gbps" }},
  {{ a = "s2", b = "c", rate = "40Gbps" }},
  {{ a = "s1", b = "s2", rate = "10Gbps" }},
]
[topology.defaults]
delay = "1us"
buffer = "1MB"
{nic}
[transport]
{transport}
[[traffic]]
kind = "flows"
flows = [{flows}]
"#
    )
}

/// Bytes each of `a`'s two ports put on the wire.
fn a_ports(s: &netstep_scenario::Scenario, run: &netstep_core::engine::RunOutput) -> [u64; 2] {
    let a = s.node_names.iter().position(|n| n == "a").unwrap() as u32;
    let net = &s.model.net;
    assert_eq!(net.degree(a), 2);
    let tx = |local: u32| {
        let port = net.port_id(a, local);
        run.ports
            .iter()
            .find(|p| p.port == port)
            .map_or(0, |p| p.tx_bytes)
    };
    [tx(0), tx(1)]
}

#[test]
fn a_host_of_two_ports_sends_each_flow_by_its_route_s_first_port() {
    let flows = r#"{ src = "a", dst = "b", size = "1MB" }, { src = "a", dst = "c", size = "1MB" }, { src = "b", dst = "a", size = "100KB" }, { src = "c", dst = "a", size = "100KB" }"#;
    let s = scenario(&two_port_host("", "kind = \"tcp_newreno\"", flows), &[]);
    let run = exact_on_1_and_4_threads(&s, "a host of two ports, TCP");
    let end = |i: usize| run.flows.get(i).end.expect("finished").0;
    (0..4).for_each(end_is_some(&run));
    // To b by the 10 Gb/s port, to c by the 40 Gb/s one, each carrying one flow's data (and
    // the ACKs of the flow from that side): neither shares the other's link.
    let [slow, fast] = a_ports(&s, &run);
    assert!((1_000_000..1_200_000).contains(&slow), "{slow}");
    assert!((1_000_000..1_200_000).contains(&fast), "{fast}");
    // 1 MB at 40 Gb/s is 200 us, at 10 Gb/s 800 us: the fast port's flow ends well first.
    assert!(end(1) * 2 < end(0), "{} vs {}", end(1), end(0));
}

fn end_is_some(run: &netstep_core::engine::RunOutput) -> impl Fn(usize) + '_ {
    move |i| assert!(run.flows.get(i).end.is_some(), "flow {i} did not finish")
}

#[test]
fn pulling_nics_of_two_ports_take_their_own_turns() {
    // Two RDMA queue pairs on each port at once: each port's NIC pulls its own, at its own
    // line rate, waking when its own link frees.
    let flows = r#"{ src = "a", dst = "b", size = "200KB" }, { src = "a", dst = "b", size = "300KB" }, { src = "a", dst = "c", size = "200KB" }, { src = "a", dst = "c", size = "300KB" }"#;
    for cc in ["dcqcn", "hpcc"] {
        let text = two_port_host(
            "[nic]\nscheduler = \"pull\"",
            &format!("kind = \"rdma\"\ncc = \"{cc}\""),
            flows,
        );
        let mut s = scenario(&text, &[]);
        s.model.record_deliveries = true;
        let run = exact_on_1_and_4_threads(&s, &format!("pulling NICs of two ports ({cc})"));
        (0..4).for_each(end_is_some(&run));
        let [slow, fast] = a_ports(&s, &run);
        assert!((500_000..600_000).contains(&slow), "{cc}: {slow}");
        assert!((500_000..600_000).contains(&fast), "{cc}: {fast}");
        // Each flow's sender starts at its own port's line rate.
        let net = &s.model.net;
        for (flow, rate) in [(0, 10_000_000_000), (2, 40_000_000_000)] {
            let first = netstep_core::flow::first_port(net, &s.model.flows, flow, false);
            assert_eq!(net.class_of(net.port_id(0, first)).rate.0, rate);
        }
        let end = |i: usize| run.flows.get(i).end.unwrap().0;
        assert!(end(3) * 2 < end(1), "{cc}: {} vs {}", end(3), end(1));
    }
}

#[test]
fn a_host_of_two_ports_reroutes_around_its_failed_link() {
    // `a`'s fast port goes down before the flow to `c` starts: it leaves by the other port
    // (over `s1`, then `s2`), as a switch reroutes, and completes; back up, it returns.
    let flows = r#"{ src = "a", dst = "c", size = "100KB", start = "100us" }, { src = "a", dst = "c", size = "100KB", start = "2ms" }"#;
    let text = two_port_host("", "kind = \"tcp_newreno\"", flows)
        + "[[failures]]\nlink = [\"a\", \"s2\"]\ndown = \"50us\"\nup = \"1ms\"\n";
    let s = scenario(&text, &[]);
    let run = exact_on_1_and_4_threads(&s, "a host of two ports under a link failure");
    (0..2).for_each(end_is_some(&run));
    let [slow, fast] = a_ports(&s, &run);
    // Each port carried one of the two flows (100 KB and its headers).
    assert!((100_000..120_000).contains(&slow), "{slow}");
    assert!((100_000..120_000).contains(&fast), "{fast}");
}

//! Ground truth: hosts never drop their own packets, ideal FCT is an exact lower bound
//! (slowdown >= 1), the tie rule does not depend on node numbering, and runs end with a clear
//! error past the representable time.

use netstep_core::engine::event::MAX_EVENT_TIME;
use netstep_core::engine::window::WindowEngine;
use netstep_core::engine::{EngineConfig, RunError, WindowMode};
use netstep_core::flow::ideal_fct;
use netstep_core::topology::NodeKind;
use proptest::prelude::*;

use crate::common::*;

/// Slowdown of every completed flow: FCT / exact ideal FCT.
fn slowdowns(s: &netstep_scenario::Scenario, out: &netstep_core::engine::RunOutput) -> Vec<f64> {
    let m = &s.model;
    out.flows
        .iter()
        .filter_map(|o| {
            let spec = &m.flows.flows[o.flow as usize];
            let end = o.end?;
            let ideal = ideal_fct(&m.net, &m.flows, o.flow, m.seed).expect("route");
            Some((end - spec.start).0 as f64 / ideal.0 as f64)
        })
        .collect()
}

/// Drops at host egress ports of a run.
fn host_drops(s: &netstep_scenario::Scenario, out: &netstep_core::engine::RunOutput) -> u64 {
    let net = &s.model.net;
    out.ports
        .iter()
        .filter(|p| {
            let node = net.port_offset.partition_point(|&o| o <= p.port) - 1;
            net.node_kind[node] == NodeKind::Host
        })
        .map(|p| p.drops)
        .sum()
}

#[test]
fn ideal_fct_is_exact_across_a_slower_bottleneck() {
    // The issue's case: 10 Gb/s host links, a 1 Gb/s bottleneck, one 1,560 B flow (one
    // 1,460 B segment + 40 B header = 1,500 B on the wire... plus a second 100 B segment).
    // Alone on the network the TCP flow's FCT is exactly the pipeline time, so slowdown is
    // exactly 1 (it was 0.946 when the ideal ignored per-hop serialization of later packets).
    let text = r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[topology.links]
rate = "10Gbps"
delay = "1us"
[topology.fabric_links]
rate = "1Gbps"
[transport]
kind = "tcp_newreno"
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "1560B" }]
"#;
    let s = scenario(text, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    assert_eq!(slowdowns(&s, &out), vec![1.0]);
    // By hand (us): packets of 1,500 B and 140 B; hops 10G, 1G, 10G, 1 us each.
    //   p1: NIC 0 -> 1.2, at sL 2.2; bottleneck 2.2 -> 14.2, at sR 15.2; 15.2 -> 16.4, at r0 17.4
    //   p2: NIC 1.2 -> 1.312, at sL 2.312; waits for p1: 14.2 -> 15.32, at sR 16.32;
    //       waits for p1 again: 16.4 -> 16.512, at r0 17.512.
    // The old formula (first packet's latency + the rest at the bottleneck rate) gave 16.52.
    let expected = 17_512_000;
    let ideal = ideal_fct(&s.model.net, &s.model.flows, 0, s.model.seed).unwrap();
    assert_eq!(ideal.0, expected);
}

/// The sources of [`heterogeneous`]'s flows.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// TCP NewReno, flow sizes in KB.
    Tcp,
    /// Open loop with exponential gaps (mean 3 us) and sizes (mean 700 B).
    Poisson,
    /// Open loop with a constant gap and size.
    Periodic { gap_ns: u32, bytes: u32 },
}

fn heterogeneous(
    rates: &[u32],
    delays_ns: &[u32],
    flows: &[(u32, u32, u32, u32)],
    transport: Source,
) -> String {
    // A chain of switches s0..s3, hosts h0..h3 hanging off them; every link its own rate and
    // delay. `flows`: (src host, dst host, size KB or packets, start us).
    let mut links = Vec::new();
    let mut i = 0;
    let mut next = || {
        let l = (rates[i % rates.len()], delays_ns[i % delays_ns.len()]);
        i += 1;
        l
    };
    for k in 0..4 {
        let (r, d) = next();
        links.push(format!(
            "{{ a = \"h{k}\", b = \"s{k}\", rate = \"{r}Mbps\", delay = \"{d}ns\" }}"
        ));
    }
    for k in 0..3 {
        let (r, d) = next();
        links.push(format!(
            "{{ a = \"s{k}\", b = \"s{}\", rate = \"{r}Mbps\", delay = \"{d}ns\" }}",
            k + 1
        ));
    }
    let flows: Vec<String> = flows
        .iter()
        .map(|&(a, b, n, start)| {
            let amount = match transport {
                Source::Tcp => format!("size = \"{}KB\"", n),
                _ => format!("packets = {n}"),
            };
            format!("{{ src = \"h{a}\", dst = \"h{b}\", {amount}, start = \"{start}us\" }}")
        })
        .collect();
    let transport = match transport {
        Source::Tcp => {
            "kind = \"tcp_newreno\"\nrto_min = \"1ms\"\nrto_initial = \"1ms\"".to_string()
        }
        Source::Poisson => "kind = \"open_loop\"\npacket_size = \"700B\"\ninterval = \"3us\"\nexponential = true\nsize_distribution = \"exponential\"".to_string(),
        Source::Periodic { gap_ns, bytes } => format!(
            "kind = \"open_loop\"\npacket_size = \"{bytes}B\"\ninterval = \"{gap_ns}ns\""
        ),
    };
    format!(
        r#"
[topology]
kind = "custom"
hosts = ["h0", "h1", "h2", "h3"]
switches = ["s0", "s1", "s2", "s3"]
links = [{links}]
[topology.defaults]
buffer = "64KB"
[transport]
{transport}
[[traffic]]
kind = "flows"
flows = [{flows}]
"#,
        links = links.join(", "),
        flows = flows.join(", ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Over random heterogeneous chains (rates 100 Mb/s - 40 Gb/s, delays 0.1-5 us), random
    /// flows, TCP or open loop with random or constant sizes and gaps (constant gaps of 1 ns -
    /// 2 ms span both sides of the slowest serialization): no completed flow beats its exact
    /// ideal FCT, and hosts never drop.
    #[test]
    fn slowdown_is_never_below_one(
        rates in prop::collection::vec(100u32..40_000, 7),
        delays in prop::collection::vec(100u32..5_000, 7),
        flows in prop::collection::vec((0u32..4, 1u32..4, 1u32..60, 0u32..50), 1..6),
        kind in 0u8..3,
        gap_ns in prop_oneof![1u32..1_000, 1_000u32..100_000, 100_000u32..2_000_000],
        bytes in 64u32..9_000,
    ) {
        let flows: Vec<_> = flows.into_iter().map(|(a, d, n, t)| (a, (a + d) % 4, n, t)).collect();
        let source = match kind {
            0 => Source::Tcp,
            1 => Source::Poisson,
            _ => Source::Periodic { gap_ns, bytes },
        };
        let s = scenario(&heterogeneous(&rates, &delays, &flows, source), &[]);
        let out = run_window(&s, 1, WindowMode::Exact);
        for (flow, sd) in slowdowns(&s, &out).iter().enumerate() {
            prop_assert!(*sd >= 1.0, "flow {flow}: slowdown {sd}");
        }
        // The closed form (TCP, open loop with constant gaps and sizes) equals the
        // packet-by-packet definition.
        let m = &s.model;
        for flow in 0..m.flows.len() as u32 {
            prop_assert_eq!(
                ideal_fct(&m.net, &m.flows, flow, m.seed),
                netstep_core::flow::ideal_fct_per_packet(&m.net, &m.flows, flow, m.seed)
            );
        }
        prop_assert_eq!(host_drops(&s, &out), 0);
    }
}

#[test]
fn a_lone_open_loop_flow_has_slowdown_exactly_one() {
    // Exponential gaps and sizes: the ideal replays the same keyed stream, so a lone flow
    // matches it to the picosecond.
    let s = scenario(
        &heterogeneous(
            &[10_000, 40_000, 20_000],
            &[100, 2000],
            &[(0, 3, 500, 0)],
            Source::Poisson,
        ),
        &[],
    );
    let out = run_window(&s, 1, WindowMode::Exact);
    assert_eq!(slowdowns(&s, &out), vec![1.0]);
}

#[test]
fn hosts_push_back_instead_of_dropping() {
    // 16 TCP flows from one host through a 100 Gb/s NIC whose link buffer is tiny: the old
    // model tail-dropped at the NIC; now the NIC holds back and the only drops, if any, are
    // at switches.
    let flows: Vec<String> = (0..16)
        .map(|i| format!("{{ src = \"l0\", dst = \"r{}\", size = \"200KB\" }}", i % 4))
        .collect();
    let text = format!(
        r#"
[topology]
kind = "dumbbell"
left = 1
right = 4
[topology.links]
rate = "100Gbps"
delay = "1us"
buffer = "4pkts"
[topology.fabric_links]
rate = "10Gbps"
[nic]
buffer = "8pkts"
[transport]
kind = "tcp_newreno"
[[traffic]]
kind = "flows"
flows = [{}]
"#,
        flows.join(", ")
    );
    let s = scenario(&text, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    assert!(
        out.flows.iter().all(|f| f.end.is_some()),
        "every flow completes"
    );
    assert_eq!(host_drops(&s, &out), 0);
    assert!(
        out.stats.drops > 0,
        "the 4-packet switch buffer does drop: the test has teeth"
    );
    // The NIC queue never held more than its 8-packet budget.
    let nic = out
        .ports
        .iter()
        .find(|p| p.port == s.model.net.port_id(s.model.flows.flows[0].src, 0))
        .unwrap();
    assert!(nic.max_queue_packets <= 8, "{}", nic.max_queue_packets);
}

/// A phase-aligned incast: 8 senders emit a 1,000 B packet every 8 us, all at the same
/// instants, over equal links into one switch port; every period 8 packets arrive at the same
/// picosecond. `reversed` lists hosts, switches and links in the opposite order (renumbering
/// every node) while the flows keep their ids.
fn incast(reversed: bool) -> String {
    let mut hosts: Vec<String> = (0..8).map(|i| format!("\"h{i}\"")).collect();
    hosts.push("\"r\"".into());
    let mut links: Vec<String> = (0..8)
        .map(|i| format!("{{ a = \"h{i}\", b = \"s\" }}"))
        .collect();
    links.push("{ a = \"s\", b = \"r\" }".into());
    if reversed {
        hosts.reverse();
        links.reverse();
    }
    let flows: Vec<String> = (0..8)
        .map(|i| format!("{{ src = \"h{i}\", dst = \"r\", packets = 100 }}"))
        .collect();
    format!(
        r#"
[topology]
kind = "custom"
hosts = [{}]
switches = ["s"]
links = [{}]
[topology.defaults]
rate = "10Gbps"
delay = "1us"
buffer = "1MB"
[transport]
kind = "open_loop"
packet_size = "1000B"
interval = "8us"
[[traffic]]
kind = "flows"
flows = [{}]
"#,
        hosts.join(", "),
        links.join(", "),
        flows.join(", ")
    )
}

#[test]
fn renumbering_nodes_does_not_change_who_waits() {
    // Tolerance: zero. The tie key of simultaneous arrivals is (creation time, a hash of the
    // packet id); neither depends on node numbers, so renumbering gives the very same sample,
    // not merely one within sampling noise. (Under the old rule, by sender node number, the
    // lowest-numbered sender always went first; its per-flow mean delay was the smallest.)
    let run = |reversed| {
        let mut s = scenario(&incast(reversed), &[]);
        s.model.record_deliveries = true;
        run_window(&s, 2, WindowMode::Exact)
    };
    let (a, b) = (run(false), run(true));
    let delays = |out: &netstep_core::engine::RunOutput| {
        let mut d: Vec<(u32, u32, u64)> = out
            .deliveries
            .iter()
            .map(|d| (d.flow, d.number, d.arrived_ps - d.sent_ps))
            .collect();
        d.sort_unstable();
        d
    };
    let (da, db) = (delays(&a), delays(&b));
    assert_eq!(da.len(), 800);
    assert_eq!(da, db, "per-packet delays change with node numbering");
    // The scenario really has ties: packets of one period wait 0..7 transmissions.
    let mut per_flow = [0u64; 8];
    for &(flow, _, delay) in &da {
        per_flow[flow as usize] += delay;
    }
    assert!(
        per_flow.iter().max() > per_flow.iter().min(),
        "{per_flow:?}"
    );
    // ... and no flow is always first (the hash spreads the order).
    let min_delay = da.iter().map(|d| d.2).min().unwrap();
    let first_by_flow: std::collections::BTreeSet<u32> = da
        .iter()
        .filter(|d| d.2 == min_delay)
        .map(|d| d.0)
        .collect();
    assert!(first_by_flow.len() > 1, "{first_by_flow:?}");
}

#[test]
fn an_event_past_representable_time_is_an_error() {
    // A flow starting at the latest allowed start over a link whose delay carries its first
    // packet's arrival past the representable time.
    let text = format!(
        r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[topology.links]
delay = "600000s"
[transport]
kind = "open_loop"
interval = "1us"
[[traffic]]
kind = "flows"
flows = [{{ src = "l0", dst = "r0", packets = 3, start = "{}ps" }}]
"#,
        netstep_scenario::limits::MAX_START.0
    );
    const {
        assert!(
            netstep_scenario::limits::MAX_START.0 + 600_000 * 1_000_000_000_000 > MAX_EVENT_TIME.0
        )
    };
    let s = scenario(&text, &[]);
    let config = EngineConfig {
        threads: 1,
        window: WindowMode::Exact,
        end: None,
    };
    let err = WindowEngine::new(&s.model, config)
        .unwrap()
        .run(|_| {})
        .unwrap_err();
    assert!(matches!(err, RunError::TimeOverflow { .. }), "{err}");
    let reference = netstep_core::engine::reference::run(&s.model, None).unwrap_err();
    assert_eq!(err, reference);
}

#[test]
fn the_run_ends_at_the_last_useful_event_not_a_stale_timer() {
    // A short TCP flow with a 1 s initial RTO: the RTO timer is still pending when the flow
    // completes; the run's end is the last ACK, not the timer one second later.
    let text = r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[transport]
kind = "tcp_newreno"
rto_initial = "1s"
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "10KB" }]
"#;
    let s = scenario(text, &[]);
    let out = run_window(&s, 1, WindowMode::Exact);
    let end = out.flows.get(0).end.unwrap();
    assert!(out.stats.last_event >= end);
    assert!(
        out.stats.last_event.0 < end.0 + 1_000_000_000,
        "last event {} vs flow end {end}",
        out.stats.last_event
    );
}

#[test]
fn shipped_scenarios_never_drop_at_a_host_nic() {
    // Every shipped family, at full size except the long queueing runs (shortened).
    let cases: &[(&str, &[&str])] = &[
        ("scenarios/quickstart.toml", &[]),
        ("scenarios/days-baseline/fattree-k8-f512.toml", &[]),
        (
            "scenarios/queueing/mm1-rho09.toml",
            &["traffic.0.flows.0.packets=20000"],
        ),
        (
            "scenarios/queueing/md1-rho09.toml",
            &["traffic.0.flows.0.packets=20000"],
        ),
        ("scenarios/scale/fattree-k128-f128.toml", &[]),
    ];
    for (file, overrides) in cases {
        let s = scenario_file(file, overrides);
        let out = run_window(&s, 2, WindowMode::Exact);
        assert_eq!(host_drops(&s, &out), 0, "{file}");
        if file.contains("k128") {
            // The file's "Expected" line: every flow completes, median slowdown near 1 (it
            // was 12.25 when hosts tail-dropped their own bursts).
            let mut sd = slowdowns(&s, &out);
            assert_eq!(sd.len(), 128, "{file}: every flow completes");
            sd.sort_by(f64::total_cmp);
            let median = sd[sd.len() / 2];
            assert!(median < 2.0, "{file}: median slowdown {median}");
        }
    }
}

#[test]
fn a_flow_over_a_dead_link_fails_within_the_retry_bound() {
    // Every packet lost on the bottleneck: the sender times out `max_retries` times with the
    // RTO doubling from rto_initial (capped at rto_max), then the next expiry gives up. The
    // run must end (no infinite retries) with the flow marked failed, and the run's end is
    // bounded by the sum of the backed-off timeouts.
    let text = r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[topology.links]
rate = "10Gbps"
delay = "1us"
[topology.fabric_links]
loss = 1.0
[transport]
kind = "tcp_newreno"
rto_initial = "1ms"
rto_min = "1ms"
rto_max = "8ms"
max_retries = 5
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "100KB" }]
"#;
    let s = scenario(text, &[]);
    let out = run_reference(&s);
    let f = &out.flows.get(0);
    assert_eq!(f.end, None);
    assert_eq!(
        f.failure,
        Some(netstep_core::transport::FailureReason::RetryLimit)
    );
    assert_eq!(f.timeouts, 5);
    // Expiries at 1, 1+2, 1+2+4, 1+2+4+8, +8, and the sixth (giving up) +8 ms: 31 ms, plus
    // the microseconds it takes to send the first window.
    let bound_ps = (1 + 2 + 4 + 8 + 8 + 8) * 1_000_000_000 + 1_000_000_000;
    assert!(
        out.stats.last_event.0 <= bound_ps,
        "run ended at {}",
        out.stats.last_event
    );
    assert!(out.stats.last_event.0 >= 31 * 1_000_000_000);
    let window = run_window(&s, 2, WindowMode::Exact);
    assert_same_simulation(&out, &window, "retry limit: window vs reference");
}

#[test]
fn days_own_benchmark_has_days_pairs_and_routes_and_no_drops() {
    // Days' check values (iQua/days, rand 0.10 SmallRng seeded 1000, petgraph A*): flows 0-4
    // draw (125,74) (109,72) (77,49) (77,62) (33,1); flow 0 routes 125-253-297-205-74 (edge
    // 125, agg 253-128, core 297-256, agg 205-128, edge 74), as benches/days-own writes them.
    let file = "scenarios/days-baseline/days-own-k16-f512.toml";
    let text = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut at = 0;
    for (src, dst) in [(125, 74), (109, 72), (77, 49), (77, 62), (33, 1)] {
        let flow = format!("{{ src = \"h{src}\", dst = \"h{dst}\", packets = 1500");
        at += text[at..]
            .find(&flow)
            .unwrap_or_else(|| panic!("{file}: {flow} in order"));
    }
    assert!(
        text.contains("path = [\"h125\", \"e125\", \"a125\", \"c41\", \"a77\", \"e74\", \"h74\"]")
    );
    // The "Expected" line: no drops (no directed link carries more than its 40 packets a
    // second), and every hop of the packets sent at 1 ... 1,499 s but those of the last
    // second's packets still on their way at the 1,500 s horizon.
    let s = scenario_file(file, &[]);
    let per_second: u64 = s
        .model
        .flows
        .flows
        .iter()
        .map(|f| f.path.as_ref().expect("explicit path").forward.len() as u64)
        .sum();
    let out = run_window(&s, 2, WindowMode::Exact);
    assert_eq!(out.stats.drops, 0);
    let all = per_second * 1499;
    assert!(
        out.stats.packet_hops <= all && out.stats.packet_hops > all - per_second,
        "{} hops of {all}",
        out.stats.packet_hops
    );
}

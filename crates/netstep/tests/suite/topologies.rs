//! Topologies: the torus's dimension-order routing against the Lee distance for every pair,
//! hop by hop (dimension order, shorter way round each ring), and exactness on a torus.

use std::collections::BTreeMap;

use netstep_core::engine::WindowMode;
use netstep_core::packet::PacketKind;
use netstep_core::topology::Torus;

use crate::common::*;

/// Checks every flow's first data packet in the trace of `s` (a torus of `shape`): it crosses
/// 2 + Lee distance links, and its switches change one coordinate by one step at a time, in
/// dimension order, the shorter way round (the `+` way on a tie). Returns the mean number of
/// switch-to-switch hops.
fn check_dimension_order(mut s: netstep_scenario::Scenario, shape: &Torus) -> f64 {
    let (out, trace) = traced(&mut s);
    assert_eq!(out.stats.drops, 0);
    assert!(
        out.flows.iter().all(|f| f.end.is_some()),
        "every flow completes"
    );
    let hosts = shape.n_hosts();
    // Nodes the first data packet of each flow was transmitted from, in hop order.
    let mut paths: BTreeMap<u32, Vec<(u16, u32)>> = BTreeMap::new();
    for h in &trace.hops {
        if h.kind == PacketKind::Data && h.packet_id & 0xffff_ffff == 0 && h.drop.is_none() {
            paths.entry(h.flow).or_default().push((h.hop, h.node));
        }
    }
    assert_eq!(paths.len(), s.model.flows.len());
    let mut fabric_hops = 0u64;
    for (flow, mut hops) in paths {
        hops.sort();
        let spec = &s.model.flows.flows[flow as usize];
        let (a, b) = (
            spec.src / shape.hosts_per_switch,
            spec.dst / shape.hosts_per_switch,
        );
        let lee = shape.switch_distance(a, b);
        assert_eq!(
            hops.len() as u32,
            2 + lee,
            "flow {flow} h{} -> h{}: {hops:?}",
            spec.src,
            spec.dst
        );
        assert_eq!(hops[0].1, spec.src);
        fabric_hops += lee as u64;
        // Switches visited (the nodes transmitting after the source host).
        let switches: Vec<Vec<u32>> = hops[1..]
            .iter()
            .map(|&(_, node)| shape.coords(node - hosts))
            .collect();
        let target = shape.coords(b);
        let mut last_dim = 0;
        for pair in switches.windows(2) {
            let changed: Vec<usize> = (0..shape.dims.len())
                .filter(|&d| pair[0][d] != pair[1][d])
                .collect();
            assert_eq!(
                changed.len(),
                1,
                "flow {flow}: one dimension per hop {switches:?}"
            );
            let d = changed[0];
            assert!(d >= last_dim, "flow {flow}: dimension order {switches:?}");
            last_dim = d;
            let n = shape.dims[d];
            let step = (pair[1][d] + n - pair[0][d]) % n;
            let remaining = (target[d] + n - pair[0][d]) % n;
            // The + way when it is not longer than the - way, else the - way.
            let expected = if remaining <= n - remaining { 1 } else { n - 1 };
            assert!(
                step == expected || n == 2,
                "flow {flow}: dimension {d} step {step} of ring {n}, {remaining} to go: {switches:?}"
            );
        }
        assert_eq!(switches.last().unwrap(), &target);
    }
    fabric_hops as f64 / s.model.flows.len() as f64
}

#[test]
fn torus_2d_routes_in_dimension_order_over_the_lee_distance() {
    let s = scenario_file("scenarios/elements/torus.toml", &[]);
    let shape = Torus {
        dims: vec![4, 4],
        hosts_per_switch: 1,
    };
    let mean = check_dimension_order(s, &shape);
    // Mean Lee distance on a 4 x 4 torus over ordered pairs of distinct switches:
    // per ring of 4 the distances 0, 1, 2, 1 (mean 1 each over all pairs), so 2 per pair
    // including a switch with itself: 2 x 16 / 15 over distinct pairs = 32/15.
    assert!((mean - 32.0 / 15.0).abs() < 1e-9, "mean {mean}");
}

#[test]
fn torus_3d_with_a_ring_of_two_and_several_hosts_per_switch() {
    let text = r#"
[simulation]
seed = 4
[topology]
kind = "torus"
dims = [3, 5, 2]
hosts_per_switch = 2
[topology.links]
rate = "100Gbps"
delay = "1us"
[[traffic]]
kind = "random_pairs"
count = 300
packets = 5
"#;
    let shape = Torus {
        dims: vec![3, 5, 2],
        hosts_per_switch: 2,
    };
    let s = scenario(text, &[]);
    check_dimension_order(s, &shape);
    // Exactness against the reference engine and across thread counts.
    let s = scenario(text, &[]);
    exact_on_1_and_4_threads(&s, "torus");
}

#[test]
fn torus_settings_are_checked() {
    for (set, needle) in [
        ("topology.dims=[8]", "a torus has 2 or 3 dimensions"),
        (
            "topology.dims=[4, 4, 4, 4]",
            "a torus has 2 or 3 dimensions",
        ),
        (
            "topology.dims=[4, 1]",
            "every ring has at least 2 switches, got 1",
        ),
        ("topology.hosts_per_switch=0", "must be at least 1, got 0"),
        ("topology.dims=[65536, 65536, 65536]", "nodes; the limit is"),
    ] {
        let err = load_error("scenarios/elements/torus.toml", &[set]);
        assert!(err.contains("topology."), "{set}: {err}");
        assert!(err.contains(needle), "{set}: {err}");
    }
}

#[test]
fn each_direction_of_a_link_has_its_own_parameters() {
    let s = scenario_file("scenarios/elements/asymmetric-link.toml", &[]);
    let net = &s.model.net;
    // Nodes: a 0, b 1, s1 2, s2 3.
    let forward = net.port_id(2, net.port_towards(2, 3).unwrap());
    let backward = net.port_id(3, net.port_towards(3, 2).unwrap());
    let (f, b) = (net.class_of(forward), net.class_of(backward));
    assert_eq!((f.rate.0, b.rate.0), (1_000_000_000, 10_000_000_000));
    assert_eq!(f.delay, netstep_core::units::SimTime::from_us(1));
    assert_eq!(b.delay, netstep_core::units::SimTime::from_us(5));
    let out = run_window(&s, 1, WindowMode::Exact);
    let port = |p: u32| out.ports.iter().find(|o| o.port == p).unwrap();
    // a -> b: 5 Gb/s into 1 Gb/s with 20 KB of buffer: drops there; b -> a: none.
    assert!(port(forward).drops > 0);
    assert!(port(forward).max_queue_bytes <= 20_000);
    assert_eq!(port(backward).drops, 0);
    assert_eq!(out.flows.get(1).packets_delivered, 100);
    // The b -> a flow crosses the 5 us direction: its last packet arrives 100 packets at
    // 5 Gb/s (160 us), plus 3 hops of 10 Gb/s serialization and 1 + 5 + 1 us of propagation.
    let end = out.flows.get(1).end.unwrap().0;
    assert_eq!(end, 99 * 1_600_000 + 3 * 800_000 + 7_000_000);
    exact_on(&s, "asymmetric", &[2]);
}

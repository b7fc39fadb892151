//! Workloads: each shipped example under `scenarios/workloads/` does what its "Expected"
//! header says.

use netstep_core::engine::WindowMode;

use crate::common::*;

/// `scenarios/workloads/permutation.toml`: every host sends one flow and receives one, to
/// the host half the fabric away; all complete; slowdowns 1.21 to 2.99, median 1.24.
#[test]
fn the_permutation_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/permutation.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 16);
    let mut received = [0u32; 16];
    for f in flows.iter() {
        assert_eq!(f.dst, (f.src + 8) % 16, "across the bisection");
        received[f.dst as usize] += 1;
    }
    assert!(received.iter().all(|&r| r == 1), "{received:?}");
    let out = run_window(&s, 1, WindowMode::Exact);
    let mut slowdowns: Vec<f64> = out
        .flows
        .iter()
        .map(|o| {
            let end = o.end.expect("every flow completes");
            let spec = &s.model.flows.flows[o.flow as usize];
            let ideal =
                netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, o.flow, s.model.seed)
                    .unwrap();
            (end - spec.start).0 as f64 / ideal.0 as f64
        })
        .collect();
    slowdowns.sort_by(f64::total_cmp);
    let median = (slowdowns[7] + slowdowns[8]) / 2.0;
    let shown = |x: f64| format!("{x:.2}");
    assert_eq!(
        (shown(slowdowns[0]), shown(median), shown(slowdowns[15])),
        ("1.21".into(), "1.24".into(), "2.99".into()),
        "{slowdowns:?}"
    );
}

/// A random permutation (the default) is a derangement drawn from the seed: the same seed
/// gives the same one, another seed another.
#[test]
fn random_permutations_follow_the_seed() {
    let text = |seed: u32| {
        format!(
            "[simulation]\nseed = {seed}\n[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"permutation\"\nsize = \"10KB\"\n"
        )
    };
    let pairs = |seed| -> Vec<(u32, u32)> {
        scenario(&text(seed), &[])
            .model
            .flows
            .flows
            .iter()
            .map(|f| (f.src, f.dst))
            .collect()
    };
    let (a, b, c) = (pairs(1), pairs(1), pairs(2));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 16);
    assert!(a.iter().all(|(s, d)| s != d));
}

/// The new traffic kinds are exact: the window engine on 1 and 4 threads simulates what the
/// reference engine does.
#[test]
fn workload_examples_are_exact_on_1_and_4_threads() {
    for file in [
        "scenarios/workloads/permutation.toml",
        "scenarios/workloads/incast.toml",
        "scenarios/workloads/all-to-all.toml",
    ] {
        let s = scenario_file(file, &[]);
        let reference = exact_on_1_and_4_threads(&s, file);
        assert!(reference.flows.iter().all(|f| f.end.is_some()), "{file}");
    }
}

/// `scenarios/workloads/incast.toml`: 3 rounds of 8 distinct senders to h0, 2 ms apart; 186
/// drops, 151 at the port towards h0; 8 timeouts; each round 1.22 to 1.28 ms.
#[test]
fn the_incast_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/incast.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 24);
    for round in 0..3u64 {
        let mut senders: Vec<u32> = flows
            .iter()
            .filter(|f| f.start.0 == round * 2_000_000_000)
            .map(|f| f.src)
            .collect();
        senders.sort_unstable();
        senders.dedup();
        assert_eq!(senders.len(), 8, "round {round}: 8 distinct senders");
        assert!(!senders.contains(&0));
    }
    assert!(flows.iter().all(|f| f.dst == 0), "all to h0");
    let out = run_window(&s, 1, WindowMode::Exact);
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(out.stats.drops, 186);
    let towards_h0 = s
        .model
        .net
        .port_id(16, s.model.net.port_towards(16, 0).unwrap());
    let port = out.ports.iter().find(|p| p.port == towards_h0).unwrap();
    assert_eq!(port.drops, 151);
    assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 8);
    for round in 0..3u64 {
        let start = round * 2_000_000_000;
        let end = out
            .flows
            .iter()
            .filter(|f| flows[f.flow as usize].start.0 == start)
            .map(|f| f.end.unwrap().0)
            .max()
            .unwrap();
        let ms = (end - start) as f64 / 1e9;
        assert!(
            (1.22..=1.28).contains(&format!("{ms:.2}").parse::<f64>().unwrap()),
            "round {round}: {ms} ms"
        );
    }
    // The bound the header quotes: 8 x 64 KB with TCP's 40 B headers (44 segments of at most
    // 1,460 B) through one 10 Gb/s link.
    let wire = 64_000.0 + (64_000f64 / 1460.0).ceil() * 40.0;
    let ideal_ms = 8.0 * wire * 8.0 / 10e9 * 1e3;
    assert_eq!(format!("{ideal_ms:.2}"), "0.42");
}

/// `scenarios/workloads/all-to-all.toml`: every ordered pair once; the exchange cannot end
/// before each host has pushed its 15 flows through its own link (1.23 ms) and ends at 2.71 ms;
/// 113 drops; median slowdown 14.1.
#[test]
fn the_all_to_all_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/all-to-all.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 240);
    let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), 240);
    assert!(pairs.iter().all(|(a, b)| a != b && *a < 16 && *b < 16));
    let out = run_window(&s, 1, WindowMode::Exact);
    let end = out
        .flows
        .iter()
        .map(|f| f.end.expect("completes").0)
        .max()
        .unwrap();
    // The bound: 15 flows of 100,000 B in 69 segments with 40 B headers, 10 Gb/s.
    let bound_ps = 15.0 * (100_000.0 + 69.0 * 40.0) * 8.0 / 10e9 * 1e12;
    assert!(end as f64 >= bound_ps, "no exchange beats the host links");
    assert_eq!(format!("{:.2}", bound_ps / 1e9), "1.23");
    assert_eq!(format!("{:.2}", end as f64 / 1e9), "2.71");
    assert_eq!(format!("{:.2}", end as f64 / bound_ps), "2.20");
    assert_eq!(out.stats.drops, 113);
    let mut slowdowns: Vec<f64> = out
        .flows
        .iter()
        .map(|o| {
            let ideal =
                netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, o.flow, s.model.seed)
                    .unwrap();
            (o.end.unwrap() - flows[o.flow as usize].start).0 as f64 / ideal.0 as f64
        })
        .collect();
    slowdowns.sort_by(f64::total_cmp);
    let median = (slowdowns[119] + slowdowns[120]) / 2.0;
    assert_eq!(format!("{median:.1}"), "14.1");
}

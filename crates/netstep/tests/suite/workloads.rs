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

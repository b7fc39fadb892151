//! The m3 / Parsimon evaluation mixes written natively: the `cluster` topology and the
//! `rack_matrix` traffic kind (`scenarios/workloads/m3-mix.toml`).

use netstep_core::units::SimTime;
use netstep_scenario::Scenario;

use crate::common::{exact_on, repo, scenario_file};

/// The example's text.
fn example_text() -> String {
    std::fs::read_to_string(repo().join("scenarios/workloads/m3-mix.toml")).unwrap()
}

/// Loads scenario `text` as if it were a file in `folder`.
fn load_in(text: &str, folder: &std::path::Path) -> Result<Scenario, String> {
    netstep_scenario::load_str(
        text,
        "test.toml",
        "test",
        Some(folder),
        &[],
        &netstep_scenario::Limits::machine(),
    )
    .map_err(|e| e.to_string())
}

/// `scenarios/workloads/m3-mix.toml`: 20,000 flows, all complete, no drops, the first at
/// exactly 1 s; the window engine equals the reference on 4 threads.
#[test]
fn the_m3_mix_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/m3-mix.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 20_000);
    assert_eq!(
        flows.iter().map(|f| f.start).min(),
        Some(SimTime::from_ms(1000))
    );
    let out = exact_on(&s, "m3 mix", &[4]);
    assert!(
        out.flows.iter().all(|f| f.end.is_some()),
        "every flow completes"
    );
    assert_eq!(out.stats.drops, 0);
}

/// The example's arrival rate, on 1,000,000 generated flows: the mean gap is 8 x the CDF's
/// mean / (0.6213 x 10 Gb/s / 0.009053), the busiest link's share of the flows found by an
/// independent model of Parsimon's routes, within five standard errors of the mean of
/// log-normal gaps with sigma 2 (sqrt(e^4 - 1) x mean / sqrt(n)).
#[test]
fn the_m3_mix_rate_follows_its_busiest_link() {
    let n = 1_000_000u64;
    let text = example_text().replace("flows = 20000", &format!("flows = {n}"));
    let s = load_in(&text, &repo().join("scenarios/workloads")).unwrap();
    let mut starts: Vec<u64> = s.model.flows.flows.iter().map(|f| f.start.0).collect();
    starts.sort_unstable();
    // Draws that round to 0 bytes are arrivals without flows: a few per 100,000.
    let zero = n - starts.len() as u64;
    assert!(zero < 100, "{zero} zero-byte draws");
    let measured = (starts[starts.len() - 1] - starts[0]) as f64 / (n - 1) as f64;
    let sizes =
        netstep_scenario::cdf::SizeCdf::load(&repo().join("datasets/fb_webserver.toml")).unwrap();
    let expected = sizes.mean() * 8.0 / (0.6213 * 10e9 / 0.009_052_993_309_700_143) * 1e12;
    let se = expected * (4f64.exp() - 1.0).sqrt() / (n as f64).sqrt();
    assert!(
        (measured - expected).abs() < 5.0 * se,
        "mean gap {measured} ps, expected {expected} ps (se {se})"
    );
}

/// A Parsimon spatial file and the CSV that names the same racks (pods in name order, each
/// pod's racks in list order) generate the same flows.
#[test]
fn a_spatial_file_equals_its_csv_form() {
    let dir = tempfile::tempdir().unwrap();
    // Pods listed out of name order: "pod-b" is read second.
    let spatial = r#"{
      "matrix": { "inner": [[1, 5, 0, 2], [3, 0, 4, 1], [0, 2, 6, 0], [7, 1, 0, 3]],
                  "idx2name": ["r3", "r0", "r2", "r1"] },
      "pod2tors": { "pod-b": ["r2", "r3"], "pod-a": ["r0", "r1"] },
      "nr_pods": 2, "nr_racks": 4 }"#;
    std::fs::write(dir.path().join("spatial.json"), spatial).unwrap();
    // r0 -> tor0, r1 -> tor1 (pod-a), r2 -> tor2, r3 -> tor3 (pod-b); rows in the file's order.
    let tor = |name: &str| format!("tor{}", &name[1..]);
    let names = ["r3", "r0", "r2", "r1"];
    let inner = [[1, 5, 0, 2], [3, 0, 4, 1], [0, 2, 6, 0], [7, 1, 0, 3]];
    let mut csv = String::from("src,dst,weight\n");
    for (i, a) in names.iter().enumerate() {
        for (j, b) in names.iter().enumerate() {
            if inner[i][j] > 0 {
                csv += &format!("{},{},{}\n", tor(a), tor(b), inner[i][j]);
            }
        }
    }
    std::fs::write(dir.path().join("matrix.csv"), csv).unwrap();
    let cdf = repo().join("datasets/fb_hadoop.toml");
    let text = |matrix: &str| {
        format!(
            "[topology]\nkind = \"cluster\"\npods = 2\nracks_per_pod = 2\nhosts_per_rack = 3\n\
             fabs_per_pod = 2\nspines_per_plane = 2\n\n[transport]\nkind = \"rdma\"\ncc = \"dctcp\"\n\n\
             [[traffic]]\nkind = \"rack_matrix\"\nmatrix = \"{matrix}\"\ncdf = {cdf:?}\n\
             sigma = 1.0\nmax_load = 0.5\nflows = 2000\n"
        )
    };
    let a = load_in(&text("spatial.json"), dir.path()).unwrap();
    let b = load_in(&text("matrix.csv"), dir.path()).unwrap();
    let key = |s: &Scenario| -> Vec<(u32, u32, u64, SimTime)> {
        s.model
            .flows
            .flows
            .iter()
            .map(|f| (f.src, f.dst, f.size.0, f.start))
            .collect()
    };
    assert!(a.model.flows.flows.len() > 1900);
    assert_eq!(key(&a), key(&b));
}

/// A spatial file whose pods name fewer racks than the cluster's pods hold (Parsimon's
/// fig-7 file: 324 racks on a cluster of 384), its matrix padded with zeros: pod k's racks take
/// the first racks of pod k, the others stay idle.
#[test]
fn a_spatial_file_may_leave_racks_idle() {
    let dir = tempfile::tempdir().unwrap();
    let spatial = r#"{
      "matrix": { "inner": [[0, 2, 1, 0], [1, 1, 3, 0], [2, 2, 0, 0], [0, 0, 0, 0]],
                  "idx2name": ["x", "y", "z"] },
      "pod2tors": { "p0": ["x"], "p1": ["y", "z"] }, "nr_pods": 2, "nr_racks": 3 }"#;
    std::fs::write(dir.path().join("s.json"), spatial).unwrap();
    let cdf = repo().join("datasets/fb_webserver.toml");
    let text = format!(
        "[topology]\nkind = \"cluster\"\npods = 2\nracks_per_pod = 2\nhosts_per_rack = 2\n\
         fabs_per_pod = 2\nspines_per_plane = 2\n\n[[traffic]]\nkind = \"rack_matrix\"\n\
         matrix = \"s.json\"\ncdf = {cdf:?}\narrivals = \"exponential\"\nmax_load = 0.5\n\
         flows = 3000\n"
    );
    let s = load_in(&text, dir.path()).unwrap();
    // x -> tor0 (hosts 0, 1); y, z -> tor2, tor3 (hosts 4..8); tor1 (hosts 2, 3) idle.
    let mut used = [0u32; 8];
    for f in &s.model.flows.flows {
        used[f.src as usize] += 1;
        used[f.dst as usize] += 1;
    }
    assert_eq!(used[2] + used[3], 0, "{used:?}");
    assert!(
        used.iter()
            .enumerate()
            .all(|(h, &n)| h == 2 || h == 3 || n > 0),
        "{used:?}"
    );
    // A positive entry past the named racks is refused.
    std::fs::write(
        dir.path().join("s.json"),
        spatial.replace("[0, 0, 0, 0]]", "[0, 0, 0, 5]]"),
    )
    .unwrap();
    let e = load_in(&text, dir.path()).err().expect("refused");
    assert!(
        e.contains("matrix.inner[3]") && e.contains("only 3 racks are named"),
        "{e}"
    );
}

/// Bad `rack_matrix` blocks and `cluster` topologies are refused with the field (and the file
/// line) to blame.
#[test]
fn bad_mixes_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("bad.txt"), "0 0\n100 50\n90 100\n").unwrap();
    let spatial = r#"{"matrix": {"inner": [[1, 2], [3, 4]], "idx2name": ["a", "b"]},
                      "pod2tors": {"p": ["a", "b"]}, "nr_pods": 1, "nr_racks": 2}"#;
    std::fs::write(dir.path().join("two.json"), spatial).unwrap();
    let cdf = repo().join("datasets/fb_webserver.toml");
    let topology = "[topology]\nkind = \"cluster\"\npods = 2\nracks_per_pod = 2\nhosts_per_rack = 2\nfabs_per_pod = 2\nspines_per_plane = 2\n";
    let traffic = |extra: &str| {
        format!(
            "{topology}\n[[traffic]]\nkind = \"rack_matrix\"\nmatrix = \"two.json\"\ncdf = {cdf:?}\n{extra}\n"
        )
    };
    let cases = [
        (
            traffic("max_load = 0.5\nflows = 10"),
            "traffic[0].sigma",
            "need sigma",
        ),
        (
            traffic("max_load = 0.5\nflows = 10\narrivals = \"exponential\"\nsigma = 1.0"),
            "traffic[0].sigma",
            "only log-normal",
        ),
        (
            traffic("max_load = 0.5\nsigma = 1.0"),
            "traffic[0]",
            "give flows",
        ),
        (
            traffic("max_load = 1.5\nsigma = 1.0\nflows = 10"),
            "traffic[0].max_load",
            "(0, 1]",
        ),
        (
            traffic("max_load = 0.5\nsigma = 1.0\nflows = 10"),
            "traffic[0].matrix",
            "the file has 1 pods, the cluster 2",
        ),
        (
            traffic("max_load = 0.5\nsigma = 1.0\nflows = 10\ncdf_format = \"parsimon\"")
                .replace(&format!("{cdf:?}"), "\"bad.txt\""),
            "traffic[0].cdf",
            "line 3: sizes and percentages must strictly increase",
        ),
        (
            topology.replace(
                "spines_per_plane = 2",
                "spines_per_plane = 2\noversubscription = 2",
            ),
            "topology.oversubscription",
            "not both",
        ),
        (
            topology.replace("spines_per_plane = 2", "oversubscription = 3"),
            "topology.oversubscription",
            "0.666",
        ),
    ];
    for (text, field, expected) in cases {
        let text = if text.contains("[[traffic]]") {
            text
        } else {
            format!("{text}\n[[traffic]]\nkind = \"permutation\"\n")
        };
        let Err(e) = load_in(&text, dir.path()) else {
            panic!("accepted:\n{text}");
        };
        assert!(
            e.contains(field) && e.contains(expected),
            "expected {field} / {expected:?}, got: {e}"
        );
    }
}

/// The memory estimate counts the flows in flight at once: all of them when they start
/// together, a few hundred for the m3 mix's spread-out arrivals (each alive for its bytes at
/// 10 Gb/s plus 10 us: at 0.94 flows/us of 91 KB on average, Little's law gives about 80).
#[test]
fn the_memory_estimate_counts_the_flows_in_flight() {
    let s = scenario_file("scenarios/workloads/m3-mix.toml", &[]);
    let live = s.meta.footprint.live_flows.expect("known after the build");
    assert!(
        (20..2_000).contains(&live),
        "m3 mix: {live} flows in flight"
    );
    let together = crate::common::scenario(
        "[topology]\nkind = \"fat_tree\"\nk = 4\n\n[[traffic]]\nkind = \"random_pairs\"\ncount = 500\npackets = 1\n",
        &[],
    );
    assert_eq!(together.meta.footprint.live_flows, Some(500));
    let f = together.meta.footprint;
    assert_eq!(
        f.memory_bytes(),
        netstep_scenario::limits::BASE_BYTES
            + f.nodes * netstep_scenario::limits::BYTES_PER_NODE
            + f.ports * netstep_scenario::limits::BYTES_PER_PORT
            + 500
                * (netstep_scenario::limits::BYTES_PER_FLOW
                    + netstep_scenario::limits::BYTES_PER_LIVE_FLOW)
    );
}

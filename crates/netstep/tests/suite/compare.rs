//! `netstep compare` as a user meets it: identical runs are at distance 0, different runs are
//! not, `--max-nw1` gates CI, and bad input gets exit code 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn netstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(args)
        .current_dir(crate::common::repo())
        .output()
        .unwrap()
}

fn run_into(dir: &Path, name: &str, scenario: &str, extra: &[&str]) -> PathBuf {
    let out = dir.join(name);
    let mut args = vec!["run", scenario, "--quiet", "--out", out.to_str().unwrap()];
    args.extend_from_slice(extra);
    let o = netstep(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    out
}

fn json(o: &Output) -> Vec<serde_json::Value> {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice::<Vec<serde_json::Value>>(&o.stdout).unwrap()
}

const QUICK: &str = "scenarios/quickstart.toml";
const SHORT: &str = "traffic.0.duration=\"3ms\"";

#[test]
fn a_run_compared_with_itself_is_at_distance_zero() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_into(
        dir.path(),
        "a",
        QUICK,
        &["--set", SHORT, "--trace", "packet_hops,queue_samples"],
    );
    let a = a.to_str().unwrap();
    for metric in ["slowdown", "fct_ns", "packet_delay_ns", "queue_bytes"] {
        let groups = json(&netstep(&["compare", a, a, "--metric", metric, "--json"]));
        assert!(!groups.is_empty(), "{metric}");
        for g in &groups {
            assert_eq!(g["w1"].as_f64(), Some(0.0), "{metric}: {g}");
            assert_eq!(g["n_a"], g["n_b"]);
        }
    }
    let table = netstep(&["compare", a, a]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.contains("(0, MTU]") && text.contains("nW1"), "{text}");
}

#[test]
fn quantization_shows_up_and_max_nw1_gates() {
    let dir = tempfile::tempdir().unwrap();
    let exact = run_into(dir.path(), "exact", QUICK, &["--set", SHORT]);
    let coarse = run_into(
        dir.path(),
        "coarse",
        QUICK,
        &["--set", SHORT, "--set", "simulation.window=\"100us\""],
    );
    let (exact, coarse) = (exact.to_str().unwrap(), coarse.to_str().unwrap());
    let groups = json(&netstep(&[
        "compare", exact, coarse, "--metric", "fct_ns", "--by", "none", "--json",
    ]));
    let nw1 = groups[0]["nw1"].as_f64().unwrap();
    assert!(
        nw1 > 0.0,
        "100 us windows (~100 lookaheads) must change FCTs"
    );
    let gated = netstep(&[
        "compare",
        exact,
        coarse,
        "--metric",
        "fct_ns",
        "--by",
        "none",
        "--max-nw1",
        "0",
    ]);
    assert_eq!(gated.status.code(), Some(3));
    let passed = netstep(&[
        "compare",
        exact,
        coarse,
        "--metric",
        "fct_ns",
        "--by",
        "none",
        "--max-nw1",
        "1000",
    ]);
    assert_eq!(passed.status.code(), Some(0));
}

#[test]
fn sweeps_and_globs_pool_their_runs() {
    let dir = tempfile::tempdir().unwrap();
    for seed in ["1", "2"] {
        run_into(
            dir.path(),
            &format!("sweep/seed={seed}"),
            QUICK,
            &["--set", SHORT, "--set", &format!("simulation.seed={seed}")],
        );
    }
    let sweep = dir.path().join("sweep");
    let one = sweep.join("seed=1");
    let pooled = json(&netstep(&[
        "compare",
        sweep.to_str().unwrap(),
        one.to_str().unwrap(),
        "--by",
        "none",
        "--json",
    ]));
    let single = json(&netstep(&[
        "compare",
        one.to_str().unwrap(),
        one.to_str().unwrap(),
        "--by",
        "none",
        "--json",
    ]));
    assert!(pooled[0]["n_a"].as_u64().unwrap() > single[0]["n_a"].as_u64().unwrap());
    let glob = format!("{}/seed=*", sweep.display());
    let globbed = json(&netstep(&[
        "compare",
        &glob,
        one.to_str().unwrap(),
        "--by",
        "none",
        "--json",
    ]));
    assert_eq!(globbed[0]["n_a"], pooled[0]["n_a"]);
}

fn assert_bad_input(o: &Output, needle: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in {stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}

#[test]
fn bad_input_is_explained() {
    let dir = tempfile::tempdir().unwrap();
    let a = run_into(dir.path(), "a", QUICK, &["--set", SHORT]);
    let a = a.to_str().unwrap();
    assert_bad_input(
        &netstep(&["compare", a, a, "--metric", "packet_delay_ns"]),
        "--trace packet_hops",
    );
    let unknown = netstep(&["compare", a, a, "--metric", "latency"]);
    assert_eq!(unknown.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("'latency'") && stderr.contains("packet_delay_ns"),
        "{stderr}"
    );
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    assert_bad_input(
        &netstep(&["compare", empty.to_str().unwrap(), a]),
        "no netstep run",
    );
    assert_bad_input(
        &netstep(&[
            "compare",
            a,
            a,
            "--metric",
            "queue_bytes",
            "--by",
            "size_bucket",
        ]),
        "--by none",
    );
    // Days flows are all 1.5 MB open-loop flows: every quickstart bucket but one is empty there.
    let days = run_into(
        dir.path(),
        "days",
        "scenarios/days-baseline/fattree-k4-f8.toml",
        &["--set", "traffic.0.packets=3"],
    );
    assert_bad_input(
        &netstep(&["compare", a, days.to_str().unwrap()]),
        "none in B",
    );
    assert_bad_input(
        &netstep(&[
            "run",
            QUICK,
            "--trace",
            "packet_hops,bogus",
            "--out",
            dir.path().join("x").to_str().unwrap(),
        ]),
        "unknown table \"bogus\"",
    );
}

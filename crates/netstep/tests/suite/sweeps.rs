//! `netstep sweep`: expansion, stable ids, folder safety, failures, resume after kill -9,
//! changed sweep files, `plan`, and the Slurm script.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::Duration;

use netstep::sweep::plan::{self, AxisGroup};
use netstep::sweep::state::SweepDir;

use crate::common::repo;

fn base_scenario(duration: &str) -> String {
    format!(
        r#"name = "sweep-base"
[simulation]
seed = 1
[topology]
kind = "fat_tree"
k = 4
[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "256KB"
[transport]
kind = "tcp_newreno"
rto_min = "1ms"
rto_initial = "1ms"
[[traffic]]
kind = "poisson"
load = 0.5
cdf = "cdf.toml"
duration = "{duration}"
"#
    )
}

/// A folder with `base.toml`, its CDF and `sweep.toml` (the sweep text is appended to a header
/// naming the base scenario).
fn setup(dir: &Path, sweep: &str, duration: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("base.toml"), base_scenario(duration)).unwrap();
    std::fs::copy(repo().join("datasets/websearch.toml"), dir.join("cdf.toml")).unwrap();
    let file = dir.join("sweep.toml");
    std::fs::write(&file, format!("scenario = \"base.toml\"\n{sweep}")).unwrap();
    file
}

fn netstep(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(args)
        .output()
        .expect("netstep runs")
}

fn text(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// Run folders (holding run.parquet) below `root`, relative, `/`-separated.
fn run_folders(root: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if entry.file_name() == "run.parquet" {
                let rel = dir.strip_prefix(root).unwrap();
                out.insert(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

/// Every file or folder below `root` whose name marks a partial run.
fn leftovers(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.contains(".partial") || name.ends_with(".previous") {
                out.push(entry.path());
            }
            if entry.path().is_dir() {
                stack.push(entry.path());
            }
        }
    }
    out
}

/// (path, status, error) rows of the manifest, read with netstep's own reader.
fn manifest(root: &Path) -> BTreeMap<String, String> {
    netstep::sweep::state::read_manifest(root)
        .unwrap()
        .into_iter()
        .collect()
}

#[test]
fn grid_zip_seeds_expand_to_their_product_in_file_order() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(
        dir.path(),
        r#"seeds = [3, 4]
[grid]
buffer = { key = "topology.links.buffer", values = ["128KB", "256KB", "512KB"] }
load = { key = "traffic.0.load", values = [0.3, 0.6] }
[zip]
rate = { key = "topology.links.rate", values = ["10Gbps", "40Gbps"] }
delay = { key = "topology.links.delay", values = ["1us", "2us"] }
"#,
        "1ms",
    );
    let plan = plan::load(&file).unwrap();
    let names: Vec<&str> = plan.axes.iter().map(|a| a.name.as_str()).collect();
    // Grid axes in file order (not alphabetical), then zip, then seed.
    assert_eq!(names, ["buffer", "load", "rate", "delay", "seed"]);
    assert_eq!(plan.axes[4].group, AxisGroup::Seed);
    assert_eq!(plan.points.len(), 3 * 2 * 2 * 2);
    let combos: BTreeSet<String> = plan
        .points
        .iter()
        .map(|p| plan::describe(&plan.axes, &p.values))
        .collect();
    assert_eq!(combos.len(), plan.points.len(), "every point is distinct");
    for buffer in ["128KB", "256KB", "512KB"] {
        for load in ["0.3", "0.6"] {
            for (rate, delay) in [("10Gbps", "1us"), ("40Gbps", "2us")] {
                for seed in [3, 4] {
                    let want = format!(
                        "buffer={buffer}, load={load}, rate={rate}, delay={delay}, seed={seed}"
                    );
                    assert!(combos.contains(&want), "missing {want}");
                }
            }
        }
    }
    // Zip axes vary together: never 10Gbps with 2us.
    assert!(!combos.iter().any(|c| c.contains("rate=10Gbps, delay=2us")));
    let first = &plan.points[0];
    assert_eq!(
        first.path,
        "buffer=128KB/load=0.3/rate=10Gbps/delay=1us/seed=3"
    );
    assert!(
        first
            .overrides
            .contains(&"topology.links.buffer=\"128KB\"".to_string())
    );
    assert!(first.overrides.contains(&"simulation.seed=3".to_string()));
}

#[test]
fn zip_axes_of_different_lengths_and_bad_names_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "[zip]\na = { key = \"topology.links.rate\", values = [\"10Gbps\", \"40Gbps\"] }\nb = { key = \"topology.links.delay\", values = [\"1us\"] }\n",
            "need the same number of values",
        ),
        (
            "[grid]\n\"bad name\" = { key = \"traffic.0.load\", values = [0.3] }\n",
            "axis names are column names",
        ),
        (
            "[grid]\nstatus = { key = \"traffic.0.load\", values = [0.3] }\n",
            "the manifest uses this column name",
        ),
        (
            "[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.3] }\n",
            "resolve to the same scenario",
        ),
        ("[grid]\n", "no axis"),
        (
            "seeds = 2\n[grid]\ns = { key = \"simulation.seed\", values = [5, 6] }\n",
            "both set simulation.seed",
        ),
        (
            "[grid]\nload = { key = \"traffic..load\", values = [0.3] }\n",
            "not a dotted scenario key",
        ),
        (
            "[grid]\nload = { key = \"traffic.0.load\", valeus = [0.3] }\n",
            "unknown field",
        ),
    ];
    for (i, (sweep, message)) in cases.iter().enumerate() {
        let file = setup(&dir.path().join(i.to_string()), sweep, "1ms");
        let err = plan::load(&file).unwrap_err().to_string();
        assert!(err.contains(message), "case {i}: {err}");
        assert!(err.contains("sweep.toml"), "case {i} names the file: {err}");
    }
}

#[test]
fn ids_are_stable_across_folders_and_change_with_the_scenario() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = "seeds = 2\n[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.5] }\n";
    let ids = |file: &Path| -> Vec<String> {
        plan::load(file)
            .unwrap()
            .points
            .iter()
            .map(|p| p.id.clone())
            .collect()
    };
    let a = ids(&setup(&dir.path().join("a"), sweep, "1ms"));
    assert_eq!(a.len(), 4);
    // Same files elsewhere (another machine's paths): same ids; loading again: same ids.
    let b_file = setup(&dir.path().join("elsewhere/b"), sweep, "1ms");
    assert_eq!(ids(&b_file), a);
    assert_eq!(ids(&b_file), a);
    // The CLI prints the same ids.
    let listed = String::from_utf8(netstep(&["sweep", "plan", text(&b_file)]).stdout).unwrap();
    let cli_ids: Vec<String> = listed
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(cli_ids, a);
    // A different base scenario or CDF changes every id.
    let c = ids(&setup(&dir.path().join("c"), sweep, "2ms"));
    assert!(c.iter().all(|id| !a.contains(id)));
    let d_file = setup(&dir.path().join("d"), sweep, "1ms");
    let cdf = std::fs::read_to_string(d_file.with_file_name("cdf.toml")).unwrap();
    std::fs::write(
        d_file.with_file_name("cdf.toml"),
        format!("# edited\n{cdf}"),
    )
    .unwrap();
    assert!(ids(&d_file).iter().all(|id| !a.contains(id)));
}

#[test]
fn random_axes_draw_within_their_ranges_reproducibly() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |seed: u64| {
        format!(
            "[random]\nsamples = 12\nseed = {seed}\n[random.axes]\nload = {{ key = \"traffic.0.load\", uniform = [0.2, 0.8], digits = 3 }}\nbuffer_kb = {{ key = \"topology.links.buffer\", choice = [\"128KB\", \"256KB\"] }}\nk = {{ key = \"simulation.seed\", integers = [1, 1000] }}\n"
        )
    };
    let load = |seed: u64, name: &str| {
        plan::load(&setup(&dir.path().join(name), &sweep(seed), "1ms")).unwrap()
    };
    let a = load(7, "a");
    assert_eq!(a.points.len(), 12);
    for p in &a.points {
        let x = p.values[0].as_float().unwrap();
        assert!((0.2..=0.8).contains(&x), "{x}");
        // Three significant digits.
        assert_eq!(format!("{:.2e}", x).parse::<f64>().unwrap(), x);
        assert!(["128KB", "256KB"].contains(&p.values[1].as_str().unwrap()));
        assert!((1..=1000).contains(&p.values[2].as_integer().unwrap()));
    }
    let values = |p: &plan::Plan| -> Vec<String> {
        p.points
            .iter()
            .map(|x| plan::describe(&p.axes, &x.values))
            .collect()
    };
    assert_eq!(values(&a), values(&load(7, "b")), "same seed, same draws");
    assert_ne!(
        values(&a),
        values(&load(8, "c")),
        "another seed, other draws"
    );
}

#[test]
fn axis_values_cannot_escape_the_sweep_folder() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(
        dir.path(),
        r#"[grid]
name = { key = "name", values = ["a/b", "..", "with space", "../../escape", "/abs"] }
"#,
        "200us",
    );
    let plan = plan::load(&file).unwrap();
    for p in &plan.points {
        assert!(!p.path.contains('/'), "one level, no separator: {}", p.path);
        assert!(!p.path.contains(' '));
        assert!(p.path.starts_with("name="));
    }
    let out = dir.path().join("sweep-out");
    let done = netstep(&["sweep", text(&file), "--out", text(&out), "--quiet"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let runs = run_folders(&out);
    let want: BTreeSet<String> = [
        "name=a%2Fb",
        "name=..",
        "name=with%20space",
        "name=..%2F..%2Fescape",
        "name=%2Fabs",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    assert_eq!(runs, want);
    // Nothing was written outside the sweep folder.
    let mut outside: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    outside.sort();
    assert_eq!(
        outside,
        ["base.toml", "cdf.toml", "sweep-out", "sweep.toml"]
    );
}

/// A point that is valid but fails while running (its packets would arrive past the latest
/// representable time: six hops of 600,000 s) is recorded as failed, the others complete, and
/// the sweep exits 4. (An invalid point is refused before any point runs: exit 2, tested
/// below.)
#[test]
fn a_failing_point_is_recorded_and_the_others_complete() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(
        dir.path(),
        "[grid]\ndelay = { key = \"topology.links.delay\", values = [\"1us\", \"600000s\", \"2us\"] }\n",
        "300us",
    );
    let out = dir.path().join("out");
    let done = netstep(&["sweep", text(&file), "--out", text(&out), "--jobs", "2"]);
    assert_eq!(done.status.code(), Some(4), "exit 4: some points failed");
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(stderr.contains("1 point(s) failed"), "{stderr}");
    let stdout = String::from_utf8_lossy(&done.stdout);
    assert!(stdout.contains("failed delay=600000s"), "{stdout}");
    let m = manifest(&out);
    assert_eq!(m["delay=1us"], "done");
    assert_eq!(m["delay=2us"], "done");
    assert_eq!(m["delay=600000s"], "failed");
    let record = SweepDir::existing(&out)
        .unwrap()
        .unwrap()
        .record("delay=600000s")
        .unwrap();
    let error = record.error.unwrap();
    assert!(error.contains("latest representable time"), "{error}");
    assert!(!out.join("delay=600000s").exists());
    // Again: the done points are skipped, the failed one is tried again and fails again.
    let again = netstep(&["sweep", text(&file), "--out", text(&out)]);
    assert_eq!(again.status.code(), Some(4));
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 ran, 2 already done, 1 failed"));
}

#[test]
fn kill_9_at_random_moments_then_resume_runs_every_point_exactly_once() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(
        dir.path(),
        "seeds = 6\n[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.6] }\n",
        "10ms",
    );
    let out = dir.path().join("out");
    let plan = plan::load(&file).unwrap();
    // Kill moments from a fixed LCG, 20-120 ms after the start: a few runs' worth each, so
    // the kills land while runs are starting, simulating, writing and being recorded.
    let mut state = 0x2545_f491_u64;
    let mut interrupted = 0;
    for _ in 0..10 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let ms = 20 + (state >> 33) % 100;
        let mut child = Command::new(env!("CARGO_BIN_EXE_netstep"))
            .args([
                "sweep",
                text(&file),
                "--out",
                text(&out),
                "--jobs",
                "2",
                "--quiet",
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(ms));
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        // Never a partial run at a final path: every run folder is complete.
        if out.exists() {
            let runs = run_folders(&out);
            for run in &runs {
                for table in ["flows.parquet", "links.parquet", "run.parquet"] {
                    assert!(out.join(run).join(table).is_file(), "{run} lacks {table}");
                }
            }
            interrupted += usize::from(runs.len() < plan.points.len());
        }
    }
    // The killed drivers' runs stopped with them (no orphan keeps simulating).
    let orphans = || -> usize {
        std::fs::read_dir("/proc")
            .map(|entries| {
                entries
                    .flatten()
                    .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
                    .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
                    .filter(|c| c.contains("run-point") && c.contains(text(&out)))
                    .count()
            })
            .unwrap_or(0)
    };
    let mut waited = 0;
    while orphans() > 0 && waited < 50 {
        std::thread::sleep(Duration::from_millis(20));
        waited += 1;
    }
    assert_eq!(orphans(), 0, "runs of killed drivers still alive after 1 s");
    eprintln!("kills that left work: {interrupted}");
    assert!(
        interrupted >= 3,
        "only {interrupted} of 10 kills left work to resume; the test needs longer runs"
    );
    let done = netstep(&["sweep", text(&file), "--out", text(&out), "--quiet"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let want: BTreeSet<String> = plan.points.iter().map(|p| p.path.clone()).collect();
    assert_eq!(run_folders(&out), want, "each point's folder exactly once");
    assert!(leftovers(&out).is_empty(), "{:?}", leftovers(&out));
    let m = manifest(&out);
    assert_eq!(m.len(), plan.points.len());
    assert!(m.values().all(|s| s == "done"), "{m:?}");
    // Each point's tables equal an uninterrupted sweep's, byte for byte.
    let clean = dir.path().join("clean");
    assert!(
        netstep(&["sweep", text(&file), "--out", text(&clean), "--quiet"])
            .status
            .success()
    );
    for p in &plan.points {
        for table in ["flows.parquet", "links.parquet"] {
            let a = std::fs::read(out.join(&p.path).join(table)).unwrap();
            let b = std::fs::read(clean.join(&p.path).join(table)).unwrap();
            assert!(
                a == b,
                "{} {table} differs from an uninterrupted run",
                p.path
            );
        }
    }
    // A third invocation has nothing to do.
    let again = netstep(&["sweep", text(&file), "--out", text(&out)]);
    assert!(String::from_utf8_lossy(&again.stdout).contains("0 ran, 12 already done, 0 failed"));
}

#[test]
fn a_changed_sweep_file_runs_new_points_and_reports_removed_ones() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(
        dir.path(),
        "[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.5] }\n",
        "300us",
    );
    let out = dir.path().join("out");
    assert!(
        netstep(&["sweep", text(&file), "--out", text(&out)])
            .status
            .success()
    );
    std::fs::write(
        &file,
        "scenario = \"base.toml\"\n[grid]\nload = { key = \"traffic.0.load\", values = [0.5, 0.7] }\n",
    )
    .unwrap();
    let second = netstep(&["sweep", text(&file), "--out", text(&out)]);
    assert!(second.status.success());
    let stdout = String::from_utf8_lossy(&second.stdout);
    assert!(
        stdout.contains("1 point(s) are no longer in the sweep file"),
        "{stdout}"
    );
    assert!(stdout.contains("load=0.3"), "{stdout}");
    assert!(stdout.contains("1 ran, 1 already done"), "{stdout}");
    let m = manifest(&out);
    assert_eq!(
        m.keys().cloned().collect::<Vec<_>>(),
        ["load=0.5", "load=0.7"]
    );
    // The removed point's folder is left in place.
    assert!(out.join("load=0.3/run.parquet").is_file());
    // A changed fixed setting changes every point: both run again.
    std::fs::write(
        &file,
        "scenario = \"base.toml\"\n[set]\n\"topology.links.buffer\" = \"128KB\"\n[grid]\nload = { key = \"traffic.0.load\", values = [0.5, 0.7] }\n",
    )
    .unwrap();
    let third = netstep(&["sweep", text(&file), "--out", text(&out)]);
    let stdout = String::from_utf8_lossy(&third.stdout);
    assert!(stdout.contains("2 point(s) changed"), "{stdout}");
    assert!(stdout.contains("2 ran, 0 already done"), "{stdout}");
}

#[test]
fn plan_lists_pending_points_and_run_point_runs_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(dir.path(), "seeds = 3\n", "300us");
    let out = dir.path().join("out");
    let lines = |pending: bool| -> Vec<serde_json::Value> {
        let mut args = vec!["sweep", "plan", text(&file), "--out", text(&out)];
        if pending {
            args.push("--pending");
        }
        String::from_utf8(netstep(&args).stdout)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let all = lines(false);
    assert_eq!(all.len(), 3);
    assert!(all.iter().all(|p| p["status"] == "pending"));
    let id = all[1]["id"].as_str().unwrap();
    let ran = netstep(&[
        "sweep",
        "run-point",
        text(&file),
        "--id",
        id,
        "--out",
        text(&out),
    ]);
    assert!(
        ran.status.success(),
        "{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&ran.stdout), "done\n");
    assert!(out.join("seed=2/run.parquet").is_file());
    assert_eq!(lines(true).len(), 2);
    assert_eq!(
        manifest(&out)["seed=2"],
        "done",
        "run-point refreshes the manifest"
    );
    let again = netstep(&[
        "sweep",
        "run-point",
        text(&file),
        "--id",
        id,
        "--out",
        text(&out),
    ]);
    assert_eq!(String::from_utf8_lossy(&again.stdout), "already done\n");
    let unknown = netstep(&[
        "sweep",
        "run-point",
        text(&file),
        "--id",
        "0123",
        "--out",
        text(&out),
    ]);
    assert_eq!(unknown.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no such point"));
}

#[test]
fn a_second_driver_on_the_same_folder_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = SweepDir::open(&dir.path().join("out")).unwrap();
    let _held = sweep.lock_driver().unwrap();
    let other = SweepDir::open(&dir.path().join("out")).unwrap();
    let err = other.lock_driver().err().unwrap().to_string();
    assert!(err.contains("another `netstep sweep` is running"), "{err}");
}

/// Two sweeps started at the same moment on one new folder: both open it as a sweep folder
/// (one then runs, the other is told another sweep is running), many times over, never "not
/// a netstep sweep".
#[test]
fn two_sweeps_opening_one_new_folder_at_once_both_see_a_sweep_folder() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..200 {
        let out = dir.path().join(format!("out{i}"));
        let barrier = std::sync::Arc::new(std::sync::Barrier::new(2));
        let handles: Vec<_> = (0..2)
            .map(|_| {
                let (out, barrier) = (out.clone(), barrier.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    SweepDir::open(&out).map(|_| ()).map_err(|e| e.to_string())
                })
            })
            .collect();
        for handle in handles {
            let opened = handle.join().unwrap();
            assert!(opened.is_ok(), "attempt {i}: {opened:?}");
        }
    }
}

#[test]
fn a_folder_that_is_not_a_sweep_is_never_written_into() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(dir.path(), "seeds = 1\n", "300us");
    let out = dir.path().join("mine");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("thesis.tex"), "keep").unwrap();
    let refused = netstep(&["sweep", text(&file), "--out", text(&out)]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("not a netstep sweep"));
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 1);
}

#[test]
fn the_slurm_script_is_valid_and_covers_exactly_the_pending_points() {
    let dir = tempfile::tempdir().unwrap();
    let file = setup(dir.path(), "seeds = 5\n", "300us");
    let out = dir.path().join("out");
    let plan = plan::load(&file).unwrap();
    // Two points done beforehand.
    for p in &plan.points[..2] {
        assert!(
            netstep(&[
                "sweep",
                "run-point",
                text(&file),
                "--id",
                &p.id,
                "--out",
                text(&out)
            ])
            .status
            .success()
        );
    }
    let emitted = netstep(&[
        "sweep",
        text(&file),
        "--out",
        text(&out),
        "--emit-slurm",
        "--jobs",
        "2",
    ]);
    assert!(
        emitted.status.success(),
        "{}",
        String::from_utf8_lossy(&emitted.stderr)
    );
    let script = out.join("sweep.slurm");
    let body = std::fs::read_to_string(&script).unwrap();
    assert!(body.contains("#SBATCH --array=0-2%2\n"), "{body}");
    for (i, p) in plan.points.iter().enumerate() {
        assert_eq!(body.contains(&p.id), i >= 2, "point {i}");
    }
    let syntax = Command::new("bash")
        .arg("-n")
        .arg(&script)
        .output()
        .unwrap();
    assert!(
        syntax.status.success(),
        "{}",
        String::from_utf8_lossy(&syntax.stderr)
    );
    // Run every array task as Slurm would (bash reads #SBATCH lines as comments).
    for task in 0..3 {
        let run = Command::new("bash")
            .arg(&script)
            .env("SLURM_ARRAY_TASK_ID", task.to_string())
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "task {task}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
    }
    let m = manifest(&out);
    assert_eq!(m.len(), 5);
    assert!(m.values().all(|s| s == "done"), "{m:?}");
    // Nothing pending: no script needed.
    let none = netstep(&["sweep", text(&file), "--out", text(&out), "--emit-slurm"]);
    assert!(String::from_utf8_lossy(&none.stdout).contains("no Slurm script needed"));
}

#[test]
fn compare_matches_two_sweeps_point_by_point_over_their_shared_axes() {
    let dir = tempfile::tempdir().unwrap();
    let a_file = setup(
        &dir.path().join("a"),
        "seeds = 2\n[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.6] }\n",
        "3ms",
    );
    // B: the same points, each also run with a coarse window (an axis A does not have).
    let b_file = setup(
        &dir.path().join("b"),
        "seeds = 2\n[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 0.6] }\nwindow = { key = \"simulation.window\", values = [\"exact\", \"20us\"] }\n",
        "3ms",
    );
    let (a, b) = (dir.path().join("a-out"), dir.path().join("b-out"));
    for (file, out) in [(&a_file, &a), (&b_file, &b)] {
        let done = netstep(&["sweep", text(file), "--out", text(out), "--quiet"]);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    let json = |x: &Path, y: &Path| -> Vec<serde_json::Value> {
        let out = netstep(&["compare", text(x), text(y), "--by", "none", "--json"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    };
    let same = json(&a, &a);
    let points: BTreeSet<&str> = same.iter().map(|r| r["point"].as_str().unwrap()).collect();
    assert_eq!(
        points,
        [
            "load=0.3/seed=1",
            "load=0.3/seed=2",
            "load=0.6/seed=1",
            "load=0.6/seed=2"
        ]
        .into_iter()
        .collect()
    );
    assert!(same.iter().all(|r| r["w1"] == 0.0), "{same:?}");
    // Against B, each A point is matched with B's two windows, pooled.
    let pooled = json(&a, &b);
    assert_eq!(pooled.len(), 4);
    for r in &pooled {
        assert_eq!(
            r["n_b"].as_u64().unwrap(),
            2 * r["n_a"].as_u64().unwrap(),
            "the same flows complete under both windows: {r}"
        );
    }
    // The table names the points.
    let table = netstep(&["compare", text(&a), text(&b), "--by", "none"]);
    let table = String::from_utf8_lossy(&table.stdout);
    assert!(table.starts_with("point"), "{table}");
    assert!(table.contains("load=0.6/seed=2"), "{table}");
}

/// Runs the shipped sweep `scenarios/sweeps/<name>` into a temporary folder and checks that
/// its `points` points are all done; returns the folder (kept alive) and the sweep's output.
fn run_shipped_sweep(name: &str, points: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = repo().join("scenarios/sweeps").join(name);
    let out = dir.path().join("out");
    let done = netstep(&["sweep", text(&file), "--out", text(&out), "--quiet"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let m = manifest(&out);
    assert_eq!(m.len(), points);
    assert!(m.values().all(|s| s == "done"));
    (dir, out)
}

/// `scenarios/sweeps/m3-mix-load.toml`: the native m3 mix swept over its target load: six
/// points, every one done, every flow completed.
#[test]
fn the_mix_sweep_does_what_its_header_says() {
    let (_dir, out) = run_shipped_sweep("m3-mix-load.toml", 6);
    for load in ["0.3", "0.5", "0.7"] {
        for seed in [1, 2] {
            let run = out.join(format!("max_load={load}/seed={seed}"));
            let slowdowns = netstep::compare::samples(
                &[run],
                netstep::compare::Metric::Slowdown,
                netstep::compare::GroupBy::None,
            )
            .unwrap()
            .remove("all")
            .unwrap();
            // 5,000 arrivals, a few in 100,000 of them zero-byte draws (no flow).
            assert!(
                (4_990..=5_000).contains(&slowdowns.len()),
                "max_load {load}, seed {seed}: {} flows completed",
                slowdowns.len()
            );
        }
    }
}

#[test]
fn the_shipped_sweep_does_what_its_header_says() {
    let (_dir, out) = run_shipped_sweep("quickstart-load.toml", 6);
    let mut medians = Vec::new();
    for (load, flows) in [("0.3", 38), ("0.5", 62), ("0.7", 94)] {
        let runs: Vec<PathBuf> = [1, 2]
            .iter()
            .map(|s| out.join(format!("load={load}/seed={s}")))
            .collect();
        let mut slowdowns = netstep::compare::samples(
            &runs,
            netstep::compare::Metric::Slowdown,
            netstep::compare::GroupBy::None,
        )
        .unwrap()
        .remove("all")
        .unwrap();
        assert_eq!(slowdowns.len(), flows, "load {load}: every flow completes");
        slowdowns.sort_by(f64::total_cmp);
        let n = slowdowns.len();
        let median = if n % 2 == 1 {
            slowdowns[n / 2]
        } else {
            (slowdowns[n / 2 - 1] + slowdowns[n / 2]) / 2.0
        };
        medians.push(median);
    }
    // The header's two-decimal values.
    let shown: Vec<String> = medians.iter().map(|m| format!("{m:.2}")).collect();
    assert_eq!(shown, ["1.11", "1.21", "1.54"], "{medians:?}");
}

/// Two sweeps that share some points (delay 1us, both seeds) and not others: the shared points
/// are compared and the others listed on stderr (issue "errors at the door", class 7).
#[test]
fn compare_of_partly_overlapping_sweeps_compares_the_shared_points_and_lists_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = |other: &str| {
        format!(
            "seeds = [1, 2]\n[grid]\ndelay = {{ key = \"topology.links.delay\", values = [\"1us\", \"{other}\"] }}\n"
        )
    };
    let a_file = setup(&dir.path().join("a"), &sweep("2us"), "1ms");
    let b_file = setup(&dir.path().join("b"), &sweep("3us"), "1ms");
    let (a, b) = (dir.path().join("a-out"), dir.path().join("b-out"));
    for (file, out) in [(&a_file, &a), (&b_file, &b)] {
        let done = netstep(&["sweep", text(file), "--out", text(out), "--quiet"]);
        assert!(
            done.status.success(),
            "{}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    let out = netstep(&["compare", text(&a), text(&b), "--by", "none", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let points: BTreeSet<&str> = rows.iter().map(|r| r["point"].as_str().unwrap()).collect();
    assert_eq!(
        points,
        ["delay=1us/seed=1", "delay=1us/seed=2"]
            .into_iter()
            .collect()
    );
    // The same scenario and seed on both sides: identical results.
    assert!(rows.iter().all(|r| r["w1"] == 0.0), "{rows:?}");
    for unmatched in [
        "delay=2us/seed=1 (only in A)",
        "delay=2us/seed=2 (only in A)",
        "delay=3us/seed=1 (only in B)",
        "delay=3us/seed=2 (only in B)",
    ] {
        assert!(stderr.contains(unmatched), "{unmatched} listed: {stderr}");
    }
}

/// Two sweeps whose points match but hold no samples of the metric (no flow completes before
/// the simulation ends) are refused for that reason, naming the metric and the points, not as
/// sweeps whose points do not match.
#[test]
fn compare_of_matching_sweeps_without_samples_says_so() {
    let dir = tempfile::tempdir().unwrap();
    // Flows arrive from the start but none can finish in 1 us.
    let file = setup(
        &dir.path().join("a"),
        "seeds = [1, 2]\n[set]\n\"simulation.duration\" = \"1us\"\n",
        "1ms",
    );
    let out = dir.path().join("a-out");
    let done = netstep(&["sweep", text(&file), "--out", text(&out), "--quiet"]);
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let compared = netstep(&["compare", text(&out), text(&out), "--metric", "slowdown"]);
    let stderr = String::from_utf8_lossy(&compared.stderr);
    assert_eq!(compared.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains("no point of"), "{stderr}");
    for needle in [
        "no samples of Slowdown",
        "seed=1",
        "seed=2",
        "no completed flows?",
    ] {
        assert!(stderr.contains(needle), "{needle:?} in {stderr}");
    }
    assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
}

/// A sweep is checked whole before any point runs: an unknown key in `[set]` or in an axis,
/// or a `scenario` that is a sweep file, is refused with exit 2 naming the point and the
/// field, by `netstep sweep` (nothing written) and by `netstep sweep plan`.
#[test]
fn a_sweep_with_an_invalid_point_is_refused_before_any_point_runs() {
    let dir = tempfile::tempdir().unwrap();
    for (i, (sweep, needles)) in [
        (
            "seeds = 2\n[set]\n\"traffic.0.lod\" = 0.5\n",
            &["point seed=1", "unknown field `lod`"][..],
        ),
        (
            "[grid]\nload = { key = \"traffic.0.load\", values = [0.3, 1.5] }\n",
            &["point load=1.5", "traffic[0].load", "got 1.5"][..],
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let file = setup(&dir.path().join(format!("s{i}")), sweep, "1ms");
        let out = dir.path().join(format!("out{i}"));
        for args in [
            vec!["sweep", text(&file), "--out", text(&out)],
            vec!["sweep", "plan", text(&file), "--out", text(&out)],
        ] {
            let refused = netstep(&args);
            let stderr = String::from_utf8_lossy(&refused.stderr);
            assert_eq!(refused.status.code(), Some(2), "{args:?}: {stderr}");
            assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
            for needle in needles {
                assert!(stderr.contains(needle), "{needle:?} in {stderr}");
            }
            assert!(!out.exists(), "{args:?}: nothing written");
        }
    }
    // A sweep whose scenario is the sweep file itself.
    let selfish = dir.path().join("self.toml");
    std::fs::write(&selfish, "scenario = \"self.toml\"\nseeds = 1\n").unwrap();
    let refused = netstep(&[
        "sweep",
        text(&selfish),
        "--out",
        text(&dir.path().join("o")),
    ]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("point seed=1"), "{stderr}");
}

/// Every parse error in a sweep file is one line naming file, line:column, the field and what
/// was expected (not the TOML parser's multi-line snippet).
#[test]
fn sweep_file_errors_are_one_line_and_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    for (body, needles) in [
        (
            "seeds = -2\n",
            &["sweep.toml:2:9", "seeds", "expected a count of seeds"][..],
        ),
        (
            "seeds = 1.5\n",
            &["sweep.toml:2:9", "seeds", "non-negative integers"][..],
        ),
        ("[random]\nsamples = -3\n", &["random.samples", "-3"][..]),
        (
            "[grid]\nd = { values = [1] }\n",
            &["grid.d", "missing field `key`"][..],
        ),
        ("bogus = 1\n", &["sweep.toml:2:1: bogus: unknown field"][..]),
        (
            "[grid]\nd = { key = \"x\", integers = [1.5] }\n",
            &["grid.d", "unknown field `integers`"][..],
        ),
    ] {
        let file = setup(dir.path(), body, "1ms");
        let refused = netstep(&["sweep", "plan", text(&file)]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(2), "{body:?}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        for needle in needles {
            assert!(stderr.contains(needle), "{needle:?} in {stderr}");
        }
    }
    // No `scenario` at all.
    let file = dir.path().join("bare.toml");
    std::fs::write(&file, "seeds = 2\n").unwrap();
    let refused = netstep(&["sweep", "plan", text(&file)]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(stderr.contains("missing field `scenario`"), "{stderr}");
}

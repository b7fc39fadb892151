//! Every class of bad input gets a one-line error naming file, field (and line:column where the
//! parser knows it), the value and what was expected; exit code 2; no output left behind.

use std::path::{Path, PathBuf};
use std::process::Command;

const GOOD: &str = r#"
[topology]
kind = "fat_tree"
k = 4
[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "100KB"
[[traffic]]
kind = "flows"
flows = [{ src = "h0", dst = "h5", size = "10KB" }]
"#;

struct Outcome {
    code: i32,
    stderr: String,
    out: PathBuf,
    _dir: tempfile::TempDir,
}

/// Runs `netstep run` on `text` (written to `scenario.toml` in a fresh folder).
fn run_text(text: &str, extra: &[&str]) -> Outcome {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("scenario.toml");
    std::fs::write(&file, text).unwrap();
    let out = dir.path().join("run");
    let output = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .arg("run")
        .arg(&file)
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .args(extra)
        .current_dir(crate::common::repo())
        .output()
        .unwrap();
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        out,
        _dir: dir,
    }
}

/// Asserts a bad-input failure whose message contains every `needle`.
fn assert_rejected(outcome: &Outcome, needles: &[&str]) {
    assert_eq!(outcome.code, 2, "exit code; stderr: {}", outcome.stderr);
    let message = outcome.stderr.trim_end();
    assert_eq!(message.lines().count(), 1, "one line: {message}");
    assert!(message.starts_with("error: "), "{message}");
    assert!(
        message.contains("scenario.toml"),
        "names the file: {message}"
    );
    for needle in needles {
        assert!(
            message.contains(needle),
            "expected {needle:?} in: {message}"
        );
    }
    assert!(!outcome.out.exists(), "no output at the final path");
    let leftovers: Vec<_> = std::fs::read_dir(outcome.out.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(
        leftovers.is_empty(),
        "no partial folder left: {leftovers:?}"
    );
}

#[test]
fn good_scenario_runs() {
    let outcome = run_text(GOOD, &[]);
    assert_eq!(outcome.code, 0, "{}", outcome.stderr);
    for table in ["flows.parquet", "links.parquet", "run.parquet"] {
        assert!(outcome.out.join(table).exists(), "{table}");
    }
}

#[test]
fn malformed_toml() {
    let o = run_text(&GOOD.replace("k = 4", "k = = 4"), &[]);
    assert_rejected(&o, &["scenario.toml:4:"]);
}

#[test]
fn unknown_key() {
    let o = run_text(&GOOD.replace("k = 4", "k = 4\nradix = 4"), &[]);
    assert_rejected(&o, &["unknown field `radix`"]);
}

#[test]
fn bad_unit() {
    let o = run_text(&GOOD.replace("\"10Gbps\"", "\"10Gbs\""), &[]);
    assert_rejected(
        &o,
        &[
            "topology.links.rate",
            "\"10Gbs\"",
            "expected",
            "Gbps",
            "scenario.toml:6:",
        ],
    );
}

#[test]
fn missing_unit() {
    let o = run_text(&GOOD.replace("\"1us\"", "\"1\""), &[]);
    assert_rejected(
        &o,
        &[
            "topology.links.delay",
            "\"1\"",
            "expected a number with a unit",
        ],
    );
}

#[test]
fn odd_k() {
    let o = run_text(&GOOD.replace("k = 4", "k = 5"), &[]);
    assert_rejected(&o, &["topology.k", "even", "got 5", "scenario.toml:4:5"]);
}

#[test]
fn too_small_k() {
    let o = run_text(&GOOD.replace("k = 4", "k = 0"), &[]);
    assert_rejected(&o, &["topology.k", "got 0"]);
}

#[test]
fn zero_rate() {
    let o = run_text(&GOOD.replace("\"10Gbps\"", "\"0Gbps\""), &[]);
    assert_rejected(&o, &["topology.links.rate", "zero", "positive"]);
}

/// A zero lookahead (a packet crossing a link in no time) cannot be asked for: a packet of no
/// bytes is refused at its field, and every other packet takes at least 1 ps to serialize
/// (rounded up), so links of zero delay give a lookahead of at least 1 ps.
#[test]
fn zero_size_packets_are_refused_so_the_lookahead_is_positive() {
    let text = |size: &str| {
        format!(
            "[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n[topology.links]\ndelay = \"0s\"\nrate = \"1000Tbps\"\n\
             [transport]\nkind = \"open_loop\"\npacket_size = \"{size}\"\ninterval = \"1us\"\n\
             [[traffic]]\nkind = \"flows\"\nflows = [{{ src = \"l0\", dst = \"r0\", packets = 3 }}]\n"
        )
    };
    assert_rejected(
        &run_text(&text("0B"), &[]),
        &["transport.packet_size", "positive"],
    );
    let s = crate::common::scenario(&text("1B"), &[]);
    assert_eq!(s.model.lookahead(), netstep_core::units::SimTime(1));
}

#[test]
fn zero_window() {
    let o = run_text(&format!("[simulation]\nwindow = \"0ns\"\n{GOOD}"), &[]);
    assert_rejected(&o, &["simulation.window", "zero window"]);
}

#[test]
fn unknown_host_in_a_flow() {
    let o = run_text(&GOOD.replace("dst = \"h5\"", "dst = \"h99\""), &[]);
    assert_rejected(&o, &["traffic[0].flows[0].dst", "unknown host \"h99\""]);
}

#[test]
fn unknown_host_in_a_path() {
    let o = run_text(
        &GOOD.replace(
            "size = \"10KB\"",
            "size = \"10KB\", path = [\"h0\", \"edge9_9\", \"h5\"]",
        ),
        &[],
    );
    assert_rejected(
        &o,
        &["traffic[0].flows[0].path[1]", "unknown node \"edge9_9\""],
    );
}

#[test]
fn path_not_following_links() {
    let o = run_text(
        &GOOD.replace(
            "size = \"10KB\"",
            "size = \"10KB\", path = [\"h0\", \"edge0_0\", \"edge1_0\", \"h5\"]",
        ),
        &[],
    );
    assert_rejected(
        &o,
        &[
            "traffic[0].flows[0].path[2]",
            "no link from \"edge0_0\" to \"edge1_0\"",
        ],
    );
}

fn poisson(cdf: &str) -> String {
    GOOD.replace(
        "kind = \"flows\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"10KB\" }]",
        &format!("kind = \"poisson\"\nload = 0.3\ncdf = \"{cdf}\"\nduration = \"100us\""),
    )
}

#[test]
fn missing_cdf_file() {
    let o = run_text(&poisson("no-such.toml"), &[]);
    assert_rejected(
        &o,
        &["traffic[0].cdf", "cannot read CDF file", "no-such.toml"],
    );
}

#[test]
fn non_monotone_cdf_file() {
    let dir = tempfile::tempdir().unwrap();
    let cdf = dir.path().join("bad.toml");
    std::fs::write(&cdf, "name = \"x\"\nsource = \"test\"\ninterpolation = \"linear\"\npoints = [[0, 0.0], [100, 0.7], [200, 0.4], [300, 1.0]]\n").unwrap();
    let o = run_text(&poisson(&cdf.display().to_string()), &[]);
    assert_rejected(
        &o,
        &[
            "traffic[0].cdf",
            "bad.toml",
            "points[2]",
            "must not decrease",
        ],
    );
}

/// Runs the good scenario (written into `dir`) with `--out out`, expects exit code 2 and
/// returns stderr.
fn run_good_into(dir: &Path, out: &Path) -> String {
    let scenario = dir.join("scenario.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["run", "--quiet"])
        .arg(&scenario)
        .arg("--out")
        .arg(out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    stderr
}

#[test]
fn output_folder_not_writable() {
    // A regular file where the output folder's parent should be cannot be written into,
    // whoever runs the test (root included).
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "x").unwrap();
    let out = blocker.join("run");
    let stderr = run_good_into(dir.path(), &out);
    assert!(
        stderr.contains("--out") && stderr.contains("cannot create"),
        "{stderr}"
    );
    assert!(!Path::new(&out).exists());
}

#[test]
fn output_folder_that_is_not_a_run_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("precious");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("notes.txt"), "keep me").unwrap();
    let stderr = run_good_into(dir.path(), &out);
    assert!(stderr.contains("not a netstep run"), "{stderr}");
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn bad_override() {
    let o = run_text(GOOD, &["--set", "topology.k=7"]);
    assert_rejected(&o, &["(after --set)", "topology.k", "got 7"]);
    let o = run_text(GOOD, &["--set", "nonsense"]);
    assert_rejected(&o, &["--set", "KEY=VALUE"]);
}

#[test]
fn bad_nic_settings() {
    let zero = run_text(&format!("{GOOD}\n[nic]\nper_flow = \"0B\"\n"), &[]);
    assert_rejected(&zero, &["nic.per_flow", "must be positive", "\"0B\""]);
    let unit = run_text(&format!("{GOOD}\n[nic]\nbuffer = \"64\"\n"), &[]);
    assert_rejected(
        &unit,
        &["nic.buffer", "\"64\"", "expected a size with a unit"],
    );
    let scheduler = run_text(&format!("{GOOD}\n[nic]\nscheduler = \"lifo\"\n"), &[]);
    assert_rejected(&scheduler, &["unknown variant `lifo`", "round_robin"]);
}

#[test]
fn bad_tcp_settings() {
    let cc = run_text(
        &format!("{GOOD}\n[transport]\nkind = \"tcp\"\ncc = \"cubik\"\n"),
        &[],
    );
    assert_rejected(&cc, &["unknown variant `cubik`", "newreno"]);
    let sack = run_text(
        &format!("{GOOD}\n[transport]\nkind = \"tcp\"\nsack = \"yes\"\n"),
        &[],
    );
    // (Located at the enclosing table, not the key: issue 7 "type errors point at the table".)
    assert_rejected(&sack, &["string \"yes\"", "expected true or false"]);
    let delay = run_text(
        &format!("{GOOD}\n[transport]\nkind = \"tcp\"\ndelayed_ack = \"200\"\n"),
        &[],
    );
    assert_rejected(
        &delay,
        &[
            "transport.delayed_ack",
            "\"200\"",
            "expected a number with a unit",
        ],
    );
}

/// Runs the good scenario from `cwd` with `--out out`; returns (exit code, stderr).
fn run_good_from(cwd: &Path, out: &str) -> (i32, String) {
    let scenario = tempfile::tempdir().unwrap();
    let file = scenario.path().join("scenario.toml");
    std::fs::write(&file, GOOD).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["run", "--quiet"])
        .arg(&file)
        .args(["--out", out])
        .current_dir(cwd)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The folder's entries, sorted (names only).
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn output_folder_that_is_the_working_directory_or_holds_it_is_refused() {
    // The data-loss report: `--out .` in a folder holding run.parquet and notes.txt deleted
    // both. The working directory, its parents and any spelling of them are refused up front.
    let root = tempfile::tempdir().unwrap();
    let work = root.path().join("work");
    std::fs::create_dir_all(work.join("sub")).unwrap();
    std::fs::write(work.join("run.parquet"), "not really parquet").unwrap();
    std::fs::write(work.join("notes.txt"), "keep me").unwrap();
    let absolute = work.to_string_lossy().into_owned();
    for out in [".", "./", "..", "sub/..", "sub/../..", absolute.as_str()] {
        let (code, stderr) = run_good_from(&work, out);
        assert_eq!(code, 2, "--out {out}: {stderr}");
        assert!(
            stderr.contains("working directory"),
            "--out {out}: {stderr}"
        );
        assert_eq!(
            entries(&work),
            ["notes.txt", "run.parquet", "sub"],
            "--out {out}"
        );
        assert_eq!(
            entries(root.path()),
            ["work"],
            "--out {out}: nothing staged"
        );
    }
    assert_eq!(
        std::fs::read_to_string(work.join("notes.txt")).unwrap(),
        "keep me"
    );
}

#[test]
fn run_folder_with_a_foreign_file_is_not_replaced() {
    // run.parquet alone does not make a folder netstep's: anything netstep does not write
    // (here notes.txt, or a sub-folder) keeps the folder from being replaced.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("old-run");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("run.parquet"), "x").unwrap();
    std::fs::write(out.join("notes.txt"), "keep me").unwrap();
    let stderr = run_good_into(dir.path(), &out);
    assert!(
        stderr.contains("notes.txt") && stderr.contains("did not write"),
        "{stderr}"
    );
    assert_eq!(entries(&out), ["notes.txt", "run.parquet"]);
    std::fs::remove_file(out.join("notes.txt")).unwrap();
    std::fs::create_dir(out.join("plots")).unwrap();
    let stderr = run_good_into(dir.path(), &out);
    assert!(stderr.contains("plots"), "{stderr}");
    assert_eq!(entries(&out), ["plots", "run.parquet"]);
}

#[test]
fn output_symlink_that_does_not_resolve_is_refused_before_running() {
    let dir = tempfile::tempdir().unwrap();
    let dangling = dir.path().join("dangling");
    std::os::unix::fs::symlink(dir.path().join("nowhere"), &dangling).unwrap();
    let a = dir.path().join("loop-a");
    let b = dir.path().join("loop-b");
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    for out in [&dangling, &a] {
        // A long scenario: refusing it up front is what keeps the test short.
        let scenario = dir.path().join("scenario.toml");
        std::fs::write(
            &scenario,
            GOOD.replace(
                "flows = [{ src = \"h0\", dst = \"h5\", size = \"10KB\" }]",
                "flows = [{ src = \"h0\", dst = \"h5\", size = \"10GB\" }]",
            ),
        )
        .unwrap();
        let started = std::time::Instant::now();
        let output = Command::new(env!("CARGO_BIN_EXE_netstep"))
            .args(["run", "--quiet"])
            .arg(&scenario)
            .arg("--out")
            .arg(out)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{stderr}");
        assert!(stderr.contains("symbolic link"), "{stderr}");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "refused before simulating a 10 GB flow"
        );
    }
    assert_eq!(
        entries(dir.path()),
        ["dangling", "loop-a", "loop-b", "scenario.toml"]
    );
}

#[test]
fn a_full_disk_midway_leaves_nothing_at_the_final_path() {
    // A file-size limit of 4 KiB makes the Parquet writers fail partway (EFBIG; SIGXFSZ is
    // ignored so the write returns an error instead of killing the process), as a full disk
    // would. links.parquet of a FatTree-4 is larger than that.
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.toml");
    std::fs::write(&scenario, GOOD).unwrap();
    let out = dir.path().join("run");
    let script = format!(
        "trap '' XFSZ; ulimit -f 4; exec '{}' run --quiet '{}' --out '{}'",
        env!("CARGO_BIN_EXE_netstep"),
        scenario.display(),
        out.display()
    );
    let output = Command::new("bash").args(["-c", &script]).output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("writing the run folder") && stderr.contains("too large"),
        "{stderr}"
    );
    assert_eq!(entries(dir.path()), ["scenario.toml"], "no run, no staging");
}

/// Asserts a refusal that came quickly (limits are checked before anything large is built).
fn assert_refused_fast(text: &str, extra: &[&str], needles: &[&str]) {
    let started = std::time::Instant::now();
    let outcome = run_text(text, extra);
    assert_rejected(&outcome, needles);
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "refused in {:?}",
        started.elapsed()
    );
}

const SMALL_TRAFFIC: &str = r#"
[[traffic]]
kind = "random_pairs"
count = 1
size = "1KB"
"#;

#[test]
fn huge_topologies_are_refused_before_they_are_built() {
    let leaf_spine = format!(
        "[topology]\nkind = \"leaf_spine\"\nleaves = 100000\nspines = 100000\nhosts_per_leaf = 1\n{SMALL_TRAFFIC}"
    );
    assert_refused_fast(
        &leaf_spine,
        &[],
        &["topology.leaves", "egress ports", "limit"],
    );
    let dumbbell =
        format!("[topology]\nkind = \"dumbbell\"\nleft = 4294967295\nright = 1\n{SMALL_TRAFFIC}");
    assert_refused_fast(&dumbbell, &[], &["topology.left", "4294967298 nodes"]);
    let fat_tree = format!(
        "[topology]\nkind = \"fat_tree\"\nk = 4\nhosts_per_edge = 1000000\n{SMALL_TRAFFIC}"
    );
    assert_refused_fast(
        &fat_tree,
        &[],
        &["topology.hosts_per_edge", "1000002 links"],
    );
    // A FatTree-256 fits the limits but not a 100 MB budget.
    assert_refused_fast(
        &GOOD.replace("k = 4", "k = 256"),
        &["--max-memory", "100MB"],
        &["topology.k", "4276224 nodes", "--max-memory"],
    );
}

#[test]
fn huge_traffic_is_refused_before_it_is_generated() {
    let topology = "[topology]\nkind = \"fat_tree\"\nk = 4\n";
    let pairs = format!(
        "{topology}[[traffic]]\nkind = \"random_pairs\"\ncount = 4294967295\nsize = \"1KB\"\n"
    );
    assert_refused_fast(&pairs, &[], &["traffic[0].count", "4294967295 flows"]);
    let open_loop = format!(
        "{topology}[transport]\nkind = \"open_loop\"\nrate = \"1Gbps\"\n[[traffic]]\nkind = \"flows\"\nflows = [{{ src = \"h0\", dst = \"h5\", packets = 4294967295 }}]\n"
    );
    assert_refused_fast(&open_loop, &[], &["packets", "31-bit"]);
    // A million flows fit the limits but not a 200 MB budget.
    let million = pairs.replace("4294967295", "1000000");
    assert_refused_fast(
        &million,
        &["--max-memory", "200MB"],
        &["traffic[0].count", "--max-memory"],
    );
    // Poisson at Tb/s for hours: the expected flow count is checked before drawing.
    let hours = format!(
        "[topology]\nkind = \"fat_tree\"\nk = 16\n[topology.links]\nrate = \"1Tbps\"\n[[traffic]]\nkind = \"poisson\"\nload = 0.9\ncdf = \"{}\"\nduration = \"10800s\"\n",
        crate::common::repo()
            .join("datasets/websearch.toml")
            .display()
    );
    assert_refused_fast(&hours, &[], &["traffic[0].duration", "flows", "limit"]);
}

#[test]
fn a_size_cdf_with_all_mass_at_zero_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cdf = dir.path().join("zero.toml");
    std::fs::write(&cdf, "name = \"zero\"\nsource = \"a test\"\ninterpolation = \"step\"\npoints = [[0, 1.0], [10, 1.0]]\n").unwrap();
    let text = format!(
        "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"poisson\"\nload = 0.5\ncdf = \"{}\"\nduration = \"1ms\"\n",
        cdf.display()
    );
    assert_refused_fast(&text, &[], &["traffic[0].cdf", "mean flow size is 0"]);
}

#[test]
fn times_past_the_limits_are_refused() {
    let late = GOOD.replace("size = \"10KB\"", "size = \"10KB\", start = \"1152921s\"");
    assert_refused_fast(&late, &[], &["traffic", "starts at", "limit"]);
    let window = GOOD.replace(
        "[topology]",
        "[simulation]\nwindow = \"18446744073709551615ps\"\n[topology]",
    );
    assert_refused_fast(&window, &[], &["simulation.window", "limit"]);
}

#[test]
fn thread_counts_out_of_range_are_refused() {
    let o = run_text(GOOD, &["--threads", "100000"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("--threads") && o.stderr.contains("1024"),
        "{}",
        o.stderr
    );
    assert!(!o.out.exists());
    let in_file = GOOD.replace("[topology]", "[simulation]\nthreads = 100000\n[topology]");
    assert_refused_fast(&in_file, &[], &["simulation.threads", "1024"]);
}

#[test]
fn a_set_key_thousands_of_segments_deep_is_refused() {
    let key = vec!["a"; 20_000].join(".");
    assert_refused_fast(
        GOOD,
        &["--set", &format!("{key}=1")],
        &["--set", "20000 segments"],
    );
}

#[test]
fn trace_settings_are_checked_even_with_their_table_off() {
    let with = |trace: &str| format!("{GOOD}[trace]\n{trace}\n");
    assert_refused_fast(
        &with("nodes = [\"nope\"]"),
        &[],
        &["trace.nodes[0]", "unknown node"],
    );
    assert_refused_fast(
        &with("sample_one_in = 0"),
        &[],
        &["trace.sample_one_in", "at least 1"],
    );
    assert_refused_fast(
        &with("flows = [99]"),
        &[],
        &["trace.flows[0]", "does not exist"],
    );
    assert_refused_fast(
        &with("sample_interval = \"0s\""),
        &[],
        &["trace.sample_interval"],
    );
}

#[test]
fn type_errors_point_at_the_key() {
    let o = run_text(&GOOD.replace("k = 4", "k = \"4\""), &[]);
    assert_rejected(
        &o,
        &[
            "scenario.toml:4:1: topology.k:",
            "expected an integer from 0 to 4294967295",
        ],
    );
    let pairs = "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"random_pairs\"\nsize = \"1KB\"\ncount = \"3\"\n";
    assert_rejected(
        &run_text(pairs, &[]),
        &["scenario.toml:7:1: traffic[0].count:"],
    );
    let unknown = GOOD.replace("size = \"10KB\" }", "size = \"10KB\", packts = 3 }");
    assert_rejected(
        &run_text(&unknown, &[]),
        &[
            "scenario.toml:11:51: traffic[0].flows[0].packts:",
            "unknown field",
        ],
    );
    let variant = GOOD.replace("kind = \"flows\"", "kind = \"flowz\"");
    assert_rejected(
        &run_text(&variant, &[]),
        &["scenario.toml:10:8:", "unknown variant `flowz`"],
    );
}

#[test]
fn a_missing_route_names_the_hosts() {
    let text = r#"
[topology]
kind = "custom"
hosts = ["alice", "bob"]
switches = ["s1", "s2"]
links = [{ a = "alice", b = "s1" }, { a = "bob", b = "s2" }]
[[traffic]]
kind = "flows"
flows = [{ src = "alice", dst = "bob", size = "1KB" }]
"#;
    assert_rejected(&run_text(text, &[]), &["\"alice\"", "\"bob\"", "no route"]);
}

#[test]
fn bad_memory_budgets_and_gates_are_refused() {
    for bad in ["0B", "lots", "-1GB"] {
        let o = run_text(GOOD, &[&format!("--max-memory={bad}")]);
        assert_eq!(o.code, 2, "{bad}: {}", o.stderr);
        assert!(o.stderr.contains("--max-memory"), "{}", o.stderr);
    }
    for bad in ["nan", "inf", "-1"] {
        let output = Command::new(env!("CARGO_BIN_EXE_netstep"))
            .args(["compare", "a", "b", &format!("--max-nw1={bad}")])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--max-nw1"), "{stderr}");
    }
}

#[test]
fn a_run_that_outgrows_its_memory_budget_stops_cleanly() {
    // An 8 M-packet open-loop burst into a 1 Mb/s link with 100 GB buffers: the estimate
    // (entities only) fits 300 MB, the queued packets do not. The guard stops the run with
    // exit 2 and nothing at the output path.
    let text = r#"
[topology]
kind = "dumbbell"
left = 1
right = 1
[topology.host_links]
rate = "100Gbps"
buffer = "100GB"
[topology.fabric_links]
rate = "1Mbps"
buffer = "100GB"
[nic]
buffer = "100GB"
per_flow = "100GB"
[transport]
kind = "open_loop"
packet_size = "100B"
rate = "100Gbps"
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", packets = 8000000 }]
"#;
    let o = run_text(text, &["--max-memory", "300MB"]);
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(
        o.stderr.contains("more than its budget") && o.stderr.contains("--max-memory"),
        "{}",
        o.stderr
    );
    assert!(!o.out.exists());
    let leftovers: Vec<_> = std::fs::read_dir(o.out.parent().unwrap())
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("partial"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// TCP's timers have an order: `0 < rto_min <= rto_initial <= rto_max`. One case per rule.
#[test]
fn tcp_timer_settings_that_contradict_each_other() {
    let tcp = |settings: &str| format!("{GOOD}[transport]\nkind = \"tcp\"\n{settings}\n");
    for (settings, needles) in [
        (
            "rto_initial = \"0s\"\nrto_min = \"0s\"",
            &["transport.rto_min", "positive"][..],
        ),
        (
            "rto_initial = \"0s\"",
            &["transport.rto_initial", "between rto_min (1ms)", "got 0ps"][..],
        ),
        (
            "rto_min = \"2s\"\nrto_max = \"1s\"",
            &["transport.rto_min", "at most rto_max (1s)", "got 2s"][..],
        ),
        (
            "rto_max = \"500ms\"",
            &["transport.rto_initial", "rto_max (500ms)", "got 1s"][..],
        ),
        (
            "rto_min = \"2s\"",
            &["transport.rto_initial", "rto_min (2s)", "got 1s"][..],
        ),
    ] {
        assert_rejected(&run_text(&tcp(settings), &[]), needles);
    }
    // The bounds themselves are allowed.
    let ok = run_text(
        &tcp("rto_min = \"1ms\"\nrto_initial = \"1ms\"\nrto_max = \"1ms\""),
        &[],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

/// Where serde rejects a value the error names the whole field path: the table (an array of
/// tables by index) and the key, with line and column.
#[test]
fn serde_errors_name_the_field_path() {
    let o = run_text(
        &GOOD.replace(
            "[[traffic]]\nkind = \"flows\"",
            "[[traffic]]\nkind = \"flows\"\nlod = 3",
        ),
        &[],
    );
    assert_rejected(
        &o,
        &["scenario.toml:", "traffic[0].lod", "unknown field `lod`"],
    );
    let o = run_text(
        &format!("{GOOD}[routing]\nmode = \"flowlet\"\nflowlet_gap = 50\n"),
        &[],
    );
    assert_rejected(
        &o,
        &[
            "routing.flowlet_gap",
            "a quantity with its unit",
            "\"50us\"",
            "got 50",
        ],
    );
    // A table given as a string: what is expected, not a Rust type name.
    let o = run_text(
        &GOOD.replace("delay = \"1us\"", "delay = \"1us\"\nscheduler = \"drr\""),
        &[],
    );
    assert_rejected(
        &o,
        &[
            "topology.links.scheduler",
            "expected a table such as { kind = \"drr\"",
        ],
    );
    // An unknown variant inside a table the serializer writes as its own header.
    let o = run_text(
        GOOD,
        &["--set", "topology.links.scheduler={ kind = \"pifo\" }"],
    );
    assert_rejected(
        &o,
        &["topology.links.scheduler.kind", "unknown variant `pifo`"],
    );
    // A negative class, and an out-of-range number from --set, named with the field.
    let o = run_text(
        &format!("{GOOD}[switch]\npfc = {{ classes = [-3], xoff = \"40KB\", xon = \"20KB\" }}\n"),
        &[],
    );
    assert_rejected(&o, &["switch.pfc.classes", "-3"]);
    // An unknown key in a custom link's per-direction table, named down to it.
    let custom = "[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nswitches = [\"s\"]\nlinks = [{ a = \"a\", b = \"s\", a_to_b = { rate = \"1Gbps\", bogus = 1 } }, { a = \"s\", b = \"b\" }]\n";
    assert_rejected(
        &run_text(custom, &[]),
        &["topology.links[0].a_to_b.bogus", "unknown field `bogus`"],
    );
    let o = run_text(GOOD, &["--set", "trace.flows=[18446744073709551615]"]);
    assert_rejected(&o, &["--set", "trace.flows", "too large"]);
}

/// An unknown key is named by its full path with the right array indices, whatever the
/// layout: an inline table of an array element over several lines, an array of tables with
/// a subtable (as `--set` writes the document), an inline table of an array of tables.
#[test]
fn unknown_keys_are_named_by_their_full_path() {
    let head = "[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\"]\nswitches = [\"s\"]\n";
    let multi_line = format!(
        "{head}links = [\n  {{ a = \"a\", b = \"s\", a_to_b = {{ rate = \"1Gbps\" }} }},\n  {{ a = \"b\", b = \"s\", a_to_b = {{ rate = \"1Gbps\", bogus = 3 }} }},\n]\n"
    );
    assert_rejected(
        &run_text(&multi_line, &[]),
        &[
            "scenario.toml:7:",
            "topology.links[1].a_to_b.bogus",
            "unknown field `bogus`",
        ],
    );
    let headers = format!(
        "{head}[[topology.links]]\na = \"a\"\nb = \"s\"\n[[topology.links]]\na = \"b\"\nb = \"s\"\n[topology.links.a_to_b]\nrate = \"1Gbps\"\nbogus = 1\n"
    );
    assert_rejected(
        &run_text(&headers, &[]),
        &[
            "scenario.toml:13:",
            "topology.links[1].a_to_b.bogus",
            "unknown field `bogus`",
        ],
    );
    let inline = format!(
        "{head}[[topology.links]]\na = \"a\"\nb = \"s\"\n[[topology.links]]\na = \"b\"\nb = \"s\"\na_to_b = {{ rate = \"1Gbps\", bogus = 1 }}\n"
    );
    assert_rejected(
        &run_text(&inline, &[]),
        &[
            "scenario.toml:11:",
            "topology.links[1].a_to_b.bogus",
            "unknown field `bogus`",
        ],
    );
}

/// Zero where zero makes no sense in a traffic block: a Poisson block over no time, a
/// random-pairs block of no flows.
#[test]
fn traffic_blocks_that_make_nothing_are_refused() {
    let o = run_text(&poisson("cdf.toml").replace("\"100us\"", "\"0s\""), &[]);
    assert_rejected(&o, &["traffic[0].duration", "must be positive"]);
    let pairs = "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"random_pairs\"\nsize = \"1KB\"\ncount = 0\n";
    assert_rejected(&run_text(pairs, &[]), &["traffic[0].count", "at least 1"]);
}

/// Incast and permutation blocks name what is wrong.
#[test]
fn bad_incast_and_permutation_blocks_are_refused() {
    let block = |body: &str| {
        GOOD.replace(
            "kind = \"flows\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"10KB\" }]",
            body,
        )
    };
    for (body, needles) in [
        (
            "kind = \"incast\"\nreceiver = \"h0\"\nsenders = 16\nsize = \"1KB\"",
            &["traffic[0].senders", "between 1 and 15"][..],
        ),
        (
            "kind = \"incast\"\nreceiver = \"edge0_0\"\nsenders = 2\nsize = \"1KB\"",
            &["traffic[0].receiver", "not a host"][..],
        ),
        (
            "kind = \"incast\"\nreceiver = \"nobody\"\nsenders = 2\nsize = \"1KB\"",
            &["traffic[0].receiver", "no node named"][..],
        ),
        (
            "kind = \"incast\"\nsenders = 2\nrounds = 3\nsize = \"1KB\"",
            &["traffic[0].interval", "needs an interval"][..],
        ),
        (
            "kind = \"permutation\"\nsize = \"1KB\"\nacross_bisection = \"yes\"",
            &["traffic[0].across_bisection", "true or false"][..],
        ),
    ] {
        assert_rejected(&run_text(&block(body), &[]), needles);
    }
}

/// A traced run expected to write more `packet_hops` rows than the limit is refused before it
/// starts, naming the setting that shrinks it.
#[test]
fn too_many_packet_hop_rows_are_refused_before_the_run() {
    let many = GOOD.replace(
        "kind = \"flows\"\nflows = [{ src = \"h0\", dst = \"h5\", size = \"10KB\" }]",
        "kind = \"random_pairs\"\ncount = 64\nsize = \"1500GB\"",
    );
    let o = run_text(&many, &["--trace", "packet_hops"]);
    assert_rejected(&o, &["trace.sample_one_in", "packet_hops rows", "limit"]);
}

/// Every pair of settings that has an order (min/max, low/high thresholds, start/end, a rate
/// floor under the line rate) and every setting where zero makes no sense is refused, naming
/// the field: one case per rule (the audit of issue 24, item 4). Zero is kept where it means
/// something: a 0 B link buffer (a bufferless port: a packet passes only an idle transmitter),
/// step marking at 0 B (mark everything), `max_retries = 0` (give up at the first timeout),
/// `delayed_ack = "0s"` (no delayed ACK), `abc_limit = 0` (no ABC limit), `loss = 1`.
#[test]
fn ordered_and_zero_settings_are_refused_one_rule_each() {
    let link = |setting: &str| {
        GOOD.replace(
            "buffer = \"100KB\"",
            &format!("buffer = \"100KB\"\n{setting}"),
        )
    };
    let append = |section: &str| format!("{GOOD}{section}\n");
    let rdma = |settings: &str| append(&format!("[transport]\nkind = \"rdma\"\n{settings}"));
    let tcp = |settings: &str| append(&format!("[transport]\nkind = \"tcp\"\n{settings}"));
    let cases: Vec<(String, &[&str])> = vec![
        (
            link("aqm = { kind = \"red\", min = \"60KB\", max = \"20KB\", max_p = 0.1 }"),
            &["topology.links.aqm.max", "larger than min"],
        ),
        (
            link("aqm = { kind = \"red\", min = \"20KB\", max = \"60KB\", max_p = 0 }"),
            &["topology.links.aqm.max_p", "(0, 1]"],
        ),
        (
            link(
                "aqm = { kind = \"red\", min = \"20KB\", max = \"60KB\", max_p = 0.1, weight = 0 }",
            ),
            &["topology.links.aqm.weight"],
        ),
        (
            link(
                "policer = { kind = \"trtcm\", cir = \"2Gbps\", cbs = \"15KB\", pir = \"1Gbps\", pbs = \"15KB\" }",
            ),
            &["topology.links.policer.pir", "at least the committed rate"],
        ),
        (
            link(
                "policer = { kind = \"trtcm\", cir = \"1Gbps\", cbs = \"0B\", pir = \"2Gbps\", pbs = \"15KB\" }",
            ),
            &["topology.links.policer.cbs", "positive"],
        ),
        (
            link("shaper = { rate = \"0bps\", burst = \"15KB\" }"),
            &["topology.links.shaper.rate", "positive"],
        ),
        (
            link("shaper = { rate = \"1Gbps\", burst = \"0B\" }"),
            &["topology.links.shaper.burst", "positive"],
        ),
        (
            link("scheduler = { kind = \"drr\", quantum = \"0B\", weights = [1, 1] }"),
            &["topology.links.scheduler.quantum"],
        ),
        (
            link("scheduler = { kind = \"wfq\", weights = [0, 1] }"),
            &["topology.links.scheduler.weights[0]", "at least 1"],
        ),
        (
            GOOD.replace("rate = \"10Gbps\"", "rate = \"0bps\""),
            &["topology.links.rate", "zero"],
        ),
        (
            append("[switch.pfc]\nclasses = [3]\nxoff = \"10KB\"\nxon = \"20KB\""),
            &["switch.pfc.xon", "xon <= xoff"],
        ),
        (
            append("[switch.pfc]\nclasses = [3]\nxoff = \"0B\"\nxon = \"0B\""),
            &["switch.pfc", "0 < xoff"],
        ),
        (
            append("[switch]\nshared_buffer = \"0B\""),
            &["switch.shared_buffer", "positive"],
        ),
        (
            append("[switch]\nshared_buffer = \"10MB\"\nalpha = 0"),
            &["switch.alpha", "positive"],
        ),
        (
            append("[nic]\nbuffer = \"0B\""),
            &["nic.buffer", "positive"],
        ),
        (
            append("[routing]\nmode = \"flowlet\"\nflowlet_gap = \"0s\""),
            &["routing.flowlet_gap", "positive"],
        ),
        (
            append("[[failures]]\nlink = [\"edge0_0\", \"agg0_0\"]\ndown = \"2ms\"\nup = \"1ms\""),
            &["failures[0].up", "after down"],
        ),
        (
            append("[trace]\nfrom = \"2ms\"\nuntil = \"1ms\""),
            &["trace.until", "later than trace.from"],
        ),
        (
            append("[trace]\ntables = [\"queue_samples\"]\nsample_interval = \"0s\""),
            &["trace.sample_interval", "positive"],
        ),
        (
            append("[trace]\ntables = [\"packet_hops\"]\nsample_one_in = 0"),
            &["trace.sample_one_in", "at least 1"],
        ),
        (
            append("[simulation]\nduration = \"0s\""),
            &["simulation.duration", "positive"],
        ),
        (tcp("rto_max = \"0s\""), &["transport.rto_max", "positive"]),
        (
            tcp("initial_cwnd = 0"),
            &["transport.initial_cwnd", "at least 1"],
        ),
        (tcp("mss = \"0B\""), &["transport.mss"]),
        (
            tcp("cc = \"dctcp\"\ndctcp_g = 0"),
            &["transport.dctcp_g", "(0, 1]"],
        ),
        (
            append("[transport]\nkind = \"open_loop\"\nrate = \"1Gbps\"\npacket_size = \"0B\""),
            &["transport.packet_size", "positive"],
        ),
        (
            append("[transport]\nkind = \"open_loop\"\nrate = \"0bps\""),
            &["transport.rate", "zero"],
        ),
        (
            rdma("cc = \"timely\"\nt_low = \"100us\"\nt_high = \"100us\""),
            &["transport.t_low", "below t_high"],
        ),
        (rdma("min_rate = \"0bps\""), &["transport.min_rate", "zero"]),
        (
            rdma("min_rate = \"20Gbps\""),
            &["transport.min_rate", "above the line rate"],
        ),
        (rdma("g = 0"), &["transport.g", "(0, 1]"]),
        (rdma("rate_ai = \"0bps\""), &["transport.rate_ai", "zero"]),
        (
            rdma("alpha_interval = \"0s\""),
            &["transport.alpha_interval", "positive"],
        ),
        (rdma("rto = \"0s\""), &["transport.rto", "positive"]),
        (
            rdma("ack_every = 0"),
            &["transport.ack_every", "at least 1"],
        ),
        (
            rdma("cc = \"timely\"\nmin_rtt = \"0s\""),
            &["transport.min_rtt", "positive"],
        ),
        (rdma("cc = \"hpcc\"\neta = 0"), &["transport.eta", "(0, 1]"]),
        (
            rdma("cc = \"hpcc\"\nbase_rtt = \"0s\""),
            &["transport.base_rtt", "positive"],
        ),
        (
            append(
                "[[traffic]]\nkind = \"poisson\"\nload = 0.1\ncdf = \"websearch.toml\"\nduration = \"1ms\"\nmax_flows = 0",
            ),
            &["traffic[1].max_flows", "at least 1"],
        ),
        (
            append(
                "[[traffic]]\nkind = \"poisson\"\nload = 0\ncdf = \"websearch.toml\"\nduration = \"1ms\"",
            ),
            &["traffic[1].load"],
        ),
        (
            append(
                "[[traffic]]\nkind = \"incast\"\nsenders = 2\nsize = \"1KB\"\nrounds = 2\ninterval = \"0s\"",
            ),
            &["traffic[1].interval", "positive"],
        ),
        (
            append("[[traffic]]\nkind = \"random_pairs\"\ncount = 0\nsize = \"1KB\""),
            &["traffic[1].count", "at least 1"],
        ),
    ];
    for (text, needles) in &cases {
        let text = text.replace(
            "websearch.toml",
            &crate::common::repo()
                .join("datasets/websearch.toml")
                .display()
                .to_string(),
        );
        assert_rejected(&run_text(&text, &[]), needles);
    }
    // The meaningful zeros run.
    for text in [
        GOOD.replace("buffer = \"100KB\"", "buffer = \"0B\""),
        link("aqm = { kind = \"step\", k = \"0B\" }"),
        tcp("max_retries = 0\ndelayed_ack = \"0s\"\nabc_limit = 0"),
        GOOD.replace("buffer = \"100KB\"", "buffer = \"100KB\"\nloss = 1.0")
            .replace(
                "[[traffic]]",
                "[simulation]\nduration = \"1ms\"\n[[traffic]]",
            ),
    ] {
        let o = run_text(&text, &[]);
        assert_eq!(o.code, 0, "{text}: {}", o.stderr);
    }
}

#[test]
fn a_host_without_a_link_is_refused() {
    // Hosts may have several links now; none is still an error, naming the host.
    let text = r#"
[topology]
kind = "custom"
hosts = ["a", "b", "lonely"]
switches = ["s"]
links = [{ a = "a", b = "s" }, { a = "b", b = "s" }]
[[traffic]]
kind = "flows"
flows = [{ src = "a", dst = "b", size = "10KB" }]
"#;
    let o = run_text(text, &[]);
    assert_rejected(&o, &["topology.links", "\"lonely\" has no link"]);
}

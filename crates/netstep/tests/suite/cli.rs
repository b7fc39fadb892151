//! The command line as a user meets it.

use crate::common::{netstep, run_ok};

#[test]
fn run_without_arguments_runs_the_quickstart() {
    let dir = tempfile::tempdir().unwrap();
    let output = netstep()
        .arg("run")
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(stdout.contains("scenario quickstart"), "{stdout}");
    assert!(stdout.contains("flows done"), "{stdout}");
    assert!(stdout.contains("packet-hops"), "{stdout}");
    assert!(dir.path().join("out/quickstart/flows.parquet").exists());
}

#[test]
fn set_overrides_reach_the_simulation() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = crate::common::repo().join("scenarios/days-baseline/fattree-k4-f8.toml");
    let output = run_ok(
        netstep()
            .arg("run")
            .arg(&scenario)
            .args([
                "--set",
                "topology.k=8",
                "--set",
                "simulation.seed=3",
                "--set",
                "traffic.0.packets=5",
                "--out",
            ])
            .arg(dir.path().join("r")),
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("seed 3"), "{stdout}");
    // 5 packets x 8 flows, each crossing 1 to 6 egress ports.
    let hops: u64 = stdout
        .lines()
        .find(|l| l.starts_with("packet-hops"))
        .unwrap()
        .split_whitespace()
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!((40..=240).contains(&hops), "{stdout}");
}

#[test]
fn validate_checks_without_running() {
    let scenario = crate::common::repo().join("scenarios/scale/fattree-k128-f128.toml");
    let output = netstep().arg("validate").arg(&scenario).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        stdout.contains("ok") && stdout.contains("128 flows") && stdout.contains("544768 nodes"),
        "{stdout}"
    );
}

#[test]
fn help_shows_examples() {
    let output = netstep().args(["run", "--help"]).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("Examples:") && stdout.contains("--set topology.k=8"),
        "{stdout}"
    );
}

#[test]
fn thread_count_does_not_change_the_tables() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = crate::common::repo().join("scenarios/quickstart.toml");
    let names = [
        "flows.parquet",
        "links.parquet",
        "packet_hops.parquet",
        "queue_samples.parquet",
        "cc_samples.parquet",
    ];
    let mut tables = Vec::new();
    for threads in ["1", "2"] {
        let out = dir.path().join(format!("t{threads}"));
        let status = netstep()
            .args([
                "run",
                "--quiet",
                "--threads",
                threads,
                "--set",
                "traffic.0.duration=\"2ms\"",
            ])
            .args([
                "--trace",
                "packet_hops,queue_samples,cc_samples",
                "--sample-interval",
                "20us",
            ])
            .arg(&scenario)
            .arg("--out")
            .arg(&out)
            .status()
            .unwrap();
        assert!(status.success());
        tables.push(names.map(|name| std::fs::read(out.join(name)).unwrap()));
    }
    for (i, name) in names.iter().enumerate() {
        assert!(
            tables[0][i] == tables[1][i],
            "{name} differs between 1 and 2 threads"
        );
    }
}

#[test]
fn a_second_run_replaces_the_first_also_through_a_symlink() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = crate::common::repo().join("scenarios/days-baseline/fattree-k4-f8.toml");
    let run = |out: &std::path::Path, seed: &str| {
        let output = netstep()
            .arg("run")
            .arg(&scenario)
            .args([
                "--quiet",
                "--set",
                &format!("simulation.seed={seed}"),
                "--out",
            ])
            .arg(out)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    };
    let target = dir.path().join("runs/a");
    let link = dir.path().join("latest");
    run(&target, "1");
    let first = std::fs::read(target.join("run.parquet")).unwrap();
    std::os::unix::fs::symlink(&target, &link).unwrap();
    // Through the link: the linked folder is replaced, the link stays a link.
    run(&link, "2");
    let second = std::fs::read(target.join("run.parquet")).unwrap();
    assert_ne!(first, second, "the seed is in run.parquet");
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let mut names: Vec<_> = std::fs::read_dir(dir.path().join("runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["a"], "no staging or previous-run folder left");
    // An empty folder is a fine target too.
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    run(&empty, "1");
    assert!(empty.join("flows.parquet").exists());
}

/// Runs `netstep validate` on `text` and returns (stdout, seconds).
fn validate_text(text: &str) -> (String, f64) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("big.toml");
    std::fs::write(&file, text).unwrap();
    let started = std::time::Instant::now();
    let output = netstep().arg("validate").arg(&file).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (
        String::from_utf8_lossy(&output.stdout).into_owned(),
        started.elapsed().as_secs_f64(),
    )
}

#[test]
fn setup_is_linear_for_poisson_traffic_and_large_custom_topologies() {
    // Both hung before: Poisson on FatTree-128 scanned every link per host (5 x 10^11 steps),
    // a custom topology's host-degree check was quadratic (4 x 10^10 steps here). Linear
    // setup takes about a second for each; the bound only catches a return to quadratic.
    let poisson = format!(
        "[topology]\nkind = \"fat_tree\"\nk = 128\n[[traffic]]\nkind = \"poisson\"\nload = 0.3\ncdf = \"{}\"\nduration = \"10us\"\n",
        crate::common::repo()
            .join("datasets/websearch.toml")
            .display()
    );
    let (stdout, seconds) = validate_text(&poisson);
    assert!(stdout.contains("544768 nodes"), "{stdout}");
    assert!(seconds < 60.0, "FatTree-128 Poisson setup took {seconds} s");
    let n = 200_000;
    let hosts: Vec<String> = (0..n).map(|i| format!("\"h{i}\"")).collect();
    let mut links: Vec<String> = (0..n)
        .map(|i| format!("{{ a = \"h{i}\", b = \"s{}\" }}", i % 20))
        .collect();
    links.extend((0..20).map(|j| format!("{{ a = \"s{j}\", b = \"core\" }}")));
    let switches: Vec<String> = (0..20)
        .map(|j| format!("\"s{j}\""))
        .chain(["\"core\"".to_string()])
        .collect();
    let custom = format!(
        "[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [{}]\nlinks = [{}]\n[[traffic]]\nkind = \"random_pairs\"\ncount = 10\nsize = \"10KB\"\n",
        hosts.join(", "),
        switches.join(", "),
        links.join(", ")
    );
    let (stdout, seconds) = validate_text(&custom);
    assert!(stdout.contains("200021 nodes"), "{stdout}");
    assert!(seconds < 60.0, "200,000-host custom setup took {seconds} s");
}

/// `netstep validate` counts what it does not need to build (issue 24, item 6): the largest
/// torus, FatTree and leaf-spine within the node limit are validated by arithmetic (nodes,
/// ports, flows, memory, lookahead) without building them; a small generated topology is
/// still built and checked whole. Time and memory: benches/validate-scale (RESULTS.md).
#[test]
fn validate_counts_large_generated_topologies_by_arithmetic() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "torus",
            "[topology]\nkind = \"torus\"\ndims = [256, 256, 128]\n[[traffic]]\nkind = \"random_pairs\"\ncount = 100\nsize = \"10KB\"\n",
            "16777216 nodes, 67108864 ports, 100 flows",
        ),
        (
            "fattree",
            "[topology]\nkind = \"fat_tree\"\nk = 256\n[[traffic]]\nkind = \"incast\"\nsenders = 1000\nsize = \"10KB\"\nrounds = 3\ninterval = \"1ms\"\n",
            "4276224 nodes, 25165824 ports, 3000 flows",
        ),
        (
            "leafspine",
            "[topology]\nkind = \"leaf_spine\"\nleaves = 16384\nspines = 64\nhosts_per_leaf = 256\n[[traffic]]\nkind = \"collective\"\ncollective = \"ring_all_reduce\"\nsize = \"1MB\"\nranks = [\"h0\", \"h1\", \"h2\", \"h3\"]\n",
            "4210752 nodes, 10485760 ports, 24 flows",
        ),
    ];
    for (name, text, counts) in cases {
        let file = dir.path().join(format!("{name}.toml"));
        std::fs::write(&file, text).unwrap();
        let out = netstep()
            .args(["validate"])
            .arg(&file)
            .args(["--max-memory", "1000GB"])
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{name}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains("ok by arithmetic") && stdout.contains(counts),
            "{name}: {stdout}"
        );
        assert!(stdout.contains("lookahead 1.003us"), "{name}: {stdout}");
    }
    // The arithmetic path refuses what the build would: no hosts under an edge switch.
    std::fs::write(
        dir.path().join("empty.toml"),
        "[topology]\nkind = \"fat_tree\"\nk = 128\nhosts_per_edge = 0\n[[traffic]]\nkind = \"random_pairs\"\ncount = 1\nsize = \"1KB\"\n",
    )
    .unwrap();
    let out = netstep()
        .args(["validate"])
        .arg(dir.path().join("empty.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("topology.hosts_per_edge"));
    // A small one is built: its packets are counted and its names checked.
    std::fs::write(
        dir.path().join("small.toml"),
        "[topology]\nkind = \"fat_tree\"\nk = 8\n[[traffic]]\nkind = \"flows\"\nflows = [{ src = \"h0\", dst = \"h999\", size = \"1KB\" }]\n",
    )
    .unwrap();
    let out = netstep()
        .args(["validate"])
        .arg(dir.path().join("small.toml"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown host \"h999\""));
}

/// With a handshake, `flows.parquet` says when it completed and `fct_ns` starts there; with
/// `fct_from = "connection_start"` it starts at the flow's start, one handshake longer.
#[test]
fn a_handshake_is_in_the_flows_table_and_the_fct_starts_after_it_unless_asked() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::UInt64Type;
    let scenario = crate::common::repo().join("scenarios/tcp/sack-lossy-dumbbell.toml");
    let dir = tempfile::tempdir().unwrap();
    let table = |name: &str, extra: &[&str]| {
        let out = dir.path().join(name);
        run_ok(
            netstep()
                .arg("run")
                .arg(&scenario)
                .args(["--set", "transport.handshake=true", "--quiet", "--out"])
                .arg(&out)
                .args(extra.iter().flat_map(|s| ["--set", s])),
        );
        let file = std::fs::File::open(out.join("flows.parquet")).unwrap();
        let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 64)
            .unwrap()
            .next()
            .unwrap()
            .unwrap();
        let col = |c: &str| -> Vec<u64> {
            let a = batch.column_by_name(c).unwrap();
            a.as_primitive::<UInt64Type>().values().to_vec()
        };
        (
            col("start_ns"),
            col("handshake_ns"),
            col("end_ns"),
            col("fct_ns"),
        )
    };
    let (start, handshake, end, fct) = table("first", &[]);
    let (start2, handshake2, end2, fct2) =
        table("start", &["transport.fct_from=\"connection_start\""]);
    assert_eq!((&start, &handshake, &end), (&start2, &handshake2, &end2));
    for i in 0..start.len() {
        // The SYN and SYN-ACK cross the 120 us round trip first.
        assert!(handshake[i] >= start[i] + 120_000, "flow {i}");
        assert_eq!(fct[i], end[i] - handshake[i], "flow {i}");
        assert_eq!(fct2[i], end[i] - start[i], "flow {i}");
    }
}

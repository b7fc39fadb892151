//! Stopped runs leave nothing behind: SIGINT and SIGTERM stop `netstep run` at its next
//! window with exit 130 / 143, one line, no output and no staging folder; a staging folder
//! whose process is gone is removed by the next run towards the same folder, and only such.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::repo;

/// The staging folders (`.NAME.partial-PID`) in `dir`.
fn staging(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".partial-"))
        .collect()
}

/// Starts a run of several seconds, waits until it is simulating (its staging folder exists,
/// then a little), sends `signal` and returns (exit code, stderr).
fn interrupt_a_run(signal: &str, dir: &Path) -> (Option<i32>, String) {
    let out = dir.join("run");
    let child = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args([
            "run",
            "scenarios/days-baseline/fattree-k32-f4096.toml",
            "--threads",
            "1",
        ])
        .arg("--out")
        .arg(&out)
        .arg("--quiet")
        .current_dir(repo())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while staging(dir).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    std::thread::sleep(Duration::from_millis(300));
    let sent = Command::new("kill")
        .args([&format!("-{signal}"), &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn sigint_and_sigterm_stop_a_run_and_leave_nothing() {
    for (signal, code) in [("INT", 130), ("TERM", 143)] {
        let dir = tempfile::tempdir().unwrap();
        let (status, stderr) = interrupt_a_run(signal, dir.path());
        assert_eq!(status, Some(code), "SIG{signal}: {stderr}");
        assert_eq!(stderr.trim_end().lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains(&format!("interrupted by SIG{signal}: nothing was written")),
            "{stderr}"
        );
        assert!(!dir.path().join("run").exists(), "no output");
        assert!(
            staging(dir.path()).is_empty(),
            "no staging folder: {:?}",
            staging(dir.path())
        );
    }
}

#[test]
fn a_stale_staging_folder_with_a_dead_pid_is_removed_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    // A pid above the kernel's limit (4194304) is never alive.
    let dead = dir.path().join(".run.partial-4194305");
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join("flows.parquet"), "half").unwrap();
    // Alive: this test process. Another folder's, and a look-alike that is a file: kept.
    let alive = dir
        .path()
        .join(format!(".run.partial-{}", std::process::id()));
    std::fs::create_dir(&alive).unwrap();
    let other = dir.path().join(".other.partial-4194305");
    std::fs::create_dir(&other).unwrap();
    let file = dir.path().join(".run.partial-4194306");
    std::fs::write(&file, "not a folder").unwrap();
    let done = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["run", "--quiet", "--out"])
        .arg(dir.path().join("run"))
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    assert!(!dead.exists(), "the dead run's staging folder is removed");
    assert!(alive.exists() && other.exists() && file.exists());
    assert!(dir.path().join("run").join("flows.parquet").exists());
}

/// A run whose output outgrows `--max-disk` (trace rows stream to disk while it runs) stops
/// with exit 2 and one line naming the budget and the settings that shrink the output, and
/// leaves nothing; a budget that is not a size is refused before the run.
#[test]
fn a_run_whose_output_outgrows_its_disk_budget_stops_and_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("run");
    let done = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args([
            "run",
            "--quiet",
            "--trace",
            "cc_samples",
            "--sample-interval",
            "1ns",
        ])
        .args(["--max-disk", "2MB", "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert_eq!(done.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.trim_end().lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("--max-disk") && stderr.contains("trace.sample_interval"),
        "{stderr}"
    );
    assert!(!out.exists());
    assert!(staging(dir.path()).is_empty());
    let bad = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["run", "--quiet", "--max-disk", "lots", "--out"])
        .arg(&out)
        .current_dir(repo())
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("--max-disk"));
    assert!(staging(dir.path()).is_empty());
}

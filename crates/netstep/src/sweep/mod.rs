//! `netstep sweep`: batch experiments that resume.
//!
//! A sweep file ([`plan`]) expands into points; each point is one `netstep run` of the base
//! scenario with its overrides, written to `DIR/<axis>=<value>/.../`. The local driver runs
//! the pending points as child processes (`netstep sweep run-point`), `--jobs` at a time, so a
//! point that fails or crashes is recorded and the others go on. Any scheduler can do the
//! same with `netstep sweep plan` (the points as JSON lines) and `run-point`: the Ray driver
//! in `netstep_analysis.sweep` and the Slurm array script of `--emit-slurm` do. State and the
//! manifest are described in [`state`].

pub mod plan;
mod random;
pub mod slurm;
pub mod state;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::{CliError, RunRequest};
use plan::{Plan, Point};
use state::{Record, Status, SweepDir};

/// Exit code of `netstep sweep` when some points failed (the others completed).
pub const EXIT_POINTS_FAILED: u8 = 4;

/// What `netstep sweep` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct SweepRequest {
    /// The sweep file.
    pub file: PathBuf,
    /// Sweep folder (default `out/<sweep name>`).
    pub out: Option<PathBuf>,
    /// Points run at once (default: cores / threads per run).
    pub jobs: Option<usize>,
    /// Worker threads of each run (default 1).
    pub threads_per_run: Option<usize>,
    /// `--max-memory` passed to every run.
    pub max_memory: Option<String>,
    /// Show a progress bar (on a terminal) and print the summary.
    pub progress: bool,
    /// Write a Slurm job-array script for the pending points instead of running them.
    pub emit_slurm: bool,
}

/// What a sweep did.
#[derive(Debug, Default)]
pub struct SweepReport {
    /// The sweep folder.
    pub root: PathBuf,
    /// Points in the sweep file.
    pub points: usize,
    /// Points already done before this invocation (skipped).
    pub skipped: usize,
    /// Points run by this invocation and done.
    pub ran: usize,
    /// Points whose run failed (recorded with their error).
    pub failed: usize,
    /// Lines for the user: changed and removed points, failures, where things are.
    pub notes: Vec<String>,
    /// The Slurm script written, with `--emit-slurm`.
    pub slurm_script: Option<PathBuf>,
}

fn bad(e: anyhow::Error) -> CliError {
    CliError::BadInput(e)
}

fn threads_of(threads: Option<usize>) -> Result<usize, CliError> {
    let threads = threads.unwrap_or(1);
    if !(1..=netstep_scenario::limits::MAX_THREADS).contains(&threads) {
        return Err(bad(anyhow!(
            "--threads-per-run: must be between 1 and {}, got {threads}",
            netstep_scenario::limits::MAX_THREADS
        )));
    }
    Ok(threads)
}

/// The sweep folder: `--out`, else `out/<sweep name>`.
pub fn out_dir(plan: &Plan, out: Option<&Path>) -> PathBuf {
    out.map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("out").join(&plan.name))
}

/// Loads a sweep file; errors are bad input.
pub fn load_plan(file: &Path) -> Result<Plan, CliError> {
    plan::load(file).map_err(bad)
}

/// Loads every point's scenario (no simulation) and refuses the sweep, naming the first
/// invalid point by its axis values and the field, before any point runs: a sweep is checked
/// whole (an unknown key in `[set]` or an axis, an invalid base scenario, a `scenario` that is
/// a sweep file).
pub fn validate_points(plan: &Plan, limits: &netstep_scenario::Limits) -> Result<(), CliError> {
    for point in &plan.points {
        if let Err(e) = netstep_scenario::load(&plan.scenario, &point.overrides, limits) {
            let at = if plan.axes.is_empty() {
                String::new()
            } else {
                format!(" point {}:", plan::describe(&plan.axes, &point.values))
            };
            return Err(bad(anyhow!("{}:{at} {e}", plan.file.display())));
        }
    }
    Ok(())
}

/// Records in the folder that the plan does not account for: (changed, removed). A changed
/// record sits at a point's folder with another id (that point's scenario changed); a removed
/// one at a folder no point uses any more.
fn stale_records(dir: &SweepDir, plan: &Plan) -> (Vec<Record>, Vec<Record>) {
    let ids: std::collections::HashMap<&str, &str> = plan
        .points
        .iter()
        .map(|p| (p.path.as_str(), p.id.as_str()))
        .collect();
    let (mut changed, mut removed) = (Vec::new(), Vec::new());
    for record in dir.records() {
        match ids.get(record.path.as_str()) {
            Some(id) if *id == record.id => {}
            Some(_) => changed.push(record),
            None => removed.push(record),
        }
    }
    (changed, removed)
}

/// `netstep sweep SWEEP.toml`: runs every pending point, resuming a previous invocation.
pub fn sweep(request: &SweepRequest) -> Result<SweepReport, CliError> {
    let plan = load_plan(&request.file)?;
    let threads = threads_of(request.threads_per_run)?;
    if let Some(0) = request.jobs {
        return Err(bad(anyhow!("--jobs: must be at least 1")));
    }
    let limits = crate::limits(request.max_memory.as_deref())?;
    validate_points(&plan, &limits)?;
    let root = out_dir(&plan, request.out.as_deref());
    let dir = SweepDir::open(&root).map_err(bad)?;
    let _driver = dir.lock_driver().map_err(bad)?;
    let mut report = SweepReport {
        root: dir.root.clone(),
        points: plan.points.len(),
        ..SweepReport::default()
    };
    let (changed, removed) = stale_records(&dir, &plan);
    if !changed.is_empty() {
        report.notes.push(format!(
            "{} point(s) changed since the last run (same axes, different scenario): run again",
            changed.len()
        ));
    }
    if !removed.is_empty() {
        let shown: Vec<&str> = removed.iter().take(5).map(|r| r.path.as_str()).collect();
        report.notes.push(format!(
            "{} point(s) are no longer in the sweep file; their folders are left in place and not in the manifest: {}{}",
            removed.len(),
            shown.join(", "),
            if removed.len() > 5 { ", ..." } else { "" }
        ));
    }
    let statuses = dir.write_manifest(&plan).map_err(CliError::Internal)?;
    let pending: Vec<&Point> = plan
        .points
        .iter()
        .zip(&statuses)
        .filter(|(_, s)| **s != Status::Done)
        .map(|(p, _)| p)
        .collect();
    report.skipped = plan.points.len() - pending.len();

    if request.emit_slurm {
        let script = slurm::write(&plan, &dir, &pending, threads, request.jobs)
            .map_err(CliError::Internal)?;
        report.slurm_script = script;
        return Ok(report);
    }

    // By default the runs never ask for more threads than there are cores; asked to, they
    // share cores (each run's waiting threads park, so none holds a core it does not use).
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = request
        .jobs
        .unwrap_or(cores / threads)
        .clamp(1, pending.len().max(1));
    if jobs * threads > cores {
        report.notes.push(format!(
            "{jobs} points at once x {threads} threads each on {cores} cores: the runs share \
             cores and each is slower than alone (--jobs {} keeps one thread per core)",
            (cores / threads).max(1)
        ));
    }
    let exe = std::env::current_exe()
        .context("finding the netstep binary")
        .map_err(CliError::Internal)?;
    let sweep_file = std::fs::canonicalize(&request.file)
        .with_context(|| format!("resolving {}", request.file.display()))
        .map_err(bad)?;
    let bar = progress_bar(request.progress, pending.len() as u64);
    let next = AtomicUsize::new(0);
    let outcome = Mutex::new((0usize, 0usize, Vec::<String>::new()));
    let last_manifest = Mutex::new(Instant::now());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(point) = pending.get(i) else { break };
                    let result = run_child(
                        &exe,
                        &sweep_file,
                        &dir,
                        point,
                        threads,
                        request.max_memory.as_deref(),
                    );
                    {
                        let mut o = outcome.lock().expect("not poisoned");
                        match result {
                            Ok(()) => o.0 += 1,
                            Err(message) => {
                                o.1 += 1;
                                o.2.push(format!("{}: {message}", point.path));
                            }
                        }
                    }
                    bar.inc(1);
                    let mut last = last_manifest.lock().expect("not poisoned");
                    if last.elapsed() > Duration::from_secs(1) {
                        // Best effort while running; the final write below reports errors.
                        let _ = dir.write_manifest(&plan);
                        *last = Instant::now();
                    }
                }
            });
        }
    });
    bar.finish_and_clear();
    dir.write_manifest(&plan).map_err(CliError::Internal)?;
    let (ran, failed, mut failures) = outcome.into_inner().expect("not poisoned");
    report.ran = ran;
    report.failed = failed;
    failures.sort();
    report
        .notes
        .extend(failures.into_iter().map(|f| format!("failed {f}")));
    Ok(report)
}

fn progress_bar(wanted: bool, len: u64) -> ProgressBar {
    use std::io::IsTerminal;
    if !wanted || !std::io::stderr().is_terminal() {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let bar = ProgressBar::new(len);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} points [{elapsed_precise}, ETA {eta}]")
            .expect("valid template"),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Runs one point in a child process; on failure, makes sure a failed record names it.
fn run_child(
    exe: &Path,
    sweep_file: &Path,
    dir: &SweepDir,
    point: &Point,
    threads: usize,
    max_memory: Option<&str>,
) -> Result<(), String> {
    let mut command = Command::new(exe);
    command
        .args(["sweep", "run-point"])
        .arg(sweep_file)
        .args(["--id", &point.id, "--out"])
        .arg(&dir.root)
        .args([
            "--threads",
            &threads.to_string(),
            "--no-manifest",
            "--quiet",
            "--exit-with-parent",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(memory) = max_memory {
        command.args(["--max-memory", memory]);
    }
    let started = Instant::now();
    let outcome = command.spawn().and_then(|mut child| {
        // Held open until the child exits: its end of the pipe closes only when this process
        // dies, which stops the child (see `exit_with_parent`).
        let _alive = child.stdin.take();
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        child.wait().map(|status| (status, stderr))
    });
    let message = match outcome {
        Ok((status, _)) if status.success() => return Ok(()),
        Ok((status, stderr)) => {
            let last = stderr
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .trim_start_matches("error: ")
                .to_string();
            match (status.code(), last.is_empty()) {
                (Some(code), false) => format!("{last} (exit {code})"),
                (Some(code), true) => format!("exit {code}"),
                (None, _) => format!("killed by a signal ({status})"),
            }
        }
        Err(e) => format!("cannot start {}: {e}", exe.display()),
    };
    // The child records its own errors; a crash or a kill leaves that to us.
    let recorded = matches!(dir.record(&point.path), Some(r) if r.id == point.id && r.status == Status::Failed);
    if !recorded {
        let _ = dir.write_record(&Record {
            id: point.id.clone(),
            path: point.path.clone(),
            status: Status::Failed,
            wall_s: Some(started.elapsed().as_secs_f64()),
            error: Some(message.clone()),
            netstep_version: env!("CARGO_PKG_VERSION").to_string(),
        });
    }
    Err(message)
}

/// Makes this process exit when its standard input reaches end of file: the local driver
/// keeps a pipe to each child open, so a driver killed with `kill -9` takes its runs with it
/// instead of leaving orphans that compete with the next invocation (which would still be
/// correct: the point lock serializes them). An interrupted run leaves only a staging folder,
/// which the next attempt at that point removes.
pub fn exit_with_parent() {
    std::thread::spawn(|| {
        let mut buffer = [0u8; 64];
        let mut stdin = std::io::stdin();
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) | Err(_) => std::process::exit(137),
                Ok(_) => {}
            }
        }
    });
}

/// What `run-point` did.
#[derive(Debug, PartialEq, Eq)]
pub enum PointOutcome {
    /// The point ran and is done.
    Ran,
    /// It was already done; nothing ran.
    AlreadyDone,
}

/// `netstep sweep run-point SWEEP.toml --id ID`: runs one point into its folder (waiting for
/// another process working on the same folder), records the outcome and, unless
/// `write_manifest` is false, refreshes the manifest.
pub fn run_point(
    file: &Path,
    id: &str,
    out: Option<&Path>,
    threads: Option<usize>,
    max_memory: Option<&str>,
    write_manifest: bool,
) -> Result<PointOutcome, CliError> {
    let plan = load_plan(file)?;
    let point = plan.points.iter().find(|p| p.id == id).ok_or_else(|| {
        bad(anyhow!(
            "--id {id}: no such point in {} (list them with `netstep sweep plan {}`)",
            file.display(),
            file.display()
        ))
    })?;
    let threads = threads_of(threads)?;
    let root = out_dir(&plan, out);
    let dir = SweepDir::open(&root).map_err(bad)?;
    let _lock = dir.lock_point(&point.path).map_err(CliError::Internal)?;
    if dir.is_done(point) {
        return Ok(PointOutcome::AlreadyDone);
    }
    dir.clean_staging(&point.path).map_err(CliError::Internal)?;
    let request = RunRequest {
        scenario: Some(plan.scenario.clone()),
        out: Some(dir.root.join(&point.path)),
        threads: Some(threads),
        overrides: point.overrides.clone(),
        progress: false,
        trace: None,
        sample_interval: None,
        max_memory: max_memory.map(str::to_string),
        max_disk: None,
        format: None,
    };
    let started = Instant::now();
    let result = crate::run(&request);
    let record = Record {
        id: point.id.clone(),
        path: point.path.clone(),
        status: if result.is_ok() {
            Status::Done
        } else {
            Status::Failed
        },
        wall_s: Some(started.elapsed().as_secs_f64()),
        error: result.as_ref().err().map(|e| format!("{e}")),
        netstep_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    dir.write_record(&record).map_err(CliError::Internal)?;
    if write_manifest {
        dir.write_manifest(&plan).map_err(CliError::Internal)?;
    }
    result.map(|_| PointOutcome::Ran)
}

/// `netstep sweep plan SWEEP.toml`: one JSON object per point (id, folder, status against the
/// sweep folder, axis values, overrides); `pending_only` leaves out done points.
pub fn plan_lines(file: &Path, out: Option<&Path>, pending_only: bool) -> Result<String, CliError> {
    let plan = load_plan(file)?;
    validate_points(&plan, &crate::limits(None)?)?;
    let root = out_dir(&plan, out);
    let dir = SweepDir::existing(&root).map_err(bad)?;
    let mut text = String::new();
    for point in &plan.points {
        let status = dir.as_ref().map_or(Status::Pending, |d| d.status(point).0);
        if pending_only && status == Status::Done {
            continue;
        }
        let values: serde_json::Map<String, serde_json::Value> = plan
            .axes
            .iter()
            .zip(&point.values)
            .map(|(axis, value)| (axis.name.clone(), json_value(value)))
            .collect();
        let line = serde_json::json!({
            "id": point.id,
            "path": point.path,
            "status": status.as_str(),
            "values": values,
            "overrides": point.overrides,
        });
        text.push_str(&line.to_string());
        text.push('\n');
    }
    Ok(text)
}

fn json_value(value: &toml::Value) -> serde_json::Value {
    match value {
        toml::Value::Integer(i) => (*i).into(),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map_or_else(|| f.to_string().into(), serde_json::Value::Number),
        toml::Value::Boolean(b) => (*b).into(),
        other => plan::display(other).into(),
    }
}

/// `netstep sweep manifest SWEEP.toml`: rebuilds `sweep.parquet` from the records (after a
/// Slurm array or Ray job); returns (done, failed, pending).
pub fn rebuild_manifest(
    file: &Path,
    out: Option<&Path>,
) -> Result<(usize, usize, usize), CliError> {
    let plan = load_plan(file)?;
    let root = out_dir(&plan, out);
    let dir = SweepDir::existing(&root).map_err(bad)?.ok_or_else(|| {
        bad(anyhow!(
            "--out {}: not a sweep folder (no {})",
            root.display(),
            state::STATE_DIR
        ))
    })?;
    let statuses = dir.write_manifest(&plan).map_err(CliError::Internal)?;
    let count = |s| statuses.iter().filter(|&&x| x == s).count();
    Ok((
        count(Status::Done),
        count(Status::Failed),
        count(Status::Pending),
    ))
}

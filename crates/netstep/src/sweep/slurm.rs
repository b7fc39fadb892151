//! `netstep sweep SWEEP.toml --emit-slurm`: a Slurm job-array script with one task per pending
//! point, each running `netstep sweep run-point` (which records the point and refreshes the
//! manifest under a lock, so tasks finishing together are safe).

use std::path::{Path, PathBuf};

use anyhow::Context;

use super::plan::{Plan, Point};
use super::state::{STATE_DIR, SweepDir};

/// Quotes a string for bash.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The script text for `pending` points (none: `None`).
pub fn script(
    plan: &Plan,
    root: &Path,
    sweep_file: &Path,
    exe: &Path,
    pending: &[&Point],
    threads: usize,
    jobs: Option<usize>,
) -> Option<String> {
    if pending.is_empty() {
        return None;
    }
    let job_name: String = plan
        .name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let throttle = jobs.map_or(String::new(), |j| format!("%{j}"));
    let logs = root.join(STATE_DIR).join("slurm");
    let mut text = format!(
        "#!/usr/bin/env bash
# netstep sweep {name:?}: one Slurm array task per pending point ({n} of {total}).
# Submit with: sbatch {script}
# Each task runs one point and refreshes {root}/sweep.parquet. Points that are done are
# skipped, so resubmitting after a failure or a cancelled job resumes the sweep.
#SBATCH --job-name=netstep-{job_name}
#SBATCH --array=0-{last}{throttle}
#SBATCH --cpus-per-task={threads}
#SBATCH --output={logs}/%A_%a.log
set -euo pipefail
ids=(
",
        name = plan.name,
        n = pending.len(),
        total = plan.points.len(),
        script = root.join("sweep.slurm").display(),
        root = root.display(),
        last = pending.len() - 1,
        logs = logs.display(),
    );
    for point in pending {
        text.push_str(&format!("  {}  # {}\n", point.id, point.path));
    }
    text.push_str(&format!(
        ")
exec {exe} sweep run-point {file} --id \"${{ids[$SLURM_ARRAY_TASK_ID]}}\" --out {root} --threads {threads} --quiet
",
        exe = quote(&exe.to_string_lossy()),
        file = quote(&sweep_file.to_string_lossy()),
        root = quote(&root.to_string_lossy()),
    ));
    Some(text)
}

/// Writes `DIR/sweep.slurm` for the pending points; `None` when nothing is pending.
pub fn write(
    plan: &Plan,
    dir: &SweepDir,
    pending: &[&Point],
    threads: usize,
    jobs: Option<usize>,
) -> anyhow::Result<Option<PathBuf>> {
    let exe = std::env::current_exe().context("finding the netstep binary")?;
    let sweep_file = std::fs::canonicalize(&plan.file)
        .with_context(|| format!("resolving {}", plan.file.display()))?;
    let path = dir.root.join("sweep.slurm");
    let Some(text) = script(plan, &dir.root, &sweep_file, &exe, pending, threads, jobs) else {
        // Nothing pending: a script from an earlier call would only run done points.
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => return Ok(None),
        }
    };
    std::fs::create_dir_all(dir.root.join(STATE_DIR).join("slurm"))
        .context("creating the Slurm log folder")?;
    std::fs::write(&path, text).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(path))
}

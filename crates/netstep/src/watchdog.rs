//! The run's memory guard: a thread that samples the process's resident memory and, when it
//! passes the budget (`--max-memory`, or the memory the machine had available at the start),
//! removes the staged output and exits with code 2 and a message, before the kernel's
//! out-of-memory killer ends the process without one.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use netstep_scenario::limits::{BudgetSource, human_bytes};

/// How often resident memory is sampled.
const PERIOD: Duration = Duration::from_millis(50);

/// A running guard; dropping it stops the thread.
pub struct MemoryWatch {
    stop: Arc<AtomicBool>,
}

/// Resident memory of this process, bytes (`/proc/self/statm`; None where unavailable).
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages.saturating_mul(4096))
}

impl MemoryWatch {
    /// Starts watching: over `budget` bytes, `staging` is removed and the process exits 2.
    /// A budget from the machine's available memory counts the memory already in use.
    pub fn start(budget: u64, source: BudgetSource, staging: PathBuf) -> MemoryWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let limit = match source {
            BudgetSource::Flag => budget,
            BudgetSource::Available => budget.saturating_add(resident_bytes().unwrap_or(0)),
        };
        std::thread::Builder::new()
            .name("netstep-memory".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    if let Some(rss) = resident_bytes()
                        && rss > limit
                    {
                        let _ = std::fs::remove_dir_all(&staging);
                        let why = match source {
                            BudgetSource::Flag => "--max-memory",
                            BudgetSource::Available => {
                                "the memory available when it started; --max-memory sets another budget"
                            }
                        };
                        eprintln!(
                            "error: the run uses {} of memory, more than its budget of {} ({why}); nothing was written",
                            human_bytes(rss),
                            human_bytes(limit)
                        );
                        std::process::exit(2);
                    }
                    std::thread::sleep(PERIOD);
                }
            })
            .expect("spawn the memory guard thread");
        MemoryWatch { stop }
    }
}

impl Drop for MemoryWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// How often the staged output's size is checked.
const DISK_PERIOD: Duration = Duration::from_millis(100);

/// The largest output a run may write without `--max-disk`, whatever the free space.
pub const MAX_OUTPUT_BYTES: u64 = 1 << 40;

/// Where a run's output budget comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiskBudget {
    /// `--max-disk`.
    Flag(u64),
    /// The free space of the output's file system when the run started (at most
    /// [`MAX_OUTPUT_BYTES`]).
    Free(u64),
}

impl DiskBudget {
    /// The budget for output staged under `dir`: `--max-disk` if given, else the free space
    /// of `dir`'s file system (at most [`MAX_OUTPUT_BYTES`]; that limit where the free space
    /// cannot be read).
    pub fn for_dir(flag: Option<u64>, dir: &std::path::Path) -> DiskBudget {
        match flag {
            Some(bytes) => DiskBudget::Flag(bytes),
            None => DiskBudget::Free(
                fs4::available_space(dir)
                    .unwrap_or(MAX_OUTPUT_BYTES)
                    .min(MAX_OUTPUT_BYTES),
            ),
        }
    }
    /// Where the budget came from, for messages.
    pub fn source(self) -> &'static str {
        match self {
            DiskBudget::Flag(_) => "--max-disk",
            DiskBudget::Free(_) => {
                "the free space of the output's file system; --max-disk sets another budget"
            }
        }
    }
    /// The budget in bytes.
    pub fn bytes(self) -> u64 {
        match self {
            DiskBudget::Flag(b) | DiskBudget::Free(b) => b,
        }
    }
}

/// Bytes of the files in `dir` (the staging folder holds files only).
pub fn folder_bytes(dir: &std::path::Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.metadata().ok())
                .map(|m| m.len())
                .sum()
        })
        .unwrap_or(0)
}

/// The run's output guard: a thread that watches the staged output and, when it outgrows its
/// budget, removes it and exits with code 2 and a message (the trace tables stream to disk
/// while the run goes on, so memory alone does not bound them).
pub struct DiskWatch {
    stop: Arc<AtomicBool>,
}

impl DiskWatch {
    /// Starts watching `staging` against `budget`.
    pub fn start(budget: DiskBudget, staging: PathBuf) -> DiskWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("netstep-disk".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    let used = folder_bytes(&staging);
                    if used > budget.bytes() {
                        let _ = std::fs::remove_dir_all(&staging);
                        let why = budget.source();
                        eprintln!(
                            "error: the run's output grew to {}, more than its budget of {} ({why}); write fewer trace rows (a longer trace.sample_interval, trace.flows or trace.nodes filters, trace.sample_one_in); nothing was written",
                            human_bytes(used),
                            human_bytes(budget.bytes())
                        );
                        std::process::exit(2);
                    }
                    std::thread::sleep(DISK_PERIOD);
                }
            })
            .expect("spawn the disk guard thread");
        DiskWatch { stop }
    }
}

impl Drop for DiskWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

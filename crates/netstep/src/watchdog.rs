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

//! SIGINT and SIGTERM. A run stops at its next window, its staging folder is removed (it is
//! dropped on the way out) and the process exits 130 (SIGINT) or 143 (SIGTERM) with one line
//! saying nothing was written; a second signal exits at once (the next run that targets the
//! same folder removes what is left, see `output::Staging::prepare`). Commands that write
//! nothing (`compare`) exit at once on the first signal, with the same line and code.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The signals a command listens for, and the first that came.
pub struct Interrupt {
    stop: Arc<AtomicBool>,
    signal: Arc<AtomicI32>,
}

/// The process exit code after `signal`: 128 + its number (130 for SIGINT, 143 for SIGTERM).
pub fn exit_code(signal: i32) -> i32 {
    128 + signal
}

/// The signal's name.
pub fn name(signal: i32) -> &'static str {
    match signal {
        SIGINT => "SIGINT",
        SIGTERM => "SIGTERM",
        _ => "a signal",
    }
}

impl Interrupt {
    /// Listens for SIGINT and SIGTERM: the first sets the stop flag (the run polls it at every
    /// window and before writing), a second exits at once. With `exit_now`, the first exits.
    pub fn install(exit_now: bool) -> std::io::Result<Interrupt> {
        let stop = Arc::new(AtomicBool::new(false));
        let signal = Arc::new(AtomicI32::new(0));
        let mut signals = Signals::new([SIGINT, SIGTERM])?;
        let (flag, which) = (stop.clone(), signal.clone());
        std::thread::Builder::new()
            .name("netstep-signals".into())
            .spawn(move || {
                for sig in signals.forever() {
                    if exit_now || flag.load(Ordering::SeqCst) {
                        eprintln!("error: interrupted by {}: nothing was written", name(sig));
                        std::process::exit(exit_code(sig));
                    }
                    which.store(sig, Ordering::SeqCst);
                    flag.store(true, Ordering::SeqCst);
                }
            })?;
        Ok(Interrupt { stop, signal })
    }

    /// The flag the engine polls.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The signal that came, if one did.
    pub fn received(&self) -> Option<i32> {
        // The signal number is stored before the flag is set.
        if !self.stop.load(Ordering::SeqCst) {
            return None;
        }
        Some(self.signal.load(Ordering::SeqCst))
    }
}

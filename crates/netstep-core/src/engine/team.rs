//! The thread team of the window engine: worker threads kept running for the whole run, each
//! with a contiguous block of chunks, spinning then yielding between windows instead of
//! sleeping (as Days does), and [`Window`], what every chunk does in one window.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use super::chunk::{Chunk, Inbox};
use super::model::Model;
use super::placement::Placement;
use crate::units::SimTime;

/// What every chunk does in one window.
#[derive(Clone, Copy)]
pub(super) struct Window {
    /// Every LP runs its events before this time.
    pub(super) bound: SimTime,
    /// Quantized windows: the aligned end of the window the delivered messages were sent in
    /// (a message due earlier waits for it).
    pub(super) not_before: Option<SimTime>,
}

impl Window {
    /// Each chunk takes the messages of the previous window, then runs its LPs due before
    /// `bound`.
    pub(super) fn run(
        self,
        chunks: &mut [Chunk],
        inboxes: &mut [Inbox],
        model: &Model,
        placement: &Placement,
    ) {
        for (chunk, inbox) in chunks.iter_mut().zip(inboxes.iter_mut()) {
            chunk.deliver(inbox, model, self.not_before);
            chunk.process(self.bound, model, placement);
        }
    }
}

/// One worker's share of a window: its chunks (moved to it and back each window, into vectors
/// that keep their capacity) and the window.
struct Job {
    chunks: Vec<Chunk>,
    inboxes: Vec<Inbox>,
    window: Window,
}

/// Worker threads kept running for the whole run, as Days does: between windows they spin on
/// a flag instead of sleeping, so a window's fork and join cost no system call. Worker `w`
/// handles the `w + 1`-th contiguous block of chunks; the calling thread the first. The
/// chunks are independent within a window, so who runs which never changes a result.
pub(super) struct Team {
    /// Set when the run ends: the workers return.
    pub(super) quit: AtomicBool,
    posted: Vec<AtomicBool>,
    finished: Vec<AtomicBool>,
    slots: Vec<Mutex<Job>>,
}

impl Team {
    /// A team of `workers` threads (started by the caller with [`Team::work`]).
    pub(super) fn new(workers: usize) -> Team {
        Team {
            quit: AtomicBool::new(false),
            posted: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            finished: (0..workers).map(|_| AtomicBool::new(false)).collect(),
            slots: (0..workers)
                .map(|_| {
                    Mutex::new(Job {
                        chunks: Vec::new(),
                        inboxes: Vec::new(),
                        window: Window {
                            bound: SimTime::ZERO,
                            not_before: None,
                        },
                    })
                })
                .collect(),
        }
    }

    /// Worker `w`'s loop: wait (spinning) for a job, run it, hand it back.
    pub(super) fn work(&self, w: usize, model: &Model, placement: &Placement) {
        loop {
            let mut wait = Backoff::default();
            while !self.posted[w].load(Ordering::Acquire) {
                if self.quit.load(Ordering::Acquire) {
                    return;
                }
                wait.snooze();
            }
            self.posted[w].store(false, Ordering::Relaxed);
            let mut guard = self.slots[w].lock().unwrap_or_else(|e| e.into_inner());
            let job = &mut *guard;
            job.window
                .run(&mut job.chunks, &mut job.inboxes, model, placement);
            drop(guard);
            self.finished[w].store(true, Ordering::Release);
        }
    }

    /// Runs `window` over all chunks: hands each worker its block, runs the first block here,
    /// then takes the blocks back in order.
    pub(super) fn step(
        &self,
        chunks: &mut Vec<Chunk>,
        inboxes: &mut Vec<Inbox>,
        window: Window,
        model: &Model,
        placement: &Placement,
    ) {
        let n = chunks.len();
        let per = n.div_ceil(self.slots.len() + 1);
        // Worker `w`'s block starts here; a start at or past the end is no block.
        let block = |w: usize| ((w + 1) * per).min(n);
        // From the last block down, so each block is the tail of what is left. The chunks move
        // into the worker's vectors, which keep their capacity: no allocation per window.
        for w in (0..self.slots.len()).rev() {
            if block(w) >= n {
                continue;
            }
            let mut job = self.slots[w].lock().unwrap_or_else(|e| e.into_inner());
            job.chunks.extend(chunks.drain(block(w)..));
            job.inboxes.extend(inboxes.drain(block(w)..));
            job.window = window;
            drop(job);
            self.finished[w].store(false, Ordering::Relaxed);
            self.posted[w].store(true, Ordering::Release);
        }
        window.run(chunks, inboxes, model, placement);
        for w in (0..self.slots.len()).filter(|&w| block(w) < n) {
            let mut wait = Backoff::default();
            while !self.finished[w].load(Ordering::Acquire) {
                wait.snooze();
            }
            let mut job = self.slots[w].lock().unwrap_or_else(|e| e.into_inner());
            chunks.append(&mut job.chunks);
            inboxes.append(&mut job.inboxes);
        }
    }
}

/// Waiting for another thread: a short spin, then yielding the core on every try, so a thread
/// that is waited for gets to run even when there are more threads than cores (tests run
/// 4-thread engines side by side on 2 cores), and none ever sleeps in the kernel.
#[derive(Default)]
struct Backoff {
    tries: u32,
}

impl Backoff {
    /// Spins this many times before yielding.
    const SPINS: u32 = 128;

    fn snooze(&mut self) {
        if self.tries < Self::SPINS {
            self.tries += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

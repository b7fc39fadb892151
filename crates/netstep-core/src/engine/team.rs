//! The thread team of the window engine, and [`Window`], what every chunk does in one window.
//!
//! Worker threads are kept running for the whole run. Each thread (the calling thread is
//! thread 0) has a home range of chunks, contiguous, and claims chunks from it one at a time;
//! when its range is done it claims what is left of the others' ranges, so a slow or
//! descheduled thread never holds more than the one chunk it is running, and an unbalanced
//! placement evens out. Waiting spins briefly, then yields, then parks in the kernel
//! ([`Backoff`]); on a busy machine the calling thread runs windows alone for a while
//! ([`Pace`]). The chunks are independent within a window (each touches only itself and its
//! own inbox), so who runs which never changes a result.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

use super::chunk::{Chunk, Inbox};
use super::model::Model;
use super::pace::Pace;
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
            self.run_one(chunk, inbox, model, placement);
        }
    }

    /// One chunk's share of the window.
    fn run_one(self, chunk: &mut Chunk, inbox: &mut Inbox, model: &Model, placement: &Placement) {
        chunk.deliver(inbox, model, self.not_before);
        chunk.process(self.bound, model, placement);
    }
}

/// `None` as a stored [`Window::not_before`].
const NO_TIME: u64 = u64::MAX;

/// Worker threads kept running for the whole run (see the module docs).
pub(super) struct Team {
    /// Set when the run ends: the workers return.
    quit: AtomicBool,
    /// The window being run: its number, published last (release) after everything below.
    epoch: AtomicU64,
    bound: AtomicU64,
    not_before: AtomicU64,
    /// The chunks and their inboxes, moved in for each shared window and back out after it
    /// (a chunk's mutex is only ever taken by the one thread that claimed it, then by the
    /// calling thread once the window is done: never contended).
    cells: Vec<Mutex<Option<(Chunk, Inbox)>>>,
    /// Chunks in the current window.
    n_chunks: AtomicUsize,
    /// Per thread: the window's number (high 32 bits) and the next unclaimed chunk of the
    /// thread's home range (low 32 bits); a claim is a compare-exchange that fails once the
    /// window is another.
    claims: Vec<AtomicU64>,
    /// Chunks finished in the current window.
    done: AtomicUsize,
    /// A chunk panicked on a worker thread.
    panicked: AtomicBool,
    /// Each worker's thread, to wake it when it parks.
    threads: Vec<std::sync::OnceLock<Thread>>,
    /// The calling thread, woken by the worker that finishes a window's last chunk.
    caller: Thread,
    /// Whether windows are shared or run solo (the calling thread's alone).
    pace: Mutex<Pace>,
}

impl Team {
    /// A team of `workers` threads (started by the caller with [`Team::work`]) for
    /// `n_chunks` chunks; the calling thread is the one that calls [`Team::step`].
    pub(super) fn new(workers: usize, n_chunks: usize) -> Team {
        Team {
            quit: AtomicBool::new(false),
            epoch: AtomicU64::new(0),
            bound: AtomicU64::new(0),
            not_before: AtomicU64::new(NO_TIME),
            cells: (0..n_chunks).map(|_| Mutex::new(None)).collect(),
            n_chunks: AtomicUsize::new(0),
            claims: (0..=workers).map(|_| AtomicU64::new(0)).collect(),
            done: AtomicUsize::new(0),
            panicked: AtomicBool::new(false),
            threads: (0..workers).map(|_| std::sync::OnceLock::new()).collect(),
            caller: std::thread::current(),
            pace: Mutex::new(Pace::default()),
        }
    }

    /// Ends the run: every worker returns from [`Team::work`].
    pub(super) fn stop(&self) {
        self.quit.store(true, Ordering::Release);
        self.wake_workers();
    }

    /// Wakes every worker that has parked (a worker not parked keeps the wake-up for its next
    /// park, which then returns at once).
    fn wake_workers(&self) {
        self.threads
            .iter()
            .filter_map(std::sync::OnceLock::get)
            .for_each(Thread::unpark);
    }

    /// Worker `w`'s loop: wait for a window, claim and run chunks until none is left, wait
    /// for the next.
    pub(super) fn work(&self, w: usize, model: &Model, placement: &Placement) {
        let _ = self.threads[w].set(std::thread::current());
        let mut seen = 0;
        loop {
            let mut wait = Backoff::default();
            let epoch = loop {
                if self.quit.load(Ordering::Acquire) {
                    return;
                }
                let epoch = self.epoch.load(Ordering::Acquire);
                if epoch != seen {
                    break epoch;
                }
                wait.snooze();
            };
            seen = epoch;
            self.run_claims(w + 1, epoch as u32, model, placement);
        }
    }

    /// Claims and runs chunks of window `epoch` as thread `me` (home range first, then the
    /// others'), until none is left; wakes the calling thread if it ran the window's last.
    /// Returns how many chunks it ran.
    fn run_claims(&self, me: usize, epoch: u32, model: &Model, placement: &Placement) -> usize {
        let threads = self.claims.len();
        let mut ran = 0;
        for r in (0..threads).map(|k| (me + k) % threads) {
            while let Some(i) = self.claim(r, epoch) {
                // The window's parameters and arrays stay put until every claimed chunk is
                // done, and this claim is one of them.
                let window = Window {
                    bound: SimTime(self.bound.load(Ordering::Relaxed)),
                    not_before: match self.not_before.load(Ordering::Relaxed) {
                        NO_TIME => None,
                        t => Some(SimTime(t)),
                    },
                };
                // Counts the chunk done even if it panics, so the calling thread is not
                // left waiting for it (it then reports the panic).
                let _done = Done { team: self, me };
                let mut cell = self.cells[i].lock().unwrap_or_else(|e| e.into_inner());
                if let Some((chunk, inbox)) = cell.as_mut() {
                    window.run_one(chunk, inbox, model, placement);
                }
                ran += 1;
            }
        }
        ran
    }

    /// Thread `r`'s home range of chunks.
    fn range(&self, r: usize) -> std::ops::Range<usize> {
        let n = self.n_chunks.load(Ordering::Relaxed);
        let per = n.div_ceil(self.claims.len());
        (r * per).min(n)..((r + 1) * per).min(n)
    }

    /// The next unclaimed chunk of range `r` in window `epoch`, claimed; `None` when the
    /// range is exhausted or the window is over.
    fn claim(&self, r: usize, epoch: u32) -> Option<usize> {
        let range = self.range(r);
        let slot = &self.claims[r];
        let mut v = slot.load(Ordering::Acquire);
        loop {
            let i = range.start + (v & u32::MAX as u64) as usize;
            if (v >> 32) as u32 != epoch || i >= range.end {
                return None;
            }
            match slot.compare_exchange_weak(v, v + 1, Ordering::AcqRel, Ordering::Acquire) {
                Ok(_) => return Some(i),
                Err(now) => v = now,
            }
        }
    }

    /// Runs `window` over all chunks with the workers, or alone while [`Pace`] says so.
    pub(super) fn step(
        &self,
        chunks: &mut Vec<Chunk>,
        inboxes: &mut Vec<Inbox>,
        window: Window,
        model: &Model,
        placement: &Placement,
    ) {
        let mut pace = self.pace.lock().unwrap_or_else(|e| e.into_inner());
        if pace.solo() {
            window.run(chunks, inboxes, model, placement);
            return;
        }
        let n = chunks.len();
        assert!(
            n <= self.cells.len(),
            "more chunks than the team was made for"
        );
        let epoch = self.epoch.load(Ordering::Relaxed) + 1;
        self.bound.store(window.bound.0, Ordering::Relaxed);
        self.not_before.store(
            window.not_before.map_or(NO_TIME, |t| t.0),
            Ordering::Relaxed,
        );
        for ((cell, chunk), inbox) in self
            .cells
            .iter()
            .zip(chunks.drain(..))
            .zip(inboxes.drain(..))
        {
            *cell.lock().unwrap_or_else(|e| e.into_inner()) = Some((chunk, inbox));
        }
        self.n_chunks.store(n, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        let tag = (epoch as u32 as u64) << 32;
        for slot in &self.claims {
            slot.store(tag, Ordering::Relaxed);
        }
        self.epoch.store(epoch, Ordering::Release);
        self.wake_workers();
        let started = Instant::now();
        let mine = self.run_claims(0, epoch as u32, model, placement);
        let ran = started.elapsed();
        let waiting = Instant::now();
        let mut backoff = Backoff::default();
        while self.done.load(Ordering::Acquire) < n {
            backoff.snooze();
        }
        pace.shared(ran, waiting.elapsed(), (mine, n));
        assert!(
            !self.panicked.load(Ordering::Acquire),
            "a worker thread panicked while running a chunk"
        );
        for cell in &self.cells[..n] {
            let (chunk, inbox) = cell
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .expect("every chunk comes back");
            chunks.push(chunk);
            inboxes.push(inbox);
        }
    }
}

/// Marks one claimed chunk done when dropped (after it ran, or while its panic unwinds), and
/// wakes the calling thread when it was the window's last.
struct Done<'a> {
    team: &'a Team,
    me: usize,
}

impl Drop for Done<'_> {
    fn drop(&mut self) {
        let team = self.team;
        if std::thread::panicking() {
            team.panicked.store(true, Ordering::Release);
        }
        let n = team.n_chunks.load(Ordering::Relaxed);
        if team.done.fetch_add(1, Ordering::AcqRel) + 1 == n && self.me != 0 {
            team.caller.unpark();
        }
    }
}

/// Stops the team when dropped: at the end of the run, or while a panic of the calling
/// thread unwinds (so the scope's workers return and the panic is reported, not a hang).
pub(super) struct StopOnDrop<'a>(pub(super) &'a Team);

impl Drop for StopOnDrop<'_> {
    fn drop(&mut self) {
        self.0.stop();
    }
}

/// Waiting for another thread: a short spin (the common case on idle cores: the other thread
/// is a few microseconds away), then yielding the core, then parking in the kernel until
/// woken, so a waiting thread never holds a core that the thread it waits for needs (a
/// busy machine, or more threads than cores: tests run 4-thread engines side by side on 2
/// cores). Every wake-up follows a store that the waiter checks before parking again, and a
/// wake-up that comes before the park is kept, so none is lost.
#[derive(Default)]
struct Backoff {
    spins: u32,
    yields: u32,
    since: Option<Instant>,
}

impl Backoff {
    /// Spins for this long before yielding: longer than the gap between windows on idle
    /// cores, so a team that keeps up never parks (5-1,000 us differed by less than the
    /// noise on the Days FatTree-16/512 run, 2 threads; benches/RESULTS.md).
    const SPIN: Duration = Duration::from_micros(50);
    /// Yields this many times before parking.
    const YIELDS: u32 = 32;

    fn snooze(&mut self) {
        if self.yields == 0 {
            self.spins += 1;
            // The clock is read once per 64 spins.
            if !self.spins.is_multiple_of(64)
                || self.since.get_or_insert_with(Instant::now).elapsed() < Self::SPIN
            {
                std::hint::spin_loop();
                return;
            }
        }
        if self.yields < Self::YIELDS {
            self.yields += 1;
            std::thread::yield_now();
        } else {
            std::thread::park();
        }
    }
}

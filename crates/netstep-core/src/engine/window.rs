//! The window engine (conservative synchronous PDES with idle skipping).
//!
//! Each window: `T` = earliest pending event of any LP; the LPs whose next event is before
//! `T + W` run all their events before that bound in key order (in parallel on the rayon pool);
//! then, at the barrier, their outgoing messages are pushed into the receivers' heaps. Only
//! LPs with pending events are scanned (their next times sit in one dense array) and only the
//! due ones run: idle LPs cost one `None` pointer plus one time word and are allocated on first
//! use.
//!
//! With `W <= lookahead` no message generated inside a window can be due inside it, so every
//! LP sees exactly the events, in exactly the order, of a sequential simulation. With
//! [`WindowMode::Quantized`] arrivals are moved to `max(ceil_q(t), window_end)`.

use std::collections::BinaryHeap;

use rayon::prelude::*;

use super::event::{Event, EventSink};
use super::node::NodeState;
use super::{EngineConfig, Model, RunOutput, RunStats, WindowMode, collect_output};
use crate::units::SimTime;

/// One logical process in the window engine: element state, its event heap, its outbox.
struct Lp {
    state: NodeState,
    heap: BinaryHeap<Event>,
    outbox: Vec<(u32, Event)>,
}

struct LpSink<'a> {
    heap: &'a mut BinaryHeap<Event>,
    outbox: &'a mut Vec<(u32, Event)>,
}

impl EventSink for LpSink<'_> {
    #[inline]
    fn local(&mut self, event: Event) {
        self.heap.push(event);
    }
    #[inline]
    fn remote(&mut self, node: u32, event: Event) {
        self.outbox.push((node, event));
    }
}

impl Lp {
    fn new(model: &Model, node: u32) -> Box<Lp> {
        Box::new(Lp {
            state: NodeState::new(node, model.net.degree(node)),
            heap: BinaryHeap::new(),
            outbox: Vec::new(),
        })
    }

    fn next_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.key.time)
    }

    /// Handles every event before `bound`; returns the time of the last one handled.
    fn run_window(&mut self, bound: SimTime, model: &Model) -> SimTime {
        let mut last = SimTime::ZERO;
        while let Some(top) = self.heap.peek() {
            if top.key.time >= bound {
                break;
            }
            let event = self.heap.pop().expect("peeked");
            last = event.key.time;
            let mut sink = LpSink {
                heap: &mut self.heap,
                outbox: &mut self.outbox,
            };
            self.state.handle(event, model, &mut sink);
        }
        last
    }
}

/// The windowed parallel engine.
pub struct WindowEngine<'m> {
    model: &'m Model,
    config: EngineConfig,
    width: SimTime,
    lps: Vec<Option<Box<Lp>>>,
    /// Next event time of every LP (`SimTime::MAX` when it has none), dense so the per-window
    /// scan over the active LPs is a gather over one array.
    next: Vec<SimTime>,
    /// LPs with pending events (each once).
    active: Vec<u32>,
    pool: Option<rayon::ThreadPool>,
    stats: RunStats,
}

/// Why the engine cannot run a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Some link has no lookahead, so no window can make progress.
    #[error(
        "zero lookahead: some link has zero propagation delay and the smallest packet serializes in zero time"
    )]
    ZeroLookahead,
    /// A quantized window of width zero.
    #[error("window width must be positive")]
    ZeroWindow,
    /// The thread pool could not be built.
    #[error("cannot start {threads} worker threads: {message}")]
    ThreadPool {
        /// Threads asked for.
        threads: usize,
        /// The OS error.
        message: String,
    },
}

impl<'m> WindowEngine<'m> {
    /// Prepares a run: checks the lookahead, builds the pool, loads the initial events.
    pub fn new(model: &'m Model, config: EngineConfig) -> Result<WindowEngine<'m>, EngineError> {
        let lookahead = model.lookahead();
        if lookahead == SimTime::ZERO {
            return Err(EngineError::ZeroLookahead);
        }
        let width = match config.window {
            WindowMode::Exact => lookahead,
            WindowMode::Quantized(q) if q == SimTime::ZERO => return Err(EngineError::ZeroWindow),
            WindowMode::Quantized(q) => q,
        };
        let pool = if config.threads > 1 {
            Some(
                rayon::ThreadPoolBuilder::new()
                    .num_threads(config.threads)
                    .build()
                    .map_err(|e| EngineError::ThreadPool {
                        threads: config.threads,
                        message: e.to_string(),
                    })?,
            )
        } else {
            None
        };
        let n = model.net.n_nodes();
        let mut engine = WindowEngine {
            model,
            config,
            width,
            lps: (0..n).map(|_| None).collect(),
            next: vec![SimTime::MAX; n],
            active: Vec::new(),
            pool,
            stats: RunStats {
                window: width,
                ..RunStats::default()
            },
        };
        for (node, event) in model.initial_events() {
            engine.deliver(node, event);
        }
        Ok(engine)
    }

    /// The window width in use.
    pub fn width(&self) -> SimTime {
        self.width
    }

    fn deliver(&mut self, node: u32, event: Event) {
        let time = event.key.time;
        let lp = self.lps[node as usize].get_or_insert_with(|| Lp::new(self.model, node));
        lp.heap.push(event);
        let next = &mut self.next[node as usize];
        if *next == SimTime::MAX {
            self.active.push(node);
        }
        *next = (*next).min(time);
    }

    /// Runs to the end; `progress` is called after each window with the window's start time.
    pub fn run(mut self, progress: impl FnMut(SimTime) + Send) -> RunOutput {
        // The window loop itself runs on a pool thread, so each window's fork-join is a cheap
        // in-pool join rather than a job injected from outside the pool.
        match self.pool.take() {
            Some(pool) => {
                let output = pool.install(|| self.run_loop(progress, true));
                drop(pool);
                output
            }
            None => self.run_loop(progress, false),
        }
    }

    fn run_loop(mut self, mut progress: impl FnMut(SimTime), parallel: bool) -> RunOutput {
        let end = self.config.end.unwrap_or(SimTime::MAX);
        let mut due: Vec<(u32, Box<Lp>)> = Vec::new();
        let mut messages: Vec<(u32, Event)> = Vec::new();
        loop {
            let next = &self.next;
            let Some(start) = self.active.iter().map(|&n| next[n as usize]).min() else {
                break;
            };
            if start >= end {
                break;
            }
            let bound = start.saturating_add(self.width).min(end);
            self.stats.windows += 1;
            let lps = &mut self.lps;
            let next = &mut self.next;
            self.active.retain(|&node| {
                if next[node as usize] < bound {
                    next[node as usize] = SimTime::MAX;
                    due.push((node, lps[node as usize].take().expect("active LP exists")));
                    false
                } else {
                    true
                }
            });
            let model = self.model;
            let last = if parallel && due.len() >= PARALLEL_MIN_LPS {
                due.par_iter_mut()
                    .with_min_len(PARALLEL_CHUNK)
                    .map(|(_, lp)| lp.run_window(bound, model))
                    .max()
            } else {
                due.iter_mut()
                    .map(|(_, lp)| lp.run_window(bound, model))
                    .max()
            };
            if let Some(last) = last {
                self.stats.last_event = self.stats.last_event.max(last);
            }
            for (node, mut lp) in due.drain(..) {
                messages.append(&mut lp.outbox);
                if let Some(t) = lp.next_time() {
                    self.next[node as usize] = t;
                    self.active.push(node);
                }
                self.lps[node as usize] = Some(lp);
            }
            for (node, mut event) in messages.drain(..) {
                if let WindowMode::Quantized(q) = self.config.window {
                    event.key.time = event.key.time.ceil_to(q).max(bound);
                }
                self.deliver(node, event);
            }
            progress(start);
        }
        let stats = self.stats;
        collect_output(
            self.model,
            self.lps.iter().flatten().map(|lp| &lp.state),
            stats,
        )
    }
}

/// Fewer due LPs than this run on the calling thread: below it, waking the pool costs more
/// than the work it would share (measured on the Days baseline, see benches/RESULTS.md).
const PARALLEL_MIN_LPS: usize = 64;
/// LPs per rayon task.
const PARALLEL_CHUNK: usize = 16;

//! The window engine (conservative synchronous PDES with idle skipping).
//!
//! Each window: `T` = earliest pending event of any LP; the LPs whose next event is before
//! `T + W` run all their events before that bound in key order (in parallel on the rayon pool);
//! then, at the barrier, their outgoing messages are pushed into the receivers' heaps. Only
//! active LPs are touched: idle LPs cost one `None` pointer and are allocated on first use.
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
        Box::new(Lp { state: NodeState::new(node, model.net.degree(node)), heap: BinaryHeap::new(), outbox: Vec::new() })
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
            let mut sink = LpSink { heap: &mut self.heap, outbox: &mut self.outbox };
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
    active: Vec<u32>,
    is_active: Vec<bool>,
    pool: Option<rayon::ThreadPool>,
    stats: RunStats,
}

/// Why the engine cannot run a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Some link has no lookahead, so no window can make progress.
    #[error("zero lookahead: some link has zero propagation delay and the smallest packet serializes in zero time")]
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
                    .map_err(|e| EngineError::ThreadPool { threads: config.threads, message: e.to_string() })?,
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
            active: Vec::new(),
            is_active: vec![false; n],
            pool,
            stats: RunStats { window: width, ..RunStats::default() },
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
        let lp = self.lps[node as usize].get_or_insert_with(|| Lp::new(self.model, node));
        lp.heap.push(event);
        if !self.is_active[node as usize] {
            self.is_active[node as usize] = true;
            self.active.push(node);
        }
    }

    /// Runs to the end; `progress` is called after each window with the window's start time.
    pub fn run(mut self, mut progress: impl FnMut(SimTime)) -> RunOutput {
        let end = self.config.end.unwrap_or(SimTime::MAX);
        let mut due: Vec<(u32, Box<Lp>)> = Vec::new();
        let mut messages: Vec<(u32, Event)> = Vec::new();
        loop {
            let Some(start) = self.active.iter().filter_map(|&n| self.lps[n as usize].as_ref().and_then(|lp| lp.next_time())).min() else {
                break;
            };
            if start >= end {
                break;
            }
            let bound = start.saturating_add(self.width).min(end);
            self.stats.windows += 1;
            for &node in &self.active {
                let slot = &mut self.lps[node as usize];
                if slot.as_ref().and_then(|lp| lp.next_time()).is_some_and(|t| t < bound) {
                    due.push((node, slot.take().expect("active LP exists")));
                }
            }
            let model = self.model;
            let last = match &self.pool {
                Some(pool) if due.len() > 1 => pool.install(|| due.par_iter_mut().map(|(_, lp)| lp.run_window(bound, model)).max()),
                _ => due.iter_mut().map(|(_, lp)| lp.run_window(bound, model)).max(),
            };
            if let Some(last) = last {
                self.stats.last_event = self.stats.last_event.max(last);
            }
            for (node, mut lp) in due.drain(..) {
                messages.append(&mut lp.outbox);
                self.lps[node as usize] = Some(lp);
            }
            for (node, mut event) in messages.drain(..) {
                if let WindowMode::Quantized(q) = self.config.window {
                    event.key.time = event.key.time.ceil_to(q).max(bound);
                }
                self.deliver(node, event);
            }
            let lps = &self.lps;
            let is_active = &mut self.is_active;
            self.active.retain(|&n| {
                let keep = lps[n as usize].as_ref().is_some_and(|lp| !lp.heap.is_empty());
                is_active[n as usize] = keep;
                keep
            });
            progress(start);
        }
        let stats = self.stats;
        collect_output(self.model, self.lps.iter().flatten().map(|lp| &lp.state), stats)
    }
}

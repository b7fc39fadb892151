//! The window engine (conservative synchronous PDES with idle skipping).
//!
//! Each window: `T` = earliest pending event of any LP; the LPs whose next event is before
//! `T + W` run all their events before that bound in key order; then, at the barrier, their
//! outgoing messages are pushed into the receivers' event queues.
//!
//! LPs are dealt into `C` chunks by the topology (`engine/placement.rs`: a pod's or a leaf's
//! hosts and switches share a chunk, the top tier is spread, so most messages stay inside a
//! chunk and so inside a thread). A chunk owns its LPs' states (boxed, allocated on first
//! use), their event queues ([`super::lp_queue::LpQueue`], a dense array apart from the states, so delivering a
//! message does not touch the receiving LP's state), its list of active LPs and one outgoing
//! message bucket per destination chunk. Each window is one parallel phase over chunks: a
//! chunk first *delivers* the messages addressed to it in the previous window into its LPs'
//! queues, then *processes* its due LPs, writing new messages into its buckets. The next
//! window's start is known before delivery: every chunk records the earliest message it
//! sent. Only LPs with pending events are looked at; an idle LP costs one `None` pointer, an
//! empty queue and one time word.
//!
//! With `W <= lookahead` no message generated inside a window can be due inside it, so every
//! LP sees exactly the events, in exactly the order, of a sequential simulation. With
//! [`WindowMode::Quantized`] windows are aligned to multiples of `q`, and an arrival due inside
//! the window it was sent in waits for that window's end: `max(t, window_end)`.

use std::sync::Arc;

use super::chunk::{Chunk, Inbox};
use super::groups::{GROUP_FROM_NODES, Grouping, LinkGroups};
use super::placement::Placement;
use super::sampling;
use super::team::{StopOnDrop, Team, Window};
use super::trace::{HopRecord, NoTrace, TraceSink};
use super::{
    EngineConfig, Model, PfcRows, RunError, RunOutput, RunStats, WindowMode, collect_output,
    overflow_error,
};
use crate::units::SimTime;

/// The windowed parallel engine.
pub struct WindowEngine<'m> {
    model: &'m Model,
    config: EngineConfig,
    width: SimTime,
    chunks: Vec<Chunk>,
    /// Which chunk and slot each node's LP has (shared with the worker threads).
    placement: Arc<Placement>,
    /// Messages in transit, per destination chunk.
    inboxes: Vec<Inbox>,
    /// Some flow's packets carry side records (otherwise their buckets stay empty and are not
    /// swapped).
    side_records: bool,
    stats: RunStats,
    /// The flows that wait for no other flow, by start time then id: each is handed to its
    /// source's LP just before the window it starts in (not all at the start: a run of
    /// millions of flows holds a cursor, not an event per flow).
    starts: Vec<u32>,
    /// The first flow of `starts` not yet handed over.
    next_start: usize,
    /// Set from outside (a signal): the run stops before its next window.
    stop: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

/// Chunks per worker thread (each thread runs a contiguous block of them). Two, not more:
/// with fixed blocks more chunks only add per-window work (2 threads, 2026-11-24: Days
/// FatTree-32/4096 1.92 s with 2, 2.01 s with 4, 2.25 s with 8; benches/RESULTS.md).
const CHUNKS_PER_THREAD: usize = 2;

/// Why the engine cannot run a model.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// Some link has no lookahead, so no window can make progress.
    #[error(
        "zero lookahead: some link has zero propagation delay and the smallest packet serializes in zero time"
    )]
    ZeroLookahead,
    /// More nodes than the engine can address.
    #[error("{n_nodes} nodes is more than the {max} logical processes the engine supports")]
    TooManyLps {
        /// Node count.
        n_nodes: usize,
        /// The limit ([`super::event::MAX_LPS`]).
        max: u64,
    },
    /// A quantized window of width zero.
    #[error("window width must be positive")]
    ZeroWindow,
}

impl<'m> WindowEngine<'m> {
    /// Prepares a run: checks the lookahead, loads the initial events. In exact windows of a
    /// large network, nodes joined by much shorter links than the rest run as groups
    /// ([`super::groups`], [`Grouping::Auto`]).
    pub fn new(model: &'m Model, config: EngineConfig) -> Result<WindowEngine<'m>, EngineError> {
        Self::with_grouping(model, config, Grouping::Auto)
    }

    /// [`WindowEngine::new`] without groups: windows of the smallest link lookahead, one LP
    /// per node (the same results, for the tests that compare the two and for measuring).
    pub fn new_ungrouped(
        model: &'m Model,
        config: EngineConfig,
    ) -> Result<WindowEngine<'m>, EngineError> {
        Self::with_grouping(model, config, Grouping::Never)
    }

    /// [`WindowEngine::new`] with link groups formed as `grouping` says (the same results
    /// every way).
    pub fn with_grouping(
        model: &'m Model,
        config: EngineConfig,
        grouping: Grouping,
    ) -> Result<WindowEngine<'m>, EngineError> {
        let n_nodes = model.net.n_nodes();
        if n_nodes as u64 > super::event::MAX_LPS {
            return Err(EngineError::TooManyLps {
                n_nodes,
                max: super::event::MAX_LPS,
            });
        }
        let lookahead = model.lookahead();
        if lookahead == SimTime::ZERO {
            return Err(EngineError::ZeroLookahead);
        }
        let grouped = match grouping {
            Grouping::Auto => n_nodes >= GROUP_FROM_NODES,
            Grouping::Always => true,
            Grouping::Never => false,
        };
        let groups = match config.window {
            WindowMode::Exact if grouped => LinkGroups::find(&model.net, model.min_packet()),
            _ => None,
        };
        let width = match config.window {
            WindowMode::Exact => groups.as_ref().map_or(lookahead, |g| g.lookahead),
            WindowMode::Quantized(q) if q == SimTime::ZERO => return Err(EngineError::ZeroWindow),
            WindowMode::Quantized(q) => q,
        };
        let n_chunks = if config.threads > 1 {
            (config.threads * CHUNKS_PER_THREAD).min(n_nodes.max(1))
        } else {
            1
        };
        let (placement, nodes) = Placement::new(&model.net, n_chunks, groups.as_ref());
        let batch = model.batches_departures();
        let mut engine = WindowEngine {
            model,
            config,
            width,
            chunks: nodes
                .into_iter()
                .enumerate()
                .map(|(i, nodes)| Chunk::new((i, n_chunks), nodes, batch, width, groups.as_ref()))
                .collect(),
            placement: Arc::new(placement),
            inboxes: (0..n_chunks).map(|_| Inbox::new(n_chunks)).collect(),
            side_records: model.flows.flows.iter().any(|f| f.transport.side_records()),
            stop: None,
            stats: RunStats {
                window: width,
                ..RunStats::default()
            },
            starts: Vec::new(),
            next_start: 0,
        };
        let flows = &model.flows.flows;
        engine.starts = (0..flows.len() as u32)
            .filter(|&f| model.starts_alone(f))
            .collect();
        for (node, event) in model.program_events() {
            let place = engine.placement.of(node);
            engine.chunks[place.chunk as usize].accept(place.slot, event, model);
        }
        engine
            .starts
            .sort_unstable_by_key(|&f| (flows[f as usize].start, f));
        Ok(engine)
    }

    /// Stops the run before the next window once `flag` is set ([`RunError::Interrupted`]).
    pub fn stop_when(mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) -> Self {
        self.stop = Some(flag);
        self
    }

    /// Handles every departure as its own event, never a window's as a batch
    /// (`engine/node/port/batch.rs`): the same results, for measuring what the batches save.
    pub fn per_event_departures(mut self) -> Self {
        for chunk in &mut self.chunks {
            chunk.batch = false;
        }
        self
    }

    /// The window width in use.
    pub fn width(&self) -> SimTime {
        self.width
    }

    /// The start time of the next flow not yet handed to its LP (`SimTime::MAX`: none).
    fn next_start_time(&self) -> SimTime {
        self.starts
            .get(self.next_start)
            .map_or(SimTime::MAX, |&f| self.model.flows.flows[f as usize].start)
    }

    /// Hands every flow that starts before `bound` to its source's LP, as the `FlowStart`
    /// event it would have had from the beginning (the queues order events by key alone, so
    /// when it arrives does not matter as long as it is there before its window runs).
    fn hand_over_starts(&mut self, bound: SimTime) {
        while self.next_start_time() < bound {
            let flow = self.starts[self.next_start];
            let node = self.model.flows.flows[flow as usize].src;
            let place = self.placement.of(node);
            self.chunks[place.chunk as usize].accept(
                place.slot,
                self.model.start_event(flow),
                self.model,
            );
            self.next_start += 1;
        }
    }

    /// Runs to the end; `progress` is called after each window with the window's start time.
    pub fn run(self, progress: impl FnMut(SimTime) + Send) -> Result<RunOutput, RunError> {
        self.run_traced(progress, &mut NoTrace)
    }

    /// Runs to the end, handing hop records and queue samples to `trace` in deterministic
    /// order (see [`TraceSink`]).
    pub fn run_traced(
        self,
        progress: impl FnMut(SimTime) + Send,
        trace: &mut (impl TraceSink + Send),
    ) -> Result<RunOutput, RunError> {
        // With more than one thread, the other threads run for the whole run (a `Team`) and
        // the window loop runs on this one.
        if self.config.threads > 1 {
            let workers = self.config.threads - 1;
            let team = Team::new(workers, self.chunks.len());
            let model = self.model;
            let placement = Arc::clone(&self.placement);
            std::thread::scope(|scope| {
                for w in 0..workers {
                    let team = &team;
                    let placement = &*placement;
                    scope.spawn(move || team.work(w, model, placement));
                }
                let _stop = StopOnDrop(&team);
                self.run_loop(progress, trace, Some(&team))
            })
        } else {
            self.run_loop(progress, trace, None)
        }
    }

    fn run_loop(
        mut self,
        mut progress: impl FnMut(SimTime),
        trace: &mut impl TraceSink,
        team: Option<&Team>,
    ) -> Result<RunOutput, RunError> {
        let end = self.config.end.unwrap_or(SimTime::MAX);
        let model = self.model;
        let quantum = match self.config.window {
            WindowMode::Exact => None,
            WindowMode::Quantized(q) => Some(q),
        };
        let interval = self.model.trace.queue_samples;
        let mut next_sample = interval.map_or(SimTime::MAX, |_| SimTime::ZERO);
        let mut sample_rows = Vec::new();
        let cc_interval = self.model.trace.cc_samples;
        let mut next_cc = cc_interval.map_or(SimTime::MAX, |_| SimTime::ZERO);
        let mut cc_rows = Vec::new();
        let mut window_records = Vec::new();
        let mut pfc_rows = PfcRows::default();
        // Quantized: the end of the q-aligned window in which the messages waiting in
        // `inboxes` were sent. A message due before it waits for it; any later one keeps its
        // exact time. (The aligned end, not the window's bound, which samples and the run's end
        // may cut short, so where arrivals land never depends on tracing.)
        let mut sent_in = SimTime::ZERO;
        let arrival = |t: SimTime, sent_in: SimTime| match quantum {
            Some(_) => t.max(sent_in),
            None => t,
        };
        loop {
            // The earliest pending event is in a queue or among the messages not yet delivered.
            let start = self
                .chunks
                .iter()
                .map(|c| c.min_next.min(arrival(c.out.min_out, sent_in)))
                .min()
                .unwrap_or(SimTime::MAX)
                .min(self.next_start_time());
            if start == SimTime::MAX || start >= end {
                break;
            }
            // Every event before `start` is done: the state now is the state at each sample
            // time up to `start`.
            while next_sample <= start {
                sampling::queues(&self.chunks, model, next_sample, &mut sample_rows, trace);
                next_sample = next_sample.saturating_add(interval.expect("sampling on"));
            }
            while next_cc <= start {
                sampling::cc(&self.chunks, model, next_cc, &mut cc_rows, trace);
                next_cc = next_cc.saturating_add(cc_interval.expect("sampling on"));
            }
            let window_end = match quantum {
                // Quantized windows are aligned to multiples of q, so cutting a window (at a
                // sample time or the end) never changes where arrivals land.
                Some(q) => SimTime((start.0 / q.0).saturating_add(1).saturating_mul(q.0)),
                None => start.saturating_add(self.width),
            };
            let bound = window_end.min(end).min(next_sample).min(next_cc);
            self.stats.windows += 1;
            self.hand_over_starts(bound);
            // One parallel phase per window: each chunk first takes the messages of the
            // previous window, then runs its LPs due before `bound`.
            let not_before = quantum.map(|_| sent_in);
            match team {
                Some(team) => team.step(
                    &mut self.chunks,
                    &mut self.inboxes,
                    Window { bound, not_before },
                    model,
                    &self.placement,
                ),
                None => Window { bound, not_before }.run(
                    &mut self.chunks,
                    &mut self.inboxes,
                    model,
                    &self.placement,
                ),
            }
            if self.model.trace.packet_hops.is_some() {
                for chunk in &mut self.chunks {
                    window_records.append(&mut chunk.hop_records);
                }
                window_records.sort_unstable_by_key(HopRecord::order_key);
                trace.hops(&mut window_records);
                window_records.clear();
            }
            if model.pfc.is_some() {
                pfc_rows.window(&mut self.chunks, trace);
            }
            // Hand each bucket to its destination chunk (pointer moves, buffers reused).
            for (source, chunk) in self.chunks.iter_mut().enumerate() {
                for (destination, bucket) in chunk.out.buckets.iter_mut().enumerate() {
                    std::mem::swap(bucket, &mut self.inboxes[destination].events[source]);
                }
                if self.side_records {
                    for (destination, bucket) in chunk.out.side.iter_mut().enumerate() {
                        std::mem::swap(bucket, &mut self.inboxes[destination].side[source]);
                    }
                }
            }
            sent_in = window_end;
            progress(start);
            if self.chunks.iter().any(|c| c.overflow) {
                break;
            }
            if self
                .stop
                .as_ref()
                .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
            {
                return Err(RunError::Interrupted);
            }
        }
        overflow_error(
            self.chunks
                .iter()
                .flat_map(|c| c.slots.iter().flatten())
                .map(|state| &**state),
        )?;
        self.stats.parked = self.chunks.iter().map(Chunk::parked).sum();
        self.stats.last_event = self
            .chunks
            .iter()
            .map(|c| c.last_event)
            .max()
            .unwrap_or(SimTime::ZERO);
        // One final sample at or after the last event captures the end state.
        if interval.is_some() && next_sample < end && next_sample != SimTime::MAX {
            sampling::queues(&self.chunks, model, next_sample, &mut sample_rows, trace);
        }
        let stats = self.stats;
        self.chunks.iter_mut().for_each(Chunk::release_run_buffers);
        self.inboxes = Vec::new();
        Ok(collect_output(
            model,
            self.chunks
                .iter()
                .flat_map(|c| c.slots.iter().flatten())
                .map(|state| &**state),
            stats,
            pfc_rows,
        ))
    }
}

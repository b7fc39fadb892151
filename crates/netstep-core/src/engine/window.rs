//! The window engine (conservative synchronous PDES with idle skipping).
//!
//! Each window: `T` = earliest pending event of any LP; the LPs whose next event is before
//! `T + W` run all their events before that bound in key order; then, at the barrier, their
//! outgoing messages are pushed into the receivers' event queues.
//!
//! LPs are dealt into `C` chunks (node `n` lives in chunk `n % C`, so every chunk gets a share
//! of hosts and of each switch tier). A chunk owns its LPs' states (boxed, allocated on first
//! use), their event queues ([`LpQueue`], a dense array apart from the states, so delivering a
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
//! [`WindowMode::Quantized`] arrivals are moved to `max(ceil_q(t), window_end)`.

use rayon::prelude::*;

use super::event::{Event, EventSink};
use super::lp_queue::LpQueue;
use super::node::NodeState;
use super::trace::{CcSample, HopRecord, NoTrace, QueueSample, TraceSink};
use super::{
    EngineConfig, Model, RunError, RunOutput, RunStats, WindowMode, collect_output, overflow_error,
};
use crate::telemetry::IntStack;
use crate::units::SimTime;

/// A cross-LP message: destination node and event.
type Message = (u32, Event);
/// A telemetry stack sent with a packet to another LP: destination node, packet id, stack.
type TelemetryMessage = (u32, u64, Box<IntStack>);

/// What a chunk's LPs send to other LPs during one window.
struct Outbox {
    /// Earliest (raw) time of the messages sent (so the next window can start before
    /// delivery).
    min_out: SimTime,
    /// Messages, one bucket per destination chunk.
    buckets: Vec<Vec<Message>>,
    /// Telemetry stacks, one bucket per destination chunk like `buckets`.
    telemetry: Vec<Vec<TelemetryMessage>>,
}

/// Where an LP's events go while it runs: its own queue, or the bucket of the destination's
/// chunk.
struct LpSink<'a> {
    queue: &'a mut LpQueue,
    out: &'a mut Outbox,
}

impl EventSink for LpSink<'_> {
    #[inline]
    fn local(&mut self, event: Event) {
        self.queue.push(event);
    }
    #[inline]
    fn remote(&mut self, node: u32, event: Event) {
        // The chunk count is a power of two: the chunk is the low bits of the node id.
        let out = &mut *self.out;
        let mask = out.buckets.len() as u32 - 1;
        out.min_out = out.min_out.min(event.key.time);
        out.buckets[(node & mask) as usize].push((node, event));
    }
    #[inline]
    fn telemetry(&mut self, node: u32, id: u64, stack: Box<IntStack>) {
        let mask = self.out.telemetry.len() as u32 - 1;
        self.out.telemetry[(node & mask) as usize].push((node, id, stack));
    }
}

/// The time of the earliest event in `queue` (`SimTime::MAX` when none).
fn next_time(queue: &LpQueue) -> SimTime {
    queue.peek().map_or(SimTime::MAX, |e| e.key.time)
}

/// Lets the LP with `state` and pending events `queue` handle every event before `bound`.
fn run_window(
    state: &mut NodeState,
    queue: &mut LpQueue,
    bound: SimTime,
    model: &Model,
    out: &mut Outbox,
) {
    while let Some(top) = queue.peek() {
        if top.key.time >= bound {
            break;
        }
        let event = queue.pop().expect("peeked");
        let mut sink = LpSink {
            queue: &mut *queue,
            out: &mut *out,
        };
        state.handle(event, model, &mut sink);
    }
}

/// The LPs of one chunk and their bookkeeping.
struct Chunk {
    /// LP of node `local * n_chunks + index` (`n_chunks` a power of two), allocated on first
    /// use.
    slots: Vec<Option<Box<NodeState>>>,
    /// Pending events per slot, apart from the states: delivering a message touches only this
    /// dense array and the queue's buffer, not the LP's state.
    queues: Vec<LpQueue>,
    /// Next event time per slot (`SimTime::MAX` when none).
    next: Vec<SimTime>,
    /// Slots with pending events (each once).
    active: Vec<u32>,
    /// Earliest `next` over `active`.
    min_next: SimTime,
    /// What this chunk's LPs sent in its last process phase.
    out: Outbox,
    /// Time of the last useful event this chunk handled.
    last_event: SimTime,
    /// Some LP of this chunk tried to schedule an event past the latest representable time.
    overflow: bool,
    /// Slots whose LP has been allocated, in allocation order (queue sampling visits these).
    allocated: Vec<u32>,
    /// Hop records produced in the current window.
    hop_records: Vec<HopRecord>,
}

impl Chunk {
    fn new(n_slots: usize, n_chunks: usize) -> Chunk {
        Chunk {
            slots: (0..n_slots).map(|_| None).collect(),
            queues: (0..n_slots).map(|_| LpQueue::default()).collect(),
            next: vec![SimTime::MAX; n_slots],
            active: Vec::new(),
            min_next: SimTime::MAX,
            out: Outbox {
                min_out: SimTime::MAX,
                buckets: (0..n_chunks).map(|_| Vec::new()).collect(),
                telemetry: (0..n_chunks).map(|_| Vec::new()).collect(),
            },
            last_event: SimTime::ZERO,
            overflow: false,
            allocated: Vec::new(),
            hop_records: Vec::new(),
        }
    }

    /// Runs every LP due before `bound` and keeps the others on the active list.
    fn process(&mut self, bound: SimTime, model: &Model) {
        self.out.min_out = SimTime::MAX;
        if self.min_next >= bound {
            return;
        }
        let mut min_next = SimTime::MAX;
        let Chunk {
            slots,
            queues,
            next,
            active,
            out,
            last_event,
            hop_records,
            overflow,
            ..
        } = self;
        // Compacts `active` in place (a plain loop: cheaper than `retain` for this closure).
        let mut kept = 0;
        for read in 0..active.len() {
            let local = active[read] as usize;
            if next[local] >= bound {
                min_next = min_next.min(next[local]);
                active[kept] = local as u32;
                kept += 1;
                continue;
            }
            let state = slots[local].as_mut().expect("active LP exists");
            let queue = &mut queues[local];
            run_window(state, queue, bound, model, out);
            *last_event = (*last_event).max(state.lp.last_useful);
            *overflow |= state.lp.overflow.is_some();
            if !state.lp.hop_records.is_empty() {
                hop_records.append(&mut state.lp.hop_records);
            }
            let at = next_time(queue);
            next[local] = at;
            if at != SimTime::MAX {
                min_next = min_next.min(at);
                active[kept] = local as u32;
                kept += 1;
            }
        }
        active.truncate(kept);
        self.min_next = min_next;
    }

    /// Pushes messages addressed to this chunk into their LPs' queues (and telemetry stacks
    /// into their side tables).
    fn deliver(
        &mut self,
        inbox: &mut Inbox,
        n_chunks: u32,
        model: &Model,
        quantum: Option<SimTime>,
        bound: SimTime,
    ) {
        for messages in inbox.events.iter_mut() {
            for (node, mut event) in messages.drain(..) {
                if let Some(q) = quantum {
                    event.key.time = event.key.time.ceil_to(q).max(bound);
                }
                let local = (node >> n_chunks.trailing_zeros()) as usize;
                let time = event.key.time;
                if self.slots[local].is_none() {
                    self.slots[local] = Some(Box::new(NodeState::for_node(node, model)));
                    self.allocated.push(local as u32);
                }
                self.queues[local].push(event);
                if self.next[local] == SimTime::MAX {
                    self.active.push(local as u32);
                }
                if time < self.next[local] {
                    self.next[local] = time;
                }
                self.min_next = self.min_next.min(time);
            }
        }
        // Every stack travels with an arrival delivered above, so its LP exists.
        for messages in inbox.telemetry.iter_mut() {
            for (node, id, stack) in messages.drain(..) {
                let local = (node >> n_chunks.trailing_zeros()) as usize;
                self.slots[local]
                    .as_mut()
                    .expect("the packet's arrival allocated the LP")
                    .lp
                    .telemetry_in(id, stack);
            }
        }
    }
}

/// The windowed parallel engine.
pub struct WindowEngine<'m> {
    model: &'m Model,
    config: EngineConfig,
    width: SimTime,
    chunks: Vec<Chunk>,
    /// Messages in transit, per destination chunk.
    inboxes: Vec<Inbox>,
    /// Some flow carries telemetry (otherwise its buckets stay empty and are not swapped).
    telemetry: bool,
    pool: Option<rayon::ThreadPool>,
    stats: RunStats,
}

/// What waits for one chunk at the start of a window: the messages its LPs were sent in the
/// previous one, indexed by source chunk (buffers reused).
struct Inbox {
    /// Events.
    events: Vec<Vec<Message>>,
    /// Telemetry stacks.
    telemetry: Vec<Vec<TelemetryMessage>>,
}

impl Inbox {
    fn new(n_chunks: usize) -> Inbox {
        Inbox {
            events: (0..n_chunks).map(|_| Vec::new()).collect(),
            telemetry: (0..n_chunks).map(|_| Vec::new()).collect(),
        }
    }
}

/// Chunks per worker thread: enough for rayon to balance uneven chunks.
const CHUNKS_PER_THREAD: usize = 4;

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
        let n_nodes = model.net.n_nodes();
        // A power of two, so a node's chunk and slot are a mask and a shift of its id.
        let n_chunks = if config.threads > 1 {
            (config.threads * CHUNKS_PER_THREAD)
                .min(n_nodes.max(1))
                .next_power_of_two()
        } else {
            1
        };
        let per_chunk = n_nodes.div_ceil(n_chunks);
        let mut engine = WindowEngine {
            model,
            config,
            width,
            chunks: (0..n_chunks)
                .map(|_| Chunk::new(per_chunk, n_chunks))
                .collect(),
            inboxes: (0..n_chunks).map(|_| Inbox::new(n_chunks)).collect(),
            telemetry: model.flows.flows.iter().any(|f| f.transport.telemetry()),
            pool,
            stats: RunStats {
                window: width,
                ..RunStats::default()
            },
        };
        for (node, event) in model.initial_events() {
            let chunk = node as usize % n_chunks;
            engine.inboxes[chunk].events[0].push((node, event));
        }
        for (chunk, inbox) in engine.chunks.iter_mut().zip(engine.inboxes.iter_mut()) {
            chunk.deliver(inbox, n_chunks as u32, model, None, SimTime::ZERO);
        }
        Ok(engine)
    }

    /// The window width in use.
    pub fn width(&self) -> SimTime {
        self.width
    }

    /// Runs to the end; `progress` is called after each window with the window's start time.
    pub fn run(self, progress: impl FnMut(SimTime) + Send) -> Result<RunOutput, RunError> {
        self.run_traced(progress, &mut NoTrace)
    }

    /// Runs to the end, handing hop records and queue samples to `trace` in deterministic
    /// order (see [`TraceSink`]).
    pub fn run_traced(
        mut self,
        progress: impl FnMut(SimTime) + Send,
        trace: &mut (impl TraceSink + Send),
    ) -> Result<RunOutput, RunError> {
        // The window loop itself runs on a pool thread, so each window's fork-join is a cheap
        // in-pool join rather than a job injected from outside the pool.
        match self.pool.take() {
            Some(pool) => pool.install(|| self.run_loop(progress, trace, true)),
            None => self.run_loop(progress, trace, false),
        }
    }

    /// Samples every port that has carried traffic at time `at`.
    fn sample_queues(&self, at: SimTime, rows: &mut Vec<QueueSample>, trace: &mut impl TraceSink) {
        for chunk in &self.chunks {
            for &local in &chunk.allocated {
                let state = chunk.slots[local as usize].as_ref().expect("allocated");
                for (port_local, port) in state.ports.iter().enumerate() {
                    if !port.is_used() {
                        continue;
                    }
                    let row = QueueSample {
                        time_ps: at.0,
                        port: self.model.net.port_id(state.node(), port_local as u32),
                        node: state.node(),
                        queue_bytes: port.queue_bytes(),
                        queue_packets: port.queue_len() as u32,
                        tx_bytes: port.tx_bytes,
                        tx_packets: port.tx_packets,
                        drops: port.drops() + port.lost(),
                        ecn_marks: port.ecn_marks(),
                    };
                    rows.push(row);
                }
            }
        }
        rows.sort_unstable_by_key(|r| r.port);
        trace.samples(rows);
    }

    /// Samples the congestion control of every running TCP flow (of the sampled flows) at
    /// time `at`.
    fn sample_cc(&self, at: SimTime, rows: &mut Vec<CcSample>, trace: &mut impl TraceSink) {
        let keep = self.model.trace.cc_flows.as_deref();
        for chunk in &self.chunks {
            for &local in &chunk.allocated {
                let state = chunk.slots[local as usize].as_ref().expect("allocated");
                for sender in state.senders().iter().flatten() {
                    let row = match sender {
                        crate::transport::Sender::Tcp(tcp)
                            if !tcp.is_done() && tcp.failure.is_none() =>
                        {
                            tcp.cc_sample(at)
                        }
                        crate::transport::Sender::Rdma(rdma)
                            if !rdma.is_done() && rdma.failure.is_none() =>
                        {
                            rdma.cc_sample(at)
                        }
                        _ => continue,
                    };
                    if keep.is_none_or(|k| k.get(row.flow as usize).copied().unwrap_or(false)) {
                        rows.push(row);
                    }
                }
            }
        }
        rows.sort_unstable_by_key(|r| r.flow);
        trace.cc_samples(rows);
    }

    fn run_loop(
        mut self,
        mut progress: impl FnMut(SimTime),
        trace: &mut impl TraceSink,
        parallel: bool,
    ) -> Result<RunOutput, RunError> {
        let end = self.config.end.unwrap_or(SimTime::MAX);
        let model = self.model;
        let n_chunks = self.chunks.len();
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
        // Bound of the window whose messages wait in `inboxes` (quantized delivery needs it).
        let mut sent_in = SimTime::ZERO;
        let arrival = |t: SimTime, sent_in: SimTime| match quantum {
            Some(q) if t != SimTime::MAX => t.ceil_to(q).max(sent_in),
            _ => t,
        };
        loop {
            // The earliest pending event is in a queue or among the messages not yet delivered.
            let start = self
                .chunks
                .iter()
                .map(|c| c.min_next.min(arrival(c.out.min_out, sent_in)))
                .min()
                .unwrap_or(SimTime::MAX);
            if start == SimTime::MAX || start >= end {
                break;
            }
            // Every event before `start` is done: the state now is the state at each sample
            // time up to `start`.
            while next_sample <= start {
                self.sample_queues(next_sample, &mut sample_rows, trace);
                next_sample = next_sample.saturating_add(interval.expect("sampling on"));
            }
            while next_cc <= start {
                self.sample_cc(next_cc, &mut cc_rows, trace);
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
            // One parallel phase per window: each chunk first takes the messages of the
            // previous window, then runs its LPs due before `bound`.
            let step = |(chunk, inbox): (&mut Chunk, &mut Inbox)| {
                chunk.deliver(inbox, n_chunks as u32, model, quantum, sent_in);
                chunk.process(bound, model);
            };
            if parallel {
                self.chunks
                    .par_iter_mut()
                    .zip(self.inboxes.par_iter_mut())
                    .for_each(step);
            } else {
                self.chunks
                    .iter_mut()
                    .zip(self.inboxes.iter_mut())
                    .for_each(step);
            }
            if self.model.trace.packet_hops.is_some() {
                for chunk in &mut self.chunks {
                    window_records.append(&mut chunk.hop_records);
                }
                window_records.sort_unstable_by_key(HopRecord::order_key);
                trace.hops(&mut window_records);
                window_records.clear();
            }
            // Hand each bucket to its destination chunk (pointer moves, buffers reused).
            for (source, chunk) in self.chunks.iter_mut().enumerate() {
                for (destination, bucket) in chunk.out.buckets.iter_mut().enumerate() {
                    std::mem::swap(bucket, &mut self.inboxes[destination].events[source]);
                }
                if self.telemetry {
                    for (destination, bucket) in chunk.out.telemetry.iter_mut().enumerate() {
                        std::mem::swap(bucket, &mut self.inboxes[destination].telemetry[source]);
                    }
                }
            }
            sent_in = bound;
            progress(start);
            if self.chunks.iter().any(|c| c.overflow) {
                break;
            }
        }
        overflow_error(
            self.chunks
                .iter()
                .flat_map(|c| c.slots.iter().flatten())
                .map(|state| &**state),
        )?;
        self.stats.last_event = self
            .chunks
            .iter()
            .map(|c| c.last_event)
            .max()
            .unwrap_or(SimTime::ZERO);
        // One final sample at or after the last event captures the end state.
        if interval.is_some() && next_sample < end && next_sample != SimTime::MAX {
            self.sample_queues(next_sample, &mut sample_rows, trace);
        }
        let stats = self.stats;
        Ok(collect_output(
            model,
            self.chunks
                .iter()
                .flat_map(|c| c.slots.iter().flatten())
                .map(|state| &**state),
            stats,
        ))
    }
}

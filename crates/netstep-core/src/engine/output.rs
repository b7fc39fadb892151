//! What a run produced ([`RunOutput`]: flows, ports, totals, deliveries, PFC frames) and the
//! reduction of the LPs' states into it, in a fixed order (node, flow id, port id), so the
//! output never depends on the engine or the thread count.

use std::collections::BTreeMap;

use super::RunError;
use super::chunk::Chunk;
use super::model::Model;
use super::node::{Delivery, LpRare, NodeCounters, NodeState, PortState};
use super::port_outcomes::PortOutcomes;
use super::trace::TraceSink;
use crate::flow::{FlowOutcome, FlowOutcomes};
use crate::pfc::PfcEvent;
use crate::units::SimTime;

/// Totals of one run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Events handled.
    pub events: u64,
    /// Packet transmissions (packets × egress ports traversed).
    pub packet_hops: u64,
    /// Packets dropped.
    pub drops: u64,
    /// Packets that found no route.
    pub misrouted: u64,
    /// Of `events`, the departures a switch port handled inside a batch instead of as a
    /// queued event (the same simulation; see `engine/node/port/batch.rs`).
    pub batched: u64,
    /// Windows executed (the reference engine reports 0).
    pub windows: u64,
    /// Times an LP left the active list to wait for a far-ahead event (`engine/far.rs`; the
    /// reference engine reports 0).
    pub parked: u64,
    /// Time of the last useful event handled (stale or cancelled timers do not count).
    pub last_event: SimTime,
    /// Window width used (in exact mode the lookahead, or that of the links between link
    /// groups where those form: [`super::groups`]).
    pub window: SimTime,
}

/// Counters of one egress port at the end of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortOutcome {
    /// Global port id.
    pub port: u32,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Packets dropped.
    pub drops: u64,
    /// Largest queue seen, packets.
    pub max_queue_packets: u64,
    /// Largest queue seen, bytes.
    pub max_queue_bytes: u64,
    /// Packets still waiting at the end.
    pub queued_at_end: u64,
    /// Packets lost on the wire.
    pub lost: u64,
    /// Packets a trTCM policer colored yellow (forwarded).
    pub yellow: u64,
    /// Packets the queue element marked (ECN CE or DECbit).
    pub ecn_marks: u64,
}

/// What a run produced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunOutput {
    /// One outcome per flow, by flow id (kept compactly: [`FlowOutcomes`]).
    pub flows: FlowOutcomes,
    /// Counters of every port that carried traffic, by global port id (kept compactly:
    /// [`PortOutcomes`]).
    pub ports: PortOutcomes,
    /// Totals.
    pub stats: RunStats,
    /// Delivered data packets, sorted, when the model asked for them.
    pub deliveries: Vec<Delivery>,
    /// PFC: every PAUSE and RESUME frame sent, sorted by time, node, port, unless a trace
    /// sink took them window by window ([`super::trace::TraceSink::takes_pfc`]): then none.
    pub pfc_events: Vec<PfcEvent>,
    /// PFC: PAUSE frames sent (whether kept in `pfc_events` or handed to a trace sink).
    pub pfc_pauses: u64,
    /// PFC: RESUME frames sent (likewise).
    pub pfc_resumes: u64,
    /// PFC: lossless arrivals beyond `xoff + headroom` (the headroom was too small).
    pub pfc_headroom_exceeded: u64,
    /// PFC: a cycle of nodes whose ports towards the next one were still paused with
    /// packets waiting when the run ended (a deadlock), if any.
    pub pfc_deadlock: Option<Vec<u32>>,
    /// The job's ranks, by rank, when the model has a job.
    pub job: Option<Vec<RankOutcome>>,
}

/// What one job rank did ([`crate::job`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RankOutcome {
    /// The rank.
    pub rank: u32,
    /// Its host node.
    pub host: u32,
    /// When each op happened (all `None` for a rank whose walker never ran).
    pub ops: Vec<crate::job::OpTimes>,
    /// When the rank's last op was over (its walk ended), if it was.
    pub walked: Option<SimTime>,
    /// When the rank finished, if it did.
    pub finished: Option<SimTime>,
}

/// The PFC frames of a run as the window engine collects them: each window's frames, sorted,
/// handed to a trace sink that takes them or kept (windows are disjoint in time and run in
/// order, so the kept rows are in the final order), and the frames counted either way.
#[derive(Debug, Default)]
pub(crate) struct PfcRows {
    /// Frames kept for [`RunOutput::pfc_events`].
    kept: Vec<PfcEvent>,
    /// One window's frames (buffer reused).
    window: Vec<PfcEvent>,
    /// PAUSE and RESUME frames handed to the trace sink.
    streamed: (u64, u64),
}

impl PfcRows {
    /// Takes the frames `chunks` collected in the window that just ran.
    pub(super) fn window(&mut self, chunks: &mut [Chunk], trace: &mut impl TraceSink) {
        for chunk in chunks.iter_mut() {
            self.window.append(&mut chunk.pfc_rows);
        }
        if self.window.is_empty() {
            return;
        }
        self.window.sort_unstable();
        if trace.takes_pfc() {
            let pauses = self.window.iter().filter(|e| e.pause).count() as u64;
            self.streamed.0 += pauses;
            self.streamed.1 += self.window.len() as u64 - pauses;
            trace.pfc(&mut self.window);
            self.window.clear();
        } else {
            self.kept.append(&mut self.window);
        }
    }
}

/// Reduces per-LP states into a [`RunOutput`] in a fixed order (flow id, port id); `pfc`:
/// the PFC frames taken from the switches while the run went (the rest are still there).
pub(crate) fn collect_output<'a>(
    model: &Model,
    states: impl Iterator<Item = &'a NodeState>,
    mut stats: RunStats,
    pfc: PfcRows,
) -> RunOutput {
    let n = model.flows.len();
    // Drops (few flows have any) and marks as the LPs counted them, summed per flow.
    let mut drops: BTreeMap<u32, u64> = BTreeMap::new();
    let mut marks = vec![0u64; n];
    // Port ids are node-major (`Network::port_id`) and the states go by node: ascending.
    let mut counters = NodeCounters::default();
    let mut deliveries = Vec::new();
    let mut pfc_events = pfc.kept;
    let mut pfc_headroom_exceeded = 0;
    let mut stuck = Vec::new();
    let mut by_node: Vec<&NodeState> = states.collect();
    by_node.sort_by_key(|s| s.node());
    // Counted first: a vector grown by doubling would hold up to twice the rows (at a
    // million hosts, two million ports, 160 MB more at the run's peak).
    let used = by_node
        .iter()
        .map(|s| s.ports.iter().filter(|p| p.is_used()).count())
        .sum();
    let mut ports = PortOutcomes::with_capacity(used);
    let no_rare = LpRare::default();
    for state in &by_node {
        let lp = &state.lp;
        counters.events += lp.counters.events;
        counters.packet_hops += lp.counters.packet_hops;
        counters.drops += lp.counters.drops;
        counters.misrouted += lp.counters.misrouted;
        counters.batched += lp.counters.batched;
        let rare = lp.rare().unwrap_or(&no_rare);
        deliveries.extend_from_slice(&rare.deliveries);
        if let Some(switch) = state.switch() {
            pfc_events.extend_from_slice(&switch.pfc_events);
            pfc_headroom_exceeded += switch.pfc.as_ref().map_or(0, |p| p.headroom_exceeded);
        }
        for (local, port) in state.ports.iter().enumerate() {
            if port.paused() != 0 && port.queue_len() > 0 {
                let peer = model.net.port_peer[model.net.port_id(lp.node, local as u32) as usize];
                stuck.push((lp.node, peer));
            }
        }
        for (&flow, &count) in &rare.flow_drops {
            *drops.entry(flow).or_insert(0) += count;
        }
        for (&flow, &count) in &rare.flow_marks {
            marks[flow as usize] += count;
        }
        for (local, port) in state.ports.iter().enumerate() {
            if port.is_used() {
                let id = model.net.port_id(lp.node, local as u32);
                ports.push(port_outcome(id, port));
            }
        }
    }
    let mut flows = FlowOutcomes::with_capacity(n);
    for (flow, &ecn_marks) in marks.iter().enumerate() {
        let mut outcome = FlowOutcome::nothing(flow as u32);
        outcome.packets_dropped = drops.get(&(flow as u32)).copied().unwrap_or(0);
        outcome.ecn_marks = ecn_marks;
        let spec = &model.flows.flows[flow];
        let find = |node: u32| {
            by_node
                .binary_search_by_key(&node, |s| s.node())
                .ok()
                .map(|i| by_node[i])
        };
        let source = find(spec.src);
        if let Some(host) = source.and_then(|s| s.host()) {
            (outcome.start, outcome.deps_done) =
                host.started(flow as u32, spec, &model.flows, model.job.as_deref());
        }
        if let Some(Some(sender)) =
            source.and_then(|s| s.senders().get(model.flows.src_slot[flow] as usize))
        {
            let c = sender.counters();
            outcome.packets_sent = c.packets_sent;
            outcome.retransmits = c.retransmits;
            outcome.fast_retransmits = c.fast_retransmits;
            outcome.timeouts = c.timeouts;
            outcome.failure = c.failure;
            outcome.handshake = c.handshake;
        }
        if let Some(Some(receiver)) =
            find(spec.dst).and_then(|s| s.receivers().get(model.flows.dst_slot[flow] as usize))
        {
            (outcome.packets_delivered, outcome.end) = receiver.outcome();
        }
        flows.push(outcome);
    }
    stats.events = counters.events;
    stats.packet_hops = counters.packet_hops;
    stats.drops = counters.drops;
    stats.misrouted = counters.misrouted;
    stats.batched = counters.batched;
    deliveries.sort_unstable();
    pfc_events.sort_unstable();
    let pauses = pfc_events.iter().filter(|e| e.pause).count() as u64;
    let job = model.job.as_deref().map(|job| job_outcome(job, &by_node));
    RunOutput {
        flows,
        ports,
        stats,
        deliveries,
        pfc_pauses: pfc.streamed.0 + pauses,
        pfc_resumes: pfc.streamed.1 + (pfc_events.len() as u64 - pauses),
        pfc_events,
        pfc_headroom_exceeded,
        pfc_deadlock: crate::pfc::find_deadlock(&stuck),
        job,
    }
}

/// Every rank's times from its host's walker, by rank.
fn job_outcome(job: &crate::job::JobSpec, by_node: &[&NodeState]) -> Vec<RankOutcome> {
    (0..job.ranks())
        .map(|rank| {
            let host = job.hosts[rank as usize];
            let walker = by_node
                .binary_search_by_key(&host, |s| s.node())
                .ok()
                .and_then(|i| by_node[i].host())
                .and_then(|h| h.program.as_ref()?.walker.as_deref());
            RankOutcome {
                rank,
                host,
                ops: walker.map_or_else(
                    || vec![crate::job::OpTimes::default(); job.ops.len()],
                    |w| w.times().to_vec(),
                ),
                walked: walker.and_then(|w| w.walked()),
                finished: walker.and_then(|w| w.finished(job)),
            }
        })
        .collect()
}

fn port_outcome(port: u32, state: &PortState) -> PortOutcome {
    PortOutcome {
        port,
        tx_packets: state.tx_packets(),
        tx_bytes: state.tx_bytes(),
        drops: state.drops(),
        max_queue_packets: state.max_queue_packets(),
        max_queue_bytes: state.max_queue_bytes(),
        queued_at_end: state.queue_len() as u64 + state.held() as u64,
        lost: state.lost(),
        yellow: state.yellow(),
        ecn_marks: state.ecn_marks(),
    }
}

/// The first fault any LP reported, as an error: a time overflow (lowest node first), else a
/// telemetry overflow (lowest node first).
pub(crate) fn overflow_error<'a>(
    states: impl Iterator<Item = &'a NodeState>,
) -> Result<(), RunError> {
    let states: Vec<&NodeState> = states.collect();
    if let Some((node, at)) = states
        .iter()
        .filter_map(|s| s.lp.rare()?.overflow.map(|at| (s.node(), at)))
        .min()
    {
        return Err(RunError::TimeOverflow { node, at_ps: at.0 });
    }
    match states
        .iter()
        .filter_map(|s| s.lp.rare()?.telemetry_overflow.map(|flow| (s.node(), flow)))
        .min()
    {
        Some((node, flow)) => Err(RunError::TelemetryOverflow { flow, node }),
        None => Ok(()),
    }
}

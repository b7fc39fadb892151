//! What every logical process keeps about itself, host or switch: its node id, the counter
//! that orders its own events, what it reports at the end of the run (counters, drops and
//! marks per flow, deliveries, hop records), the side records of the packets it holds, and
//! the first event it could not schedule.

use std::collections::BTreeMap;

use crate::engine::event::{
    Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase, TimerSide,
};
use crate::engine::model::Model;
use crate::engine::trace::{DropReason, HopRecord};
use crate::packet::Packet;
use crate::queue::Entry;
use crate::telemetry::{SideRecord, SideTable};
use crate::units::SimTime;

/// Counters a logical process keeps about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Events handled.
    pub events: u64,
    /// Packet transmissions started (one per packet per egress port).
    pub packet_hops: u64,
    /// Packets dropped here.
    pub drops: u64,
    /// Packets that arrived at a host they were not addressed to, or found no route.
    pub misrouted: u64,
    /// Of `events`, those handled inside a batch of departures instead of being queued
    /// (`port/batch.rs`).
    pub batched: u64,
}

/// One data packet reaching its receiver (recorded on request, for analysis and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delivery {
    /// Arrival time at the receiver, ps.
    pub arrived_ps: u64,
    /// Flow id.
    pub flow: u32,
    /// Per-flow packet number.
    pub number: u32,
    /// Segment / packet sequence number.
    pub seq: u32,
    /// Time the packet entered its sender's NIC, ps.
    pub sent_ps: u64,
    /// Wire size, bytes.
    pub size_bytes: u32,
}

/// The bookkeeping of one logical process, shared by hosts and switches.
#[derive(Clone, Debug)]
pub struct Lp {
    /// Node index.
    pub node: u32,
    /// Creation counter of this LP's own events (the tie among its simultaneous events).
    next_seq: u64,
    /// Counters.
    pub counters: NodeCounters,
    /// This LP must stop the run ([`LpRare::overflow`] or [`LpRare::telemetry_overflow`] is
    /// set): read after every LP run, so kept here rather than behind `rare`.
    failed: bool,
    /// Time of the last event that did something (not a stale or cancelled timer).
    pub last_useful: SimTime,
    /// Side records of the packets this LP holds (allocated on first use).
    pub side_records: Option<Box<SideTable>>,
    /// What most LPs of a large run never keep (allocated on first use: a host of a
    /// million-host fan-in holds one word for it).
    pub rare: Option<Box<LpRare>>,
}

/// The part of an LP's bookkeeping that few LPs use: per-flow drops and marks, deliveries,
/// hop records, overflows.
#[derive(Clone, Debug, Default)]
pub struct LpRare {
    /// Drops per flow at this node.
    pub flow_drops: BTreeMap<u32, u64>,
    /// Marks (ECN CE or DECbit) per flow at this node.
    pub flow_marks: BTreeMap<u32, u64>,
    /// Data packets delivered here (only when [`Model::record_deliveries`] is set).
    pub deliveries: Vec<Delivery>,
    /// Hop records of the current window (packet tracing only).
    pub hop_records: Vec<HopRecord>,
    /// The first event this LP tried to schedule past [`MAX_EVENT_TIME`], if any: the run
    /// stops with an error.
    pub overflow: Option<SimTime>,
    /// The flow of the first packet that crossed more switches here than its telemetry stack
    /// holds, if any: the run stops with an error.
    pub telemetry_overflow: Option<u32>,
}

impl Lp {
    /// Fresh bookkeeping for `node`.
    pub fn new(node: u32) -> Lp {
        Lp {
            node,
            next_seq: 0,
            counters: NodeCounters::default(),
            failed: false,
            last_useful: SimTime::ZERO,
            side_records: None,
            rare: None,
        }
    }

    /// The rarely used bookkeeping, allocated on first use.
    #[inline]
    pub fn rare_mut(&mut self) -> &mut LpRare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// The rarely used bookkeeping, if this LP has any.
    #[inline]
    pub fn rare(&self) -> Option<&LpRare> {
        self.rare.as_deref()
    }

    /// Stores the side record of a packet that is arriving here.
    pub fn side_record_in(&mut self, id: u64, stack: Box<SideRecord>) {
        self.side_records
            .get_or_insert_with(Box::<SideTable>::default)
            .insert(id, stack);
    }

    /// Takes the side record of `packet` out of the side table (a packet leaving, being
    /// consumed or dropped).
    #[inline]
    pub(super) fn side_record_take(&mut self, packet: &Packet) -> Option<Box<SideRecord>> {
        if !packet.has(Packet::SIDE_RECORD) {
            return None;
        }
        self.side_records.as_mut()?.take(packet.id())
    }

    /// True when this LP must stop the run (an unschedulable time, a telemetry overflow).
    #[inline]
    pub fn failed(&self) -> bool {
        self.failed
    }

    /// Records `at` as this LP's first unschedulable time (the run stops with an error).
    #[inline]
    pub(super) fn overflowed(&mut self, at: SimTime) {
        self.failed = true;
        self.rare_mut().overflow.get_or_insert(at);
    }

    /// Records the first flow whose packet found its telemetry stack full here (the run
    /// stops with an error).
    pub(super) fn telemetry_overflowed(&mut self, flow: u32) {
        self.failed = true;
        self.rare_mut().telemetry_overflow.get_or_insert(flow);
    }

    /// Schedules an event for this LP at `at` (created `now`); an event past
    /// [`MAX_EVENT_TIME`] is not scheduled but recorded in [`LpRare::overflow`].
    #[inline]
    pub(super) fn schedule_local(
        &mut self,
        at: SimTime,
        now: SimTime,
        phase: Phase,
        mut kind: EventKind,
        sink: &mut impl EventSink,
    ) {
        if at > MAX_EVENT_TIME {
            self.overflowed(at);
            return;
        }
        match &mut kind {
            EventKind::PortReady { seq, .. } | EventKind::Timer { seq, .. } => {
                *seq = self.next_seq;
                self.next_seq += 1;
            }
            EventKind::Arrive(_)
            | EventKind::FlowStart { .. }
            | EventKind::DependencyDone { .. }
            | EventKind::Program { .. } => {}
        }
        sink.local(Event {
            key: EventKey::new(at, phase, now),
            kind,
        });
    }

    /// Schedules the timers a transport of `flow` (on `side`) asked for, in the order given,
    /// emptying `timers`.
    pub(super) fn schedule_timers(
        &mut self,
        flow: u32,
        side: TimerSide,
        timers: &mut Vec<(SimTime, u32)>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        for (at, token) in timers.drain(..) {
            let kind = EventKind::Timer {
                flow,
                token,
                side,
                seq: 0,
            };
            self.schedule_local(at, now, Phase::Timer, kind, sink);
        }
    }

    /// Counts a packet of `flow` lost here (dropped by a queue element or on the wire).
    #[inline]
    pub(super) fn count_drop(&mut self, flow: Option<u32>) {
        self.counters.drops += 1;
        if let Some(flow) = flow {
            *self.rare_mut().flow_drops.entry(flow).or_insert(0) += 1;
        }
    }

    /// Whether the hop of `packet` arriving here at `now` is recorded in the packet trace
    /// (decided at arrival from the filters and the packet id only).
    #[inline]
    pub(super) fn traced(&self, packet: &Packet, now: SimTime, model: &Model) -> bool {
        model
            .trace
            .packet_hops
            .as_ref()
            .is_some_and(|f| f.accepts(packet, self.node, now))
    }

    /// Records the hop of `entry` at global port `port` if it is traced.
    #[inline]
    pub(super) fn record_hop(
        &mut self,
        entry: &Entry,
        port: u32,
        transmitted: Option<(u64, u64)>,
        drop: Option<DropReason>,
    ) {
        if entry.traced {
            self.push_hop(entry, port, transmitted, drop);
        }
    }

    /// [`Lp::record_hop`] for a traced hop (out of line: most hops are not traced).
    #[cold]
    #[inline(never)]
    fn push_hop(
        &mut self,
        entry: &Entry,
        port: u32,
        transmitted: Option<(u64, u64)>,
        drop: Option<DropReason>,
    ) {
        let packet = &entry.packet;
        let node = self.node;
        self.rare_mut().hop_records.push(HopRecord {
            packet_id: packet.id(),
            flow: packet.flow,
            hop: packet.hop as u16,
            node,
            port,
            kind: packet.kind,
            seq: packet.seq,
            size_bytes: packet.size_bytes,
            arrive_ps: entry.arrived_ps,
            dequeue_ps: transmitted.map(|t| t.0),
            depart_ps: transmitted.map(|t| t.1),
            queue_bytes: entry.ahead_bytes,
            queue_packets: entry.ahead_packets,
            ecn: packet.ecn.bits(),
            drop,
        });
    }
}

//! Per-packet and per-queue tracing: what to record ([`TraceConfig`]), the records the element
//! code produces ([`HopRecord`], [`QueueSample`], [`CcSample`]) and where the engine hands them
//! ([`TraceSink`]). Recording is decided per packet per hop at arrival, from the filters only,
//! so the same packets are traced whatever the thread count.

use crate::packet::{Packet, PacketKind};
use crate::units::SimTime;

/// Which packet hops to record.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HopFilter {
    /// Only these flows (`flows[flow]` true); `None` = all.
    pub flows: Option<Vec<bool>>,
    /// Only egress ports of these nodes (`nodes[node]` true); `None` = all.
    pub nodes: Option<Vec<bool>>,
    /// Only hops whose arrival is at or after this time.
    pub from: SimTime,
    /// Only hops whose arrival is before this time (`SimTime::MAX` = no limit).
    pub until: SimTime,
    /// Keep 1 packet in N, chosen by a hash of the packet id (1 = every packet).
    pub one_in: u32,
}

impl HopFilter {
    /// Records every hop of every packet.
    pub fn all() -> HopFilter {
        HopFilter {
            flows: None,
            nodes: None,
            from: SimTime::ZERO,
            until: SimTime::MAX,
            one_in: 1,
        }
    }

    /// Whether the hop of `packet` arriving at `node` at `now` is recorded.
    #[inline]
    pub fn accepts(&self, packet: &Packet, node: u32, now: SimTime) -> bool {
        now >= self.from
            && now < self.until
            && self
                .flows
                .as_ref()
                .is_none_or(|f| f.get(packet.flow as usize).copied().unwrap_or(false))
            && self
                .nodes
                .as_ref()
                .is_none_or(|n| n.get(node as usize).copied().unwrap_or(false))
            && (self.one_in <= 1 || packet_hash(packet.id()).is_multiple_of(self.one_in as u64))
    }
}

/// The deterministic hash used for 1-in-N packet sampling (splitmix64 finalizer).
pub fn packet_hash(id: u64) -> u64 {
    crate::rng::mix64(id.wrapping_add(0x9e37_79b9_7f4a_7c15))
}

/// What a run traces beyond the always-written tables.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceConfig {
    /// Per-packet hop records, filtered; `None` = off.
    pub packet_hops: Option<HopFilter>,
    /// Queue sampling interval; `None` = off.
    pub queue_samples: Option<SimTime>,
    /// Congestion-control sampling interval; `None` = off.
    pub cc_samples: Option<SimTime>,
    /// Flows whose congestion control is sampled (`flows[flow]` true); `None` = all.
    pub cc_flows: Option<Vec<bool>>,
}

/// Why a packet was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum DropReason {
    /// The egress buffer was full.
    BufferFull = 0,
    /// Lost on the wire (random link loss).
    LinkLoss = 1,
    /// Dropped early by an AQM (RED).
    Early = 2,
    /// Sent onto a dead link, or on the wire when its link went down.
    LinkDown = 3,
    /// Colored red by a trTCM policer.
    Policed = 4,
}

impl DropReason {
    /// The name used in traces.
    pub const fn name(self) -> &'static str {
        match self {
            DropReason::BufferFull => "buffer_full",
            DropReason::LinkLoss => "link_loss",
            DropReason::Early => "early",
            DropReason::LinkDown => "link_down",
            DropReason::Policed => "policed",
        }
    }
}

/// One packet at one egress queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HopRecord {
    /// Packet id (flow << 32 | per-flow number).
    pub packet_id: u64,
    /// Flow id.
    pub flow: u32,
    /// Hop index (0 = the sender's NIC).
    pub hop: u16,
    /// Node owning the egress port.
    pub node: u32,
    /// Global port id.
    pub port: u32,
    /// Data or ACK.
    pub kind: PacketKind,
    /// Sequence / ACK number.
    pub seq: u32,
    /// Wire size.
    pub size_bytes: u32,
    /// Arrival at the node (= enqueue: forwarding takes no time), ps.
    pub arrive_ps: u64,
    /// Start of transmission, ps (`None` when dropped at the queue).
    pub dequeue_ps: Option<u64>,
    /// End of transmission (last bit out), ps (`None` when dropped at the queue).
    pub depart_ps: Option<u64>,
    /// Bytes waiting ahead of the packet at enqueue.
    pub queue_bytes: u64,
    /// Packets waiting ahead of the packet at enqueue.
    pub queue_packets: u32,
    /// ECN codepoint.
    pub ecn: u8,
    /// Why it was dropped, if it was.
    pub drop: Option<DropReason>,
}

impl HopRecord {
    /// The time the record became final (dequeue, or the drop): its position in the trace is
    /// ordered by `(final time, packet id, hop)`, which is independent of thread count.
    pub fn order_key(&self) -> (u64, u64, u16) {
        (
            self.dequeue_ps.unwrap_or(self.arrive_ps),
            self.packet_id,
            self.hop,
        )
    }
}

/// The state of one egress port at a sample time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct QueueSample {
    /// Sample time, ps.
    pub time_ps: u64,
    /// Global port id.
    pub port: u32,
    /// Node owning the port.
    pub node: u32,
    /// Bytes waiting.
    pub queue_bytes: u64,
    /// Packets waiting.
    pub queue_packets: u32,
    /// Bytes transmitted so far.
    pub tx_bytes: u64,
    /// Packets transmitted so far.
    pub tx_packets: u64,
    /// Packets dropped so far (buffer full and link loss).
    pub drops: u64,
    /// Packets ECN-marked so far.
    pub ecn_marks: u64,
}

/// A congestion-control sample; transports produce them ([`crate::transport::Sender::cc_sample`]).
pub use crate::transport::sample::CcSample;

/// Receives trace records from the engine, in deterministic order: hop records window by
/// window (each window's records sorted by [`HopRecord::order_key`]), queue samples time by
/// time (each sample's rows sorted by port).
pub trait TraceSink {
    /// The hop records of one window.
    fn hops(&mut self, records: &mut Vec<HopRecord>);
    /// All rows of one sample time.
    fn samples(&mut self, rows: &mut Vec<QueueSample>);
    /// All congestion-control rows of one sample time (sorted by flow).
    fn cc_samples(&mut self, rows: &mut Vec<CcSample>);
    /// Whether this sink takes the PAUSE and RESUME frames window by window
    /// ([`TraceSink::pfc`]); if not (the default), the run keeps them all in
    /// [`super::RunOutput::pfc_events`].
    fn takes_pfc(&self) -> bool {
        false
    }
    /// The PAUSE and RESUME frames of one window, sorted as [`super::RunOutput::pfc_events`]
    /// (called only when [`TraceSink::takes_pfc`]); `rows` is left empty.
    fn pfc(&mut self, rows: &mut Vec<crate::pfc::PfcEvent>) {
        rows.clear();
    }
}

/// A sink that discards everything (untraced runs).
pub struct NoTrace;

impl TraceSink for NoTrace {
    fn hops(&mut self, records: &mut Vec<HopRecord>) {
        records.clear();
    }
    fn samples(&mut self, rows: &mut Vec<QueueSample>) {
        rows.clear();
    }
    fn cc_samples(&mut self, rows: &mut Vec<CcSample>) {
        rows.clear();
    }
}

/// A sink that keeps everything in memory (tests, small runs).
#[derive(Default)]
pub struct MemoryTrace {
    /// Hop records in trace order.
    pub hops: Vec<HopRecord>,
    /// Queue samples in trace order.
    pub samples: Vec<QueueSample>,
    /// Congestion-control samples in trace order.
    pub cc: Vec<CcSample>,
}

impl TraceSink for MemoryTrace {
    fn hops(&mut self, records: &mut Vec<HopRecord>) {
        self.hops.append(records);
    }
    fn samples(&mut self, rows: &mut Vec<QueueSample>) {
        self.samples.append(rows);
    }
    fn cc_samples(&mut self, rows: &mut Vec<CcSample>) {
        self.cc.append(rows);
    }
}

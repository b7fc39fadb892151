//! The host NIC's settings ([`NicConfig`], [`NicScheduler`]) and what a queue pair (an RDMA
//! sender) answers a pulling NIC ([`QpState`]). The NIC itself, its socket queues, budgets,
//! admission and the pulling NIC's turn order, lives with the host it belongs to, in the engine
//! (`engine/node/nic/`).
//!
//! Real hosts do not tail-drop their own packets: the socket layer holds what the NIC cannot
//! take yet (Linux TCP Small Queues, qdisc backpressure). Here every packet a transport emits
//! goes into its socket's pending queue first; the NIC admits packets from the sockets into its
//! egress queue only while they fit two budgets:
//!
//! - the NIC buffer (`nic.buffer`, bytes or packets waiting in the egress queue), and
//! - the per-socket limit (`nic.per_flow`, TSQ-like: bytes or packets of one flow side waiting
//!   in the egress queue).
//!
//! A packet leaves both budgets when its transmission starts. An empty NIC (or a socket with
//! nothing in the NIC) always admits one packet, so a packet larger than a budget still goes
//! out. The scheduler picks which socket is admitted next: `RoundRobin` takes one packet per
//! socket with data in turn (flows with data share the NIC equally), `Fifo` admits packets in
//! the order the transports produced them (one FIFO of bursts; the per-flow limit does not
//! apply). `Pull` is the HPCC simulator's RDMA NIC, which keeps no FIFO at all: when the link
//! frees it sends the oldest waiting ACK, NACK or CNP, else it asks its queue pairs (the RDMA
//! senders, in the order they started) round robin for one packet from the first that may
//! send now; the sender builds that packet then, with its state at that moment, and its pacing
//! counts from it. Nothing is ever dropped here: the pending queues grow instead, and a
//! transport's own window (or an open-loop source's packet count) bounds them.

use crate::units::{BufferSize, Bytes, SimTime};

/// How a NIC picks the next socket to admit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NicScheduler {
    /// One packet per socket with data in turn.
    #[default]
    RoundRobin,
    /// Packets in the order the host's transports produced them.
    Fifo,
    /// No egress FIFO: when the link frees, feedback packets first, then one packet pulled
    /// from the next RDMA sender that may send (the HPCC simulator's NIC).
    Pull,
}

impl NicScheduler {
    /// The name used in scenario files and `run.parquet`.
    pub const fn name(self) -> &'static str {
        match self {
            NicScheduler::RoundRobin => "round_robin",
            NicScheduler::Fifo => "fifo",
            NicScheduler::Pull => "pull",
        }
    }
}

/// NIC settings of every host (the NIC's rate is its link's rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// Bytes or packets that may wait in the NIC's egress queue.
    pub buffer: BufferSize,
    /// Bytes or packets one socket (a flow's sending or receiving side) may have waiting in the
    /// egress queue.
    pub per_flow: BufferSize,
    /// Socket scheduler.
    pub scheduler: NicScheduler,
    /// Token-bucket shaper on the host's egress (packets wait in the NIC queue, so the
    /// sockets feel the backpressure); `None`: line rate.
    pub shaper: Option<crate::shaping::TokenBucketSpec>,
}

impl Default for NicConfig {
    /// 1 MB of NIC buffer, 2 packets per socket (the TSQ floor of two packets), round robin.
    fn default() -> Self {
        NicConfig {
            buffer: BufferSize::Bytes(Bytes(1_000_000)),
            per_flow: BufferSize::Packets(2),
            scheduler: NicScheduler::RoundRobin,
            shaper: None,
        }
    }
}

/// What a queue pair (an RDMA sender) can do when a pulling NIC looks for a packet
/// (`GetNextQindex` in the HPCC simulator's `qbb-net-device.cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Every byte acknowledged (or the flow given up): removed from the turn order.
    Finished,
    /// Nothing it may send: all sent and waiting for ACKs, or its window is full.
    Waiting,
    /// It has a packet to send once `at` (its pacing) has come, in traffic class `class`.
    Ready {
        /// Earliest start of its next packet.
        at: SimTime,
        /// The flow's traffic class (a paused class is passed over).
        class: u8,
    },
}

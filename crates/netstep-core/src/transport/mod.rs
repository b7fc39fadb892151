//! Transports: the senders and receivers that run on hosts. One transport per file, dispatched
//! through the [`Sender`] / [`Receiver`] enums (no `dyn`): open-loop sources, TCP (one reliable
//! sender and receiver, [`tcp`], with the window-based congestion control as a separate enum,
//! [`cc`]: NewReno, DCTCP, CUBIC, BBR and REAL's generic, JK and DEC sources) and RDMA
//! ([`rdma`]: rate-based, go-back-N or selective repeat, with DCQCN or TIMELY).
//!
//! A transport never touches the network directly: it writes packets and timers into a
//! [`TransportOut`], which its host's logical process turns into NIC enqueues and events.

pub mod cc;
mod open_loop;
pub mod rdma;
pub mod sample;
pub mod tcp;
pub mod timer;

pub use cc::{CcSpec, CongestionControl};
pub use open_loop::{OpenLoopReceiver, OpenLoopSender, OpenLoopSpec, SizeDistribution};

use crate::packet::Packet;
use crate::telemetry::SideRecord;
use crate::units::{Bytes, SimTime};
use rdma::{RdmaReceiver, RdmaSender, RdmaSpec};
use tcp::{TcpReceiver, TcpSender, TcpSpec};

/// Transport choice and parameters of one flow.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportSpec {
    /// Unacknowledged packets at a fixed (or exponential) interval.
    OpenLoop(OpenLoopSpec),
    /// TCP: reliable sender with SACK (or NewReno) recovery and a congestion control.
    Tcp(TcpSpec),
    /// RDMA: rate-based sender with go-back-N recovery and a rate control (DCQCN).
    Rdma(RdmaSpec),
}

impl TransportSpec {
    /// Wire sizes of the data packets a flow of `size` payload bytes sends, in order.
    pub fn packet_sizes(&self, size: Bytes) -> Vec<Bytes> {
        match self {
            TransportSpec::OpenLoop(s) => vec![s.packet_size; s.n_packets as usize],
            TransportSpec::Tcp(s) => (0..s.n_segments(size))
                .map(|i| Bytes(s.segment_wire_bytes(size, i) as u64))
                .collect(),
            TransportSpec::Rdma(s) => (0..s.n_packets(size))
                .map(|i| Bytes(s.packet_wire_bytes(size, i) as u64))
                .collect(),
        }
    }
    /// For transports whose packets are all available at the start and all but the last of
    /// one size: `(packets, wire bytes of each full one, wire bytes of the last)`.
    pub fn uniform_packets(&self, size: Bytes) -> Option<(u64, u32, u32)> {
        match self {
            TransportSpec::OpenLoop(_) => None,
            TransportSpec::Tcp(s) => {
                let n = s.n_segments(size);
                Some((
                    n as u64,
                    s.segment_wire_bytes(size, 0),
                    s.segment_wire_bytes(size, n - 1),
                ))
            }
            TransportSpec::Rdma(s) => {
                let n = s.n_packets(size);
                Some((
                    n as u64,
                    s.packet_wire_bytes(size, 0),
                    s.packet_wire_bytes(size, n - 1),
                ))
            }
        }
    }
    /// True when the flow's data packets carry per-hop telemetry.
    pub fn telemetry(&self) -> bool {
        matches!(self, TransportSpec::Rdma(s) if s.cc.telemetry())
    }
    /// True when some of the flow's packets carry a side record (telemetry, or a TCP ACK's
    /// further SACK blocks), which the engine moves with them.
    pub fn side_records(&self) -> bool {
        self.telemetry() || matches!(self, TransportSpec::Tcp(s) if s.sack_blocks > 1)
    }
    /// Smallest packet this transport ever puts on the wire (for the lookahead).
    pub fn min_packet(&self, size: Bytes) -> Bytes {
        match self {
            TransportSpec::OpenLoop(s) => match s.size_distribution {
                SizeDistribution::Constant => s.packet_size,
                SizeDistribution::Exponential => Bytes(1),
            },
            TransportSpec::Tcp(s) => {
                let last = s.segment_wire_bytes(size, s.n_segments(size).saturating_sub(1));
                Bytes(s.header_bytes.min(last) as u64)
            }
            TransportSpec::Rdma(s) => Bytes(s.header_bytes.min(s.ack_bytes) as u64),
        }
    }
    /// Size of the flow's feedback packet (its ACK; open loop has none: its smallest packet).
    pub fn feedback_packet(&self, size: Bytes) -> Bytes {
        match self {
            TransportSpec::Rdma(s) => Bytes(s.ack_bytes as u64),
            other => other.min_packet(size),
        }
    }
    /// Largest (first) data packet of a flow of `size` payload bytes (open loop with
    /// exponential sizes: the mean).
    pub fn max_packet(&self, size: Bytes) -> Bytes {
        match self {
            TransportSpec::OpenLoop(s) => s.packet_size,
            TransportSpec::Tcp(s) => Bytes(s.segment_wire_bytes(size, 0) as u64),
            TransportSpec::Rdma(s) => Bytes(s.packet_wire_bytes(size, 0) as u64),
        }
    }
    /// Minimum spacing between consecutive data packets imposed by the source itself.
    pub fn min_spacing(&self) -> SimTime {
        match self {
            TransportSpec::OpenLoop(s) => s.interval,
            TransportSpec::Tcp(_) | TransportSpec::Rdma(_) => SimTime::ZERO,
        }
    }
}

/// Packets and timers a transport asks for.
#[derive(Clone, Debug, Default)]
pub struct TransportOut {
    /// Packets to put into the host's NIC queue, in order.
    pub packets: Vec<Packet>,
    /// Timers to set: `(time, token)`; the token comes back in the timer event.
    pub timers: Vec<(SimTime, u32)>,
    /// Side records for packets of `packets` (by index): a TCP ACK's further SACK blocks.
    pub side: Vec<(usize, Box<SideRecord>)>,
}

/// Why a flow was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FailureReason {
    /// Its sender's retransmission timer expired `max_retries + 1` times in a row without
    /// progress (Linux `tcp_retries2`).
    RetryLimit,
    /// Its SYN went unanswered `syn_retries + 1` times.
    SynRetries,
}

impl FailureReason {
    /// The name used in `flows.parquet` (`fail_reason`).
    pub const fn name(self) -> &'static str {
        match self {
            FailureReason::RetryLimit => "retry_limit",
            FailureReason::SynRetries => "syn_retries",
        }
    }
}

/// Counters of a sender.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    /// Data packets put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Data packets sent again.
    pub retransmits: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Set when the sender gave the flow up.
    pub failure: Option<FailureReason>,
    /// When a TCP handshake completed (the SYN-ACK arrived).
    pub handshake: Option<SimTime>,
}

impl SenderCounters {
    /// Counters of a sender that sent `packets_sent` packets and nothing else happened to.
    pub fn sent(packets_sent: u64) -> SenderCounters {
        SenderCounters {
            packets_sent,
            ..SenderCounters::default()
        }
    }
}

/// The sending side of a flow: every variant boxed (or, for `Sent`, one word), so a host's
/// slot for each flow it sources is 16 bytes whether the flow has started, runs or finished (a
/// 10 M-flow run keeps them all).
#[derive(Clone, Debug)]
pub enum Sender {
    /// Open-loop source.
    OpenLoop(Box<OpenLoopSender>),
    /// TCP sender.
    Tcp(Box<TcpSender>),
    /// RDMA sender.
    Rdma(Box<RdmaSender>),
    /// A TCP or RDMA sender that finished or gave its flow up, reduced to its counters
    /// ([`Sender::finish_if_done`]): a finished sender ignores feedback and timers, so this
    /// keeps a run's behaviour and outcome while its state is freed.
    Finished(Box<SenderCounters>),
    /// [`Sender::Finished`] for a sender whose only nonzero counter is its packets sent
    /// (most flows: no retransmission, no timeout), without an allocation.
    Sent(u64),
}

/// The receiving side of a flow.
#[derive(Clone, Debug)]
pub enum Receiver {
    /// Counts open-loop packets.
    OpenLoop(OpenLoopReceiver),
    /// Reassembles and acknowledges TCP segments (boxed: the RDMA receiver, which m3's
    /// multi-million-flow mixes keep one of per flow, sets the enum's size).
    Tcp(Box<TcpReceiver>),
    /// Accepts RDMA packets in order.
    Rdma(RdmaReceiver),
}

/// Identity of a flow as its endpoints see it.
#[derive(Clone, Copy, Debug)]
pub struct FlowEnds {
    /// Flow id.
    pub flow: u32,
    /// Sender node.
    pub src: u32,
    /// Receiver node.
    pub dst: u32,
    /// Payload bytes.
    pub size: Bytes,
    /// Simulation seed (for keyed random streams).
    pub seed: u64,
    /// Line rate of the sender's NIC, bit/s (rate-based transports start at it).
    pub line_rate_bps: f64,
    /// Unloaded round trip of the flow (one full data packet out, its smallest feedback
    /// packet back); computed only for senders that use it (HPCC), else zero.
    pub base_rtt: SimTime,
    /// The host's NIC pulls this sender's packets (`[nic] scheduler = "pull"`): an RDMA
    /// sender then builds a packet only when the NIC asks for one.
    pub nic_pulls: bool,
}

impl Sender {
    /// The congestion-control sample of a running TCP or RDMA flow at `now` (`None` for
    /// open-loop sources and for flows that finished or were given up).
    pub fn cc_sample(&self, now: SimTime) -> Option<sample::CcSample> {
        match self {
            Sender::Tcp(tcp) if !tcp.is_done() && tcp.failure.is_none() => Some(tcp.cc_sample(now)),
            Sender::Rdma(rdma) if !rdma.is_done() && rdma.failure.is_none() => {
                Some(rdma.cc_sample(now))
            }
            _ => None,
        }
    }
    /// Creates the sender and starts it at `now`.
    pub fn start(
        spec: &TransportSpec,
        ends: FlowEnds,
        now: SimTime,
        out: &mut TransportOut,
    ) -> Sender {
        match spec {
            TransportSpec::OpenLoop(s) => {
                Sender::OpenLoop(Box::new(OpenLoopSender::start(s, ends, now, out)))
            }
            TransportSpec::Tcp(s) => Sender::Tcp(Box::new(TcpSender::start(s, ends, now, out))),
            TransportSpec::Rdma(s) => Sender::Rdma(Box::new(RdmaSender::start(
                s,
                ends,
                ends.line_rate_bps,
                ends.base_rtt,
                now,
                out,
            ))),
        }
    }
    /// A feedback packet (Ack, Nack, Cnp, Notify) of this flow arrived, with the telemetry
    /// stack it echoes (if it carries one).
    pub fn on_feedback(
        &mut self,
        spec: &TransportSpec,
        ack: &Packet,
        telemetry: Option<&SideRecord>,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        match (self, spec) {
            (Sender::Tcp(s), TransportSpec::Tcp(p)) => s.on_ack(p, ack, telemetry, now, out),
            (Sender::Rdma(s), TransportSpec::Rdma(p)) => s.on_feedback(p, ack, telemetry, now, out),
            _ => {}
        }
    }
    /// A timer this sender set fired; true when it was live.
    pub fn on_timer(
        &mut self,
        spec: &TransportSpec,
        token: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) -> bool {
        let before = out.packets.len() + out.timers.len();
        let failed_before = self.counters().failure.is_some();
        match (&mut *self, spec) {
            (Sender::OpenLoop(s), TransportSpec::OpenLoop(p)) => s.on_timer(p, token, now, out),
            (Sender::Tcp(s), TransportSpec::Tcp(p)) => s.on_timer(p, token, now, out),
            (Sender::Rdma(s), TransportSpec::Rdma(p)) => s.on_timer(p, token, now, out),
            _ => {}
        }
        // Live: it sent or set something, or it gave the flow up.
        out.packets.len() + out.timers.len() > before
            || (!failed_before && self.counters().failure.is_some())
    }
    /// Replaces a TCP or RDMA sender that finished (every byte acknowledged) or gave its flow
    /// up by its counters, freeing its state: from then on it would only ignore what comes
    /// (feedback and timers of a finished sender do nothing, and its queue pair reads as
    /// finished). Open-loop senders are small and stay. Returns true when it replaced the
    /// sender now.
    pub fn finish_if_done(&mut self) -> bool {
        let done = match self {
            Sender::Tcp(s) => s.is_done() || s.failure.is_some(),
            Sender::Rdma(s) => s.is_done() || s.failure.is_some(),
            Sender::OpenLoop(_) | Sender::Finished(_) | Sender::Sent(_) => false,
        };
        if done {
            let counters = self.counters();
            *self = if counters == SenderCounters::sent(counters.packets_sent) {
                Sender::Sent(counters.packets_sent)
            } else {
                Sender::Finished(Box::new(counters))
            };
        }
        done
    }
    /// What the sender did so far.
    pub fn counters(&self) -> SenderCounters {
        match self {
            Sender::Finished(c) => **c,
            Sender::Sent(packets_sent) => SenderCounters::sent(*packets_sent),
            Sender::OpenLoop(s) => SenderCounters::sent(s.sent as u64),
            Sender::Tcp(s) => SenderCounters {
                packets_sent: s.packets_sent,
                retransmits: s.retransmits,
                fast_retransmits: s.fast_retransmits,
                timeouts: s.retries.timeouts,
                failure: s.failure,
                handshake: s.handshake_done.get(),
            },
            Sender::Rdma(s) => SenderCounters {
                packets_sent: s.packets_sent,
                retransmits: s.retransmits,
                fast_retransmits: 0,
                timeouts: s.retries.timeouts,
                failure: s.failure,
                handshake: None,
            },
        }
    }
}

impl Receiver {
    /// Creates the receiver for a flow.
    pub fn new(spec: &TransportSpec, ends: FlowEnds) -> Receiver {
        match spec {
            TransportSpec::OpenLoop(s) => Receiver::OpenLoop(OpenLoopReceiver::new(s)),
            TransportSpec::Tcp(s) => Receiver::Tcp(Box::new(TcpReceiver::new(s, ends))),
            TransportSpec::Rdma(s) => Receiver::Rdma(RdmaReceiver::new(s, ends)),
        }
    }
    /// A data packet arrived.
    pub fn on_data(
        &mut self,
        spec: &TransportSpec,
        data: &Packet,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        match (self, spec) {
            (Receiver::OpenLoop(r), _) => r.on_data(data, now),
            (Receiver::Tcp(r), TransportSpec::Tcp(p)) => r.on_data(p, data, now, out),
            (Receiver::Rdma(r), TransportSpec::Rdma(p)) => r.on_data(p, data, now, out),
            _ => {}
        }
    }
    /// A timer this receiver set fired; true when it was live.
    pub fn on_timer(
        &mut self,
        spec: &TransportSpec,
        token: u32,
        _now: SimTime,
        out: &mut TransportOut,
    ) -> bool {
        match (self, spec) {
            (Receiver::Tcp(r), TransportSpec::Tcp(p)) => r.on_timer(p, token, out),
            _ => false,
        }
    }
    /// `(distinct data packets delivered, completion time)`.
    pub fn outcome(&self) -> (u64, Option<SimTime>) {
        match self {
            Receiver::OpenLoop(r) => (r.delivered as u64, r.completed),
            Receiver::Tcp(r) => (r.delivered, r.completed),
            Receiver::Rdma(r) => (r.delivered(), r.completed()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a host keeps for every flow it sources or sinks, for the whole run (a 10 M-flow
    /// mix keeps ten million of each): a sender's slot 16 B, a receiver's 64 B (the memory
    /// estimate, `netstep_scenario::limits::BYTES_PER_FLOW`, counts these).
    #[test]
    fn per_flow_slots_stay_small() {
        assert_eq!(std::mem::size_of::<Option<Sender>>(), 16);
        assert_eq!(std::mem::size_of::<Option<Receiver>>(), 64);
    }
}

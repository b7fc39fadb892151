//! RDMA (RoCEv2-style) transport: a rate-based sender with go-back-N loss recovery and a
//! receiver that acknowledges every packet, as in the HPCC simulator (Li et al. 2019, the
//! ns-3 RDMA model the m3, Parsimon and HPCC papers use). The rate control is a
//! [`RdmaCc`] variant, one file each: DCQCN, TIMELY and HPCC (which also bounds the bytes in
//! flight by its window and reads the per-hop telemetry its ACKs echo).
//!
//! - The sender starts at its NIC's line rate and spaces packets at the current rate
//!   (`size x 8 / rate` between packet starts). Data packets are ECN-capable.
//! - The receiver accepts packets in order only (go-back-N): an in-order packet is
//!   acknowledged with the next expected sequence number, the ACK carrying the ECN echo when
//!   the packet arrived CE-marked (DCQCN's CNP, as the HPCC simulator sends it: a flag on the
//!   ACK); an out-of-order packet is dropped and answered with a NACK naming the expected
//!   packet, at most once per `nack_interval` for the same gap. With `ack_every = n` (the
//!   HPCC simulator's ACK interval) in-order packets are acknowledged once every `n` packets
//!   and at the last one; the ECN echo then reports a CE mark on any packet since the last
//!   ACK.
//! - A NACK sends the sender back to the named packet; a retransmission timeout (no progress
//!   for `rto`) back to the first unacknowledged one; `max_retries` timeouts in a row without
//!   progress give the flow up.
//! - With selective repeat instead, the receiver keeps packets that arrive out of order and
//!   the sender resends only the packet a NACK (or a timeout) names, then goes on with new
//!   data.

pub mod dcqcn;
pub mod hpcc;
pub mod timely;

use super::{FailureReason, FlowEnds, TransportOut};
use crate::packet::{ACK_NUMBER_BIT, Ecn, Packet, PacketKind};
use crate::telemetry::IntStack;
use crate::units::{Bytes, SimTime};
use dcqcn::{Dcqcn, DcqcnSpec};
use hpcc::{Hpcc, HpccSpec};
use timely::{Timely, TimelySpec};

/// Which rate control an RDMA flow uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RdmaCc {
    /// DCQCN (Zhu et al. 2015), in the HPCC simulator's Mellanox variant.
    Dcqcn(DcqcnSpec),
    /// TIMELY (Mittal et al. 2015): RTT-gradient rate control.
    Timely(TimelySpec),
    /// HPCC (Li et al. 2019): rate and window from per-hop telemetry.
    Hpcc(HpccSpec),
}

impl RdmaCc {
    /// The `transport` value in `flows.parquet`.
    pub const fn transport_name(&self) -> &'static str {
        match self {
            RdmaCc::Dcqcn(_) => "rdma_dcqcn",
            RdmaCc::Timely(_) => "rdma_timely",
            RdmaCc::Hpcc(_) => "rdma_hpcc",
        }
    }
    /// True when the flow's data packets carry per-hop telemetry (HPCC).
    pub const fn telemetry(&self) -> bool {
        matches!(self, RdmaCc::Hpcc(_))
    }
}

/// How an RDMA flow recovers losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The receiver drops out-of-order packets; the sender goes back to the missing one.
    GoBackN,
    /// The receiver keeps out-of-order packets; the sender resends only the missing one.
    SelectiveRepeat,
}

/// RDMA parameters of a flow.
#[derive(Clone, Debug, PartialEq)]
pub struct RdmaSpec {
    /// Payload bytes per packet.
    pub mtu_bytes: u32,
    /// Header bytes on every data packet; also the size of an ACK or NACK.
    pub header_bytes: u32,
    /// Retransmission timeout (no progress for this long: go back to the first
    /// unacknowledged packet).
    pub rto: SimTime,
    /// Timeouts in a row without progress after which the flow is given up.
    pub max_retries: u32,
    /// The receiver sends at most one NACK per gap in this interval.
    pub nack_interval: SimTime,
    /// The receiver acknowledges in-order packets once every this many (1: every packet).
    pub ack_every: u32,
    /// Loss recovery.
    pub recovery: Recovery,
    /// Rate control.
    pub cc: RdmaCc,
}

impl RdmaSpec {
    /// Data packets of a flow of `size` payload bytes (at least one).
    pub fn n_packets(&self, size: Bytes) -> u32 {
        size.0.div_ceil(self.mtu_bytes as u64).max(1) as u32
    }
    /// Wire size of packet `index` of a flow of `size` payload bytes.
    pub fn packet_wire_bytes(&self, size: Bytes, index: u32) -> u32 {
        let n = self.n_packets(size);
        let payload = if index + 1 < n {
            self.mtu_bytes as u64
        } else {
            size.0 - (n as u64 - 1) * self.mtu_bytes as u64
        };
        payload.max(1) as u32 + self.header_bytes
    }
}

/// Timer kinds, in the token's top bits; the rest is a generation that retires stale timers.
const KIND_SHIFT: u32 = 28;
const GENERATION: u32 = (1 << KIND_SHIFT) - 1;

/// A timer token: `kind` and the low bits of `generation`.
fn token(kind: u32, generation: u32) -> u32 {
    (kind << KIND_SHIFT) | (generation & GENERATION)
}
const PACE: u32 = 0;
const RTO: u32 = 1;
/// First timer kind the rate control owns.
pub const CC_TIMER: u32 = 2;

/// Sender state of one RDMA flow.
#[derive(Clone, Debug)]
pub struct RdmaSender {
    ends: FlowEnds,
    n_packets: u32,
    /// First unacknowledged packet.
    snd_una: u32,
    /// Next packet to send.
    snd_nxt: u32,
    /// One past the highest packet sent.
    high_sent: u32,
    /// Earliest start of the next packet.
    next_send: SimTime,
    pace_pending: bool,
    pace_generation: u32,
    rto_deadline: Option<SimTime>,
    rto_generation: u32,
    rto: SimTime,
    backoffs: u32,
    number: u32,
    /// Selective repeat: packets to resend before new data.
    resend: std::collections::VecDeque<u32>,
    /// Timers the rate control asks for, `(time, kind, generation)` (reused buffer).
    cc_timers: Vec<(SimTime, u32, u32)>,
    /// Wire size of the last data packet sent (its spacing moves with a rate change).
    last_wire: u32,
    /// The rate control.
    pub cc: RdmaRate,
    /// Data packets put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Packets sent more than once.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Set when the flow was given up.
    pub failure: Option<FailureReason>,
}

/// The rate control state of a flow.
#[derive(Clone, Debug)]
pub enum RdmaRate {
    /// DCQCN.
    Dcqcn(Dcqcn),
    /// TIMELY.
    Timely(Timely),
    /// HPCC.
    Hpcc(Hpcc),
}

impl RdmaRate {
    /// Current sending rate, bit/s.
    pub fn rate_bps(&self) -> f64 {
        match self {
            RdmaRate::Dcqcn(d) => d.rate,
            RdmaRate::Timely(t) => t.rate,
            RdmaRate::Hpcc(h) => h.rate,
        }
    }
    /// The window in bytes, for rate controls that also bound the bytes in flight (HPCC).
    pub fn window_bytes(&self) -> Option<f64> {
        match self {
            RdmaRate::Hpcc(h) => Some(h.window_bytes()),
            RdmaRate::Dcqcn(_) | RdmaRate::Timely(_) => None,
        }
    }
    /// DCQCN's alpha.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            RdmaRate::Dcqcn(d) => Some(d.alpha),
            RdmaRate::Timely(_) | RdmaRate::Hpcc(_) => None,
        }
    }
}

impl RdmaSender {
    /// Starts the flow at the NIC's line rate `line_rate_bps`; `base_rtt` is the flow's
    /// unloaded round trip (HPCC's `T` unless its spec sets one).
    pub fn start(
        spec: &RdmaSpec,
        ends: FlowEnds,
        line_rate_bps: f64,
        base_rtt: SimTime,
        now: SimTime,
        out: &mut TransportOut,
    ) -> RdmaSender {
        let cc = match spec.cc {
            RdmaCc::Dcqcn(d) => RdmaRate::Dcqcn(Dcqcn::new(d, line_rate_bps)),
            RdmaCc::Timely(t) => RdmaRate::Timely(Timely::new(t, line_rate_bps)),
            RdmaCc::Hpcc(h) => RdmaRate::Hpcc(Hpcc::new(h, line_rate_bps, base_rtt)),
        };
        let mut s = RdmaSender {
            n_packets: spec.n_packets(ends.size),
            ends,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            next_send: now,
            pace_pending: false,
            pace_generation: 0,
            rto_deadline: None,
            rto_generation: 0,
            rto: spec.rto,
            backoffs: 0,
            number: 0,
            resend: std::collections::VecDeque::new(),
            cc_timers: Vec::new(),
            last_wire: 0,
            cc,
            packets_sent: 0,
            retransmits: 0,
            timeouts: 0,
            failure: None,
        };
        s.send(spec, now, out);
        s
    }

    /// True once every packet is acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.n_packets
    }

    /// Packets sent and not yet acknowledged.
    pub fn inflight(&self) -> u32 {
        self.high_sent.saturating_sub(self.snd_una)
    }

    /// Packets acknowledged.
    pub fn acked(&self) -> u32 {
        self.snd_una
    }

    /// The flow's rate-control state at `now`, for `cc_samples` (the window columns hold the
    /// packets in flight; the rate is `pacing_rate_bps`).
    pub fn cc_sample(&self, now: SimTime) -> crate::engine::trace::CcSample {
        crate::engine::trace::CcSample {
            time_ps: now.0,
            flow: self.ends.flow,
            cwnd: self.inflight() as f64,
            ssthresh: None,
            srtt_ps: None,
            rto_ps: self.rto.0,
            inflight: self.inflight(),
            acked: self.snd_una,
            in_recovery: false,
            alpha: self.cc.alpha(),
            w_max: None,
            pacing_rate_bps: Some(self.cc.rate_bps()),
            btl_bw_bps: None,
        }
    }

    /// An ACK or NACK arrived, with the telemetry it echoes (HPCC).
    pub fn on_feedback(
        &mut self,
        spec: &RdmaSpec,
        packet: &Packet,
        telemetry: Option<&IntStack>,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        if self.is_done() || self.failure.is_some() {
            return;
        }
        if packet.seq > self.snd_una {
            self.snd_una = packet.seq.min(self.n_packets);
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.backoffs = 0;
            self.arm_rto(spec, now, out);
        }
        if packet.kind == PacketKind::Nack
            && packet.seq >= self.snd_una
            && packet.seq < self.snd_nxt
        {
            match spec.recovery {
                Recovery::GoBackN => self.snd_nxt = packet.seq,
                Recovery::SelectiveRepeat => {
                    if !self.resend.contains(&packet.seq) {
                        self.resend.push_back(packet.seq);
                    }
                }
            }
        }
        match &mut self.cc {
            RdmaRate::Dcqcn(d) => {
                if packet.has(Packet::ECN_ECHO) {
                    d.on_cnp(now, &mut self.cc_timers);
                }
            }
            RdmaRate::Timely(t) => {
                if packet.kind == PacketKind::Ack {
                    t.on_ack(
                        packet.seq,
                        SimTime(now.0.saturating_sub(packet.sent_ps)),
                        self.snd_nxt,
                    );
                }
            }
            RdmaRate::Hpcc(h) => {
                if let Some(int) = telemetry {
                    let before = h.rate;
                    h.on_ack(packet.seq, int, self.snd_nxt);
                    let after = h.rate;
                    self.rate_changed(before, after, now, out);
                }
            }
        }
        self.push_cc_timers(out);
        if self.is_done() {
            self.rto_deadline = None;
            return;
        }
        self.send(spec, now, out);
    }

    /// A timer fired.
    pub fn on_timer(&mut self, spec: &RdmaSpec, token: u32, now: SimTime, out: &mut TransportOut) {
        if self.is_done() || self.failure.is_some() {
            return;
        }
        let (kind, generation) = (token >> KIND_SHIFT, token & GENERATION);
        match kind {
            PACE => {
                if generation == self.pace_generation & GENERATION {
                    self.pace_pending = false;
                    self.send(spec, now, out);
                }
            }
            RTO => {
                if generation != self.rto_generation & GENERATION {
                    return;
                }
                match self.rto_deadline {
                    Some(deadline) if deadline <= now => {}
                    _ => return,
                }
                if self.backoffs >= spec.max_retries {
                    self.failure = Some(FailureReason::RetryLimit);
                    self.rto_deadline = None;
                    return;
                }
                self.backoffs += 1;
                self.timeouts += 1;
                match spec.recovery {
                    Recovery::GoBackN => self.snd_nxt = self.snd_una,
                    Recovery::SelectiveRepeat => {
                        if !self.resend.contains(&self.snd_una) {
                            self.resend.push_front(self.snd_una);
                        }
                    }
                }
                self.arm_rto(spec, now, out);
                self.send(spec, now, out);
            }
            _ => {
                match &mut self.cc {
                    RdmaRate::Dcqcn(d) => d.on_timer(kind, generation, now, &mut self.cc_timers),
                    RdmaRate::Timely(_) | RdmaRate::Hpcc(_) => {}
                }
                self.push_cc_timers(out);
            }
        }
    }

    /// The rate went from `before` to `after` bit/s: the next packet's start moves by the
    /// difference of the last packet's spacing at the two rates (the HPCC simulator's
    /// `ChangeRate`), never before `now`; the pacing timer follows it.
    fn rate_changed(&mut self, before: f64, after: f64, now: SimTime, out: &mut TransportOut) {
        if before == after || self.last_wire == 0 {
            return;
        }
        let gap = |rate: f64| (self.last_wire as f64 * 8.0 / rate.max(1.0) * 1e12).ceil() as u64;
        let moved = (self.next_send.0 + gap(after)).saturating_sub(gap(before));
        let next = SimTime(moved).max(now);
        if next == self.next_send {
            return;
        }
        let earlier = next < self.next_send;
        self.next_send = next;
        if self.pace_pending && earlier {
            self.arm_pace(out);
        }
    }

    fn push_cc_timers(&mut self, out: &mut TransportOut) {
        for (at, kind, generation) in self.cc_timers.drain(..) {
            out.timers.push((at, token(kind, generation)));
        }
    }

    fn arm_rto(&mut self, spec: &RdmaSpec, now: SimTime, out: &mut TransportOut) {
        let deadline = now + spec.rto;
        self.rto_deadline = Some(deadline);
        self.rto_generation = self.rto_generation.wrapping_add(1);
        out.timers.push((deadline, token(RTO, self.rto_generation)));
    }

    /// Sets the pacing timer for `next_send` (a newer one retires any pending).
    fn arm_pace(&mut self, out: &mut TransportOut) {
        self.pace_pending = true;
        self.pace_generation = self.pace_generation.wrapping_add(1);
        out.timers
            .push((self.next_send, token(PACE, self.pace_generation)));
    }

    /// Sends the next packet if the pacing allows, else arms the pacing timer.
    fn send(&mut self, spec: &RdmaSpec, now: SimTime, out: &mut TransportOut) {
        while self.resend.front().is_some_and(|&s| s < self.snd_una) {
            self.resend.pop_front();
        }
        let more = |s: &Self| s.snd_nxt < s.n_packets || !s.resend.is_empty();
        if !more(self) || self.failure.is_some() {
            return;
        }
        if let Some(window) = self.cc.window_bytes() {
            // Window bound (HPCC): wait for an ACK once more than R x T bytes are in flight.
            let inflight = self.snd_nxt.saturating_sub(self.snd_una) as f64 * spec.mtu_bytes as f64;
            if inflight > window {
                return;
            }
        }
        if self.next_send > now {
            if !self.pace_pending {
                self.arm_pace(out);
            }
            return;
        }
        let seq = match self.resend.pop_front() {
            Some(seq) => seq,
            None => {
                self.snd_nxt += 1;
                self.snd_nxt - 1
            }
        };
        let wire = spec.packet_wire_bytes(self.ends.size, seq);
        if seq < self.high_sent {
            self.retransmits += 1;
        } else {
            self.high_sent = seq + 1;
        }
        self.packets_sent += 1;
        let mut packet = Packet::new(
            PacketKind::Data,
            self.ends.flow,
            self.number,
            seq,
            self.ends.dst,
            wire,
        );
        packet.sent_ps = now.0;
        packet.ecn = Ecn::Ect0;
        packet.set(Packet::TELEMETRY, spec.cc.telemetry());
        out.packets.push(packet);
        self.last_wire = wire;
        self.number = (self.number + 1) & !ACK_NUMBER_BIT;
        if self.rto_deadline.is_none() {
            self.arm_rto(spec, now, out);
        }
        let rate = self.cc.rate_bps().max(1.0);
        let gap = (wire as f64 * 8.0 / rate * 1e12).ceil() as u64;
        self.next_send = now + SimTime(gap.max(1));
        if more(self) {
            self.arm_pace(out);
        }
    }
}

/// Receiver state of one RDMA flow: in-order delivery, ACK per packet, NACK per gap.
#[derive(Clone, Debug)]
pub struct RdmaReceiver {
    src: u32,
    flow: u32,
    n_packets: u32,
    expected: u32,
    /// Selective repeat: packets above `expected` already received.
    held: std::collections::BTreeSet<u32>,
    last_nack: Option<(u32, SimTime)>,
    acks_sent: u32,
    /// The next in-order position that triggers an ACK (coalesced ACKs).
    ack_at: u32,
    /// A packet since the last ACK arrived CE-marked.
    ce_pending: bool,
    /// Distinct packets delivered.
    pub delivered: u64,
    /// When the last packet arrived, once all have.
    pub completed: Option<SimTime>,
}

impl RdmaReceiver {
    /// A receiver for a flow.
    pub fn new(spec: &RdmaSpec, ends: FlowEnds) -> RdmaReceiver {
        RdmaReceiver {
            src: ends.src,
            flow: ends.flow,
            n_packets: spec.n_packets(ends.size),
            expected: 0,
            held: std::collections::BTreeSet::new(),
            last_nack: None,
            acks_sent: 0,
            ack_at: spec.ack_every.max(1),
            ce_pending: false,
            delivered: 0,
            completed: None,
        }
    }

    /// A data packet arrived.
    pub fn on_data(
        &mut self,
        spec: &RdmaSpec,
        data: &Packet,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        self.ce_pending |= data.ecn == Ecn::Ce;
        let kind = if data.seq == self.expected {
            self.expected += 1;
            self.delivered += 1;
            while self.held.remove(&self.expected) {
                self.expected += 1;
            }
            if self.expected == self.n_packets && self.completed.is_none() {
                self.completed = Some(now);
            }
            if self.expected < self.ack_at && self.expected < self.n_packets {
                // Coalesced: this one is acknowledged by a later ACK.
                return;
            }
            let every = spec.ack_every.max(1);
            self.ack_at = (self.expected / every + 1) * every;
            PacketKind::Ack
        } else if data.seq > self.expected {
            if spec.recovery == Recovery::SelectiveRepeat && self.held.insert(data.seq) {
                self.delivered += 1;
            }
            let again = self
                .last_nack
                .is_some_and(|(seq, at)| seq == self.expected && now < at + spec.nack_interval);
            if again {
                return;
            }
            self.last_nack = Some((self.expected, now));
            PacketKind::Nack
        } else {
            // A duplicate: acknowledge where we are.
            PacketKind::Ack
        };
        let mut ack = Packet::new(
            kind,
            self.flow,
            ACK_NUMBER_BIT | self.acks_sent,
            self.expected,
            self.src,
            spec.header_bytes,
        );
        ack.sent_ps = data.sent_ps;
        ack.set(Packet::ECN_ECHO, self.ce_pending);
        self.ce_pending = false;
        out.packets.push(ack);
        self.acks_sent = (self.acks_sent + 1) & !ACK_NUMBER_BIT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coalesced_acks_echo_a_mark_on_any_packet_since_the_last_ack() {
        let spec = RdmaSpec {
            mtu_bytes: 1000,
            header_bytes: 48,
            rto: SimTime::from_ms(1),
            max_retries: 15,
            nack_interval: SimTime::from_us(500),
            ack_every: 4,
            recovery: Recovery::GoBackN,
            cc: RdmaCc::Dcqcn(DcqcnSpec::default()),
        };
        let ends = FlowEnds {
            flow: 0,
            src: 0,
            dst: 1,
            size: Bytes(6000),
            seed: 1,
            line_rate_bps: 10e9,
            base_rtt: SimTime::ZERO,
        };
        let mut r = RdmaReceiver::new(&spec, ends);
        let mut out = TransportOut::default();
        for seq in 0..6 {
            let mut data = Packet::new(PacketKind::Data, 0, seq, seq, 1, 1048);
            data.ecn = if seq == 1 { Ecn::Ce } else { Ecn::Ect0 };
            r.on_data(&spec, &data, SimTime::from_us(seq as u64), &mut out);
        }
        // Packets 0-3: one ACK (next expected 4) echoing packet 1's mark; packets 4-5: the
        // last packet is acknowledged at once, unmarked.
        let acks: Vec<(u32, bool)> = out
            .packets
            .iter()
            .map(|p| (p.seq, p.has(Packet::ECN_ECHO)))
            .collect();
        assert_eq!(acks, vec![(4, true), (6, false)]);
    }
}

//! The RDMA sender: paced at the rate its rate control sets, go-back-N or selective-repeat
//! recovery, retransmission timer and retry limit ([`super`] describes the protocol).

use super::dcqcn::Dcqcn;
use super::dctcp::Dctcp;
use super::hpcc::Hpcc;
use super::timely::Timely;
use super::{RdmaCc, RdmaSpec, Recovery};
use crate::nic::QpState;
use crate::packet::{ACK_NUMBER_BIT, Ecn, Packet, PacketKind};
use crate::telemetry::SideRecord;
use crate::transport::timer::{Retries, RtoTimer, TimerToken};
use crate::transport::{FailureReason, FlowEnds, TransportOut};
use crate::units::SimTime;

/// A timer token ([`TimerToken`]): `kind` and the low bits of `generation`.
fn token(kind: u32, generation: u32) -> u32 {
    TimerToken::new(kind, generation).encode()
}
/// Timer kinds.
const PACE: u32 = 0;
const RTO: u32 = 1;

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
    /// The retransmission timer: its deadline moves later on every ACK, with one pending
    /// timer event per flow, not one per ACK.
    rto_timer: RtoTimer,
    rto: SimTime,
    number: u32,
    /// Selective repeat: packets to resend before new data.
    resend: std::collections::VecDeque<u32>,
    /// Timers the rate control asks for, `(time, kind, generation)` (reused buffer).
    cc_timers: Vec<(SimTime, u32, u32)>,
    /// Wire size of the last data packet sent (its spacing moves with a rate change).
    last_wire: u32,
    /// The highest rate: the line rate or a lower `max_rate`, bit/s.
    max_rate: f64,
    /// The rate control.
    pub cc: RdmaRate,
    /// Data packets put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Packets sent more than once.
    pub retransmits: u64,
    /// Retransmission timeouts (in all, and in a row without progress).
    pub retries: Retries,
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
    /// DCTCP's alpha on a rate.
    Dctcp(Dctcp),
}

impl RdmaRate {
    /// Current sending rate, bit/s.
    pub fn rate_bps(&self) -> f64 {
        match self {
            RdmaRate::Dcqcn(d) => d.rate,
            RdmaRate::Timely(t) => t.rate,
            RdmaRate::Hpcc(h) => h.rate,
            RdmaRate::Dctcp(d) => d.rate,
        }
    }
    /// The window in bytes, for rate controls that also bound the bytes in flight (HPCC).
    pub fn window_bytes(&self) -> Option<f64> {
        match self {
            RdmaRate::Hpcc(h) => Some(h.window_bytes()),
            RdmaRate::Dcqcn(_) | RdmaRate::Timely(_) | RdmaRate::Dctcp(_) => None,
        }
    }
    /// DCQCN's or DCTCP's alpha.
    pub fn alpha(&self) -> Option<f64> {
        match self {
            RdmaRate::Dcqcn(d) => Some(d.alpha),
            RdmaRate::Dctcp(d) => Some(d.alpha),
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
        let max_rate = spec
            .max_rate_bps
            .unwrap_or(line_rate_bps)
            .min(line_rate_bps);
        let cc = match spec.cc {
            RdmaCc::Dcqcn(d) => RdmaRate::Dcqcn(Dcqcn::new(d, line_rate_bps, max_rate)),
            RdmaCc::Timely(t) => RdmaRate::Timely(Timely::new(t, line_rate_bps, max_rate)),
            RdmaCc::Hpcc(h) => RdmaRate::Hpcc(Hpcc::new(
                h,
                line_rate_bps,
                max_rate,
                base_rtt,
                spec.window.map(|w| w.bytes),
            )),
            RdmaCc::Dctcp(d) => RdmaRate::Dctcp(Dctcp::new(d, max_rate, spec.mtu_bytes)),
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
            rto_timer: RtoTimer::default(),
            rto: spec.rto,
            number: 0,
            resend: std::collections::VecDeque::new(),
            cc_timers: Vec::new(),
            last_wire: 0,
            max_rate,
            cc,
            packets_sent: 0,
            retransmits: 0,
            retries: Retries::default(),
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
    pub fn cc_sample(&self, now: SimTime) -> crate::transport::sample::CcSample {
        crate::transport::sample::CcSample {
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
        telemetry: Option<&SideRecord>,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        if self.is_done() || self.failure.is_some() {
            return;
        }
        if packet.seq > self.snd_una {
            self.snd_una = packet.seq.min(self.n_packets);
            self.snd_nxt = self.snd_nxt.max(self.snd_una);
            self.retries.progress();
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
            RdmaRate::Dctcp(d) => d.on_ack(
                spec.bytes_before(self.ends.size, packet.seq),
                packet.has(Packet::ECN_ECHO),
                spec.bytes_before(self.ends.size, self.snd_nxt),
            ),
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
            self.rto_timer.disarm();
            return;
        }
        self.send(spec, now, out);
    }

    /// A timer fired.
    pub fn on_timer(&mut self, spec: &RdmaSpec, token: u32, now: SimTime, out: &mut TransportOut) {
        if self.is_done() || self.failure.is_some() {
            return;
        }
        let token = TimerToken::decode(token);
        match token.kind {
            PACE => {
                if token.is_current(self.pace_generation) {
                    self.pace_pending = false;
                    self.send(spec, now, out);
                }
            }
            RTO => {
                if !self.rto_timer.fired(token, RTO, now, out) {
                    return;
                }
                if let Err(reason) = self.retries.on_timeout(spec.max_retries) {
                    self.failure = Some(reason);
                    self.rto_timer.disarm();
                    return;
                }
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
                    RdmaRate::Dcqcn(d) => d.on_timer(token, now, &mut self.cc_timers),
                    RdmaRate::Timely(_) | RdmaRate::Hpcc(_) | RdmaRate::Dctcp(_) => {}
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
        self.rto_timer.arm(now + spec.rto, RTO, out);
    }

    /// Sets the pacing timer for `next_send` (a newer one retires any pending).
    fn arm_pace(&mut self, out: &mut TransportOut) {
        self.pace_pending = true;
        self.pace_generation = self.pace_generation.wrapping_add(1);
        out.timers
            .push((self.next_send, token(PACE, self.pace_generation)));
    }

    /// Whether a packet is left to send (new data or a retransmission).
    fn has_more(&self) -> bool {
        self.snd_nxt < self.n_packets || !self.resend.is_empty()
    }

    /// Whether the window holds the next packet back until an ACK comes.
    fn window_bound(&self, spec: &RdmaSpec) -> bool {
        if let Some(window) = spec.window {
            // The sender's window: wait for an ACK while the payload bytes in flight are at
            // least `window` (scaled by rate / max rate when variable).
            let inflight = spec.bytes_before(self.ends.size, self.snd_nxt)
                - spec.bytes_before(self.ends.size, self.snd_una);
            inflight >= window.at(self.cc.rate_bps(), self.max_rate)
        } else if let Some(window) = self.cc.window_bytes() {
            // Window bound (HPCC): wait for an ACK once more than R x T bytes are in flight.
            let inflight = self.snd_nxt.saturating_sub(self.snd_una) as f64 * spec.mtu_bytes as f64;
            inflight > window
        } else {
            false
        }
    }

    /// What the sender can do for a pulling NIC: finished, waiting (nothing left to send
    /// but unacknowledged, or window-bound), or ready at its next pacing time (`class` is
    /// the flow's traffic class).
    pub fn qp_state(&mut self, spec: &RdmaSpec, class: u8) -> QpState {
        if self.is_done() || self.failure.is_some() {
            return QpState::Finished;
        }
        if !self.may_send(spec) {
            return QpState::Waiting;
        }
        QpState::Ready {
            at: self.next_send,
            class,
        }
    }

    /// A pulling NIC takes this sender's next packet at `now` (its [`RdmaSender::qp_state`]
    /// was ready by `now`): the packet is built now and the next one may start one packet's
    /// time at the current rate later (the simulator's `UpdateNextAvail`).
    pub fn pull(&mut self, spec: &RdmaSpec, now: SimTime, out: &mut TransportOut) {
        self.emit(spec, now, out);
    }

    /// Whether a packet may go now, pacing aside: something is left to send (resends of
    /// bytes acknowledged since are dropped first), the flow has not failed and the window
    /// has room. Shared by the sender's own pacing and a pulling NIC's question.
    fn may_send(&mut self, spec: &RdmaSpec) -> bool {
        while self.resend.front().is_some_and(|&s| s < self.snd_una) {
            self.resend.pop_front();
        }
        self.has_more() && self.failure.is_none() && !self.window_bound(spec)
    }

    /// Sends the next packet if the pacing allows, else arms the pacing timer. When the NIC
    /// pulls, it does nothing: the NIC asks ([`RdmaSender::pull`]).
    fn send(&mut self, spec: &RdmaSpec, now: SimTime, out: &mut TransportOut) {
        if self.ends.nic_pulls || !self.may_send(spec) {
            return;
        }
        if self.next_send > now {
            if !self.pace_pending {
                self.arm_pace(out);
            }
            return;
        }
        self.emit(spec, now, out);
        if self.has_more() {
            self.arm_pace(out);
        }
    }

    /// Builds and sends the next packet at `now`; the next may start one packet's time at
    /// the current rate later.
    fn emit(&mut self, spec: &RdmaSpec, now: SimTime, out: &mut TransportOut) {
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
        packet.set(Packet::SIDE_RECORD, spec.cc.telemetry());
        out.packets.push(packet);
        self.last_wire = wire;
        self.number = (self.number + 1) & !ACK_NUMBER_BIT;
        if !self.rto_timer.is_armed() {
            self.arm_rto(spec, now, out);
        }
        let rate = self.cc.rate_bps().max(1.0);
        let gap = (wire as f64 * 8.0 / rate * 1e12).ceil() as u64;
        self.next_send = now + SimTime(gap.max(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::rdma::dctcp::DctcpSpec;
    use crate::units::Bytes;

    /// The retransmission timers in `out` (deadline, token), and clears `out`.
    fn rto_timers(out: &mut TransportOut) -> Vec<(SimTime, u32)> {
        let timers = out
            .timers
            .drain(..)
            .filter(|&(_, t)| TimerToken::decode(t).kind == RTO)
            .collect();
        out.packets.clear();
        timers
    }

    /// ACKs move the retransmission deadline without setting a timer event each; the one
    /// pending event, when it fires before the deadline, is set again for the deadline, and
    /// the timeout happens exactly at the deadline (one RTO after the last progress).
    #[test]
    fn acks_move_the_deadline_and_the_pending_timer_follows_it() {
        let spec = RdmaSpec::new(RdmaCc::Dctcp(DctcpSpec::default()));
        let ends = FlowEnds {
            flow: 0,
            src: 0,
            dst: 1,
            size: Bytes(10 * spec.mtu_bytes as u64),
            seed: 1,
            line_rate_bps: 1e9,
            base_rtt: SimTime::ZERO,
            nic_pulls: false,
        };
        let mut out = TransportOut::default();
        let mut s = RdmaSender::start(&spec, ends, 1e9, SimTime::ZERO, SimTime::ZERO, &mut out);
        let first = rto_timers(&mut out);
        assert_eq!(first.len(), 1);
        assert_eq!(first[0].0, spec.rto);
        // Three ACKs, each one packet further: no new timer event.
        for (i, us) in [(1, 100), (2, 200), (3, 300)] {
            let ack = Packet::new(PacketKind::Ack, 0, 0, i, 0, 48);
            s.on_feedback(&spec, &ack, None, SimTime::from_us(us), &mut out);
            assert!(rto_timers(&mut out).is_empty(), "ACK {i} set a timer event");
        }
        let deadline = SimTime::from_us(300) + spec.rto;
        // The pending event fires at 1 ms: no timeout, set again for the deadline.
        s.on_timer(&spec, first[0].1, first[0].0, &mut out);
        assert_eq!(s.retries.timeouts, 0);
        let again = rto_timers(&mut out);
        assert_eq!(again.len(), 1);
        assert_eq!(again[0].0, deadline);
        // The old token is stale now; the new one times out at the deadline.
        s.on_timer(&spec, first[0].1, deadline, &mut out);
        assert_eq!(s.retries.timeouts, 0);
        s.on_timer(&spec, again[0].1, deadline, &mut out);
        assert_eq!(s.retries.timeouts, 1);
        let next = rto_timers(&mut out);
        assert_eq!(next.len(), 1);
        assert_eq!(next[0].0, deadline + spec.rto);
    }
}

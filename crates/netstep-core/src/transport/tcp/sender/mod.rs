//! The reliable TCP sender: sequence space (segments numbered from 0), retransmission timer
//! (RFC 6298, [`super::rto`]), retry limit, and loss recovery in one of two modes:
//! - **SACK** (default, RFC 6675): a [`super::Scoreboard`] of the receiver's SACK blocks (built
//!   on first need: [`LazyBoard`]); on `DupThresh` duplicate ACKs (or when the first unacknowledged segment is `IsLost`) the
//!   window is reduced once and every ACK then sends, while `cwnd - pipe >= 1`, the lowest lost
//!   segment not yet retransmitted, else new data, else the rescue of rule 3: several holes are
//!   repaired per round trip. After a timeout every segment not SACKed is lost and is sent
//!   again in order, skipping what the receiver already holds.
//! - **NewReno** (`sack = false`, RFC 6582): cumulative ACKs only; fast retransmit of the
//!   first unacknowledged segment, window inflation by duplicate ACKs, one hole repaired per
//!   partial ACK (one per round trip); go-back-N after a timeout.
//!
//! How much may be in flight comes from the [`CongestionControl`]; when it has a pacing rate
//! (or `pacing = true`), segments leave no closer than their size at that rate, the rest
//! waiting on a pacing timer.

mod recovery;

use super::handshake::{Opening, SYN_TIMER};
use super::lazy_board::LazyBoard;
use super::prr::{AckFacts, Prr};
use super::rate::RateState;
use super::rto::KarnHistory;
use super::{Recovery, RecoveryExit, RtoEstimator, RttSampling, TcpSpec};
use crate::packet::{ACK_NUMBER_BIT, Packet, PacketKind};
use crate::telemetry::SideRecord;
use crate::transport::cc::{AckSample, CongestionControl, RateSample};
use crate::transport::timer::{Retries, RtoTimer, TimerToken};
use crate::transport::{FailureReason, FlowEnds, TransportOut};
use crate::units::{MaybeTime, SimTime};

/// Timer kinds ([`TimerToken`]).
const RTO_TIMER: u32 = 0;
const PACE_TIMER: u32 = 1;

/// Sender state of one TCP flow.
#[derive(Clone, Debug)]
pub struct TcpSender {
    ends: FlowEnds,
    n_segments: u32,
    cc: CongestionControl,
    /// NewReno window inflation during fast recovery (`sack = false` only).
    inflation: f64,
    scoreboard: Option<LazyBoard>,
    snd_una: u32,
    /// Next segment to send in NewReno mode (go-back-N after a timeout).
    snd_nxt: u32,
    high_sent: u32,
    dupacks: u32,
    in_recovery: bool,
    /// No partial ACK has come since fast recovery started.
    first_partial: bool,
    recover: Option<u32>,
    rto: RtoEstimator,
    /// The retransmission timer.
    rto_timer: RtoTimer,
    /// Earliest time the next segment may leave when pacing.
    next_send: SimTime,
    /// Pending pacing timer: `(time, generation)`.
    pace_timer: Option<(SimTime, u32)>,
    number: u32,
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Segments sent more than once.
    pub retransmits: u64,
    /// Loss recoveries entered (fast retransmits).
    pub fast_retransmits: u64,
    /// Retransmission timeouts (in all, and in a row since `snd_una` last advanced).
    pub retries: Retries,
    /// Set when the flow was given up.
    pub failure: Option<FailureReason>,
    /// Delivery-rate sampling state (only for congestion controls that ask for it).
    rates: Option<Box<RateState>>,
    /// Karn's rule's send history (`rtt_sampling = "karn"` only).
    karn: Option<Box<KarnHistory>>,
    /// PRR's state while fast recovery lasts (`recovery = "prr"` or `"prr_ns3"` only; boxed,
    /// like the rest of what few senders use, so a sender in flight stays small).
    prr: Option<Box<Prr>>,
    /// The SYN waiting for its SYN-ACK (`handshake = true`).
    opening: Option<Box<Opening>>,
    /// When the SYN-ACK arrived.
    pub handshake_done: MaybeTime,
}

impl TcpSender {
    /// Starts the connection (no handshake): the initial window leaves at `now`.
    pub fn start(spec: &TcpSpec, ends: FlowEnds, now: SimTime, out: &mut TransportOut) -> Self {
        let mut s = TcpSender {
            n_segments: spec.n_segments(ends.size),
            ends,
            cc: CongestionControl::new(
                spec.cc,
                spec.initial_cwnd,
                (spec.mss_bytes + spec.header_bytes) as f64 * 8.0,
            ),
            inflation: 0.0,
            scoreboard: spec.sack.then(|| LazyBoard::new(spec.dupack_threshold)),
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            dupacks: 0,
            in_recovery: false,
            first_partial: false,
            recover: None,
            rto: RtoEstimator::new(spec.rto_initial),
            rto_timer: RtoTimer::default(),
            next_send: SimTime::ZERO,
            pace_timer: None,
            number: 0,
            packets_sent: 0,
            retransmits: 0,
            fast_retransmits: 0,
            retries: Retries::default(),
            failure: None,
            rates: spec.cc.needs_rate_samples().then(|| {
                Box::new(RateState {
                    segments: vec![Default::default(); spec.n_segments(ends.size) as usize],
                    ..RateState::default()
                })
            }),
            karn: (spec.rtt_sampling == RttSampling::Karn).then(Box::default),
            prr: None,
            opening: None,
            handshake_done: MaybeTime::NONE,
        };
        if spec.handshake {
            let opening = Opening::start(spec, &s.ends, &mut s.number, now, out);
            s.opening = Some(Box::new(opening));
        } else {
            s.send_available(spec, now, out);
        }
        s
    }

    /// Congestion window in segments (with NewReno's recovery inflation).
    pub fn cwnd(&self) -> f64 {
        self.window() + self.inflation
    }

    /// The window SACK recovery sends by: PRR's while it runs, else the congestion
    /// control's.
    fn window(&self) -> f64 {
        self.prr
            .as_deref()
            .map_or_else(|| self.cc.cwnd(), Prr::window)
    }

    /// The flow's congestion-control state at `now`, for `cc_samples`.
    pub fn cc_sample(&self, now: SimTime) -> crate::transport::sample::CcSample {
        let ssthresh = self.cc.ssthresh();
        crate::transport::sample::CcSample {
            time_ps: now.0,
            flow: self.ends.flow,
            cwnd: self.cwnd(),
            ssthresh: ssthresh.is_finite().then_some(ssthresh),
            srtt_ps: self.rto.srtt().map(|t| t.0),
            rto_ps: self.rto.rto().0,
            inflight: self.high_sent.saturating_sub(self.snd_una),
            acked: self.snd_una,
            in_recovery: self.in_recovery,
            alpha: self.cc.alpha(),
            w_max: self.cc.w_max(),
            pacing_rate_bps: self.cc.pacing_rate(),
            btl_bw_bps: self.cc.btl_bw_bps(),
        }
    }

    /// True once every segment is acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.n_segments
    }

    /// Processes an ACK: cumulative point `ack.seq`, SACK block `[sack_start, +sack_len)` and
    /// the further blocks of its side record (`sack_blocks` > 1).
    pub fn on_ack(
        &mut self,
        spec: &TcpSpec,
        ack: &Packet,
        side: Option<&SideRecord>,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        let a = ack.seq;
        if self.is_done() || self.failure.is_some() || a < self.snd_una {
            return;
        }
        if self.opening.is_some() || ack.has(Packet::SYN) {
            self.opened(spec, ack, now, out);
            return;
        }
        let delivered_before = self.snd_una + self.scoreboard.as_ref().map_or(0, |sb| sb.sacked());
        // A partial ACK that covers a retransmitted segment (PRR's "safe ACK").
        let safe = self.prr.is_some()
            && self
                .scoreboard
                .as_ref()
                .is_some_and(|sb| sb.retransmitted_below(a));
        let advanced = a > self.snd_una;
        let partial = advanced && self.in_recovery && self.recover.is_some_and(|r| a <= r);
        let mut sacked_new = false;
        if advanced {
            self.retries.progress();
            let rtt = SimTime(now.0.saturating_sub(ack.sent_ps));
            self.sample_rtt(spec, a, rtt, now);
            let acked = a - self.snd_una;
            self.snd_una = a;
            self.snd_nxt = self.snd_nxt.max(a);
            if let Some(sb) = self.scoreboard.as_mut() {
                sb.advance(a);
                sacked_new = sack_all(sb, ack, side) > 0;
            }
            let (delivered, rate) = self.rate_sample(ack, now);
            let flight = self.high_sent - self.snd_una;
            let mut grow = !self.in_recovery;
            if self.in_recovery {
                if self.recover.is_some_and(|r| a > r) {
                    // Full ACK: leave fast recovery.
                    match spec.recovery_exit {
                        RecoveryExit::Flight => self.cc.on_recovery_exit(Some(flight)),
                        RecoveryExit::Ssthresh => {
                            self.cc.on_recovery_exit(None);
                            grow = true;
                        }
                    }
                    self.inflation = 0.0;
                    self.in_recovery = false;
                    self.prr = None;
                    self.dupacks = 0;
                } else if self.scoreboard.is_none() {
                    // NewReno partial ACK: retransmit the next hole, deflate by the amount
                    // acknowledged (RFC 6582 3.2 step 5).
                    self.emit(spec, self.snd_una, now, out);
                    let cwnd = self.cc.cwnd();
                    self.inflation = (cwnd + self.inflation - acked as f64 + 1.0).max(1.0) - cwnd;
                }
            } else {
                self.dupacks = 0;
            }
            if grow {
                self.cc.on_ack(&AckSample {
                    acked,
                    now,
                    rtt,
                    abc_limit: spec.abc_limit,
                    ece: ack.has(Packet::ECN_ECHO),
                    congestion: ack.has(Packet::CONGESTION),
                    una: a,
                    high: self.high_sent,
                    delivered,
                    rate,
                });
            }
            if self.is_done() {
                self.rto_timer.disarm();
                return;
            }
            // RFC 6582 §4: "Impatient" restarts only at the first partial ACK.
            let restart =
                !partial || spec.recovery_restarts_rto || std::mem::take(&mut self.first_partial);
            if restart || !self.rto_timer.is_armed() {
                self.arm_rto(now, out);
            }
        } else if self.snd_una < self.high_sent {
            self.dupacks += 1;
            if let Some(sb) = self.scoreboard.as_mut() {
                sacked_new = sack_all(sb, ack, side) > 0;
            }
            if self.in_recovery {
                if self.scoreboard.is_none() {
                    self.inflation += 1.0;
                }
            } else if self.scoreboard.is_none()
                && self.dupacks == spec.dupack_threshold
                && self.recover.is_none_or(|r| a > r)
            {
                self.enter_recovery(spec, delivered_before, now, out);
            }
        }
        let entering = self.scoreboard.as_ref().is_some_and(|sb| {
            !self.in_recovery
                && self.snd_una < self.high_sent
                && (self.dupacks >= spec.dupack_threshold || sb.is_lost(self.snd_una))
                && self.recover.is_none_or(|r| self.snd_una > r)
        });
        if entering {
            self.enter_recovery(spec, delivered_before, now, out);
        } else if let (Some(prr), Some(sb)) = (self.prr.as_mut(), self.scoreboard.as_ref()) {
            let ns3 = spec.recovery == Recovery::PrrNs3;
            prr.update(
                ns3,
                &AckFacts {
                    delivered: self.snd_una + sb.sacked() - delivered_before,
                    sacked_new,
                    advanced,
                    pipe: sb.pipe(),
                    ssthresh: self.cc.ssthresh(),
                    safe,
                    mss: spec.mss_bytes,
                },
            );
        }
        if partial && spec.partial_ack_retransmit {
            self.retransmit_after_partial_ack(spec, now, out);
        }
        self.send_available(spec, now, out);
    }

    /// An ACK while the SYN waits, or a SYN-ACK: the first SYN-ACK opens the connection (the
    /// first RTT sample: from its echo, or under Karn's rule from the first SYN) and the
    /// initial window leaves; anything else is ignored.
    fn opened(&mut self, spec: &TcpSpec, ack: &Packet, now: SimTime, out: &mut TransportOut) {
        if self.opening.is_none() || !ack.has(Packet::SYN) {
            return;
        }
        let Some(opening) = self.opening.take() else {
            return;
        };
        self.handshake_done = MaybeTime::at(now);
        // With timestamps the echo of the SYN answered; without (Karn's rule) ns-3 measures
        // from the first SYN, retransmitted or not.
        let from = match self.karn {
            Some(_) => opening.first_sent.0,
            None => ack.sent_ps,
        };
        let rtt = SimTime(now.0.saturating_sub(from));
        self.rto.sample(rtt, spec.rto_min, spec.rto_max);
        let third = super::handshake::third_ack(spec, &self.ends, &mut self.number, now);
        out.packets.push(third);
        self.send_available(spec, now, out);
    }

    /// Takes an RTT sample for an ACK that moved the cumulative point to `ack`: the echoed
    /// `rtt`, or Karn's rule's (which also drops the RTO's backoff, as ns-3).
    fn sample_rtt(&mut self, spec: &TcpSpec, ack: u32, rtt: SimTime, now: SimTime) {
        match self.karn.as_mut() {
            None => self.rto.sample(rtt, spec.rto_min, spec.rto_max),
            Some(history) => match history.acked(ack, now) {
                Some(rtt) => self.rto.sample(rtt, spec.rto_min, spec.rto_max),
                None => self.rto.restore(spec.rto_min, spec.rto_max),
            },
        }
    }

    /// A timer fired; `token` identifies which.
    pub fn on_timer(&mut self, spec: &TcpSpec, token: u32, now: SimTime, out: &mut TransportOut) {
        if self.is_done() || self.failure.is_some() {
            return;
        }
        let token = TimerToken::decode(token);
        if token.kind == SYN_TIMER {
            if let Some(opening) = self.opening.as_mut() {
                let ends = self.ends;
                if let Err(reason) =
                    opening.on_timer(spec, &ends, token, &mut self.number, now, out)
                {
                    self.failure = Some(reason);
                    self.opening = None;
                }
            }
            return;
        }
        if token.kind == PACE_TIMER {
            if self
                .pace_timer
                .is_some_and(|(at, generation)| at == now && token.is_current(generation))
            {
                self.pace_timer = None;
                self.send_available(spec, now, out);
            }
            return;
        }
        if !self.rto_timer.fired(token, RTO_TIMER, now, out) {
            return;
        }
        self.timed_out(spec, now, out);
    }

    /// Pacing rate in bit/s: the congestion control's own, else (with `pacing = true`) the
    /// Linux default of 2 (slow start) or 1.2 (avoidance) x cwnd per smoothed RTT.
    fn pacing_rate(&self, spec: &TcpSpec) -> Option<f64> {
        if let Some(rate) = self.cc.pacing_rate() {
            return Some(rate);
        }
        if !spec.pacing {
            return None;
        }
        let srtt = self.rto.srtt()?.as_secs_f64();
        let cwnd = self.cc.cwnd();
        let ratio = if cwnd < self.cc.ssthresh() / 2.0 {
            2.0
        } else {
            1.2
        };
        let segment_bits = (spec.mss_bytes + spec.header_bytes) as f64 * 8.0;
        (srtt > 0.0).then(|| ratio * cwnd * segment_bits / srtt)
    }

    /// When pacing: true if a segment may leave now, else arms the pacing timer.
    fn pace_allows(&mut self, now: SimTime, out: &mut TransportOut) -> bool {
        if self.next_send <= now {
            return true;
        }
        if self.pace_timer.is_none_or(|(at, _)| at != self.next_send) {
            let generation = self.pace_timer.map_or(0, |(_, g)| g.wrapping_add(1));
            self.pace_timer = Some((self.next_send, generation));
            let token = TimerToken::new(PACE_TIMER, generation).encode();
            out.timers.push((self.next_send, token));
        }
        false
    }

    /// A segment of `bytes` left at `now` under pacing at `rate`.
    fn paced(&mut self, now: SimTime, bytes: u32, rate: f64) {
        let gap_ps = (bytes as f64 * 8.0 / rate * 1e12).ceil() as u64;
        self.next_send = self.next_send.max(now) + SimTime(gap_ps);
    }

    fn send_available(&mut self, spec: &TcpSpec, now: SimTime, out: &mut TransportOut) {
        let mut sent_any = false;
        let pace = self.pacing_rate(spec);
        if self.scoreboard.is_some() {
            // RFC 6675 §5 step (C): while cwnd - pipe >= 1 segment, send NextSeg.
            let cwnd = self.window();
            loop {
                let sb = self.scoreboard.as_mut().expect("SACK mode");
                if sb.pipe() as f64 + 1.0 > cwnd {
                    break;
                }
                let seq = if let Some(lost) = sb.next_lost() {
                    lost
                } else if self.high_sent < self.n_segments {
                    self.high_sent
                } else if self.in_recovery
                    && let Some(rescue) = sb.next_rescue()
                {
                    rescue
                } else {
                    break;
                };
                if let Some(rate) = pace {
                    if !self.pace_allows(now, out) {
                        break;
                    }
                    self.paced(now, spec.segment_wire_bytes(self.ends.size, seq), rate);
                }
                self.emit(spec, seq, now, out);
                sent_any = true;
            }
        } else {
            let window = self.cwnd().floor();
            while self.snd_nxt < self.n_segments && ((self.snd_nxt - self.snd_una) as f64) < window
            {
                let seq = self.snd_nxt;
                if let Some(rate) = pace {
                    if !self.pace_allows(now, out) {
                        break;
                    }
                    self.paced(now, spec.segment_wire_bytes(self.ends.size, seq), rate);
                }
                self.emit(spec, seq, now, out);
                self.snd_nxt += 1;
                sent_any = true;
            }
        }
        if sent_any && !self.rto_timer.is_armed() {
            self.arm_rto(now, out);
        }
    }

    /// Updates the delivered count after an ACK that advanced the cumulative point (the
    /// scoreboard already updated) and takes a rate sample ([`RateState::sample`]).
    fn rate_sample(&mut self, ack: &Packet, now: SimTime) -> (u32, Option<RateSample>) {
        let delivered = self.snd_una + self.scoreboard.as_ref().map_or(0, |sb| sb.sacked());
        match self.rates.as_mut() {
            Some(r) => r.sample(delivered, ack, now),
            None => (delivered, None),
        }
    }

    fn emit(&mut self, spec: &TcpSpec, seq: u32, now: SimTime, out: &mut TransportOut) {
        if let Some(r) = self.rates.as_mut() {
            if self.high_sent == self.snd_una {
                // Nothing in flight: the delivery clock restarts with this segment.
                r.first_sent_time = now;
                r.delivered_time = now;
            }
            if let Some(slot) = r.segments.get_mut(seq as usize) {
                *slot = (r.delivered, r.delivered_time, r.first_sent_time, now);
            }
        }
        if let Some(prr) = self.prr.as_mut() {
            prr.sent();
        }
        if let Some(history) = self.karn.as_mut() {
            history.sent(seq, seq < self.high_sent, now);
        }
        if seq < self.high_sent {
            self.retransmits += 1;
            if let Some(sb) = self.scoreboard.as_mut() {
                sb.retransmitted(seq);
            }
        } else {
            self.high_sent = seq + 1;
            if let Some(sb) = self.scoreboard.as_mut() {
                sb.sent_up_to(self.high_sent);
            }
        }
        self.packets_sent += 1;
        let mut packet = Packet::new(
            PacketKind::Data,
            self.ends.flow,
            self.number,
            seq,
            self.ends.dst,
            spec.segment_wire_bytes(self.ends.size, seq),
        );
        packet.sent_ps = now.0;
        if spec.cc.ecn_capable() {
            packet.ecn = crate::packet::Ecn::Ect0;
        }
        out.packets.push(packet);
        self.number = (self.number + 1) & !ACK_NUMBER_BIT;
    }

    fn arm_rto(&mut self, now: SimTime, out: &mut TransportOut) {
        self.rto_timer.arm(now + self.rto.rto(), RTO_TIMER, out);
    }
}

/// Applies every SACK block of `ack`: the packet's own and its side record's; returns how
/// many segments became SACKed.
fn sack_all(sb: &mut LazyBoard, ack: &Packet, side: Option<&SideRecord>) -> u32 {
    let mut newly = sb.sack(ack.sack_start, ack.sack_len as u32);
    for &(start, len) in side.map_or(&[][..], |s| s.sack_blocks()) {
        newly += sb.sack(start, len);
    }
    newly
}

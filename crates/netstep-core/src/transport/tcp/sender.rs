//! The reliable sender: sequence space, loss detection and recovery (RFC 6675 with SACK,
//! RFC 6582 without), RTO (RFC 6298), retry limit, pacing. Window rules come from the
//! [`CongestionControl`].

use super::{RtoEstimator, Scoreboard, TcpSpec};
use crate::packet::{ACK_NUMBER_BIT, Ecn, Packet, PacketKind};
use crate::transport::cc::{AckSample, CongestionControl};
use crate::transport::{FailureReason, FlowEnds, SenderCounters, TransportOut};
use crate::units::{Bytes, SimTime};

/// Pacing timers carry this bit; retransmission timers never do.
const PACE_BIT: u32 = 1 << 31;

/// Loss-recovery state.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// No recovery in progress.
    Open,
    /// Fast recovery (RFC 6675 with SACK, RFC 6582 without).
    Fast,
    /// SACK only: retransmitting the holes left at a timeout.
    Timeout,
}

/// Sender state (segments are numbered from 0).
#[derive(Clone, Debug)]
pub struct TcpSender {
    ends: FlowEnds,
    n_segments: u32,
    cc: CongestionControl,
    board: Scoreboard,
    /// Next new segment (with SACK always `high_sent`; without, go-back-N after a timeout).
    snd_nxt: u32,
    dupacks: u32,
    phase: Phase,
    /// Exclusive: recovery ends once `snd_una` reaches it; a new recovery needs that too.
    recovery_point: Option<u32>,
    /// NewReno without SACK: the inflated window during fast recovery.
    recovery_window: f64,
    /// One past the highest segment retransmitted in this recovery (RFC 6675 HighRxt + 1).
    rxt_next: u32,
    /// After a timeout (SACK): every un-SACKed segment below this is lost.
    timeout_lost_below: u32,
    rto: RtoEstimator,
    rto_deadline: Option<SimTime>,
    timer_at: Option<SimTime>,
    timer_token: u32,
    pace_at: Option<SimTime>,
    pace_token: u32,
    next_send_at: SimTime,
    retries: u32,
    number: u32,
    delivered: u64,
    episode_retransmits: u32,
    /// Most retransmissions sent during one fast-recovery episode.
    pub max_episode_retransmits: u32,
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Segments sent more than once.
    pub retransmits: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Why the sender gave up, if it did.
    pub failure: Option<FailureReason>,
}

impl TcpSender {
    /// Starts the connection (no handshake): the initial window leaves at `now`.
    pub fn start(spec: &TcpSpec, ends: FlowEnds, now: SimTime, out: &mut TransportOut) -> TcpSender {
        let mut s = TcpSender {
            n_segments: spec.n_segments(ends.size),
            ends,
            cc: CongestionControl::new(spec.cc, spec.initial_cwnd, spec.abc_limit),
            board: Scoreboard::default(),
            snd_nxt: 0,
            dupacks: 0,
            phase: Phase::Open,
            recovery_point: None,
            recovery_window: 0.0,
            rxt_next: 0,
            timeout_lost_below: 0,
            rto: RtoEstimator::new(spec),
            rto_deadline: None,
            timer_at: None,
            timer_token: 0,
            pace_at: None,
            pace_token: 0,
            next_send_at: SimTime::ZERO,
            retries: 0,
            number: 0,
            delivered: 0,
            episode_retransmits: 0,
            max_episode_retransmits: 0,
            packets_sent: 0,
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            failure: None,
        };
        s.send_available(spec, now, out);
        s
    }

    /// The congestion control.
    pub fn cc(&self) -> &CongestionControl {
        &self.cc
    }
    /// The retransmission-timeout estimator.
    pub fn rto(&self) -> &RtoEstimator {
        &self.rto
    }
    /// The scoreboard.
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.board
    }
    /// Lowest unacknowledged segment.
    pub fn snd_una(&self) -> u32 {
        self.board.base()
    }
    /// True while fast recovery is in progress.
    pub fn in_fast_recovery(&self) -> bool {
        self.phase == Phase::Fast
    }
    /// Segments in flight (RFC 6675 `pipe` with SACK; `high_sent - snd_una` without).
    pub fn pipe(&self, spec: &TcpSpec) -> u32 {
        if spec.sack {
            self.board.pipe(self.lost_boundary(spec))
        } else {
            self.board.high() - self.board.base()
        }
    }
    /// True once every segment is acknowledged.
    pub fn is_done(&self) -> bool {
        self.board.base() >= self.n_segments
    }
    /// What the sender did so far.
    pub fn counters(&self) -> SenderCounters {
        SenderCounters {
            packets_sent: self.packets_sent,
            retransmits: self.retransmits,
            fast_retransmits: self.fast_retransmits,
            timeouts: self.timeouts,
            failure: self.failure,
        }
    }

    /// Processes an ACK (other feedback kinds are ignored).
    pub fn on_ack(&mut self, spec: &TcpSpec, ack: &Packet, now: SimTime, out: &mut TransportOut) {
        if ack.kind != PacketKind::Ack || self.failure.is_some() || self.is_done() {
            return;
        }
        if spec.sack {
            self.on_ack_sack(spec, ack, now, out);
        } else {
            self.on_ack_newreno(spec, ack, now, out);
        }
    }

    /// A timer fired; returns true when it was live.
    pub fn on_timer(
        &mut self,
        spec: &TcpSpec,
        token: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) -> bool {
        if self.failure.is_some() || self.is_done() {
            return false;
        }
        if token & PACE_BIT != 0 {
            if token != self.pace_token || self.pace_at.is_none() {
                return false;
            }
            self.pace_at = None;
            self.send_available(spec, now, out);
            return true;
        }
        if token != self.timer_token {
            return false;
        }
        self.timer_at = None;
        let Some(deadline) = self.rto_deadline else {
            return false;
        };
        if deadline > now {
            self.schedule_timer(deadline, out);
            return false;
        }
        self.on_rto(spec, now, out);
        true
    }

    /// Retransmission timeout (RFC 6298 5.4-5.7, RFC 5681 equation 4).
    fn on_rto(&mut self, spec: &TcpSpec, now: SimTime, out: &mut TransportOut) {
        self.timeouts += 1;
        self.rto_deadline = None;
        if self.retries >= spec.max_retries {
            self.failure = Some(FailureReason::RetryLimit);
            return;
        }
        self.retries += 1;
        let high = self.board.high();
        let flight = high - self.board.base();
        self.cc.on_rto(flight, now);
        self.dupacks = 0;
        self.recovery_point = Some(high);
        if spec.sack {
            self.phase = Phase::Timeout;
            self.timeout_lost_below = high;
            self.rxt_next = self.board.base();
            self.board.clear_retrans_out();
        } else {
            self.phase = Phase::Open;
            self.snd_nxt = self.board.base();
        }
        self.rto.backoff(spec);
        self.send_available(spec, now, out);
    }

    /// Cumulative advance to `a`: RTT sample (timestamps or Karn), scoreboard, retry count.
    fn advance(&mut self, spec: &TcpSpec, a: u32, ack: &Packet, now: SimTime) -> (u32, Option<SimTime>) {
        let done = self.board.advance(a);
        let rtt = if spec.timestamps {
            Some(SimTime(now.0.saturating_sub(ack.sent_ps)))
        } else if !done.any_retransmitted && done.acked > 0 {
            Some(SimTime(now.0.saturating_sub(done.last_sent_ps)))
        } else {
            None
        };
        if let Some(r) = rtt {
            self.rto.sample(spec, r);
        }
        self.retries = 0;
        self.delivered += done.acked as u64;
        (done.acked, rtt)
    }

    fn sample(&self, acked: u32, sacked: u32, rtt: Option<SimTime>, ack: &Packet, pipe: u32, in_recovery: bool, now: SimTime) -> AckSample {
        AckSample {
            acked,
            sacked,
            rtt,
            ecn_echo: ack.has(Packet::ECN_ECHO),
            pipe,
            delivered: self.delivered,
            in_recovery,
            now,
        }
    }

    /// NewReno without SACK (RFC 5681 fast retransmit, RFC 6582 fast recovery): the behaviour
    /// of netstep's first TCP, step for step.
    fn on_ack_newreno(&mut self, spec: &TcpSpec, ack: &Packet, now: SimTime, out: &mut TransportOut) {
        let a = ack.seq;
        let una = self.board.base();
        if a < una {
            return;
        }
        if a > una {
            let (acked, rtt) = self.advance(spec, a, ack, now);
            let flight = self.board.high() - self.board.base();
            self.snd_nxt = self.snd_nxt.max(a);
            let was_fast = self.phase == Phase::Fast;
            if was_fast {
                if self.recovery_point.is_some_and(|r| a >= r) {
                    // Full ACK: leave fast recovery (RFC 6582 3.2 step 3, option 1).
                    self.cc.on_recovery_exit(flight, now);
                    self.phase = Phase::Open;
                    self.dupacks = 0;
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    self.retransmit(spec, self.board.base(), now, out);
                    self.recovery_window = (self.recovery_window - acked as f64 + 1.0).max(1.0);
                }
            } else {
                self.dupacks = 0;
            }
            let sample = self.sample(acked, 0, rtt, ack, flight, was_fast, now);
            self.cc.on_ack(&sample);
            if self.is_done() {
                self.rto_deadline = None;
                return;
            }
            self.arm_rto(now, out);
        } else if una < self.board.high() {
            self.dupacks += 1;
            if self.phase == Phase::Fast {
                self.recovery_window += 1.0;
            } else if self.dupacks == spec.dupack_threshold
                && self.recovery_point.is_none_or(|r| a >= r)
            {
                self.enter_fast_recovery(now);
                self.retransmit(spec, una, now, out);
                self.recovery_window = self.cc.ssthresh() + spec.dupack_threshold as f64;
                self.arm_rto(now, out);
            }
        }
        self.send_available(spec, now, out);
    }

    /// SACK loss recovery (RFC 6675 section 5).
    fn on_ack_sack(&mut self, spec: &TcpSpec, ack: &Packet, now: SimTime, out: &mut TransportOut) {
        let a = ack.seq;
        let una = self.board.base();
        if a < una {
            return;
        }
        let sacked = if ack.sack_len > 0 {
            self.board
                .mark_sacked(ack.sack_start, ack.sack_start.saturating_add(ack.sack_len as u32))
        } else {
            0
        };
        self.delivered += sacked as u64;
        let (acked, rtt) = if a > una {
            self.dupacks = 0;
            self.advance(spec, a, ack, now)
        } else {
            (0, None)
        };
        let was_fast = self.phase == Phase::Fast;
        let mut exited = false;
        if self.phase != Phase::Open
            && self.recovery_point.is_some_and(|r| self.board.base() >= r)
        {
            // (A): the cumulative ACK covers the recovery point.
            if was_fast {
                let flight = self.board.high() - self.board.base();
                self.cc.on_recovery_exit(flight, now);
            }
            self.phase = Phase::Open;
            exited = true;
        }
        let outstanding = self.board.base() < self.board.high();
        if self.phase == Phase::Open && (sacked > 0 || exited) && outstanding {
            // (2): a duplicate ACK in the RFC 6675 sense (it SACKs new data); also checked
            // when a recovery ends with holes already known beyond its recovery point, which
            // would otherwise wait for the next SACK or the RTO.
            if a == una && sacked > 0 {
                self.dupacks += 1;
            }
            let base = self.board.base();
            if (self.dupacks >= spec.dupack_threshold
                || self.board.is_lost(base, spec.dupack_threshold))
                && self.recovery_point.is_none_or(|r| base >= r)
            {
                // (4): fast retransmit and enter loss recovery.
                self.enter_fast_recovery(now);
                self.rxt_next = base + 1;
                self.retransmit(spec, base, now, out);
                self.arm_rto(now, out);
            }
        }
        if acked > 0 || sacked > 0 {
            let pipe = self.pipe(spec);
            let in_recovery = was_fast || self.phase == Phase::Fast;
            let sample = self.sample(acked, sacked, rtt, ack, pipe, in_recovery, now);
            self.cc.on_ack(&sample);
        }
        if self.is_done() {
            self.rto_deadline = None;
            return;
        }
        if acked > 0 {
            self.arm_rto(now, out);
        }
        self.send_available(spec, now, out);
    }

    fn enter_fast_recovery(&mut self, now: SimTime) {
        let high = self.board.high();
        self.cc.on_congestion_event(high - self.board.base(), now);
        self.recovery_point = Some(high);
        self.phase = Phase::Fast;
        self.fast_retransmits += 1;
        self.episode_retransmits = 0;
    }

    /// Un-SACKed segments below this are lost (SACK).
    fn lost_boundary(&self, spec: &TcpSpec) -> u32 {
        let base = self.board.base();
        let mut l = self
            .board
            .loss_boundary(spec.dupack_threshold)
            .unwrap_or(base);
        if self.phase == Phase::Timeout {
            l = l.max(self.timeout_lost_below);
        }
        l.max(base)
    }

    /// RFC 6675 `NextSeg`: `(segment, is a retransmission)`.
    fn next_seg(&self, lost_below: u32) -> Option<(u32, bool)> {
        let candidate = self.board.skip_sacked(self.board.base().max(self.rxt_next));
        if self.phase != Phase::Open && candidate < lost_below {
            return Some((candidate, true));
        }
        if self.snd_nxt < self.n_segments {
            return Some((self.snd_nxt, false));
        }
        if self.phase == Phase::Fast
            && self.board.high_sacked().is_some_and(|h| candidate < h)
        {
            return Some((candidate, true));
        }
        None
    }

    fn send_available(&mut self, spec: &TcpSpec, now: SimTime, out: &mut TransportOut) {
        let mut sent_any = false;
        if spec.sack {
            let lost_below = self.lost_boundary(spec);
            let mut pipe = self.board.pipe(lost_below);
            let window = self.cc.cwnd().floor();
            while (pipe as f64) < window {
                let Some((seq, retransmission)) = self.next_seg(lost_below) else {
                    break;
                };
                if self.pacing_blocks(now, out) {
                    break;
                }
                if retransmission {
                    self.rxt_next = seq + 1;
                    self.retransmit(spec, seq, now, out);
                } else {
                    self.emit(spec, seq, now, out);
                    self.snd_nxt = seq + 1;
                }
                pipe += 1;
                sent_any = true;
            }
        } else {
            let window = if self.phase == Phase::Fast {
                self.recovery_window
            } else {
                self.cc.cwnd()
            };
            while self.snd_nxt < self.n_segments
                && ((self.snd_nxt - self.board.base()) as f64) < window.floor()
            {
                if self.pacing_blocks(now, out) {
                    break;
                }
                let seq = self.snd_nxt;
                self.emit(spec, seq, now, out);
                self.snd_nxt += 1;
                sent_any = true;
            }
        }
        if sent_any && self.rto_deadline.is_none() {
            self.arm_rto(now, out);
        }
    }

    /// With a pacing rate, true when the next segment must wait (a pacing timer is set).
    fn pacing_blocks(&mut self, now: SimTime, out: &mut TransportOut) -> bool {
        if self.cc.pacing_rate().is_none() || now >= self.next_send_at {
            return false;
        }
        if self.pace_at != Some(self.next_send_at) {
            self.pace_token = (self.pace_token.wrapping_add(1) & !PACE_BIT) | PACE_BIT;
            self.pace_at = Some(self.next_send_at);
            out.timers.push((self.next_send_at, self.pace_token));
        }
        true
    }

    fn retransmit(&mut self, spec: &TcpSpec, seq: u32, now: SimTime, out: &mut TransportOut) {
        if self.phase == Phase::Fast {
            self.episode_retransmits += 1;
            self.max_episode_retransmits = self.max_episode_retransmits.max(self.episode_retransmits);
        }
        self.emit(spec, seq, now, out);
    }

    fn emit(&mut self, spec: &TcpSpec, seq: u32, now: SimTime, out: &mut TransportOut) {
        if seq < self.board.high() {
            self.retransmits += 1;
        }
        self.board.on_sent(seq, now.0);
        self.packets_sent += 1;
        let size = spec.segment_wire_bytes(self.ends.size, seq);
        let mut packet = Packet::new(
            PacketKind::Data,
            self.ends.flow,
            self.number,
            seq,
            self.ends.dst,
            size,
        );
        packet.sent_ps = now.0;
        if self.cc.ecn_capable() {
            packet.ecn = Ecn::Ect0;
        }
        out.packets.push(packet);
        self.number = (self.number + 1) & !ACK_NUMBER_BIT;
        if let Some(rate) = self.cc.pacing_rate() {
            self.next_send_at = self.next_send_at.max(now) + rate.serialization(Bytes(size as u64));
        }
    }

    fn arm_rto(&mut self, now: SimTime, out: &mut TransportOut) {
        let deadline = now + self.rto.rto();
        self.rto_deadline = Some(deadline);
        if self.timer_at.is_none_or(|at| deadline < at) {
            self.schedule_timer(deadline, out);
        }
    }

    fn schedule_timer(&mut self, at: SimTime, out: &mut TransportOut) {
        self.timer_token = self.timer_token.wrapping_add(1) & !PACE_BIT;
        self.timer_at = Some(at);
        out.timers.push((at, self.timer_token));
    }
}

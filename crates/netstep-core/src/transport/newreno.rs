//! TCP NewReno sender and receiver, segment-granular, after RFC 5681 (slow start, congestion
//! avoidance, fast retransmit / fast recovery), RFC 6582 (NewReno partial ACKs and `recover`)
//! and RFC 6298 (RTO estimation with exponential backoff). The receiver sends one cumulative
//! ACK per data segment (no delayed ACKs) echoing the segment's send time, which gives the
//! sender an RTT sample per ACK (as with the timestamp option).

use std::collections::BTreeSet;

use super::{FlowEnds, TransportOut};
use crate::packet::{ACK_NUMBER_BIT, Packet, PacketKind};
use crate::units::{Bytes, SimTime};

/// NewReno parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct NewRenoSpec {
    /// Maximum payload bytes per segment.
    pub mss_bytes: u32,
    /// Header bytes added to every segment; also the size of an ACK.
    pub header_bytes: u32,
    /// Initial congestion window in segments.
    pub initial_cwnd: u32,
    /// Lower bound of the retransmission timeout.
    pub rto_min: SimTime,
    /// Retransmission timeout before the first RTT sample.
    pub rto_initial: SimTime,
    /// Upper bound of the (backed-off) retransmission timeout.
    pub rto_max: SimTime,
    /// Duplicate ACKs that trigger fast retransmit.
    pub dupack_threshold: u32,
    /// Retransmission timeouts in a row without progress after which the flow is given up
    /// (the next expiry fails it): Linux `tcp_retries2`, default 15.
    pub max_retries: u32,
}

impl NewRenoSpec {
    /// Segments needed for `size` payload bytes (at least one).
    pub fn n_segments(&self, size: Bytes) -> u32 {
        (size.0.div_ceil(self.mss_bytes as u64)).max(1) as u32
    }
    /// Wire bytes of segment `index` of a `size`-byte flow.
    pub fn segment_wire_bytes(&self, size: Bytes, index: u32) -> u32 {
        let n = self.n_segments(size);
        let payload = if index + 1 < n {
            self.mss_bytes as u64
        } else {
            size.0 - (n as u64 - 1) * self.mss_bytes as u64
        };
        self.header_bytes + payload as u32
    }
}

/// Sender state (segments are numbered from 0).
#[derive(Clone, Debug)]
pub struct NewRenoSender {
    ends: FlowEnds,
    n_segments: u32,
    cwnd: f64,
    ssthresh: f64,
    snd_una: u32,
    snd_nxt: u32,
    high_sent: u32,
    dupacks: u32,
    in_recovery: bool,
    recover: Option<u32>,
    srtt_ps: Option<f64>,
    rttvar_ps: f64,
    rto: SimTime,
    rto_deadline: Option<SimTime>,
    timer_at: Option<SimTime>,
    timer_token: u32,
    number: u32,
    /// Data segments put on the wire, retransmissions included.
    pub packets_sent: u64,
    /// Segments sent more than once.
    pub retransmits: u64,
    /// Fast retransmits entered.
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Timeouts in a row since `snd_una` last advanced.
    backoffs: u32,
    /// Set when the flow was given up.
    pub failure: Option<super::FailureReason>,
}

impl NewRenoSender {
    /// Starts the connection (no handshake): the initial window leaves at `now`.
    pub fn start(
        spec: &NewRenoSpec,
        ends: FlowEnds,
        now: SimTime,
        out: &mut TransportOut,
    ) -> NewRenoSender {
        let mut s = NewRenoSender {
            n_segments: spec.n_segments(ends.size),
            ends,
            cwnd: spec.initial_cwnd.max(1) as f64,
            ssthresh: f64::INFINITY,
            snd_una: 0,
            snd_nxt: 0,
            high_sent: 0,
            dupacks: 0,
            in_recovery: false,
            recover: None,
            srtt_ps: None,
            rttvar_ps: 0.0,
            rto: spec.rto_initial,
            rto_deadline: None,
            timer_at: None,
            timer_token: 0,
            number: 0,
            packets_sent: 0,
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            backoffs: 0,
            failure: None,
        };
        s.send_available(spec, now, out);
        s
    }

    /// Congestion window in segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// True once every segment is acknowledged.
    pub fn is_done(&self) -> bool {
        self.snd_una >= self.n_segments
    }

    /// Processes a cumulative ACK.
    pub fn on_ack(
        &mut self,
        spec: &NewRenoSpec,
        ack: &Packet,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        let a = ack.seq;
        if self.is_done() || self.failure.is_some() || a < self.snd_una {
            return;
        }
        if a > self.snd_una {
            self.backoffs = 0;
            self.sample_rtt(spec, SimTime(now.0.saturating_sub(ack.sent_ps)));
            let acked = (a - self.snd_una) as f64;
            self.snd_una = a;
            let flight = (self.high_sent - self.snd_una) as f64;
            self.snd_nxt = self.snd_nxt.max(a);
            if self.in_recovery {
                if self.recover.is_some_and(|r| a > r) {
                    // Full ACK: leave fast recovery (RFC 6582 3.2 step 3, option 1).
                    self.cwnd = self.ssthresh.min(flight.max(1.0) + 1.0).max(1.0);
                    self.in_recovery = false;
                    self.dupacks = 0;
                } else {
                    // Partial ACK: retransmit the next hole, deflate by the amount acked.
                    self.retransmit(spec, self.snd_una, now, out);
                    self.cwnd = (self.cwnd - acked + 1.0).max(1.0);
                }
            } else {
                self.dupacks = 0;
                if self.cwnd < self.ssthresh {
                    self.cwnd += acked;
                } else {
                    self.cwnd += acked / self.cwnd;
                }
            }
            if self.is_done() {
                self.rto_deadline = None;
                return;
            }
            self.arm_rto(now, out);
        } else if self.snd_una < self.high_sent {
            self.dupacks += 1;
            if self.in_recovery {
                self.cwnd += 1.0;
            } else if self.dupacks == spec.dupack_threshold && self.recover.is_none_or(|r| a > r) {
                let flight = (self.high_sent - self.snd_una) as f64;
                self.ssthresh = (flight / 2.0).max(2.0);
                self.recover = Some(self.high_sent - 1);
                self.in_recovery = true;
                self.fast_retransmits += 1;
                self.retransmit(spec, self.snd_una, now, out);
                self.cwnd = self.ssthresh + spec.dupack_threshold as f64;
                self.arm_rto(now, out);
            }
        }
        self.send_available(spec, now, out);
    }

    /// A timer fired; `token` identifies which.
    pub fn on_timer(
        &mut self,
        spec: &NewRenoSpec,
        token: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        if token != self.timer_token || self.is_done() || self.failure.is_some() {
            return;
        }
        self.timer_at = None;
        let Some(deadline) = self.rto_deadline else {
            return;
        };
        if deadline > now {
            self.schedule_timer(deadline, out);
            return;
        }
        // Retransmission timeout (RFC 6298 5.4-5.7, RFC 5681 eq. 4).
        if self.backoffs >= spec.max_retries {
            // Give up: no more packets, no more timers; the run can end.
            self.failure = Some(super::FailureReason::RetryLimit);
            self.rto_deadline = None;
            return;
        }
        self.backoffs += 1;
        self.timeouts += 1;
        let flight = (self.high_sent - self.snd_una) as f64;
        self.ssthresh = (flight / 2.0).max(2.0);
        self.cwnd = 1.0;
        self.in_recovery = false;
        self.dupacks = 0;
        self.recover = Some(self.high_sent - 1);
        self.snd_nxt = self.snd_una;
        self.rto = SimTime((self.rto.0.saturating_mul(2)).min(spec.rto_max.0));
        self.rto_deadline = None;
        self.send_available(spec, now, out);
    }

    fn sample_rtt(&mut self, spec: &NewRenoSpec, rtt: SimTime) {
        let r = rtt.0 as f64;
        match self.srtt_ps {
            None => {
                self.srtt_ps = Some(r);
                self.rttvar_ps = r / 2.0;
            }
            Some(srtt) => {
                self.rttvar_ps = 0.75 * self.rttvar_ps + 0.25 * (srtt - r).abs();
                self.srtt_ps = Some(0.875 * srtt + 0.125 * r);
            }
        }
        let rto = self.srtt_ps.unwrap_or(r) + 4.0 * self.rttvar_ps;
        self.rto = SimTime((rto.round() as u64).clamp(spec.rto_min.0, spec.rto_max.0));
    }

    fn send_available(&mut self, spec: &NewRenoSpec, now: SimTime, out: &mut TransportOut) {
        let mut sent_any = false;
        while self.snd_nxt < self.n_segments
            && ((self.snd_nxt - self.snd_una) as f64) < self.cwnd.floor()
        {
            let seq = self.snd_nxt;
            self.emit(spec, seq, now, out);
            self.snd_nxt += 1;
            sent_any = true;
        }
        if sent_any && self.rto_deadline.is_none() {
            self.arm_rto(now, out);
        }
    }

    fn retransmit(&mut self, spec: &NewRenoSpec, seq: u32, now: SimTime, out: &mut TransportOut) {
        self.emit(spec, seq, now, out);
    }

    fn emit(&mut self, spec: &NewRenoSpec, seq: u32, now: SimTime, out: &mut TransportOut) {
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
            spec.segment_wire_bytes(self.ends.size, seq),
        );
        packet.sent_ps = now.0;
        out.packets.push(packet);
        self.number = (self.number + 1) & !ACK_NUMBER_BIT;
    }

    fn arm_rto(&mut self, now: SimTime, out: &mut TransportOut) {
        let deadline = now + self.rto;
        self.rto_deadline = Some(deadline);
        if self.timer_at.is_none_or(|at| deadline < at) {
            self.schedule_timer(deadline, out);
        }
    }

    fn schedule_timer(&mut self, at: SimTime, out: &mut TransportOut) {
        self.timer_token = self.timer_token.wrapping_add(1);
        self.timer_at = Some(at);
        out.timers.push((at, self.timer_token));
    }
}

/// Receiver state: in-order point, out-of-order segments, completion.
#[derive(Clone, Debug)]
pub struct NewRenoReceiver {
    flow: u32,
    src: u32,
    n_segments: u32,
    expected: u32,
    out_of_order: BTreeSet<u32>,
    acks_sent: u32,
    /// Distinct segments received.
    pub delivered: u64,
    /// When the last missing segment arrived.
    pub completed: Option<SimTime>,
}

impl NewRenoReceiver {
    /// A receiver for a flow.
    pub fn new(spec: &NewRenoSpec, ends: FlowEnds) -> NewRenoReceiver {
        NewRenoReceiver {
            flow: ends.flow,
            src: ends.src,
            n_segments: spec.n_segments(ends.size),
            expected: 0,
            out_of_order: BTreeSet::new(),
            acks_sent: 0,
            delivered: 0,
            completed: None,
        }
    }

    /// Accepts a segment and sends a cumulative ACK.
    pub fn on_data(
        &mut self,
        spec: &NewRenoSpec,
        data: &Packet,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        let seq = data.seq;
        if seq == self.expected {
            self.delivered += 1;
            self.expected += 1;
            while self.out_of_order.remove(&self.expected) {
                self.expected += 1;
            }
        } else if seq > self.expected && self.out_of_order.insert(seq) {
            self.delivered += 1;
        }
        if self.expected == self.n_segments && self.completed.is_none() {
            self.completed = Some(now);
        }
        let mut ack = Packet::new(
            PacketKind::Ack,
            self.flow,
            ACK_NUMBER_BIT | self.acks_sent,
            self.expected,
            self.src,
            spec.header_bytes,
        );
        ack.sent_ps = data.sent_ps;
        out.packets.push(ack);
        self.acks_sent = (self.acks_sent + 1) & !ACK_NUMBER_BIT;
    }
}

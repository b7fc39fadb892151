//! Loss recovery's entry points: fast recovery (RFC 6675 / RFC 6582, with PRR), the partial
//! ACK's retransmission of `partial_ack_retransmit`, the retransmission timeout, and what a
//! loss reduces into `ssthresh` ([`SsthreshFrom`]).

use super::TcpSender;
use crate::transport::TransportOut;
use crate::transport::tcp::prr::{AckFacts, Prr};
use crate::transport::tcp::{Recovery, SsthreshFrom, TcpSpec};
use crate::units::SimTime;

impl TcpSender {
    /// What a loss reduces into `ssthresh` ([`SsthreshFrom`]), in segments; `recovery`: fast
    /// recovery is starting (ns-3 marks the head lost before it counts `pipe`).
    pub(super) fn loss_basis(&self, spec: &TcpSpec, recovery: bool) -> u32 {
        let flight = self.high_sent - self.snd_una;
        match (spec.ssthresh_from, &self.scoreboard) {
            (SsthreshFrom::Flight, _) | (SsthreshFrom::Pipe, None) => flight,
            (SsthreshFrom::Pipe, Some(sb)) => {
                let head_counted =
                    recovery && !sb.is_lost(self.snd_una) && !sb.is_sacked(self.snd_una);
                sb.pipe().saturating_sub(head_counted as u32)
            }
            (SsthreshFrom::Cwnd, _) => self.cc.cwnd().floor() as u32,
        }
    }

    /// Loss detected: reduce once, retransmit the first unacknowledged segment.
    /// With PRR, its state starts from `pipe` and this ACK (which delivered what exceeds
    /// `delivered_before`) sets the window before the retransmission leaves.
    pub(super) fn enter_recovery(
        &mut self,
        spec: &TcpSpec,
        delivered_before: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        self.cc.on_congestion(self.loss_basis(spec, true));
        self.recover = Some(self.high_sent - 1);
        self.in_recovery = true;
        self.first_partial = true;
        self.fast_retransmits += 1;
        if spec.recovery != Recovery::Classic
            && let Some(sb) = &self.scoreboard
        {
            let mut prr = Prr::enter(sb.pipe());
            // ns-3's EnterRecovery: DoRecovery as for a duplicate ACK.
            prr.update(
                spec.recovery == Recovery::PrrNs3,
                &AckFacts {
                    delivered: self.snd_una + sb.sacked() - delivered_before,
                    sacked_new: true,
                    advanced: false,
                    pipe: sb.pipe(),
                    ssthresh: self.cc.ssthresh(),
                    safe: false,
                    mss: spec.mss_bytes,
                },
            );
            self.prr = Some(Box::new(prr));
        }
        self.emit(spec, self.snd_una, now, out);
        if self.scoreboard.is_none() {
            self.inflation = spec.dupack_threshold as f64;
        }
        if spec.recovery_restarts_rto || !self.rto_timer.is_armed() {
            self.arm_rto(now, out);
        }
    }

    /// `partial_ack_retransmit`: the first lost segment not yet retransmitted, else the head
    /// unless it was (ns-3 3.44's `DoRetransmit` with `NextSeg` rule 1 only).
    pub(super) fn retransmit_after_partial_ack(
        &mut self,
        spec: &TcpSpec,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        // A partial ACK leaves data outstanding: the head is in the window.
        let head = self.snd_una;
        let Some(sb) = self.scoreboard.as_mut() else {
            return;
        };
        if sb.is_retransmitted(head) || sb.is_sacked(head) {
            return;
        }
        let seq = sb.next_lost().unwrap_or(head);
        self.emit(spec, seq, now, out);
    }

    /// The retransmission timer expired (RFC 6298 5.4-5.7, RFC 5681 eq. 4).
    pub(super) fn timed_out(&mut self, spec: &TcpSpec, now: SimTime, out: &mut TransportOut) {
        if let Err(reason) = self.retries.on_timeout(spec.max_retries) {
            // Give up: no more packets, no more timers; the run can end.
            self.failure = Some(reason);
            self.rto_timer.disarm();
            return;
        }
        // A repeated timeout (the head was retransmitted by the last one) keeps ssthresh
        // under `"pipe"` and `"cwnd"` (RFC 5681 §3.1).
        let held = (spec.ssthresh_from != SsthreshFrom::Flight && self.retries.backoffs > 1)
            .then(|| self.cc.ssthresh());
        self.cc.on_timeout(self.loss_basis(spec, false));
        if let Some(ssthresh) = held {
            self.cc.keep_ssthresh(ssthresh);
        }
        self.inflation = 0.0;
        self.in_recovery = false;
        self.prr = None;
        if let Some(history) = self.karn.as_mut() {
            history.clear();
        }
        self.dupacks = 0;
        // No new recovery before everything sent so far is acknowledged (RFC 6582 §4,
        // RFC 6675 §5.1).
        self.recover = Some(self.high_sent - 1);
        self.snd_nxt = self.snd_una;
        if let Some(sb) = self.scoreboard.as_mut() {
            sb.timeout();
        }
        self.rto.back_off(spec.rto_max);
        self.rto_timer.disarm();
        self.send_available(spec, now, out);
    }
}

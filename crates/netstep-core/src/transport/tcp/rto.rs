//! Retransmission timer estimation (RFC 6298): SRTT and RTTVAR from RTT samples, RTO =
//! SRTT + 4·RTTVAR clamped to `[rto_min, rto_max]`, doubled on every expiry (5.5).
//!
//! Samples come from echoed send times by default (the timestamp option, RFC 7323 §4): every
//! ACK that advances the cumulative point carries the send time of the segment that triggered
//! it, so retransmitted segments give valid samples; [`KarnHistory`] samples without
//! timestamps, by Karn's rule.

use crate::units::SimTime;

/// SRTT / RTTVAR state and the current (possibly backed-off) RTO.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    srtt_ps: Option<f64>,
    rttvar_ps: f64,
    rto: SimTime,
}

impl RtoEstimator {
    /// Before any sample the RTO is `initial` (RFC 6298 2.1).
    pub fn new(initial: SimTime) -> RtoEstimator {
        RtoEstimator {
            srtt_ps: None,
            rttvar_ps: 0.0,
            rto: initial,
        }
    }

    /// The current RTO.
    pub fn rto(&self) -> SimTime {
        self.rto
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt_ps.map(|s| SimTime(s.round() as u64))
    }

    /// Takes an RTT sample (RFC 6298 2.2 and 2.3, alpha = 1/8, beta = 1/4).
    pub fn sample(&mut self, rtt: SimTime, min: SimTime, max: SimTime) {
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
        self.rto = SimTime((rto.round() as u64).clamp(min.0, max.0));
    }

    /// The timer expired: back off (RFC 6298 5.5), at most to `max`.
    pub fn back_off(&mut self, max: SimTime) {
        self.rto = SimTime(self.rto.0.saturating_mul(2).min(max.0));
    }

    /// Drops the backoff: the RTO from SRTT and RTTVAR again (ns-3's `NewAck`); nothing
    /// before the first sample.
    pub fn restore(&mut self, min: SimTime, max: SimTime) {
        if let Some(srtt) = self.srtt_ps {
            let rto = srtt + 4.0 * self.rttvar_ps;
            self.rto = SimTime((rto.round() as u64).clamp(min.0, max.0));
        }
    }
}

/// Karn's rule over the segments in flight ([`super::RttSampling::Karn`]): each segment's
/// first send time and whether it was sent again, from the cumulative point up.
#[derive(Clone, Debug, Default)]
pub struct KarnHistory {
    /// The segment the front entry describes.
    base: u32,
    /// `(first send time in ps, retransmitted)` of segments `base..`.
    sent: std::collections::VecDeque<(u64, bool)>,
}

impl KarnHistory {
    /// Segment `seq` leaves at `now`: new data (`retransmission` false), recorded, or a
    /// retransmission, which spoils its segment's sample (and is not recorded after a timeout
    /// cleared the history, as in ns-3).
    pub fn sent(&mut self, seq: u32, retransmission: bool, now: SimTime) {
        if retransmission {
            if let Some(i) = seq.checked_sub(self.base)
                && let Some(entry) = self.sent.get_mut(i as usize)
            {
                entry.1 = true;
            }
            return;
        }
        if self.sent.is_empty() {
            self.base = seq;
        }
        if seq == self.base + self.sent.len() as u32 {
            self.sent.push_back((now.0, false));
        }
    }

    /// The cumulative point moved to `ack` at `now`: the sample of the oldest recorded
    /// segment if `ack` covers it and it was sent once (ns-3 3.44's `EstimateRtt`: the front
    /// of its history, fully acknowledged, not retransmitted).
    pub fn acked(&mut self, ack: u32, now: SimTime) -> Option<SimTime> {
        let sample = self
            .sent
            .front()
            .filter(|&&(_, retx)| ack > self.base && !retx)
            .map(|&(at, _)| SimTime(now.0.saturating_sub(at)));
        while self.base < ack && self.sent.pop_front().is_some() {
            self.base += 1;
        }
        sample
    }

    /// A retransmission timeout: no segment sent so far gives a sample (ns-3 clears its
    /// history).
    pub fn clear(&mut self) {
        self.sent.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_sample_then_smoothing_follow_rfc_6298() {
        let (min, max) = (SimTime(1), SimTime(u64::MAX / 4));
        let mut e = RtoEstimator::new(SimTime(1_000));
        assert_eq!(e.rto(), SimTime(1_000));
        e.sample(SimTime(100), min, max);
        // SRTT = R, RTTVAR = R/2, RTO = R + 4 R/2 = 3R.
        assert_eq!(e.rto(), SimTime(300));
        e.sample(SimTime(200), min, max);
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5.
        assert_eq!(e.srtt(), Some(SimTime(113)));
        assert_eq!(e.rto(), SimTime(363)); // 112.5 + 250 = 362.5, rounded half away
        e.back_off(SimTime(500));
        assert_eq!(e.rto(), SimTime(500), "backed off, clamped at max");
        e.restore(min, max);
        assert_eq!(e.rto(), SimTime(363), "the backoff dropped");
    }

    #[test]
    fn karn_samples_only_segments_sent_once() {
        let mut h = KarnHistory::default();
        for seq in 0..4 {
            h.sent(seq, false, SimTime(10 * seq as u64));
        }
        h.sent(1, true, SimTime(100));
        assert_eq!(h.acked(1, SimTime(50)), Some(SimTime(50)));
        assert_eq!(h.acked(3, SimTime(150)), None, "segment 1 was sent twice");
        assert_eq!(h.acked(4, SimTime(160)), Some(SimTime(130)));
        h.sent(4, false, SimTime(200));
        h.clear();
        h.sent(4, true, SimTime(300));
        h.sent(5, false, SimTime(410));
        assert_eq!(
            h.acked(5, SimTime(400)),
            None,
            "history cleared by a timeout"
        );
        assert_eq!(h.acked(6, SimTime(420)), Some(SimTime(10)));
    }
}

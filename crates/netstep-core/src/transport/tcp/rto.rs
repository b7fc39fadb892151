//! Retransmission timer estimation (RFC 6298): SRTT and RTTVAR from RTT samples, RTO =
//! SRTT + 4·RTTVAR clamped to `[rto_min, rto_max]`, doubled on every expiry (5.5).
//!
//! Samples come from echoed send times (the timestamp option, RFC 7323 §4): every ACK that
//! advances the cumulative point carries the send time of the segment that triggered it, so
//! retransmitted segments give valid samples and Karn's rule is not needed.

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
    }
}

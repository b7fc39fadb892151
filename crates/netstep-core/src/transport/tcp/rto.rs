//! Retransmission timeout per RFC 6298.

use super::TcpSpec;
use crate::units::SimTime;

/// SRTT / RTTVAR estimator with exponential backoff.
#[derive(Clone, Debug)]
pub struct RtoEstimator {
    srtt_ps: Option<f64>,
    rttvar_ps: f64,
    rto: SimTime,
}

impl RtoEstimator {
    /// Before the first sample the RTO is `rto_initial` (RFC 6298 2.1).
    pub fn new(spec: &TcpSpec) -> RtoEstimator {
        RtoEstimator {
            srtt_ps: None,
            rttvar_ps: 0.0,
            rto: spec.rto_initial,
        }
    }
    /// Takes an RTT sample (RFC 6298 2.2, 2.3) and recomputes the RTO, clamped to
    /// `[rto_min, rto_max]` (which also undoes any backoff).
    pub fn sample(&mut self, spec: &TcpSpec, rtt: SimTime) {
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
    /// Doubles the RTO up to `rto_max` (RFC 6298 5.5).
    pub fn backoff(&mut self, spec: &TcpSpec) {
        self.rto = SimTime((self.rto.0.saturating_mul(2)).min(spec.rto_max.0));
    }
    /// The current RTO.
    pub fn rto(&self) -> SimTime {
        self.rto
    }
    /// Smoothed RTT, once sampled.
    pub fn srtt(&self) -> Option<SimTime> {
        self.srtt_ps.map(|s| SimTime(s.round() as u64))
    }
}

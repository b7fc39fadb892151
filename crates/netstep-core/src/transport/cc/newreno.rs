//! NewReno window rules, in segments: slow start with Appropriate Byte Counting (RFC 3465,
//! limit L segments per ACK), congestion avoidance (RFC 5681: +acked/cwnd per ACK), halving
//! on a congestion event (RFC 5681 equation 4), cwnd = 1 after a timeout, and the RFC 6582
//! option-1 window at the end of fast recovery. The fast-recovery window *inflation* of
//! NewReno without SACK is loss-recovery bookkeeping and lives in the sender.

use super::AckSample;
use crate::units::SimTime;

/// NewReno state.
#[derive(Clone, Debug)]
pub struct NewReno {
    cwnd: f64,
    ssthresh: f64,
    abc_limit: u32,
}

impl NewReno {
    /// `initial_cwnd` segments (at least 1); slow start grows by at most `abc_limit` segments
    /// per ACK (0 = by everything the ACK acknowledged).
    pub fn new(initial_cwnd: u32, abc_limit: u32) -> NewReno {
        NewReno {
            cwnd: initial_cwnd.max(1) as f64,
            ssthresh: f64::INFINITY,
            abc_limit,
        }
    }
    /// Grows the window for newly cumulatively acknowledged segments outside recovery.
    pub fn on_ack(&mut self, s: &AckSample) {
        if s.in_recovery || s.acked == 0 {
            return;
        }
        let acked = s.acked as f64;
        if self.cwnd < self.ssthresh {
            let limit = if self.abc_limit == 0 {
                acked
            } else {
                acked.min(self.abc_limit as f64)
            };
            self.cwnd += limit;
        } else {
            self.cwnd += acked / self.cwnd;
        }
    }
    /// ssthresh = max(flight / 2, 2); cwnd = ssthresh.
    pub fn on_congestion_event(&mut self, flight: u32, _now: SimTime) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0);
        self.cwnd = self.ssthresh;
    }
    /// RFC 6582 3.2 step 3 option 1: cwnd = min(ssthresh, max(flight, 1) + 1).
    pub fn on_recovery_exit(&mut self, flight: u32, _now: SimTime) {
        self.cwnd = self.ssthresh.min((flight as f64).max(1.0) + 1.0).max(1.0);
    }
    /// ssthresh = max(flight / 2, 2); cwnd = 1 (the loss window).
    pub fn on_rto(&mut self, flight: u32, _now: SimTime) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0);
        self.cwnd = 1.0;
    }
    /// Congestion window, segments.
    pub fn cwnd(&self) -> f64 {
        self.cwnd
    }
    /// Slow-start threshold, segments.
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32) -> AckSample {
        AckSample {
            acked,
            sacked: 0,
            rtt: None,
            ecn_echo: false,
            pipe: 0,
            delivered: 0,
            in_recovery: false,
            now: SimTime::ZERO,
        }
    }

    #[test]
    fn abc_limits_slow_start_growth_per_ack() {
        let mut c = NewReno::new(10, 2);
        c.on_ack(&ack(5));
        assert_eq!(c.cwnd(), 12.0);
        let mut unlimited = NewReno::new(10, 0);
        unlimited.on_ack(&ack(5));
        assert_eq!(unlimited.cwnd(), 15.0);
    }

    #[test]
    fn congestion_avoidance_adds_about_one_segment_per_window() {
        let mut c = NewReno::new(10, 2);
        c.on_congestion_event(20, SimTime::ZERO);
        assert_eq!((c.cwnd(), c.ssthresh()), (10.0, 10.0));
        for _ in 0..10 {
            c.on_ack(&ack(1));
        }
        assert!((c.cwnd() - 10.0).abs() > 0.9 && c.cwnd() < 11.0, "{}", c.cwnd());
        c.on_rto(8, SimTime::ZERO);
        assert_eq!((c.cwnd(), c.ssthresh()), (1.0, 4.0));
    }
}

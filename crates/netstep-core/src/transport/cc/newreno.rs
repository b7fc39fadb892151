//! NewReno window control (RFC 5681, RFC 6582): slow start with an appropriate-byte-counting
//! limit (RFC 5681 §3.1 eq. 2, RFC 3465 `L`), congestion avoidance growing by `acked / cwnd`
//! per ACK (about one segment per round trip), halving on loss, one segment after a timeout.

use super::{AckSample, Algorithm};

/// NewReno state, in segments.
#[derive(Clone, Debug)]
pub struct NewReno {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold (infinite until the first loss).
    pub ssthresh: f64,
}

impl NewReno {
    /// Starts in slow start with `initial_cwnd` segments (at least one).
    pub fn new(initial_cwnd: u32) -> NewReno {
        NewReno {
            cwnd: initial_cwnd.max(1) as f64,
            ssthresh: f64::INFINITY,
        }
    }
}

impl Algorithm for NewReno {
    #[inline]
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn keep_ssthresh(&mut self, ssthresh: f64) {
        self.ssthresh = ssthresh;
    }

    /// Slow start below `ssthresh`, congestion avoidance above.
    #[inline]
    fn on_ack(&mut self, ack: &AckSample) {
        if self.cwnd < self.ssthresh {
            self.cwnd += ack.slow_start_increase();
        } else {
            self.cwnd += ack.acked as f64 / self.cwnd;
        }
    }

    /// RFC 5681 eq. 4 (FlightSize / 2, at least two segments); the window drops to it.
    fn on_congestion(&mut self, flight: u32) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0);
        self.cwnd = self.ssthresh;
    }

    /// RFC 6582 §3.2 step 3, option 1: `min(ssthresh, FlightSize + 1)`; `ssthresh` when no
    /// flight is given (ns-3, Linux).
    fn on_recovery_exit(&mut self, flight: Option<u32>) {
        self.cwnd = match flight {
            Some(flight) => self.ssthresh.min((flight as f64).max(1.0) + 1.0).max(1.0),
            None => self.ssthresh.max(1.0),
        };
    }

    /// RFC 5681 eq. 4 and loss window of one segment.
    fn on_timeout(&mut self, flight: u32) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0);
        self.cwnd = 1.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32, abc_limit: u32) -> AckSample {
        AckSample {
            abc_limit,
            ..AckSample::test(acked)
        }
    }

    #[test]
    fn slow_start_is_limited_by_abc_and_avoidance_is_linear() {
        let mut c = NewReno::new(10);
        c.on_ack(&ack(5, 2));
        assert_eq!(c.cwnd, 12.0, "RFC 3465: at most L = 2 segments per ACK");
        c.on_ack(&ack(5, 0));
        assert_eq!(c.cwnd, 17.0, "no limit");
        c.on_congestion(20);
        assert_eq!((c.cwnd, c.ssthresh), (10.0, 10.0));
        // Ten ACKs of one segment in avoidance: about one segment more.
        for _ in 0..10 {
            c.on_ack(&ack(1, 2));
        }
        assert!((c.cwnd - 10.96).abs() < 0.01, "{}", c.cwnd);
        c.on_timeout(9);
        assert_eq!((c.cwnd, c.ssthresh), (1.0, 4.5));
    }
}

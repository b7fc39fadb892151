//! REAL's JK source (Keshav 1988): Jacobson and Karels' slow start and congestion avoidance
//! ("Congestion Avoidance and Control", 1988) with RTT estimation. Below `ssthresh` the window
//! grows by one segment per acknowledged segment, above it by `1 / cwnd`; a retransmission
//! timeout sets `ssthresh = max(FlightSize / 2, 2)` and the window to one segment, and the sender
//! goes back N (no fast retransmit: the scenario loader turns it and SACK off).

use super::{AckSample, Algorithm};

/// Jacobson-Karels window state, in segments.
#[derive(Clone, Debug)]
pub struct Jk {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold (infinite until the first timeout).
    pub ssthresh: f64,
}

impl Jk {
    /// Starts in slow start with `initial_cwnd` segments (at least one).
    pub fn new(initial_cwnd: u32) -> Jk {
        Jk {
            cwnd: initial_cwnd.max(1) as f64,
            ssthresh: f64::INFINITY,
        }
    }

    /// A loss: half the flight becomes the threshold, one segment the window.
    pub fn on_loss(&mut self, flight: u32) {
        self.ssthresh = (flight as f64 / 2.0).max(2.0);
        self.cwnd = 1.0;
    }
}

impl Algorithm for Jk {
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn keep_ssthresh(&mut self, ssthresh: f64) {
        self.ssthresh = ssthresh;
    }

    /// Slow start below `ssthresh`, linear growth above.
    fn on_ack(&mut self, ack: &AckSample) {
        let acked = ack.acked as f64;
        if self.cwnd < self.ssthresh {
            self.cwnd += acked;
        } else {
            self.cwnd += acked / self.cwnd;
        }
    }

    /// No fast recovery; a loss is treated as at a timeout.
    fn on_congestion(&mut self, flight: u32) {
        self.on_loss(flight);
    }

    fn on_timeout(&mut self, flight: u32) {
        self.on_loss(flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(acked: u32) -> AckSample {
        AckSample::test(acked)
    }

    #[test]
    fn slow_start_then_linear_growth_and_back_to_one_on_loss() {
        let mut c = Jk::new(1);
        for _ in 0..7 {
            c.on_ack(&ack(1));
        }
        assert_eq!(c.cwnd, 8.0, "one segment per acknowledged segment");
        c.on_loss(8);
        assert_eq!((c.cwnd, c.ssthresh), (1.0, 4.0));
        c.cwnd = 4.0;
        for _ in 0..4 {
            c.on_ack(&ack(1));
        }
        assert!(
            (c.cwnd - 4.93).abs() < 0.01,
            "about one segment per window: {}",
            c.cwnd
        );
    }
}

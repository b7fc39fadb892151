//! DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257): ECN-capable segments; the sender keeps
//! `alpha`, an EWMA (gain `g`, default 1/16) of the fraction of acknowledged segments whose
//! ACK echoed CE, updated once per observation window (one round trip: until the cumulative
//! ACK passes what was sent when the window began), and at the first ECE of a round trip cuts
//! the window to `cwnd (1 - alpha / 2)` (once per round trip, and without growth until that
//! round trip is acknowledged, like Linux's CWR state). Window growth and the reaction to
//! loss are NewReno's. `alpha` starts at 1 (Linux's
//! `dctcp_alpha_on_init`), so the first marks halve the window.

use super::{AckSample, Algorithm, NewReno};

/// DCTCP state, in segments.
#[derive(Clone, Debug)]
pub struct Dctcp {
    /// Window growth and loss reaction.
    pub reno: NewReno,
    /// Estimated fraction of marked segments.
    pub alpha: f64,
    /// EWMA gain.
    g: f64,
    /// The observation window ends when the cumulative ACK reaches this segment.
    window_end: u32,
    /// Segments acknowledged in this window, and those acknowledged with ECE.
    acked: u32,
    acked_ece: u32,
    /// No further ECE reduction until the cumulative ACK passes this segment.
    cwr_end: Option<u32>,
}

impl Dctcp {
    /// Starts like NewReno with `initial_cwnd` segments, `alpha = 1`, gain `g`.
    pub fn new(initial_cwnd: u32, g: f64) -> Dctcp {
        Dctcp {
            reno: NewReno::new(initial_cwnd),
            alpha: 1.0,
            g,
            window_end: 0,
            acked: 0,
            acked_ece: 0,
            cwr_end: None,
        }
    }
}

/// NewReno's window with DCTCP's reaction to marks.
impl Algorithm for Dctcp {
    fn cwnd(&self) -> f64 {
        self.reno.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.reno.ssthresh
    }

    fn keep_ssthresh(&mut self, ssthresh: f64) {
        self.reno.ssthresh = ssthresh;
    }

    fn alpha(&self) -> Option<f64> {
        Some(self.alpha)
    }

    /// New data acknowledged: update alpha at the end of each window; cut once per round
    /// trip on ECE, else grow as NewReno.
    fn on_ack(&mut self, ack: &AckSample) {
        self.acked += ack.acked;
        if ack.ece {
            self.acked_ece += ack.acked;
        }
        if ack.una >= self.window_end {
            if self.acked > 0 {
                let fraction = self.acked_ece as f64 / self.acked as f64;
                self.alpha = (1.0 - self.g) * self.alpha + self.g * fraction;
            }
            self.acked = 0;
            self.acked_ece = 0;
            self.window_end = ack.high;
        }
        let reducing = self.cwr_end.is_some_and(|end| ack.una <= end);
        if ack.ece && !reducing {
            let cwnd = (self.reno.cwnd * (1.0 - self.alpha / 2.0)).max(1.0);
            self.reno.cwnd = cwnd;
            self.reno.ssthresh = cwnd.max(2.0);
            self.cwr_end = Some(ack.high.saturating_sub(1));
            return;
        }
        if !reducing {
            // As Linux's CWR state: no growth until the reduced round trip is acknowledged.
            self.reno.on_ack(ack);
        }
    }

    fn on_congestion(&mut self, flight: u32) {
        self.reno.on_congestion(flight);
    }

    fn on_recovery_exit(&mut self, flight: Option<u32>) {
        self.reno.on_recovery_exit(flight);
    }

    fn on_timeout(&mut self, flight: u32) {
        self.reno.on_timeout(flight);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;

    fn ack(acked: u32, una: u32, high: u32, ece: bool) -> AckSample {
        AckSample {
            rtt: SimTime::ZERO,
            ece,
            una,
            high,
            ..AckSample::test(acked)
        }
    }

    #[test]
    fn alpha_tracks_the_marked_fraction_and_cuts_once_per_round_trip() {
        let mut d = Dctcp::new(10, 1.0 / 16.0);
        // Leave slow start so the window only grows by 1/cwnd per segment.
        d.reno.ssthresh = 10.0;
        // Round trips of 20 segments, a quarter of them ECE: alpha converges to 1/4.
        let mut una = 0;
        for _ in 0..400 {
            let high = una + 20;
            for i in 0..20 {
                una += 1;
                d.on_ack(&ack(1, una, high + i, i % 4 == 0));
            }
        }
        assert!((d.alpha - 0.25).abs() < 0.01, "{}", d.alpha);
        // One cut per round trip: a window of ECE ACKs reduces once, by alpha / 2.
        let mut d = Dctcp::new(100, 1.0 / 16.0);
        d.reno.ssthresh = 100.0;
        d.alpha = 0.5;
        d.window_end = 1000;
        for una in 1..=10 {
            d.on_ack(&ack(1, una, 100, true));
        }
        assert_eq!(d.reno.cwnd, 75.0);
    }
}

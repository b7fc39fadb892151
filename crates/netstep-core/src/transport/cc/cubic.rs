//! CUBIC (RFC 9438): after a reduction the window follows `W(t) = C (t - K)^3 + W_max`
//! (`C = 0.4` segments/s^3, `K = cbrt((W_max - cwnd) / C)` from the reduced window, `beta =
//! 0.7`, t in seconds since the first congestion-avoidance ACK after the reduction), growing
//! towards `W(t + RTT)` by `(W(t + RTT) - cwnd) / cwnd` per acknowledged segment (the target
//! clamped to `[cwnd, 1.5 cwnd]`, §4.2). Where `W(t)` is below the Reno-friendly estimate
//! `W_est` (grown by `alpha_cubic = 3 (1 - beta) / (1 + beta)` segments per window, and by one
//! once it passes the window before the reduction, §4.3), the window is `W_est`.
//! Loss: `W_max = cwnd`, or `cwnd (1 + beta) / 2` below the previous `W_max` (fast
//! convergence, §4.7); `cwnd = ssthresh = max(beta flight_size, 2)` (§4.6). A timeout (§4.8)
//! sets `ssthresh` the same way and the window to one segment; the next avoidance stage starts
//! with `K = 0` and `W_max` the window at its start. Slow start is RFC 5681's with the ABC limit
//! (no HyStart).

use super::{AckSample, Algorithm};
use crate::units::SimTime;

/// RFC 9438 constant C, segments per second cubed.
pub const C: f64 = 0.4;
/// RFC 9438 multiplicative decrease factor.
pub const BETA: f64 = 0.7;

/// CUBIC state, in segments.
#[derive(Clone, Debug)]
pub struct Cubic {
    /// Congestion window.
    pub cwnd: f64,
    /// Slow-start threshold.
    pub ssthresh: f64,
    /// Window before the last reduction.
    pub w_max: f64,
    /// Time the current congestion-avoidance epoch began (`None`: not started).
    epoch: Option<SimTime>,
    /// `K` of the current epoch, seconds.
    k: f64,
    /// Reno-friendly estimate.
    w_est: f64,
    /// The window just before the last reduction (§4.3's `cwnd_prior`).
    cwnd_prior: f64,
}

impl Cubic {
    /// Starts in slow start with `initial_cwnd` segments.
    pub fn new(initial_cwnd: u32) -> Cubic {
        Cubic {
            cwnd: initial_cwnd.max(1) as f64,
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            epoch: None,
            k: 0.0,
            w_est: 0.0,
            cwnd_prior: 0.0,
        }
    }

    /// The cubic window `W(t)` of the current epoch, `t` seconds after its start.
    pub fn w_cubic(&self, t: f64) -> f64 {
        C * (t - self.k).powi(3) + self.w_max
    }

    /// A new epoch begins at the next avoidance ACK, from the reduced window.
    fn start_epoch(&mut self) {
        self.epoch = None;
        // K from the reduced window: W(0) = cwnd.
        self.k = ((self.w_max - self.cwnd).max(0.0) / C).cbrt();
        self.w_est = self.cwnd;
    }
}

impl Algorithm for Cubic {
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn keep_ssthresh(&mut self, ssthresh: f64) {
        self.ssthresh = ssthresh;
    }

    fn w_max(&self) -> Option<f64> {
        (self.w_max > 0.0).then_some(self.w_max)
    }

    /// New data acknowledged outside recovery.
    fn on_ack(&mut self, ack: &AckSample) {
        if self.cwnd < self.ssthresh {
            self.cwnd += ack.slow_start_increase();
            return;
        }
        let acked = ack.acked as f64;
        let start = *self.epoch.get_or_insert_with(|| {
            // The first avoidance ACK of a stage: after a timeout (W_max = 0) the plateau is
            // the window now and K = 0 (§4.8).
            self.w_max = self.w_max.max(self.cwnd);
            self.k = ((self.w_max - self.cwnd).max(0.0) / C).cbrt();
            self.w_est = self.cwnd;
            ack.now
        });
        let t = (ack.now.0.saturating_sub(start.0)) as f64 * 1e-12;
        let rtt = ack.rtt.0 as f64 * 1e-12;
        // §4.3: alpha_cubic until W_est reaches the window before the reduction, then 1.
        let alpha = if self.w_est >= self.cwnd_prior {
            1.0
        } else {
            3.0 * (1.0 - BETA) / (1.0 + BETA)
        };
        self.w_est += alpha * acked / self.cwnd;
        if self.w_cubic(t) < self.w_est {
            // Reno-friendly region.
            self.cwnd = self.w_est.max(self.cwnd);
        } else {
            let target = self.w_cubic(t + rtt).clamp(self.cwnd, 1.5 * self.cwnd);
            self.cwnd += (target - self.cwnd) / self.cwnd * acked;
        }
    }

    /// Loss detected with `flight` segments outstanding (fast recovery starts).
    fn on_congestion(&mut self, flight: u32) {
        let cwnd = self.cwnd;
        self.cwnd_prior = cwnd;
        self.w_max = if cwnd < self.w_max {
            cwnd * (1.0 + BETA) / 2.0
        } else {
            cwnd
        };
        // RFC 9438 §4.6: ssthresh = flight_size x beta (at least two segments).
        self.ssthresh = (flight as f64 * BETA).max(2.0);
        self.cwnd = self.ssthresh;
        self.start_epoch();
    }

    /// Recovery ended: the window is the reduced one.
    fn on_recovery_exit(&mut self, _flight: Option<u32>) {
        self.cwnd = self.ssthresh;
    }

    /// A retransmission timeout (§4.8): ssthresh as for a loss, one segment, and the next
    /// avoidance stage starts from its own window with K = 0.
    fn on_timeout(&mut self, flight: u32) {
        self.cwnd_prior = self.cwnd;
        self.ssthresh = (flight as f64 * BETA).max(2.0);
        self.cwnd = 1.0;
        self.w_max = 0.0;
        self.epoch = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drives `c` with one round trip of ACKs every `rtt`, one ACK per segment.
    fn round_trip(c: &mut Cubic, now: &mut SimTime, rtt: SimTime) {
        let n = c.cwnd.floor().max(1.0) as u32;
        let step = SimTime(rtt.0 / n as u64);
        for _ in 0..n {
            *now = SimTime(now.0 + step.0);
            c.on_ack(&AckSample {
                now: *now,
                rtt,
                ..AckSample::test(1)
            });
        }
    }

    #[test]
    fn the_window_follows_the_cubic_curve_between_losses() {
        let mut c = Cubic::new(10);
        c.cwnd = 1000.0;
        c.ssthresh = 1000.0;
        c.on_congestion(1000);
        assert_eq!(c.cwnd, 700.0);
        assert_eq!(c.w_max, 1000.0);
        // K = cbrt(1000 x 0.3 / 0.4) = 9.09 s. With a 100 ms RTT the Reno-friendly estimate
        // (about 0.53 segments per round trip) stays below the curve, so the cubic region
        // governs the whole epoch (with a short RTT it takes over: see the next test).
        let k = (1000.0f64 * 0.3 / 0.4).cbrt();
        let rtt = SimTime::from_ms(100);
        let start = SimTime::from_secs(1);
        let mut now = start;
        let mut worst = 0.0f64;
        while now.0 < start.0 + 2 * (k * 1e12) as u64 {
            round_trip(&mut c, &mut now, rtt);
            let t = (now.0 - start.0) as f64 * 1e-12;
            let expected = C * (t - k).powi(3) + 1000.0;
            worst = worst.max((c.cwnd - expected).abs() / expected);
        }
        // One round trip ahead of the curve at most (the target is W(t + RTT)).
        assert!(worst < 0.05, "{worst}");
        // The plateau: at t = K the window is W_max.
        let mut c2 = Cubic::new(10);
        c2.w_max = 1000.0;
        c2.cwnd = 700.0;
        c2.ssthresh = 700.0;
        c2.start_epoch();
        assert!((c2.w_cubic(k) - 1000.0).abs() < 1e-9);
        assert!((c2.w_cubic(0.0) - 700.0).abs() < 1e-6);
    }

    #[test]
    fn fast_convergence_and_the_reno_friendly_floor() {
        let mut c = Cubic::new(10);
        c.cwnd = 100.0;
        c.w_max = 200.0;
        c.ssthresh = 100.0;
        c.on_congestion(100);
        // Below the previous W_max: release bandwidth, W_max = cwnd (1 + beta) / 2.
        assert!((c.w_max - 85.0).abs() < 1e-9);
        assert!((c.cwnd - 70.0).abs() < 1e-9);
        // With a tiny window and a long RTT the cubic curve is slower than Reno: the
        // Reno-friendly estimate sets the pace (about alpha segments per round trip).
        let mut c = Cubic::new(10);
        c.cwnd = 10.0;
        c.ssthresh = 10.0;
        c.on_congestion(10);
        let mut now = SimTime::ZERO;
        let before = c.cwnd;
        for _ in 0..20 {
            round_trip(&mut c, &mut now, SimTime::from_ms(1));
        }
        let alpha = 3.0 * (1.0 - BETA) / (1.0 + BETA);
        assert!(
            c.cwnd >= before + 0.8 * 20.0 * alpha,
            "{} from {before}",
            c.cwnd
        );
    }

    #[test]
    fn after_a_timeout_the_stage_starts_with_k_zero_from_its_own_window() {
        let mut c = Cubic::new(10);
        c.cwnd = 500.0;
        c.w_max = 800.0;
        c.ssthresh = 500.0;
        c.on_timeout(500);
        assert_eq!((c.cwnd, c.ssthresh), (1.0, 350.0));
        // Slow start up to ssthresh, then the first avoidance ACK opens the stage.
        c.cwnd = 350.0;
        let mut now = SimTime::from_secs(2);
        round_trip(&mut c, &mut now, SimTime::from_ms(10));
        assert_eq!(c.w_max, 350.0);
        assert_eq!(c.k, 0.0);
        // Convex from the start: W(t) = C t^3 + 350 (slower than Reno-friendly growth here).
        assert!(c.cwnd > 350.0);
    }
}

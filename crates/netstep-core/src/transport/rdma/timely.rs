//! TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
//! 2015), as the HPCC simulator implements it (its defaults): once per round trip (when an ACK
//! acknowledges data sent after the last update), with `rtt` the ACK's round trip,
//!
//! - `rtt_diff = (1 - alpha) rtt_diff + alpha (rtt - previous rtt)`, `gradient = rtt_diff /
//!   min_rtt`;
//! - below `t_low`: increase; above `t_high`: `rate x (1 - beta (1 - t_high / rtt))`;
//!   otherwise increase when the gradient is at most 0, else `rate x (1 - beta x gradient)`;
//! - an increase adds `rate_ai` (after five increases in a row, `rate_hai`), capped at the line
//!   rate; a decrease keeps at least `min_rate`.

use crate::units::SimTime;

/// TIMELY parameters (defaults: the HPCC simulator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimelySpec {
    /// EWMA weight of a new RTT difference (default 0.875).
    pub alpha: f64,
    /// Multiplicative decrease factor (default 0.8).
    pub beta: f64,
    /// Below this RTT, always increase (default 50 us).
    pub t_low: SimTime,
    /// Above this RTT, decrease in proportion to the excess (default 500 us).
    pub t_high: SimTime,
    /// The gradient's normalizing RTT (default 20 us).
    pub min_rtt: SimTime,
    /// Additive increase step, bit/s (default 5 Mb/s).
    pub rate_ai_bps: f64,
    /// Hyper increase step after five increases, bit/s (default 50 Mb/s).
    pub rate_hai_bps: f64,
    /// Lowest rate, bit/s (default 100 Mb/s).
    pub min_rate_bps: f64,
}

impl Default for TimelySpec {
    fn default() -> TimelySpec {
        TimelySpec {
            alpha: 0.875,
            beta: 0.8,
            t_low: SimTime::from_us(50),
            t_high: SimTime::from_us(500),
            min_rtt: SimTime::from_us(20),
            rate_ai_bps: 5e6,
            rate_hai_bps: 50e6,
            min_rate_bps: 100e6,
        }
    }
}

/// TIMELY state.
#[derive(Clone, Debug)]
pub struct Timely {
    spec: TimelySpec,
    /// Current (pacing) rate, bit/s.
    pub rate: f64,
    /// The rate the next update starts from (the simulator's `m_curRate`: the line rate until
    /// the first update, while the pacing rate starts at the lower `max_rate`).
    reference: f64,
    /// Increases stop here: the line rate or a lower `max_rate`.
    max_rate: f64,
    /// Smoothed RTT difference, seconds.
    pub rtt_diff: f64,
    last_rtt: Option<f64>,
    last_update_seq: u32,
    increases: u32,
}

impl Timely {
    /// Starts at `min(line_rate, max_rate)`; the first update starts from the line rate.
    pub fn new(spec: TimelySpec, line_rate: f64, max_rate: f64) -> Timely {
        Timely {
            spec,
            rate: line_rate.min(max_rate),
            reference: line_rate,
            max_rate: line_rate.min(max_rate),
            rtt_diff: 0.0,
            last_rtt: None,
            last_update_seq: 0,
            increases: 0,
        }
    }

    /// The gradient `rtt_diff / min_rtt`.
    pub fn gradient(&self) -> f64 {
        self.rtt_diff / self.spec.min_rtt.as_secs_f64()
    }

    /// An ACK of packet sequence `ack_seq` measured `rtt`; `snd_nxt` is the next packet to
    /// send.
    pub fn on_ack(&mut self, ack_seq: u32, rtt: SimTime, snd_nxt: u32) {
        if ack_seq <= self.last_update_seq && self.last_rtt.is_some() {
            return;
        }
        let rtt = rtt.as_secs_f64();
        if let Some(last) = self.last_rtt {
            let s = &self.spec;
            let rtt_diff = (1.0 - s.alpha) * self.rtt_diff + s.alpha * (rtt - last);
            let gradient = rtt_diff / s.min_rtt.as_secs_f64();
            let (t_low, t_high) = (s.t_low.as_secs_f64(), s.t_high.as_secs_f64());
            let decrease = if rtt < t_low {
                None
            } else if rtt > t_high {
                Some(1.0 - s.beta * (1.0 - t_high / rtt))
            } else if gradient <= 0.0 {
                None
            } else {
                Some((1.0 - s.beta * gradient).max(0.0))
            };
            match decrease {
                None => {
                    let step = if self.increases < 5 {
                        s.rate_ai_bps
                    } else {
                        s.rate_hai_bps
                    };
                    self.rate = (self.reference + step).min(self.max_rate);
                    self.increases += 1;
                }
                Some(c) => {
                    self.rate = (self.reference * c).max(s.min_rate_bps);
                    self.increases = 0;
                }
            }
            self.rtt_diff = rtt_diff;
            self.reference = self.rate;
        }
        if snd_nxt > self.last_update_seq || self.last_rtt.is_none() {
            self.last_update_seq = snd_nxt;
            self.last_rtt = Some(rtt);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rising_rtt_cuts_the_rate_and_a_falling_one_raises_it() {
        let mut t = Timely::new(TimelySpec::default(), 10e9, 10e9);
        let mut seq = 0;
        // Each ACK acknowledges data sent after the previous update: one update per ACK.
        let mut feed = |t: &mut Timely, rtt_us: u64| {
            seq += 20;
            t.on_ack(seq, SimTime::from_us(rtt_us), seq + 10);
        };
        feed(&mut t, 60);
        // RTT rising by 10 us per round trip between t_low and t_high: gradient 0.4375 at
        // first (alpha 0.875 x 10 / 20), a cut by 1 - 0.8 x gradient.
        feed(&mut t, 70);
        assert!((t.gradient() - 0.4375).abs() < 1e-9, "{}", t.gradient());
        assert!(
            (t.rate - 10e9 * (1.0 - 0.8 * 0.4375)).abs() < 1.0,
            "{}",
            t.rate
        );
        let cut = t.rate;
        // Falling RTT: the gradient turns negative and the rate grows by rate_ai.
        feed(&mut t, 60);
        feed(&mut t, 55);
        assert!(t.gradient() < 0.0);
        assert!((t.rate - (cut + 2.0 * 5e6)).abs() < 1.0, "{}", t.rate);
        // Above t_high: decrease in proportion to the excess, whatever the gradient.
        feed(&mut t, 1000);
        feed(&mut t, 1000);
        assert!(t.rate < cut);
    }
}

//! DCQCN (Zhu et al., "Congestion Control for Large-Scale RDMA Deployments", SIGCOMM 2015), the
//! reaction point as the HPCC simulator implements it (Li et al. 2019's ns-3 RDMA model,
//! "Mellanox" mode; the model the m3 and Parsimon datasets come from):
//!
//! - A CNP (the ECN echo on an ACK) sets two flags. The first CNP of a flow sets `alpha = 1`,
//!   starts the alpha timer and the rate-decrease checks, and scales the rate by
//!   `rate_on_first_cnp`.
//! - Every `alpha_interval` (55 us): `alpha = (1 - g) alpha + g` if a CNP came since the last
//!   update, else `(1 - g) alpha`.
//! - Every `decrease_interval` (4 us) after the first CNP: if a CNP came since the last check,
//!   the target rate becomes the current rate (unless the rate has not increased since the
//!   last cut), the rate becomes `max(min_rate, rate (1 - alpha / 2))`, the increase stage
//!   restarts at 0 and the increase timer at `increase_interval` (1,500 us).
//! - Each increase-timer expiry: stages below `fast_recovery_stages` (5) move the rate half
//!   way to the target (fast recovery); at stage 5 the target grows by `rate_ai` (additive);
//!   beyond it by `rate_hai` (hyper); the rate then moves half way to the target (capped at
//!   the line rate).
//!
//! The checks are only due when a CNP has arrived, so they are scheduled on the 4 us grid
//! only then (one timer per check that can act instead of one every 4 us): the result is the
//! periodic check's.

use crate::transport::timer::TimerToken;
use crate::units::SimTime;

/// DCQCN parameters (defaults: the HPCC simulator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DcqcnSpec {
    /// EWMA gain of alpha (default 1/16).
    pub g: f64,
    /// Alpha update period (default 55 us).
    pub alpha_interval: SimTime,
    /// Rate-decrease check period (default 4 us).
    pub decrease_interval: SimTime,
    /// Rate-increase timer (default 1,500 us).
    pub increase_interval: SimTime,
    /// Fast-recovery stages before additive increase (default 5).
    pub fast_recovery_stages: u32,
    /// Additive increase step, bit/s (default 5 Mb/s).
    pub rate_ai_bps: f64,
    /// Hyper increase step, bit/s (default 50 Mb/s).
    pub rate_hai_bps: f64,
    /// Lowest rate, bit/s (default 100 Mb/s).
    pub min_rate_bps: f64,
    /// Fraction of the rate kept at the first CNP (default 1).
    pub rate_on_first_cnp: f64,
}

impl Default for DcqcnSpec {
    fn default() -> DcqcnSpec {
        DcqcnSpec {
            g: 1.0 / 16.0,
            alpha_interval: SimTime::from_us(55),
            decrease_interval: SimTime::from_us(4),
            increase_interval: SimTime::from_us(1500),
            fast_recovery_stages: 5,
            rate_ai_bps: 5e6,
            rate_hai_bps: 50e6,
            min_rate_bps: 100e6,
            rate_on_first_cnp: 1.0,
        }
    }
}

const ALPHA: u32 = super::CC_TIMER;
const DECREASE: u32 = super::CC_TIMER + 1;
const INCREASE: u32 = super::CC_TIMER + 2;

/// Reaction-point state.
#[derive(Clone, Debug)]
pub struct Dcqcn {
    spec: DcqcnSpec,
    /// Current rate, bit/s.
    pub rate: f64,
    /// Target rate, bit/s.
    pub target: f64,
    /// Congestion estimate.
    pub alpha: f64,
    line_rate: f64,
    first_cnp: bool,
    alpha_cnp: bool,
    decrease_cnp: bool,
    /// Time of the first rate-decrease check; checks fall on `epoch + k x interval`.
    decrease_epoch: SimTime,
    decrease_pending: bool,
    stage: u32,
    increase_generation: u32,
}

impl Dcqcn {
    /// Starts at `start_rate` (the line rate, or a lower `max_rate`) with the target at the
    /// line rate (the HPCC simulator's `m_targetRate = m_bps`).
    pub fn new(spec: DcqcnSpec, line_rate: f64, start_rate: f64) -> Dcqcn {
        Dcqcn {
            spec,
            rate: start_rate,
            target: line_rate,
            alpha: 1.0,
            line_rate,
            first_cnp: true,
            alpha_cnp: false,
            decrease_cnp: false,
            decrease_epoch: SimTime::ZERO,
            decrease_pending: false,
            stage: 0,
            increase_generation: 0,
        }
    }

    /// A CNP arrived at `now`; `timers` gets `(time, kind, generation)` to schedule.
    pub fn on_cnp(&mut self, now: SimTime, timers: &mut Vec<(SimTime, u32, u32)>) {
        self.alpha_cnp = true;
        self.decrease_cnp = true;
        if self.first_cnp {
            self.first_cnp = false;
            self.alpha = 1.0;
            self.alpha_cnp = false;
            timers.push((now + self.spec.alpha_interval, ALPHA, 0));
            // One nanosecond after the alpha grid, as the HPCC simulator orders them.
            self.decrease_epoch = now + self.spec.decrease_interval + SimTime::from_ns(1);
            self.decrease_pending = true;
            timers.push((self.decrease_epoch, DECREASE, 0));
            self.rate *= self.spec.rate_on_first_cnp;
            self.target = self.rate;
            return;
        }
        if !self.decrease_pending {
            // The next check on the grid strictly after `now`.
            let interval = self.spec.decrease_interval.0.max(1);
            let since = now.0.saturating_sub(self.decrease_epoch.0);
            let next = if now < self.decrease_epoch {
                self.decrease_epoch
            } else {
                SimTime(self.decrease_epoch.0 + (since / interval + 1) * interval)
            };
            self.decrease_pending = true;
            timers.push((next, DECREASE, 0));
        }
    }

    /// A rate-control timer fired.
    pub fn on_timer(
        &mut self,
        token: TimerToken,
        now: SimTime,
        timers: &mut Vec<(SimTime, u32, u32)>,
    ) {
        match token.kind {
            ALPHA => {
                let g = self.spec.g;
                self.alpha = (1.0 - g) * self.alpha + if self.alpha_cnp { g } else { 0.0 };
                self.alpha_cnp = false;
                timers.push((now + self.spec.alpha_interval, ALPHA, 0));
            }
            DECREASE => {
                self.decrease_pending = false;
                if self.decrease_cnp {
                    if self.stage != 0 {
                        self.target = self.rate;
                    }
                    self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.spec.min_rate_bps);
                    self.stage = 0;
                    self.decrease_cnp = false;
                    self.increase_generation = self.increase_generation.wrapping_add(1);
                    timers.push((
                        now + self.spec.increase_interval,
                        INCREASE,
                        self.increase_generation,
                    ));
                }
            }
            INCREASE if token.is_current(self.increase_generation) => {
                timers.push((
                    now + self.spec.increase_interval,
                    INCREASE,
                    self.increase_generation,
                ));
                let f = self.spec.fast_recovery_stages;
                if self.stage > f {
                    self.target = (self.target + self.spec.rate_hai_bps).min(self.line_rate);
                } else if self.stage == f {
                    self.target = (self.target + self.spec.rate_ai_bps).min(self.line_rate);
                }
                self.rate = self.rate / 2.0 + self.target / 2.0;
                self.stage += 1;
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_timers(d: &mut Dcqcn, pending: &mut Vec<(SimTime, u32, u32)>, until: SimTime) {
        pending.sort_by_key(|t| t.0);
        while let Some(&(at, kind, generation)) = pending.first() {
            if at > until {
                break;
            }
            pending.remove(0);
            let mut more = Vec::new();
            d.on_timer(TimerToken::new(kind, generation), at, &mut more);
            pending.extend(more);
            pending.sort_by_key(|t| t.0);
        }
    }

    #[test]
    fn a_cnp_cuts_by_alpha_half_then_fast_recovery_halves_the_gap() {
        let mut d = Dcqcn::new(DcqcnSpec::default(), 100e9, 100e9);
        let mut timers = Vec::new();
        d.on_cnp(SimTime::from_us(10), &mut timers);
        // The first check, 4 us + 1 ns later, cuts with alpha = 1: half the rate.
        run_timers(&mut d, &mut timers, SimTime::from_us(15));
        assert_eq!(d.rate, 50e9);
        assert_eq!(
            d.target, 100e9,
            "the target keeps the rate before the first cut"
        );
        // Five fast-recovery steps, 1.5 ms apart, each half way to the target.
        run_timers(&mut d, &mut timers, SimTime::from_us(15 + 1500));
        assert_eq!(d.rate, 75e9);
        run_timers(&mut d, &mut timers, SimTime::from_us(15 + 5 * 1500));
        assert!((d.rate - (100e9 - 50e9 / 32.0)).abs() < 1.0, "{}", d.rate);
        // Alpha decays by (1 - g) every 55 us without CNPs.
        let decays: i32 = (15 + 5 * 1500 - 10) / 55;
        assert!(
            (d.alpha - (15.0f64 / 16.0).powi(decays)).abs() < 1e-9,
            "{}",
            d.alpha
        );
    }

    #[test]
    fn only_one_cut_per_check_however_many_cnps() {
        let mut d = Dcqcn::new(DcqcnSpec::default(), 100e9, 100e9);
        let mut timers = Vec::new();
        d.on_cnp(SimTime::from_us(10), &mut timers);
        run_timers(&mut d, &mut timers, SimTime::from_us(15));
        let after_first = d.rate;
        for t in 0..20 {
            d.on_cnp(
                SimTime::from_us(15) + SimTime::from_ns(100 * t),
                &mut timers,
            );
        }
        assert_eq!(timers.iter().filter(|t| t.1 == DECREASE).count(), 1);
        run_timers(&mut d, &mut timers, SimTime::from_us(19));
        assert!(d.rate < after_first && d.rate > after_first / 2.0 - 1.0);
    }
}

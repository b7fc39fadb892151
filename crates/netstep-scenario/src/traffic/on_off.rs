//! `kind = "on_off"`: sources that alternate on and off periods, as ns-3's OnOffApplication:
//! each source (a host and a destination drawn from the seed) is on for a random time, sending
//! at `rate`, then off for a random time, from `start` to `start + duration`. Periods are
//! exponential or Pareto (heavy-tailed: the self-similar traffic of Willinger et al. 1997)
//! with the given means. Each on period is one flow of `rate x on time` bytes starting when the
//! period does (at least one byte); with an `open_loop` transport at the same `rate` its
//! packets leave at that rate, which is ns-3's model.

use rand::RngExt;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use netstep_core::units::SimTime;

/// How on and off periods are drawn.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq)]
#[serde(rename_all = "snake_case")]
pub enum Periods {
    /// Exponential with the given mean.
    #[default]
    Exponential,
    /// Pareto with the given mean and shape `alpha > 1` (scale `mean (alpha - 1) / alpha`).
    Pareto,
}

/// A period length with mean `mean` (ps), drawn by inversion from one uniform variate.
pub fn draw(periods: Periods, mean: f64, shape: f64, rng: &mut Pcg64Mcg) -> f64 {
    // 1 - u lies in (0, 1]: no logarithm or power of zero.
    let u = 1.0 - rng.random::<f64>();
    match periods {
        Periods::Exponential => -u.ln() * mean,
        Periods::Pareto => mean * (shape - 1.0) / shape / u.powf(1.0 / shape),
    }
}

/// One source's on periods in `[start, end)`: `(period start, period length)` in ps; the last
/// is cut at `end`. Sources start on.
pub fn on_periods(
    periods: Periods,
    (on, off, shape): (f64, f64, f64),
    start: SimTime,
    end: SimTime,
    rng: &mut Pcg64Mcg,
) -> Vec<(SimTime, SimTime)> {
    let mut out = Vec::new();
    let mut t = start.0 as f64;
    while t < end.0 as f64 {
        let length = draw(periods, on, shape, rng).min(end.0 as f64 - t);
        out.push((SimTime(t as u64), SimTime(length as u64)));
        t += length + draw(periods, off, shape, rng);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    /// Sample means of 20,000 draws lie within 4 standard errors of the mean asked for (the
    /// exponential's sd equals its mean; Pareto with alpha = 3 has sd = mean / sqrt(3)).
    #[test]
    fn periods_have_the_means_asked_for() {
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let n = 20_000;
        for (periods, shape, sd_over_mean) in [
            (Periods::Exponential, 0.0, 1.0),
            (Periods::Pareto, 3.0, 1.0 / 3f64.sqrt()),
        ] {
            let mean = 1e6;
            let total: f64 = (0..n).map(|_| draw(periods, mean, shape, &mut rng)).sum();
            let err = (total / n as f64 - mean).abs();
            let se = sd_over_mean * mean / (n as f64).sqrt();
            assert!(err < 4.0 * se, "{periods:?}: mean off by {err}, se {se}");
        }
        // Pareto never draws below its scale.
        let scale = 1e6 * 0.5 / 1.5;
        assert!((0..1000).all(|_| draw(Periods::Pareto, 1e6, 1.5, &mut rng) >= scale));
    }

    /// Periods start on, alternate, and stay inside the window.
    #[test]
    fn periods_alternate_inside_the_window() {
        let mut rng = Pcg64Mcg::seed_from_u64(2);
        let (start, end) = (SimTime(1_000), SimTime(1_000_000_000));
        let list = on_periods(Periods::Exponential, (1e6, 3e6, 0.0), start, end, &mut rng);
        assert_eq!(list[0].0, start);
        for pair in list.windows(2) {
            assert!(pair[1].0 > pair[0].0 + pair[0].1);
        }
        let last = list.last().unwrap();
        assert!(last.0 + last.1 <= end);
        // On about a quarter of the time (1 us on, 3 us off).
        let on: u64 = list.iter().map(|p| p.1.0).sum();
        let fraction = on as f64 / (end.0 - start.0) as f64;
        assert!((0.2..0.3).contains(&fraction), "{fraction}");
    }
}

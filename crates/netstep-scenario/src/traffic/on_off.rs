//! `kind = "on_off"`: sources that alternate on and off periods, as ns-3's OnOffApplication:
//! each source (a host and a destination drawn from the seed) is on for a random time, sending
//! at `rate`, then off for a random time, from `start` to `start + duration`. Periods are
//! exponential or Pareto (heavy-tailed: the self-similar traffic of Willinger et al. 1997)
//! with the given means. Each on period is one flow of `rate x on time` bytes starting when the
//! period does (at least one byte); with an `open_loop` transport at the same `rate` its
//! packets leave at that rate, which is ns-3's model.

use netstep_core::flow::FlowSpec;
use netstep_core::units::{Bytes, SimTime, parse_duration, parse_rate};
use rand::{Rng, RngExt};
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::common::{random_pair, require_two_hosts};
use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, positive_duration, traffic_class};
use crate::transport::TransportConfig;

/// Sources alternating on and off periods. Example: `kind = "on_off"`, `rate = "1Gbps"`,
/// `on = "100us"`, `off = "300us"`, `duration = "10ms"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// Number of sources, each a random (source, destination) pair (seeded); at least 1.
    ///
    /// Unit: integer · Default: every host, each to a random other host · Example:
    /// `sources = 16`
    pub sources: Option<u32>,
    /// Sending rate while on, above zero: each on period is one flow of `rate x length` bytes
    /// (at least one). With an `open_loop` transport at the same `rate` its packets leave at
    /// that rate (ns-3's model); with TCP each period's bytes are one transfer.
    ///
    /// Unit: rate · Default: required · Example: `rate = "1Gbps"`
    pub rate: String,
    /// Mean on period; above zero.
    ///
    /// Unit: duration · Default: required · Example: `on = "100us"`
    pub on: String,
    /// Mean off period; above zero.
    ///
    /// Unit: duration · Default: required · Example: `off = "300us"`
    pub off: String,
    /// How the on and off periods are drawn: `"exponential"`, or `"pareto"` with shape `shape`
    /// (scale `mean (alpha - 1) / alpha`: heavy-tailed, self-similar in aggregate).
    ///
    /// Unit: `"exponential"` or `"pareto"` · Default: `"exponential"` · Example:
    /// `periods = "pareto"`
    pub periods: Option<Periods>,
    /// Pareto shape alpha, above 1 (a finite mean); ignored for exponential periods.
    ///
    /// Unit: number · Default: 1.5 · Example: `shape = 1.2`
    pub shape: Option<f64>,
    /// When the sources start (on).
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`
    pub start: Option<String>,
    /// How long the sources run, above zero; the last on period is cut at the end.
    ///
    /// Unit: duration · Default: required · Example: `duration = "20ms"`
    pub duration: String,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

impl TrafficKind for OnOffConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid> {
        let t = |v: &String, field: &str| {
            parse_duration(v).map_err(|e| Invalid::unit(path.key(field), e))
        };
        let cycle = t(&self.on, "on")?
            .0
            .saturating_add(t(&self.off, "off")?.0)
            .max(1);
        let cycles = t(&self.duration, "duration")?.0.div_ceil(cycle) + 1;
        Ok(self
            .sources
            .map_or(on.hosts, u64::from)
            .saturating_mul(cycles))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let template = b.transport(&self.transport)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        let rate = parse_rate(&self.rate).map_err(|e| Invalid::unit(path.key("rate"), e))?;
        if rate.0 == 0 {
            return Err(Invalid::new(path.key("rate"), "must be positive"));
        }
        let (on, off, span) = (
            positive_duration(&self.on, path.key("on"))?,
            positive_duration(&self.off, path.key("off"))?,
            positive_duration(&self.duration, path.key("duration"))?,
        );
        let periods = self.periods.unwrap_or_default();
        let shape = self.shape.unwrap_or(1.5);
        if periods == Periods::Pareto && !(shape > 1.0 && shape.is_finite()) {
            return Err(Invalid::new(
                path.key("shape"),
                format!("a Pareto shape must be above 1 (a finite mean), got {shape}"),
            ));
        }
        let start = duration_at(&self.start, path.key("start"), SimTime::ZERO)?;
        require_two_hosts(b.hosts, &path)?;
        let pairs = self.pairs(b)?;
        let cycles = span.0 as f64 / on.0.saturating_add(off.0) as f64 + 1.0;
        b.check_flows(
            (pairs.len() as f64 * cycles).ceil() as u64,
            &path.key("duration"),
        )?;
        let means = (on.0 as f64, off.0 as f64, shape);
        for (src, dst) in pairs {
            for (at, length) in on_periods(periods, means, start, start + span, &mut b.rng) {
                let bytes = ((rate.0 as f64 * length.0 as f64 / 8e12).round() as u64).max(1);
                let (spec, size) = template.for_flow(Some(Bytes(bytes)), None, &path)?;
                b.out.flows.push(FlowSpec {
                    src,
                    dst,
                    start: at,
                    size,
                    transport: spec,
                    path: None,
                    class,
                    after: None,
                    ports: None,
                });
            }
            b.check_flows(0, &path.key("duration"))?;
        }
        Ok(())
    }
}

impl OnOffConfig {
    /// The (source, destination) pairs: `sources` random pairs, or every host to a random
    /// other host.
    fn pairs(&self, b: &mut Block<'_, '_>) -> Result<Vec<(u32, u32)>, Invalid> {
        let hosts = b.hosts;
        let rng = &mut b.rng;
        Ok(match self.sources {
            Some(0) => {
                return Err(Invalid::new(b.path.key("sources"), "must be at least 1"));
            }
            Some(n) => (0..n).map(|_| random_pair(rng, hosts)).collect(),
            None => hosts
                .iter()
                .map(|&src| {
                    loop {
                        let dst = hosts[(rng.next_u64() % hosts.len() as u64) as usize];
                        if dst != src {
                            break (src, dst);
                        }
                    }
                })
                .collect(),
        })
    }
}

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

//! Empirical flow-size distributions in netstep's own CDF format (TOML):
//!
//! ```toml
//! name = "web search"
//! source = "where the numbers come from"
//! interpolation = "linear"   # or "step"
//! points = [[0, 0.0], [10000, 0.15], [30000000, 1.0]]   # [size_bytes, cumulative probability]
//! ```
//!
//! Sizes must strictly increase, probabilities must not decrease, lie in [0, 1] and end at 1.
//! `linear` interpolates sizes between points (as the HPCC and Parsimon generators do);
//! `step` returns the upper point of the bracket. The two give very different means.

use std::path::Path;

use serde::Deserialize;

/// How to sample between CDF points.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    /// Linear in size between neighbouring points.
    Linear,
    /// The upper point's size.
    Step,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CdfFile {
    name: String,
    source: String,
    interpolation: Interpolation,
    points: Vec<(u64, f64)>,
}

/// A validated flow-size CDF.
#[derive(Clone, Debug, PartialEq)]
pub struct SizeCdf {
    /// Workload name.
    pub name: String,
    /// Provenance line.
    pub source: String,
    /// Sampling rule.
    pub interpolation: Interpolation,
    sizes: Vec<u64>,
    probs: Vec<f64>,
}

impl SizeCdf {
    /// Reads and validates a CDF file; errors name the file and the problem.
    pub fn load(path: &Path) -> Result<SizeCdf, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read CDF file {}: {e}", path.display()))?;
        SizeCdf::parse(&text).map_err(|e| format!("CDF file {}: {e}", path.display()))
    }

    /// Parses and validates CDF text.
    pub fn parse(text: &str) -> Result<SizeCdf, String> {
        let file: CdfFile = toml::from_str(text).map_err(|e| {
            let (line, col) = e
                .span()
                .map(|s| crate::error::line_col(text, s.start))
                .unwrap_or((0, 0));
            format!("line {line}, column {col}: {}", e.message())
        })?;
        if file.points.len() < 2 {
            return Err(format!(
                "points: need at least 2 points, got {}",
                file.points.len()
            ));
        }
        for (i, w) in file.points.windows(2).enumerate() {
            if w[1].0 <= w[0].0 {
                return Err(format!(
                    "points[{}]: sizes must strictly increase, got {} after {}",
                    i + 1,
                    w[1].0,
                    w[0].0
                ));
            }
            if w[1].1 < w[0].1 {
                return Err(format!(
                    "points[{}]: probabilities must not decrease, got {} after {}",
                    i + 1,
                    w[1].1,
                    w[0].1
                ));
            }
        }
        for (i, &(_, p)) in file.points.iter().enumerate() {
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("points[{i}]: probability {p} is outside [0, 1]"));
            }
        }
        let last = file.points.last().expect("two points").1;
        if (last - 1.0).abs() > 1e-9 {
            return Err(format!(
                "points: the last probability must be 1, got {last}"
            ));
        }
        Ok(SizeCdf {
            name: file.name,
            source: file.source,
            interpolation: file.interpolation,
            sizes: file.points.iter().map(|p| p.0).collect(),
            probs: file.points.iter().map(|p| p.1).collect(),
        })
    }

    /// Reads a size distribution in Parsimon's format (github.com/netiken/parsimon-eval,
    /// `workload/distributions/`, read by its `utils::read_ecdf`): one `size_bytes
    /// cumulative_percent` pair per line, whitespace separated, sizes and percentages
    /// strictly increasing, the last percentage 100; sampled with linear interpolation.
    /// Blank lines and lines starting with `#` are skipped.
    pub fn load_parsimon(path: &Path) -> Result<SizeCdf, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read CDF file {}: {e}", path.display()))?;
        SizeCdf::parse_parsimon(&text).map_err(|e| format!("CDF file {}: {e}", path.display()))
    }

    /// Parses Parsimon's two-column percent format ([`SizeCdf::load_parsimon`]).
    pub fn parse_parsimon(text: &str) -> Result<SizeCdf, String> {
        let mut points: Vec<(u64, f64)> = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = |m: String| format!("line {}: {m}", i + 1);
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [size, percent] = fields[..] else {
                return Err(at(format!(
                    "expected two columns, size_bytes and cumulative_percent; got {line:?}"
                )));
            };
            let size: f64 = size
                .parse()
                .map_err(|_| at(format!("size {size:?} is not a number of bytes")))?;
            let percent: f64 = percent
                .parse()
                .map_err(|_| at(format!("cumulative percent {percent:?} is not a number")))?;
            if !(size >= 0.0 && size.fract() == 0.0 && size < u64::MAX as f64) {
                return Err(at(format!(
                    "size {size} is not a whole number of bytes >= 0"
                )));
            }
            if !(0.0..=100.0).contains(&percent) {
                return Err(at(format!(
                    "cumulative percent {percent} is outside [0, 100]"
                )));
            }
            if let Some(&(s0, p0)) = points.last()
                && (size as u64 <= s0 || percent <= p0 * 100.0)
            {
                return Err(at(format!(
                    "sizes and percentages must strictly increase, got {size} {percent} after {s0} {}",
                    p0 * 100.0
                )));
            }
            points.push((size as u64, percent / 100.0));
        }
        if points.len() < 2 {
            return Err(format!("need at least 2 points, got {}", points.len()));
        }
        let last = points.last().expect("two points").1;
        if (last - 1.0).abs() > 1e-12 {
            return Err(format!(
                "the last cumulative percent must be 100, got {}",
                last * 100.0
            ));
        }
        Ok(SizeCdf {
            name: "parsimon".into(),
            source: "Parsimon size distribution (size_bytes cumulative_percent)".into(),
            interpolation: Interpolation::Linear,
            sizes: points.iter().map(|p| p.0).collect(),
            probs: points.iter().map(|p| p.1).collect(),
        })
    }

    /// Mean size in bytes under this CDF's interpolation.
    pub fn mean(&self) -> f64 {
        let mut mean = self.probs[0] * self.sizes[0] as f64;
        for i in 1..self.sizes.len() {
            let mass = self.probs[i] - self.probs[i - 1];
            let size = match self.interpolation {
                Interpolation::Linear => (self.sizes[i - 1] + self.sizes[i]) as f64 / 2.0,
                Interpolation::Step => self.sizes[i] as f64,
            };
            mean += mass * size;
        }
        mean
    }

    /// The size at quantile `u` in (0, 1]; at least 1 byte.
    pub fn sample(&self, u: f64) -> u64 {
        self.sample_rounded(u).max(1)
    }

    /// The size at quantile `u` in [0, 1], rounded to whole bytes (0 where a CDF starting at
    /// size 0 interpolates below half a byte, as Parsimon's generator rounds).
    pub fn sample_rounded(&self, u: f64) -> u64 {
        let i = self
            .probs
            .partition_point(|&p| p < u)
            .min(self.sizes.len() - 1);
        let size = if i == 0 {
            self.sizes[0] as f64
        } else {
            match self.interpolation {
                Interpolation::Step => self.sizes[i] as f64,
                Interpolation::Linear => {
                    let (p0, p1) = (self.probs[i - 1], self.probs[i]);
                    let (s0, s1) = (self.sizes[i - 1] as f64, self.sizes[i] as f64);
                    if p1 > p0 {
                        s0 + (u - p0) / (p1 - p0) * (s1 - s0)
                    } else {
                        s1
                    }
                }
            }
        };
        size.round() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "name = \"t\"\nsource = \"test\"\ninterpolation = \"linear\"\npoints = [[0, 0.0], [100, 0.5], [300, 1.0]]\n";

    #[test]
    fn mean_and_sampling_agree() {
        let cdf = SizeCdf::parse(TEXT).unwrap();
        assert_eq!(cdf.mean(), 0.5 * 50.0 + 0.5 * 200.0);
        assert_eq!(cdf.sample(0.25), 50);
        assert_eq!(cdf.sample(0.75), 200);
        let n = 100_000;
        let empirical: f64 = (1..=n)
            .map(|i| cdf.sample(i as f64 / n as f64) as f64)
            .sum::<f64>()
            / n as f64;
        assert!((empirical - cdf.mean()).abs() < 1.0, "{empirical}");
    }

    /// Parsimon's format: percent, linear, zero-byte draws kept by `sample_rounded`.
    #[test]
    fn parsimon_format() {
        let cdf = SizeCdf::parse_parsimon("# comment\n0 0\n100 50\n300 100\n").unwrap();
        assert_eq!(cdf.mean(), 0.5 * 50.0 + 0.5 * 200.0);
        assert_eq!(cdf.sample_rounded(0.25), 50);
        assert_eq!(cdf.sample_rounded(0.002), 0);
        assert_eq!(cdf.sample(0.002), 1);
        let err = SizeCdf::parse_parsimon("0 0\n100 50\n90 100\n").unwrap_err();
        assert!(
            err.starts_with("line 3: sizes and percentages must strictly increase"),
            "{err}"
        );
        let err = SizeCdf::parse_parsimon("0 0\n100 0.5\n").unwrap_err();
        assert!(err.contains("must be 100, got 0.5"), "{err}");
        let err = SizeCdf::parse_parsimon("0 0 1\n").unwrap_err();
        assert!(err.contains("line 1: expected two columns"), "{err}");
    }

    #[test]
    fn non_monotone_cdf_is_rejected() {
        let bad = TEXT.replace("[100, 0.5]", "[100, 0.9], [200, 0.5]");
        let err = SizeCdf::parse(&bad).unwrap_err();
        assert!(err.contains("probabilities must not decrease"), "{err}");
        let bad = TEXT.replace("[300, 1.0]", "[50, 1.0]");
        assert!(
            SizeCdf::parse(&bad)
                .unwrap_err()
                .contains("sizes must strictly increase")
        );
    }
}

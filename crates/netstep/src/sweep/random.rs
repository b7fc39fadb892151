//! `[random]` axes of a sweep file: `samples` draws from ranges or choices, with a seed.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::bail;
use rand::RngExt;
use serde::Deserialize;
use toml::Spanned;

use super::plan::{
    Axis, AxisGroup, Group, MAX_POINTS, check_axis, check_key, check_name, in_file_order,
};

/// `[random]`: how many samples, the seed, and the axes to draw.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RandomSection {
    samples: u64,
    seed: u64,
    axes: BTreeMap<String, Spanned<RandomAxis>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomAxis {
    key: String,
    uniform: Option<[f64; 2]>,
    log_uniform: Option<[f64; 2]>,
    integers: Option<[i64; 2]>,
    choice: Option<Vec<toml::Value>>,
    digits: Option<u32>,
}

/// How a random axis draws.
enum Draw {
    Uniform(f64, f64, u32),
    LogUniform(f64, f64, u32),
    Integers(i64, i64),
    Choice(Vec<toml::Value>),
}

/// The random axes (added to `axes`, in file order) and their group: `samples` draws, a
/// repeated draw kept once.
pub(super) fn axes(
    file: &Path,
    random: &RandomSection,
    axes: &mut Vec<Axis>,
) -> anyhow::Result<Group> {
    let shown = file.display();
    if random.samples == 0 {
        bail!("{shown}: random.samples: must be at least 1");
    }
    if random.samples > MAX_POINTS as u64 {
        bail!("{shown}: random.samples: at most {MAX_POINTS}");
    }
    if random.axes.is_empty() {
        bail!(
            "{shown}: random.axes: no axis to draw (add e.g. load = {{ key = \"traffic.0.load\", uniform = [0.1, 0.9] }})"
        );
    }
    let mut draws = Vec::new();
    for (name, spec) in in_file_order(&random.axes) {
        check_name(file, "random.axes", name)?;
        check_key(file, &format!("random.axes.{name}"), &spec.key)?;
        draws.push(draw_of(file, name, spec)?);
        axes.push(Axis {
            name: name.clone(),
            key: spec.key.clone(),
            group: AxisGroup::Random,
        });
    }
    let mut rng = netstep_core::rng::stream(random.seed, 0x5745_4550, 0);
    // A repeated draw (likely with `integers` or `choice`) is kept once.
    let mut rows: Vec<Vec<toml::Value>> = Vec::new();
    let mut drawn = std::collections::HashSet::new();
    for _ in 0..random.samples {
        let row: Vec<toml::Value> = draws.iter().map(|d| d.sample(&mut rng)).collect();
        if drawn.insert(row.iter().map(toml::Value::to_string).collect::<Vec<_>>()) {
            rows.push(row);
        }
    }
    Ok(rows)
}

fn draw_of(file: &Path, name: &str, spec: &RandomAxis) -> anyhow::Result<Draw> {
    let shown = file.display();
    let field = format!("random.axes.{name}");
    let given = [
        spec.uniform.is_some(),
        spec.log_uniform.is_some(),
        spec.integers.is_some(),
        spec.choice.is_some(),
    ]
    .iter()
    .filter(|&&b| b)
    .count();
    if given != 1 {
        bail!(
            "{shown}: {field}: give exactly one of uniform = [lo, hi], log_uniform = [lo, hi], integers = [lo, hi], choice = [..]"
        );
    }
    let digits = spec.digits.unwrap_or(6);
    if !(1..=17).contains(&digits) {
        bail!("{shown}: {field}.digits: between 1 and 17 significant digits, got {digits}");
    }
    let range = |r: [f64; 2], what: &str| -> anyhow::Result<(f64, f64)> {
        if !(r[0].is_finite() && r[1].is_finite() && r[0] < r[1]) {
            bail!(
                "{shown}: {field}.{what}: need finite lo < hi, got [{}, {}]",
                r[0],
                r[1]
            );
        }
        Ok((r[0], r[1]))
    };
    if spec.digits.is_some() && spec.uniform.is_none() && spec.log_uniform.is_none() {
        bail!("{shown}: {field}.digits: applies to uniform and log_uniform only");
    }
    Ok(if let Some(r) = spec.uniform {
        let (lo, hi) = range(r, "uniform")?;
        Draw::Uniform(lo, hi, digits)
    } else if let Some(r) = spec.log_uniform {
        let (lo, hi) = range(r, "log_uniform")?;
        if lo <= 0.0 {
            bail!("{shown}: {field}.log_uniform: lo must be positive, got {lo}");
        }
        Draw::LogUniform(lo, hi, digits)
    } else if let Some([lo, hi]) = spec.integers {
        if lo > hi {
            bail!("{shown}: {field}.integers: need lo <= hi, got [{lo}, {hi}]");
        }
        Draw::Integers(lo, hi)
    } else {
        let choice = spec.choice.clone().unwrap_or_default();
        check_axis(file, "random.axes", name, &spec.key, &choice)?;
        Draw::Choice(choice)
    })
}

impl Draw {
    fn sample(&self, rng: &mut impl RngExt) -> toml::Value {
        let round = |x: f64, digits: u32| -> f64 {
            format!("{:.*e}", digits as usize - 1, x)
                .parse()
                .expect("formatted float parses")
        };
        match self {
            Draw::Uniform(lo, hi, d) => {
                toml::Value::Float(round(lo + (hi - lo) * rng.random::<f64>(), *d))
            }
            Draw::LogUniform(lo, hi, d) => {
                let (a, b) = (lo.ln(), hi.ln());
                toml::Value::Float(round((a + (b - a) * rng.random::<f64>()).exp(), *d))
            }
            Draw::Integers(lo, hi) => toml::Value::Integer(rng.random_range(*lo..=*hi)),
            Draw::Choice(values) => values[rng.random_range(0..values.len())].clone(),
        }
    }
}

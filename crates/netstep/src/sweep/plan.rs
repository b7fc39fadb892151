//! Sweep files and their expansion into points.
//!
//! A sweep file names a base scenario and axes; every point is the base scenario with one value
//! per axis applied as a `--set` override. Axes come in three groups that multiply: `[grid]`
//! (cartesian product), `[zip]` (axes of equal length that vary together) and `[random]`
//! (`samples` draws from ranges or choices with a seed), then `seeds`. A point's id is the
//! FNV-1a hash of its resolved scenario text (the base file with the point's overrides applied)
//! and of the CDF files it names, so it is the same on every run and machine and changes when
//! the scenario a point simulates changes. Its folder is `<axis>=<value>/.../seed=<s>` with
//! every byte outside `[A-Za-z0-9._+-]` percent-encoded, so no value can name a path outside
//! the sweep folder.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use rand::RngExt;
use serde::Deserialize;
use toml::Spanned;

/// Most points one sweep file may expand to.
pub const MAX_POINTS: usize = 1_000_000;

/// Longest folder name a point's axis level may have (file systems allow 255 bytes).
pub const MAX_COMPONENT: usize = 200;

/// Names that axes may not take: the manifest's own columns.
pub const RESERVED: [&str; 6] = [
    "point_id",
    "path",
    "status",
    "wall_s",
    "error",
    "netstep_version",
];

/// Which group an axis belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AxisGroup {
    /// `[grid]`: every value with every value of the other grid axes.
    Grid,
    /// `[zip]`: the i-th value of every zip axis together.
    Zip,
    /// `[random.axes]`: drawn per sample.
    Random,
    /// `seeds`: `simulation.seed`.
    Seed,
}

/// One axis of a sweep.
#[derive(Clone, Debug)]
pub struct Axis {
    /// Column and folder name.
    pub name: String,
    /// Scenario key the axis sets (`traffic.0.load`).
    pub key: String,
    /// Its group.
    pub group: AxisGroup,
}

/// One point of a sweep: a resolved scenario.
#[derive(Clone, Debug)]
pub struct Point {
    /// Stable id: 16 hex digits of the resolved scenario's hash.
    pub id: String,
    /// One value per axis, in [`Plan::axes`] order.
    pub values: Vec<toml::Value>,
    /// The `--set` overrides that make the point (fixed `[set]` ones first).
    pub overrides: Vec<String>,
    /// Folder relative to the sweep folder, `/`-separated.
    pub path: String,
}

/// An expanded sweep file.
#[derive(Clone, Debug)]
pub struct Plan {
    /// Sweep name (`name`, default the file stem).
    pub name: String,
    /// The sweep file.
    pub file: PathBuf,
    /// The base scenario (relative paths in the sweep file are relative to the sweep file).
    pub scenario: PathBuf,
    /// Axes in folder order: grid, zip, random (each in file order), seed.
    pub axes: Vec<Axis>,
    /// Points in expansion order.
    pub points: Vec<Point>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    name: Option<String>,
    scenario: String,
    seeds: Option<Seeds>,
    #[serde(default)]
    set: toml::Table,
    #[serde(default)]
    grid: BTreeMap<String, Spanned<ListAxis>>,
    #[serde(default)]
    zip: BTreeMap<String, Spanned<ListAxis>>,
    random: Option<RandomSection>,
}

#[derive(Deserialize)]
#[serde(
    untagged,
    expecting = "expected a count of seeds (`seeds = 4`: seeds 1 to 4) or a list of seeds (`seeds = [1, 2]`), non-negative integers"
)]
enum Seeds {
    Count(u64),
    List(Vec<u64>),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListAxis {
    key: String,
    values: Vec<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RandomSection {
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

/// Loads and expands a sweep file. Errors name the file and the field.
pub fn load(file: &Path) -> anyhow::Result<Plan> {
    let shown = file.display();
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("{shown}: cannot read sweep file"))?;
    let parsed: SweepFile = toml::from_str(&text).map_err(|e| {
        anyhow!(
            "{}",
            netstep_scenario::error::toml_error(&text, &shown.to_string(), &e)
        )
    })?;
    let dir = file.parent().unwrap_or(Path::new("."));
    let scenario = dir.join(&parsed.scenario);
    let base = std::fs::read_to_string(&scenario).map_err(|e| {
        anyhow!(
            "{shown}: scenario: cannot read {} ({e})",
            scenario.display()
        )
    })?;
    let name = match &parsed.name {
        Some(n) if n.trim().is_empty() => bail!("{shown}: name: must not be empty"),
        Some(n) => n.clone(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into()),
    };

    let mut fixed = Vec::new();
    flatten(&parsed.set, "", &mut fixed);
    let fixed: Vec<String> = fixed
        .into_iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();

    // Groups of rows; the points are their product in this order.
    let mut axes = Vec::new();
    let mut groups: Vec<Vec<Vec<toml::Value>>> = Vec::new();
    for (name, spec) in in_file_order(&parsed.grid) {
        check_axis(file, "grid", name, &spec.key, &spec.values)?;
        axes.push(Axis {
            name: name.clone(),
            key: spec.key.clone(),
            group: AxisGroup::Grid,
        });
        groups.push(spec.values.iter().map(|v| vec![v.clone()]).collect());
    }
    let zip = in_file_order(&parsed.zip);
    if let Some((first, first_spec)) = zip.first() {
        let mut rows = vec![Vec::new(); first_spec.values.len()];
        for (name, spec) in &zip {
            check_axis(file, "zip", name, &spec.key, &spec.values)?;
            if spec.values.len() != first_spec.values.len() {
                bail!(
                    "{shown}: zip.{name}: {} values, but zip.{first} has {}; zip axes vary together and need the same number of values",
                    spec.values.len(),
                    first_spec.values.len()
                );
            }
            axes.push(Axis {
                name: (*name).clone(),
                key: spec.key.clone(),
                group: AxisGroup::Zip,
            });
            for (row, value) in rows.iter_mut().zip(&spec.values) {
                row.push(value.clone());
            }
        }
        groups.push(rows);
    }
    if let Some(random) = &parsed.random {
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
        groups.push(rows);
    }
    if let Some(seeds) = &parsed.seeds {
        let list: Vec<u64> = match seeds {
            Seeds::Count(0) => bail!("{shown}: seeds: must be at least 1"),
            Seeds::Count(n) if *n > MAX_POINTS as u64 => {
                bail!("{shown}: seeds: at most {MAX_POINTS}")
            }
            Seeds::Count(n) => (1..=*n).collect(),
            Seeds::List(list) if list.is_empty() => {
                bail!("{shown}: seeds: an empty list; give seeds = [1, 2] or seeds = 2")
            }
            Seeds::List(list) => list.clone(),
        };
        if axes.iter().any(|a| a.name == "seed") {
            bail!("{shown}: an axis is named \"seed\", which `seeds` uses; rename it");
        }
        axes.push(Axis {
            name: "seed".into(),
            key: "simulation.seed".into(),
            group: AxisGroup::Seed,
        });
        groups.push(
            list.iter()
                .map(|&s| vec![toml::Value::Integer(s as i64)])
                .collect(),
        );
    }
    if axes.is_empty() {
        bail!(
            "{shown}: no axis: add [grid], [zip], [random] or seeds (a single run is `netstep run`)"
        );
    }
    let mut seen_keys: HashMap<&str, &str> = HashMap::new();
    for axis in &axes {
        if let Some(other) = seen_keys.insert(axis.key.as_str(), axis.name.as_str()) {
            bail!(
                "{shown}: axes {other} and {} both set {}; one key, one axis",
                axis.name,
                axis.key
            );
        }
    }
    let mut seen_names = HashMap::new();
    for axis in &axes {
        if let Some(group) = seen_names.insert(axis.name.clone(), axis.group) {
            bail!(
                "{shown}: axis {:?} appears twice ({group:?} and {:?}); axis names are columns and must be unique",
                axis.name,
                axis.group
            );
        }
    }
    let total = groups
        .iter()
        .try_fold(1usize, |n, g| n.checked_mul(g.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| anyhow!("{shown}: the axes expand to more than {MAX_POINTS} points"))?;
    if total == 0 {
        bail!("{shown}: an axis has no values, so the sweep has no point");
    }

    let base_dir = scenario.parent().unwrap_or(Path::new("."));
    let mut points: Vec<Point> = Vec::with_capacity(total);
    let mut ids: HashMap<String, usize> = HashMap::new();
    let mut paths: HashMap<String, usize> = HashMap::new();
    for index in 0..total {
        // Mixed radix: the last group varies fastest.
        let mut rest = index;
        let mut picks = vec![0; groups.len()];
        for (g, group) in groups.iter().enumerate().rev() {
            picks[g] = rest % group.len();
            rest /= group.len();
        }
        let values: Vec<toml::Value> = groups
            .iter()
            .zip(&picks)
            .flat_map(|(group, &i)| group[i].iter().cloned())
            .collect();
        let mut overrides = fixed.clone();
        overrides.extend(
            axes.iter()
                .zip(&values)
                .map(|(axis, value)| format!("{}={value}", axis.key)),
        );
        let resolved = netstep_scenario::apply_overrides(&base, &overrides)
            .map_err(|e| anyhow!("{shown}: point {}: {e}", describe(&axes, &values)))?;
        let id = format!("{:016x}", hash_resolved(&resolved, base_dir));
        let path = axes
            .iter()
            .zip(&values)
            .map(|(axis, value)| component(&axis.name, value))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| anyhow!("{shown}: {e}"))?
            .join("/");
        if let Some(&other) = ids.get(&id) {
            bail!(
                "{shown}: points {} and {} resolve to the same scenario (a repeated value?)",
                describe(&axes, &points[other].values),
                describe(&axes, &values)
            );
        }
        if let Some(&other) = paths.get(&path) {
            bail!(
                "{shown}: points {} and {} map to the same folder {path}",
                describe(&axes, &points[other].values),
                describe(&axes, &values)
            );
        }
        ids.insert(id.clone(), index);
        paths.insert(path.clone(), index);
        points.push(Point {
            id,
            values,
            overrides,
            path,
        });
    }
    Ok(Plan {
        name,
        file: file.to_path_buf(),
        scenario,
        axes,
        points,
    })
}

/// `axis=value, ...` for messages.
pub fn describe(axes: &[Axis], values: &[toml::Value]) -> String {
    axes.iter()
        .zip(values)
        .map(|(a, v)| format!("{}={}", a.name, display(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A value as it appears in folder names and messages: strings bare, everything else as TOML.
pub fn display(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The folder level of one axis value: `name=value`, percent-encoded.
pub fn component(name: &str, value: &toml::Value) -> anyhow::Result<String> {
    let text = format!("{name}={}", encode(&display(value)));
    if text.len() > MAX_COMPONENT {
        bail!(
            "axis {name}: the value {:?} makes a folder name of {} bytes; the limit is {MAX_COMPONENT}",
            display(value),
            text.len()
        );
    }
    Ok(text)
}

/// Percent-encodes every byte outside `[A-Za-z0-9._+-]`, so `/`, spaces and the like cannot
/// form paths.
pub fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || b"._+-".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Hash of a resolved scenario text and the CDF files it names (resolved as the loader does).
fn hash_resolved(resolved: &str, base_dir: &Path) -> u64 {
    let mut hash = netstep_scenario::fnv1a(resolved.as_bytes(), 0xcbf2_9ce4_8422_2325);
    if let Ok(doc) = toml::from_str::<toml::Table>(resolved)
        && let Some(toml::Value::Array(traffic)) = doc.get("traffic")
    {
        for entry in traffic {
            if let Some(toml::Value::String(cdf)) = entry.get("cdf") {
                let given = Path::new(cdf);
                let path = if given.is_absolute() {
                    given.to_path_buf()
                } else {
                    base_dir.join(given)
                };
                if let Ok(bytes) = std::fs::read(&path) {
                    hash = netstep_scenario::fnv1a(&bytes, hash);
                }
            }
        }
    }
    hash
}

/// `[set]` entries as dotted keys: `"traffic.0.duration" = "1ms"` and nested tables alike.
fn flatten(table: &toml::Table, prefix: &str, out: &mut Vec<(String, toml::Value)>) {
    for (key, value) in table {
        let path = if prefix.is_empty() {
            key.clone()
        } else {
            format!("{prefix}.{key}")
        };
        match value {
            toml::Value::Table(inner) => flatten(inner, &path, out),
            other => out.push((path, other.clone())),
        }
    }
}

fn in_file_order<T>(map: &BTreeMap<String, Spanned<T>>) -> Vec<(&String, &T)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by_key(|(_, spanned)| spanned.span().start);
    entries
        .into_iter()
        .map(|(name, spanned)| (name, spanned.get_ref()))
        .collect()
}

fn check_name(file: &Path, section: &str, name: &str) -> anyhow::Result<()> {
    let shown = file.display();
    let ok = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !ok {
        bail!(
            "{shown}: {section}.{name:?}: axis names are column names: letters, digits and _, not starting with a digit"
        );
    }
    if RESERVED.contains(&name) {
        bail!(
            "{shown}: {section}.{name}: the manifest uses this column name; choose another axis name"
        );
    }
    Ok(())
}

fn check_key(file: &Path, field: &str, key: &str) -> anyhow::Result<()> {
    if key.is_empty() || key.split('.').any(str::is_empty) {
        bail!(
            "{}: {field}.key: {key:?} is not a dotted scenario key (e.g. \"traffic.0.load\")",
            file.display()
        );
    }
    Ok(())
}

fn check_axis(
    file: &Path,
    section: &str,
    name: &str,
    key: &str,
    values: &[toml::Value],
) -> anyhow::Result<()> {
    check_name(file, section, name)?;
    check_key(file, &format!("{section}.{name}"), key)?;
    if values.is_empty() {
        bail!("{}: {section}.{name}.values: empty", file.display());
    }
    for value in values {
        if matches!(
            value,
            toml::Value::Array(_) | toml::Value::Table(_) | toml::Value::Datetime(_)
        ) {
            bail!(
                "{}: {section}.{name}.values: {value} is not a string, number or boolean",
                file.display()
            );
        }
    }
    Ok(())
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

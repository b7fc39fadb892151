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
use serde::Deserialize;
use toml::Spanned;

use super::random;

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
    random: Option<random::RandomSection>,
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

/// The values of one group of axes, a row per choice (a value for each of the group's axes);
/// the points are the product of the groups.
pub(super) type Group = Vec<Vec<toml::Value>>;

/// Loads and expands a sweep file. Errors name the file and the field.
pub fn load(file: &Path) -> anyhow::Result<Plan> {
    let (parsed, scenario, base) = read(file)?;
    let name = sweep_name(file, parsed.name.as_deref())?;
    let mut fixed = Vec::new();
    flatten(&parsed.set, "", &mut fixed);
    let fixed: Vec<String> = fixed
        .into_iter()
        .map(|(key, value)| format!("{key}={value}"))
        .collect();

    // Groups of rows; the points are their product in this order.
    let mut axes = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    grid_axes(file, &parsed.grid, &mut axes, &mut groups)?;
    zip_axes(file, &parsed.zip, &mut axes, &mut groups)?;
    if let Some(random) = &parsed.random {
        groups.push(random::axes(file, random, &mut axes)?);
    }
    if let Some(seeds) = &parsed.seeds {
        groups.push(seed_axis(file, seeds, &mut axes)?);
    }
    check_axes(file, &axes)?;
    let total = groups
        .iter()
        .try_fold(1usize, |n, g| n.checked_mul(g.len()))
        .filter(|&n| n <= MAX_POINTS)
        .ok_or_else(|| {
            anyhow!(
                "{}: the axes expand to more than {MAX_POINTS} points",
                file.display()
            )
        })?;
    if total == 0 {
        bail!(
            "{}: an axis has no values, so the sweep has no point",
            file.display()
        );
    }
    let points = expand(file, &scenario, &base, &fixed, &axes, &groups, total)?;
    Ok(Plan {
        name,
        file: file.to_path_buf(),
        scenario,
        axes,
        points,
    })
}

/// Reads and parses the sweep file and reads its base scenario: (the sweep, the scenario's
/// path, its text).
fn read(file: &Path) -> anyhow::Result<(SweepFile, PathBuf, String)> {
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
    Ok((parsed, scenario, base))
}

/// The sweep's name: `name`, else the file stem.
fn sweep_name(file: &Path, name: Option<&str>) -> anyhow::Result<String> {
    Ok(match name {
        Some(n) if n.trim().is_empty() => bail!("{}: name: must not be empty", file.display()),
        Some(n) => n.to_string(),
        None => file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into()),
    })
}

/// `[grid]`: a group per axis, in file order.
fn grid_axes(
    file: &Path,
    grid: &BTreeMap<String, Spanned<ListAxis>>,
    axes: &mut Vec<Axis>,
    groups: &mut Vec<Group>,
) -> anyhow::Result<()> {
    for (name, spec) in in_file_order(grid) {
        check_axis(file, "grid", name, &spec.key, &spec.values)?;
        axes.push(Axis {
            name: name.clone(),
            key: spec.key.clone(),
            group: AxisGroup::Grid,
        });
        groups.push(spec.values.iter().map(|v| vec![v.clone()]).collect());
    }
    Ok(())
}

/// `[zip]`: one group for all its axes (of equal length), if any.
fn zip_axes(
    file: &Path,
    zip: &BTreeMap<String, Spanned<ListAxis>>,
    axes: &mut Vec<Axis>,
    groups: &mut Vec<Group>,
) -> anyhow::Result<()> {
    let zip = in_file_order(zip);
    let Some((first, first_spec)) = zip.first() else {
        return Ok(());
    };
    let mut rows = vec![Vec::new(); first_spec.values.len()];
    for (name, spec) in &zip {
        check_axis(file, "zip", name, &spec.key, &spec.values)?;
        if spec.values.len() != first_spec.values.len() {
            bail!(
                "{}: zip.{name}: {} values, but zip.{first} has {}; zip axes vary together and need the same number of values",
                file.display(),
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
    Ok(())
}

/// `seeds`: the `seed` axis (`simulation.seed`) and its group.
fn seed_axis(file: &Path, seeds: &Seeds, axes: &mut Vec<Axis>) -> anyhow::Result<Group> {
    let shown = file.display();
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
    Ok(list
        .iter()
        .map(|&s| vec![toml::Value::Integer(s as i64)])
        .collect())
}

/// At least one axis; no key set by two axes, no name used twice.
fn check_axes(file: &Path, axes: &[Axis]) -> anyhow::Result<()> {
    let shown = file.display();
    if axes.is_empty() {
        bail!(
            "{shown}: no axis: add [grid], [zip], [random] or seeds (a single run is `netstep run`)"
        );
    }
    let mut seen_keys: HashMap<&str, &str> = HashMap::new();
    for axis in axes {
        if let Some(other) = seen_keys.insert(axis.key.as_str(), axis.name.as_str()) {
            bail!(
                "{shown}: axes {other} and {} both set {}; one key, one axis",
                axis.name,
                axis.key
            );
        }
    }
    let mut seen_names = HashMap::new();
    for axis in axes {
        if let Some(group) = seen_names.insert(axis.name.clone(), axis.group) {
            bail!(
                "{shown}: axis {:?} appears twice ({group:?} and {:?}); axis names are columns and must be unique",
                axis.name,
                axis.group
            );
        }
    }
    Ok(())
}

/// The `total` points, the product of the groups (the last group varies fastest): each
/// resolved against the base scenario, with its id and folder, both unique.
fn expand(
    file: &Path,
    scenario: &Path,
    base: &str,
    fixed: &[String],
    axes: &[Axis],
    groups: &[Group],
    total: usize,
) -> anyhow::Result<Vec<Point>> {
    let shown = file.display();
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
        let mut overrides = fixed.to_vec();
        overrides.extend(
            axes.iter()
                .zip(&values)
                .map(|(axis, value)| format!("{}={value}", axis.key)),
        );
        let resolved = netstep_scenario::apply_overrides(base, &overrides)
            .map_err(|e| anyhow!("{shown}: point {}: {e}", describe(axes, &values)))?;
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
                describe(axes, &points[other].values),
                describe(axes, &values)
            );
        }
        if let Some(&other) = paths.get(&path) {
            bail!(
                "{shown}: points {} and {} map to the same folder {path}",
                describe(axes, &points[other].values),
                describe(axes, &values)
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
    Ok(points)
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

/// A section's entries in the order the file gives them.
pub(super) fn in_file_order<T>(map: &BTreeMap<String, Spanned<T>>) -> Vec<(&String, &T)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by_key(|(_, spanned)| spanned.span().start);
    entries
        .into_iter()
        .map(|(name, spanned)| (name, spanned.get_ref()))
        .collect()
}

/// An axis name must be a column name, and not one the manifest uses.
pub(super) fn check_name(file: &Path, section: &str, name: &str) -> anyhow::Result<()> {
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

/// An axis key must be a dotted scenario key.
pub(super) fn check_key(file: &Path, field: &str, key: &str) -> anyhow::Result<()> {
    if key.is_empty() || key.split('.').any(str::is_empty) {
        bail!(
            "{}: {field}.key: {key:?} is not a dotted scenario key (e.g. \"traffic.0.load\")",
            file.display()
        );
    }
    Ok(())
}

/// A list axis: its name, its key, and values that are strings, numbers or booleans.
pub(super) fn check_axis(
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

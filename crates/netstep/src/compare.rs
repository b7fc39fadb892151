//! `netstep compare A B`: how far apart two sets of runs are, metric by metric and flow-size
//! bucket by bucket, as 1-D Wasserstein distances.
//!
//! W1 between samples `a` (n values) and `b` (m values) is `∫₀¹ |F_a⁻¹(u) − F_b⁻¹(u)| du` over
//! the empirical quantile functions. Both are step functions with breakpoints at `i/n` and
//! `j/m`; merging the breakpoints gives the integral exactly in O(n + m) after sorting, for any
//! n and m (for n = m it is the mean absolute difference of the sorted samples). Normalized W1
//! is W1 / mean(a): A is the reference.
//!
//! Two sweep folders (each with a `sweep.parquet` manifest) are compared point by point: points
//! are matched by the values of the axes both sweeps have (their `<axis>=<value>` folder
//! levels), runs of B that differ only in axes A lacks are pooled, and each result names its
//! point.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use arrow_array::{Array, Float64Array, UInt32Array, UInt64Array};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::Serialize;

/// What to compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum Metric {
    /// Flow completion time, ns (flows.parquet, completed flows).
    FctNs,
    /// FCT / ideal FCT (flows.parquet, completed flows).
    Slowdown,
    /// Per-hop sojourn (queueing + transmission) of transmitted packets, ns (packet_hops.parquet).
    PacketDelayNs,
    /// Sampled queue occupancy, bytes (queue_samples.parquet).
    QueueBytes,
}

impl Metric {
    fn table(self) -> &'static str {
        match self {
            Metric::FctNs | Metric::Slowdown => "flows",
            Metric::PacketDelayNs => "packet_hops",
            Metric::QueueBytes => "queue_samples",
        }
    }
    fn is_flow_metric(self) -> bool {
        self.table() == "flows"
    }
}

/// How to group samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
#[value(rename_all = "snake_case")]
pub enum GroupBy {
    /// Flow-size buckets (0, MTU], (MTU, BDP], (BDP, 5 BDP], (5 BDP, ∞) (flow metrics only).
    SizeBucket,
    /// One group with everything.
    None,
}

/// Bucket names in order.
pub const BUCKETS: [&str; 4] = ["(0, MTU]", "(MTU, BDP]", "(BDP, 5BDP]", "(5BDP, inf)"];

/// Groups with fewer samples than this are flagged.
pub const FEW_SAMPLES: usize = 100;

/// Comparison of one group.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct GroupResult {
    /// The matched sweep point (`axis=value/...` over the shared axes); `None` for plain runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub point: Option<String>,
    /// Group name.
    pub group: String,
    /// Samples in A.
    pub n_a: usize,
    /// Samples in B.
    pub n_b: usize,
    /// Wasserstein-1 distance.
    pub w1: f64,
    /// W1 / mean(A).
    pub nw1: f64,
    /// (p50_B − p50_A) / p50_A.
    pub rel_err_p50: f64,
    /// (p90_B − p90_A) / p90_A.
    pub rel_err_p90: f64,
    /// (p99_B − p99_A) / p99_A.
    pub rel_err_p99: f64,
    /// Fewer than 100 samples on either side.
    pub few_samples: bool,
}

/// Exact W1 between two samples (any sizes; both non-empty).
pub fn wasserstein1(a: &[f64], b: &[f64]) -> f64 {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_by(f64::total_cmp);
    b.sort_by(f64::total_cmp);
    let (n, m) = (a.len() as u128, b.len() as u128);
    let (mut i, mut j) = (0usize, 0usize);
    // Positions are measured in units of 1/(n·m): a's breakpoints are multiples of m, b's of n.
    let mut position = 0u128;
    let mut total = 0.0;
    while i < a.len() && j < b.len() {
        let next_a = (i as u128 + 1) * m;
        let next_b = (j as u128 + 1) * n;
        let next = next_a.min(next_b);
        total += (a[i] - b[j]).abs() * (next - position) as f64;
        position = next;
        if next_a == next {
            i += 1;
        }
        if next_b == next {
            j += 1;
        }
    }
    total / (n * m) as f64
}

/// Quantile with linear interpolation between order statistics (numpy's default).
fn quantile(sorted: &[f64], q: f64) -> f64 {
    let h = (sorted.len() - 1) as f64 * q;
    let lo = h.floor() as usize;
    let hi = h.ceil() as usize;
    sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo])
}

/// Compares two non-empty samples.
pub fn compare_samples(group: &str, a: &[f64], b: &[f64]) -> GroupResult {
    let mut sa = a.to_vec();
    let mut sb = b.to_vec();
    sa.sort_by(f64::total_cmp);
    sb.sort_by(f64::total_cmp);
    let w1 = wasserstein1(&sa, &sb);
    let mean_a = sa.iter().sum::<f64>() / sa.len() as f64;
    let rel = |q: f64| {
        let qa = quantile(&sa, q);
        (quantile(&sb, q) - qa) / qa
    };
    GroupResult {
        point: None,
        group: group.to_string(),
        n_a: a.len(),
        n_b: b.len(),
        w1,
        nw1: w1 / mean_a,
        rel_err_p50: rel(0.5),
        rel_err_p90: rel(0.9),
        rel_err_p99: rel(0.99),
        few_samples: a.len() < FEW_SAMPLES || b.len() < FEW_SAMPLES,
    }
}

/// Run folders named by `spec`: a run folder, a folder with runs below it, or a glob.
pub fn resolve_runs(spec: &str) -> anyhow::Result<Vec<PathBuf>> {
    let mut candidates = Vec::new();
    if spec.contains(['*', '?', '[']) {
        for entry in glob::glob(spec).map_err(|e| anyhow!("{spec}: not a valid glob: {e}"))? {
            candidates.push(entry.map_err(|e| anyhow!("{spec}: {e}"))?);
        }
    } else {
        candidates.push(PathBuf::from(spec));
    }
    let mut runs = Vec::new();
    for path in candidates {
        find_runs(&path, &mut runs);
    }
    runs.sort();
    runs.dedup();
    if runs.is_empty() {
        bail!("{spec}: no netstep run here (no run.parquet in the folder or below it)");
    }
    Ok(runs)
}

fn find_runs(path: &Path, runs: &mut Vec<PathBuf>) {
    if path.join("run.parquet").is_file() {
        runs.push(path.to_path_buf());
        return;
    }
    if let Ok(entries) = std::fs::read_dir(path) {
        let mut children: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        children.sort();
        for child in children {
            find_runs(&child, runs);
        }
    }
}

/// Opens `table` of a run, checking that it exists and carries a supported schema version.
fn open_table(run: &Path, table: &str) -> anyhow::Result<ParquetRecordBatchReaderBuilder<File>> {
    let path = run.join(format!("{table}.parquet"));
    if !path.is_file() {
        let hint = if table == "flows" {
            String::new()
        } else {
            format!(" (run it with --trace {table})")
        };
        bail!("{}: no {table}.parquet in this run{hint}", run.display());
    }
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let builder = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| anyhow!("{}: not a readable Parquet file: {e}", path.display()))?;
    let version = builder
        .metadata()
        .file_metadata()
        .key_value_metadata()
        .and_then(|kv| {
            kv.iter()
                .find(|k| k.key == "netstep.schema_version")
                .and_then(|k| k.value.clone())
        });
    match version.as_deref() {
        Some(v) if v == netstep_trace::SCHEMA_VERSION.to_string() => Ok(builder),
        Some(v) => bail!(
            "{}: schema version {v}, but this netstep reads version {}",
            path.display(),
            netstep_trace::SCHEMA_VERSION
        ),
        None => bail!(
            "{}: no netstep.schema_version metadata; not a netstep table",
            path.display()
        ),
    }
}

fn column<'a, T: 'static>(
    batch: &'a arrow_array::RecordBatch,
    name: &str,
    path: &Path,
) -> anyhow::Result<&'a T> {
    batch
        .column_by_name(name)
        .and_then(|c| c.as_any().downcast_ref::<T>())
        .ok_or_else(|| {
            anyhow!(
                "{}: column {name} is missing or has an unexpected type",
                path.display()
            )
        })
}

/// Flow-size thresholds of one run: (MTU bytes, BDP bytes).
fn thresholds(run: &Path) -> anyhow::Result<(f64, f64)> {
    let mut reader = open_table(run, "run")?.build()?;
    let batch = reader
        .next()
        .ok_or_else(|| anyhow!("{}: run.parquet is empty", run.display()))??;
    let get = |name: &str| column::<UInt64Array>(&batch, name, run).map(|c| c.value(0) as f64);
    let mtu = get("mtu_bytes")?;
    let bdp = get("base_rtt_ns")? * 1e-9 * get("host_rate_bps")? / 8.0;
    Ok((mtu, bdp))
}

fn bucket(size: f64, mtu: f64, bdp: f64) -> &'static str {
    if size <= mtu {
        BUCKETS[0]
    } else if size <= bdp {
        BUCKETS[1]
    } else if size <= 5.0 * bdp {
        BUCKETS[2]
    } else {
        BUCKETS[3]
    }
}

/// Samples of `metric` from all `runs`, grouped.
pub fn samples(
    runs: &[PathBuf],
    metric: Metric,
    by: GroupBy,
) -> anyhow::Result<BTreeMap<&'static str, Vec<f64>>> {
    let mut groups: BTreeMap<&'static str, Vec<f64>> = BTreeMap::new();
    for run in runs {
        let (mtu, bdp) = if by == GroupBy::SizeBucket {
            thresholds(run)?
        } else {
            (0.0, 0.0)
        };
        let path = run.join(format!("{}.parquet", metric.table()));
        for batch in open_table(run, metric.table())?.build()? {
            let batch = batch?;
            match metric {
                Metric::FctNs | Metric::Slowdown => {
                    let size = column::<UInt64Array>(&batch, "size_bytes", &path)?;
                    let fct = column::<UInt64Array>(&batch, "fct_ns", &path)?;
                    let slowdown = column::<Float64Array>(&batch, "slowdown", &path)?;
                    for i in 0..batch.num_rows() {
                        if fct.is_null(i) {
                            continue;
                        }
                        let value = if metric == Metric::FctNs {
                            fct.value(i) as f64
                        } else {
                            slowdown.value(i)
                        };
                        let group = if by == GroupBy::SizeBucket {
                            bucket(size.value(i) as f64, mtu, bdp)
                        } else {
                            "all"
                        };
                        groups.entry(group).or_default().push(value);
                    }
                }
                Metric::PacketDelayNs => {
                    let arrive = column::<UInt64Array>(&batch, "arrive_ns", &path)?;
                    let depart = column::<UInt64Array>(&batch, "depart_ns", &path)?;
                    let values = groups.entry("all").or_default();
                    for i in 0..batch.num_rows() {
                        if !depart.is_null(i) {
                            values.push((depart.value(i) - arrive.value(i)) as f64);
                        }
                    }
                }
                Metric::QueueBytes => {
                    let bytes = column::<UInt64Array>(&batch, "queue_bytes", &path)?;
                    let _ports = column::<UInt32Array>(&batch, "port", &path)?;
                    groups
                        .entry("all")
                        .or_default()
                        .extend(bytes.values().iter().map(|&v| v as f64));
                }
            }
        }
    }
    Ok(groups)
}

/// A sweep point: its axis values (from its folder levels) and its run folder.
pub type SweepPoint = (Vec<(String, String)>, PathBuf);

/// The done points of a sweep folder (one with a `sweep.parquet` manifest) as (axis values
/// from the folder levels, run folder); `None` for anything else.
pub fn sweep_points(spec: &str) -> anyhow::Result<Option<Vec<SweepPoint>>> {
    let root = Path::new(spec);
    if !root.join(crate::sweep::state::MANIFEST).is_file() {
        return Ok(None);
    }
    let mut points = Vec::new();
    for (path, status) in crate::sweep::state::read_manifest(root)? {
        if status != "done" {
            continue;
        }
        let axes = path
            .split('/')
            .filter_map(|level| level.split_once('='))
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        points.push((axes, root.join(&path)));
    }
    if points.is_empty() {
        bail!("{spec}: a sweep with no done point (see its sweep.parquet)");
    }
    Ok(Some(points))
}

/// Compares two sweeps point by point over their shared axes.
fn compare_sweeps(
    (a, points_a): (&str, Vec<SweepPoint>),
    (b, points_b): (&str, Vec<SweepPoint>),
    metric: Metric,
    by: GroupBy,
) -> anyhow::Result<Vec<GroupResult>> {
    let names_b: std::collections::BTreeSet<&str> = points_b
        .iter()
        .flat_map(|(axes, _)| axes.iter().map(|(k, _)| k.as_str()))
        .collect();
    let shared: Vec<String> = points_a[0]
        .0
        .iter()
        .map(|(k, _)| k.clone())
        .filter(|k| names_b.contains(k.as_str()))
        .collect();
    if shared.is_empty() {
        bail!("sweeps {a} and {b} share no axis; nothing to match their points by");
    }
    let key = |axes: &[(String, String)]| -> String {
        shared
            .iter()
            .map(|name| {
                let value = axes.iter().find(|(k, _)| k == name).map_or("", |(_, v)| v);
                format!("{name}={value}")
            })
            .collect::<Vec<_>>()
            .join("/")
    };
    let mut groups_a: Vec<(String, Vec<PathBuf>)> = Vec::new();
    for (axes, run) in &points_a {
        let k = key(axes);
        match groups_a.iter_mut().find(|(g, _)| *g == k) {
            Some((_, runs)) => runs.push(run.clone()),
            None => groups_a.push((k, vec![run.clone()])),
        }
    }
    let mut groups_b: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for (axes, run) in &points_b {
        groups_b.entry(key(axes)).or_default().push(run.clone());
    }
    let mut results = Vec::new();
    let mut matched = Vec::new();
    let mut unmatched = Vec::new();
    for (point, runs_a) in &groups_a {
        let Some(runs_b) = groups_b.remove(point) else {
            unmatched.push(format!("{point} (only in A)"));
            continue;
        };
        matched.push(point.as_str());
        let samples_a = samples(runs_a, metric, by)?;
        let samples_b = samples(&runs_b, metric, by)?;
        for mut result in group_results(
            &samples_a,
            &samples_b,
            by,
            &format!("{a}/{point}"),
            &format!("{b}/{point}"),
        )? {
            result.point = Some(point.clone());
            results.push(result);
        }
    }
    unmatched.extend(groups_b.into_keys().map(|k| format!("{k} (only in B)")));
    if matched.is_empty() {
        bail!(
            "no point of {a} matches a point of {b} over the axes {}",
            shared.join(", ")
        );
    }
    if results.is_empty() {
        bail!(
            "no samples of {metric:?} in A ({a}) or B ({b}) at the {} matched point(s) {} (no completed flows?)",
            matched.len(),
            matched.join(", ")
        );
    }
    if !unmatched.is_empty() {
        eprintln!(
            "netstep compare: {} point(s) without a match, left out: {}",
            unmatched.len(),
            unmatched.join(", ")
        );
    }
    Ok(results)
}

/// Per-group comparison of two sample sets.
fn group_results(
    samples_a: &BTreeMap<&'static str, Vec<f64>>,
    samples_b: &BTreeMap<&'static str, Vec<f64>>,
    by: GroupBy,
    a: &str,
    b: &str,
) -> anyhow::Result<Vec<GroupResult>> {
    let names: Vec<&str> = if by == GroupBy::SizeBucket {
        BUCKETS.to_vec()
    } else {
        vec!["all"]
    };
    let mut results = Vec::new();
    for name in names {
        let empty = Vec::new();
        let sa = samples_a.get(name).unwrap_or(&empty);
        let sb = samples_b.get(name).unwrap_or(&empty);
        match (sa.is_empty(), sb.is_empty()) {
            (true, true) => continue,
            (false, true) => bail!(
                "group {name}: {} samples in A ({a}) but none in B ({b}); nothing to compare it with",
                sa.len()
            ),
            (true, false) => bail!(
                "group {name}: {} samples in B ({b}) but none in A ({a}); nothing to compare it with",
                sb.len()
            ),
            (false, false) => results.push(compare_samples(name, sa, sb)),
        }
    }
    Ok(results)
}

/// The full comparison; errors are bad input.
pub fn compare(
    a: &str,
    b: &str,
    metric: Metric,
    by: Option<GroupBy>,
) -> anyhow::Result<Vec<GroupResult>> {
    let by = by.unwrap_or(if metric.is_flow_metric() {
        GroupBy::SizeBucket
    } else {
        GroupBy::None
    });
    if by == GroupBy::SizeBucket && !metric.is_flow_metric() {
        bail!(
            "--by size_bucket applies to flow metrics (fct_ns, slowdown); use --by none for {metric:?}"
        );
    }
    if let (Some(points_a), Some(points_b)) = (sweep_points(a)?, sweep_points(b)?) {
        return compare_sweeps((a, points_a), (b, points_b), metric, by);
    }
    let runs_a = resolve_runs(a)?;
    let runs_b = resolve_runs(b)?;
    let samples_a = samples(&runs_a, metric, by)?;
    let samples_b = samples(&runs_b, metric, by)?;
    let results = group_results(&samples_a, &samples_b, by, a, b)?;
    if results.is_empty() {
        bail!("no samples of {metric:?} in A ({a}) or B ({b}) (no completed flows?)");
    }
    Ok(results)
}

/// The table printed for people.
pub fn render(results: &[GroupResult]) -> String {
    let width = results
        .iter()
        .filter_map(|r| r.point.as_ref().map(String::len))
        .max();
    let point = |p: Option<&str>| match width {
        Some(w) => format!("{:<w$}  ", p.unwrap_or("")),
        None => String::new(),
    };
    let mut text = point(Some("point"));
    text += &format!(
        "{:<13} {:>8} {:>8} {:>12} {:>8} {:>9} {:>9} {:>9}\n",
        "group", "n_A", "n_B", "W1", "nW1", "err p50", "err p90", "err p99"
    );
    for r in results {
        text.push_str(&point(r.point.as_deref()));
        text.push_str(&format!(
            "{:<13} {:>8} {:>8} {:>12.4} {:>8.4} {:>8.1}% {:>8.1}% {:>8.1}%{}\n",
            r.group,
            r.n_a,
            r.n_b,
            r.w1,
            r.nw1,
            100.0 * r.rel_err_p50,
            100.0 * r.rel_err_p90,
            100.0 * r.rel_err_p99,
            if r.few_samples {
                "  (< 100 samples)"
            } else {
                ""
            }
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_samples_are_at_distance_zero() {
        let a = [3.0, 1.0, 2.0, 5.0];
        assert_eq!(wasserstein1(&a, &a), 0.0);
    }

    #[test]
    fn a_constant_shift_is_the_distance() {
        let a: Vec<f64> = (0..50).map(|i| (i * i) as f64).collect();
        let b: Vec<f64> = a.iter().map(|v| v + 7.5).collect();
        assert!((wasserstein1(&a, &b) - 7.5).abs() < 1e-12);
    }

    #[test]
    fn unequal_sizes_use_the_quantile_functions() {
        // F_a^-1 = 0 on [0, 1/2), 1 on [1/2, 1); F_b^-1 = 0 on [0, 1/3), 1 on [1/3, 1).
        // They differ by 1 on [1/3, 1/2): W1 = 1/6.
        assert!((wasserstein1(&[0.0, 1.0], &[0.0, 1.0, 1.0]) - 1.0 / 6.0).abs() < 1e-15);
    }
}

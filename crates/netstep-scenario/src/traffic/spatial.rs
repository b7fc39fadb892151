//! Parsimon's rack-level traffic matrices ("spatial" JSON files of
//! github.com/netiken/parsimon-eval, `workload/spatials/`), read as a [`Matrix`]:
//!
//! ```json
//! { "matrix": { "inner": [[94, 1421, ...], ...], "idx2name": ["rack name", ...] },
//!   "pod2tors": { "pod name": ["rack name", ...], ... }, "nr_pods": 2, "nr_racks": 32 }
//! ```
//!
//! `inner[i][j]` is the weight of flows from rack `idx2name[i]` to rack `idx2name[j]` (the
//! diagonal included: flows inside a rack). The racks are mapped onto the topology's racks
//! (its switches with hosts attached, in node order): the pods in the order of their names
//! (sorted), each pod's racks in its list's order. On a `cluster` topology the file must have
//! the cluster's number of pods, and pod `k` of the file takes the first racks of pod `k` (a
//! file's pod may name fewer racks than the cluster's pods hold; the others stay idle): this
//! is Parsimon's mapping up to a shuffle of the pods and of the racks within a pod, which are
//! symmetries of the cluster. Elsewhere the file's racks, in that order, are the topology's.
//! Rows and columns past the named racks (Parsimon pads its matrices) must be zero.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use netstep_core::topology::{NodeKind, RoutingKind, TopologySpec};
use serde::Deserialize;

use super::matrix::{Matrix, hosts_under};

#[derive(Deserialize)]
struct SpatialFile {
    matrix: Inner,
    pod2tors: BTreeMap<String, Vec<String>>,
    nr_pods: usize,
    nr_racks: usize,
}

#[derive(Deserialize)]
struct Inner {
    inner: Vec<Vec<f64>>,
    idx2name: Vec<String>,
}

/// Reads a Parsimon spatial file (`shown` is the name the scenario gave it).
pub(crate) fn read(path: &Path, shown: &str, topology: &TopologySpec) -> Result<Matrix, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read traffic matrix {shown}: {e}"))?;
    let file: SpatialFile = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{shown}: line {}, column {}: {e}; expected Parsimon's spatial JSON (matrix.inner, matrix.idx2name, pod2tors, nr_pods, nr_racks)",
            e.line(),
            e.column()
        )
    })?;
    let err = |field: &str, message: String| format!("{shown}: {field}: {message}");
    let n = file.matrix.idx2name.len();
    if n != file.nr_racks {
        return Err(err(
            "matrix.idx2name",
            format!("names {n} racks, but nr_racks is {}", file.nr_racks),
        ));
    }
    if file.pod2tors.len() != file.nr_pods {
        return Err(err(
            "pod2tors",
            format!(
                "lists {} pods, but nr_pods is {}",
                file.pod2tors.len(),
                file.nr_pods
            ),
        ));
    }
    let under = hosts_under(topology);
    let switch_of = rack_switches(&file, topology, &under, &err)?;
    let mut rows = Vec::new();
    for (i, from) in file.matrix.idx2name.iter().enumerate() {
        let &a = switch_of.get(from.as_str()).ok_or_else(|| {
            err(
                &format!("matrix.idx2name[{i}]"),
                format!("rack {from:?} is in no pod of pod2tors"),
            )
        })?;
        let row = file.matrix.inner.get(i).ok_or_else(|| {
            err(
                "matrix.inner",
                format!("has {} rows; expected {n}", file.matrix.inner.len()),
            )
        })?;
        if row.len() < n {
            return Err(err(
                &format!("matrix.inner[{i}]"),
                format!("has {} entries; expected {n}", row.len()),
            ));
        }
        for (j, &weight) in row.iter().enumerate() {
            if !(weight.is_finite() && weight >= 0.0) {
                return Err(err(
                    &format!("matrix.inner[{i}][{j}]"),
                    format!("must be a finite number >= 0, got {weight}"),
                ));
            }
            let Some(to) = file.matrix.idx2name.get(j) else {
                // Parsimon pads its matrices past the named racks with zeros.
                if weight > 0.0 {
                    return Err(err(
                        &format!("matrix.inner[{i}][{j}]"),
                        format!("is {weight}, but only {n} racks are named (matrix.idx2name)"),
                    ));
                }
                continue;
            };
            let &b = switch_of.get(to.as_str()).ok_or_else(|| {
                err(
                    &format!("matrix.idx2name[{j}]"),
                    format!("rack {to:?} is in no pod of pod2tors"),
                )
            })?;
            if a == b && weight > 0.0 && under[a as usize].len() < 2 {
                return Err(err(
                    &format!("matrix.inner[{i}][{j}]"),
                    format!("flows inside rack {from:?}, which has one host; a flow needs two"),
                ));
            }
            if weight > 0.0 {
                rows.push((under[a as usize].clone(), under[b as usize].clone(), weight));
            }
        }
    }
    if let Some((i, _)) = file
        .matrix
        .inner
        .iter()
        .enumerate()
        .skip(n)
        .find(|(_, r)| r.iter().any(|&w| w != 0.0))
    {
        return Err(err(
            &format!("matrix.inner[{i}]"),
            format!("has positive entries, but only {n} racks are named (matrix.idx2name)"),
        ));
    }
    Matrix::from_rows(rows).ok_or_else(|| err("matrix.inner", "no entry is positive".into()))
}

/// Each rack name of `file` -> the topology's switch of that rack (`under`: the hosts under
/// each switch).
fn rack_switches<'f>(
    file: &'f SpatialFile,
    topology: &TopologySpec,
    under: &[Vec<u32>],
    err: &impl Fn(&str, String) -> String,
) -> Result<HashMap<&'f str, u32>, String> {
    let n = file.matrix.idx2name.len();
    // The topology's racks: switches with hosts, in node order.
    let racks: Vec<u32> = (0..topology.nodes.len() as u32)
        .filter(|&s| topology.nodes[s as usize].kind == NodeKind::Switch)
        .filter(|&s| !under[s as usize].is_empty())
        .collect();
    // Each pod's block of racks: on a cluster, pod k's racks (a file's pod may list fewer
    // racks than the cluster's pods hold: its racks take the first of them, the others stay
    // idle, as Parsimon places them); elsewhere one block, the file's racks in order.
    let blocks: Vec<&[u32]> = match &topology.routing {
        RoutingKind::Cluster(shape) => {
            if shape.pods as usize != file.nr_pods {
                return Err(err(
                    "nr_pods",
                    format!(
                        "the file has {} pods, the cluster {}",
                        file.nr_pods, shape.pods
                    ),
                ));
            }
            racks.chunks(shape.racks_per_pod as usize).collect()
        }
        _ => {
            if racks.len() != n {
                return Err(err(
                    "nr_racks",
                    format!(
                        "the file has {n} racks, the topology {} (switches with hosts attached)",
                        racks.len()
                    ),
                ));
            }
            vec![&racks[..]]
        }
    };
    // Rack name -> the topology's rack switch.
    let mut switch_of: HashMap<&str, u32> = HashMap::with_capacity(n);
    let mut next = 0;
    for (pod, (name, list)) in file.pod2tors.iter().enumerate() {
        let (block, first) = if blocks.len() == 1 {
            (blocks[0], next)
        } else {
            (blocks[pod], 0)
        };
        if first + list.len() > block.len() {
            return Err(err(
                &format!("pod2tors.{name:?}"),
                format!(
                    "lists {} racks; the topology's pod has {}",
                    list.len(),
                    block.len() - first
                ),
            ));
        }
        for (i, rack) in list.iter().enumerate() {
            if switch_of.insert(rack, block[first + i]).is_some() {
                return Err(err(
                    &format!("pod2tors.{name:?}[{i}]"),
                    format!("rack {rack:?} is listed twice"),
                ));
            }
        }
        next += list.len();
    }
    Ok(switch_of)
}

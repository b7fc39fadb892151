//! A traffic matrix for the Poisson generator: `matrix = "FILE"` (CSV or Parquet with columns
//! `src`, `dst`, `weight`) gives each (source, destination) its share of the arrivals. Names
//! are hosts (a host-to-host matrix) or switches (rack-to-rack: a flow goes from a host under
//! the source switch to a host under the destination switch, each drawn uniformly).

use rand::{Rng, RngExt};
use rand_pcg::Pcg64Mcg;

use netstep_core::topology::{NodeKind, TopologySpec};

use crate::table_file::{RowAt, TableFile};

/// The hosts attached to each switch (by node index; empty for hosts and for switches without
/// hosts), in link order.
pub(crate) fn hosts_under(topology: &TopologySpec) -> Vec<Vec<u32>> {
    let mut under: Vec<Vec<u32>> = vec![Vec::new(); topology.nodes.len()];
    for link in &topology.links {
        for (host, switch) in [(link.a, link.b), (link.b, link.a)] {
            if topology.nodes[host as usize].kind == NodeKind::Host
                && topology.nodes[switch as usize].kind == NodeKind::Switch
            {
                under[switch as usize].push(host);
            }
        }
    }
    under
}

/// One matrix entry: the hosts at each end (one host each for a host pair).
struct Entry {
    from: Vec<u32>,
    to: Vec<u32>,
}

/// A traffic matrix, ready to draw from.
pub struct Matrix {
    entries: Vec<Entry>,
    /// Running sums of the weights.
    cumulative: Vec<f64>,
}

impl Matrix {
    /// Reads `file`; `names` maps node names to indices.
    pub fn read(
        file: &TableFile,
        names: &std::collections::HashMap<&str, u32>,
        topology: &TopologySpec,
    ) -> Result<Matrix, String> {
        let under = hosts_under(topology);
        let mut entries = Vec::new();
        let mut cumulative = Vec::new();
        let mut total = 0.0;
        let mut kinds: Option<NodeKind> = None;
        let columns = ["src", "dst", "weight"];
        file.for_each_row(&columns, &columns, |at: RowAt, cells| {
            let err = |column: &str, message: &str| file.error(at, column, message);
            let mut ends = Vec::with_capacity(2);
            for (i, column) in ["src", "dst"].into_iter().enumerate() {
                // A name (text), or in Parquet an integer column's node index (as flow files).
                let node = match &cells[i] {
                    crate::table_file::Cell::Int(n) => u32::try_from(*n)
                        .ok()
                        .filter(|&n| (n as usize) < topology.nodes.len())
                        .ok_or_else(|| err(column, &format!("node index {n} is not in the topology")))?,
                    cell => {
                        let name = cell
                            .text()
                            .map_err(|m| err(column, &m))?
                            .ok_or_else(|| err(column, "missing"))?;
                        *names
                            .get(name.as_ref())
                            .ok_or_else(|| err(column, &format!("unknown node {name:?}")))?
                    }
                };
                let name = &topology.nodes[node as usize].name;
                let kind = topology.nodes[node as usize].kind;
                match kinds {
                    None => kinds = Some(kind),
                    Some(k) if k != kind => {
                        return Err(err(
                            column,
                            &format!("{name:?} is a {}, but the matrix's first row names {}s; a matrix is host to host or switch (rack) to switch", kind.name(), k.name()),
                        ));
                    }
                    Some(_) => {}
                }
                let hosts = match kind {
                    NodeKind::Host => vec![node],
                    NodeKind::Switch if under[node as usize].is_empty() => {
                        return Err(err(column, &format!("no host is attached to {name:?}")));
                    }
                    NodeKind::Switch => under[node as usize].clone(),
                };
                ends.push(hosts);
            }
            let weight = cells[2]
                .number()
                .map_err(|m| err("weight", &m))?
                .ok_or_else(|| err("weight", "missing"))?;
            if !(weight >= 0.0 && weight.is_finite()) {
                return Err(err("weight", &format!("must be a finite number >= 0, got {weight}")));
            }
            let to = ends.pop().unwrap_or_default();
            let from = ends.pop().unwrap_or_default();
            if from.len() == 1 && from == to {
                return Err(err("dst", "the same host as src; a flow needs two hosts"));
            }
            if weight > 0.0 {
                total += weight;
                cumulative.push(total);
                entries.push(Entry { from, to });
            }
            Ok(())
        })?;
        if entries.is_empty() {
            return Err(format!("{}: no row has a positive weight", file.shown()));
        }
        Ok(Matrix {
            entries,
            cumulative,
        })
    }

    /// A matrix of `(source hosts, destination hosts, weight)` rows; rows of weight 0 are
    /// skipped; `None` when no row has a positive weight.
    pub(crate) fn from_rows(
        rows: impl IntoIterator<Item = (Vec<u32>, Vec<u32>, f64)>,
    ) -> Option<Matrix> {
        let mut entries = Vec::new();
        let mut cumulative = Vec::new();
        let mut total = 0.0;
        for (from, to, weight) in rows {
            if weight > 0.0 {
                total += weight;
                cumulative.push(total);
                entries.push(Entry { from, to });
            }
        }
        (!entries.is_empty()).then_some(Matrix {
            entries,
            cumulative,
        })
    }

    /// Every row as (source hosts, destination hosts, probability of the row).
    pub(crate) fn rows(&self) -> impl Iterator<Item = (&[u32], &[u32], f64)> {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        self.entries.iter().enumerate().map(move |(i, e)| {
            let below = if i == 0 { 0.0 } else { self.cumulative[i - 1] };
            (
                e.from.as_slice(),
                e.to.as_slice(),
                (self.cumulative[i] - below) / total,
            )
        })
    }

    /// Draws a (source, destination) pair of distinct hosts.
    pub fn draw(&self, rng: &mut Pcg64Mcg) -> (u32, u32) {
        let total = *self.cumulative.last().unwrap_or(&1.0);
        let u = rng.random::<f64>() * total;
        let i = self
            .cumulative
            .partition_point(|&c| c <= u)
            .min(self.entries.len() - 1);
        let entry = &self.entries[i];
        loop {
            let src = entry.from[(rng.next_u64() % entry.from.len() as u64) as usize];
            let dst = entry.to[(rng.next_u64() % entry.to.len() as u64) as usize];
            // Within one rack the two hosts must differ (a rack paired with itself has at least
            // two: one host paired with itself is refused when the matrix is read).
            if src != dst {
                return (src, dst);
            }
        }
    }
}

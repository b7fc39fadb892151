//! What several traffic kinds share: host lookups by name, input paths, random host pairs,
//! and the fields of blocks whose flows are all alike.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use netstep_core::flow::FlowSpec;
use netstep_core::topology::{NodeKind, TopologySpec};
use netstep_core::transport::TransportSpec;
use netstep_core::units::{Bytes, SimTime};
use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, optional_size, traffic_class};
use crate::transport::TransportTemplate;

/// Node index by name.
pub(crate) fn node_names(topology: &TopologySpec) -> HashMap<&str, u32> {
    topology
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect()
}

/// Host ids of `list` (names), distinct, every one a host.
pub(crate) fn host_list(
    list: &[String],
    names: &HashMap<&str, u32>,
    topology: &TopologySpec,
    path: &FieldPath,
) -> Result<Vec<u32>, Invalid> {
    let mut ids = Vec::with_capacity(list.len());
    let mut seen = std::collections::HashSet::with_capacity(list.len());
    for (i, name) in list.iter().enumerate() {
        let id = match names.get(name.as_str()) {
            Some(&n) if topology.nodes[n as usize].kind == NodeKind::Host => n,
            Some(_) => {
                return Err(Invalid::new(
                    path.index(i),
                    format!("{name:?} is a switch; expected a host"),
                ));
            }
            None => {
                return Err(Invalid::new(
                    path.index(i),
                    format!("unknown host {name:?}"),
                ));
            }
        };
        if !seen.insert(id) {
            return Err(Invalid::new(
                path.index(i),
                format!("{name:?} is listed twice; each host appears once"),
            ));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// A CDF (or other input) path: absolute as given, else relative to the scenario's folder
/// when it exists there, else as given (relative to the working directory).
pub(crate) fn resolve_cdf_path(cdf: &str, base_dir: Option<&Path>) -> std::path::PathBuf {
    let given = Path::new(cdf);
    if given.is_absolute() {
        return given.to_path_buf();
    }
    match base_dir.map(|d| d.join(given)) {
        Some(candidate) if candidate.exists() => candidate,
        _ => given.to_path_buf(),
    }
}

/// What every flow of a generated block shares: class, start, transport and size (the
/// fields `random_pairs`, `permutation`, `all_to_all` and `incast` have in common).
pub(crate) struct SameFlows {
    /// Traffic class.
    pub class: u8,
    /// Start time.
    pub start: SimTime,
    /// Transport.
    pub spec: Arc<TransportSpec>,
    /// Payload.
    pub bytes: Bytes,
}

impl SameFlows {
    /// Resolves the shared fields of block `path` with transport `template`.
    pub(crate) fn resolve(
        template: &TransportTemplate,
        class: Option<u8>,
        size: &Option<String>,
        packets: Option<u32>,
        start: &Option<String>,
        path: &FieldPath,
    ) -> Result<SameFlows, Invalid> {
        let class = traffic_class(class, &path.key("class"))?;
        let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
        let size = optional_size(size, path.key("size"))?;
        let (spec, bytes) = template.for_flow(size, packets, path)?;
        Ok(SameFlows {
            class,
            start,
            spec,
            bytes,
        })
    }

    /// One flow of the block from `src` to `dst` starting at `at`.
    pub(crate) fn flow(&self, src: u32, dst: u32, at: SimTime) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            start: at,
            size: self.bytes,
            transport: self.spec.clone(),
            path: None,
            class: self.class,
            after: None,
            ports: None,
        }
    }
}

/// Refuses random traffic on fewer than two hosts.
pub(crate) fn require_two_hosts(hosts: &[u32], path: &FieldPath) -> Result<(), Invalid> {
    if hosts.len() < 2 {
        return Err(Invalid::new(
            path.clone(),
            format!(
                "random traffic needs at least 2 hosts, the topology has {}",
                hosts.len()
            ),
        ));
    }
    Ok(())
}

/// A uniformly random ordered pair of distinct hosts.
pub(crate) fn random_pair(rng: &mut Pcg64Mcg, hosts: &[u32]) -> (u32, u32) {
    let n = hosts.len() as u64;
    let src = rng.next_u64() % n;
    let mut dst = rng.next_u64() % (n - 1);
    if dst >= src {
        dst += 1;
    }
    (hosts[src as usize], hosts[dst as usize])
}

/// Sum of the hosts' line rates, bits per second, in one pass over the links (a host of
/// several links counts each).
pub(crate) fn host_capacity_bps(topology: &TopologySpec) -> f64 {
    let is_host = |n: u32| topology.nodes[n as usize].kind == NodeKind::Host;
    topology
        .links
        .iter()
        .map(|l| {
            // A host's line rate is its own egress direction's.
            let rate = |class: u16| topology.classes[class as usize].rate.0 as f64;
            is_host(l.a) as u32 as f64 * rate(l.class)
                + is_host(l.b) as u32 as f64 * rate(l.class_ba)
        })
        .sum()
}

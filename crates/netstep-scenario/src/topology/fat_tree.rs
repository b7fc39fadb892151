//! `kind = "fat_tree"`: the k-ary FatTree (Al-Fares et al. 2008), routed by arithmetic.

use netstep_core::topology::{self, FatTree, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tiers;
use super::{Counts, MAX_K, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// k-ary FatTree. Example: `kind = "fat_tree"`, `k = 4`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FatTreeConfig {
    /// Switch radix: even, 2 to 256.
    ///
    /// Unit: integer · Default: required · Example: `k = 4`
    pub k: u32,
    /// Hosts per edge switch; at least 1.
    ///
    /// Unit: integer · Default: k/2 · Example: `hosts_per_edge = 4`
    pub hosts_per_edge: Option<u32>,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "10Gbps", delay = "1us" }`
    pub links: Option<LinkConfig>,
    /// Overrides of `links` for host-to-edge links, field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "25Gbps" }`
    pub host_links: Option<LinkConfig>,
    /// Overrides of `links` for switch-to-switch links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fabric_links = { buffer = "512KB" }`
    pub fabric_links: Option<LinkConfig>,
}

impl FatTreeConfig {
    /// `k`: even, between 2 and [`MAX_K`].
    fn k(&self) -> Result<u32, Invalid> {
        let k = self.k;
        if !k.is_multiple_of(2) || !(2..=MAX_K).contains(&k) {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "k"]),
                format!("must be an even number between 2 and {MAX_K}, got {k}"),
            ));
        }
        Ok(k)
    }

    /// Hosts per edge switch, at least one.
    fn hosts_per_edge(&self, k: u32) -> Result<u32, Invalid> {
        at_least_one(self.hosts_per_edge.unwrap_or(k / 2), "hosts_per_edge")
    }
}

impl TopologyKind for FatTreeConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let k = self.k()?;
        let hosts_per_edge = self.hosts_per_edge(k)?;
        let shape = FatTree { k, hosts_per_edge };
        if (shape.n_edge() as u64) * hosts_per_edge as u64 > u32::MAX as u64 / 2 {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "hosts_per_edge"]),
                format!("{hosts_per_edge} hosts per edge is too many for k = {k}"),
            ));
        }
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        Ok(topology::fat_tree(shape, host, fabric))
    }

    fn counts(&self) -> Counts {
        let s = |a: u64, b: u64| a.saturating_mul(b);
        let k = self.k as u64;
        let hpe = self.hosts_per_edge.map_or(k / 2, u64::from);
        let edges = s(k, k) / 2;
        let hosts = s(edges, hpe);
        let switches = edges * 2 + s(k, k) / 4;
        let fabric = s(s(k, k), k) / 2;
        Counts {
            nodes: hosts.saturating_add(switches),
            ports: s(hosts.saturating_add(fabric), 2),
            degree: (hpe.saturating_add(k / 2)).max(k),
            field: if self.hosts_per_edge.is_some() {
                "hosts_per_edge"
            } else {
                "k"
            },
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        let k = self.k()?;
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        let edges = (k as u64) * (k as u64) / 2;
        let per_edge = self.hosts_per_edge(k)? as u64;
        Ok(Some((edges * per_edge, vec![host, fabric])))
    }
}

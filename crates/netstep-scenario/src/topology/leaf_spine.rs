//! `kind = "leaf_spine"`: leaves with hosts, every leaf linked to every spine, routed by
//! arithmetic.

use netstep_core::topology::{self, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tiers;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::Invalid;

/// Leaf-spine. Example: `kind = "leaf_spine"`, `leaves = 4`, `spines = 2`, `hosts_per_leaf = 8`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct LeafSpineConfig {
    /// Leaf switches; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `leaves = 4`
    pub leaves: u32,
    /// Spine switches; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `spines = 2`
    pub spines: u32,
    /// Hosts per leaf; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `hosts_per_leaf = 8`
    pub hosts_per_leaf: u32,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "10Gbps", delay = "1us" }`
    pub links: Option<LinkConfig>,
    /// Overrides of `links` for host-to-leaf links, field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "25Gbps" }`
    pub host_links: Option<LinkConfig>,
    /// Overrides of `links` for leaf-to-spine links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fabric_links = { buffer = "512KB" }`
    pub fabric_links: Option<LinkConfig>,
}

impl TopologyKind for LeafSpineConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        Ok(topology::leaf_spine(
            at_least_one(self.leaves, "leaves")?,
            at_least_one(self.spines, "spines")?,
            at_least_one(self.hosts_per_leaf, "hosts_per_leaf")?,
            host,
            fabric,
        ))
    }

    fn counts(&self) -> Counts {
        let s = |a: u64, b: u64| a.saturating_mul(b);
        let (l, sp, h) = (
            self.leaves as u64,
            self.spines as u64,
            self.hosts_per_leaf as u64,
        );
        let biggest = if l >= sp && l >= h {
            "leaves"
        } else if sp >= h {
            "spines"
        } else {
            "hosts_per_leaf"
        };
        Counts {
            nodes: s(l, h).saturating_add(l).saturating_add(sp),
            ports: s(s(l, h).saturating_add(s(l, sp)), 2),
            degree: h.saturating_add(sp).max(l),
            field: biggest,
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        at_least_one(self.leaves, "leaves")?;
        at_least_one(self.spines, "spines")?;
        at_least_one(self.hosts_per_leaf, "hosts_per_leaf")?;
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        Ok(Some((
            self.leaves as u64 * self.hosts_per_leaf as u64,
            vec![host, fabric],
        )))
    }
}

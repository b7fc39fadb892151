//! `kind = "dumbbell"`: `left` hosts — switch — bottleneck — switch — `right` hosts.

use netstep_core::topology::{self, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tiers;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::Invalid;

/// Dumbbell: `left` hosts — switch — bottleneck — switch — `right` hosts. Example:
/// `kind = "dumbbell"`, `left = 2`, `right = 2`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct DumbbellConfig {
    /// Hosts on the left; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `left = 8`
    pub left: u32,
    /// Hosts on the right; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `right = 8`
    pub right: u32,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "10Gbps", delay = "1us" }`
    pub links: Option<LinkConfig>,
    /// Overrides of `links` for host links, field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "10Gbps" }`
    pub host_links: Option<LinkConfig>,
    /// Overrides of `links` for the bottleneck link between the two switches, field by field.
    ///
    /// Unit: table · Default: none · Example:
    /// `fabric_links = { rate = "1Gbps", buffer = "100pkts" }`
    pub fabric_links: Option<LinkConfig>,
}

impl TopologyKind for DumbbellConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        Ok(topology::dumbbell(
            at_least_one(self.left, "left")?,
            at_least_one(self.right, "right")?,
            host,
            fabric,
        ))
    }

    fn counts(&self) -> Counts {
        let (l, r) = (self.left as u64, self.right as u64);
        Counts {
            nodes: l + r + 2,
            ports: (l + r + 1) * 2,
            degree: l.max(r) + 1,
            field: if l >= r { "left" } else { "right" },
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        let hosts =
            at_least_one(self.left, "left")? as u64 + at_least_one(self.right, "right")? as u64;
        Ok(Some((hosts, vec![host, fabric])))
    }
}

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
    /// Hosts on the left (>= 1).
    pub left: u32,
    /// Hosts on the right (>= 1).
    pub right: u32,
    /// Defaults for every link.
    pub links: Option<LinkConfig>,
    /// Overrides for host links.
    pub host_links: Option<LinkConfig>,
    /// Overrides for the bottleneck link.
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

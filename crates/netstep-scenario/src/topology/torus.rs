//! `kind = "torus"`: a 2D or 3D torus of switches with hosts, dimension-order routing.

use netstep_core::topology::{self, LinkClass, TopologySpec, Torus};
use serde::{Deserialize, Serialize};

use super::links::tiers;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// 2D or 3D torus with dimension-order routing. Example: `kind = "torus"`,
/// `dims = [4, 4]`, `hosts_per_switch = 1`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TorusConfig {
    /// Ring sizes: 2 or 3 dimensions, each at least 2.
    ///
    /// Unit: list of integers · Default: required · Example: `dims = [4, 4]`
    pub dims: Vec<u32>,
    /// Hosts per switch; at least 1.
    ///
    /// Unit: integer · Default: 1 · Example: `hosts_per_switch = 2`
    pub hosts_per_switch: Option<u32>,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "10Gbps", delay = "1us" }`
    pub links: Option<LinkConfig>,
    /// Overrides of `links` for host-to-switch links, field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "25Gbps" }`
    pub host_links: Option<LinkConfig>,
    /// Overrides of `links` for switch-to-switch links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fabric_links = { delay = "500ns" }`
    pub fabric_links: Option<LinkConfig>,
}

impl TorusConfig {
    /// Checks `dims` and `hosts_per_switch` (sizes are bounded by the node limit, checked
    /// before this from the counts).
    fn shape(&self) -> Result<Torus, Invalid> {
        let dims = &self.dims;
        if !(2..=3).contains(&dims.len()) {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "dims"]),
                format!(
                    "a torus has 2 or 3 dimensions (e.g. [4, 4] or [4, 4, 4]), got {}",
                    dims.len()
                ),
            ));
        }
        if let Some(&n) = dims.iter().find(|&&n| n < 2) {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "dims"]),
                format!("every ring has at least 2 switches, got {n}"),
            ));
        }
        Ok(Torus {
            dims: dims.to_vec(),
            hosts_per_switch: at_least_one(self.hosts_per_switch.unwrap_or(1), "hosts_per_switch")?,
        })
    }
}

impl TopologyKind for TorusConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let shape = self.shape()?;
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        Ok(topology::torus(shape, host, fabric))
    }

    fn counts(&self) -> Counts {
        let s = |a: u64, b: u64| a.saturating_mul(b);
        let switches = self.dims.iter().fold(1u64, |acc, &n| s(acc, n as u64));
        let h = self.hosts_per_switch.map_or(1, u64::from);
        let fabric: u64 = self
            .dims
            .iter()
            .map(|&n| if n >= 3 { switches } else { switches / 2 })
            .fold(0u64, u64::saturating_add);
        Counts {
            nodes: s(switches, h).saturating_add(switches),
            ports: s(s(switches, h).saturating_add(fabric), 2),
            degree: h.saturating_add(2 * self.dims.len() as u64),
            field: if h > switches {
                "hosts_per_switch"
            } else {
                "dims"
            },
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        let shape = self.shape()?;
        let (host, fabric) = tiers(&self.links, &self.host_links, &self.fabric_links)?;
        let switches = shape.dims.iter().map(|&n| n as u64).product::<u64>();
        Ok(Some((
            switches * shape.hosts_per_switch as u64,
            vec![host, fabric],
        )))
    }
}

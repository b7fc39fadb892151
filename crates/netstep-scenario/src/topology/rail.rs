//! `kind = "rail_optimized"`: the rail-optimized AI-cluster fabric
//! (`netstep_core::topology::rail`): servers of GPUs on an NVSwitch, one rail leaf per GPU
//! index, spines over the rails.

use netstep_core::topology::{self, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tier_class;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// Rail-optimized AI-cluster fabric. Example: `kind = "rail_optimized"`, `servers = 16`,
/// `gpus = 8`, `spines = 4`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RailConfig {
    /// Servers; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `servers = 16`
    pub servers: u32,
    /// GPUs per server, one rail each; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `gpus = 8`
    pub gpus: u32,
    /// Spines over the rail leaves; 0: none, and then cross-rail traffic needs `pxn = true`
    /// (with more than one GPU per server, else nothing connects the rails).
    ///
    /// Unit: integer · Default: required · Example: `spines = 4`
    pub spines: u32,
    /// Cross-rail traffic goes over NVLink to the server's NIC on the destination's rail first,
    /// then along that rail (NCCL's PXN); false: over a spine.
    ///
    /// Unit: bool · Default: false · Example: `pxn = true`
    pub pxn: Option<bool>,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "10Gbps", delay = "1us" }`
    pub links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for GPU-to-NIC links (PCIe), field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "400Gbps" }`
    pub host_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for NIC-to-NVSwitch links (the intra-server fabric), field by
    /// field.
    ///
    /// Unit: table · Default: none · Example: `nvlink_links = { rate = "3600Gbps" }`
    pub nvlink_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for NIC-to-rail-leaf links, field by field.
    ///
    /// Unit: table · Default: none · Example: `rail_links = { rate = "400Gbps" }`
    pub rail_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for rail-leaf-to-spine links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fabric_links = { rate = "800Gbps" }`
    pub fabric_links: Option<Box<LinkConfig>>,
}

impl TopologyKind for RailConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let class = |tier: &Option<Box<LinkConfig>>, field: &str| tier_class(&self.links, tier, field);
        let pxn = self.pxn.unwrap_or(false);
        if self.spines == 0 && !pxn && self.gpus > 1 {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "spines"]),
                "with no spines the rails are not connected: give spines, or pxn = true to cross rails over NVLink",
            ));
        }
        Ok(topology::rail(
            topology::Rail {
                servers: at_least_one(self.servers, "servers")?,
                gpus: at_least_one(self.gpus, "gpus")?,
                spines: self.spines,
                pxn,
            },
            topology::RailLinks {
                host: class(&self.host_links, "host_links")?,
                nvlink: class(&self.nvlink_links, "nvlink_links")?,
                rail: class(&self.rail_links, "rail_links")?,
                fabric: class(&self.fabric_links, "fabric_links")?,
            },
        ))
    }

    fn counts(&self) -> Counts {
        let s = |a: u64, b: u64| a.saturating_mul(b);
        let (sv, g, p) = (self.servers as u64, self.gpus as u64, self.spines as u64);
        let h = s(sv, g);
        Counts {
            nodes: s(h, 2)
                .saturating_add(sv)
                .saturating_add(g)
                .saturating_add(p),
            ports: s(s(h, 3).saturating_add(s(g, p)), 2),
            degree: sv.saturating_add(p).max(g).max(3),
            field: if sv >= g { "servers" } else { "gpus" },
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        // Its classes come from the same code that builds it (a few nodes suffice).
        let small = RailConfig {
            servers: 1,
            ..self.clone()
        };
        let spec = small.build()?;
        at_least_one(self.servers, "servers")?;
        Ok(Some((self.servers as u64 * self.gpus as u64, spec.classes)))
    }
}

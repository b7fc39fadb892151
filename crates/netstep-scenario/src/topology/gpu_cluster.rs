//! `kind = "gpu_cluster"`: AI-cluster fabrics of the shapes SimAI's topology generator writes
//! (`netstep_core::topology::gpu_cluster`): rail-optimized single ToR (Spectrum-X), dual ToR
//! and dual plane (AlibabaHPN), and DCN+ with one or two ToRs, so a sweep can vary the GPU
//! count without SimAI's generator.

use netstep_core::topology::{self, GpuShape, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tier_class;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// An AI cluster of SimAI's generator's shapes. Example: `kind = "gpu_cluster"`,
/// `shape = "rail_single_tor"`, `gpus = 128`, `psws = 8`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GpuClusterConfig {
    /// `rail_single_tor` (Spectrum-X: one ASW per rail per segment of `gpus_per_server x
    /// nics_per_switch` GPUs), `rail_dual_tor` (AlibabaHPN: two ASWs per rail, one plane),
    /// `rail_dual_plane` (AlibabaHPN dual plane: each ASW set on its own half of the PSWs),
    /// `dcn` (DCN+: `nics_per_switch` consecutive GPUs per ASW) or `dcn_dual_tor`.
    ///
    /// Unit: name · Default: required · Example: `shape = "rail_dual_plane"`
    pub shape: Shape,
    /// GPUs (hosts `gpu0`, `gpu1`, ...; each a host of several ports: its NVLink, then a NIC
    /// link per ASW set); at least 1.
    ///
    /// Unit: integer · Default: required · Example: `gpus = 1024`
    pub gpus: u32,
    /// GPUs per server (one NVSwitch each); divides `gpus`.
    ///
    /// Unit: integer · Default: 8 · Example: `gpus_per_server = 8`
    pub gpus_per_server: Option<u32>,
    /// GPU NICs per ASW (SimAI's `nics_per_aswitch`).
    ///
    /// Unit: integer · Default: 64 · Example: `nics_per_switch = 128`
    pub nics_per_switch: Option<u32>,
    /// Pod switches (PSWs) over the ASWs; even for `rail_dual_plane`.
    ///
    /// Unit: integer · Default: required · Example: `psws = 8`
    pub psws: u32,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "400Gbps", delay = "500ns" }`
    pub links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for GPU-to-NVSwitch links (each GPU's port 0), field by field.
    ///
    /// Unit: table · Default: none · Example: `nvlink_links = { rate = "2880Gbps", delay = "25ns" }`
    pub nvlink_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for GPU-to-ASW links (a GPU's NIC ports, one per ASW set), field
    /// by field.
    ///
    /// Unit: table · Default: none · Example: `nic_links = { rate = "200Gbps" }`
    pub nic_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for ASW-to-PSW links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fabric_links = { rate = "400Gbps" }`
    pub fabric_links: Option<Box<LinkConfig>>,
}

/// The shapes, by their names in scenario files.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Shape {
    /// Spectrum-X.
    RailSingleTor,
    /// AlibabaHPN, one plane.
    RailDualTor,
    /// AlibabaHPN, dual plane.
    RailDualPlane,
    /// DCN+.
    Dcn,
    /// DCN+ with two ToRs.
    DcnDualTor,
}

impl GpuClusterConfig {
    fn shape(&self) -> topology::GpuCluster {
        topology::GpuCluster {
            gpus: self.gpus,
            gpus_per_server: self.gpus_per_server.unwrap_or(8),
            nics_per_switch: self.nics_per_switch.unwrap_or(64),
            psws: self.psws,
            shape: match self.shape {
                Shape::RailSingleTor => GpuShape::RailSingleTor,
                Shape::RailDualTor => GpuShape::RailDualTor,
                Shape::RailDualPlane => GpuShape::RailDualPlane,
                Shape::Dcn => GpuShape::Dcn,
                Shape::DcnDualTor => GpuShape::DcnDualTor,
            },
        }
    }

    fn checked(&self) -> Result<topology::GpuCluster, Invalid> {
        at_least_one(self.gpus, "gpus")?;
        let shape = self.shape();
        shape
            .check()
            .map_err(|(field, m)| Invalid::new(FieldPath::of(&["topology", field]), m))?;
        Ok(shape)
    }
}

impl TopologyKind for GpuClusterConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let class = |tier: &Option<Box<LinkConfig>>, field: &str| tier_class(&self.links, tier, field);
        let shape = self.checked()?;
        Ok(topology::gpu_cluster(
            shape,
            topology::GpuClusterLinks {
                nvlink: class(&self.nvlink_links, "nvlink_links")?,
                nic: class(&self.nic_links, "nic_links")?,
                fabric: class(&self.fabric_links, "fabric_links")?,
            },
        ))
    }

    fn counts(&self) -> Counts {
        let shape = self.shape();
        let ok = shape.check().is_ok();
        let per_set = if ok { shape.asws_per_set() as u64 } else { 0 };
        Counts {
            nodes: if ok { shape.node_count() } else { 0 },
            ports: if ok { 2 * shape.link_count() } else { 0 },
            degree: (self.psws as u64)
                .max(per_set * 2)
                .max(shape.nics_per_switch as u64 + self.psws as u64)
                .max(shape.gpus_per_server as u64),
            field: "gpus",
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        let per_server = self.gpus_per_server.unwrap_or(8).max(1);
        let small = GpuClusterConfig {
            gpus: per_server,
            psws: if self.shape == Shape::RailDualPlane { 2 } else { 1 },
            ..self.clone()
        };
        self.checked()?;
        let spec = small.build()?;
        Ok(Some((self.gpus as u64, spec.classes)))
    }

    /// A GPU's ports: its NVLink (class 0), then a NIC link (class 1) per ASW set.
    fn host_rate_bps(&self, classes: &[LinkClass]) -> f64 {
        let sets = if self.shape().shape.dual() { 2.0 } else { 1.0 };
        let rate = |i: usize| classes.get(i).map_or(0.0, |c| c.rate.0 as f64);
        rate(0) + sets * rate(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netstep_core::topology::NodeKind;

    /// The line rate `netstep validate` takes by arithmetic is the built GPUs' (NVLink and
    /// every NIC port), so its flow counts for a `load` are the run's.
    #[test]
    fn host_rate_by_arithmetic_equals_the_built_gpus() {
        for shape in ["rail_single_tor", "rail_dual_plane", "dcn_dual_tor"] {
            let text = format!(
                "shape = \"{shape}\"\ngpus = 16\npsws = 2\nlinks = {{ rate = \"400Gbps\" }}\nnvlink_links = {{ rate = \"2880Gbps\" }}"
            );
            let config: GpuClusterConfig = toml::from_str(&text).unwrap();
            let (gpus, classes) = config.arithmetic().unwrap().unwrap();
            let built = config.build().unwrap();
            let host = |n: u32| built.nodes[n as usize].kind == NodeKind::Host;
            let rate = |class: u16| built.classes[class as usize].rate.0 as f64;
            let capacity: f64 = built
                .links
                .iter()
                .map(|l| {
                    host(l.a) as u8 as f64 * rate(l.class) + host(l.b) as u8 as f64 * rate(l.class_ba)
                })
                .sum();
            assert_eq!(config.host_rate_bps(&classes), capacity / gpus as f64, "{shape}");
        }
    }
}

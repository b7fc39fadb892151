//! AI-cluster fabrics of the shapes SimAI's topology generator writes
//! (`astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py`, SimAI `f5efb5a`): servers of
//! GPUs on an NVSwitch, GPU NICs on access switches (ASWs), every ASW (or, dual plane, every
//! ASW of one plane) to every pod switch (PSW).
//!
//! - [`GpuShape::RailSingleTor`] (Spectrum-X): segments of `gpus_per_server · nics_per_switch`
//!   GPUs, one ASW per rail per segment; GPU `i` on ASW `(i / (gps·npa))·gps + i mod gps`.
//! - [`GpuShape::RailDualTor`] (AlibabaHPN, single plane): two such ASW sets; GPU `i` on the
//!   same-numbered ASW of each; every ASW to every PSW.
//! - [`GpuShape::RailDualPlane`] (AlibabaHPN, dual plane): as dual ToR, but set 1 connects to
//!   the first half of the PSWs and set 2 to the second half.
//! - [`GpuShape::Dcn`] (DCN+): not rail-optimized; GPU `i` on ASW `i / npa`.
//! - [`GpuShape::DcnDualTor`]: DCN+ with two ASW sets, GPU `i` on ASW `i / npa` of each.
//!
//! A GPU `gpu<i>` is a host of several ports, as in SimAI: port 0 its NVLink to its server's
//! NVSwitch, then its NIC link to each ASW set (each port with its own NIC). Nodes: GPUs,
//! NVSwitches `nvs<s>`, ASWs (`asw<k>`, or `asw<set>_<k>` with two sets), PSWs `psw<p>`, in
//! the order of SimAI's node ids. Routed by shortest paths with ECMP (never through a host)
//! that take the NVSwitch where it ties with an ASW ([`PathRules`]), as SimAI's routing does.

use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, PathRules, RoutingKind, TopologySpec};

/// Which of SimAI's generator shapes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GpuShape {
    /// Rail-optimized, one ToR per rail (Spectrum-X).
    RailSingleTor,
    /// Rail-optimized, two ToRs per rail, one plane (AlibabaHPN).
    RailDualTor,
    /// Rail-optimized, two ToRs per rail, each set on its own plane of PSWs (AlibabaHPN).
    RailDualPlane,
    /// Not rail-optimized, one ToR (DCN+).
    Dcn,
    /// Not rail-optimized, two ToRs (DCN+ dual ToR).
    DcnDualTor,
}

impl GpuShape {
    /// Every GPU has a NIC link to each of two ASW sets.
    pub fn dual(self) -> bool {
        !matches!(self, GpuShape::RailSingleTor | GpuShape::Dcn)
    }
}

/// The shape of a GPU cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuCluster {
    /// GPUs.
    pub gpus: u32,
    /// GPUs per server.
    pub gpus_per_server: u32,
    /// GPU NICs per ASW (the generator's `nics_per_aswitch`).
    pub nics_per_switch: u32,
    /// Pod switches.
    pub psws: u32,
    /// The shape.
    pub shape: GpuShape,
}

/// The link classes of a GPU cluster.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GpuClusterLinks {
    /// GPU to its server's NVSwitch.
    pub nvlink: LinkClass,
    /// GPU to an ASW (its NIC port).
    pub nic: LinkClass,
    /// ASW to PSW.
    pub fabric: LinkClass,
}

impl GpuCluster {
    /// ASWs per set.
    pub fn asws_per_set(&self) -> u32 {
        let (g, gps, npa) = (self.gpus, self.gpus_per_server, self.nics_per_switch);
        match self.shape {
            GpuShape::Dcn | GpuShape::DcnDualTor => g.div_ceil(npa),
            _ => g.div_ceil(gps * npa) * gps,
        }
    }

    /// The ASW (index within its set) of GPU `i`.
    fn asw_of(&self, i: u32) -> u32 {
        let (gps, npa) = (self.gpus_per_server, self.nics_per_switch);
        match self.shape {
            GpuShape::Dcn | GpuShape::DcnDualTor => i / npa,
            _ => (i / (gps * npa)) * gps + i % gps,
        }
    }

    /// Checks the shape; the message names the field at fault.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.gpus_per_server == 0 || !self.gpus.is_multiple_of(self.gpus_per_server) {
            return Err((
                "gpus_per_server",
                format!("must divide the {} GPUs", self.gpus),
            ));
        }
        if self.nics_per_switch == 0 {
            return Err(("nics_per_switch", "must be at least 1".into()));
        }
        if self.psws == 0 || (self.shape == GpuShape::RailDualPlane && !self.psws.is_multiple_of(2))
        {
            return Err((
                "psws",
                "must be at least 1 (and even for dual plane: half per plane)".into(),
            ));
        }
        Ok(())
    }

    /// Nodes: GPUs, NVSwitches, ASWs, PSWs.
    pub fn node_count(&self) -> u64 {
        let sets = if self.shape.dual() { 2 } else { 1 };
        self.gpus as u64
            + (self.gpus / self.gpus_per_server.max(1)) as u64
            + sets * self.asws_per_set() as u64
            + self.psws as u64
    }

    /// Links (each with a port at both ends).
    pub fn link_count(&self) -> u64 {
        let sets = if self.shape.dual() { 2 } else { 1 };
        let asws = sets * self.asws_per_set() as u64;
        let fabric = match self.shape {
            GpuShape::RailDualPlane => asws * (self.psws / 2) as u64,
            _ => asws * self.psws as u64,
        };
        self.gpus as u64 * (1 + sets) + fabric
    }
}

/// Builds the cluster (`classes` = NVLink, NIC, fabric links).
pub fn gpu_cluster(shape: GpuCluster, links: GpuClusterLinks) -> TopologySpec {
    let g = shape.gpus;
    let servers = g / shape.gpus_per_server.max(1);
    let per_set = shape.asws_per_set();
    let sets = if shape.shape.dual() { 2 } else { 1 };
    let node = |kind, name: String| NodeSpec { kind, name };
    let mut nodes = Vec::with_capacity(shape.node_count() as usize);
    nodes.extend((0..g).map(|i| node(NodeKind::Host, format!("gpu{i}"))));
    nodes.extend((0..servers).map(|s| node(NodeKind::Switch, format!("nvs{s}"))));
    for set in 0..sets {
        nodes.extend((0..per_set).map(|k| {
            let name = if sets == 1 {
                format!("asw{k}")
            } else {
                format!("asw{}_{k}", set + 1)
            };
            node(NodeKind::Switch, name)
        }));
    }
    nodes.extend((0..shape.psws).map(|p| node(NodeKind::Switch, format!("psw{p}"))));
    let (nvs, asw) = (g, g + servers);
    let psw = asw + sets * per_set;
    let link = |a: u32, b: u32, class: u16| LinkSpec {
        a,
        b,
        class,
        class_ba: class,
    };
    let mut list = Vec::with_capacity(shape.link_count() as usize);
    list.extend((0..g).map(|i| link(i, nvs + i / shape.gpus_per_server, 0)));
    for set in 0..sets {
        list.extend((0..g).map(|i| link(i, asw + set * per_set + shape.asw_of(i), 1)));
    }
    let half = shape.psws / 2;
    for set in 0..sets {
        let psws = match shape.shape {
            GpuShape::RailDualPlane => set * half..(set + 1) * half,
            _ => 0..shape.psws,
        };
        for k in 0..per_set {
            list.extend(
                psws.clone()
                    .map(|p| link(asw + set * per_set + k, psw + p, 2)),
            );
        }
    }
    TopologySpec {
        nodes,
        links: list,
        classes: vec![links.nvlink, links.nic, links.fabric],
        // A route takes the NVSwitch where it ties with an ASW (DCN+: two GPUs of a server on
        // one ASW), as SimAI's routing does; no route passes through a GPU (a host).
        routing: RoutingKind::ShortestPathRules(Box::new(PathRules {
            no_transit: Vec::new(),
            prefer: (nvs..nvs + servers).collect(),
        })),
    }
}

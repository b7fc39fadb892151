//! A rail-optimized fabric as AI clusters build it: servers of G GPUs; GPU `g` of every server
//! has its NIC on the leaf of rail `g`; spines over the rail leaves; inside a server an
//! NVSwitch links the GPUs.
//!
//! Hosts keep one attachment: a GPU (host `h<s·G+g>`) hangs off its NIC (`nic<s>_<g>`, a switch
//! with three ports: the GPU, the server's NVSwitch `nvs<s>`, the rail leaf `rail<g>`). Routed
//! by arithmetic ([`RailRouter`]): within a server over NVLink; to the same GPU index on another
//! server up the NIC's rail leaf and down again (never past a spine); across rails either over
//! the spines or, with `pxn` (NCCL's PXN), first over NVLink to the server's GPU on the
//! destination's rail, then along that rail.
//!
//! Node numbering: GPUs `[0, H)` with `H = servers·G`, then the NICs `[H, 2H)` in the same
//! order, then the NVSwitches, the rail leaves, the spines. Local ports: a GPU's only port 0;
//! a NIC's ports 0 (GPU), 1 (NVSwitch), 2 (rail leaf); NVSwitch `s`'s port `g` to NIC
//! `(s, g)`; rail leaf `g`'s port `s` to NIC `(s, g)`, then the spines; spine `p`'s port `g` to
//! rail leaf `g`.

use super::fat_tree::FastDiv;
use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// The shape of a rail-optimized fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rail {
    /// Servers.
    pub servers: u32,
    /// GPUs (and rails) per server.
    pub gpus: u32,
    /// Spine switches over the rail leaves (0: rails are not connected to each other, and
    /// cross-rail traffic needs `pxn`).
    pub spines: u32,
    /// Cross-rail traffic goes over NVLink to the destination's rail first (NCCL's PXN)
    /// instead of over the spines.
    pub pxn: bool,
}

/// Rail-optimized routing with the shape's constants precomputed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RailRouter {
    shape: Rail,
    hosts: u32,
    per_server: FastDiv,
}

/// Local ports of a NIC.
const NIC_GPU: u32 = 0;
const NIC_NVLINK: u32 = 1;
const NIC_RAIL: u32 = 2;

impl RailRouter {
    /// Precomputes the router of `shape`.
    pub fn new(shape: Rail) -> RailRouter {
        RailRouter {
            shape,
            hosts: shape.servers * shape.gpus,
            per_server: FastDiv::new(shape.gpus.max(1)),
        }
    }

    /// The egress port at `node` towards host `dst` for a packet with ECMP hash `hash`
    /// (`None` when `dst` is not a host).
    #[inline]
    pub fn next_port(&self, node: u32, dst: u32, hash: u64) -> Option<u32> {
        let (first, count) = self.next_hops(node, dst)?;
        Some(super::ecmp_pick(first, count, hash))
    }

    /// The next hops at `node` towards host `dst` as `(first local port, count)` (`None` when
    /// `dst` is not a host, or when cross-rail traffic has neither spines nor `pxn`).
    #[inline]
    pub fn next_hops(&self, node: u32, dst: u32) -> Option<(u32, u32)> {
        if dst >= self.hosts {
            return None;
        }
        let Rail {
            servers,
            gpus,
            spines,
            pxn,
        } = self.shape;
        let h = self.hosts;
        let dst_server = self.per_server.div(dst);
        let dst_gpu = dst - dst_server * gpus;
        if node < h {
            return Some((0, 1));
        }
        if node < 2 * h {
            let me = node - h;
            let server = self.per_server.div(me);
            let gpu = me - server * gpus;
            let port = if me == dst {
                NIC_GPU
            } else if server == dst_server {
                NIC_NVLINK
            } else if gpu == dst_gpu {
                NIC_RAIL
            } else if pxn {
                NIC_NVLINK
            } else if spines > 0 {
                NIC_RAIL
            } else {
                return None;
            };
            return Some((port, 1));
        }
        let nvswitches = 2 * h;
        if node < nvswitches + servers {
            // Towards the NIC of the destination's GPU index on this server.
            return Some((dst_gpu, 1));
        }
        let rails = nvswitches + servers;
        if node < rails + gpus {
            let rail = node - rails;
            return if rail == dst_gpu {
                Some((dst_server, 1))
            } else if spines > 0 {
                Some((servers, spines))
            } else {
                None
            };
        }
        // A spine: down to the destination's rail.
        Some((dst_gpu, 1))
    }
}

/// The link classes of a rail-optimized fabric, by index in [`rail`]'s `classes`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RailLinks {
    /// GPU to its NIC.
    pub host: LinkClass,
    /// NIC to the server's NVSwitch.
    pub nvlink: LinkClass,
    /// NIC to its rail leaf.
    pub rail: LinkClass,
    /// Rail leaf to spine.
    pub fabric: LinkClass,
}

/// Builds a rail-optimized fabric (`classes` = host, NVLink, rail, fabric links).
pub fn rail(shape: Rail, links: RailLinks) -> TopologySpec {
    let Rail {
        servers,
        gpus,
        spines,
        ..
    } = shape;
    let h = servers * gpus;
    let mut nodes = Vec::with_capacity((2 * h + servers + gpus + spines) as usize);
    let node = |kind, name: String| NodeSpec { kind, name };
    nodes.extend((0..h).map(|i| node(NodeKind::Host, format!("h{i}"))));
    nodes.extend((0..h).map(|i| node(NodeKind::Switch, format!("nic{}_{}", i / gpus, i % gpus))));
    nodes.extend((0..servers).map(|s| node(NodeKind::Switch, format!("nvs{s}"))));
    nodes.extend((0..gpus).map(|g| node(NodeKind::Switch, format!("rail{g}"))));
    nodes.extend((0..spines).map(|p| node(NodeKind::Switch, format!("spine{p}"))));
    let (nic, nvs, rail_leaf, spine) = (h, 2 * h, 2 * h + servers, 2 * h + servers + gpus);
    let link = |a: u32, b: u32, class: u16| LinkSpec {
        a,
        b,
        class,
        class_ba: class,
    };
    // The order fixes every node's port numbers (see the module docs).
    let mut list = Vec::with_capacity((3 * h + gpus * spines) as usize);
    list.extend((0..h).map(|i| link(i, nic + i, 0)));
    list.extend((0..h).map(|i| link(nic + i, nvs + i / gpus, 1)));
    list.extend((0..h).map(|i| link(nic + i, rail_leaf + i % gpus, 2)));
    for g in 0..gpus {
        list.extend((0..spines).map(|p| link(rail_leaf + g, spine + p, 3)));
    }
    TopologySpec {
        nodes,
        links: list,
        classes: vec![links.host, links.nvlink, links.rail, links.fabric],
        routing: RoutingKind::Rail(shape),
    }
}

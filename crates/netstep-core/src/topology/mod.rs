//! Topologies: generators that produce a [`TopologySpec`] (nodes, links in port order, and the
//! routing that fits them). The spec is what the scenario crate spawns into the World and what
//! [`crate::network::Network::compile`] turns into dense port tables.

mod cluster;
mod dumbbell;
mod fat_tree;
mod gpu_cluster;
mod leaf_spine;
mod rail;
#[cfg(test)]
pub(crate) mod same_routes;
mod torus;

pub use cluster::{Cluster, ClusterLinks, ClusterRouter, cluster};
pub use dumbbell::dumbbell;
pub(crate) use fat_tree::FastDiv;
pub use fat_tree::{FatTree, FatTreeRouter, fat_tree, pick};
pub use gpu_cluster::{GpuCluster, GpuClusterLinks, GpuShape, gpu_cluster};
pub use leaf_spine::{LeafSpine, LeafSpineRouter, leaf_spine};
pub use rail::{Rail, RailLinks, RailRouter, rail};
pub use torus::{Torus, TorusRouter, torus};

use crate::units::{BitsPerSec, BufferSize, SimTime};

/// Host or switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NodeKind {
    /// An end host: runs transports, has network interfaces, never forwards.
    Host,
    /// A switch: forwards packets between its ports.
    Switch,
}

impl NodeKind {
    /// The name used in traces.
    pub const fn name(self) -> &'static str {
        match self {
            NodeKind::Host => "host",
            NodeKind::Switch => "switch",
        }
    }
}

/// Rate, propagation delay and egress buffer of a link (the same in both directions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LinkClass {
    /// Line rate.
    pub rate: BitsPerSec,
    /// Propagation delay.
    pub delay: SimTime,
    /// Egress buffer at each end.
    pub buffer: BufferSize,
    /// Random loss on the wire, parts per million of packets (0 = lossless).
    pub loss_ppm: u32,
    /// The egress queue discipline at each end. An empty FIFO, strict-priority or DRR queue
    /// is skipped by a packet for an idle transmitter (its decision is known); the others
    /// are created with the port's first packet and consulted for every packet.
    pub scheduler: crate::queue::SchedulerSpec,
    /// Active queue management at each end (FIFO ports only).
    pub aqm: crate::queue::AqmSpec,
    /// Token-bucket shaper at each end (packets wait in the queue until they conform).
    pub shaper: Option<crate::shaping::TokenBucketSpec>,
    /// trTCM policer at each end (red packets dropped on arrival).
    pub policer: Option<crate::shaping::TrTcmSpec>,
}

impl LinkClass {
    /// A lossless FIFO link with tail drop: no AQM, shaper or policer.
    pub const fn new(rate: BitsPerSec, delay: SimTime, buffer: BufferSize) -> LinkClass {
        LinkClass {
            rate,
            delay,
            buffer,
            loss_ppm: 0,
            scheduler: crate::queue::SchedulerSpec::Fifo,
            aqm: crate::queue::AqmSpec::None,
            shaper: None,
            policer: None,
        }
    }
}

/// One node of a topology.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeSpec {
    /// Host or switch.
    pub kind: NodeKind,
    /// Display name (unique within the topology).
    pub name: String,
}

/// A bidirectional link between two nodes. Each end gets an egress port; a node's ports are
/// numbered in the order its links appear in [`TopologySpec::links`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkSpec {
    /// One end (node index).
    pub a: u32,
    /// Other end (node index).
    pub b: u32,
    /// Parameters of the `a -> b` direction (`a`'s egress port): index into
    /// [`TopologySpec::classes`].
    pub class: u16,
    /// Parameters of the `b -> a` direction (`b`'s egress port); equal to `class` for a
    /// symmetric link.
    pub class_ba: u16,
}

/// The one of `count` equal-cost ports from `first` that ECMP hash `hash` picks
/// (`hash mod count`, in port order: what shortest-path ECMP picks).
#[inline]
pub(crate) fn ecmp_pick(first: u32, count: u32, hash: u64) -> u32 {
    if count == 1 {
        first
    } else {
        first + (hash % count as u64) as u32
    }
}

/// How packets find their way: arithmetic for the regular topologies, shortest-path ECMP
/// tables for anything else.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoutingKind {
    /// FatTree address arithmetic (no tables); see [`FatTree`].
    FatTree(FatTree),
    /// Leaf-spine arithmetic (no tables); see [`LeafSpine`].
    LeafSpine(LeafSpine),
    /// Rail-optimized arithmetic (no tables); see [`Rail`].
    Rail(Rail),
    /// Pods, racks, fabs and planes of spines, by arithmetic (no tables); see [`Cluster`].
    Cluster(Cluster),
    /// Dimension-order routing on a torus; see [`Torus`].
    Torus(Box<TorusRouter>),
    /// Shortest paths with ECMP, tables built per destination attachment node.
    ShortestPath,
    /// Shortest paths with ECMP under [`PathRules`]: some switches carry only their own
    /// hosts' traffic, some are preferred among equal-cost next hops.
    ShortestPathRules(Box<PathRules>),
}

/// Rules on shortest paths ([`RoutingKind::ShortestPathRules`]).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct PathRules {
    /// Switches no route passes through: they carry only the traffic of the hosts attached to
    /// them (a GPU's NIC holding its NVLink and network links).
    pub no_transit: Vec<u32>,
    /// Switches preferred among equal-cost next hops: where one of the next hops is one of
    /// them, only those are used (SimAI's routing prefers an NVSwitch next hop).
    pub prefer: Vec<u32>,
}

/// A whole topology, ready to spawn or compile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TopologySpec {
    /// Nodes, indexed by node id.
    pub nodes: Vec<NodeSpec>,
    /// Links in port order.
    pub links: Vec<LinkSpec>,
    /// Link classes referenced by `links`.
    pub classes: Vec<LinkClass>,
    /// Routing that fits this topology.
    pub routing: RoutingKind,
}

impl TopologySpec {
    /// Node index by name (linear search; used for scenario validation, not on hot paths).
    pub fn node_by_name(&self, name: &str) -> Option<u32> {
        self.nodes
            .iter()
            .position(|n| n.name == name)
            .map(|i| i as u32)
    }
    /// Indices of all hosts, ascending.
    pub fn hosts(&self) -> Vec<u32> {
        (0..self.nodes.len() as u32)
            .filter(|&i| self.nodes[i as usize].kind == NodeKind::Host)
            .collect()
    }
}

//! The compiled network: dense, read-only port tables (struct of arrays) and routing. Built
//! once from a [`TopologySpec`]; shared by every logical process during the run.
//!
//! Memory: per egress port 8 bytes here (peer node + peer's local port + link class) and nothing else until the
//! port first carries a packet (its dynamic state lives in the owning LP, allocated lazily).

mod shortest_path;

pub use shortest_path::{DENSE_BUDGET_BYTES, ShortestPathTables};

use crate::topology::{
    ClusterRouter, FatTree, FatTreeRouter, LeafSpineRouter, LinkClass, LinkSpec, NodeKind,
    RailRouter, RoutingKind, TopologySpec,
};
use crate::units::{BitsPerSec, Bytes, SimTime};

/// Errors found while compiling a topology.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NetworkError {
    /// A link joins a node to itself.
    #[error("link {link} connects node {node:?} to itself")]
    SelfLoop {
        /// Link index.
        link: usize,
        /// Node name.
        node: String,
    },
    /// A link names a node index that does not exist.
    #[error("link {link} names node index {node}, but there are only {n_nodes} nodes")]
    NoSuchNode {
        /// Link index.
        link: usize,
        /// Offending node index.
        node: u32,
        /// Node count.
        n_nodes: usize,
    },
    /// A host with no link, or with several under a routing that is not shortest paths.
    #[error(
        "host {host:?} has {links} links; a host needs one link (several only under shortest-path routing: custom and imported topologies, gpu_cluster)"
    )]
    HostDegree {
        /// Host name.
        host: String,
        /// Its link count.
        links: usize,
    },
    /// A node with more ports than a packet's `ingress` field can name.
    #[error("node {node:?} has {ports} links; a node may have at most {max} (MAX_PORTS_PER_NODE)", max = MAX_PORTS_PER_NODE)]
    TooManyPorts {
        /// Node name.
        node: String,
        /// Its link count.
        ports: usize,
    },
    /// A link class with a zero rate.
    #[error("link class {class} has rate 0; rates must be positive")]
    ZeroRate {
        /// Class index.
        class: usize,
    },
}

/// The most ports one node may have (a packet's `ingress` is a 16-bit local port index, with
/// `u16::MAX` meaning "at its source").
pub const MAX_PORTS_PER_NODE: u32 = u16::MAX as u32 - 1;

/// Routing state: arithmetic for FatTrees, distance tables for everything else.
#[derive(Clone, Debug)]
pub enum Routing {
    /// FatTree address arithmetic.
    FatTree(FatTreeRouter),
    /// Leaf-spine arithmetic.
    LeafSpine(LeafSpineRouter),
    /// Rail-optimized arithmetic.
    Rail(RailRouter),
    /// Cluster (pods, racks, fabs, planes of spines) arithmetic.
    Cluster(ClusterRouter),
    /// Shortest-path ECMP over per-destination-attachment distance tables.
    ShortestPath(ShortestPathTables),
    /// Dimension-order routing on a torus (one path, no choice).
    Torus(Box<crate::topology::TorusRouter>),
}

/// The compiled, read-only network.
#[derive(Clone, Debug)]
pub struct Network {
    /// Host or switch, per node.
    pub node_kind: Vec<NodeKind>,
    /// Ports of node `n` are `port_offset[n]..port_offset[n + 1]` (global port ids).
    pub port_offset: Vec<u32>,
    /// Node at the far end of each egress port.
    pub port_peer: Vec<u32>,
    /// Local index, at the far end, of the port that the packets of each egress port enter
    /// (the receiving node's port on the same link): a packet's `ingress` there.
    pub port_peer_local: Vec<u16>,
    /// Link class of each egress port.
    pub port_class: Vec<u16>,
    /// Link classes.
    pub classes: Vec<LinkClass>,
    /// Routing.
    pub routing: Routing,
    /// Per node: no shortest path passes through it ([`crate::topology::PathRules`]; empty:
    /// none is marked).
    pub no_transit: Vec<bool>,
    /// Per node: preferred among equal-cost next hops (empty: none is).
    pub prefer: Vec<bool>,
    /// Per link class: picoseconds per byte when that is a whole number (most rates), so
    /// serialization is one multiplication instead of a 128-bit division.
    ps_per_byte: Vec<Option<u64>>,
    /// Per link class whose rate takes no whole number of picoseconds per byte: that number
    /// as a reduced fraction `num / den` (2,880 Gb/s: 25 / 9), so serialization is a
    /// multiplication and a division by a constant done as a multiplication.
    ps_fraction: Vec<Option<PsFraction>>,
    /// Per link class: whose ports of that class may skip an empty queue ([`SKIP_AT_SWITCH`],
    /// [`SKIP_AT_HOST`]), from [`Network::compile_shortcut`].
    skip_empty: Vec<u8>,
}

/// [`Network::skips_empty_queue`]: a switch's port of the class may skip its empty queue.
const SKIP_AT_SWITCH: u8 = 1;
/// [`Network::skips_empty_queue`]: a host's port of the class may skip its empty queue.
const SKIP_AT_HOST: u8 = 2;
/// [`Network::skips_counting`]: a switch's port of the class may skip its empty queue once
/// PFC's ingress accounting has counted the packet.
const SKIP_COUNTING: u8 = 4;

/// The empty-queue shortcut's eligibility per link class, the one place that decides it: a
/// port may hand a packet that finds its transmitter idle and its queue empty straight to the
/// transmitter when its discipline, empty, passes a packet through unchanged
/// ([`crate::queue::Queue::passes_when_empty`]) and no policer or shaper stands in the way;
/// at a host, also no NIC shaper (`nic_shaper`, which replaces the class's). With dynamic PFC
/// thresholds (`count_every_lossless`) a switch's port skips only after the ingress
/// accounting has counted the packet (the HPCC simulator's MMU charges every packet on
/// arrival): [`SKIP_COUNTING`] instead of [`SKIP_AT_SWITCH`]. `off`: no port skips (tests
/// compare the shortcut with the queue element's path).
fn shortcut_table(
    classes: &[LinkClass],
    nic_shaper: bool,
    count_every_lossless: bool,
    off: bool,
) -> Vec<u8> {
    classes
        .iter()
        .map(|c| {
            let passes = !off
                && crate::queue::Queue::for_port(&c.scheduler, &c.aqm).passes_when_empty()
                && c.shaper.is_none()
                && c.policer.is_none();
            if !passes {
                return 0;
            }
            let switch = if count_every_lossless {
                SKIP_COUNTING
            } else {
                SKIP_AT_SWITCH
            };
            if nic_shaper {
                switch
            } else {
                switch | SKIP_AT_HOST
            }
        })
        .collect()
}

/// A second's picoseconds per byte as a reduced fraction `num / den`, for a rate that takes
/// no whole number of them ([`Network::serialization`]).
#[derive(Clone, Copy, Debug)]
struct PsFraction {
    num: u64,
    den: crate::topology::FastDiv,
    /// The largest size whose `size num + den - 1` fits 32 bits (the division's domain).
    max_size: u64,
}

/// A byte's bits times a second's picoseconds: picoseconds per byte are this over the rate.
const PS_BITS_PER_BYTE: u64 = 8 * 1_000_000_000_000;

/// [`PsFraction`] of `rate`, when its denominator fits 32 bits.
fn ps_fraction(rate: BitsPerSec) -> Option<PsFraction> {
    let gcd = {
        let (mut a, mut b) = (PS_BITS_PER_BYTE, rate.0);
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    let den = u32::try_from(rate.0 / gcd).ok().filter(|&d| d > 1)?;
    let num = PS_BITS_PER_BYTE / gcd;
    Some(PsFraction {
        num,
        den: crate::topology::FastDiv::new(den),
        max_size: (u32::MAX as u64 - (den as u64 - 1)) / num,
    })
}

impl Network {
    /// Compiles a topology into port tables and routing.
    pub fn compile(spec: &TopologySpec) -> Result<Network, NetworkError> {
        let kinds: Vec<NodeKind> = spec.nodes.iter().map(|n| n.kind).collect();
        Network::compile_parts(
            kinds,
            |n| spec.nodes[n as usize].name.clone(),
            &spec.links,
            &spec.classes,
            &spec.routing,
        )
    }

    /// Compiles a topology given as its parts: each node's kind (by node index), a node's
    /// name on demand (for error messages only), the links, their classes and the routing.
    pub fn compile_parts(
        node_kind: Vec<NodeKind>,
        name: impl Fn(u32) -> String,
        links: &[LinkSpec],
        classes: &[LinkClass],
        routing: &RoutingKind,
    ) -> Result<Network, NetworkError> {
        let n_nodes = node_kind.len();
        for (class, c) in classes.iter().enumerate() {
            if c.rate.0 == 0 {
                return Err(NetworkError::ZeroRate { class });
            }
        }
        let mut degree = vec![0u32; n_nodes + 1];
        for (i, link) in links.iter().enumerate() {
            for node in [link.a, link.b] {
                if node as usize >= n_nodes {
                    return Err(NetworkError::NoSuchNode {
                        link: i,
                        node,
                        n_nodes,
                    });
                }
            }
            if link.a == link.b {
                return Err(NetworkError::SelfLoop {
                    link: i,
                    node: name(link.a),
                });
            }
            degree[link.a as usize] += 1;
            degree[link.b as usize] += 1;
        }
        for (n, &kind) in node_kind.iter().enumerate() {
            if degree[n] > MAX_PORTS_PER_NODE {
                return Err(NetworkError::TooManyPorts {
                    node: name(n as u32),
                    ports: degree[n] as usize,
                });
            }
            let shortest = matches!(
                routing,
                RoutingKind::ShortestPath | RoutingKind::ShortestPathRules(_)
            );
            if kind == NodeKind::Host && (degree[n] == 0 || (degree[n] > 1 && !shortest)) {
                return Err(NetworkError::HostDegree {
                    host: name(n as u32),
                    links: degree[n] as usize,
                });
            }
        }
        let mut port_offset = Vec::with_capacity(n_nodes + 1);
        let mut total = 0u32;
        for d in &degree[..n_nodes] {
            port_offset.push(total);
            total += d;
        }
        port_offset.push(total);
        let mut fill = port_offset.clone();
        let mut port_peer = vec![0u32; total as usize];
        let mut port_class = vec![0u16; total as usize];
        let mut port_peer_local = vec![0u16; total as usize];
        for link in links {
            let pa = fill[link.a as usize];
            let pb = fill[link.b as usize];
            fill[link.a as usize] += 1;
            fill[link.b as usize] += 1;
            for (p, to, far, class) in [
                (pa, link.b, pb, link.class),
                (pb, link.a, pa, link.class_ba),
            ] {
                port_peer[p as usize] = to;
                port_class[p as usize] = class;
                port_peer_local[p as usize] = (far - port_offset[to as usize]) as u16;
            }
        }
        let mut network = Network {
            node_kind,
            port_offset,
            port_peer,
            port_peer_local,
            port_class,
            classes: classes.to_vec(),
            no_transit: Vec::new(),
            prefer: Vec::new(),
            routing: Routing::FatTree(FatTreeRouter::new(FatTree {
                k: 2,
                hosts_per_edge: 1,
            })),
            ps_per_byte: classes
                .iter()
                .map(|c| {
                    PS_BITS_PER_BYTE
                        .is_multiple_of(c.rate.0)
                        .then(|| PS_BITS_PER_BYTE / c.rate.0)
                })
                .collect(),
            ps_fraction: classes.iter().map(|c| ps_fraction(c.rate)).collect(),
            skip_empty: shortcut_table(classes, false, false, false),
        };
        network.routing = match routing {
            RoutingKind::FatTree(shape) => Routing::FatTree(FatTreeRouter::new(*shape)),
            RoutingKind::LeafSpine(shape) => Routing::LeafSpine(LeafSpineRouter::new(*shape)),
            RoutingKind::Rail(shape) => Routing::Rail(RailRouter::new(*shape)),
            RoutingKind::Cluster(shape) => Routing::Cluster(ClusterRouter::new(*shape)),
            RoutingKind::ShortestPath => {
                Routing::ShortestPath(ShortestPathTables::build(&network, &[]))
            }
            RoutingKind::ShortestPathRules(rules) => {
                let mark = |list: &[u32]| {
                    let mut v = vec![false; n_nodes];
                    list.iter()
                        .filter(|&&n| (n as usize) < n_nodes)
                        .for_each(|&n| v[n as usize] = true);
                    v
                };
                network.no_transit = mark(&rules.no_transit);
                network.prefer = if rules.prefer.is_empty() {
                    Vec::new()
                } else {
                    mark(&rules.prefer)
                };
                Routing::ShortestPath(ShortestPathTables::build(&network, &[]))
            }
            RoutingKind::Torus(router) => Routing::Torus(router.clone()),
        };
        Ok(network)
    }

    /// Number of nodes (= logical processes).
    pub fn n_nodes(&self) -> usize {
        self.node_kind.len()
    }
    /// Number of egress ports.
    pub fn n_ports(&self) -> usize {
        self.port_peer.len()
    }
    /// Number of ports at `node`.
    #[inline]
    pub fn degree(&self, node: u32) -> u32 {
        self.port_offset[node as usize + 1] - self.port_offset[node as usize]
    }
    /// Global id of local port `local` at `node`.
    #[inline]
    pub fn port_id(&self, node: u32, local: u32) -> u32 {
        self.port_offset[node as usize] + local
    }
    /// Link class of a global port.
    #[inline]
    pub fn class_of(&self, port: u32) -> &LinkClass {
        &self.classes[self.port_class[port as usize] as usize]
    }
    /// Decides, per link class, which ports may skip an empty queue, given the element
    /// settings beyond the classes: whether hosts have a NIC shaper (`nic_shaper`) and whether
    /// PFC's dynamic thresholds count every lossless packet (`count_every_lossless`); `off`:
    /// none skips, every packet goes through the queue element (for tests that compare the
    /// two paths). Compiled with none of these; the setup system
    /// [`crate::world::compile_elements`] calls it once with the model's settings.
    pub fn compile_shortcut(&mut self, nic_shaper: bool, count_every_lossless: bool, off: bool) {
        self.skip_empty = shortcut_table(&self.classes, nic_shaper, count_every_lossless, off);
    }
    /// Whether switch port `port` (global) may skip its empty queue once PFC's ingress
    /// accounting has counted the packet (dynamic thresholds).
    #[inline]
    pub fn skips_counting(&self, port: u32) -> bool {
        self.skip_empty[self.port_class[port as usize] as usize] & SKIP_COUNTING != 0
    }
    /// Whether global port `port` (of a host when `host`) may hand a packet that finds its
    /// transmitter idle, its queue empty and its class unpaused straight to the transmitter,
    /// skipping the queue element (every stage would pass it through unchanged).
    #[inline]
    pub fn skips_empty_queue(&self, port: u32, host: bool) -> bool {
        let owner = if host { SKIP_AT_HOST } else { SKIP_AT_SWITCH };
        self.skip_empty[self.port_class[port as usize] as usize] & owner != 0
    }
    /// Serialization time of `size_bytes` on global port `port`.
    #[inline]
    pub fn serialization(&self, port: u32, size_bytes: u32) -> SimTime {
        let class = self.port_class[port as usize] as usize;
        match self.ps_per_byte[class] {
            Some(ps) if let Some(t) = ps.checked_mul(size_bytes as u64) => SimTime(t),
            _ => self.divide_serialization(class, size_bytes),
        }
    }

    /// [`Network::serialization`] at a rate of no whole number of picoseconds per byte (out
    /// of line: the common path stays small where it is inlined).
    #[inline(never)]
    fn divide_serialization(&self, class: usize, size_bytes: u32) -> SimTime {
        if let Some(f) = self.ps_fraction[class]
            && size_bytes as u64 <= f.max_size
        {
            // ceil(size num / den) as floor((size num + den - 1) / den), within 32 bits.
            let bits = size_bytes as u64 * f.num + (f.den.divisor() as u64 - 1);
            return SimTime(f.den.div(bits as u32) as u64);
        }
        self.classes[class]
            .rate
            .serialization(Bytes(size_bytes as u64))
    }

    /// The local port at `node` whose link leads to `peer`, if any.
    pub fn port_towards(&self, node: u32, peer: u32) -> Option<u32> {
        let start = self.port_offset[node as usize];
        (0..self.degree(node)).find(|&l| self.port_peer[(start + l) as usize] == peer)
    }

    /// The local port at `node` that ECMP routing picks for a packet to host `dst` with flow
    /// hash `hash`; `None` if `dst` is unreachable from `node`.
    #[inline]
    pub fn route(&self, node: u32, dst: u32, hash: u64) -> Option<u32> {
        match &self.routing {
            Routing::FatTree(router) => Some(router.next_port(node, dst, hash)),
            Routing::LeafSpine(router) => router.next_port(node, dst, hash),
            Routing::Rail(router) => router.next_port(node, dst, hash),
            Routing::Cluster(router) => router.next_port(node, dst, hash),
            Routing::ShortestPath(tables) => tables.next_port(self, node, dst, hash),
            Routing::Torus(router) => Some(router.next_port(node, dst)),
        }
    }

    /// Appends to `out` the equal-cost next hops (local ports, ascending) at `node` towards
    /// host `dst`, among which [`Network::route`] picks by hash; nothing if there is no route.
    pub fn next_hops(&self, node: u32, dst: u32, out: &mut Vec<u32>) {
        match &self.routing {
            Routing::FatTree(router) => {
                let (first, count) = router.next_hops(node, dst);
                out.extend(first..first + count);
            }
            Routing::LeafSpine(router) => {
                if let Some((first, count)) = router.next_hops(node, dst) {
                    out.extend(first..first + count);
                }
            }
            Routing::Rail(router) => {
                if let Some((first, count)) = router.next_hops(node, dst) {
                    out.extend(first..first + count);
                }
            }
            Routing::Cluster(router) => {
                if let Some((first, count)) = router.next_hops(node, dst) {
                    out.extend(first..first + count);
                }
            }
            Routing::ShortestPath(tables) => tables.next_hops(self, node, dst, out),
            Routing::Torus(router) => out.push(router.next_port(node, dst)),
        }
    }

    /// True when no route passes through `node` ([`crate::topology::PathRules::no_transit`]).
    #[inline]
    pub fn is_end_switch(&self, node: u32) -> bool {
        self.no_transit.get(node as usize).copied().unwrap_or(false)
    }

    /// True when local port `l` of `node` leads to a preferred switch.
    #[inline]
    fn leads_to_preferred(&self, node: u32, l: u32) -> bool {
        let v = self.port_peer[(self.port_offset[node as usize] + l) as usize];
        self.prefer.get(v as usize).copied().unwrap_or(false)
    }

    /// The smallest lookahead over all links for packets of at least `min_packet` bytes:
    /// propagation + serialization of the smallest packet.
    pub fn lookahead(&self, min_packet: Bytes) -> SimTime {
        self.classes
            .iter()
            .map(|c| c.delay + c.rate.serialization(min_packet))
            .min()
            .unwrap_or(SimTime::MAX)
    }
}

/// Mixes a flow id, a packet kind and a node into an ECMP hash (splitmix64 finalizer), so the
/// choice is deterministic and independent across switches.
#[inline]
pub fn ecmp_hash(flow: u32, reverse: bool, node: u32) -> u64 {
    crate::rng::mix64(
        ((flow as u64) << 33 | (reverse as u64) << 32 | node as u64)
            .wrapping_add(0x9e37_79b9_7f4a_7c15),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FatTree, fat_tree, leaf_spine};
    use crate::units::{BitsPerSec, BufferSize};

    fn class() -> LinkClass {
        LinkClass::new(
            BitsPerSec(1_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        )
    }

    /// Walks routing from `src` to `dst` and returns the nodes visited.
    fn walk(net: &Network, src: u32, dst: u32, flow: u32) -> Vec<u32> {
        let mut path = vec![src];
        let mut node = src;
        while node != dst {
            let local = net
                .route(node, dst, ecmp_hash(flow, false, node))
                .expect("route");
            node = net.port_peer[net.port_id(node, local) as usize];
            path.push(node);
            assert!(path.len() < 16, "routing loop {path:?}");
        }
        path
    }

    #[test]
    fn fat_tree_routes_reach_every_host_on_shortest_paths() {
        let shape = FatTree {
            k: 4,
            hosts_per_edge: 2,
        };
        let net = Network::compile(&fat_tree(shape, class(), class())).unwrap();
        assert_eq!(net.n_nodes(), 16 + 8 + 8 + 4);
        for src in 0..16 {
            for dst in 0..16 {
                if src == dst {
                    continue;
                }
                let path = walk(&net, src, dst, src * 16 + dst);
                let expected = if src / 2 == dst / 2 {
                    3
                } else if src / 4 == dst / 4 {
                    5
                } else {
                    7
                };
                assert_eq!(path.len(), expected, "{src}->{dst}: {path:?}");
            }
        }
    }

    #[test]
    fn ecmp_spreads_flows_over_uplinks() {
        let shape = FatTree {
            k: 8,
            hosts_per_edge: 4,
        };
        let net = Network::compile(&fat_tree(shape, class(), class())).unwrap();
        let mut cores = std::collections::BTreeSet::new();
        for flow in 0..200 {
            let path = walk(&net, 0, 127, flow);
            cores.insert(path[3]);
        }
        assert_eq!(cores.len(), 16, "all 16 cores used");
    }

    #[test]
    fn leaf_spine_routes_over_two_or_four_hops() {
        let net = Network::compile(&leaf_spine(4, 3, 2, class(), class())).unwrap();
        assert!(matches!(net.routing, Routing::LeafSpine(_)));
        assert_eq!(walk(&net, 0, 1, 1).len(), 3);
        assert_eq!(walk(&net, 0, 7, 1).len(), 5);
    }

    /// The leaf-spine arithmetic picks exactly what shortest-path ECMP over the same links
    /// picks, at every node, for every destination and many hashes, and lists the same next
    /// hops in the same order (so every leaf-spine run is unchanged by it).
    #[test]
    fn leaf_spine_arithmetic_equals_shortest_path_ecmp() {
        for (leaves, spines, per_leaf) in [(4, 3, 2), (5, 1, 3), (2, 7, 1), (6, 4, 5)] {
            let arithmetic = leaf_spine(leaves, spines, per_leaf, class(), class());
            crate::topology::same_routes::assert_arithmetic_equals_shortest_path(&arithmetic, 40);
        }
    }

    /// A host of several links compiles under shortest-path routing only (the arithmetic
    /// routers assume hosts of one port); a host of none never does.
    #[test]
    fn hosts_of_several_links_need_shortest_path_routing() {
        let mut spec = leaf_spine(2, 1, 2, class(), class());
        // Host 0 (on leaf 0) also to leaf 1.
        let leaf1 = spec.nodes.iter().position(|n| n.name == "leaf1").unwrap() as u32;
        spec.links.push(LinkSpec {
            a: 0,
            b: leaf1,
            class: 0,
            class_ba: 0,
        });
        let refused = Network::compile(&spec).unwrap_err();
        assert!(
            matches!(&refused, NetworkError::HostDegree { links: 2, .. }),
            "{refused}"
        );
        spec.routing = RoutingKind::ShortestPath;
        let net = Network::compile(&spec).unwrap();
        assert_eq!(net.degree(0), 2);
        spec.links.retain(|l| l.a != 1 && l.b != 1);
        let lonely = Network::compile(&spec).unwrap_err();
        assert!(
            matches!(&lonely, NetworkError::HostDegree { links: 0, .. }),
            "{lonely}"
        );
    }

    /// The port tables' serialization (a multiplication per whole picoseconds per byte, a
    /// reduced fraction otherwise) equals the rate's own, which divides.
    #[test]
    fn serialization_by_the_tables_equals_the_rate_s_division() {
        let rates = [
            2_880_000_000_000, // 25 / 9 ps per byte
            10_000_000_000,
            3_000_000_000,
            7,
            3_840, // 6.25e9 / 3 ps per byte: a product past 2^64 must not wrap into range
            1_000_000_007,
            u32::MAX as u64 * 3,
            800_000_000_000_000,
        ];
        let classes: Vec<LinkClass> = rates
            .iter()
            .map(|&r| LinkClass {
                rate: BitsPerSec(r),
                ..class()
            })
            .collect();
        // Host i on a link of class i to the switch.
        let n = classes.len() as u32;
        let spec = TopologySpec {
            nodes: (0..=n)
                .map(|i| crate::topology::NodeSpec {
                    kind: if i < n {
                        NodeKind::Host
                    } else {
                        NodeKind::Switch
                    },
                    name: format!("n{i}"),
                })
                .collect(),
            links: (0..n)
                .map(|i| LinkSpec {
                    a: i,
                    b: n,
                    class: i as u16,
                    class_ba: i as u16,
                })
                .collect(),
            classes: classes.clone(),
            routing: RoutingKind::ShortestPath,
        };
        let net = Network::compile(&spec).unwrap();
        let sizes = (0..3_000u32).chain([9_000, 65_535, 1 << 20, 1 << 30, 2_951_479_052, u32::MAX]);
        for (class, c) in classes.iter().enumerate() {
            for size in sizes.clone() {
                assert_eq!(
                    net.serialization(net.port_id(class as u32, 0), size),
                    c.rate.serialization(Bytes(size as u64)),
                    "{} b/s, {size} B",
                    c.rate.0
                );
            }
        }
        assert!(net.ps_fraction[0].is_some_and(|f| f.num == 25 && f.den.divisor() == 9));
    }

    /// The shortcut's eligibility, decided once per class: the discipline, the class's
    /// policer and shaper, a host's NIC shaper, and dynamic PFC.
    #[test]
    fn the_empty_queue_shortcut_is_decided_once_per_class_and_owner() {
        let plain = class();
        let mut wrr = class();
        wrr.scheduler = crate::queue::SchedulerSpec::Wrr { weights: [1; 8] };
        let mut shaped = class();
        shaped.shaper = Some(crate::shaping::TokenBucketSpec {
            rate: BitsPerSec(1_000_000),
            burst: crate::units::Bytes(1500),
        });
        // Host 0 on class 0, host 1 on class 1, host 2 on class 2, all to switch 3.
        let spec = TopologySpec {
            nodes: (0..4)
                .map(|i| crate::topology::NodeSpec {
                    kind: if i < 3 {
                        NodeKind::Host
                    } else {
                        NodeKind::Switch
                    },
                    name: format!("n{i}"),
                })
                .collect(),
            links: (0..3)
                .map(|i| LinkSpec {
                    a: i,
                    b: 3,
                    class: i as u16,
                    class_ba: i as u16,
                })
                .collect(),
            classes: vec![plain, wrr, shaped],
            routing: RoutingKind::ShortestPath,
        };
        let mut net = Network::compile(&spec).unwrap();
        // (host port, switch port) of each class.
        let skips = |net: &Network| -> Vec<(bool, bool)> {
            (0..3)
                .map(|i| {
                    let host = net.port_id(i, 0);
                    let switch = net.port_id(3, i);
                    (
                        net.skips_empty_queue(host, true),
                        net.skips_empty_queue(switch, false),
                    )
                })
                .collect()
        };
        assert_eq!(
            skips(&net),
            vec![(true, true), (false, false), (false, false)]
        );
        net.compile_shortcut(true, false, false);
        assert_eq!(
            skips(&net),
            vec![(false, true), (false, false), (false, false)]
        );
        net.compile_shortcut(false, true, false);
        assert_eq!(
            skips(&net),
            vec![(true, false), (false, false), (false, false)]
        );
        assert!(net.skips_counting(net.port_id(3, 0)));
        assert!(!net.skips_counting(net.port_id(3, 1)));
        net.compile_shortcut(false, false, true);
        assert_eq!(skips(&net), vec![(false, false); 3]);
        assert!(!net.skips_counting(net.port_id(3, 0)));
        net.compile_shortcut(false, false, false);
        assert_eq!(
            skips(&net),
            vec![(true, true), (false, false), (false, false)]
        );
    }
}

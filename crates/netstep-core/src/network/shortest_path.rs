//! Shortest-path ECMP routing for custom and imported topologies: BFS distance tables per
//! host attachment node (per host, for a host of several ports) and, when it fits [`DENSE_BUDGET_BYTES`], a dense next-hop table
//! compiled from them, so that a packet's route is two loads and a modulo ([`NextHopTable`]).
//! The distance tables stay the fallback (and serve the failure epochs, which filter dead
//! ports); both give the same next hops in the same (ascending local port) order.

use std::collections::VecDeque;

use super::Network;
use crate::topology::NodeKind;

/// The most memory the dense next-hop table may take (4 B per node and attachment node plus
/// 2 B per next hop); a topology needing more routes through the distance tables alone.
pub const DENSE_BUDGET_BYTES: usize = 256 << 20;

/// Distances (in hops) from every node to every host attachment node, computed by BFS that
/// never transits a host. One table per attachment switch, not per host; a host of several
/// ports has a table of its own, rooted at itself, so that the nearest of its attachments
/// decides a route's last hop, and a route from it leaves by the ports nearest the
/// destination.
#[derive(Clone, Debug)]
pub struct ShortestPathTables {
    /// For each host: index into `attach_nodes`; `u32::MAX` for switches.
    host_attach: Vec<u32>,
    /// The distinct attachment nodes.
    attach_nodes: Vec<u32>,
    /// `dist[a * n_nodes + v]`: hops from `v` to attachment node `a`; `u16::MAX` if unreachable.
    dist: Vec<u16>,
    n_nodes: usize,
    /// The compiled next hops; `None` when over budget or built for a failure epoch.
    dense: Option<NextHopTable>,
}

/// Every node's equal-cost next hops towards every attachment node, as contiguous slices of
/// one array (compressed rows): what [`ShortestPathTables::next_port`] would compute by
/// scanning a node's ports, looked up instead.
#[derive(Clone, Debug)]
struct NextHopTable {
    /// `start[a * n_nodes + v]..start[a * n_nodes + v + 1]`: the slice of `hops` holding the
    /// next hops (local ports, ascending) of node `v` towards attachment node `a`; empty where
    /// `v` has no route or is `a` itself.
    start: Vec<u32>,
    /// The next hops, slice after slice.
    hops: Vec<u16>,
    /// Per host: the local port at its attachment node that leads to it (`u16::MAX` for
    /// switches).
    last_hop: Vec<u16>,
}

impl ShortestPathTables {
    /// Distance tables of `net` without the links whose ports are marked in `dead` (indexed
    /// by global port; empty: every link is up).
    pub(crate) fn build(net: &Network, dead: &[bool]) -> ShortestPathTables {
        let is_dead = |p: u32| dead.get(p as usize).copied().unwrap_or(false);
        let n_nodes = net.n_nodes();
        let mut host_attach = vec![u32::MAX; n_nodes];
        let mut attach_nodes: Vec<u32> = Vec::new();
        let mut attach_index = vec![u32::MAX; n_nodes];
        // Per attachment: the root is a host of several links, its own table.
        let mut own_root: Vec<bool> = Vec::new();
        for n in 0..n_nodes as u32 {
            if net.node_kind[n as usize] != NodeKind::Host {
                continue;
            }
            if net.degree(n) > 1 {
                // A host of several ports: distances to the host itself (the nearest of its
                // attachments decides), in a table of its own.
                host_attach[n as usize] = attach_nodes.len() as u32;
                attach_nodes.push(n);
                own_root.push(true);
                continue;
            }
            let a = net.port_peer[net.port_offset[n as usize] as usize];
            if attach_index[a as usize] == u32::MAX {
                attach_index[a as usize] = attach_nodes.len() as u32;
                attach_nodes.push(a);
                own_root.push(false);
            }
            host_attach[n as usize] = attach_index[a as usize];
        }
        let mut dist = vec![u16::MAX; attach_nodes.len() * n_nodes];
        let mut frontier = VecDeque::new();
        for (ai, &a) in attach_nodes.iter().enumerate() {
            let row = &mut dist[ai * n_nodes..(ai + 1) * n_nodes];
            row[a as usize] = 0;
            frontier.clear();
            // A host attached to another host: the destination host is the attachment itself;
            // nothing transits it, so the BFS stops there. A host of several ports is the
            // root of its own table: its links are the last hops.
            if net.node_kind[a as usize] == NodeKind::Switch || own_root[ai] {
                frontier.push_back(a);
            }
            while let Some(u) = frontier.pop_front() {
                let du = row[u as usize];
                // A switch no route passes through reaches only its own hosts.
                // (A switch next to a host of several ports delivers to it from anywhere, as
                // an attachment switch does.)
                let end = u != a && !(own_root[ai] && du == 1) && net.is_end_switch(u);
                // From a host (the root of its own table), only towards switches.
                let from_host = u == a && own_root[ai];
                for p in net.port_offset[u as usize]..net.port_offset[u as usize + 1] {
                    let v = net.port_peer[p as usize];
                    let switch = net.node_kind[v as usize] == NodeKind::Switch;
                    let barred = (end && switch) || (from_host && !switch);
                    if row[v as usize] == u16::MAX && !is_dead(p) && !barred {
                        row[v as usize] = du + 1;
                        if switch {
                            frontier.push_back(v);
                        }
                    }
                }
            }
        }
        let mut tables = ShortestPathTables {
            host_attach,
            attach_nodes,
            dist,
            n_nodes,
            dense: None,
        };
        if dead.is_empty() {
            tables.dense = tables.compile_dense(net, DENSE_BUDGET_BYTES);
        }
        tables
    }

    /// The dense next-hop table of these distance tables, or `None` when it would take more
    /// than `budget` bytes.
    fn compile_dense(&self, net: &Network, budget: usize) -> Option<NextHopTable> {
        let entries = self.attach_nodes.len().checked_mul(self.n_nodes)?;
        let mut bytes = entries.checked_add(1)?.checked_mul(4)?;
        if bytes > budget {
            return None;
        }
        let mut start = Vec::with_capacity(entries + 1);
        let mut hops: Vec<u16> = Vec::new();
        let mut scratch = Vec::new();
        // One host per attachment node stands for all of them: away from the attachment node
        // the next hops depend on it alone.
        let mut some_host = vec![u32::MAX; self.attach_nodes.len()];
        for (h, &ai) in self.host_attach.iter().enumerate() {
            if ai != u32::MAX && some_host[ai as usize] == u32::MAX {
                some_host[ai as usize] = h as u32;
            }
        }
        start.push(0);
        for (&attach, &dst) in self.attach_nodes.iter().zip(&some_host) {
            for node in 0..self.n_nodes as u32 {
                if node != attach {
                    scratch.clear();
                    self.live_next_hops(net, node, dst, &[], &mut scratch);
                    bytes += 2 * scratch.len();
                    if bytes > budget {
                        return None;
                    }
                    hops.extend(scratch.iter().map(|&l| l as u16));
                }
                start.push(u32::try_from(hops.len()).ok()?);
            }
        }
        let last_hop = (0..self.n_nodes as u32)
            .map(|h| match self.host_attach[h as usize] {
                u32::MAX => u16::MAX,
                ai => net
                    .port_towards(self.attach_nodes[ai as usize], h)
                    .map_or(u16::MAX, |l| l as u16),
            })
            .collect();
        Some(NextHopTable {
            start,
            hops,
            last_hop,
        })
    }

    /// The local port at `node` that ECMP picks towards host `dst` with `hash` (the
    /// `hash % count`-th of the next hops in ascending order); `None` without a route.
    #[inline]
    pub(super) fn next_port(&self, net: &Network, node: u32, dst: u32, hash: u64) -> Option<u32> {
        if let Some(dense) = &self.dense {
            let hops = self.dense_hops(dense, node, dst);
            return (!hops.is_empty()).then(|| hops[(hash % hops.len() as u64) as usize] as u32);
        }
        self.scan_next_port(net, node, dst, hash)
    }

    /// The next hops (local ports, ascending) at `node` towards host `dst` in the dense
    /// table; empty without a route.
    #[inline]
    fn dense_hops<'a>(&self, dense: &'a NextHopTable, node: u32, dst: u32) -> &'a [u16] {
        let Some(&ai) = self.host_attach.get(dst as usize) else {
            return &[];
        };
        if ai == u32::MAX {
            return &[];
        }
        if node == self.attach_nodes[ai as usize] {
            let last = &dense.last_hop[dst as usize];
            return if *last == u16::MAX {
                &[]
            } else {
                std::slice::from_ref(last)
            };
        }
        let i = ai as usize * self.n_nodes + node as usize;
        &dense.hops[dense.start[i] as usize..dense.start[i + 1] as usize]
    }

    /// [`ShortestPathTables::next_port`] by scanning `node`'s ports against the distance
    /// tables.
    fn scan_next_port(&self, net: &Network, node: u32, dst: u32, hash: u64) -> Option<u32> {
        let (row, here, attach) = self.towards(node, dst)?;
        if node == attach {
            return net.port_towards(node, dst);
        }
        let preferred = Self::prefers(net, node, row, here, attach);
        let is_next = |l: u32| {
            Self::is_next(net, node, l, row, here, attach)
                && (!preferred || net.leads_to_preferred(node, l))
        };
        let count = (0..net.degree(node)).filter(|&l| is_next(l)).count() as u64;
        if count == 0 {
            return None;
        }
        let pick = hash % count;
        (0..net.degree(node))
            .filter(|&l| is_next(l))
            .nth(pick as usize)
    }

    /// Appends the equal-cost next hops (local ports, ascending) at `node` towards `dst`.
    pub(super) fn next_hops(&self, net: &Network, node: u32, dst: u32, out: &mut Vec<u32>) {
        if let Some(dense) = &self.dense {
            out.extend(self.dense_hops(dense, node, dst).iter().map(|&l| l as u32));
            return;
        }
        self.live_next_hops(net, node, dst, &[], out);
    }

    /// [`ShortestPathTables::next_hops`] leaving out ports marked in `dead` (tables built
    /// with the same `dead`).
    pub(crate) fn live_next_hops(
        &self,
        net: &Network,
        node: u32,
        dst: u32,
        dead: &[bool],
        out: &mut Vec<u32>,
    ) {
        let Some((row, here, attach)) = self.towards(node, dst) else {
            return;
        };
        let start = net.port_offset[node as usize];
        let live = |l: u32| !dead.get((start + l) as usize).copied().unwrap_or(false);
        if node == attach {
            out.extend(net.port_towards(node, dst).filter(|&l| live(l)));
            return;
        }
        let preferred = Self::prefers(net, node, row, here, attach);
        out.extend((0..net.degree(node)).filter(|&l| {
            live(l)
                && Self::is_next(net, node, l, row, here, attach)
                && (!preferred || net.leads_to_preferred(node, l))
        }));
    }

    /// True when some next hop of `node` towards `attach` is a preferred switch (then only
    /// those are used).
    fn prefers(net: &Network, node: u32, row: &[u16], here: u16, attach: u32) -> bool {
        !net.prefer.is_empty()
            && (0..net.degree(node)).any(|l| {
                Self::is_next(net, node, l, row, here, attach) && net.leads_to_preferred(node, l)
            })
    }

    /// The distance row of `dst`'s attachment switch, `node`'s distance on it and the
    /// attachment switch; `None` if `dst` is not a host or is unreachable from `node`.
    fn towards(&self, node: u32, dst: u32) -> Option<(&[u16], u16, u32)> {
        let ai = *self.host_attach.get(dst as usize)?;
        if ai == u32::MAX {
            return None;
        }
        let attach = self.attach_nodes[ai as usize];
        let row = &self.dist[ai as usize * self.n_nodes..(ai as usize + 1) * self.n_nodes];
        let here = row[node as usize];
        if here == u16::MAX {
            return None;
        }
        Some((row, here, attach))
    }

    /// Whether local port `l` of `node` is one hop closer to `attach` (never through a host,
    /// nor through a switch that carries only its own hosts' traffic unless from one of them).
    fn is_next(net: &Network, node: u32, l: u32, row: &[u16], here: u16, attach: u32) -> bool {
        let v = net.port_peer[(net.port_offset[node as usize] + l) as usize];
        let through = net.node_kind[v as usize] == NodeKind::Switch
            && (!net.is_end_switch(v) || net.node_kind[node as usize] == NodeKind::Host);
        // Next to a host of several ports (the root of its own table) is as good as its
        // attachment switch.
        let last = v == attach
            || (row[v as usize] == 1 && net.node_kind[attach as usize] == NodeKind::Host);
        row[v as usize] == here.wrapping_sub(1) && (through || last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::network::{Routing, ecmp_hash};
    use crate::topology::{
        FatTree, GpuCluster, GpuClusterLinks, GpuShape, LinkClass, LinkSpec, NodeSpec, RoutingKind,
        TopologySpec, fat_tree, gpu_cluster,
    };
    use crate::units::{BitsPerSec, BufferSize, SimTime};

    fn class() -> LinkClass {
        LinkClass::new(
            BitsPerSec(1_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        )
    }

    /// Asserts that the dense table exists and answers every node, host and hash exactly as
    /// the scan of the distance tables does.
    /// Returns the compiled network.
    fn assert_dense_equals_scan(spec: &TopologySpec) -> Network {
        let net = Network::compile(spec).unwrap();
        let Routing::ShortestPath(tables) = &net.routing else {
            panic!("not shortest-path routing");
        };
        assert!(tables.dense.is_some(), "the dense table fits the budget");
        let (mut dense, mut scan) = (Vec::new(), Vec::new());
        for node in 0..net.n_nodes() as u32 {
            for dst in spec.hosts() {
                for flow in 0..12 {
                    let hash = ecmp_hash(flow, flow % 2 == 1, node);
                    assert_eq!(
                        tables.next_port(&net, node, dst, hash),
                        tables.scan_next_port(&net, node, dst, hash),
                        "node {node} to {dst}, hash {hash}"
                    );
                }
                dense.clear();
                scan.clear();
                tables.next_hops(&net, node, dst, &mut dense);
                tables.live_next_hops(&net, node, dst, &[], &mut scan);
                assert_eq!(dense, scan, "next hops at {node} towards {dst}");
            }
        }
        net
    }

    /// A topology of `nodes` and `links` (all of class 0) routed by shortest paths.
    fn shortest_paths(nodes: Vec<NodeSpec>, links: Vec<LinkSpec>) -> TopologySpec {
        TopologySpec {
            nodes,
            links,
            classes: vec![class()],
            routing: RoutingKind::ShortestPath,
        }
    }

    /// A FatTree k = 4 routed by shortest-path tables instead of its arithmetic.
    fn fat_tree_by_tables() -> TopologySpec {
        let spec = fat_tree(
            FatTree {
                k: 4,
                hosts_per_edge: 2,
            },
            class(),
            class(),
        );
        TopologySpec {
            routing: RoutingKind::ShortestPath,
            ..spec
        }
    }

    #[test]
    fn dense_table_equals_the_scan_on_a_fat_tree() {
        assert_dense_equals_scan(&fat_tree_by_tables());
    }

    #[test]
    fn dense_table_equals_the_scan_with_path_rules() {
        for shape in [
            GpuShape::RailSingleTor,
            GpuShape::RailDualTor,
            GpuShape::RailDualPlane,
            GpuShape::Dcn,
            GpuShape::DcnDualTor,
        ] {
            let spec = gpu_cluster(
                GpuCluster {
                    gpus: 32,
                    gpus_per_server: 8,
                    nics_per_switch: 16,
                    psws: 4,
                    shape,
                },
                GpuClusterLinks {
                    nvlink: class(),
                    nic: class(),
                    fabric: class(),
                },
            );
            assert!(matches!(spec.routing, RoutingKind::ShortestPathRules(_)));
            assert_dense_equals_scan(&spec);
        }
    }

    /// An irregular graph: a ring of five switches with a chord, hosts on three of them, one
    /// switch unreachable, and two hosts joined to each other directly.
    #[test]
    fn dense_table_equals_the_scan_on_an_irregular_graph() {
        let mut nodes = Vec::new();
        let mut add = |kind, name: &str| {
            nodes.push(NodeSpec {
                kind,
                name: name.into(),
            });
            nodes.len() as u32 - 1
        };
        let s: Vec<u32> = (0..6)
            .map(|i| add(NodeKind::Switch, &format!("s{i}")))
            .collect();
        let h: Vec<u32> = (0..6)
            .map(|i| add(NodeKind::Host, &format!("h{i}")))
            .collect();
        let link = |a, b| LinkSpec {
            a,
            b,
            class: 0,
            class_ba: 0,
        };
        let mut links: Vec<LinkSpec> = (0..5).map(|i| link(s[i], s[(i + 1) % 5])).collect();
        links.push(link(s[0], s[2]));
        links.extend([
            link(h[0], s[0]),
            link(h[1], s[0]),
            link(h[2], s[3]),
            link(h[3], s[4]),
        ]);
        links.push(link(h[4], h[5]));
        let net = assert_dense_equals_scan(&shortest_paths(nodes, links));
        let Routing::ShortestPath(tables) = &net.routing else {
            unreachable!()
        };
        assert_eq!(tables.next_port(&net, s[5], h[0], 7), None, "unreachable");
        assert_eq!(
            tables.next_port(&net, h[4], h[5], 7),
            Some(0),
            "host to host"
        );
    }

    /// Hosts of several ports (GPUs with an NVLink to their server's NVSwitch and a NIC link
    /// to their rail's leaf): routes leave and reach a GPU by its port nearest the other end,
    /// never pass through a GPU, and the dense table answers as the scan does.
    #[test]
    fn hosts_of_several_ports_route_by_their_nearest_port() {
        let names = ["nvs", "l0", "l1", "sp", "g0", "g1", "h"];
        let kinds = [0, 0, 0, 0, 1, 1, 1];
        let nodes = names
            .iter()
            .zip(kinds)
            .map(|(name, k)| NodeSpec {
                kind: if k == 0 {
                    NodeKind::Switch
                } else {
                    NodeKind::Host
                },
                name: name.to_string(),
            })
            .collect();
        let id = |n: &str| names.iter().position(|x| *x == n).unwrap() as u32;
        let link = |a: &str, b: &str| LinkSpec {
            a: id(a),
            b: id(b),
            class: 0,
            class_ba: 0,
        };
        let links = vec![
            link("g0", "nvs"),
            link("g0", "l0"),
            link("g1", "nvs"),
            link("g1", "l1"),
            link("l0", "sp"),
            link("l1", "sp"),
            link("h", "l0"),
        ];
        let net = assert_dense_equals_scan(&shortest_paths(nodes, links));
        let path = |from: &str, to: &str, flow: u32| {
            let (mut at, dst) = (id(from), id(to));
            let mut path = vec![from.to_string()];
            while at != dst {
                let local = net.route(at, dst, ecmp_hash(flow, false, at)).unwrap();
                at = net.port_peer[net.port_id(at, local) as usize];
                path.push(names[at as usize].to_string());
                assert!(path.len() < 8, "{path:?}");
            }
            path
        };
        for flow in 0..8 {
            assert_eq!(path("g0", "g1", flow), ["g0", "nvs", "g1"]);
            assert_eq!(path("g1", "g0", flow), ["g1", "nvs", "g0"]);
            assert_eq!(path("g0", "h", flow), ["g0", "l0", "h"]);
            assert_eq!(path("h", "g0", flow), ["h", "l0", "g0"]);
            // Never through g0 (l0 -> g0 -> nvs -> g1 is as short as l0 -> sp -> l1 -> g1).
            assert_eq!(path("h", "g1", flow), ["h", "l0", "sp", "l1", "g1"]);
            assert_eq!(path("g1", "h", flow), ["g1", "l1", "sp", "l0", "h"]);
        }
    }

    #[test]
    fn over_budget_falls_back_to_the_scan() {
        let net = Network::compile(&fat_tree_by_tables()).unwrap();
        let Routing::ShortestPath(tables) = &net.routing else {
            unreachable!()
        };
        let dense = tables.dense.as_ref().unwrap();
        let need = 4 * dense.start.len() + 2 * dense.hops.len();
        assert!(tables.compile_dense(&net, need).is_some());
        assert!(tables.compile_dense(&net, need - 1).is_none());
    }
}

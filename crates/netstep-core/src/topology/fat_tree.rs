//! k-ary FatTree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 edge and k/2 aggregation
//! switches, (k/2)^2 core switches, `hosts_per_edge` hosts under each edge switch (k/2 in the
//! classic design). Routing is address arithmetic plus an ECMP hash on the way up, so a
//! FatTree-256 (4 M hosts) needs no routing tables at all.
//!
//! Node numbering: hosts `[0, H)`, edge `[H, H+E)`, aggregation `[H+E, H+2E)`, core
//! `[H+2E, H+2E+C)` with `E = k²/2`, `C = k²/4`, `H = E·hosts_per_edge`. Port numbering:
//! host 0 → edge; edge: hosts first, then aggregation switches of its pod; aggregation: edge
//! switches of its pod, then its k/2 core switches; core: one port per pod.

use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// The parameters FatTree routing needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FatTree {
    /// Switch radix (even, >= 2).
    pub k: u32,
    /// Hosts under each edge switch.
    pub hosts_per_edge: u32,
}

impl FatTree {
    /// Number of hosts.
    pub const fn n_hosts(&self) -> u32 {
        self.n_edge() * self.hosts_per_edge
    }
    /// Number of edge switches (= aggregation switches).
    pub const fn n_edge(&self) -> u32 {
        self.k * self.k / 2
    }
    /// Number of core switches.
    pub const fn n_core(&self) -> u32 {
        self.k * self.k / 4
    }
    /// Total node count.
    pub const fn n_nodes(&self) -> u32 {
        self.n_hosts() + 2 * self.n_edge() + self.n_core()
    }

    /// The local port at `node` that leads towards host `dst`; `hash` picks among equal-cost
    /// uplinks.
    #[inline]
    pub fn next_port(&self, node: u32, dst: u32, hash: u64) -> u32 {
        let half = self.k / 2;
        let hosts = self.n_hosts();
        let edges = self.n_edge();
        if node < hosts {
            return 0;
        }
        let dst_edge = dst / self.hosts_per_edge;
        let dst_pod = dst_edge / half;
        if node < hosts + edges {
            let edge = node - hosts;
            if edge == dst_edge {
                dst % self.hosts_per_edge
            } else {
                self.hosts_per_edge + (hash % half as u64) as u32
            }
        } else if node < hosts + 2 * edges {
            let agg = node - hosts - edges;
            if agg / half == dst_pod {
                dst_edge % half
            } else {
                half + (hash % half as u64) as u32
            }
        } else {
            dst_pod
        }
    }
}

/// Builds a FatTree with the given link classes for host links and fabric links
/// (`classes[0]` = host tier, `classes[1]` = fabric).
pub fn fat_tree(shape: FatTree, host_link: LinkClass, fabric_link: LinkClass) -> TopologySpec {
    let FatTree { k, hosts_per_edge } = shape;
    let half = k / 2;
    let hosts = shape.n_hosts();
    let edges = shape.n_edge();
    let mut nodes = Vec::with_capacity(shape.n_nodes() as usize);
    for h in 0..hosts {
        nodes.push(NodeSpec {
            kind: NodeKind::Host,
            name: format!("h{h}"),
        });
    }
    for e in 0..edges {
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("edge{}_{}", e / half, e % half),
        });
    }
    for a in 0..edges {
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("agg{}_{}", a / half, a % half),
        });
    }
    for c in 0..shape.n_core() {
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("core{}_{}", c / half, c % half),
        });
    }
    let edge_id = |e: u32| hosts + e;
    let agg_id = |a: u32| hosts + edges + a;
    let core_id = |c: u32| hosts + 2 * edges + c;
    let n_links = hosts as usize + (edges * half) as usize * 2;
    let mut links = Vec::with_capacity(n_links);
    for h in 0..hosts {
        links.push(LinkSpec {
            a: h,
            b: edge_id(h / hosts_per_edge),
            class: 0,
        });
    }
    for pod in 0..k {
        for i in 0..half {
            for u in 0..half {
                links.push(LinkSpec {
                    a: edge_id(pod * half + i),
                    b: agg_id(pod * half + u),
                    class: 1,
                });
            }
        }
    }
    for pod in 0..k {
        for j in 0..half {
            for u in 0..half {
                links.push(LinkSpec {
                    a: agg_id(pod * half + j),
                    b: core_id(j * half + u),
                    class: 1,
                });
            }
        }
    }
    TopologySpec {
        nodes,
        links,
        classes: vec![host_link, fabric_link],
        routing: RoutingKind::FatTree(shape),
    }
}

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
    /// uplinks. (Reference implementation with plain divisions; the engine uses
    /// [`FatTreeRouter`], which gives the same answers without dividing.)
    pub fn next_port(&self, node: u32, dst: u32, hash: u64) -> u32 {
        let half = self.k / 2;
        let hosts = self.n_hosts();
        let edges = self.n_edge();
        if node < hosts {
            return 0;
        }
        let dst_edge = dst / self.hosts_per_edge;
        let dst_pod = dst_edge / half;
        let uplink = pick(hash, half);
        if node < hosts + edges {
            if node - hosts == dst_edge {
                dst % self.hosts_per_edge
            } else {
                self.hosts_per_edge + uplink
            }
        } else if node < hosts + 2 * edges {
            if (node - hosts - edges) / half == dst_pod {
                dst_edge % half
            } else {
                half + uplink
            }
        } else {
            dst_pod
        }
    }
}

/// Maps a 64-bit hash onto `0..n` without dividing (multiply-shift of its high half): the
/// FatTree's ECMP choice, and the uniform pick of the load balancer and failure routing.
#[inline]
pub fn pick(hash: u64, n: u32) -> u32 {
    (((hash >> 32) * n as u64) >> 32) as u32
}

/// Division by a fixed `u32` as a multiplication (Lemire, Kaser and Kurz, "Faster remainder by
/// direct computation", 2019): exact for every `u32` numerator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FastDiv {
    divisor: u32,
    multiplier: u64,
}

impl FastDiv {
    pub(crate) fn new(divisor: u32) -> FastDiv {
        assert!(divisor > 0, "division by zero");
        // For divisor 1 the multiplier would be 2^64; `div` special-cases it.
        let multiplier = if divisor == 1 {
            0
        } else {
            u64::MAX / divisor as u64 + 1
        };
        FastDiv {
            divisor,
            multiplier,
        }
    }
    #[inline]
    pub(crate) fn div(&self, n: u32) -> u32 {
        if self.divisor == 1 {
            n
        } else {
            ((self.multiplier as u128 * n as u128) >> 64) as u32
        }
    }
    /// The divisor.
    #[inline]
    pub(crate) fn divisor(&self) -> u32 {
        self.divisor
    }
    #[inline]
    fn div_rem(&self, n: u32) -> (u32, u32) {
        let q = self.div(n);
        (q, n - q * self.divisor)
    }
}

/// FatTree routing with the shape's constants and divisors precomputed (no tables: a few
/// words whatever k).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FatTreeRouter {
    shape: FatTree,
    half: u32,
    hosts: u32,
    edges: u32,
    per_edge: FastDiv,
    per_pod: FastDiv,
}

impl FatTreeRouter {
    /// Precomputes the router of `shape`.
    pub fn new(shape: FatTree) -> FatTreeRouter {
        FatTreeRouter {
            shape,
            half: shape.k / 2,
            hosts: shape.n_hosts(),
            edges: shape.n_edge(),
            per_edge: FastDiv::new(shape.hosts_per_edge),
            per_pod: FastDiv::new(shape.k / 2),
        }
    }

    /// The shape.
    pub fn shape(&self) -> FatTree {
        self.shape
    }

    /// Same as [`FatTree::next_port`].
    #[inline]
    pub fn next_port(&self, node: u32, dst: u32, hash: u64) -> u32 {
        if node < self.hosts {
            return 0;
        }
        let (dst_edge, dst_host) = self.per_edge.div_rem(dst);
        let (dst_pod, dst_edge_in_pod) = self.per_pod.div_rem(dst_edge);
        let above_hosts = node - self.hosts;
        if above_hosts < self.edges {
            if above_hosts == dst_edge {
                dst_host
            } else {
                self.shape.hosts_per_edge + pick(hash, self.half)
            }
        } else if above_hosts < 2 * self.edges {
            if self.per_pod.div(above_hosts - self.edges) == dst_pod {
                dst_edge_in_pod
            } else {
                self.half + pick(hash, self.half)
            }
        } else {
            dst_pod
        }
    }

    /// The equal-cost next hops at `node` towards host `dst` as a range of local ports
    /// `(first, count)`: the uplinks where [`FatTreeRouter::next_port`] picks by hash, else the
    /// one port it takes.
    pub fn next_hops(&self, node: u32, dst: u32) -> (u32, u32) {
        if node < self.hosts {
            return (0, 1);
        }
        let dst_edge = self.per_edge.div(dst);
        let dst_pod = self.per_pod.div(dst_edge);
        let above_hosts = node - self.hosts;
        if above_hosts < self.edges && above_hosts != dst_edge {
            (self.shape.hosts_per_edge, self.half)
        } else if (self.edges..2 * self.edges).contains(&above_hosts)
            && self.per_pod.div(above_hosts - self.edges) != dst_pod
        {
            (self.half, self.half)
        } else {
            (self.next_port(node, dst, 0), 1)
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
            class_ba: 0,
        });
    }
    for pod in 0..k {
        for i in 0..half {
            for u in 0..half {
                links.push(LinkSpec {
                    a: edge_id(pod * half + i),
                    b: agg_id(pod * half + u),
                    class: 1,
                    class_ba: 1,
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
                    class_ba: 1,
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn fast_division_is_exact(n in any::<u32>(), d in 1u32..100_000) {
            let f = FastDiv::new(d);
            prop_assert_eq!(f.div_rem(n), (n / d, n % d));
        }

        #[test]
        fn router_matches_the_plain_arithmetic(k in (1u32..=64).prop_map(|h| h * 2), hpe in 1u32..40, node_sel in any::<u32>(), dst_sel in any::<u32>(), hash in any::<u64>()) {
            let shape = FatTree { k, hosts_per_edge: hpe };
            let router = FatTreeRouter::new(shape);
            let node = node_sel % shape.n_nodes();
            let dst = dst_sel % shape.n_hosts();
            prop_assert_eq!(router.next_port(node, dst, hash), shape.next_port(node, dst, hash));
        }
    }

    #[test]
    fn divisor_one_and_largest_numerators() {
        assert_eq!(FastDiv::new(1).div_rem(u32::MAX), (u32::MAX, 0));
        assert_eq!(
            FastDiv::new(7).div_rem(u32::MAX),
            (u32::MAX / 7, u32::MAX % 7)
        );
        assert_eq!(FastDiv::new(u32::MAX).div_rem(u32::MAX), (1, 0));
    }
}

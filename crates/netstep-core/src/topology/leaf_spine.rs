//! Two-tier leaf-spine (folded Clos): every leaf connects to every spine, hosts hang off leaves.
//! Routed by arithmetic ([`LeafSpineRouter`]): up to any spine by ECMP, down to the
//! destination leaf, the same ports in the same order as shortest-path ECMP would pick, with no
//! table (a shortest-path table holds leaves x nodes entries: 1.3 GB at 204,800 hosts).
//!
//! Node numbering: hosts `[0, leaves·hosts_per_leaf)`, then leaves, then spines. Local ports: a
//! host's only port is 0; leaf `l`'s ports are its hosts in order (port `i` to host
//! `l·hosts_per_leaf + i`), then the spines in order; spine `s`'s port `l` goes to leaf `l`.

use super::fat_tree::FastDiv;
use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// The shape of a leaf-spine fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LeafSpine {
    /// Leaf switches.
    pub leaves: u32,
    /// Spine switches.
    pub spines: u32,
    /// Hosts per leaf.
    pub hosts_per_leaf: u32,
}

/// Leaf-spine routing with the shape's constants precomputed (a few words whatever the size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeafSpineRouter {
    shape: LeafSpine,
    hosts: u32,
    per_leaf: FastDiv,
}

impl LeafSpineRouter {
    /// Precomputes the router of `shape`.
    pub fn new(shape: LeafSpine) -> LeafSpineRouter {
        LeafSpineRouter {
            shape,
            hosts: shape.leaves * shape.hosts_per_leaf,
            per_leaf: FastDiv::new(shape.hosts_per_leaf.max(1)),
        }
    }

    /// The egress port at `node` towards host `dst` for a packet with ECMP hash `hash`
    /// (`None` when `dst` is not a host). Among the spines the choice is `hash mod spines`, in
    /// port order: what shortest-path ECMP picks.
    #[inline]
    pub fn next_port(&self, node: u32, dst: u32, hash: u64) -> Option<u32> {
        let (first, count) = self.next_hops(node, dst)?;
        Some(super::ecmp_pick(first, count, hash))
    }

    /// The equal-cost next hops at `node` towards host `dst` as `(first local port, count)`
    /// (`None` when `dst` is not a host).
    #[inline]
    pub fn next_hops(&self, node: u32, dst: u32) -> Option<(u32, u32)> {
        if dst >= self.hosts {
            return None;
        }
        let LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        } = self.shape;
        let dst_leaf = self.per_leaf.div(dst);
        Some(if node < self.hosts {
            (0, 1)
        } else if node < self.hosts + leaves {
            let leaf = node - self.hosts;
            if leaf == dst_leaf {
                (dst - leaf * hosts_per_leaf, 1)
            } else {
                (hosts_per_leaf, spines)
            }
        } else {
            (dst_leaf, 1)
        })
    }
}

/// Builds a leaf-spine topology (`classes[0]` = host links, `classes[1]` = leaf-spine links).
pub fn leaf_spine(
    leaves: u32,
    spines: u32,
    hosts_per_leaf: u32,
    host_link: LinkClass,
    fabric_link: LinkClass,
) -> TopologySpec {
    let hosts = leaves * hosts_per_leaf;
    let mut nodes = Vec::new();
    for h in 0..hosts {
        nodes.push(NodeSpec {
            kind: NodeKind::Host,
            name: format!("h{h}"),
        });
    }
    for l in 0..leaves {
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("leaf{l}"),
        });
    }
    for s in 0..spines {
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("spine{s}"),
        });
    }
    let mut links = Vec::new();
    for h in 0..hosts {
        links.push(LinkSpec {
            a: h,
            b: hosts + h / hosts_per_leaf,
            class: 0,
            class_ba: 0,
        });
    }
    for l in 0..leaves {
        for s in 0..spines {
            links.push(LinkSpec {
                a: hosts + l,
                b: hosts + leaves + s,
                class: 1,
                class_ba: 1,
            });
        }
    }
    TopologySpec {
        nodes,
        links,
        classes: vec![host_link, fabric_link],
        routing: RoutingKind::LeafSpine(LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
        }),
    }
}

//! Two-tier leaf-spine (folded Clos): every leaf connects to every spine, hosts hang off leaves.
//! Routed by shortest-path ECMP (up to any spine, down to the destination leaf).
//!
//! Node numbering: hosts `[0, leaves·hosts_per_leaf)`, then leaves, then spines.

use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

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
        routing: RoutingKind::ShortestPath,
    }
}

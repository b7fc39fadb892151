//! Dumbbell: `left` hosts on switch `sl`, `right` hosts on switch `sr`, one bottleneck link
//! between the two switches. The classic shape for congestion-control and fairness tests.
//!
//! Node numbering: left hosts `l0..`, right hosts `r0..`, then `sl`, `sr`.

use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// Builds a dumbbell (`classes[0]` = host links, `classes[1]` = the bottleneck).
pub fn dumbbell(
    left: u32,
    right: u32,
    host_link: LinkClass,
    bottleneck: LinkClass,
) -> TopologySpec {
    let mut nodes = Vec::new();
    for i in 0..left {
        nodes.push(NodeSpec {
            kind: NodeKind::Host,
            name: format!("l{i}"),
        });
    }
    for i in 0..right {
        nodes.push(NodeSpec {
            kind: NodeKind::Host,
            name: format!("r{i}"),
        });
    }
    let sl = left + right;
    let sr = sl + 1;
    nodes.push(NodeSpec {
        kind: NodeKind::Switch,
        name: "sl".into(),
    });
    nodes.push(NodeSpec {
        kind: NodeKind::Switch,
        name: "sr".into(),
    });
    let mut links = Vec::new();
    for i in 0..left {
        links.push(LinkSpec {
            a: i,
            b: sl,
            class: 0,
            class_ba: 0,
        });
    }
    for i in 0..right {
        links.push(LinkSpec {
            a: left + i,
            b: sr,
            class: 0,
            class_ba: 0,
        });
    }
    links.push(LinkSpec {
        a: sl,
        b: sr,
        class: 1,
        class_ba: 1,
    });
    TopologySpec {
        nodes,
        links,
        classes: vec![host_link, bottleneck],
        routing: RoutingKind::ShortestPath,
    }
}

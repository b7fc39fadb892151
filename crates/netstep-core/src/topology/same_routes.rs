//! Test support: a topology routed by arithmetic picks exactly what shortest-path ECMP over
//! the same links picks.

use super::{RoutingKind, TopologySpec};
use crate::network::{Network, Routing, ecmp_hash};

/// Asserts that `arithmetic` (a topology with its own router) picks, at every node, for every
/// host destination and `hashes` flow hashes, the port shortest-path ECMP over the same links
/// picks, and lists the same next hops in the same order.
pub(crate) fn assert_arithmetic_equals_shortest_path(arithmetic: &TopologySpec, hashes: u32) {
    let tables = TopologySpec {
        routing: RoutingKind::ShortestPath,
        ..arithmetic.clone()
    };
    let (a, t) = (
        Network::compile(arithmetic).unwrap(),
        Network::compile(&tables).unwrap(),
    );
    assert!(matches!(t.routing, Routing::ShortestPath(_)));
    let what = &arithmetic.routing;
    let (mut hops_a, mut hops_t) = (Vec::new(), Vec::new());
    for node in 0..a.n_nodes() as u32 {
        for dst in arithmetic.hosts() {
            if node == dst {
                continue;
            }
            for flow in 0..hashes {
                let hash = ecmp_hash(flow, flow % 2 == 1, node);
                assert_eq!(
                    a.route(node, dst, hash),
                    t.route(node, dst, hash),
                    "{what:?}: node {node} to {dst}, hash {hash}"
                );
            }
            hops_a.clear();
            hops_t.clear();
            a.next_hops(node, dst, &mut hops_a);
            t.next_hops(node, dst, &mut hops_t);
            assert_eq!(
                hops_a, hops_t,
                "{what:?}: next hops at {node} towards {dst}"
            );
        }
    }
}

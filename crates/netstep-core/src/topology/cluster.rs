//! A three-tier cluster as Meta's data-center fabric and Parsimon / m3 build it: pods of racks,
//! a top-of-rack switch (ToR) per rack linked to every fabric switch (fab) of its pod, and
//! planes of spines: fab `f` of every pod links to every spine of plane `f` (so there are as
//! many planes as fabs per pod). Oversubscription at the fab is the ratio of its downlink
//! capacity (racks per pod links) to its uplink capacity (spines per plane links).
//!
//! Routed by arithmetic ([`ClusterRouter`]), the same ports in the same order as
//! shortest-path ECMP would pick: a ToR sends to its own hosts directly and anything else up
//! to any fab of its pod; a fab sends down to the destination's rack in its pod and anything
//! else up to any spine of its plane; a spine sends down to its plane's fab in the
//! destination's pod.
//!
//! Node numbering (Parsimon's cluster files number them the same way): hosts `[0, H)` rack by
//! rack, pod by pod; then the ToRs (pod by pod); then the fabs (pod by pod); then the spines
//! (plane by plane). Local ports: a host's only port 0; ToR ports: its hosts in order, then
//! its pod's fabs; fab ports: its pod's ToRs in order, then its plane's spines; spine ports:
//! its plane's fab of each pod, in pod order.

use super::fat_tree::FastDiv;
use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// The shape of a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Cluster {
    /// Pods.
    pub pods: u32,
    /// Racks (ToRs) per pod.
    pub racks_per_pod: u32,
    /// Hosts per rack.
    pub hosts_per_rack: u32,
    /// Fabric switches per pod (and planes of spines).
    pub fabs_per_pod: u32,
    /// Spines per plane.
    pub spines_per_plane: u32,
}

impl Cluster {
    /// Hosts.
    pub fn hosts(&self) -> u32 {
        self.pods * self.racks_per_pod * self.hosts_per_rack
    }
    /// ToRs (racks).
    pub fn tors(&self) -> u32 {
        self.pods * self.racks_per_pod
    }
    /// Fabric switches.
    pub fn fabs(&self) -> u32 {
        self.pods * self.fabs_per_pod
    }
    /// Spines.
    pub fn spines(&self) -> u32 {
        self.fabs_per_pod * self.spines_per_plane
    }
}

/// The link classes of a cluster's three tiers (each direction the same).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterLinks {
    /// Host to ToR.
    pub host: LinkClass,
    /// ToR to fab.
    pub tor_fab: LinkClass,
    /// Fab to spine.
    pub fab_spine: LinkClass,
}

/// Cluster routing with the shape's constants precomputed (a few words whatever the size).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClusterRouter {
    shape: Cluster,
    hosts: u32,
    tors: u32,
    fabs: u32,
    per_rack: FastDiv,
    per_pod_racks: FastDiv,
    per_pod_fabs: FastDiv,
}

impl ClusterRouter {
    /// Precomputes the router of `shape`.
    pub fn new(shape: Cluster) -> ClusterRouter {
        ClusterRouter {
            shape,
            hosts: shape.hosts(),
            tors: shape.tors(),
            fabs: shape.fabs(),
            per_rack: FastDiv::new(shape.hosts_per_rack.max(1)),
            per_pod_racks: FastDiv::new(shape.racks_per_pod.max(1)),
            per_pod_fabs: FastDiv::new(shape.fabs_per_pod.max(1)),
        }
    }

    /// The egress port at `node` towards host `dst` for a packet with ECMP hash `hash`
    /// (`None` when `dst` is not a host).
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
        let s = &self.shape;
        let dst_rack = self.per_rack.div(dst);
        let dst_pod = self.per_pod_racks.div(dst_rack);
        Some(if node < self.hosts {
            (0, 1)
        } else if node < self.hosts + self.tors {
            let tor = node - self.hosts;
            if tor == dst_rack {
                (dst - tor * s.hosts_per_rack, 1)
            } else {
                (s.hosts_per_rack, s.fabs_per_pod)
            }
        } else if node < self.hosts + self.tors + self.fabs {
            let fab = node - self.hosts - self.tors;
            let pod = self.per_pod_fabs.div(fab);
            if pod == dst_pod {
                (dst_rack - pod * s.racks_per_pod, 1)
            } else {
                (s.racks_per_pod, s.spines_per_plane)
            }
        } else {
            // A spine's ports are its plane's fab in each pod.
            (dst_pod, 1)
        })
    }
}

/// Builds a cluster (`classes`: 0 host links, 1 ToR-fab links, 2 fab-spine links).
pub fn cluster(shape: Cluster, links: ClusterLinks) -> TopologySpec {
    let Cluster {
        pods,
        racks_per_pod,
        hosts_per_rack,
        fabs_per_pod,
        spines_per_plane,
    } = shape;
    let (hosts, tors, fabs) = (shape.hosts(), shape.tors(), shape.fabs());
    let mut nodes = Vec::with_capacity((hosts + tors + fabs + shape.spines()) as usize);
    let mut push = |kind, prefix: &str, count: u32| {
        nodes.extend((0..count).map(|i| NodeSpec {
            kind,
            name: format!("{prefix}{i}"),
        }))
    };
    push(NodeKind::Host, "h", hosts);
    push(NodeKind::Switch, "tor", tors);
    push(NodeKind::Switch, "fab", fabs);
    push(NodeKind::Switch, "spine", shape.spines());
    let link = |a, b, class| LinkSpec {
        a,
        b,
        class,
        class_ba: class,
    };
    let mut list = Vec::new();
    // Hosts to their ToR, then each ToR to its pod's fabs, then each fab to its plane's
    // spines: every node's links appear in its port order.
    list.extend((0..hosts).map(|h| link(h, hosts + h / hosts_per_rack, 0)));
    for tor in 0..tors {
        let pod = tor / racks_per_pod;
        for f in 0..fabs_per_pod {
            list.push(link(hosts + tor, hosts + tors + pod * fabs_per_pod + f, 1));
        }
    }
    for pod in 0..pods {
        for f in 0..fabs_per_pod {
            for s in 0..spines_per_plane {
                list.push(link(
                    hosts + tors + pod * fabs_per_pod + f,
                    hosts + tors + fabs + f * spines_per_plane + s,
                    2,
                ));
            }
        }
    }
    TopologySpec {
        nodes,
        links: list,
        classes: vec![links.host, links.tor_fab, links.fab_spine],
        routing: RoutingKind::Cluster(shape),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{BitsPerSec, BufferSize, Bytes, SimTime};

    fn class(gbps: u64) -> LinkClass {
        LinkClass::new(
            BitsPerSec(gbps * 1_000_000_000),
            SimTime::from_us(1),
            BufferSize::Bytes(Bytes(100_000)),
        )
    }

    fn links() -> ClusterLinks {
        ClusterLinks {
            host: class(10),
            tor_fab: class(40),
            fab_spine: class(40),
        }
    }

    /// The arithmetic picks exactly what shortest-path ECMP over the same links picks, at
    /// every node, for every destination and many hashes, and lists the same next hops in the
    /// same order.
    #[test]
    fn cluster_arithmetic_equals_shortest_path_ecmp() {
        for (pods, racks, hosts, fabs, spines) in [
            (2, 3, 2, 2, 3),
            (3, 2, 1, 1, 2),
            (1, 4, 3, 3, 1),
            (2, 2, 2, 4, 2),
        ] {
            let shape = Cluster {
                pods,
                racks_per_pod: racks,
                hosts_per_rack: hosts,
                fabs_per_pod: fabs,
                spines_per_plane: spines,
            };
            let arithmetic = cluster(shape, links());
            crate::topology::same_routes::assert_arithmetic_equals_shortest_path(&arithmetic, 24);
        }
    }

    /// Parsimon's 256-host cluster (2 pods x 16 racks x 8 hosts, 2 fabs, 16 spines per
    /// plane): its node numbering, and 1:1 at the fab (16 x 40 Gb/s down, 16 x 40 up).
    #[test]
    fn parsimon_cluster_numbering() {
        let shape = Cluster {
            pods: 2,
            racks_per_pod: 16,
            hosts_per_rack: 8,
            fabs_per_pod: 2,
            spines_per_plane: 16,
        };
        let spec = cluster(shape, links());
        assert_eq!(spec.nodes.len(), 256 + 32 + 4 + 32);
        assert_eq!(spec.nodes[256].name, "tor0");
        assert_eq!(spec.nodes[288].name, "fab0");
        assert_eq!(spec.nodes[292].name, "spine0");
        // Parsimon's files: fab 288 links to spines 292.., fab 290 (pod 1, plane 0) too.
        let up: Vec<u32> = spec
            .links
            .iter()
            .filter(|l| l.a == 290)
            .map(|l| l.b)
            .collect();
        assert_eq!(up, (292..308).collect::<Vec<_>>());
        assert_eq!(spec.links.len(), 256 + 32 * 2 + 4 * 16);
    }
}

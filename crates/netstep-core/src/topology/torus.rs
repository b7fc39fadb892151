//! 2D and 3D torus: switches on a grid with wraparound links in every dimension, hosts hanging
//! off each switch, routed by dimension order (Dally and Seitz 1987; the routing of Days' and
//! BookSim's tori): correct the first dimension whose coordinate differs, the shorter way
//! around its ring (the `+` way when both are equally long), then the next.
//!
//! Node numbering: hosts `[0, S·hosts_per_switch)` (host `i` on switch `i / hosts_per_switch`),
//! then the `S = prod(dims)` switches; switch `s` has coordinates `x = s mod X`,
//! `y = (s / X) mod Y`, `z = s / (X Y)`. A ring of size 2 has one link between its two
//! switches (not two parallel ones).

use super::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};

/// Shape of a torus.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Torus {
    /// Ring sizes, 2 or 3 dimensions, each >= 2.
    pub dims: Vec<u32>,
    /// Hosts attached to each switch (>= 1).
    pub hosts_per_switch: u32,
}

impl Torus {
    /// Switches.
    pub fn n_switches(&self) -> u32 {
        self.dims.iter().product()
    }
    /// Hosts.
    pub fn n_hosts(&self) -> u32 {
        self.n_switches() * self.hosts_per_switch
    }
    /// Coordinates of switch `s` (0-based switch index).
    pub fn coords(&self, s: u32) -> Vec<u32> {
        let mut rest = s;
        self.dims
            .iter()
            .map(|&n| {
                let c = rest % n;
                rest /= n;
                c
            })
            .collect()
    }
    /// Switch-to-switch hops of dimension-order routing between switches `a` and `b`: the
    /// sum over dimensions of the shorter way around each ring.
    pub fn switch_distance(&self, a: u32, b: u32) -> u32 {
        let (ca, cb) = (self.coords(a), self.coords(b));
        self.dims
            .iter()
            .zip(ca.iter().zip(&cb))
            .map(|(&n, (&x, &y))| {
                let forward = (y + n - x) % n;
                forward.min(n - forward)
            })
            .sum()
    }
}

/// Dimension-order routing with every switch's neighbour ports in a table (`2 x dims` local
/// ports per switch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TorusRouter {
    shape: Torus,
    /// `ports[(s * dims + d) * 2 + dir]`: local port of switch `s` towards its `+` (dir 0) or
    /// `-` (dir 1) neighbour in dimension `d`.
    ports: Vec<u32>,
}

impl TorusRouter {
    /// The egress port (local) at `node` of a packet for host `dst`.
    pub fn next_port(&self, node: u32, dst: u32) -> u32 {
        let h = self.shape.hosts_per_switch;
        let hosts = self.shape.n_hosts();
        if node < hosts {
            return 0;
        }
        let (s, t) = (node - hosts, dst / h);
        if s == t {
            return dst % h;
        }
        let (mut rs, mut rt) = (s, t);
        for (d, &n) in self.shape.dims.iter().enumerate() {
            let (x, y) = (rs % n, rt % n);
            rs /= n;
            rt /= n;
            if x != y {
                let forward = (y + n - x) % n;
                let dir = usize::from(forward > n - forward);
                return self.ports[(s as usize * self.shape.dims.len() + d) * 2 + dir];
            }
        }
        unreachable!("switches {s} and {t} differ in some coordinate")
    }
}

/// Builds a torus (`classes[0]` = host links, `classes[1]` = switch-to-switch links) and its
/// router.
pub fn torus(shape: Torus, host_link: LinkClass, fabric_link: LinkClass) -> TopologySpec {
    let hosts = shape.n_hosts();
    let switches = shape.n_switches();
    let h = shape.hosts_per_switch;
    let mut nodes = Vec::with_capacity((hosts + switches) as usize);
    for i in 0..hosts {
        nodes.push(NodeSpec {
            kind: NodeKind::Host,
            name: format!("h{i}"),
        });
    }
    for s in 0..switches {
        let coords: Vec<String> = shape.coords(s).iter().map(u32::to_string).collect();
        nodes.push(NodeSpec {
            kind: NodeKind::Switch,
            name: format!("s{}", coords.join("_")),
        });
    }
    let mut links = Vec::new();
    for i in 0..hosts {
        links.push(LinkSpec {
            a: i,
            b: hosts + i / h,
            class: 0,
            class_ba: 0,
        });
    }
    let dims = shape.dims.len();
    let mut ports = vec![u32::MAX; switches as usize * dims * 2];
    // Next free local port per switch (after its hosts).
    let mut next_local = vec![h; switches as usize];
    for s in 0..switches {
        let mut stride = 1;
        for (d, &n) in shape.dims.iter().enumerate() {
            let x = (s / stride) % n;
            if n >= 3 || x == 0 {
                let peer = s - x * stride + ((x + 1) % n) * stride;
                links.push(LinkSpec {
                    a: hosts + s,
                    b: hosts + peer,
                    class: 1,
                    class_ba: 1,
                });
                let (la, lb) = (next_local[s as usize], next_local[peer as usize]);
                next_local[s as usize] += 1;
                next_local[peer as usize] += 1;
                ports[(s as usize * dims + d) * 2] = la;
                ports[(peer as usize * dims + d) * 2 + 1] = lb;
                if n == 2 {
                    // One link serves both ways round a ring of two.
                    ports[(s as usize * dims + d) * 2 + 1] = la;
                    ports[(peer as usize * dims + d) * 2] = lb;
                }
            }
            stride *= n;
        }
    }
    let router = TorusRouter { shape, ports };
    TopologySpec {
        nodes,
        links,
        classes: vec![host_link, fabric_link],
        routing: RoutingKind::Torus(Box::new(router)),
    }
}

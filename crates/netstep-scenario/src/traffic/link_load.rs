//! The expected share of a traffic matrix's flows on every directed link, under a route
//! model, and the most loaded link relative to its rate: what sets the arrival rate of
//! `rack_matrix` traffic.
//!
//! A flow of matrix row `(from, to, p)` has its source uniform over `from` and its
//! destination uniform over `to`, distinct (a row inside one rack: uniform over the ordered
//! pairs of distinct hosts). Its share of a link is the probability that its route crosses
//! it, under one of two models:
//! - `ecmp`: every switch picks among its equal-cost next hops independently and uniformly
//!   (netstep's per-switch flow hash, and the HPCC simulator's);
//! - `parsimon`: one hash `h` per flow picks `next_hops[h mod n]` at every hop (Parsimon's
//!   route model, `parsimon-core` `network.rs`, which the m3 / Parsimon workload generator
//!   calibrates on): on a cluster with an even number of spines per plane the plane and the
//!   spine come from the same `h`, so each plane uses half its spines and the fab-spine links
//!   count twice their `ecmp` share. Computed exactly over `h` modulo the least common
//!   multiple of the choice counts met on the way.

use std::collections::HashMap;

use netstep_core::network::Network;
use serde::{Deserialize, Serialize};

use super::matrix::Matrix;

/// The route model the most loaded link is found under.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum LoadModel {
    /// Independent uniform choice among equal-cost next hops at every switch.
    #[default]
    Ecmp,
    /// One hash per flow picks `next_hops[h mod n]` at every hop (Parsimon's route model).
    Parsimon,
}

/// The most loaded directed link.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Busiest {
    /// Its egress port.
    pub port: u32,
    /// The expected fraction of all flows that cross it.
    pub share: f64,
    /// Its rate, bits per second.
    pub rate_bps: f64,
}

/// Largest hash modulus the `parsimon` model follows (the choice counts' least common
/// multiple along one route).
const MAX_MODULUS: u64 = 1 << 20;

/// The expected share of all flows on each egress port of `net` (by port id).
pub(crate) fn port_shares(
    net: &Network,
    matrix: &Matrix,
    model: LoadModel,
) -> Result<Vec<f64>, String> {
    let mut shares = vec![0.0; net.n_ports()];
    // Mass entering the fabric: (first switch, or a host of several links; destination host)
    // -> probability.
    let mut entering: HashMap<(u32, u32), f64> = HashMap::new();
    for (from, to, p) in matrix.rows() {
        let inside = from == to;
        let pairs = if inside {
            (from.len() * (from.len() - 1)) as f64
        } else {
            (from.len() * to.len()) as f64
        };
        for &src in from {
            // A host of one link enters the fabric at its switch; one of several is walked
            // from itself (its route picks the port).
            let single = net.degree(src) == 1;
            let uplink = net.port_id(src, 0);
            let first = if single {
                net.port_peer[uplink as usize]
            } else {
                src
            };
            for &dst in to {
                if dst == src {
                    continue;
                }
                let mass = p / pairs;
                if single {
                    shares[uplink as usize] += mass;
                }
                *entering.entry((first, dst)).or_insert(0.0) += mass;
            }
        }
    }
    let mut hops = Vec::new();
    let mut sorted: Vec<_> = entering.into_iter().collect();
    // A fixed order, so the sums (and the run) do not depend on the map's.
    sorted.sort_unstable_by_key(|&(key, _)| key);
    for ((first, dst), mass) in sorted {
        walk(net, first, dst, mass, model, (1, 0), &mut shares, &mut hops)?;
    }
    Ok(shares)
}

/// Adds `mass` of flows at `node` towards `dst` to the ports on their routes; `(modulus,
/// residue)` is what the hops so far fixed of the flow hash (`parsimon`).
#[allow(clippy::too_many_arguments)]
fn walk(
    net: &Network,
    node: u32,
    dst: u32,
    mass: f64,
    model: LoadModel,
    (modulus, residue): (u64, u64),
    shares: &mut [f64],
    hops: &mut Vec<u32>,
) -> Result<(), String> {
    if node == dst {
        return Ok(());
    }
    hops.clear();
    net.next_hops(node, dst, hops);
    if hops.is_empty() {
        return Err(format!("node {node} has no route to host {dst}"));
    }
    let here: Vec<u32> = hops.clone();
    let n = here.len() as u64;
    match model {
        LoadModel::Ecmp => {
            for &local in &here {
                let port = net.port_id(node, local);
                shares[port as usize] += mass / n as f64;
                let next = net.port_peer[port as usize];
                walk(net, next, dst, mass / n as f64, model, (1, 0), shares, hops)?;
            }
        }
        LoadModel::Parsimon => {
            let wider = lcm(modulus, n);
            if wider > MAX_MODULUS {
                return Err(format!(
                    "the parsimon route model needs the flow hash modulo {wider} (the equal-cost choices' least common multiple); use load_model = \"ecmp\" on this topology"
                ));
            }
            let k = wider / modulus;
            for i in 0..k {
                let r = residue + i * modulus;
                let port = net.port_id(node, here[(r % n) as usize]);
                shares[port as usize] += mass / k as f64;
                let next = net.port_peer[port as usize];
                walk(
                    net,
                    next,
                    dst,
                    mass / k as f64,
                    model,
                    (wider, r),
                    shares,
                    hops,
                )?;
            }
        }
    }
    Ok(())
}

fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

/// The port with the largest share per bit per second (the first such port on ties).
pub(crate) fn busiest(net: &Network, shares: &[f64]) -> Option<Busiest> {
    let mut best: Option<Busiest> = None;
    for (port, &share) in shares.iter().enumerate() {
        if share <= 0.0 {
            continue;
        }
        let rate_bps = net.class_of(port as u32).rate.0 as f64;
        if best.is_none_or(|b| share / rate_bps > b.share / b.rate_bps) {
            best = Some(Busiest {
                port: port as u32,
                share,
                rate_bps,
            });
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use netstep_core::topology::{Cluster, ClusterLinks, LinkClass, cluster};
    use netstep_core::units::{BitsPerSec, BufferSize, Bytes, SimTime};

    /// One row from rack 0 (hosts 0, 1) to rack 2 (hosts 4, 5, the other pod): each host
    /// link carries half the flows; under `ecmp` each of the 2 x 4 fab-spine uplinks of pod
    /// 0 an eighth, under `parsimon` (one hash, 2 planes, 4 spines) plane p only uses the
    /// spines k = p mod 2: a quarter on four of them, none on the others.
    #[test]
    fn shares_under_both_models() {
        let net = cluster_net(2, 2, 2, 2, 4);
        let matrix = Matrix::from_rows([(vec![0, 1], vec![4, 5], 1.0)]).unwrap();
        let ecmp = port_shares(&net, &matrix, LoadModel::Ecmp).unwrap();
        let parsimon = port_shares(&net, &matrix, LoadModel::Parsimon).unwrap();
        for host in [0, 1] {
            assert_eq!(ecmp[net.port_id(host, 0) as usize], 0.5);
        }
        // Fabs are nodes 8 + 4 = 12..16 (pod 0: 12, 13); their spine ports are local 2..6.
        for fab in [12u32, 13] {
            for k in 0..4u32 {
                let port = net.port_id(fab, 2 + k) as usize;
                assert!(
                    (ecmp[port] - 0.125).abs() < 1e-12,
                    "ecmp fab {fab} spine {k}"
                );
                let plane = fab - 12;
                let expected = if k % 2 == plane { 0.25 } else { 0.0 };
                assert!(
                    (parsimon[port] - expected).abs() < 1e-12,
                    "parsimon fab {fab} spine {k}"
                );
            }
        }
        // Both models deliver every flow: rack 2's ToR (node 10) sends half to each host.
        for shares in [&ecmp, &parsimon] {
            for local in [0u32, 1] {
                let port = net.port_id(10, local) as usize;
                assert!((shares[port] - 0.5).abs() < 1e-12, "ToR 10 port {local}");
            }
        }
    }

    /// Inside one rack the pairs are the ordered pairs of distinct hosts.
    #[test]
    fn a_rack_to_itself_spreads_over_distinct_pairs() {
        let net = cluster_net(2, 2, 2, 2, 2);
        let matrix = Matrix::from_rows([(vec![0, 1], vec![0, 1], 1.0)]).unwrap();
        let shares = port_shares(&net, &matrix, LoadModel::Ecmp).unwrap();
        assert_eq!(shares[net.port_id(0, 0) as usize], 0.5);
        assert_eq!(shares[net.port_id(1, 0) as usize], 0.5);
        let busiest = busiest(&net, &shares).unwrap();
        assert_eq!(busiest.share, 0.5);
        assert_eq!(busiest.rate_bps, 10e9);
    }

    /// A cluster of 10 Gb/s host links and 40 Gb/s fabric links.
    fn cluster_spec(
        pods: u32,
        racks: u32,
        hosts: u32,
        fabs: u32,
        spines: u32,
    ) -> netstep_core::topology::TopologySpec {
        let class = |g: u64| {
            LinkClass::new(
                BitsPerSec(g * 1_000_000_000),
                SimTime::from_us(1),
                BufferSize::Bytes(Bytes(100_000)),
            )
        };
        let shape = Cluster {
            pods,
            racks_per_pod: racks,
            hosts_per_rack: hosts,
            fabs_per_pod: fabs,
            spines_per_plane: spines,
        };
        let links = ClusterLinks {
            host: class(10),
            tor_fab: class(40),
            fab_spine: class(40),
        };
        cluster(shape, links)
    }

    /// [`cluster_spec`], compiled.
    fn cluster_net(pods: u32, racks: u32, hosts: u32, fabs: u32, spines: u32) -> Network {
        Network::compile(&cluster_spec(pods, racks, hosts, fabs, spines)).unwrap()
    }

    /// The exact shares equal a Monte Carlo walk of each route model (flows drawn from the
    /// matrix, routed hop by hop: one hash per flow for `parsimon`, an independent choice per
    /// hop for `ecmp`) within five binomial standard errors on every port.
    #[test]
    fn shares_equal_a_monte_carlo_walk_of_the_route_model() {
        use rand::{Rng, RngExt, SeedableRng};
        let net = cluster_net(2, 3, 2, 2, 4);
        // Racks r = 0..6 hold hosts 2r, 2r + 1; weights over rack pairs, diagonal included.
        let rack = |r: u32| vec![2 * r, 2 * r + 1];
        let mut rows = Vec::new();
        for a in 0..6u32 {
            for b in 0..6u32 {
                rows.push((rack(a), rack(b), ((a * 7 + b * 3) % 5) as f64));
            }
        }
        let matrix = Matrix::from_rows(rows).unwrap();
        let mut rng = rand_pcg::Pcg64Mcg::seed_from_u64(7);
        let n = 200_000;
        for model in [LoadModel::Ecmp, LoadModel::Parsimon] {
            let exact = port_shares(&net, &matrix, model).unwrap();
            let mut counts = vec![0u64; net.n_ports()];
            let mut hops = Vec::new();
            for _ in 0..n {
                let (src, dst) = matrix.draw(&mut rng);
                let hash = rng.next_u64();
                let mut node = src;
                while node != dst {
                    hops.clear();
                    net.next_hops(node, dst, &mut hops);
                    let pick = match model {
                        LoadModel::Parsimon => hash % hops.len() as u64,
                        LoadModel::Ecmp => rng.random_range(0..hops.len() as u64),
                    };
                    let port = net.port_id(node, hops[pick as usize]);
                    counts[port as usize] += 1;
                    node = net.port_peer[port as usize];
                }
            }
            for (port, (&c, &p)) in counts.iter().zip(&exact).enumerate() {
                let measured = c as f64 / n as f64;
                let se = (p * (1.0 - p) / n as f64).sqrt();
                assert!(
                    (measured - p).abs() <= 5.0 * se + 1e-9,
                    "{model:?} port {port}: exact {p}, Monte Carlo {measured} (se {se})"
                );
            }
        }
    }

    /// m3's Matrix A on its 4:1 and 2:1 clusters (`datasets/m3_matrix_a.csv`): under
    /// `parsimon` the busiest link of the 4:1 cluster is a fab-to-spine link with 6.369 % of
    /// the flows (each plane uses half its 4 spines), under `ecmp` a ToR-to-host link with
    /// 0.905 %; on the 2:1 cluster both find that ToR-to-host link. The values are those of an
    /// independent Python model of Parsimon's routes (m3's fig-8 mixes 20 and 15).
    #[test]
    fn matrix_a_busiest_links_under_both_models() {
        let file =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/m3_matrix_a.csv");
        for (spines, model, share, rate) in [
            (4, LoadModel::Parsimon, 0.063_692_961_126_148_45, 40e9),
            (4, LoadModel::Ecmp, 0.009_052_993_309_700_143, 10e9),
            (8, LoadModel::Parsimon, 0.009_052_993_309_700_143, 10e9),
        ] {
            let spec = cluster_spec(2, 16, 8, 2, spines);
            let names = super::super::common::node_names(&spec);
            let table = crate::table_file::TableFile::open(&file, "m3_matrix_a.csv").unwrap();
            let matrix = Matrix::read(&table, &names, &spec).unwrap();
            let net = Network::compile(&spec).unwrap();
            let shares = port_shares(&net, &matrix, model).unwrap();
            let b = busiest(&net, &shares).unwrap();
            assert!(
                (b.share - share).abs() < 1e-12,
                "{spines} spines, {model:?}: {b:?}"
            );
            assert_eq!(b.rate_bps, rate, "{spines} spines, {model:?}");
        }
    }
}

//! Load balancing: how a switch picks one of the equal-cost next hops of a packet.
//!
//! Modes (`[routing] mode` in a scenario):
//! - [`LoadBalancing::Ecmp`]: per-flow hash (one path per flow and direction), the default;
//! - [`LoadBalancing::SprayRandom`]: per-packet, a keyed hash of the packet id, direction, node
//!   and seed (a random choice that every engine and thread count reproduces);
//! - [`LoadBalancing::SprayRoundRobin`]: per-packet, the next port of the switch's round-robin
//!   counter for that set of next hops;
//! - [`LoadBalancing::Flowlet`]: per-flowlet (Kandula et al., "Dynamic load balancing without
//!   packet reordering", CCR 2007; CONGA's flowlet switching): a flow keeps its port while its
//!   packets come closer together than `gap`; after a longer pause it draws a new port;
//! - [`LoadBalancing::Adaptive`]: per-packet, the least-loaded next hop at this switch (DRILL,
//!   Ghorbani et al. 2017, with every port sampled): the one whose transmitter frees earliest
//!   counting what waits in its queue (drain time, so faster links count as less loaded); ties
//!   go to the first in the flow's hash order.
//!
//! `weighted` (WCMP, Zhou et al., EuroSys 2014) weights the hash-based choices (ECMP, random
//! spraying, flowlets) by the next hops' link rates. All state is per switch and evolves in
//! event order, so every mode is exact and thread-invariant.

use std::collections::HashMap;

use crate::network::{Network, ecmp_hash};
use crate::packet::Packet;
use crate::topology::pick as pick_index;
use crate::units::SimTime;

/// Load-balancing mode of every switch.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LoadBalancing {
    /// Per-flow hash.
    #[default]
    Ecmp,
    /// Per-packet keyed random choice.
    SprayRandom,
    /// Per-packet round robin.
    SprayRoundRobin,
    /// Per-flowlet hash: a new choice after an idle gap longer than `gap`.
    Flowlet {
        /// Idle time after which a flow may change path.
        gap: SimTime,
    },
    /// Per-packet least drain time.
    Adaptive,
}

/// Load-balancing settings.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BalanceSpec {
    /// How a next hop is chosen.
    pub mode: LoadBalancing,
    /// Weight hash-based choices by link rate (WCMP).
    pub weighted: bool,
}

impl BalanceSpec {
    /// True for plain per-flow ECMP (the engine's fast path).
    pub const fn is_plain_ecmp(&self) -> bool {
        matches!(self.mode, LoadBalancing::Ecmp) && !self.weighted
    }
}

/// Per-switch state of the stateful modes (allocated on a switch's first balanced packet).
#[derive(Clone, Debug, Default)]
pub struct BalanceState {
    /// Scratch list of candidate ports.
    pub candidates: Vec<u32>,
    /// Round-robin counter per set of next hops (keyed by the set's first port and size).
    round_robin: HashMap<(u32, u32), u64>,
    /// Flowlets: per (flow, direction) the time of its last packet here, its port and the
    /// number of flowlets it has started here.
    flowlets: HashMap<(u32, bool), Flowlet>,
}

#[derive(Clone, Copy, Debug)]
struct Flowlet {
    last: SimTime,
    port: u32,
    count: u64,
}

/// What the adaptive mode needs to know about one local port: when its transmitter frees and
/// how long what waits in its queue takes to send.
pub trait PortLoad {
    /// Time at which local port `local` could start a new packet if it were offered now.
    fn drain_time(&self, local: u32, now: SimTime) -> SimTime;
}

/// Mixes `key` with `salt` (splitmix64 finalizer).
#[inline]
fn mix(key: u64, salt: u64) -> u64 {
    crate::rng::mix64(key ^ salt.wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// Picks among `candidates` (non-empty) with `hash`, uniformly or in proportion to the
/// link rates of the ports.
fn pick(net: &Network, node: u32, candidates: &[u32], hash: u64, weighted: bool) -> u32 {
    if !weighted {
        return candidates[pick_index(hash, candidates.len() as u32) as usize];
    }
    let rate = |l: u32| net.class_of(net.port_id(node, l)).rate.0 as u128;
    let total: u128 = candidates.iter().map(|&l| rate(l)).sum();
    // A point in [0, total) from the hash's 64 bits, then the port whose share holds it.
    let mut point = (hash as u128 * total) >> 64;
    for &l in candidates {
        let w = rate(l);
        if point < w {
            return l;
        }
        point -= w;
    }
    *candidates.last().expect("non-empty")
}

impl BalanceState {
    /// The egress port (local) of `packet` at switch `node` under `spec`, or `None` when there
    /// is no route; `next_hops` appends the equal-cost candidates (e.g.
    /// [`Network::next_hops`]).
    #[allow(clippy::too_many_arguments)]
    pub fn choose(
        &mut self,
        spec: &BalanceSpec,
        net: &Network,
        node: u32,
        packet: &Packet,
        now: SimTime,
        seed: u64,
        load: &impl PortLoad,
        next_hops: impl FnOnce(&mut Vec<u32>),
    ) -> Option<u32> {
        let reverse = packet.kind.is_feedback();
        self.candidates.clear();
        next_hops(&mut self.candidates);
        let candidates = &self.candidates;
        match candidates.len() {
            0 => return None,
            1 => return Some(candidates[0]),
            _ => {}
        }
        let flow_hash = ecmp_hash(packet.flow, reverse, node);
        let port = match spec.mode {
            LoadBalancing::Ecmp => pick(net, node, candidates, flow_hash, spec.weighted),
            LoadBalancing::SprayRandom => {
                let key = packet.id() ^ ((reverse as u64) << 63);
                let hash = mix(key, mix(node as u64, seed));
                pick(net, node, candidates, hash, spec.weighted)
            }
            LoadBalancing::SprayRoundRobin => {
                let counter = self
                    .round_robin
                    .entry((candidates[0], candidates.len() as u32))
                    .or_insert(0);
                let port = candidates[(*counter % candidates.len() as u64) as usize];
                *counter += 1;
                port
            }
            LoadBalancing::Flowlet { gap } => {
                let entry = self.flowlets.entry((packet.flow, reverse));
                match entry {
                    std::collections::hash_map::Entry::Occupied(mut e) => {
                        let f = e.get_mut();
                        if now.0.saturating_sub(f.last.0) > gap.0 {
                            f.count += 1;
                            let hash = mix(flow_hash, mix(f.count, seed));
                            f.port = pick(net, node, candidates, hash, spec.weighted);
                        }
                        f.last = now;
                        f.port
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let port = pick(net, node, candidates, flow_hash, spec.weighted);
                        e.insert(Flowlet {
                            last: now,
                            port,
                            count: 0,
                        });
                        port
                    }
                }
            }
            LoadBalancing::Adaptive => {
                // Scan in the flow's hash order from its ECMP choice so ties spread flows.
                let n = candidates.len();
                let start = pick_index(flow_hash, n as u32) as usize;
                let mut best = candidates[start];
                let mut best_time = load.drain_time(best, now);
                for i in 1..n {
                    let l = candidates[(start + i) % n];
                    let t = load.drain_time(l, now);
                    if t < best_time {
                        best = l;
                        best_time = t;
                    }
                }
                best
            }
        };
        Some(port)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::topology::{FatTree, LinkClass, fat_tree, leaf_spine};
    use crate::units::{BitsPerSec, BufferSize};

    fn class() -> LinkClass {
        LinkClass::new(
            BitsPerSec(10_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        )
    }

    /// FatTree k = 4: hosts 0-15, edges 16-23 (uplinks are local ports 2 and 3).
    fn net() -> Network {
        Network::compile(&fat_tree(
            FatTree {
                k: 4,
                hosts_per_edge: 2,
            },
            class(),
            class(),
        ))
        .unwrap()
    }

    /// Drain times by local port.
    struct Loads(Vec<u64>);
    impl PortLoad for Loads {
        fn drain_time(&self, local: u32, now: SimTime) -> SimTime {
            SimTime(now.0 + self.0[local as usize])
        }
    }

    fn packet(flow: u32, number: u32) -> Packet {
        Packet::new(PacketKind::Data, flow, number, number, 15, 1500)
    }

    fn spec(mode: LoadBalancing) -> BalanceSpec {
        BalanceSpec {
            mode,
            weighted: false,
        }
    }

    #[test]
    fn next_hops_hold_every_routing_choice() {
        let leaf_spine_net = Network::compile(&leaf_spine(3, 4, 2, class(), class())).unwrap();
        for net in [net(), leaf_spine_net] {
            let mut hops = Vec::new();
            for node in 0..net.n_nodes() as u32 {
                for dst in (0..net.n_nodes() as u32).filter(|&d| net.degree(d) == 1 && d != node) {
                    hops.clear();
                    net.next_hops(node, dst, &mut hops);
                    for hash in [0, 1 << 40, u64::MAX / 3, u64::MAX] {
                        let port = net.route(node, dst, hash).unwrap();
                        assert!(
                            hops.contains(&port),
                            "{node} -> {dst}: {port} not in {hops:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn adaptive_takes_the_least_drain_time_and_rotates_ties_from_the_flow_hash() {
        let net = net();
        let mut state = BalanceState::default();
        let adaptive = spec(LoadBalancing::Adaptive);
        let now = SimTime(1000);
        // Edge switch 16 towards host 15 (another pod): uplinks 2 and 3.
        let choose = |state: &mut BalanceState, flow: u32, loads: Vec<u64>| {
            state
                .choose(
                    &adaptive,
                    &net,
                    16,
                    &packet(flow, 0),
                    now,
                    1,
                    &Loads(loads),
                    |v| net.next_hops(16, 15, v),
                )
                .unwrap()
        };
        assert_eq!(choose(&mut state, 0, vec![0, 0, 500, 20]), 3);
        assert_eq!(choose(&mut state, 0, vec![0, 0, 20, 500]), 2);
        // Equal loads: the flow's ECMP port (the scan starts there).
        for flow in 0..20 {
            let ecmp = net.route(16, 15, ecmp_hash(flow, false, 16)).unwrap();
            assert_eq!(choose(&mut state, flow, vec![0, 0, 7, 7]), ecmp);
        }
    }

    #[test]
    fn round_robin_cycles_and_flowlets_hold_within_the_gap() {
        let net = net();
        let loads = Loads(vec![0; 4]);
        let mut state = BalanceState::default();
        let rr = spec(LoadBalancing::SprayRoundRobin);
        let picks: Vec<u32> = (0..6)
            .map(|n| {
                state
                    .choose(
                        &rr,
                        &net,
                        16,
                        &packet(n % 2, n),
                        SimTime(0),
                        1,
                        &loads,
                        |v| net.next_hops(16, 15, v),
                    )
                    .unwrap()
            })
            .collect();
        assert_eq!(picks, [2, 3, 2, 3, 2, 3]);
        let flowlet = spec(LoadBalancing::Flowlet {
            gap: SimTime::from_us(10),
        });
        let mut state = BalanceState::default();
        let mut at = |t_us: u64| {
            state
                .choose(
                    &flowlet,
                    &net,
                    16,
                    &packet(4, 0),
                    SimTime::from_us(t_us),
                    1,
                    &loads,
                    |v| net.next_hops(16, 15, v),
                )
                .unwrap()
        };
        let first = at(0);
        assert_eq!(first, net.route(16, 15, ecmp_hash(4, false, 16)).unwrap());
        // Gaps of at most 10 us keep the port, however long the flowlet lasts.
        for t in (10..200).step_by(10) {
            assert_eq!(at(t), first);
        }
        // After longer gaps the port is drawn again: both ports show up.
        let redrawn: std::collections::BTreeSet<u32> = (1..40).map(|i| at(200 + 11 * i)).collect();
        assert_eq!(redrawn.len(), 2, "{redrawn:?}");
    }
}

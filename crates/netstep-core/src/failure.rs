//! Link failures: links that go down and come back up at given times.
//!
//! The schedule is known before the run, so every logical process can tell the state of any
//! link at any time without messages (an idealized control plane that reconverges at the
//! instant of each change): the run is exact and thread-invariant like any other.
//!
//! - **Routing.** The run is cut into epochs at every down and up time. In an epoch with a
//!   dead link every topology routes by shortest paths over the live links (tables rebuilt for
//!   the epoch, ECMP over the surviving equal-cost next hops, the topology's own hash pick);
//!   in an epoch with every link up the topology's own routing applies. Where no live route
//!   is left (a host whose only link is down) the topology's own route is taken, towards the
//!   dead link, so the packet is lost there as `link_down` instead of vanishing.
//! - **Loss.** A packet whose transmission starts on a dead link, or that is still on the
//!   wire when its link goes down (it would arrive after the down time), is lost with reason
//!   `link_down`. Packets queued at a port whose link died drain into it and are lost.

use crate::network::{Network, Routing, ShortestPathTables};
use crate::units::SimTime;

/// One link's outage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkFailure {
    /// Global port of one end of the link.
    pub port_a: u32,
    /// Global port of the other end.
    pub port_b: u32,
    /// The link stops carrying packets at this time.
    pub down: SimTime,
    /// It carries packets again from this time (`None`: never).
    pub up: Option<SimTime>,
}

/// Routing of one epoch with at least one dead link.
#[derive(Clone, Debug)]
struct Epoch {
    start: SimTime,
    /// Dead ports (by global port) in this epoch; empty when every link is up.
    dead: Vec<bool>,
    tables: Option<ShortestPathTables>,
}

/// The failure schedule of a run, with each epoch's routing.
#[derive(Clone, Debug)]
pub struct FailureSchedule {
    failures: Vec<LinkFailure>,
    /// `(global port, failure index)` for both ends of every failure, sorted: the loss check
    /// on a transmission looks at its own port's outages only.
    by_port: Vec<(u32, u32)>,
    /// Epochs in time order; the first starts at 0.
    epochs: Vec<Epoch>,
}

impl FailureSchedule {
    /// Builds the schedule and each epoch's routing over `net`.
    pub fn new(net: &Network, failures: Vec<LinkFailure>) -> FailureSchedule {
        let mut times: Vec<SimTime> = failures
            .iter()
            .flat_map(|f| std::iter::once(f.down).chain(f.up))
            .collect();
        times.push(SimTime::ZERO);
        times.sort();
        times.dedup();
        let mut epochs: Vec<Epoch> = Vec::with_capacity(times.len());
        for &start in &times {
            let mut dead = vec![false; net.n_ports()];
            let mut any = false;
            for f in &failures {
                if f.down <= start && f.up.is_none_or(|up| start < up) {
                    dead[f.port_a as usize] = true;
                    dead[f.port_b as usize] = true;
                    any = true;
                }
            }
            if !any {
                dead.clear();
            }
            // Consecutive epochs with the same dead set share one entry.
            if epochs.last().is_some_and(|e| e.dead == dead) {
                continue;
            }
            let tables = any.then(|| ShortestPathTables::build(net, &dead));
            epochs.push(Epoch {
                start,
                dead,
                tables,
            });
        }
        let mut by_port: Vec<(u32, u32)> = failures
            .iter()
            .enumerate()
            .flat_map(|(i, f)| [(f.port_a, i as u32), (f.port_b, i as u32)])
            .collect();
        by_port.sort_unstable();
        FailureSchedule {
            failures,
            by_port,
            epochs,
        }
    }

    /// The failures.
    pub fn failures(&self) -> &[LinkFailure] {
        &self.failures
    }

    fn epoch(&self, now: SimTime) -> &Epoch {
        let i = self.epochs.partition_point(|e| e.start <= now);
        &self.epochs[i.saturating_sub(1)]
    }

    /// Start times of the epochs in which some link is down (each has its own routing).
    pub fn rerouted_epochs(&self) -> impl Iterator<Item = SimTime> + '_ {
        self.epochs
            .iter()
            .filter(|e| e.tables.is_some())
            .map(|e| e.start)
    }

    /// True when some link is down at `now` (routing then avoids dead links).
    pub fn rerouting(&self, now: SimTime) -> bool {
        self.epoch(now).tables.is_some()
    }

    /// Appends the live equal-cost next hops at `node` towards host `dst` at `now`; the
    /// topology's own next hops when every link is up or no live route is left (the packet is
    /// then lost on the dead link it is sent towards).
    pub fn next_hops(&self, net: &Network, node: u32, dst: u32, now: SimTime, out: &mut Vec<u32>) {
        let epoch = self.epoch(now);
        let before = out.len();
        if let Some(tables) = &epoch.tables {
            tables.live_next_hops(net, node, dst, &epoch.dead, out);
        }
        if out.len() == before {
            // No live route (or every link up): the topology's own next hops; a packet sent
            // towards a dead link is lost there.
            net.next_hops(node, dst, out);
        }
    }

    /// The port per-flow ECMP picks at `now` with flow hash `hash` among the live next hops;
    /// the topology's own choice when no live route is left.
    pub fn route(
        &self,
        net: &Network,
        node: u32,
        dst: u32,
        hash: u64,
        now: SimTime,
        scratch: &mut Vec<u32>,
    ) -> Option<u32> {
        let epoch = self.epoch(now);
        let Some(tables) = &epoch.tables else {
            return net.route(node, dst, hash);
        };
        scratch.clear();
        tables.live_next_hops(net, node, dst, &epoch.dead, scratch);
        let n = scratch.len() as u64;
        if n == 0 {
            // No live route: the topology's own choice, towards the dead link.
            return net.route(node, dst, hash);
        }
        // The topology's own pick: multiply-shift for a FatTree, modulo otherwise.
        let i = if matches!(net.routing, Routing::FatTree(_)) {
            crate::topology::pick(hash, n as u32) as u64
        } else {
            hash % n
        };
        Some(scratch[i as usize])
    }

    /// True when a packet whose transmission on global port `port` starts at `start` and
    /// whose last bit arrives at `arrival` is lost: the link is down at `start` or goes down
    /// before `arrival`.
    pub fn lost(&self, port: u32, start: SimTime, arrival: SimTime) -> bool {
        let first = self.by_port.partition_point(|&(p, _)| p < port);
        self.by_port[first..]
            .iter()
            .take_while(|&&(p, _)| p == port)
            .any(|&(_, i)| {
                let f = &self.failures[i as usize];
                f.down <= arrival && f.up.is_none_or(|up| start < up)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FatTree, LinkClass, fat_tree};
    use crate::units::{BitsPerSec, BufferSize};

    fn net() -> Network {
        let class = LinkClass::new(
            BitsPerSec(10_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        );
        Network::compile(&fat_tree(
            FatTree {
                k: 4,
                hosts_per_edge: 2,
            },
            class,
            class,
        ))
        .unwrap()
    }

    #[test]
    fn groups_shrink_while_a_link_is_down_and_recover() {
        let net = net();
        // Edge switch 16 (pod 0) uplink local 2 fails from 10 to 20 us.
        let port_a = net.port_id(16, 2);
        let peer = net.port_peer[port_a as usize];
        let port_b = net.port_id(peer, net.port_towards(peer, 16).unwrap());
        let schedule = FailureSchedule::new(
            &net,
            vec![LinkFailure {
                port_a,
                port_b,
                down: SimTime::from_us(10),
                up: Some(SimTime::from_us(20)),
            }],
        );
        let hops = |t: u64| {
            let mut v = Vec::new();
            schedule.next_hops(&net, 16, 15, SimTime::from_us(t), &mut v);
            v
        };
        assert_eq!(hops(0), [2, 3]);
        assert_eq!(hops(10), [3]);
        assert_eq!(hops(19), [3]);
        assert_eq!(hops(20), [2, 3]);
        let mut scratch = Vec::new();
        for hash in [0, u64::MAX / 2, u64::MAX] {
            let mut at = |t| schedule.route(&net, 16, 15, hash, SimTime::from_us(t), &mut scratch);
            assert_eq!(at(15), Some(3));
            // With every link up the topology's own choice.
            assert_eq!(at(5), net.route(16, 15, hash));
        }
        // Loss: on the wire across the down time, or started while down.
        assert!(!schedule.lost(port_a, SimTime::from_us(1), SimTime::from_us(9)));
        assert!(schedule.lost(port_a, SimTime::from_us(9), SimTime::from_us(11)));
        assert!(schedule.lost(port_b, SimTime::from_us(15), SimTime::from_us(16)));
        assert!(!schedule.lost(port_a, SimTime::from_us(20), SimTime::from_us(21)));
    }
}

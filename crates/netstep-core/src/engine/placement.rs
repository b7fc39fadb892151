//! Which chunk each LP lives in, chosen by the topology so that most messages stay inside a
//! chunk (and so inside one thread).
//!
//! A message between chunks run by different threads costs the receiving core a cache miss
//! on each message and the sending core another when it reuses the buffer; dealing nodes to
//! chunks round robin sent about half of all messages across threads. So the placement
//! follows the hosts:
//!
//! 1. Every host is *anchored* at the switch it is attached to (its top-of-rack, edge or leaf
//!    switch; a host cabled to another host is anchored at the smaller of the two ids).
//!    Anchors, in the order of their first host, each amid its hosts, are laid out in a line
//!    that is cut into equal runs, one per chunk: a pod's or a leaf's hosts and switch share
//!    a chunk, consecutive chunks hold consecutive hosts, and a switch with more hosts than a
//!    chunk's share (a star) has them spread over several chunks.
//! 2. The other switches, layer by layer outwards from the anchors (breadth first): a switch
//!    whose placed neighbours all live in one chunk joins it (a FatTree pod's aggregation
//!    switches go with its edge switches); one that links several chunks (a spine, a core
//!    switch) is dealt round robin, so every chunk gets a share of the top tier.
//! 3. Nodes no host reaches, round robin.
//! 4. The members of a link group ([`super::groups`]) move to the chunk of the group's first
//!    node: a group runs as one sequential simulation, in one chunk.
//!
//! Where an LP lives never changes a result (chunks are independent within a window); it
//! changes only which messages cross threads.

use super::groups::LinkGroups;
use crate::network::Network;
use crate::topology::NodeKind;

/// Where one node's LP lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Place {
    /// Chunk index.
    pub(super) chunk: u32,
    /// Slot within the chunk.
    pub(super) slot: u32,
}

/// Every node's chunk and slot.
#[derive(Clone, Debug)]
pub(super) struct Placement {
    /// One chunk, node `n` in slot `n`: no table to read.
    single: bool,
    /// Per node (empty when `single`).
    at: Vec<Place>,
}

/// Not yet placed.
const UNSET: u32 = u32::MAX;

impl Placement {
    /// Places the nodes of `net` into `n_chunks` chunks (see the module docs); returns the
    /// placement and, per chunk, the node in each slot (which the chunks keep).
    pub(super) fn new(
        net: &Network,
        n_chunks: usize,
        groups: Option<&LinkGroups>,
    ) -> (Placement, Vec<Vec<u32>>) {
        let n = net.n_nodes();
        if n_chunks <= 1 {
            let placement = Placement {
                single: true,
                at: Vec::new(),
            };
            return (placement, vec![(0..n as u32).collect()]);
        }
        let mut chunk_of = chunk_of_nodes(net, n_chunks);
        if let Some(groups) = groups {
            keep_groups_whole(groups, &mut chunk_of);
        }
        let mut nodes = vec![Vec::new(); n_chunks];
        let at = chunk_of
            .iter()
            .enumerate()
            .map(|(node, &chunk)| {
                let slots = &mut nodes[chunk as usize];
                slots.push(node as u32);
                Place {
                    chunk,
                    slot: slots.len() as u32 - 1,
                }
            })
            .collect();
        (Placement { single: false, at }, nodes)
    }

    /// Where `node` lives.
    #[inline]
    pub(super) fn of(&self, node: u32) -> Place {
        if self.single {
            Place {
                chunk: 0,
                slot: node,
            }
        } else {
            self.at[node as usize]
        }
    }
}

/// Moves every member of a link group ([`super::groups`]) to the chunk of its group's first
/// node: a group runs as one sequential simulation, in one chunk.
fn keep_groups_whole(groups: &LinkGroups, chunk_of: &mut [u32]) {
    let mut home = vec![UNSET; groups.count as usize];
    for (node, chunk) in chunk_of.iter_mut().enumerate() {
        if let Some(g) = groups.group(node as u32) {
            if home[g as usize] == UNSET {
                home[g as usize] = *chunk;
            }
            *chunk = home[g as usize];
        }
    }
}

/// The neighbours of `node` (the far ends of its ports).
fn neighbours(net: &Network, node: u32) -> &[u32] {
    let from = net.port_offset[node as usize] as usize;
    let to = net.port_offset[node as usize + 1] as usize;
    &net.port_peer[from..to]
}

/// Each node's chunk, `0..n_chunks` (see the module docs).
fn chunk_of_nodes(net: &Network, n_chunks: usize) -> Vec<u32> {
    let n = net.n_nodes();
    let mut chunk = vec![UNSET; n];
    // 1. Anchors in the order of their first host, each with its hosts.
    let mut anchor_index = vec![UNSET; n];
    let mut anchors: Vec<(u32, Vec<u32>)> = Vec::new();
    for host in 0..n as u32 {
        if net.node_kind[host as usize] != NodeKind::Host {
            continue;
        }
        let anchor = match neighbours(net, host).first() {
            Some(&peer) if net.node_kind[peer as usize] == NodeKind::Switch => peer,
            Some(&peer) => peer.min(host),
            None => host,
        };
        if anchor_index[anchor as usize] == UNSET {
            anchor_index[anchor as usize] = anchors.len() as u32;
            anchors.push((anchor, Vec::new()));
        }
        if anchor != host {
            anchors[anchor_index[anchor as usize] as usize].1.push(host);
        }
    }
    // Lay the anchors and their hosts out in a line (each anchor amid its hosts) and cut it
    // into `n_chunks` equal runs: an anchor smaller than a run stays whole (but for one that
    // straddles a cut), a larger one (a single switch with every host) is spread.
    let total: usize = anchors.iter().map(|(_, hosts)| hosts.len() + 1).sum();
    let at = |position: usize| (position * n_chunks / total.max(1)).min(n_chunks - 1) as u32;
    let mut before = 0;
    for (anchor, hosts) in &anchors {
        for (i, &h) in hosts.iter().enumerate() {
            chunk[h as usize] = at(before + i);
        }
        chunk[*anchor as usize] = at(before + hosts.len() / 2);
        before += hosts.len() + 1;
    }
    // 2. Outwards from the anchors, a layer at a time; each layer decided from the layers
    // before it only, so the order within a layer does not matter.
    let mut round_robin = 0u32;
    let mut deal = || {
        let c = round_robin % n_chunks as u32;
        round_robin += 1;
        c
    };
    let mut layer: Vec<u32> = anchors.iter().map(|&(anchor, _)| anchor).collect();
    let mut next = Vec::new();
    let mut seen = vec![false; n];
    for &a in &layer {
        seen[a as usize] = true;
    }
    loop {
        next.clear();
        for &node in &layer {
            for &peer in neighbours(net, node) {
                if chunk[peer as usize] == UNSET && !seen[peer as usize] {
                    seen[peer as usize] = true;
                    next.push(peer);
                }
            }
        }
        if next.is_empty() {
            break;
        }
        next.sort_unstable();
        let decided: Vec<u32> = next
            .iter()
            .map(|&node| {
                let mut placed = neighbours(net, node)
                    .iter()
                    .map(|&p| chunk[p as usize])
                    .filter(|&c| c != UNSET);
                let first = placed.next().expect("reached from a placed neighbour");
                if placed.all(|c| c == first) {
                    first
                } else {
                    UNSET
                }
            })
            .collect();
        for (&node, &c) in next.iter().zip(&decided) {
            chunk[node as usize] = if c == UNSET { deal() } else { c };
        }
        std::mem::swap(&mut layer, &mut next);
    }
    // 3. What no host reaches.
    for c in chunk.iter_mut().filter(|c| **c == UNSET) {
        *c = deal();
    }
    chunk
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{FatTree, LinkClass, fat_tree};
    use crate::units::{BitsPerSec, BufferSize, SimTime};

    fn fat_tree_net(k: u32) -> Network {
        let link = LinkClass::new(
            BitsPerSec(10_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        );
        let spec = fat_tree(
            FatTree {
                k,
                hosts_per_edge: k / 2,
            },
            link,
            link,
        );
        Network::compile(&spec).expect("compiles")
    }

    /// A FatTree's pods stay whole (hosts, edge and aggregation switches in one chunk), the
    /// core switches are spread evenly, and every node has one place.
    #[test]
    fn fat_tree_pods_stay_whole_and_cores_spread() {
        let k = 8;
        let net = fat_tree_net(k);
        let (placement, nodes) = Placement::new(&net, 4, None);
        let n = net.n_nodes();
        let mut seen = vec![false; n];
        for (c, nodes) in nodes.iter().enumerate() {
            for (slot, &node) in nodes.iter().enumerate() {
                assert!(!seen[node as usize], "node {node} placed once");
                seen[node as usize] = true;
                assert_eq!(
                    placement.of(node),
                    Place {
                        chunk: c as u32,
                        slot: slot as u32
                    }
                );
            }
        }
        assert!(seen.iter().all(|&s| s), "every node placed");
        // Cross-chunk links: only aggregation-core links, since pods stay whole.
        let mut crossing = 0;
        let mut core_per_chunk = [0; 4];
        for node in 0..n as u32 {
            let here = placement.of(node).chunk;
            let mut neighbours_elsewhere = 0;
            for &peer in neighbours(&net, node) {
                if placement.of(peer).chunk != here {
                    neighbours_elsewhere += 1;
                }
            }
            crossing += neighbours_elsewhere;
            // A core switch: two hops from every host.
            let is_host = |n: u32| net.node_kind[n as usize] == NodeKind::Host;
            let has_hosts = |n: u32| neighbours(&net, n).iter().any(|&p| is_host(p));
            let is_core = !is_host(node)
                && !has_hosts(node)
                && neighbours(&net, node).iter().all(|&p| !has_hosts(p));
            if is_core {
                core_per_chunk[here as usize] += 1;
            }
        }
        // (k/2)^2 cores with k links each, of which 3/4 lead to pods in other chunks (two
        // pods per chunk), counted from both ends.
        let cores = (k / 2) * (k / 2);
        assert_eq!(crossing, 2 * cores * k * 3 / 4);
        assert_eq!(core_per_chunk, [cores / 4; 4]);
        // One chunk, no table.
        let (single, nodes) = Placement::new(&net, 1, None);
        assert_eq!(single.of(17), Place { chunk: 0, slot: 17 });
        assert_eq!(nodes, vec![(0..n as u32).collect::<Vec<_>>()]);
    }

    /// A switch with more hosts than a chunk's share has them spread over the chunks, so a
    /// star-like topology still keeps every thread busy; the chunks stay even.
    #[test]
    fn a_switch_with_most_hosts_is_spread() {
        let link = LinkClass::new(
            BitsPerSec(10_000_000_000),
            SimTime::from_us(1),
            BufferSize::Packets(10),
        );
        // 60 hosts on `sl` (node 64), 4 on `sr` (node 65).
        let net =
            Network::compile(&crate::topology::dumbbell(60, 4, link, link)).expect("compiles");
        let (placement, nodes) = Placement::new(&net, 4, None);
        let mut left_hosts_in = [0; 4];
        for host in 0..60 {
            left_hosts_in[placement.of(host).chunk as usize] += 1;
        }
        assert!(left_hosts_in.iter().all(|&h| h >= 10), "{left_hosts_in:?}");
        for (c, nodes) in nodes.iter().enumerate() {
            let len = nodes.len();
            assert!((14..=19).contains(&len), "chunk {c}: {len} nodes");
        }
        // The small switch stays with its hosts.
        let sr = placement.of(65).chunk;
        assert!((60..64).all(|h| placement.of(h).chunk == sr));
    }
}

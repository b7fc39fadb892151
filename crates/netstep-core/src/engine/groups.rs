//! Groups of nodes joined by short links, run as one sequential simulation inside each
//! window, so that the window spans the lookahead of the links between groups.
//!
//! The window is the smallest lookahead over all links. Where one class of links is much
//! shorter than the rest (SimAI's fabrics: 25 ns NVLink inside a server, 500 ns NIC links
//! between servers), those links set a window so narrow that each LP handles about one event
//! per window, and every window walks every LP's state: at 1,024 GPUs the working set no
//! longer fits the caches and a packet-hop costs 2.8x what it does at 128 GPUs
//! (`benches/RESULTS.md`, "Short links grouped"). So the nodes joined by the shortest links
//! form a *group* (a server's GPUs and NVSwitch); the window becomes the smallest lookahead
//! of the links *between* groups, and inside a window a group's LPs run as one sequential
//! simulation: an event one member sends another is pushed into that member's queue at once
//! (not at the barrier), and the members take turns by time.
//!
//! Exactness is unchanged. Every LP still handles its own events in key order, each exactly
//! once: a member runs its events before `min(bound, threshold)`, where the threshold is
//! the earliest time any other member could still make it an event (that member's next event
//! plus the smallest link lookahead, lowered whenever the running member sends one); events
//! to other groups are at least the window's width ahead, as before. Which LP runs first
//! within a window never changes a result (the window engine's invariant), so the outputs
//! equal an ungrouped run's (`tests/suite/differential.rs` runs both).
//!
//! Groups are formed only when they pay and stay small: the shortest class of links must be
//! less than half the next one, and no group may exceed [`MAX_GROUP`] nodes; quantized
//! windows never group, and by default neither do networks smaller than
//! [`GROUP_FROM_NODES`], where the walk over every LP still fits the caches
//! and the members' turns cost more than they save.

use super::chunk::SideMessage;
use super::event::Event;
use super::lp_queue::LpQueue;
use super::placement::Place;
use crate::network::Network;
use crate::units::{Bytes, SimTime};

/// Whether the engine forms link groups ([`super::groups`]) in exact windows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grouping {
    /// In networks of at least [`GROUP_FROM_NODES`] nodes.
    Auto,
    /// Wherever groups form.
    Always,
    /// Never.
    Never,
}

/// The smallest network [`Grouping::Auto`] groups. Groups pay where every window's walk over
/// every LP's state outgrows the caches, and cost where it does not (the members take many
/// short turns, and the busiest member's sorted queue holds more events, each push moving
/// the earlier ones). Measured on GPT-13B TP8
/// (`benches/RESULTS.md`, "Short links grouped"): at 1,232 nodes (1,024 GPUs) 1.77x faster
/// on the whole iteration; at 144 nodes (128 GPUs) 0.87-0.92x. Between the two the crossover
/// is not measured.
pub const GROUP_FROM_NODES: usize = 1024;

/// The largest group: a group is one LP's worth of sequential work, so a large one would
/// serialize the window.
pub const MAX_GROUP: usize = 64;

/// Marks a node in no group.
pub(super) const NO_GROUP: u32 = u32::MAX;

/// The groups of a network and the window they allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinkGroups {
    /// Per node: its group, or [`NO_GROUP`].
    pub(super) group_of: Vec<u32>,
    /// Number of groups.
    pub count: u32,
    /// Smallest lookahead of the links between groups (and of every link of a node in no
    /// group): the window.
    pub lookahead: SimTime,
    /// Smallest lookahead of any link: the least time between an event a member handles and
    /// one it makes another member.
    pub inner: SimTime,
}

impl LinkGroups {
    /// The groups of `net` for packets of at least `min_packet` bytes: the nodes joined by
    /// links of the smallest lookahead, when that is less than half the smallest lookahead of
    /// the links between the groups it makes (some link must join two groups) and every group
    /// has at most [`MAX_GROUP`] nodes;
    /// `None` otherwise.
    pub fn find(net: &Network, min_packet: Bytes) -> Option<LinkGroups> {
        let lookahead = |port: usize| {
            let class = &net.classes[net.port_class[port] as usize];
            class.delay + class.rate.serialization(min_packet)
        };
        let n = net.n_nodes();
        let inner = (0..net.port_peer.len()).map(lookahead).min()?;
        // Union the ends of every shortest link.
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(parent: &mut [u32], mut v: u32) -> u32 {
            while parent[v as usize] != v {
                let up = parent[parent[v as usize] as usize];
                parent[v as usize] = up;
                v = up;
            }
            v
        }
        for node in 0..n {
            for port in net.port_offset[node] as usize..net.port_offset[node + 1] as usize {
                if lookahead(port) == inner {
                    let (a, b) = (
                        root(&mut parent, node as u32),
                        root(&mut parent, net.port_peer[port]),
                    );
                    parent[a.max(b) as usize] = a.min(b);
                }
            }
        }
        let roots: Vec<u32> = (0..n as u32).map(|v| root(&mut parent, v)).collect();
        let mut size = vec![0usize; n];
        for &r in &roots {
            size[r as usize] += 1;
        }
        if size.iter().any(|&s| s > MAX_GROUP) {
            return None;
        }
        // Number the groups of two or more in order of their smallest node.
        let mut id = vec![NO_GROUP; n];
        let mut count = 0;
        let group_of: Vec<u32> = roots
            .iter()
            .map(|&r| {
                if size[r as usize] < 2 {
                    return NO_GROUP;
                }
                if id[r as usize] == NO_GROUP {
                    id[r as usize] = count;
                    count += 1;
                }
                id[r as usize]
            })
            .collect();
        let between = (0..n)
            .flat_map(|node| {
                let ports = net.port_offset[node] as usize..net.port_offset[node + 1] as usize;
                ports.map(move |port| (node, port))
            })
            .filter(|&(node, port)| {
                let g = group_of[node];
                g == NO_GROUP || group_of[net.port_peer[port] as usize] != g
            })
            .map(|(_, port)| lookahead(port))
            .min()
            .unwrap_or(SimTime::MAX);
        // No link between groups (every link is of the shortest class): nothing to gain.
        let pays = between != SimTime::MAX && between.0 >= inner.0.saturating_mul(2);
        (count > 0 && pays).then_some(LinkGroups {
            group_of,
            count,
            lookahead: between,
            inner,
        })
    }

    /// Node `node`'s group, if any.
    pub fn group(&self, node: u32) -> Option<u32> {
        let g = self.group_of[node as usize];
        (g != NO_GROUP).then_some(g)
    }
}

/// The groups whose members live in one chunk (the placement keeps a group's members
/// together), by slot.
#[derive(Debug)]
pub(super) struct ChunkGroups {
    /// Per slot: its group's index in `members`, or [`NO_GROUP`].
    pub(super) group_at: Vec<u32>,
    /// Per group: its members' slots, the first leading (it alone stands for the group on the
    /// chunk's active list and far heap, and its `next` is the group's earliest event).
    pub(super) members: Vec<Box<[u32]>>,
    /// Per slot in a group: its position in its group's `members` (0 for slots in none).
    pub(super) position_at: Vec<u8>,
    /// The chunk's index.
    pub(super) chunk: u32,
    /// [`LinkGroups::inner`].
    pub(super) inner: SimTime,
}

impl ChunkGroups {
    /// The groups of the chunk `chunk`, whose slots hold `nodes`; `None` when it holds none.
    pub(super) fn new(groups: &LinkGroups, chunk: u32, nodes: &[u32]) -> Option<Box<ChunkGroups>> {
        let mut index = std::collections::HashMap::new();
        let mut members: Vec<Vec<u32>> = Vec::new();
        let group_at = nodes
            .iter()
            .enumerate()
            .map(|(slot, &node)| match groups.group(node) {
                None => NO_GROUP,
                Some(g) => {
                    let at = *index.entry(g).or_insert_with(|| {
                        members.push(Vec::new());
                        members.len() as u32 - 1
                    });
                    members[at as usize].push(slot as u32);
                    at
                }
            })
            .collect();
        let mut position_at = vec![0u8; nodes.len()];
        for group in &members {
            for (position, &slot) in group.iter().enumerate() {
                // At most MAX_GROUP (64) members.
                position_at[slot as usize] = position as u8;
            }
        }
        (!members.is_empty()).then(|| {
            Box::new(ChunkGroups {
                group_at,
                position_at,
                members: members.into_iter().map(Vec::into_boxed_slice).collect(),
                chunk,
                inner: groups.inner,
            })
        })
    }

    /// The slot that stands for slot `slot` on the active list: its group's leader, or itself.
    #[inline]
    pub(super) fn lead(&self, slot: u32) -> u32 {
        match self.group_at[slot as usize] {
            NO_GROUP => slot,
            g => self.members[g as usize][0],
        }
    }
}

/// One member's turn in its group's window: where the events it makes for the other members
/// go at once, and until when it may run.
pub(super) struct GroupTurn<'g> {
    /// The chunk's event queues (the running member's is out, in the sink, while it runs).
    pub(super) queues: &'g mut [LpQueue],
    /// [`ChunkGroups::group_at`].
    pub(super) group_at: &'g [u32],
    /// [`ChunkGroups::position_at`].
    pub(super) position_at: &'g [u8],
    /// Per member (by position): the time of its earliest event, kept as events are pushed,
    /// so that choosing the next turn looks at no queue.
    pub(super) heads: &'g mut [SimTime],
    /// The running member's group.
    pub(super) group: u32,
    /// The chunk's index.
    pub(super) chunk: u32,
    /// The running member's slot.
    pub(super) running: u32,
    /// It runs its events before this time: the earliest another member could make it one.
    pub(super) threshold: SimTime,
    /// [`LinkGroups::inner`].
    pub(super) inner: SimTime,
    /// Side records for other members, handed over when the turn ends.
    pub(super) side: Vec<SideMessage>,
}

impl GroupTurn<'_> {
    /// Whether `place` is another member of the running member's group.
    #[inline]
    pub(super) fn holds(&self, place: Place) -> bool {
        place.chunk == self.chunk && self.group_at[place.slot as usize] == self.group
    }

    /// Pushes `event` into the queue of member `slot` (`own`: the running member's queue) and
    /// lowers the threshold: that member may answer it a link's lookahead later. (Out of
    /// line: the sink's common path only tests whether there is a group.)
    #[inline(never)]
    pub(super) fn push(&mut self, slot: u32, event: Event, own: &mut LpQueue) {
        self.threshold = self
            .threshold
            .min(event.key.time.saturating_add(self.inner));
        if slot == self.running {
            own.push_remote(event);
        } else {
            let head = &mut self.heads[self.position_at[slot as usize] as usize];
            *head = (*head).min(event.key.time);
            self.queues[slot as usize].push_remote(event);
        }
    }
}

/// The time of the earliest event in `queue` (`SimTime::MAX` when none).
#[inline]
pub(super) fn next_time(queue: &mut LpQueue) -> SimTime {
    queue.peek().map_or(SimTime::MAX, |e| e.key.time)
}

/// The position in its group of the member to run next before `bound` (by `heads`, each
/// member's earliest event), and the threshold of its turn (the earliest next event of any
/// other member plus `inner`, at most `bound`); `None` when no member has an event before
/// `bound`.
#[inline]
pub(super) fn next_turn(
    heads: &[SimTime],
    bound: SimTime,
    inner: SimTime,
) -> Option<(usize, SimTime)> {
    let (mut first, mut first_at, mut second_at) = (usize::MAX, SimTime::MAX, SimTime::MAX);
    for (position, &at) in heads.iter().enumerate() {
        if at < first_at {
            second_at = first_at;
            (first, first_at) = (position, at);
        } else if at < second_at {
            second_at = at;
        }
    }
    (first_at < bound).then(|| (first, bound.min(second_at.saturating_add(inner))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::{LinkClass, dumbbell};
    use crate::units::{BitsPerSec, BufferSize};

    /// A dumbbell of `hosts` hosts a side: host links of `host_delay`, the bottleneck of
    /// `middle_delay` (both 100 Gb/s).
    fn dumbbell_net(hosts: u32, host_delay: SimTime, middle_delay: SimTime) -> Network {
        let class =
            |delay| LinkClass::new(BitsPerSec(100_000_000_000), delay, BufferSize::Packets(10));
        let spec = dumbbell(hosts, hosts, class(host_delay), class(middle_delay));
        Network::compile(&spec).expect("compiles")
    }

    const PACKET: Bytes = Bytes(125);
    /// 125 B at 100 Gb/s.
    const SERIAL: SimTime = SimTime(10_000);

    #[test]
    fn short_links_group_their_ends_and_the_window_spans_the_rest() {
        let net = dumbbell_net(3, SimTime::from_ns(25), SimTime::from_ns(500));
        let groups = LinkGroups::find(&net, PACKET).expect("groups");
        // Each side's hosts and switch form a group; the bottleneck joins the two.
        assert_eq!(groups.count, 2);
        assert_eq!(groups.inner, SimTime::from_ns(25) + SERIAL);
        assert_eq!(groups.lookahead, SimTime::from_ns(500) + SERIAL);
        // Nodes: left hosts 0-2, right hosts 3-5, `sl` 6, `sr` 7.
        let (left, right) = (groups.group(0), groups.group(3));
        assert!(left.is_some() && right.is_some() && left != right);
        for n in [0, 1, 2, 6] {
            assert_eq!(groups.group(n), left, "node {n}");
        }
        for n in [3, 4, 5, 7] {
            assert_eq!(groups.group(n), right, "node {n}");
        }
        // A short bottleneck instead: its two switches form the one group.
        let groups = LinkGroups::find(
            &dumbbell_net(3, SimTime::from_ns(500), SimTime::from_ns(25)),
            PACKET,
        )
        .expect("groups");
        assert_eq!(groups.count, 1);
        assert_eq!(groups.group_of.iter().filter(|&&g| g == 0).count(), 2);
    }

    #[test]
    fn no_groups_when_they_would_not_pay_or_grow_too_large() {
        // One class of links.
        assert_eq!(
            LinkGroups::find(
                &dumbbell_net(3, SimTime::from_ns(500), SimTime::from_ns(500)),
                PACKET
            ),
            None
        );
        // The next lookahead not twice the shortest (25 + 10 ns against 50 + 10 ns).
        assert_eq!(
            LinkGroups::find(
                &dumbbell_net(3, SimTime::from_ns(25), SimTime::from_ns(50)),
                PACKET
            ),
            None
        );
        // A side of more than MAX_GROUP nodes.
        let big = MAX_GROUP as u32;
        assert_eq!(
            LinkGroups::find(
                &dumbbell_net(big, SimTime::from_ns(25), SimTime::from_ns(500)),
                PACKET
            ),
            None
        );
        assert!(
            LinkGroups::find(
                &dumbbell_net(big - 1, SimTime::from_ns(25), SimTime::from_ns(500)),
                PACKET
            )
            .is_some()
        );
    }
}

//! Events and their total order.
//!
//! Every event carries a key `(time, phase, created, tie)`; keys are unique, so the order
//! never depends on insertion or thread order. The tie rule for simultaneous events at one LP:
//!
//! 1. `phase`: a transmitter that frees at `t` takes its next packet before packets arriving
//!    at `t` are admitted; timers run after arrivals; then notices of finished dependencies;
//!    then flow starts; a job walker's wake-up last.
//! 2. `created`: among events of one phase, the one created earlier runs first (the FIFO rule
//!    of ns-3, OMNeT++ and SimPy: a packet whose transmission started earlier arrives first).
//! 3. `tie`: a stable key that does not depend on node numbering: for arrivals a bijective
//!    hash of the packet id ([`arrival_tie`]), for an LP's own events its creation counter,
//!    for flow starts the flow id, for a dependency's notice the pair of flow ids, for a
//!    walker's wake-up its token.

use std::cmp::Ordering;

use crate::packet::Packet;
use crate::telemetry::SideRecord;
use crate::units::SimTime;

/// Order among simultaneous events at one LP (4 bits in the key: room for 16 phases).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Phase {
    /// A transmitter finished and takes its next packet.
    PortReady = 0,
    /// A packet arrives over a link.
    Arrive = 1,
    /// A transport timer.
    Timer = 2,
    /// A flow that another flow waits for is known finished.
    Dependency = 3,
    /// A flow starts.
    FlowStart = 4,
    /// A rank's job walker wakes up ([`crate::job`]).
    Program = 5,
}

/// Bits of [`EventKey::order`] holding the creation time.
pub const CREATED_BITS: u32 = 60;
/// The latest time an event may be scheduled at: `2^60 - 1` ps (about 13.3 days). An event
/// beyond it ends the run with [`crate::engine::RunError::TimeOverflow`].
pub const MAX_EVENT_TIME: SimTime = SimTime((1 << CREATED_BITS) - 1);
/// The largest number of logical processes (nodes) the engine supports.
pub const MAX_LPS: u64 = 1 << 26;

/// The stored part of an event's total-order key: `(time, phase, created)` in two words. The
/// last component, `tie`, is derived from the payload ([`EventKind::tie`]) only when two events
/// agree on these two words, so the heap moves 56-byte events and compares two words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// When.
    pub time: SimTime,
    /// `phase (4 bits) | created (60 bits, ps)`.
    pub order: u64,
}

impl EventKey {
    /// Packs a key. `time` and `created` must not exceed [`MAX_EVENT_TIME`] (callers check;
    /// larger values are clamped here so a bad key can never alias another phase).
    #[inline]
    pub const fn new(time: SimTime, phase: Phase, created: SimTime) -> EventKey {
        let created = if created.0 > MAX_EVENT_TIME.0 {
            MAX_EVENT_TIME.0
        } else {
            created.0
        };
        EventKey {
            time,
            order: ((phase as u64) << CREATED_BITS) | created,
        }
    }
    /// The two stored words as one number, `time` high: the order of `(time, order)`.
    #[inline]
    pub const fn packed(&self) -> u128 {
        ((self.time.0 as u128) << 64) | self.order as u128
    }
    /// The phase.
    pub const fn phase(&self) -> u8 {
        (self.order >> CREATED_BITS) as u8
    }
    /// When the event was created.
    pub const fn created(&self) -> SimTime {
        SimTime(self.order & MAX_EVENT_TIME.0)
    }
}

/// The tie key of a packet's arrival: a bijective mix (the SplitMix64 finalizer) of its id,
/// so distinct packets never tie and the order among them does not follow node or flow
/// numbering.
#[inline]
pub const fn arrival_tie(packet: &Packet) -> u64 {
    crate::rng::mix64(packet.id())
}

/// What happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Local port `port` may start its next transmission.
    PortReady {
        /// Local port index.
        port: u32,
        /// The LP's creation counter when it was scheduled (its `tie`).
        seq: u64,
    },
    /// A packet arrives.
    Arrive(Packet),
    /// A transport timer of `flow` fires (a NIC's wake-up: [`TimerSide::Nic`]).
    Timer {
        /// Flow id; for a NIC's wake-up, the local port of the NIC.
        flow: u32,
        /// Token the transport gave when setting it.
        token: u32,
        /// Which end of the flow set it.
        side: TimerSide,
        /// The LP's creation counter when it was scheduled (its `tie`).
        seq: u64,
    },
    /// `flow` starts.
    FlowStart {
        /// Flow id.
        flow: u32,
    },
    /// `dep`, which `flow` waits for, is known finished at `flow`'s source.
    DependencyDone {
        /// The waiting flow.
        flow: u32,
        /// The finished flow.
        dep: u32,
    },
    /// The job walker of this host's rank wakes up ([`crate::job::Walker::wake`]).
    Program {
        /// The walker's token (distinct for each of its wake-ups).
        token: u32,
    },
}

impl EventKind {
    /// The last key component (see the module docs): the bijective hash of the packet id for
    /// arrivals, the LP's creation counter for its own events, the flow id for flow starts.
    #[inline]
    pub const fn tie(&self) -> u64 {
        match self {
            EventKind::PortReady { seq, .. } | EventKind::Timer { seq, .. } => *seq,
            EventKind::Arrive(packet) => arrival_tie(packet),
            EventKind::FlowStart { flow } => *flow as u64,
            EventKind::DependencyDone { flow, dep } => ((*flow as u64) << 32) | *dep as u64,
            EventKind::Program { token } => *token as u64,
        }
    }
}

/// Which end of a flow a timer belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimerSide {
    /// The sender (retransmission, pacing, open-loop gaps).
    Sender,
    /// The receiver (delayed ACK).
    Receiver,
    /// The host's pulling NIC (`[nic] scheduler = "pull"`): the link frees or a queue
    /// pair's pacing allows its next packet (`flow` and `token` unused).
    Nic,
}

/// An event: key and payload. Ordered *reversed* by key so `BinaryHeap<Event>` pops the
/// earliest event first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// Order key.
    pub key: EventKey,
    /// Payload.
    pub kind: EventKind,
}

impl Ord for Event {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: the heap is a max-heap. The two stored words compare as one 128-bit
        // number; the tie is computed only when they are equal.
        let (mine, theirs) = (self.key.packed(), other.key.packed());
        if mine != theirs {
            return theirs.cmp(&mine);
        }
        tie_order(other, self)
    }
}

/// The rare path of [`Event`]'s order: equal stored keys.
#[cold]
#[inline(never)]
fn tie_order(a: &Event, b: &Event) -> Ordering {
    a.kind.tie().cmp(&b.kind.tie())
}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Where an LP's new events go: back to itself, or over a link to another LP.
pub trait EventSink {
    /// An event for the LP that is handling the current event.
    fn local(&mut self, event: Event);
    /// An event for LP `node` (always at least one lookahead in the future).
    fn remote(&mut self, node: u32, event: Event);
    /// The side record of packet `id`, sent to LP `node` with the packet's arrival (made
    /// through [`EventSink::remote`] in the same handler): it is in `node`'s side table before
    /// the arrival is handled.
    fn side_record(&mut self, node: u32, id: u64, stack: Box<SideRecord>);
    /// The end of the window the LP is running in, before which a FIFO switch port may send
    /// its departures as a batch (`engine/node/port/batch.rs`); `SimTime::ZERO` (the
    /// default): one event at a time.
    #[inline]
    fn batch_bound(&self) -> SimTime {
        SimTime::ZERO
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use std::collections::BinaryHeap;

    fn event(time: u64, phase: Phase, created: u64, kind: EventKind) -> Event {
        Event {
            key: EventKey::new(SimTime(time), phase, SimTime(created)),
            kind,
        }
    }

    fn arrive(flow: u32, number: u32) -> EventKind {
        EventKind::Arrive(Packet::new(PacketKind::Data, flow, number, number, 0, 1000))
    }

    /// A heap pops by time, then phase, then creation time, then the tie.
    #[test]
    fn simultaneous_events_run_by_phase_then_creation_then_tie() {
        let ready = EventKind::PortReady { port: 0, seq: 9 };
        let timer = EventKind::Timer {
            flow: 1,
            token: 0,
            side: TimerSide::Sender,
            seq: 3,
        };
        let events = vec![
            event(10, Phase::FlowStart, 0, EventKind::FlowStart { flow: 2 }),
            event(10, Phase::Timer, 0, timer),
            event(10, Phase::Arrive, 5, arrive(0, 1)),
            event(10, Phase::Arrive, 4, arrive(7, 7)),
            event(10, Phase::PortReady, 8, ready),
            event(9, Phase::FlowStart, 0, EventKind::FlowStart { flow: 1 }),
            event(10, Phase::FlowStart, 0, EventKind::FlowStart { flow: 0 }),
        ];
        let mut heap: BinaryHeap<Event> = events.into_iter().collect();
        let mut order = Vec::new();
        while let Some(e) = heap.pop() {
            order.push((e.key.time.0, e.key.phase(), e.key.created().0, e.kind.tie()));
        }
        let arrival = |flow, n| arrival_tie(&Packet::new(PacketKind::Data, flow, n, n, 0, 1000));
        assert_eq!(
            order,
            vec![
                (9, Phase::FlowStart as u8, 0, 1),
                (10, Phase::PortReady as u8, 8, 9),
                (10, Phase::Arrive as u8, 4, arrival(7, 7)),
                (10, Phase::Arrive as u8, 5, arrival(0, 1)),
                (10, Phase::Timer as u8, 0, 3),
                (10, Phase::FlowStart as u8, 0, 0),
                (10, Phase::FlowStart as u8, 0, 2),
            ]
        );
    }

    #[test]
    fn a_key_packs_phase_and_creation_and_clamps_what_is_too_late() {
        let key = EventKey::new(SimTime(5), Phase::Dependency, SimTime(77));
        assert_eq!((key.phase(), key.created()), (3, SimTime(77)));
        let late = EventKey::new(SimTime(5), Phase::Arrive, SimTime(u64::MAX));
        assert_eq!((late.phase(), late.created()), (1, MAX_EVENT_TIME));
        // Two packets of a flow have distinct ties.
        let a = arrival_tie(&Packet::new(PacketKind::Data, 0, 1, 1, 0, 64));
        let b = arrival_tie(&Packet::new(PacketKind::Data, 0, 2, 2, 0, 64));
        assert_ne!(a, b);
        let dep = EventKind::DependencyDone { flow: 3, dep: 5 };
        assert_eq!(dep.tie(), (3 << 32) | 5);
    }
}

//! Events and their total order. Every event carries a key `(time, phase, origin LP, origin
//! sequence)`; keys are unique, so the order never depends on insertion or thread order.

use std::cmp::Ordering;

use crate::packet::Packet;
use crate::units::SimTime;

/// Order among simultaneous events at one LP.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Phase {
    /// A transmitter finished and takes its next packet.
    PortReady = 0,
    /// A packet arrives over a link.
    Arrive = 1,
    /// A transport timer.
    Timer = 2,
    /// A flow starts.
    FlowStart = 3,
}

/// The total-order key of an event.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// When.
    pub time: SimTime,
    /// Phase among simultaneous events.
    pub phase: Phase,
    /// LP that created the event.
    pub origin: u32,
    /// Creation counter of that LP (flow starts use the flow id; their phase keeps them apart).
    pub seq: u64,
}

/// What happens.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// Local port `port` may start its next transmission.
    PortReady {
        /// Local port index.
        port: u32,
    },
    /// A packet arrives.
    Arrive(Packet),
    /// A transport timer of `flow` fires.
    Timer {
        /// Flow id.
        flow: u32,
        /// Token the transport gave when setting it.
        token: u32,
    },
    /// `flow` starts.
    FlowStart {
        /// Flow id.
        flow: u32,
    },
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
    fn cmp(&self, other: &Self) -> Ordering {
        other.key.cmp(&self.key)
    }
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
}

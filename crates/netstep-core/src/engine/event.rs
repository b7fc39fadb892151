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

/// Bits of [`EventKey::order`] holding the origin LP (up to 67 M logical processes).
pub const ORIGIN_BITS: u32 = 26;
/// Bits of [`EventKey::order`] holding the origin's sequence number (68 G events per LP).
pub const SEQ_BITS: u32 = 36;
/// The largest number of logical processes the key can tell apart.
pub const MAX_LPS: u64 = 1 << ORIGIN_BITS;

/// The total-order key of an event: `(time, phase, origin LP, origin sequence)`, packed into
/// two words so comparisons are two integer compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventKey {
    /// When.
    pub time: SimTime,
    /// `phase (2 bits) | origin LP (26 bits) | origin sequence (36 bits)`. Flow starts use
    /// the flow id as sequence; their phase keeps them apart from other events.
    pub order: u64,
}

impl EventKey {
    /// Packs a key.
    #[inline]
    pub const fn new(time: SimTime, phase: Phase, origin: u32, seq: u64) -> EventKey {
        let order = ((phase as u64) << (ORIGIN_BITS + SEQ_BITS))
            | ((origin as u64) << SEQ_BITS)
            | (seq & ((1 << SEQ_BITS) - 1));
        EventKey { time, order }
    }
    /// The LP that created the event.
    pub const fn origin(&self) -> u32 {
        ((self.order >> SEQ_BITS) & ((1 << ORIGIN_BITS) - 1)) as u32
    }
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

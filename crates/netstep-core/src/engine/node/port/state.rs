//! The state of one egress port: the transmitter's hot part, and the cold part that queueing,
//! drops, losses, shaping, policing and PFC frames allocate on first need.

use std::collections::VecDeque;

use rand_pcg::Pcg64Mcg;

use crate::queue::{Entry, Queue};
use crate::shaping::{TokenBucket, TrTcm};
use crate::topology::LinkClass;
use crate::units::SimTime;

/// Dynamic state of one egress port: the transmitter (hot, 40 bytes) and, once the port has
/// ever held a waiting packet, dropped or lost one, or runs a discipline that keeps state even
/// when empty, its cold part (allocated on first need). A packet that finds the transmitter
/// idle and a pass-through queue empty touches only the hot part.
#[derive(Clone, Debug, Default)]
pub struct PortState {
    /// The transmitter is busy until this time.
    pub(super) busy_until: SimTime,
    /// Packets transmitted.
    pub(super) tx_packets: u64,
    /// Bytes transmitted.
    pub(super) tx_bytes: u64,
    /// A `PortReady` event is pending.
    pub(super) wake_pending: bool,
    /// Classes paused by the downstream node's PFC (bit `c` for class `c`).
    pub(super) paused: u8,
    /// The queue element and the rarely used counters.
    pub(super) cold: Option<Box<PortCold>>,
}

/// The part of a port that queueing, drops and losses touch, one field group per stage.
#[derive(Clone, Debug, Default)]
pub struct PortCold {
    /// Queue stage: the queue element.
    pub(super) queue: Queue,
    /// Queue stage: the queue element's random stream (created on its first draw).
    pub(super) queue_rng: Option<Box<Pcg64Mcg>>,
    /// Queue stage: largest number of waiting packets seen.
    pub(super) max_queue_packets: u64,
    /// Queue stage: largest number of waiting bytes seen.
    pub(super) max_queue_bytes: u64,
    /// Queue stage: packets marked CE (or DECbit) by the queue element.
    pub(super) ecn_marks: u64,
    /// Packets dropped at this port (by the policer or the queue element).
    pub(super) drops: u64,
    /// Admission stage: trTCM policer state (policed ports).
    pub(super) policer: Option<TrTcm>,
    /// Admission stage: packets the policer colored yellow (forwarded).
    pub(super) yellow: u64,
    /// Shaper stage: token-bucket state (shaped ports).
    pub(super) shaper: Option<TokenBucket>,
    /// Shaper stage: the packet held until it conforms (the transmitter waits for it).
    pub(super) held: Option<Entry>,
    /// Transmitter: packets lost on the wire (random link loss, a link down).
    pub(super) lost: u64,
    /// Transmitter: the link's loss stream (created on the first draw of a lossy link).
    pub(super) loss_rng: Option<Box<Pcg64Mcg>>,
    /// Control lane: PFC frames waiting to be sent ahead of the queue.
    pub(super) control: VecDeque<Entry>,
    /// Batch stage: the packets handed to the transmitter ahead of their start (`batch.rs`),
    /// as (start ps, bytes), kept until that start: before it they still wait.
    pub(super) started: VecDeque<(u64, u32)>,
    /// Batch stage: the bytes of `started`.
    pub(super) started_bytes: u64,
}

impl PortCold {
    /// The cold part of a port of link class `class`.
    pub(super) fn new(class: &LinkClass) -> Box<PortCold> {
        Box::new(PortCold {
            queue: Queue::for_port(&class.scheduler, &class.aqm),
            ..PortCold::default()
        })
    }
}

impl PortState {
    /// The cold part, allocated for link class `class` on first need.
    #[inline]
    pub(super) fn cold_mut(&mut self, class: &LinkClass) -> &mut PortCold {
        self.cold.get_or_insert_with(|| PortCold::new(class))
    }
    /// The transmitter is free at `now` and no wake-up is pending.
    #[inline]
    pub(super) fn idle(&self, now: SimTime) -> bool {
        self.busy_until <= now && !self.wake_pending
    }
    /// Packets transmitted.
    pub fn tx_packets(&self) -> u64 {
        self.tx_packets
    }
    /// Bytes transmitted.
    pub fn tx_bytes(&self) -> u64 {
        self.tx_bytes
    }
    /// Classes paused by the downstream node's PFC (bit `c` for class `c`).
    pub fn paused(&self) -> u8 {
        self.paused
    }
    /// True when the port has done or holds anything worth reporting.
    pub fn is_used(&self) -> bool {
        self.tx_packets > 0 || self.cold.is_some()
    }
    /// Packets waiting.
    pub fn queue_len(&self) -> usize {
        self.cold.as_ref().map_or(0, |c| c.queue.len())
    }
    /// Bytes waiting.
    pub fn queue_bytes(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.queue.bytes())
    }
    /// Packets dropped by the policer or the queue element.
    pub fn drops(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.drops)
    }
    /// Packets marked CE by the queue element.
    pub fn ecn_marks(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.ecn_marks)
    }
    /// Packets lost on the wire.
    pub fn lost(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.lost)
    }
    /// Largest number of waiting packets seen.
    pub fn max_queue_packets(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.max_queue_packets)
    }
    /// Largest number of waiting bytes seen.
    pub fn max_queue_bytes(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.max_queue_bytes)
    }
    /// Whether PFC frames wait to be sent.
    pub fn has_control(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| !c.control.is_empty())
    }
    /// Whether the shaper holds a packet (waiting for tokens).
    pub fn held(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.held.is_some())
    }
    /// Packets the port's policer colored yellow.
    pub fn yellow(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.yellow)
    }
}

//! The queue stage of the egress pipeline: the port's queue element (scheduler and AQM, one
//! [`crate::queue::Queue`] per port) decides what waits, what is dropped or marked, and what
//! the transmitter takes next, skipping classes PFC has paused.
//!
//! It owns the empty-queue shortcut: a packet that finds the transmitter idle, the queue
//! empty and its class unpaused, at a port whose every stage would pass it through unchanged
//! (decided once per link class in the network tables:
//! [`crate::network::Network::skips_empty_queue`]) goes to the transmitter without touching
//! or materializing the queue. That is the decision the queue element itself makes
//! for an idle transmitter ([`crate::queue::Queue::enqueue_for_idle`]), so skipping equals
//! queueing (property test `queue::tests::skipping_an_empty_queue_equals_queueing`).

use super::state::{PortCold, PortState};
use super::{Egress, Owner, PortRef};
use crate::engine::event::EventSink;
use crate::packet::Packet;
use crate::queue::{Admission, Entry, QueueCtx};
use crate::rng::{LazyStream, STREAM_QUEUE};
use crate::units::{BufferSize, SimTime};

/// Whether a packet of traffic class `class` offered to `port` at `now` skips the queue
/// element and goes to the transmitter at once. `eligible`: the port may skip its empty queue
/// ([`crate::network::Network::skips_empty_queue`]).
#[inline]
pub(super) fn skips(port: &PortState, now: SimTime, eligible: bool, class: u8) -> bool {
    port.idle(now) && port.queue_len() == 0 && eligible && port.paused & (1 << class) == 0
}

/// The context the queue element gets on port `at` at `now` with buffer `limit`.
#[inline]
fn ctx<'a>(
    rng: &'a mut Option<Box<rand_pcg::Pcg64Mcg>>,
    at: &PortRef<'_>,
    limit: BufferSize,
    now: SimTime,
    seed: u64,
) -> QueueCtx<'a> {
    QueueCtx {
        now,
        limit,
        rate: at.class.rate,
        rng: LazyStream::new(rng, seed, STREAM_QUEUE, at.global as u64),
    }
}

/// Offers `entry` to the queue element of port `at`: its admission and, when the transmitter
/// is `idle`, the entry to send now (none while its class, or the queue's head, is paused).
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn offer(
    cold: &mut PortCold,
    at: &PortRef<'_>,
    entry: Entry,
    idle: bool,
    paused: u8,
    limit: BufferSize,
    now: SimTime,
    seed: u64,
) -> (Admission, Option<Entry>) {
    let mut ctx = ctx(&mut cold.queue_rng, at, limit, now, seed);
    if !idle {
        return (cold.queue.enqueue(entry, &mut ctx), None);
    }
    if paused == 0 {
        // The transmitter is idle: the queue decides and picks what goes now.
        return cold.queue.enqueue_for_idle(entry, &mut ctx);
    }
    let admission = cold.queue.enqueue(entry, &mut ctx);
    (admission, cold.queue.dequeue_unpaused(&mut ctx, paused))
}

/// The next entry the queue element of port `at` hands the transmitter, skipping `paused`
/// classes.
#[inline]
pub(super) fn next(
    cold: &mut PortCold,
    at: &PortRef<'_>,
    paused: u8,
    now: SimTime,
    seed: u64,
) -> Option<Entry> {
    let mut ctx = ctx(&mut cold.queue_rng, at, at.class.buffer, now, seed);
    cold.queue.dequeue_unpaused(&mut ctx, paused)
}

/// Updates the largest queue seen after an entry stayed waiting; `(packets, bytes)` more
/// wait outside the queue element, handed to the transmitter ahead of their start
/// (`batch.rs`).
#[inline]
pub(super) fn record_peak(cold: &mut PortCold, (packets, bytes): (u32, u64)) {
    let len = cold.queue.len() as u64 + packets as u64;
    cold.max_queue_packets = cold.max_queue_packets.max(len);
    cold.max_queue_bytes = cold.max_queue_bytes.max(cold.queue.bytes() + bytes);
}

impl<'a> Egress<'a> {
    /// The empty-queue shortcut of a switch's port under dynamic PFC thresholds
    /// ([`crate::network::Network::skips_counting`]), which count every lossless packet, even
    /// one that never waits (the HPCC simulator's MMU charges a packet on arrival and releases
    /// it as it leaves): what [`Egress::offer_to_queue`] does with a lossless packet that
    /// finds the port idle, its queue empty and its class unpaused, in its order (the ingress
    /// accounting charges it, which may pause its upstream; it leaves at once, which releases
    /// it and may resume the upstream), without the queue element, which would hand it
    /// straight back. (A packet of a lossy class at such a port goes through the queue
    /// element.)
    #[inline(never)]
    pub(super) fn pass_counted<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> bool {
        let traced = self.lp.traced(&packet, now, self.model);
        let entry = Entry::with_nothing_ahead(packet, now, traced, true);
        owner.queued_lossless(self, &packet, now, sink);
        self.depart(owner, at, entry, now, sink);
        self.wake_if_waiting(at.local, now, sink);
        true
    }
}

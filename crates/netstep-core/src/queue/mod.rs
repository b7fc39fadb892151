//! Egress queues as elements. One queueing discipline per file behind the [`Queue`] enum,
//! which dispatches without `dyn` (the smoltcp congestion-control pattern). Schedulers (SP,
//! DRR, WRR, WFQ, Virtual Clock) and AQMs (RED, ECN marking) slot in as further variants with
//! the same operations.
//!
//! A queue is always consulted: every packet a port sends goes through [`Queue::enqueue`] and
//! [`Queue::dequeue`], even when the transmitter is idle, so a scheduler's or AQM's accounting
//! sees every packet. Each call gets a [`QueueCtx`]: the current time and the port's keyed
//! random stream (created on first use, so deterministic disciplines pay nothing). Entries
//! carry their own metadata ([`Entry`]): arrival time, the trace facts and, through the
//! packet, class and ECN codepoint.

mod fifo;

pub use fifo::FifoQueue;

use crate::packet::Packet;
use crate::rng::LazyStream;
use crate::units::{BufferSize, SimTime};

/// Why a queue refused (or evicted) a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (tail drop).
    BufferFull,
}

/// A packet waiting in a queue, with the facts recorded when it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The packet.
    pub packet: Packet,
    /// Arrival time at the queue, ps.
    pub arrived_ps: u64,
    /// Bytes waiting ahead of it when it arrived.
    pub ahead_bytes: u64,
    /// Packets waiting ahead of it when it arrived.
    pub ahead_packets: u32,
    /// Whether its hop is recorded in the packet trace.
    pub traced: bool,
}

/// What a queue did with an offered entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued.
    Accepted,
    /// Refused: the offered entry is handed back with the reason.
    Dropped(Entry, DropReason),
    /// Queued, but another waiting entry was evicted to make room (push-out disciplines).
    AcceptedDroppedOther(Entry, DropReason),
}

/// What a queue may use besides its own state.
pub struct QueueCtx<'a> {
    /// The current time.
    pub now: SimTime,
    /// The buffer limit of this port.
    pub limit: BufferSize,
    /// This port's random stream ([`crate::rng::STREAM_QUEUE`], keyed by global port id).
    pub rng: LazyStream<'a>,
}

/// An egress queue of any discipline.
#[derive(Clone, Debug)]
pub enum Queue {
    /// First come, first served with tail drop.
    Fifo(FifoQueue),
}

impl Default for Queue {
    fn default() -> Self {
        Queue::Fifo(FifoQueue::default())
    }
}

impl Queue {
    /// Offers an entry.
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        match self {
            Queue::Fifo(q) => q.enqueue(entry, ctx),
        }
    }
    /// Offers an entry to an idle transmitter's queue and takes the entry to send now, in one
    /// step: the same decisions as [`Queue::enqueue`] then [`Queue::dequeue`], which a
    /// discipline may shortcut (a FIFO that is empty hands the entry straight back).
    #[inline]
    pub fn enqueue_for_idle(
        &mut self,
        entry: Entry,
        ctx: &mut QueueCtx<'_>,
    ) -> (Admission, Option<Entry>) {
        match self {
            Queue::Fifo(q) => q.enqueue_for_idle(entry, ctx),
        }
    }
    /// True when an empty instance of this discipline hands an offered packet straight to an
    /// idle transmitter and keeps no state about it (FIFO). The port then does not allocate
    /// the queue until a packet has to wait; disciplines with per-packet accounting (AQMs,
    /// schedulers) return false and are always materialized and consulted.
    #[inline]
    pub const fn empty_fifo_passes_through(&self) -> bool {
        matches!(self, Queue::Fifo(_))
    }
    /// Takes the next entry to transmit.
    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        match self {
            Queue::Fifo(q) => q.dequeue(ctx),
        }
    }
    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        match self {
            Queue::Fifo(q) => q.len(),
        }
    }
    /// True when nothing waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes waiting.
    #[inline]
    pub fn bytes(&self) -> u64 {
        match self {
            Queue::Fifo(q) => q.bytes(),
        }
    }
}

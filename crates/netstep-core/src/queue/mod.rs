//! Egress queues. One queueing discipline per file behind the [`Queue`] enum, which dispatches
//! without `dyn` (the smoltcp congestion-control pattern). Schedulers (SP, DRR, WRR, WFQ,
//! Virtual Clock) and AQMs (RED, ECN marking) slot in as further variants with the same three
//! operations: offer a packet, take the next packet, report occupancy.

mod fifo;

pub use fifo::FifoQueue;

use crate::packet::Packet;
use crate::units::BufferSize;

/// Why a queue refused a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (tail drop).
    BufferFull,
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
    /// Offers a packet; returns why it was refused, if it was.
    #[inline]
    pub fn enqueue(&mut self, packet: Packet, limit: BufferSize) -> Result<(), DropReason> {
        match self {
            Queue::Fifo(q) => q.enqueue(packet, limit),
        }
    }
    /// Takes the next packet to transmit.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet> {
        match self {
            Queue::Fifo(q) => q.dequeue(),
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

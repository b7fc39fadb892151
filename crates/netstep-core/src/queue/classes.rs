//! Per-class FIFO storage shared by the class schedulers: one tail-drop FIFO per traffic class
//! (0-7), each limited by the port's buffer (per-class buffers), with totals kept for the port.

use std::collections::VecDeque;

use super::{Admission, DropReason, Entry, QueueCtx};

/// Number of traffic classes.
pub const CLASSES: usize = 8;

/// Eight tail-drop FIFOs, one per traffic class.
#[derive(Clone, Debug, Default)]
pub struct ClassQueues {
    queues: [VecDeque<Entry>; CLASSES],
    bytes: [u64; CLASSES],
    len: usize,
    total_bytes: u64,
}

impl ClassQueues {
    /// Offers an entry to its class's FIFO; refused when that class's buffer is full.
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &QueueCtx<'_>) -> Admission {
        let class = entry.packet.class() as usize;
        let size = entry.packet.size_bytes as u64;
        if !ctx
            .limit
            .fits(self.queues[class].len(), self.bytes[class], size)
        {
            return Admission::Dropped(entry, DropReason::BufferFull);
        }
        self.bytes[class] += size;
        self.total_bytes += size;
        self.len += 1;
        self.queues[class].push_back(entry);
        Admission::Accepted
    }
    /// Takes the head of `class`.
    #[inline]
    pub fn pop(&mut self, class: usize) -> Option<Entry> {
        let e = self.queues[class].pop_front()?;
        let size = e.packet.size_bytes as u64;
        self.bytes[class] -= size;
        self.total_bytes -= size;
        self.len -= 1;
        Some(e)
    }
    /// Wire size of the head of `class`.
    #[inline]
    pub fn head_size(&self, class: usize) -> Option<u64> {
        self.queues[class]
            .front()
            .map(|e| e.packet.size_bytes as u64)
    }
    /// Packets waiting in `class`.
    #[inline]
    pub fn class_len(&self, class: usize) -> usize {
        self.queues[class].len()
    }
    /// Packets waiting in all classes.
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes waiting in all classes.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.total_bytes
    }
}

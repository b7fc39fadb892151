//! DCTCP step marking (Alizadeh et al., SIGCOMM 2010; RFC 8257 section 3.1) on a FIFO: an
//! ECN-capable packet that arrives while more than `K` bytes wait is marked CE; nothing else
//! changes (tail drop as the FIFO's). With `at_dequeue` the packet is marked as it leaves when
//! more than `K` bytes wait behind it (the HPCC simulator marks in `SwitchNotifyDequeue`, on
//! the egress bytes after removing the packet).

use super::{Admission, Entry, FifoQueue, QueueCtx};
use crate::packet::Ecn;

/// A FIFO that marks above a threshold.
#[derive(Clone, Debug, Default)]
pub struct EcnStep {
    fifo: FifoQueue,
    /// Marking threshold, bytes waiting.
    k_bytes: u64,
    /// Mark as packets leave instead of as they arrive.
    at_dequeue: bool,
}

/// The FIFO under the AQM: its length, bytes and head are the queue's (read-only: every
/// arrival goes through the AQM's `enqueue`).
impl std::ops::Deref for EcnStep {
    type Target = FifoQueue;
    fn deref(&self) -> &FifoQueue {
        &self.fifo
    }
}

impl EcnStep {
    /// Marks above `k_bytes` waiting, on arrival or (`at_dequeue`) on departure.
    pub fn new(k_bytes: u64, at_dequeue: bool) -> EcnStep {
        EcnStep {
            fifo: FifoQueue::default(),
            k_bytes,
            at_dequeue,
        }
    }
    /// Offers an entry, marking it when the instantaneous queue exceeds K.
    pub fn enqueue(&mut self, mut entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        // A packet the buffer will refuse is not marked (it is dropped as it was).
        let fits = ctx.limit.fits(
            self.fifo.len(),
            self.fifo.bytes(),
            entry.packet.size_bytes as u64,
        );
        let mark = fits
            && !self.at_dequeue
            && self.fifo.bytes() > self.k_bytes
            && matches!(entry.packet.ecn, Ecn::Ect0 | Ecn::Ect1);
        if mark {
            entry.packet.ecn = Ecn::Ce;
        }
        match self.fifo.enqueue(entry, ctx) {
            Admission::Accepted if mark => Admission::AcceptedMarked,
            other => other,
        }
    }
    /// Takes the next entry.
    pub fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        let mut e = self.fifo.dequeue(ctx);
        if self.at_dequeue
            && self.fifo.bytes() > self.k_bytes
            && let Some(entry) = e.as_mut()
        {
            entry.mark_on_departure();
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{entry, with_ctx};
    use crate::units::BufferSize;

    #[test]
    fn marks_exactly_when_the_queue_exceeds_k() {
        let mut q = EcnStep::new(3000, false);
        with_ctx(BufferSize::Packets(100), |ctx| {
            for n in 0..8u32 {
                let mut e = entry(n, 1000, 0);
                e.packet.ecn = Ecn::Ect0;
                let waiting = q.bytes();
                let admission = q.enqueue(e, ctx);
                if waiting > 3000 {
                    assert_eq!(admission, Admission::AcceptedMarked, "{waiting} B waiting");
                } else {
                    assert_eq!(admission, Admission::Accepted, "{waiting} B waiting");
                }
            }
            // Not ECN-capable: never marked, whatever the queue.
            assert_eq!(q.enqueue(entry(99, 1000, 0), ctx), Admission::Accepted);
            let ce: Vec<bool> = std::iter::from_fn(|| q.dequeue(ctx))
                .map(|e| e.packet.ecn == Ecn::Ce)
                .collect();
            assert_eq!(
                ce,
                [false, false, false, false, true, true, true, true, false]
            );
        });
    }

    #[test]
    fn at_dequeue_marks_when_more_than_k_wait_behind() {
        let mut q = EcnStep::new(3000, true);
        with_ctx(BufferSize::Packets(100), |ctx| {
            for n in 0..8u32 {
                let mut e = entry(n, 1000, 0);
                e.packet.ecn = Ecn::Ect0;
                // Nothing is marked on the way in, whatever waits.
                assert_eq!(q.enqueue(e, ctx), Admission::Accepted);
            }
            let mut marks = Vec::new();
            while let Some(e) = q.dequeue(ctx) {
                // Bytes still waiting once this packet left.
                let behind = q.bytes();
                assert_eq!(e.packet.ecn == Ecn::Ce, behind > 3000, "{behind} B behind");
                assert_eq!(e.marked, e.packet.ecn == Ecn::Ce);
                marks.push(e.marked);
            }
            // 7, 6, 5, 4 KB behind the first four; 3 KB and less behind the rest.
            assert_eq!(marks, [true, true, true, true, false, false, false, false]);
        });
    }
}

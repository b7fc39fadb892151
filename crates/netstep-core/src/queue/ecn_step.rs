//! DCTCP step marking (Alizadeh et al., SIGCOMM 2010; RFC 8257 section 3.1) on a FIFO: an
//! ECN-capable packet that arrives while more than `K` bytes wait is marked CE; nothing else
//! changes (tail drop as the FIFO's).

use super::{Admission, Entry, FifoQueue, QueueCtx};
use crate::packet::Ecn;

/// A FIFO that marks above a threshold.
#[derive(Clone, Debug, Default)]
pub struct EcnStep {
    fifo: FifoQueue,
    /// Marking threshold, bytes waiting.
    k_bytes: u64,
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
    /// Marks above `k_bytes` waiting.
    pub fn new(k_bytes: u64) -> EcnStep {
        EcnStep {
            fifo: FifoQueue::default(),
            k_bytes,
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
        self.fifo.dequeue(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{entry, with_ctx};
    use crate::units::BufferSize;

    #[test]
    fn marks_exactly_when_the_queue_exceeds_k() {
        let mut q = EcnStep::new(3000);
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
}

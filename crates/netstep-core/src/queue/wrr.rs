//! Weighted round robin: classes are visited in order (0 to 7) and each sends up to `weight`
//! packets per visit while it has any. Packet shares follow the weights; byte shares do too
//! only when the classes' packets have equal sizes (unlike DRR).

use super::classes::{CLASSES, ClassQueues};
use super::{Admission, Entry, QueueCtx};

/// WRR over the eight classes.
#[derive(Clone, Debug)]
pub struct Wrr {
    classes: ClassQueues,
    weights: [u16; CLASSES],
    /// The class being visited.
    current: usize,
    /// Packets it has sent in this visit.
    sent: u16,
}

impl Wrr {
    /// WRR with per-class weights in packets per visit (a class of weight 0 uses 1).
    pub fn new(weights: [u16; CLASSES]) -> Wrr {
        Wrr {
            classes: ClassQueues::default(),
            weights: weights.map(|w| w.max(1)),
            current: 0,
            sent: 0,
        }
    }
    /// Offers an entry (tail drop per class).
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        self.classes.enqueue(entry, ctx)
    }
    /// The next packet in WRR order.
    #[inline]
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        if self.classes.is_empty() {
            return None;
        }
        loop {
            if self.sent < self.weights[self.current] && self.classes.class_len(self.current) > 0 {
                self.sent += 1;
                return self.classes.pop(self.current);
            }
            self.current = (self.current + 1) % CLASSES;
            self.sent = 0;
        }
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its per-class FIFOs's.
impl std::ops::Deref for Wrr {
    type Target = ClassQueues;
    #[inline]
    fn deref(&self) -> &ClassQueues {
        &self.classes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{entry, with_ctx};
    use crate::units::BufferSize;

    #[test]
    fn saturated_packet_shares_follow_the_weights() {
        let mut weights = [1u16; CLASSES];
        weights[2] = 2;
        weights[5] = 3;
        let mut q = Wrr::new(weights);
        let mut served = [0u64; CLASSES];
        with_ctx(BufferSize::Packets(1_000_000), |ctx| {
            let mut n = 0;
            for class in [0u8, 2, 5] {
                for _ in 0..10_000 {
                    q.enqueue(entry(n, 1000, class), ctx);
                    n += 1;
                }
            }
            for _ in 0..6_000 {
                served[q.dequeue(ctx).unwrap().packet.class() as usize] += 1;
            }
        });
        // Exactly 1:2:3 per round of 6 packets.
        assert_eq!((served[0], served[2], served[5]), (1_000, 2_000, 3_000));
    }
}

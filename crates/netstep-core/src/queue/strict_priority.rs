//! Strict priority: the highest non-empty class is always served first (class 7 highest, as
//! IEEE 802.1p priorities), non-preemptively (a packet in transmission finishes). A busy high
//! class starves the lower ones. Tested against Cobham's (1954) M/M/1 mean waits for two
//! classes (`tests/suite/elements.rs`).

use super::classes::{CLASSES, ClassQueues};
use super::{Admission, Entry, QueueCtx};

/// Per-class FIFOs served highest class first.
#[derive(Clone, Debug, Default)]
pub struct StrictPriority {
    classes: ClassQueues,
}

impl StrictPriority {
    /// Offers an entry (tail drop per class).
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        self.classes.enqueue(entry, ctx)
    }
    /// The head of the highest non-empty class.
    #[inline]
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        let class = (0..CLASSES)
            .rev()
            .find(|&c| self.classes.class_len(c) > 0)?;
        self.classes.pop(class)
    }
    /// The head of the highest non-empty class not in `paused` (PFC).
    pub fn dequeue_skipping(&mut self, paused: u8) -> Option<Entry> {
        let class = (0..CLASSES)
            .rev()
            .find(|&c| paused & (1 << c) == 0 && self.classes.class_len(c) > 0)?;
        self.classes.pop(class)
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its per-class FIFOs's.
impl std::ops::Deref for StrictPriority {
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
    fn the_highest_class_goes_first_and_fifo_within_a_class() {
        let mut q = StrictPriority::default();
        with_ctx(BufferSize::Packets(100), |ctx| {
            for (n, class) in [(0, 0), (1, 3), (2, 0), (3, 7), (4, 3)] {
                assert_eq!(q.enqueue(entry(n, 100, class), ctx), Admission::Accepted);
            }
            let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(ctx))
                .map(|e| e.packet.number)
                .collect();
            assert_eq!(order, vec![3, 1, 4, 0, 2]);
        });
    }
}

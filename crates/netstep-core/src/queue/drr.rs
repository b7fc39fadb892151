//! Deficit round robin (Shreedhar and Varghese, SIGCOMM 1995): classes with waiting packets
//! take turns in a round-robin list; a class's deficit grows by `quantum x weight` bytes on
//! each of its turns and it sends head packets while they fit in the deficit. Under
//! saturation the byte shares converge to the weights whatever the packet sizes.

use std::collections::VecDeque;

use super::classes::{CLASSES, ClassQueues};
use super::{Admission, Entry, QueueCtx};

/// DRR over the eight classes.
#[derive(Clone, Debug)]
pub struct Drr {
    classes: ClassQueues,
    /// Bytes added to a class's deficit per turn: quantum x weight.
    quanta: [u64; CLASSES],
    deficit: [u64; CLASSES],
    /// Classes with waiting packets, in turn order; the head is being served.
    active: VecDeque<u8>,
    /// The head class has received its quantum for the current turn.
    head_credited: bool,
}

impl Drr {
    /// DRR with a base quantum (bytes) and per-class weights (a class of weight 0 uses 1).
    pub fn new(quantum: u32, weights: [u16; CLASSES]) -> Drr {
        Drr {
            classes: ClassQueues::default(),
            quanta: weights.map(|w| quantum as u64 * w.max(1) as u64),
            deficit: [0; CLASSES],
            active: VecDeque::new(),
            head_credited: false,
        }
    }
    /// Offers an entry (tail drop per class); a class that had nothing waiting joins the end
    /// of the round.
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let class = entry.packet.class();
        let was_empty = self.classes.class_len(class as usize) == 0;
        let admission = self.classes.enqueue(entry, ctx);
        if was_empty && matches!(admission, Admission::Accepted) {
            self.active.push_back(class);
        }
        admission
    }
    /// The next packet in DRR order.
    #[inline]
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        loop {
            let class = *self.active.front()? as usize;
            if !self.head_credited {
                self.deficit[class] += self.quanta[class];
                self.head_credited = true;
            }
            let size = self
                .classes
                .head_size(class)
                .expect("active classes hold packets");
            if size <= self.deficit[class] {
                self.deficit[class] -= size;
                let entry = self.classes.pop(class);
                if self.classes.class_len(class) == 0 {
                    // An emptied class leaves the round and keeps no credit.
                    self.deficit[class] = 0;
                    self.active.pop_front();
                    self.head_credited = false;
                }
                return entry;
            }
            // The head packet does not fit: the turn passes, the deficit carries over.
            self.active.rotate_left(1);
            self.head_credited = false;
        }
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its per-class FIFOs's.
impl std::ops::Deref for Drr {
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
    use proptest::prelude::*;

    proptest! {
        /// Whatever happened before, an empty DRR is in its initial state, so a packet that
        /// passes through it for an idle transmitter can skip it (the port's fast path).
        #[test]
        fn an_empty_drr_is_in_its_initial_state(
            ops in prop::collection::vec((any::<bool>(), 0u8..8, 40u32..3000), 1..200),
            quantum in 1u32..2000,
        ) {
            let mut q = Drr::new(quantum, [1, 2, 3, 4, 1, 2, 3, 4]);
            with_ctx(BufferSize::Packets(1000), |ctx| {
                for (n, &(push, class, size)) in ops.iter().enumerate() {
                    if push {
                        q.enqueue(entry(n as u32, size, class), ctx);
                    } else {
                        q.dequeue(ctx);
                    }
                    if q.is_empty() {
                        prop_assert!(q.active.is_empty());
                        prop_assert!(!q.head_credited);
                        prop_assert_eq!(q.deficit, [0; CLASSES]);
                    }
                }
                // Drain: the end state is the initial one.
                while q.dequeue(ctx).is_some() {}
                prop_assert_eq!(q.deficit, [0; CLASSES]);
                prop_assert!(q.active.is_empty() && !q.head_credited);
                Ok(())
            })?;
        }
    }

    #[test]
    fn saturated_byte_shares_follow_the_weights_for_any_packet_sizes() {
        // Classes 1, 2, 3 with weights 1:2:3 and different packet sizes (1500, 700, 64 B).
        let mut weights = [1u16; CLASSES];
        weights[2] = 2;
        weights[3] = 3;
        let mut q = Drr::new(1500, weights);
        let sizes = [0u32, 1500, 700, 64];
        let mut served = [0u64; 4];
        with_ctx(BufferSize::Packets(1_000_000), |ctx| {
            let mut n = 0;
            for class in 1..4u8 {
                for _ in 0..100_000 {
                    q.enqueue(entry(n, sizes[class as usize], class), ctx);
                    n += 1;
                }
            }
            // Serve 6 MB while every class is still backlogged.
            let mut total = 0;
            while total < 6_000_000 {
                let e = q.dequeue(ctx).unwrap();
                served[e.packet.class() as usize] += e.packet.size_bytes as u64;
                total += e.packet.size_bytes as u64;
            }
        });
        let total: u64 = served.iter().sum();
        for (class, want) in [(1, 1.0 / 6.0), (2, 2.0 / 6.0), (3, 3.0 / 6.0)] {
            let share = served[class] as f64 / total as f64;
            // DRR's lag is at most one maximum packet plus one quantum per class per round:
            // 4,500 B of 6 MB here.
            assert!(
                (share - want).abs() < 0.001,
                "class {class}: {share} vs {want}"
            );
        }
    }
}

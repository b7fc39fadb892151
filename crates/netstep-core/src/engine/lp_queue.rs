//! The pending events of one logical process.
//!
//! Most LPs hold a handful of events (on the Days baseline 45 % of pops find one event, 89 %
//! at most three), and a new event is usually the latest or earlier than only a few (a
//! pending timer, a port's wake-up). So while it is small the queue is a vector sorted latest
//! first: a pop takes the last element, a push steps over the few later events from the front
//! and inserts there (a short move). Past [`TO_HEAP`] events it becomes a binary heap (an LP
//! with many flows' timers), and back to a sorted vector once it has drained below
//! [`TO_SORTED`]. Either way the events come out in
//! exactly the [`Event`] order (keys are unique), so the choice never changes a result.

use std::collections::BinaryHeap;

use super::event::Event;

/// Above this many events a sorted vector becomes a heap.
pub const TO_HEAP: usize = 32;
/// Below this many events a heap becomes a sorted vector again.
pub const TO_SORTED: usize = 16;

/// An LP's pending events, earliest first (see the module docs).
#[derive(Clone, Debug)]
pub struct LpQueue {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    /// Latest first, earliest last. `Event`'s `Ord` is reversed (a max-heap pops the
    /// earliest), so "a before b" is `a > b` and the vector is ascending in `Ord`.
    Sorted(Vec<Event>),
    /// Large queues.
    Heap(BinaryHeap<Event>),
}

impl Default for LpQueue {
    fn default() -> LpQueue {
        LpQueue {
            repr: Repr::Sorted(Vec::new()),
        }
    }
}

impl LpQueue {
    /// Adds an event.
    #[inline]
    pub fn push(&mut self, event: Event) {
        match &mut self.repr {
            Repr::Sorted(q) => {
                // From the front (latest): step over the events later than this one.
                let mut at = 0;
                while at < q.len() && q[at] < event {
                    at += 1;
                }
                q.insert(at, event);
                if q.len() > TO_HEAP {
                    self.become_heap();
                }
            }
            Repr::Heap(h) => h.push(event),
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        match &mut self.repr {
            Repr::Sorted(q) => q.pop(),
            Repr::Heap(h) => {
                let event = h.pop();
                if h.len() < TO_SORTED {
                    self.become_sorted();
                }
                event
            }
        }
    }

    /// The earliest event.
    #[inline]
    pub fn peek(&self) -> Option<&Event> {
        match &self.repr {
            Repr::Sorted(q) => q.last(),
            Repr::Heap(h) => h.peek(),
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Sorted(q) => q.len(),
            Repr::Heap(h) => h.len(),
        }
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cold]
    fn become_heap(&mut self) {
        if let Repr::Sorted(q) = &mut self.repr {
            self.repr = Repr::Heap(BinaryHeap::from(std::mem::take(q)));
        }
    }

    #[cold]
    fn become_sorted(&mut self) {
        if let Repr::Heap(h) = &mut self.repr {
            // Ascending in `Ord`: latest first, as the sorted vector keeps them.
            self.repr = Repr::Sorted(std::mem::take(h).into_sorted_vec());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{EventKey, EventKind, Phase};
    use crate::units::SimTime;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// Event number `tie` at `time`: a packet arrival (its tie the hash of the packet id) for
    /// odd numbers, a flow start (its tie the flow id) for even ones, all created at time 0,
    /// so equal stored keys are frequent.
    fn event(time: u64, tie: u64) -> Event {
        if tie % 2 == 1 {
            let packet = crate::packet::Packet::new(
                crate::packet::PacketKind::Data,
                (tie % 7) as u32,
                tie as u32,
                0,
                0,
                1000,
            );
            return Event {
                key: EventKey::new(SimTime(time), Phase::Arrive, SimTime::ZERO),
                kind: EventKind::Arrive(packet),
            };
        }
        Event {
            key: EventKey::new(SimTime(time), Phase::Timer, SimTime::ZERO),
            kind: EventKind::FlowStart { flow: tie as u32 },
        }
    }

    /// Random pushes and pops across both representations come out exactly as from a
    /// binary heap.
    #[test]
    fn pops_in_the_same_order_as_a_binary_heap() {
        let mut rng = Pcg64Mcg::seed_from_u64(7);
        let mut q = LpQueue::default();
        let mut h = BinaryHeap::new();
        let mut tie = 0;
        let mut largest = 0;
        for round in 0..20_000 {
            // Phases of growth (past TO_HEAP) and of draining (below TO_SORTED).
            let push = if (round / 2000) % 2 == 0 {
                rng.random_bool(0.7)
            } else {
                rng.random_bool(0.3)
            };
            if push {
                tie += 1;
                // Few distinct times, so equal times are frequent.
                let e = event(rng.random_range(0..50), tie);
                q.push(e);
                h.push(e);
            } else {
                assert_eq!(q.pop(), h.pop());
            }
            assert_eq!(q.peek(), h.peek());
            assert_eq!(q.len(), h.len());
            largest = largest.max(q.len());
        }
        assert!(largest > TO_HEAP, "the heap representation was exercised");
        while let Some(e) = h.pop() {
            assert_eq!(q.pop(), Some(e));
        }
        assert!(q.is_empty());
    }
}

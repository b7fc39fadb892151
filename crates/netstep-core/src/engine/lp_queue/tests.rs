//! The queue against a plain binary heap: random pushes (own and remote) and pops, small
//! batches and large ones.

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

/// Random pushes of own and remote events and pops, across both representations of the
/// own events and batches merged at any point, come out exactly as from a binary heap;
/// the queue never holds more than `cap` events. Returns whether it ended big.
fn same_order_as_a_binary_heap(cap: usize) -> bool {
    let mut rng = Pcg64Mcg::seed_from_u64(7);
    let mut q = LpQueue::default();
    let mut h = BinaryHeap::new();
    let mut tie = 0;
    let mut largest = 0;
    for round in 0..20_000 {
        // Phases of growth (past TO_BIG) and of draining (below TO_SMALL).
        let push = if (round / 2000) % 2 == 0 {
            rng.random_bool(0.7)
        } else {
            rng.random_bool(0.3)
        };
        if push && q.len() < cap {
            // Own events one at a time, other LPs' events in batches, now and then one
            // large enough for the radix sort.
            let own = rng.random_bool(0.5);
            let burst = if !own && rng.random_bool(0.02) {
                RADIX_SORT + rng.random_range(0..RADIX_SORT)
            } else {
                1
            };
            for _ in 0..burst.min(cap - q.len()) {
                tie += 1;
                // Few distinct times, so equal times are frequent.
                let e = event(rng.random_range(0..50), tie);
                if own {
                    q.push(e);
                } else {
                    q.push_remote(e);
                }
                h.push(e);
            }
        } else if rng.random_bool(0.5) {
            assert_eq!(q.pop(), h.pop());
        } else {
            let bound = SimTime(rng.random_range(0..50));
            let due = h.peek().is_some_and(|e| e.key.time < bound);
            assert_eq!(q.pop_before(bound), if due { h.pop() } else { None });
        }
        if rng.random_bool(0.5) {
            assert_eq!(q.peek(), h.peek());
        }
        assert_eq!(q.len(), h.len());
        largest = largest.max(q.len());
    }
    assert!(largest > TO_BIG, "the big representation was exercised");
    while let Some(e) = h.pop() {
        assert_eq!(q.pop(), Some(e));
    }
    assert!(q.is_empty());
    matches!(q.repr, Repr::Big(_))
}

/// Queues that grow past [`TO_BIG`] and drain below [`TO_SMALL`] again and again, their
/// batches never reaching [`KEEP_BIG`]: they end small.
#[test]
fn pops_in_the_same_order_as_a_binary_heap() {
    assert!(!same_order_as_a_binary_heap(KEEP_BIG / 2 - 1));
}

/// Queues with batches of hundreds of events: they stay big once emptied.
#[test]
fn pops_in_the_same_order_as_a_binary_heap_with_large_batches() {
    assert!(same_order_as_a_binary_heap(usize::MAX));
}

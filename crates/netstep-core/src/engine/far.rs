//! The LPs of a chunk whose next event is far ahead.
//!
//! A chunk visits its active LPs once per window and skips those not yet due. That visit is
//! cheap, but a run where many LPs hold only a distant event (a million TCP senders, each
//! with its retransmission timer set a second ahead, while a fan-in drains over hundreds of
//! thousands of windows) would pay it for every such LP in every window. So an LP skipped in
//! [`PARK_AFTER`] windows in a row whose next event is at least [`FAR_WINDOWS`] windows past
//! the current bound leaves the active list for this heap, keyed by that time, and returns to
//! the list in the window it falls due in, or as soon as an earlier event is delivered to it.
//! Both conditions matter: a TCP sender's next event is its retransmission timer, far off,
//! but its ACK usually comes a few windows later, and a push and a pop (the entry goes stale
//! when the ACK brings the LP back) cost more than the few visits they would save; an
//! open-loop sender's next packet a few dozen windows ahead is cheaper to visit than to park.
//! Which LPs run in a window, and in what order a chunk runs them, never changes a result
//! (each LP's events run in key order, and a window's messages are sorted by key on
//! delivery), so the heap only saves visits.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::units::SimTime;

/// An LP may wait in the far heap when its next event is at least this many windows past the
/// current window's bound.
pub(super) const FAR_WINDOWS: u64 = 256;
/// ... and it was skipped (visited, not due) in this many windows in a row.
pub(super) const PARK_AFTER: u8 = 16;
/// [`Far::state`] of a slot waiting in the heap.
const PARKED: u8 = u8::MAX;

/// The far heap of one chunk: `(next event time, slot)`, earliest first, with lazy deletion
/// (an entry is current only while its slot is marked far and its time is the slot's next).
#[derive(Debug, Default)]
pub(super) struct Far {
    heap: BinaryHeap<Reverse<(SimTime, u32)>>,
    /// Per slot: [`PARKED`] while waiting in the heap (not on the active list), else the
    /// windows in a row it was skipped in, up to [`PARK_AFTER`].
    state: Vec<u8>,
    /// Slots parked so far.
    pub(super) parked: u64,
}

impl Far {
    /// An empty heap for `n_slots` slots.
    pub(super) fn new(n_slots: usize) -> Far {
        Far {
            heap: BinaryHeap::new(),
            state: vec![0; n_slots],
            parked: 0,
        }
    }

    /// Whether slot `slot` waits here.
    #[inline]
    pub(super) fn holds(&self, slot: u32) -> bool {
        self.state[slot as usize] == PARKED
    }

    /// Slot `slot`, on the active list, was skipped in this window: whether it was skipped
    /// in [`PARK_AFTER`] windows in a row.
    #[inline]
    pub(super) fn skipped(&mut self, slot: u32) -> bool {
        let skips = &mut self.state[slot as usize];
        if *skips >= PARK_AFTER {
            return true;
        }
        *skips += 1;
        false
    }

    /// Slot `slot`, whose next event is at `at`, waits here.
    #[inline]
    pub(super) fn park(&mut self, slot: u32, at: SimTime) {
        self.state[slot as usize] = PARKED;
        self.parked += 1;
        self.heap.push(Reverse((at, slot)));
    }

    /// Slot `slot` is on the active list with no skips counted: it runs in this window, joins
    /// the list from idle, or leaves the heap (its entry there becomes stale).
    #[inline]
    pub(super) fn on_list(&mut self, slot: u32) {
        self.state[slot as usize] = 0;
    }

    /// Moves every slot due before `bound` to `active` (`next`: each slot's next event time).
    #[inline]
    pub(super) fn release(&mut self, bound: SimTime, next: &[SimTime], active: &mut Vec<u32>) {
        while let Some(&Reverse((at, slot))) = self.heap.peek() {
            if at >= bound {
                break;
            }
            self.heap.pop();
            if self.current(at, slot, next) {
                self.on_list(slot);
                active.push(slot);
            }
        }
    }

    /// The earliest next event of the slots waiting here (`SimTime::MAX` when none); drops
    /// stale entries from the top.
    pub(super) fn earliest(&mut self, next: &[SimTime]) -> SimTime {
        while let Some(&Reverse((at, slot))) = self.heap.peek() {
            if self.current(at, slot, next) {
                return at;
            }
            self.heap.pop();
        }
        SimTime::MAX
    }

    /// Whether the entry `(at, slot)` is current.
    #[inline]
    fn current(&self, at: SimTime, slot: u32, next: &[SimTime]) -> bool {
        self.holds(slot) && next[slot as usize] == at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parked slots come back in the window they fall due in; an unparked slot's entry is
    /// stale and neither comes back nor counts as the earliest.
    #[test]
    fn parked_slots_return_when_due_and_stale_entries_are_skipped() {
        let mut far = Far::new(3);
        let mut next = vec![SimTime(500), SimTime(300), SimTime(900)];
        far.park(0, SimTime(500));
        far.park(1, SimTime(300));
        far.park(2, SimTime(900));
        assert_eq!(far.earliest(&next), SimTime(300));
        // Slot 1 gets an earlier event: it leaves for the active list.
        far.on_list(1);
        next[1] = SimTime(100);
        assert_eq!(far.earliest(&next), SimTime(500));
        let mut active = Vec::new();
        far.release(SimTime(500), &next, &mut active);
        assert!(active.is_empty(), "nothing is due before 500");
        far.release(SimTime(501), &next, &mut active);
        assert_eq!(active, vec![0]);
        assert!(!far.holds(0) && far.holds(2) && !far.holds(1));
        assert_eq!(far.earliest(&next), SimTime(900));
        far.release(SimTime::MAX, &next, &mut active);
        assert_eq!(active, vec![0, 2]);
        assert_eq!(far.earliest(&next), SimTime::MAX);
    }

    /// A slot may park only once skipped in `PARK_AFTER` windows in a row; running resets
    /// the count.
    #[test]
    fn a_slot_parks_only_after_enough_skips_in_a_row() {
        let mut far = Far::new(1);
        for _ in 0..PARK_AFTER {
            assert!(!far.skipped(0));
        }
        far.on_list(0);
        for _ in 0..PARK_AFTER {
            assert!(!far.skipped(0));
        }
        assert!(far.skipped(0));
        far.park(0, SimTime(7));
        assert!(far.holds(0));
        far.on_list(0);
        assert!(!far.holds(0) && !far.skipped(0));
    }
}

//! The pending events of one logical process.
//!
//! Most LPs hold a handful of events (on the Days baseline 45 % of pops find one event, 89 %
//! at most three), and a new event is usually the latest or earlier than only a few (a
//! pending timer, a port's wake-up). So while it is small the queue is a vector sorted latest
//! first: a pop takes the last element, a push steps over the later events from the front and
//! inserts there (comparing times, the whole key only when they are equal), moving the
//! earlier ones up by one. (At a switch a push lands anywhere: on an
//! m3 mix a push finds eight events on average and steps over half of them; a ring buffer
//! sorted earliest first, measured 2026-11-28, moved no fewer and cost 9 % more instructions.)
//!
//! Past [`TO_BIG`] events (a switch with hundreds of packets in flight towards it, a host with
//! many flows' timers) the queue keeps its events by where they come from, each the way it
//! arrives:
//!
//! - **the LP's own events** ([`LpQueue::push`]: port wake-ups, timers), one at a time while
//!   it runs: a binary heap (which also takes the events held when the queue grew large);
//! - **events from other LPs** ([`LpQueue::push_remote`]: packet arrivals, delivered in a
//!   batch at each window's barrier): staged unsorted, then at the next look at the queue the
//!   batch is sorted (a large one by a radix sort on time, `radix`) and merged into a
//!   vector sorted latest first, moving only the pending events earlier than the batch's
//!   latest (far flow starts stay put). A switch then pays a sort of each window's batch,
//!   sequential in memory, instead of a heap sift per packet.
//!
//! A pop takes the earlier of the two heads. Below [`TO_SMALL`] events the queue is one sorted
//! vector again, unless it has taken batches of [`KEEP_BIG`] events or more: a busy switch
//! keeps its buffers instead of dropping and regrowing them every window. Either way the
//! events come out in exactly the [`Event`] order (keys are unique), so the choice never
//! changes a result.

use std::collections::BinaryHeap;

use super::event::Event;
use crate::units::SimTime;
use radix::RadixBuffers;

mod radix;

/// Above this many events a small queue becomes a big one.
pub const TO_BIG: usize = 64;
/// Below this many events a big queue becomes a small one again, unless it keeps batches.
/// Far below [`TO_BIG`]: with 32 and 16 a switch of the m3 mix went big and back about
/// once per 230 packet-hops, a heap built and a vector sorted each time (2.4 % of the
/// instructions, `benches/hop-cost`).
pub const TO_SMALL: usize = 4;
/// A big queue whose batch buffers have grown to this many events stays big even when it
/// empties: a switch that takes hundreds of arrivals every window would otherwise drop and
/// regrow its buffers (reallocations and fresh pages) every window.
pub const KEEP_BIG: usize = 256;

/// An LP's pending events, earliest first (see the module docs).
#[derive(Clone, Debug)]
pub struct LpQueue {
    repr: Repr,
}

#[derive(Clone, Debug)]
enum Repr {
    /// Latest first, earliest last. `Event`'s `Ord` is reversed (a max-heap pops the
    /// earliest), so "a before b" is `a > b` and the vector is ascending in `Ord`.
    Small(Vec<Event>),
    /// Many events.
    Big(Box<Big>),
}

/// A queue with many events, kept by origin.
#[derive(Clone, Debug, Default)]
struct Big {
    /// The LP's own events.
    own: BinaryHeap<Event>,
    /// Events from other LPs, sorted latest first (ascending in `Ord`).
    remote: Vec<Event>,
    /// Events from other LPs not yet merged into `remote`, in delivery order.
    staged: Vec<Event>,
    /// Buffers of the radix sort of large batches.
    radix: RadixBuffers,
    /// A large batch in order (buffer kept between batches).
    sorted: Vec<Event>,
}

/// A batch at least this large is sorted by a radix sort on time ([`radix`]).
const RADIX_SORT: usize = 64;

impl Default for LpQueue {
    fn default() -> LpQueue {
        LpQueue {
            repr: Repr::Small(Vec::new()),
        }
    }
}

impl LpQueue {
    /// Adds one of the LP's own events (made while it runs).
    #[inline]
    pub fn push(&mut self, event: Event) {
        match &mut self.repr {
            Repr::Small(_) => self.push_small(event),
            Repr::Big(big) => big.own.push(event),
        }
    }

    /// Adds an event from another LP (delivered at a window's barrier). In a big queue the
    /// events delivered together are sorted together at the next look at the queue.
    #[inline]
    pub fn push_remote(&mut self, event: Event) {
        match &mut self.repr {
            Repr::Small(_) => self.push_small(event),
            Repr::Big(big) => big.staged.push(event),
        }
    }

    /// Adds an event to a small queue, which becomes big past [`TO_BIG`] events.
    #[inline]
    fn push_small(&mut self, event: Event) {
        if let Repr::Small(q) = &mut self.repr {
            if q.len() == q.capacity() {
                // Full: grow out of line (the check alone stays on the push path).
                grow(q);
            }
            insert_sorted(q, event);
            if q.len() > TO_BIG {
                self.become_big();
            }
        }
    }

    /// Removes and returns the earliest event.
    #[inline]
    pub fn pop(&mut self) -> Option<Event> {
        match &mut self.repr {
            Repr::Small(q) => q.pop(),
            Repr::Big(big) => {
                let event = big.pop();
                if big.len() < TO_SMALL && !big.keeps_batches() {
                    self.become_small();
                }
                event
            }
        }
    }

    /// Removes and returns the earliest event if it is due before `bound`.
    #[inline]
    pub fn pop_before(&mut self, bound: SimTime) -> Option<Event> {
        match &mut self.repr {
            Repr::Small(q) => {
                if q.last()?.key.time >= bound {
                    return None;
                }
                q.pop()
            }
            Repr::Big(big) => {
                let event = big.pop_before(bound);
                if big.len() < TO_SMALL && !big.keeps_batches() {
                    self.become_small();
                }
                event
            }
        }
    }

    /// The earliest event.
    #[inline]
    pub fn peek(&mut self) -> Option<&Event> {
        match &mut self.repr {
            Repr::Small(q) => q.last(),
            Repr::Big(big) => {
                if big.remote_first() {
                    big.remote.last()
                } else {
                    big.own.peek()
                }
            }
        }
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        match &self.repr {
            Repr::Small(q) => q.len(),
            Repr::Big(big) => big.len(),
        }
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[cold]
    fn become_big(&mut self) {
        if let Repr::Small(q) = &mut self.repr {
            // Every event joins the heap: which were the LP's own is not recorded.
            let own = BinaryHeap::from(std::mem::take(q));
            self.repr = Repr::Big(Box::new(Big {
                own,
                ..Big::default()
            }));
        }
    }

    #[cold]
    fn become_small(&mut self) {
        if let Repr::Big(big) = &mut self.repr {
            let mut q = std::mem::take(&mut big.own).into_vec();
            q.append(&mut big.remote);
            q.append(&mut big.staged);
            // Ascending in `Ord`: latest first, as the small queue keeps them.
            q.sort_unstable();
            self.repr = Repr::Small(q);
        }
    }
}

/// Makes room for one more event in a full small queue ([`super::reserve_doubling`]).
#[cold]
#[inline(never)]
fn grow(q: &mut Vec<Event>) {
    super::reserve_doubling(q, q.len() + 1);
}

/// Inserts `event` into `q`, sorted latest first: from the front (latest), step over the
/// events later than this one. The step compares times alone and the whole key only when
/// they are equal (rare).
#[inline]
fn insert_sorted(q: &mut Vec<Event>, event: Event) {
    let time = event.key.time;
    let mut at = 0;
    while let Some(e) = q.get(at) {
        let later = if e.key.time == time {
            *e < event
        } else {
            e.key.time > time
        };
        if !later {
            break;
        }
        at += 1;
    }
    q.insert(at, event);
}

impl Big {
    fn len(&self) -> usize {
        self.own.len() + self.remote.len() + self.staged.len()
    }

    /// Whether this queue has taken batches of [`KEEP_BIG`] events or more from other LPs
    /// (its buffers have grown that far): then it stays big when it empties.
    #[inline]
    fn keeps_batches(&self) -> bool {
        self.staged.capacity().max(self.remote.capacity()) >= KEEP_BIG
    }

    /// Whether the earliest event is the head of `remote` (else of `own`), after merging
    /// the staged events.
    #[inline]
    fn remote_first(&mut self) -> bool {
        if !self.staged.is_empty() {
            self.merge_staged();
        }
        match (self.remote.last(), self.own.peek()) {
            (Some(r), Some(o)) => r > o,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }

    #[inline]
    fn pop(&mut self) -> Option<Event> {
        if self.remote_first() {
            self.remote.pop()
        } else {
            self.own.pop()
        }
    }

    #[inline]
    fn pop_before(&mut self, bound: SimTime) -> Option<Event> {
        if self.remote_first() {
            if self.remote.last()?.key.time >= bound {
                return None;
            }
            self.remote.pop()
        } else {
            if self.own.peek()?.key.time >= bound {
                return None;
            }
            self.own.pop()
        }
    }

    /// Sorts the staged events and merges them into `remote`.
    #[inline(never)]
    fn merge_staged(&mut self) {
        let Big {
            remote,
            staged,
            radix,
            sorted,
            ..
        } = self;
        sort_batch(staged, radix, sorted);
        if remote.is_empty() {
            std::mem::swap(remote, staged);
            return;
        }
        // Pending events later than every staged one stay where they are; the rest merge
        // with the batch from the back (earliest last).
        let latest = staged[0];
        let split = remote.partition_point(|e| *e < latest);
        let mut unmerged = remote.len();
        let mut left = staged.len();
        remote.resize(unmerged + left, latest);
        let mut write = remote.len();
        while left > 0 {
            write -= 1;
            if unmerged > split && remote[unmerged - 1] > staged[left - 1] {
                unmerged -= 1;
                remote[write] = remote[unmerged];
            } else {
                left -= 1;
                remote[write] = staged[left];
            }
        }
        staged.clear();
    }
}

/// Sorts a batch latest first (ascending in `Ord`): a large one by a radix sort on time
/// ([`radix`]; `radix` and `sorted` are buffers kept between batches), a small one, or one
/// spanning more than `u32::MAX` ps, by comparisons.
fn sort_batch(staged: &mut Vec<Event>, radix: &mut RadixBuffers, sorted: &mut Vec<Event>) {
    if staged.len() < RADIX_SORT || !radix::sort_latest_first(staged, sorted, radix) {
        staged.sort_unstable();
    }
}

#[cfg(test)]
mod tests;

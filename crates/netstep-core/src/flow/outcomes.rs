//! Every flow's outcome, by flow id, kept compactly.
//!
//! A run of millions of flows holds every flow's outcome at once while it writes its tables,
//! on top of what the engine kept of each flow: at 128 B per [`FlowOutcome`] a 10 M-flow run
//! needed 1.28 GB for them alone. [`FlowOutcomes`] keeps what almost every flow has in
//! columns (packets sent and delivered, ECN marks, start and end: 40 B per flow) and what few
//! flows have (drops, retransmissions, timeouts, a dependency, a handshake, a failure) in a
//! list sorted by flow id, 64 B per such flow; a flow's [`FlowOutcome`] is rebuilt on demand.

use crate::rare_rows::{RareCursor, RareRows};
use crate::transport::FailureReason;
use crate::units::{MaybeTime, SimTime};

/// What happened to one flow.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowOutcome {
    /// Flow id.
    pub flow: u32,
    /// Data packets put on the wire by the sender, retransmissions included.
    pub packets_sent: u64,
    /// Distinct data packets that reached the receiver.
    pub packets_delivered: u64,
    /// Packets of this flow (data or ACK) dropped anywhere.
    pub packets_dropped: u64,
    /// Times a queue marked one of its packets (ECN CE or DECbit), over all hops.
    pub ecn_marks: u64,
    /// Data packets sent again.
    pub retransmits: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// When the flow started, if it did (its `start`, or later when it waited for other flows).
    pub start: Option<SimTime>,
    /// When the last of the flows it waited for was known finished at its source, if it
    /// waited and they all finished.
    pub deps_done: Option<SimTime>,
    /// When the receiver had every byte, if it did.
    pub end: Option<SimTime>,
    /// When the TCP handshake completed (`handshake = true`; the SYN-ACK's arrival).
    pub handshake: Option<SimTime>,
    /// Why the sender gave the flow up, if it did.
    pub failure: Option<FailureReason>,
}

impl FlowOutcome {
    /// Flow `flow` before anything happened to it: every count zero, every time unknown.
    pub const fn nothing(flow: u32) -> FlowOutcome {
        FlowOutcome {
            flow,
            packets_sent: 0,
            packets_delivered: 0,
            packets_dropped: 0,
            ecn_marks: 0,
            retransmits: 0,
            fast_retransmits: 0,
            timeouts: 0,
            start: None,
            deps_done: None,
            end: None,
            handshake: None,
            failure: None,
        }
    }
}

/// The fields few flows have: drops, retransmissions, timeouts, a dependency's end, a
/// handshake, a failure (times in one word each, as in the columns: [`MaybeTime`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Rare {
    packets_dropped: u64,
    retransmits: u64,
    fast_retransmits: u64,
    timeouts: u64,
    deps_done: MaybeTime,
    handshake: MaybeTime,
    failure: Option<FailureReason>,
}

impl Rare {
    /// The rare part of `o`, or `None` when it has none.
    fn of(o: &FlowOutcome) -> Option<Rare> {
        let rare = Rare {
            packets_dropped: o.packets_dropped,
            retransmits: o.retransmits,
            fast_retransmits: o.fast_retransmits,
            timeouts: o.timeouts,
            deps_done: MaybeTime::new(o.deps_done),
            handshake: MaybeTime::new(o.handshake),
            failure: o.failure,
        };
        (rare != Rare::NONE).then_some(rare)
    }

    const NONE: Rare = Rare {
        packets_dropped: 0,
        retransmits: 0,
        fast_retransmits: 0,
        timeouts: 0,
        deps_done: MaybeTime::NONE,
        handshake: MaybeTime::NONE,
        failure: None,
    };
}

/// Every flow's outcome, by flow id (see the module docs); [`FlowOutcomes::get`] and
/// [`FlowOutcomes::iter`] rebuild each [`FlowOutcome`] (and `Debug` prints them so).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct FlowOutcomes {
    packets_sent: Vec<u64>,
    packets_delivered: Vec<u64>,
    ecn_marks: Vec<u64>,
    start: Vec<MaybeTime>,
    end: Vec<MaybeTime>,
    /// The flows with a rare field, by flow id.
    rare: RareRows<Rare>,
}

impl FlowOutcomes {
    /// Room for `n` flows.
    pub fn with_capacity(n: usize) -> FlowOutcomes {
        FlowOutcomes {
            packets_sent: Vec::with_capacity(n),
            packets_delivered: Vec::with_capacity(n),
            ecn_marks: Vec::with_capacity(n),
            start: Vec::with_capacity(n),
            end: Vec::with_capacity(n),
            rare: RareRows::default(),
        }
    }

    /// Appends the outcome of the next flow (its times below [`SimTime::MAX`], as every simulated
    /// time is: that value stands for "none").
    ///
    /// # Panics
    /// If `outcome.flow` is not the number of flows held so far (flows go in by id).
    pub fn push(&mut self, outcome: FlowOutcome) {
        assert_eq!(
            outcome.flow as usize,
            self.len(),
            "flow outcomes are added in flow-id order"
        );
        self.packets_sent.push(outcome.packets_sent);
        self.packets_delivered.push(outcome.packets_delivered);
        self.ecn_marks.push(outcome.ecn_marks);
        self.start.push(MaybeTime::new(outcome.start));
        self.end.push(MaybeTime::new(outcome.end));
        if let Some(rare) = Rare::of(&outcome) {
            self.rare.push(outcome.flow, rare);
        }
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.packets_sent.len()
    }

    /// True when there are no flows.
    pub fn is_empty(&self) -> bool {
        self.packets_sent.is_empty()
    }

    /// The outcome of flow `id`.
    ///
    /// # Panics
    /// If there is no flow `id`.
    pub fn get(&self, id: usize) -> FlowOutcome {
        self.build(id, &self.rare.get(id).unwrap_or(Rare::NONE))
    }

    /// When flow `id`'s receiver had every byte, if it did: `get(id).end` without rebuilding
    /// the rest.
    ///
    /// # Panics
    /// If there is no flow `id`.
    pub fn end(&self, id: usize) -> Option<SimTime> {
        self.end[id].get()
    }

    /// Every flow's outcome, by flow id.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            outcomes: self,
            next: 0,
            rare: RareCursor::default(),
        }
    }

    fn build(&self, id: usize, rare: &Rare) -> FlowOutcome {
        FlowOutcome {
            flow: id as u32,
            packets_sent: self.packets_sent[id],
            packets_delivered: self.packets_delivered[id],
            packets_dropped: rare.packets_dropped,
            ecn_marks: self.ecn_marks[id],
            retransmits: rare.retransmits,
            fast_retransmits: rare.fast_retransmits,
            timeouts: rare.timeouts,
            start: self.start[id].get(),
            deps_done: rare.deps_done.get(),
            end: self.end[id].get(),
            handshake: rare.handshake.get(),
            failure: rare.failure,
        }
    }
}

impl std::fmt::Debug for FlowOutcomes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<FlowOutcome> for FlowOutcomes {
    /// Outcomes in flow-id order (see [`FlowOutcomes::push`]).
    fn from_iter<I: IntoIterator<Item = FlowOutcome>>(iter: I) -> FlowOutcomes {
        let iter = iter.into_iter();
        let mut all = FlowOutcomes::with_capacity(iter.size_hint().0);
        for outcome in iter {
            all.push(outcome);
        }
        all
    }
}

/// [`FlowOutcomes::iter`]: every flow's outcome in flow-id order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    outcomes: &'a FlowOutcomes,
    next: usize,
    rare: RareCursor,
}

impl Iterator for Iter<'_> {
    type Item = FlowOutcome;

    fn next(&mut self) -> Option<FlowOutcome> {
        let id = self.next;
        if id >= self.outcomes.len() {
            return None;
        }
        self.next += 1;
        let rare = self.rare.at(&self.outcomes.rare, id).unwrap_or(Rare::NONE);
        Some(self.outcomes.build(id, &rare))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.outcomes.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

impl<'a> IntoIterator for &'a FlowOutcomes {
    type Item = FlowOutcome;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(flow: u32) -> FlowOutcome {
        let mut o = FlowOutcome::nothing(flow);
        o.packets_sent = 10 + flow as u64;
        o.packets_delivered = 9 + flow as u64;
        o.ecn_marks = flow as u64 % 3;
        o.start = Some(SimTime(1_000 * flow as u64));
        o.end = (flow % 4 != 3).then_some(SimTime(5_000 * flow as u64 + 7));
        match flow % 5 {
            1 => o.packets_dropped = 2,
            2 => o.retransmits = 3,
            3 => {
                o.fast_retransmits = 1;
                o.timeouts = 4;
                o.failure = Some(FailureReason::RetryLimit);
            }
            4 if flow.is_multiple_of(2) => {
                o.deps_done = Some(SimTime(0));
                o.handshake = Some(SimTime(u64::MAX - 1));
            }
            _ => {}
        }
        o
    }

    /// Every field of every flow comes back as it went in, by `get` and by `iter`, common
    /// and rare fields alike (a zero time and a flow with no start included).
    #[test]
    fn every_outcome_comes_back_exactly() {
        let all: Vec<FlowOutcome> = (0..50)
            .map(outcome)
            .chain([FlowOutcome::nothing(50)])
            .collect();
        let kept: FlowOutcomes = all.iter().copied().collect();
        assert_eq!(kept.len(), 51);
        assert_eq!(kept.iter().len(), 51);
        assert_eq!(kept.iter().collect::<Vec<_>>(), all);
        for o in &all {
            assert_eq!(kept.get(o.flow as usize), *o);
            assert_eq!(kept.end(o.flow as usize), o.end);
        }
        // Only the flows with a rare field hold a rare entry.
        let rare = all.iter().filter(|o| Rare::of(o).is_some()).count();
        assert_eq!(kept.rare.len(), rare);
        assert!(rare > 0 && rare < all.len());
    }

    /// Outcomes go in by flow id.
    #[test]
    #[should_panic(expected = "flow-id order")]
    fn outcomes_out_of_order_are_refused() {
        let mut kept = FlowOutcomes::default();
        kept.push(FlowOutcome::nothing(1));
    }
}

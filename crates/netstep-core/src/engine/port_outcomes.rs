//! The counters of every port that carried traffic, kept compactly.
//!
//! A run's end holds one row per used port while the engine's state is still alive: at 80 B
//! per [`PortOutcome`] the million-host fan-in's 2.32 M used ports took 186 MB at the peak of
//! its resident memory. [`PortOutcomes`] keeps what almost every port has in columns (port
//! id, packets and bytes sent, the largest queue: 36 B per port) and what few ports have
//! (drops, packets left queued, losses on the wire, yellow packets, marks) in a list sorted by
//! row, 48 B per such port; a port's [`PortOutcome`] is rebuilt on demand.

use super::output::PortOutcome;
use crate::rare_rows::{RareCursor, RareRows};

/// The counters few ports have.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Rare {
    drops: u64,
    queued_at_end: u64,
    lost: u64,
    yellow: u64,
    ecn_marks: u64,
}

impl Rare {
    /// The rare part of `o`, or `None` when it is all zero.
    fn of(o: &PortOutcome) -> Option<Rare> {
        let rare = Rare {
            drops: o.drops,
            queued_at_end: o.queued_at_end,
            lost: o.lost,
            yellow: o.yellow,
            ecn_marks: o.ecn_marks,
        };
        (rare != Rare::default()).then_some(rare)
    }
}

/// Every used port's counters, by global port id (see the module docs); [`PortOutcomes::iter`]
/// rebuilds each [`PortOutcome`] (and `Debug` prints them so).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PortOutcomes {
    port: Vec<u32>,
    tx_packets: Vec<u64>,
    tx_bytes: Vec<u64>,
    max_queue_packets: Vec<u64>,
    max_queue_bytes: Vec<u64>,
    /// The rows with a rare counter.
    rare: RareRows<Rare>,
}

impl PortOutcomes {
    /// Room for `n` ports.
    pub fn with_capacity(n: usize) -> PortOutcomes {
        PortOutcomes {
            port: Vec::with_capacity(n),
            tx_packets: Vec::with_capacity(n),
            tx_bytes: Vec::with_capacity(n),
            max_queue_packets: Vec::with_capacity(n),
            max_queue_bytes: Vec::with_capacity(n),
            rare: RareRows::default(),
        }
    }

    /// Appends the counters of the next port.
    ///
    /// # Panics
    /// If `outcome.port` is not above the last port's (ports go in by id).
    pub fn push(&mut self, outcome: PortOutcome) {
        assert!(
            self.port.last().is_none_or(|&last| last < outcome.port),
            "port outcomes are added in port-id order"
        );
        let row = self.port.len() as u32;
        self.port.push(outcome.port);
        self.tx_packets.push(outcome.tx_packets);
        self.tx_bytes.push(outcome.tx_bytes);
        self.max_queue_packets.push(outcome.max_queue_packets);
        self.max_queue_bytes.push(outcome.max_queue_bytes);
        if let Some(rare) = Rare::of(&outcome) {
            self.rare.push(row, rare);
        }
    }

    /// Number of ports.
    pub fn len(&self) -> usize {
        self.port.len()
    }

    /// True when no port carried traffic.
    pub fn is_empty(&self) -> bool {
        self.port.is_empty()
    }

    /// The counters of global port `port`, if it carried traffic.
    pub fn get(&self, port: u32) -> Option<PortOutcome> {
        let row = self.port.binary_search(&port).ok()?;
        Some(self.build(row, &self.rare.get(row).unwrap_or_default()))
    }

    /// Every used port's counters, by port id.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            outcomes: self,
            next: 0,
            rare: RareCursor::default(),
        }
    }

    fn build(&self, row: usize, rare: &Rare) -> PortOutcome {
        PortOutcome {
            port: self.port[row],
            tx_packets: self.tx_packets[row],
            tx_bytes: self.tx_bytes[row],
            drops: rare.drops,
            max_queue_packets: self.max_queue_packets[row],
            max_queue_bytes: self.max_queue_bytes[row],
            queued_at_end: rare.queued_at_end,
            lost: rare.lost,
            yellow: rare.yellow,
            ecn_marks: rare.ecn_marks,
        }
    }
}

impl std::fmt::Debug for PortOutcomes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl FromIterator<PortOutcome> for PortOutcomes {
    /// Counters in port-id order (see [`PortOutcomes::push`]).
    fn from_iter<I: IntoIterator<Item = PortOutcome>>(iter: I) -> PortOutcomes {
        let iter = iter.into_iter();
        let mut all = PortOutcomes::with_capacity(iter.size_hint().0);
        for outcome in iter {
            all.push(outcome);
        }
        all
    }
}

impl<'a> IntoIterator for &'a PortOutcomes {
    type Item = PortOutcome;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// [`PortOutcomes::iter`]: every used port's counters in port-id order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    outcomes: &'a PortOutcomes,
    next: usize,
    rare: RareCursor,
}

impl Iterator for Iter<'_> {
    type Item = PortOutcome;

    fn next(&mut self) -> Option<PortOutcome> {
        let o = self.outcomes;
        if self.next >= o.len() {
            return None;
        }
        let row = self.next;
        self.next += 1;
        let rare = self.rare.at(&o.rare, row).unwrap_or_default();
        Some(o.build(row, &rare))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = self.outcomes.len() - self.next;
        (left, Some(left))
    }
}

impl ExactSizeIterator for Iter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(port: u32, drops: u64, ecn_marks: u64) -> PortOutcome {
        PortOutcome {
            port,
            tx_packets: port as u64 * 3,
            tx_bytes: port as u64 * 3000,
            drops,
            max_queue_packets: port as u64 % 7,
            max_queue_bytes: port as u64 % 7 * 1000,
            queued_at_end: drops / 2,
            lost: 0,
            yellow: ecn_marks / 3,
            ecn_marks,
        }
    }

    #[test]
    fn every_port_comes_back_as_it_went_in() {
        let all: Vec<PortOutcome> = (0..50)
            .map(|p| {
                outcome(
                    p * 2 + 1,
                    if p % 9 == 4 { p as u64 } else { 0 },
                    p as u64 % 5,
                )
            })
            .collect();
        let kept: PortOutcomes = all.iter().copied().collect();
        assert_eq!(kept.len(), 50);
        assert_eq!(kept.iter().collect::<Vec<_>>(), all);
        for o in &all {
            assert_eq!(kept.get(o.port), Some(*o));
        }
        assert_eq!(kept.get(2), None, "an unused port has no row");
        assert!(
            kept.rare.len() < all.len(),
            "zero counters take no rare row"
        );
    }

    #[test]
    #[should_panic(expected = "port-id order")]
    fn ports_go_in_by_id() {
        let mut kept = PortOutcomes::default();
        kept.push(outcome(5, 0, 0));
        kept.push(outcome(5, 0, 0));
    }
}

//! The virtual time of the fluid GPS (generalized processor sharing) reference system that
//! WFQ and fair queueing emulate (Parekh and Gallager 1993; Demers, Keshav and Shenker 1989,
//! where it is the "round number"): `V` grows at `C / W(t)`, `W` the summed weight of the
//! flows backlogged in GPS; a flow leaves the GPS backlog when `V` reaches its last finish
//! tag. Units: bytes per unit of weight. Advancing is exact event by event: between two GPS
//! departures `V` is linear in time.

use std::collections::BTreeSet;

use crate::units::{BitsPerSec, SimTime};

/// A finish tag with a total order (finite, non-negative values only).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tag(pub f64);

impl Eq for Tag {}
impl PartialOrd for Tag {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Tag {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// GPS virtual time over flows identified by `u64` keys.
#[derive(Clone, Debug, Default)]
pub struct GpsClock {
    /// Virtual time at `at`.
    v: f64,
    at: SimTime,
    /// Flows backlogged in GPS: (last finish tag, key).
    backlogged: BTreeSet<(Tag, u64)>,
    /// Summed weight of the backlogged flows.
    weight: f64,
    /// Last finish tag and weight of each backlogged flow.
    last: std::collections::HashMap<u64, (Tag, f64)>,
}

impl GpsClock {
    /// Advances `V` to `now` at link rate `rate`, retiring flows whose GPS service ended.
    pub fn advance(&mut self, now: SimTime, rate: BitsPerSec) {
        let bytes_per_ps = rate.0 as f64 / 8.0 / 1e12;
        while let Some(&(Tag(finish), key)) = self.backlogged.first() {
            // Time for V to reach the earliest GPS departure.
            let needed = (finish - self.v) * self.weight / bytes_per_ps;
            let elapsed = (now.0 - self.at.0) as f64;
            if needed > elapsed {
                self.v += elapsed * bytes_per_ps / self.weight;
                self.at = now;
                return;
            }
            self.v = finish;
            self.at = SimTime(self.at.0 + needed.round() as u64).min(now);
            self.backlogged.pop_first();
            let (_, w) = self.last.remove(&key).expect("backlogged flows have a tag");
            self.weight -= w;
        }
        // GPS is idle: V stays where it is (tags only compare among themselves).
        self.weight = 0.0;
        self.at = now;
    }

    /// Tags a packet of `bytes` of flow `key` with weight `weight` arriving now (call
    /// [`GpsClock::advance`] first): `F = max(V, F_prev) + bytes / weight`.
    pub fn tag(&mut self, key: u64, bytes: u64, weight: f64) -> Tag {
        let start = match self.last.get(&key) {
            Some(&(Tag(prev), _)) => {
                self.backlogged.remove(&(Tag(prev), key));
                prev.max(self.v)
            }
            None => {
                self.weight += weight;
                self.v
            }
        };
        let finish = Tag(start + bytes as f64 / weight);
        self.last.insert(key, (finish, weight));
        self.backlogged.insert((finish, key));
        finish
    }

    /// Takes back the last tag of flow `key` (a packet of `bytes` that was pushed out of the
    /// buffer before it was sent): the flow's finish tag returns to where that packet started,
    /// so dropped packets do not count against the flow's share.
    pub fn untag(&mut self, key: u64, bytes: u64) {
        let Some(&(Tag(finish), weight)) = self.last.get(&key) else {
            return;
        };
        self.backlogged.remove(&(Tag(finish), key));
        let start = finish - bytes as f64 / weight;
        if start > self.v {
            self.last.insert(key, (Tag(start), weight));
            self.backlogged.insert((Tag(start), key));
        } else {
            self.last.remove(&key);
            self.weight -= weight;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 Gb/s: one byte per ns.
    const RATE: BitsPerSec = BitsPerSec(8_000_000_000);

    #[test]
    fn virtual_time_follows_the_backlogged_weight() {
        let mut gps = GpsClock::default();
        gps.advance(SimTime::ZERO, RATE);
        // Two flows of weight 1 with 1000 B each at t = 0: both finish at V = 1000, which
        // GPS reaches at 2000 ns (each served at half the rate).
        assert_eq!(gps.tag(1, 1000, 1.0), Tag(1000.0));
        assert_eq!(gps.tag(2, 1000, 1.0), Tag(1000.0));
        gps.advance(SimTime::from_ns(1000), RATE);
        assert!((gps.v - 500.0).abs() < 1e-9, "V = {}", gps.v);
        // A second packet of flow 1 starts where its first finishes.
        assert_eq!(gps.tag(1, 500, 1.0), Tag(1500.0));
        // At 2000 ns flow 2 leaves GPS (V = 1000); flow 1 alone then runs V at full rate.
        gps.advance(SimTime::from_ns(2250), RATE);
        assert!((gps.v - 1250.0).abs() < 1e-6, "V = {}", gps.v);
        // Flow 1 is done at V = 1500 (2500 ns); afterwards V stays.
        gps.advance(SimTime::from_ns(9000), RATE);
        assert!((gps.v - 1500.0).abs() < 1e-6, "V = {}", gps.v);
        // A new arrival starts at the current V.
        assert_eq!(gps.tag(3, 100, 2.0), Tag(1550.0));
    }
}

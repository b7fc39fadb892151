//! The SACK scoreboard of a sender (RFC 2018 blocks, RFC 6675 loss detection and `pipe`),
//! segment-granular.
//!
//! It covers the segments in `[una, high)`: those sent and not cumulatively acknowledged. Each
//! has two facts, *SACKed* and *retransmitted* (since the last timeout). A segment is *lost*
//! (RFC 6675 `IsLost`) when it is not SACKed and at least `DupThresh` SACKed segments lie above
//! it, i.e. it lies below the `DupThresh`-th highest SACKed segment; after a retransmission
//! timeout every segment not SACKed is lost. Everything is kept incrementally, so an ACK costs
//! O(1) amortized whatever the window:
//! - the highest `DupThresh` SACKed segments (sacks only ever add, and the cumulative point
//!   only removes from the bottom, so this short list is always exact),
//! - the *loss frontier* `lost_below`: unSACKed segments below it are lost; it only moves up,
//! - counts of SACKed segments (all, and below the frontier) and of retransmitted unSACKed
//!   segments, from which `pipe` follows (RFC 6675 `SetPipe`): every segment not SACKed and not
//!   lost counts once, every retransmitted one not SACKed once more,
//! - a cursor (`HighRxt + 1`): every segment below it is SACKed or retransmitted, so `NextSeg`
//!   scans each segment at most once per loss episode.
//!
//! The two facts are stored from `una` up to the highest segment that has one; the segments
//! above it have neither, so a sender that never sees a SACK block or a retransmission stores
//! none and its scoreboard allocates nothing.

use std::collections::VecDeque;

const SACKED: u8 = 1;
const RETX: u8 = 2;

/// Longest SACK block marked segment by segment; a longer block is marked from both ends inward
/// until a segment already known SACKed (what is new in a block lies at its ends unless ACKs
/// were lost, and then the cumulative ACK catches up).
const FULL_SCAN_BLOCK: u32 = 64;

/// Per-segment SACK and retransmission state of one sender.
#[derive(Clone, Debug)]
pub struct Scoreboard {
    dupthresh: usize,
    una: u32,
    /// End of the window: segments below it have been sent.
    high: u32,
    /// The facts of the segments from `una` on; those past its end have none.
    flags: VecDeque<u8>,
    sacked: u32,
    retx_unsacked: u32,
    /// Highest `dupthresh` SACKed segments, descending.
    top: Vec<u32>,
    lost_below: u32,
    sacked_below: u32,
    high_sacked: Option<u32>,
    cursor: u32,
}

impl Scoreboard {
    /// An empty scoreboard; `dupthresh` SACKed segments above a hole make it lost.
    pub fn new(dupthresh: u32) -> Scoreboard {
        Scoreboard {
            dupthresh: dupthresh.max(1) as usize,
            una: 0,
            high: 0,
            flags: VecDeque::new(),
            sacked: 0,
            retx_unsacked: 0,
            top: Vec::new(),
            lost_below: 0,
            sacked_below: 0,
            high_sacked: None,
            cursor: 0,
        }
    }

    fn high(&self) -> u32 {
        self.high
    }

    fn flag(&self, seq: u32) -> u8 {
        debug_assert!(seq >= self.una && seq < self.high);
        self.flags
            .get((seq - self.una) as usize)
            .copied()
            .unwrap_or(0)
    }

    /// The stored facts of `seq` (in the window), stored from here on.
    fn flag_mut(&mut self, seq: u32) -> &mut u8 {
        debug_assert!(seq >= self.una && seq < self.high);
        let i = (seq - self.una) as usize;
        if self.flags.len() <= i {
            self.flags.resize(i + 1, 0);
        }
        &mut self.flags[i]
    }

    /// Segments up to `high` (exclusive) have been sent.
    pub fn sent_up_to(&mut self, high: u32) {
        self.high = self.high.max(high);
    }

    /// The cumulative ACK point moved to `una`.
    pub fn advance(&mut self, una: u32) {
        self.high = self.high.max(una);
        while self.una < una {
            let Some(f) = self.flags.pop_front() else {
                self.una = una;
                break;
            };
            if f & SACKED != 0 {
                self.sacked -= 1;
                if self.una < self.lost_below {
                    self.sacked_below -= 1;
                }
            } else if f & RETX != 0 {
                self.retx_unsacked -= 1;
            }
            self.una += 1;
        }
        self.top.retain(|&s| s >= una);
        if self.lost_below < una {
            self.lost_below = una;
            self.sacked_below = 0;
        }
        self.cursor = self.cursor.max(una);
        if self.high_sacked.is_some_and(|h| h < una) {
            self.high_sacked = None;
        }
    }

    /// The receiver reported `[start, start + len)` as received; returns how many segments
    /// became SACKed.
    pub fn sack(&mut self, start: u32, len: u32) -> u32 {
        let (lo, hi) = in_window(start, len, self.una, self.high());
        if lo >= hi {
            return 0;
        }
        let mut newly = 0;
        if hi - lo <= FULL_SCAN_BLOCK {
            for s in lo..hi {
                newly += self.mark(s) as u32;
            }
        } else {
            let mut s = hi;
            while s > lo && self.mark(s - 1) {
                newly += 1;
                s -= 1;
            }
            let top_end = s;
            let mut s = lo;
            while s < top_end && self.mark(s) {
                newly += 1;
                s += 1;
            }
        }
        if newly > 0 {
            self.move_frontier();
        }
        newly
    }

    /// Marks one segment SACKed; false when it already was.
    fn mark(&mut self, seq: u32) -> bool {
        let slot = self.flag_mut(seq);
        let f = *slot;
        if f & SACKED != 0 {
            return false;
        }
        *slot = f | SACKED;
        self.sacked += 1;
        if f & RETX != 0 {
            self.retx_unsacked -= 1;
        }
        if seq < self.lost_below {
            self.sacked_below += 1;
        }
        if self.high_sacked.is_none_or(|h| seq > h) {
            self.high_sacked = Some(seq);
        }
        let pos = self.top.partition_point(|&t| t > seq);
        if pos < self.dupthresh {
            self.top.insert(pos, seq);
            self.top.truncate(self.dupthresh);
        }
        true
    }

    fn move_frontier(&mut self) {
        if self.top.len() < self.dupthresh {
            return;
        }
        let target = self.top[self.dupthresh - 1];
        self.raise_frontier(target);
    }

    fn raise_frontier(&mut self, target: u32) {
        while self.lost_below < target {
            if self.flag(self.lost_below) & SACKED != 0 {
                self.sacked_below += 1;
            }
            self.lost_below += 1;
        }
    }

    /// A retransmission timeout: every segment not SACKed is lost, and earlier retransmissions
    /// no longer count as in flight.
    pub fn timeout(&mut self) {
        let high = self.high();
        self.raise_frontier(high);
        for f in self.flags.iter_mut() {
            *f &= !RETX;
        }
        self.retx_unsacked = 0;
        self.cursor = self.una;
    }

    /// Whether segment `seq` of the window was retransmitted since the last timeout (and is
    /// not SACKed).
    pub fn is_retransmitted(&self, seq: u32) -> bool {
        seq >= self.una && seq < self.high && self.flag(seq) & (SACKED | RETX) == RETX
    }

    /// Whether segment `seq` of the window has been SACKed.
    pub fn is_sacked(&self, seq: u32) -> bool {
        seq >= self.una && seq < self.high && self.flag(seq) & SACKED != 0
    }

    /// RFC 6675 `IsLost` for a segment in the window.
    pub fn is_lost(&self, seq: u32) -> bool {
        seq >= self.una && seq < self.lost_below && self.flag(seq) & SACKED == 0
    }

    /// RFC 6675 `pipe`: segments presumed in the network.
    pub fn pipe(&self) -> u32 {
        let lost = (self.lost_below - self.una) - self.sacked_below;
        (self.high - self.una) - self.sacked - lost + self.retx_unsacked
    }

    /// Segments SACKed above the cumulative point.
    pub fn sacked(&self) -> u32 {
        self.sacked
    }

    /// RFC 6675 `NextSeg` rule 1: the lowest lost segment not yet retransmitted.
    pub fn next_lost(&mut self) -> Option<u32> {
        while self.cursor < self.lost_below {
            if self.flag(self.cursor) & (SACKED | RETX) == 0 {
                return Some(self.cursor);
            }
            self.cursor += 1;
        }
        None
    }

    /// RFC 6675 `NextSeg` rule 3: the lowest segment above the last retransmission and below
    /// the highest SACKed one that is neither SACKed nor retransmitted.
    pub fn next_rescue(&mut self) -> Option<u32> {
        let limit = self.high_sacked?;
        while self.cursor < limit {
            if self.flag(self.cursor) & (SACKED | RETX) == 0 {
                return Some(self.cursor);
            }
            self.cursor += 1;
        }
        None
    }

    /// Whether a segment below `ack` (in the window) was retransmitted and not SACKed.
    pub fn retransmitted_below(&self, ack: u32) -> bool {
        let n = ack.saturating_sub(self.una) as usize;
        self.retx_unsacked > 0
            && self
                .flags
                .iter()
                .take(n)
                .any(|&f| f & (SACKED | RETX) == RETX)
    }

    /// `seq` (in the window, not SACKed) is being sent again.
    pub fn retransmitted(&mut self, seq: u32) {
        let slot = self.flag_mut(seq);
        if *slot & (SACKED | RETX) == 0 {
            *slot |= RETX;
            self.retx_unsacked += 1;
        }
        self.cursor = self.cursor.max(seq + 1);
    }
}

/// The part `[lo, hi)` of the SACK block `[start, start + len)` inside the window `[una,
/// high)` (empty when `lo >= hi`).
#[inline]
pub(super) fn in_window(start: u32, len: u32, una: u32, high: u32) -> (u32, u32) {
    (start.max(una), start.saturating_add(len).min(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `pipe` recomputed from scratch per RFC 6675 `SetPipe`.
    fn pipe_by_definition(sb: &Scoreboard) -> u32 {
        (sb.una..sb.high())
            .map(|s| {
                let f = sb.flag(s);
                if f & SACKED != 0 {
                    return 0;
                }
                let above = (s + 1..sb.high())
                    .filter(|&t| sb.flag(t) & SACKED != 0)
                    .count();
                let lost = above >= sb.dupthresh || s < sb.lost_below;
                u32::from(!lost) + u32::from(f & RETX != 0)
            })
            .sum()
    }

    #[test]
    fn three_sacks_above_a_hole_make_it_lost() {
        let mut sb = Scoreboard::new(3);
        sb.sent_up_to(10);
        assert_eq!(sb.pipe(), 10);
        sb.sack(1, 1);
        sb.sack(2, 1);
        assert!(!sb.is_lost(0), "two SACKed above: not yet lost");
        assert_eq!(sb.pipe(), 8);
        sb.sack(3, 1);
        assert!(sb.is_lost(0));
        assert_eq!(sb.pipe(), 6, "0 lost, 1-3 SACKed, 4-9 in flight");
        assert_eq!(sb.next_lost(), Some(0));
        sb.retransmitted(0);
        assert_eq!(sb.pipe(), 7);
        assert_eq!(sb.next_lost(), None);
        sb.advance(4);
        assert_eq!(sb.pipe(), 6);
        assert_eq!(sb.sacked(), 0);
    }

    #[test]
    fn several_holes_are_found_in_one_pass() {
        let mut sb = Scoreboard::new(3);
        sb.sent_up_to(20);
        // Holes at 0, 5, 9; everything else up to 14 SACKed.
        for s in (1..15).filter(|s| ![5, 9].contains(s)) {
            sb.sack(s, 1);
        }
        let mut holes = Vec::new();
        while let Some(s) = sb.next_lost() {
            holes.push(s);
            sb.retransmitted(s);
        }
        assert_eq!(holes, vec![0, 5, 9]);
        assert_eq!(sb.pipe(), pipe_by_definition(&sb));
    }

    #[test]
    fn timeout_marks_every_unsacked_segment_lost() {
        let mut sb = Scoreboard::new(3);
        sb.sent_up_to(6);
        sb.sack(2, 1);
        sb.retransmitted(0);
        sb.timeout();
        assert_eq!(sb.pipe(), 0);
        let mut again = Vec::new();
        while let Some(s) = sb.next_lost() {
            again.push(s);
            sb.retransmitted(s);
        }
        assert_eq!(again, vec![0, 1, 3, 4, 5]);
    }

    #[test]
    fn long_blocks_are_marked_from_their_ends() {
        let mut sb = Scoreboard::new(3);
        sb.sent_up_to(1000);
        assert_eq!(sb.sack(1, 500), 500);
        assert_eq!(sb.sack(1, 501), 1, "one new segment at the top");
        assert_eq!(sb.pipe(), pipe_by_definition(&sb));
        assert!(sb.is_lost(0));
    }

    proptest::proptest! {
        #[test]
        fn incremental_pipe_equals_its_definition(
            ops in proptest::collection::vec((0u8..4, 0u32..40, 1u32..6), 1..80)
        ) {
            let mut sb = Scoreboard::new(3);
            let mut high = 0;
            for (op, a, b) in ops {
                match op {
                    0 => { high = (high + b).min(200); sb.sent_up_to(high); }
                    1 => { sb.sack(sb.una + a, b); }
                    2 => { let u = (sb.una + a / 8).min(high); sb.advance(u); }
                    _ => {
                        if a % 5 == 0 { sb.timeout(); }
                        if let Some(s) = sb.next_lost() { sb.retransmitted(s); }
                    }
                }
                proptest::prop_assert_eq!(sb.pipe(), pipe_by_definition(&sb));
                for s in sb.una..sb.high() {
                    let above = (s + 1..sb.high()).filter(|&t| sb.flag(t) & SACKED != 0).count();
                    if sb.flag(s) & SACKED == 0 && above >= 3 {
                        proptest::prop_assert!(sb.is_lost(s), "segment {} has {} SACKed above", s, above);
                    }
                }
            }
        }
    }
}

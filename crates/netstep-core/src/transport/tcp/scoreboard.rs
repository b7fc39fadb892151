//! The sender's view of its outstanding segments `[snd_una, high_sent)`: per-segment send time
//! and retransmission flags, and the SACKed segments as disjoint, non-adjacent ranges (RFC 6675
//! scoreboard). Every query the sender runs per ACK costs O(log n) or O(ranges above a point),
//! and every segment is marked SACKed at most once, so long SACK blocks that the receiver
//! reports again and again cost nothing extra.

use std::collections::{BTreeMap, VecDeque};

/// Retransmitted, and that copy is neither cumulatively acknowledged nor SACKed yet (counts
/// once more in `pipe`).
const RXT_OUT: u8 = 1;
/// Sent more than once (Karn's rule).
const EVER_RXT: u8 = 2;

#[derive(Clone, Copy, Debug)]
struct Segment {
    sent_ps: u64,
    flags: u8,
}

/// What a cumulative ACK removed from the scoreboard.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Advanced {
    /// Segments newly cumulatively acknowledged.
    pub acked: u32,
    /// One of them had been sent more than once.
    pub any_retransmitted: bool,
    /// Last send time of the highest of them, ps.
    pub last_sent_ps: u64,
}

/// Outstanding segments and their SACK state.
#[derive(Clone, Debug, Default)]
pub struct Scoreboard {
    base: u32,
    segments: VecDeque<Segment>,
    sacked: BTreeMap<u32, u32>,
    sacked_count: u32,
    retrans_out: u32,
}

impl Scoreboard {
    /// Lowest outstanding segment (`snd_una`).
    pub fn base(&self) -> u32 {
        self.base
    }
    /// One past the highest segment ever sent (`high_sent`, RFC 6675 HighData + 1).
    pub fn high(&self) -> u32 {
        self.base + self.segments.len() as u32
    }
    /// SACKed segments above `snd_una`.
    pub fn sacked_count(&self) -> u32 {
        self.sacked_count
    }
    /// Retransmitted segments not yet acknowledged or SACKed.
    pub fn retrans_out(&self) -> u32 {
        self.retrans_out
    }
    /// Records a transmission of `seq`: the next new segment (`seq == high()`) or a
    /// retransmission of an outstanding one.
    pub fn on_sent(&mut self, seq: u32, now_ps: u64) {
        if seq == self.high() {
            self.segments.push_back(Segment {
                sent_ps: now_ps,
                flags: 0,
            });
        } else if let Some(s) = seq
            .checked_sub(self.base)
            .and_then(|i| self.segments.get_mut(i as usize))
        {
            s.sent_ps = now_ps;
            if s.flags & RXT_OUT == 0 {
                self.retrans_out += 1;
            }
            s.flags |= RXT_OUT | EVER_RXT;
        }
    }
    /// Forgets that retransmissions are in flight (after a timeout every outstanding segment
    /// counts as lost).
    pub fn clear_retrans_out(&mut self) {
        if self.retrans_out > 0 {
            self.segments.iter_mut().for_each(|s| s.flags &= !RXT_OUT);
            self.retrans_out = 0;
        }
    }
    /// Cumulative ACK up to `to` (exclusive).
    pub fn advance(&mut self, to: u32) -> Advanced {
        let to = to.min(self.high());
        let mut done = Advanced {
            acked: to.saturating_sub(self.base),
            any_retransmitted: false,
            last_sent_ps: 0,
        };
        for _ in 0..done.acked {
            let s = self.segments.pop_front().expect("within high()");
            if s.flags & RXT_OUT != 0 {
                self.retrans_out -= 1;
            }
            done.any_retransmitted |= s.flags & EVER_RXT != 0;
            done.last_sent_ps = s.sent_ps;
        }
        self.base = self.base.max(to);
        while let Some((&start, &end)) = self.sacked.first_key_value() {
            if start >= to {
                break;
            }
            self.sacked.remove(&start);
            if end > to {
                self.sacked_count -= to - start;
                self.sacked.insert(to, end);
                break;
            }
            self.sacked_count -= end - start;
        }
        done
    }
    /// Marks `[start, end)` SACKed (clipped to the outstanding segments); returns how many
    /// segments were not SACKed before.
    pub fn mark_sacked(&mut self, start: u32, end: u32) -> u32 {
        let start = start.max(self.base);
        let end = end.min(self.high());
        if start >= end {
            return 0;
        }
        let (mut lo, mut hi, mut cursor) = (start, end, start);
        let mut newly = 0;
        if let Some((&s, &e)) = self.sacked.range(..=start).next_back()
            && e >= start
        {
            self.sacked.remove(&s);
            lo = s;
            hi = hi.max(e);
            cursor = cursor.max(e);
        }
        while let Some((&s, &e)) = self.sacked.range(start..).next() {
            if s > end {
                break;
            }
            if cursor < s {
                newly += self.mark_new(cursor, s);
            }
            cursor = cursor.max(e);
            hi = hi.max(e);
            self.sacked.remove(&s);
        }
        if cursor < end {
            newly += self.mark_new(cursor, end);
        }
        self.sacked.insert(lo, hi);
        self.sacked_count += newly;
        newly
    }
    fn mark_new(&mut self, from: u32, to: u32) -> u32 {
        for seq in from..to {
            let s = &mut self.segments[(seq - self.base) as usize];
            if s.flags & RXT_OUT != 0 {
                s.flags &= !RXT_OUT;
                self.retrans_out -= 1;
            }
        }
        to - from
    }
    /// True when `seq` is SACKed.
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.sacked
            .range(..=seq)
            .next_back()
            .is_some_and(|(_, &e)| e > seq)
    }
    /// The first segment at or above `seq` that is not SACKed.
    pub fn skip_sacked(&self, seq: u32) -> u32 {
        match self.sacked.range(..=seq).next_back() {
            Some((_, &e)) if e > seq => e,
            _ => seq,
        }
    }
    /// One past the highest SACKed segment.
    pub fn high_sacked(&self) -> Option<u32> {
        self.sacked.last_key_value().map(|(_, &e)| e)
    }
    /// SACKed segments at or above `seq`.
    pub fn sacked_at_or_above(&self, seq: u32) -> u32 {
        let mut n = 0;
        for (&s, &e) in self.sacked.iter().rev() {
            if e <= seq {
                break;
            }
            n += e - s.max(seq);
        }
        n
    }
    /// RFC 6675 `IsLost`, segment-granular: un-SACKed segments below the returned boundary are
    /// lost (at least `dupthresh` segments above them are SACKed). `None` while fewer than
    /// `dupthresh` segments are SACKed.
    pub fn loss_boundary(&self, dupthresh: u32) -> Option<u32> {
        let dupthresh = dupthresh.max(1);
        let mut acc = 0;
        for (&s, &e) in self.sacked.iter().rev() {
            if acc + (e - s) >= dupthresh {
                return Some(e - (dupthresh - acc));
            }
            acc += e - s;
        }
        None
    }
    /// RFC 6675 `IsLost(seq)`.
    pub fn is_lost(&self, seq: u32, dupthresh: u32) -> bool {
        !self.is_sacked(seq) && self.loss_boundary(dupthresh).is_some_and(|l| seq < l)
    }
    /// Un-SACKed outstanding segments below `boundary`.
    pub fn lost_below(&self, boundary: u32) -> u32 {
        let boundary = boundary.min(self.high());
        if boundary <= self.base {
            return 0;
        }
        let sacked_below = self.sacked_count - self.sacked_at_or_above(boundary);
        boundary - self.base - sacked_below
    }
    /// RFC 6675 `SetPipe`, segment-granular, when every un-SACKed segment below `lost_below`
    /// counts as lost: un-SACKed segments not lost, plus retransmissions in flight.
    pub fn pipe(&self, lost_below: u32) -> u32 {
        self.segments.len() as u32 - self.sacked_count - self.lost_below(lost_below)
            + self.retrans_out
    }
}

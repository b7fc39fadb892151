//! The SACK scoreboard of a sender, made only when a fact needs it.
//!
//! Until a SACK block falls in the window, a retransmission timeout fires or a segment is
//! sent again, a [`Scoreboard`] holds nothing but its window `[una, high)`: no segment is
//! SACKed, retransmitted or lost, `pipe` is the window's size. Most senders of a large run
//! never leave that state (a fan-in of a million one-segment messages: every one), so
//! [`LazyBoard`] keeps just the window and builds the board, in exactly the state the calls so
//! far would have left it in, on the first call that records a fact. A sender in flight is
//! then about 70 bytes smaller. The answers are the board's in every state (a property test
//! replays random calls on both).

use super::scoreboard::{Scoreboard, in_window};

/// A [`Scoreboard`] built on first need (see the module docs); same methods, same answers.
#[derive(Clone, Debug)]
pub struct LazyBoard {
    /// The board, once a fact needed it.
    board: Option<Box<Scoreboard>>,
    /// `DupThresh`, for the board when it is built.
    dupthresh: u32,
    /// The cumulative point, while there is no board.
    una: u32,
    /// The end of the sent window, while there is no board.
    high: u32,
}

impl LazyBoard {
    /// An empty scoreboard; `dupthresh` SACKed segments above a hole make it lost.
    pub fn new(dupthresh: u32) -> LazyBoard {
        LazyBoard {
            board: None,
            dupthresh,
            una: 0,
            high: 0,
        }
    }

    /// The board, built now if need be: [`Scoreboard::new`] then the window's moves, which
    /// is the state that `advance` and `sent_up_to` calls alone leave it in.
    fn board(&mut self) -> &mut Scoreboard {
        let (dupthresh, una, high) = (self.dupthresh, self.una, self.high);
        self.board.get_or_insert_with(|| {
            let mut board = Scoreboard::new(dupthresh);
            board.advance(una);
            board.sent_up_to(high);
            Box::new(board)
        })
    }

    /// Segments up to `high` (exclusive) have been sent.
    #[inline]
    pub fn sent_up_to(&mut self, high: u32) {
        match self.board.as_deref_mut() {
            Some(board) => board.sent_up_to(high),
            None => self.high = self.high.max(high),
        }
    }

    /// The cumulative ACK point moved to `una`.
    #[inline]
    pub fn advance(&mut self, una: u32) {
        match self.board.as_deref_mut() {
            Some(board) => board.advance(una),
            None => {
                self.high = self.high.max(una);
                self.una = self.una.max(una);
            }
        }
    }

    /// The receiver reported `[start, start + len)` as received; returns how many segments
    /// became SACKed. A block outside the window records nothing.
    #[inline]
    pub fn sack(&mut self, start: u32, len: u32) -> u32 {
        if self.board.is_none() {
            let (lo, hi) = in_window(start, len, self.una, self.high);
            if lo >= hi {
                return 0;
            }
        }
        self.board().sack(start, len)
    }

    /// A retransmission timeout ([`Scoreboard::timeout`]).
    pub fn timeout(&mut self) {
        self.board().timeout();
    }

    /// Whether segment `seq` of the window was retransmitted since the last timeout (and is
    /// not SACKed).
    #[inline]
    pub fn is_retransmitted(&self, seq: u32) -> bool {
        self.board.as_ref().is_some_and(|b| b.is_retransmitted(seq))
    }

    /// Whether segment `seq` of the window has been SACKed.
    #[inline]
    pub fn is_sacked(&self, seq: u32) -> bool {
        self.board.as_ref().is_some_and(|b| b.is_sacked(seq))
    }

    /// RFC 6675 `IsLost` for a segment in the window.
    #[inline]
    pub fn is_lost(&self, seq: u32) -> bool {
        self.board.as_ref().is_some_and(|b| b.is_lost(seq))
    }

    /// RFC 6675 `pipe`: segments presumed in the network.
    #[inline]
    pub fn pipe(&self) -> u32 {
        match &self.board {
            Some(board) => board.pipe(),
            None => self.high - self.una,
        }
    }

    /// Segments SACKed above the cumulative point.
    #[inline]
    pub fn sacked(&self) -> u32 {
        self.board.as_ref().map_or(0, |b| b.sacked())
    }

    /// RFC 6675 `NextSeg` rule 1: the lowest lost segment not yet retransmitted.
    #[inline]
    pub fn next_lost(&mut self) -> Option<u32> {
        self.board.as_deref_mut()?.next_lost()
    }

    /// RFC 6675 `NextSeg` rule 3 ([`Scoreboard::next_rescue`]).
    #[inline]
    pub fn next_rescue(&mut self) -> Option<u32> {
        self.board.as_deref_mut()?.next_rescue()
    }

    /// Whether a segment below `ack` (in the window) was retransmitted and not SACKed.
    #[inline]
    pub fn retransmitted_below(&self, ack: u32) -> bool {
        self.board
            .as_ref()
            .is_some_and(|b| b.retransmitted_below(ack))
    }

    /// `seq` (in the window, not SACKed) is being sent again.
    pub fn retransmitted(&mut self, seq: u32) {
        self.board().retransmitted(seq);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every answer of the lazy board and of a board built from the start agree.
    fn same(lazy: &LazyBoard, eager: &Scoreboard, high: u32) -> Result<(), String> {
        let (l, e) = ((lazy.pipe(), lazy.sacked()), (eager.pipe(), eager.sacked()));
        if l != e {
            return Err(format!("pipe and sacked {l:?} vs {e:?}"));
        }
        for s in 0..high + 2 {
            let l = (lazy.is_sacked(s), lazy.is_lost(s), lazy.is_retransmitted(s));
            let e = (
                eager.is_sacked(s),
                eager.is_lost(s),
                eager.is_retransmitted(s),
            );
            if l != e {
                return Err(format!("segment {s}: {l:?} vs {e:?}"));
            }
            if lazy.retransmitted_below(s) != eager.retransmitted_below(s) {
                return Err(format!("retransmitted below {s}"));
            }
        }
        Ok(())
    }

    #[test]
    fn a_window_without_facts_builds_no_board() {
        let mut lazy = LazyBoard::new(3);
        lazy.sent_up_to(10);
        lazy.advance(4);
        assert_eq!(
            lazy.sack(0, 4),
            0,
            "a block below the window records nothing"
        );
        assert_eq!(lazy.sack(12, 3), 0, "nor one above it");
        assert_eq!(lazy.pipe(), 6);
        assert_eq!(lazy.next_lost(), None);
        assert!(lazy.board.is_none());
        assert_eq!(lazy.sack(5, 1), 1);
        assert!(lazy.board.is_some());
        assert_eq!(lazy.pipe(), 5);
    }

    proptest::proptest! {
        /// Random sends, SACK blocks, ACKs, timeouts and retransmissions on a lazy board and
        /// on a board built from the start give the same answers after every call (and the
        /// same segments to send next).
        #[test]
        fn the_lazy_board_answers_as_the_board(
            ops in proptest::collection::vec((0u8..6, 0u32..40, 0u32..6), 1..80)
        ) {
            let mut lazy = LazyBoard::new(3);
            let mut eager = Scoreboard::new(3);
            let (mut una, mut high) = (0u32, 0u32);
            for (op, a, b) in ops {
                match op {
                    0 | 1 => {
                        high = (high + b).min(200);
                        lazy.sent_up_to(high);
                        eager.sent_up_to(high);
                    }
                    2 => {
                        let start = una.saturating_sub(2) + a;
                        proptest::prop_assert_eq!(lazy.sack(start, b), eager.sack(start, b));
                    }
                    3 => {
                        una = (una + a / 8).min(high);
                        lazy.advance(una);
                        eager.advance(una);
                    }
                    4 => {
                        if a % 4 == 0 {
                            lazy.timeout();
                            eager.timeout();
                        }
                        let next = eager.next_lost();
                        proptest::prop_assert_eq!(lazy.next_lost(), next);
                        if let Some(s) = next {
                            lazy.retransmitted(s);
                            eager.retransmitted(s);
                        }
                    }
                    _ => {
                        let next = eager.next_rescue();
                        proptest::prop_assert_eq!(lazy.next_rescue(), next);
                        if let Some(s) = next {
                            lazy.retransmitted(s);
                            eager.retransmitted(s);
                        }
                    }
                }
                if let Err(e) = same(&lazy, &eager, high) {
                    return Err(proptest::test_runner::TestCaseError::fail(e));
                }
            }
        }
    }
}

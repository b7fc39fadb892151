//! When the thread team's calling thread runs a window's chunks alone ("solo") instead of
//! sharing them with the workers ([`super::team`]).

use std::time::Duration;

/// When the calling thread runs every chunk itself ("solo") instead of sharing them. On a
/// busy machine sharing can lose: a worker preempted in the middle of a chunk holds the
/// window up for a scheduler time slice, and a spinning worker takes CPU time from the
/// calling thread's core. So after [`Pace::PROBE`] shared windows in which the calling thread
/// waited for the workers longer than it ran chunks, or ran more than [`Pace::MOST`] of the
/// chunks itself (the workers, off their cores, took few: a shared window then costs the
/// hand-over and the wake-ups and saves next to nothing), it runs the next windows solo (as
/// one thread would; the workers park), [`Pace::SOLO_MIN`] of them at first and twice as
/// many after each probe that fails again, up to [`Pace::SOLO_MAX`]. The share of chunks is
/// weighted by the calling thread's running time in each window, so that nearly empty
/// windows, which it may finish before a worker has even seen them, count for little.
/// Measured (`benches/RESULTS.md`, "Threads that never hurt, again"): with one core held by a
/// busy loop the calling thread ran 90 % of the chunks (Days FatTree-16/512, the TCP
/// quickstart at k = 8), on idle cores 51 %.
#[derive(Default)]
pub(super) struct Pace {
    /// Shared windows measured in this probe.
    shared: u32,
    /// The calling thread's time running chunks in this probe.
    ran: Duration,
    /// Its time waiting for the workers in this probe.
    waited: Duration,
    /// Its running time in this probe's windows, each weighted by its share of the window's
    /// chunks, ns.
    mine_ns: u128,
    /// Solo windows left before the next probe.
    solo_left: u32,
    /// Length of the next solo stretch.
    solo_len: u32,
}

impl Pace {
    /// Shared windows per probe.
    const PROBE: u32 = 64;
    /// The first solo stretch, in windows.
    const SOLO_MIN: u32 = 256;
    /// The longest solo stretch, in windows.
    const SOLO_MAX: u32 = 1 << 16;
    /// The share of a probe's chunks (numerator, denominator), weighted by running time,
    /// above which the calling thread, having run them itself, goes solo.
    const MOST: (u128, u128) = (3, 4);

    /// Whether this window runs solo (counting it).
    pub(super) fn solo(&mut self) -> bool {
        if self.solo_left > 0 {
            self.solo_left -= 1;
            return true;
        }
        false
    }

    /// Records a shared window: `ran` running chunks here, `waited` waiting for workers,
    /// `mine` of its `chunks` chunks run here.
    pub(super) fn shared(
        &mut self,
        ran: Duration,
        waited: Duration,
        (mine, chunks): (usize, usize),
    ) {
        self.shared += 1;
        self.ran += ran;
        self.waited += waited;
        self.mine_ns += ran.as_nanos() * mine as u128 / chunks.max(1) as u128;
        if self.shared < Self::PROBE {
            return;
        }
        let (most, of) = Self::MOST;
        if self.waited > self.ran || self.mine_ns * of > self.ran.as_nanos() * most {
            self.solo_len = (self.solo_len * 2).clamp(Self::SOLO_MIN, Self::SOLO_MAX);
            self.solo_left = self.solo_len;
        } else {
            self.solo_len = 0;
        }
        *self = Pace {
            solo_left: self.solo_left,
            solo_len: self.solo_len,
            ..Pace::default()
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 64 shared windows of 4 chunks each, of which the calling thread ran 2.
    fn probe(pace: &mut Pace, ran_us: u64, waited_us: u64) {
        probe_ran(pace, ran_us, waited_us, 2);
    }

    fn probe_ran(pace: &mut Pace, ran_us: u64, waited_us: u64, mine: usize) {
        for _ in 0..Pace::PROBE {
            assert!(!pace.solo(), "a probe's windows are shared");
            pace.shared(
                Duration::from_micros(ran_us),
                Duration::from_micros(waited_us),
                (mine, 4),
            );
        }
    }

    fn solo_stretch(pace: &mut Pace) -> u32 {
        let mut n = 0;
        while pace.solo() {
            n += 1;
        }
        n
    }

    #[test]
    fn pace_goes_solo_after_a_losing_probe_and_backs_off_doubling() {
        let mut pace = Pace::default();
        probe(&mut pace, 10, 5);
        assert_eq!(solo_stretch(&mut pace), 0, "sharing pays: stay shared");
        let mut expect = Pace::SOLO_MIN;
        for _ in 0..12 {
            probe(&mut pace, 10, 11);
            assert_eq!(solo_stretch(&mut pace), expect);
            expect = (expect * 2).min(Pace::SOLO_MAX);
        }
        assert_eq!(expect, Pace::SOLO_MAX);
        probe(&mut pace, 10, 1);
        assert_eq!(solo_stretch(&mut pace), 0, "a good probe resets");
        probe(&mut pace, 10, 11);
        assert_eq!(solo_stretch(&mut pace), Pace::SOLO_MIN);
    }

    #[test]
    fn pace_goes_solo_when_the_calling_thread_runs_most_chunks_itself() {
        let mut pace = Pace::default();
        probe_ran(&mut pace, 10, 1, 3);
        assert_eq!(
            solo_stretch(&mut pace),
            0,
            "three of four chunks: still shared"
        );
        probe_ran(&mut pace, 10, 1, 4);
        assert_eq!(
            solo_stretch(&mut pace),
            Pace::SOLO_MIN,
            "the workers took none"
        );
        probe_ran(&mut pace, 10, 1, 4);
        assert_eq!(solo_stretch(&mut pace), 2 * Pace::SOLO_MIN);
        probe_ran(&mut pace, 10, 1, 2);
        assert_eq!(solo_stretch(&mut pace), 0, "an even share resets");
    }

    #[test]
    fn nearly_empty_windows_run_alone_count_for_little() {
        // 60 windows of 1 us that the calling thread ran alone, 4 of 100 us shared evenly:
        // by time its share is 57 %, by count of chunks 97 %.
        let mut pace = Pace::default();
        for i in 0..Pace::PROBE {
            let (ran, mine) = if i % 16 == 0 { (100, 2) } else { (1, 4) };
            pace.shared(Duration::from_micros(ran), Duration::ZERO, (mine, 4));
        }
        assert_eq!(solo_stretch(&mut pace), 0);
    }
}

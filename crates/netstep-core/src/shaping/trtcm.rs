//! Two-rate three-color marker (RFC 2698), color-blind, used as a policer: a packet of `B`
//! bytes is red if the peak bucket (PIR, PBS) holds fewer than `B` tokens, else yellow if the
//! committed bucket (CIR, CBS) does, else green; yellow takes tokens from the peak bucket,
//! green from both. The port drops red packets (`drop_reason = "policed"`) and forwards
//! green and yellow ones (yellow counted per port). Both buckets start full.

use super::Bucket;
use crate::units::{BitsPerSec, Bytes, SimTime};

/// trTCM parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TrTcmSpec {
    /// Committed information rate.
    pub cir: BitsPerSec,
    /// Committed burst size.
    pub cbs: Bytes,
    /// Peak information rate (>= CIR).
    pub pir: BitsPerSec,
    /// Peak burst size.
    pub pbs: Bytes,
}

/// The color of a metered packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Color {
    /// Within the committed rate.
    Green,
    /// Above the committed rate, within the peak rate.
    Yellow,
    /// Above the peak rate.
    Red,
}

/// Meter state of one port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrTcm {
    committed: Bucket,
    peak: Bucket,
}

impl TrTcm {
    /// Both buckets full.
    pub fn new(spec: &TrTcmSpec) -> TrTcm {
        TrTcm {
            committed: Bucket::full(spec.cbs),
            peak: Bucket::full(spec.pbs),
        }
    }

    /// Meters a packet of `size` bytes arriving at `now` (RFC 2698 section 3, color-blind).
    pub fn meter(&mut self, spec: &TrTcmSpec, now: SimTime, size: u32) -> Color {
        self.committed.refill(spec.cir, spec.cbs, now);
        self.peak.refill(spec.pir, spec.pbs, now);
        let b = size as u64;
        if !self.peak.holds(b) {
            Color::Red
        } else if !self.committed.holds(b) {
            self.peak.take(b);
            Color::Yellow
        } else {
            self.peak.take(b);
            self.committed.take(b);
            Color::Green
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Constant-rate input at `input` bit/s for `n` packets of 1000 B: color counts.
    fn colors(spec: &TrTcmSpec, input: u64, n: u64) -> [u64; 3] {
        let mut m = TrTcm::new(spec);
        let gap = 1000 * 8 * 1_000_000_000_000 / input;
        let mut counts = [0; 3];
        for i in 0..n {
            match m.meter(spec, SimTime(i * gap), 1000) {
                Color::Green => counts[0] += 1,
                Color::Yellow => counts[1] += 1,
                Color::Red => counts[2] += 1,
            }
        }
        counts
    }

    #[test]
    fn long_run_fractions_follow_the_two_rates() {
        let spec = TrTcmSpec {
            cir: BitsPerSec(1_000_000_000),
            cbs: Bytes(10_000),
            pir: BitsPerSec(2_000_000_000),
            pbs: Bytes(10_000),
        };
        let n = 100_000;
        // Input between CIR and PIR (1.5 Gb/s): green CIR/R = 2/3, yellow 1/3, no red.
        let [g, y, r] = colors(&spec, 1_500_000_000, n);
        assert_eq!(r, 0);
        // Beyond the long-run share, at most the initial buckets (10 packets each) differ.
        assert!((g as i64 - (n * 2 / 3) as i64).abs() <= 11, "{g}");
        assert_eq!(g + y, n);
        // Input above PIR (4 Gb/s): green CIR/R = 1/4, yellow (PIR - CIR)/R = 1/4, red 1/2.
        let [g, y, r] = colors(&spec, 4_000_000_000, n);
        for (got, want) in [(g, n / 4), (y, n / 4), (r, n / 2)] {
            assert!((got as i64 - want as i64).abs() <= 21, "{g} {y} {r}");
        }
        // Below CIR everything is green.
        assert_eq!(colors(&spec, 900_000_000, n), [n, 0, 0]);
    }
}

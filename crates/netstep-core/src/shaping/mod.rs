//! Shaping and policing at a port: a token-bucket shaper that holds packets until they
//! conform ([`TokenBucket`]) and the two-rate three-color marker of RFC 2698 as a policer
//! ([`TrTcm`]). Both count tokens exactly in integers: one byte is `8 * 10^12` token units,
//! and a rate of `r` bit/s adds `r` units per picosecond.

mod token_bucket;
mod trtcm;

pub use token_bucket::{TokenBucket, TokenBucketSpec};
pub use trtcm::{Color, TrTcm, TrTcmSpec};

use crate::units::{BitsPerSec, Bytes, SimTime};

/// Token units per byte.
const UNITS_PER_BYTE: u128 = 8_000_000_000_000;

/// A bucket of `size` bytes filling at `rate`, in exact token units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Bucket {
    /// Tokens, in units (`UNITS_PER_BYTE` per byte).
    tokens: u128,
    /// When `tokens` was last brought up to date.
    at: SimTime,
}

impl Bucket {
    /// A full bucket of `size` at time zero.
    fn full(size: Bytes) -> Bucket {
        Bucket {
            tokens: size.0 as u128 * UNITS_PER_BYTE,
            at: SimTime::ZERO,
        }
    }
    /// Adds what `rate` brought since the last update, up to `size`.
    fn refill(&mut self, rate: BitsPerSec, size: Bytes, now: SimTime) {
        let elapsed = now.0.saturating_sub(self.at.0) as u128;
        let cap = size.0 as u128 * UNITS_PER_BYTE;
        self.tokens = (self.tokens + elapsed * rate.0 as u128).min(cap);
        self.at = self.at.max(now);
    }
    /// Whether `bytes` tokens are there.
    fn holds(&self, bytes: u64) -> bool {
        self.tokens >= bytes as u128 * UNITS_PER_BYTE
    }
    /// Removes `bytes` tokens (at most what is there).
    fn take(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(bytes as u128 * UNITS_PER_BYTE);
    }
}

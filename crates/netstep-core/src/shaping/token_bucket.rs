//! Token-bucket shaper (the leaky-bucket regulator of Turner 1986 and ns.py's
//! `TokenBucketShaper`): tokens accrue at `rate` up to `burst` bytes; a packet may start
//! only when the bucket holds its size, and takes that many tokens. Packets wait in the
//! port's queue meanwhile, so what leaves never exceeds `burst + rate * t` bytes in any
//! interval of length `t` (the arrival curve the shaper enforces). A packet larger than
//! `burst` waits for a full bucket and empties it.

use super::Bucket;
use crate::units::{BitsPerSec, Bytes, SimTime};

/// Shaper parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TokenBucketSpec {
    /// Token rate (the long-run output rate).
    pub rate: BitsPerSec,
    /// Bucket size (the largest burst at line rate).
    pub burst: Bytes,
}

/// Shaper state of one port (starts full).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TokenBucket {
    bucket: Bucket,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(spec: &TokenBucketSpec) -> TokenBucket {
        TokenBucket {
            bucket: Bucket::full(spec.burst),
        }
    }

    /// Tokens a packet of `size` bytes needs (never more than the bucket holds).
    fn need(spec: &TokenBucketSpec, size: u32) -> u64 {
        (size as u64).min(spec.burst.0)
    }

    /// The earliest time, not before `now`, at which a packet of `size` bytes conforms.
    pub fn ready_at(&mut self, spec: &TokenBucketSpec, now: SimTime, size: u32) -> SimTime {
        self.bucket.refill(spec.rate, spec.burst, now);
        let need = Self::need(spec, size) as u128 * super::UNITS_PER_BYTE;
        if self.bucket.tokens >= need {
            return now;
        }
        let missing = need - self.bucket.tokens;
        let wait = missing.div_ceil(spec.rate.0 as u128);
        SimTime(now.0.saturating_add(wait.min(u64::MAX as u128) as u64))
    }

    /// Takes the tokens of a packet of `size` bytes starting at `now` (which must be at or
    /// after its [`TokenBucket::ready_at`]).
    pub fn take(&mut self, spec: &TokenBucketSpec, now: SimTime, size: u32) {
        self.bucket.refill(spec.rate, spec.burst, now);
        debug_assert!(self.bucket.holds(Self::need(spec, size)));
        self.bucket.take(Self::need(spec, size));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_then_the_token_rate() {
        // 1 Gb/s tokens = 8 ps per byte... 1 byte per 8000 ps; 3000 B bucket.
        let spec = TokenBucketSpec {
            rate: BitsPerSec(1_000_000_000),
            burst: Bytes(3000),
        };
        let mut tb = TokenBucket::new(&spec);
        let mut now = SimTime::ZERO;
        // Two 1500 B packets conform at once (the burst), the third waits 1500 B of tokens.
        for _ in 0..2 {
            assert_eq!(tb.ready_at(&spec, now, 1500), now);
            tb.take(&spec, now, 1500);
        }
        let at = tb.ready_at(&spec, now, 1500);
        assert_eq!(at, SimTime(1500 * 8000));
        tb.take(&spec, at, 1500);
        now = at;
        assert_eq!(tb.ready_at(&spec, now, 1500), SimTime(2 * 1500 * 8000));
        // After a long idle time the bucket is full again, not more.
        let later = SimTime(1_000_000_000_000);
        assert_eq!(tb.ready_at(&spec, later, 3000), later);
        tb.take(&spec, later, 3000);
        assert_eq!(tb.ready_at(&spec, later, 1), SimTime(later.0 + 8000));
        // A packet larger than the bucket waits for a full bucket.
        assert_eq!(
            tb.ready_at(&spec, later, 9000),
            SimTime(later.0 + 3000 * 8000)
        );
    }
}

//! A switch's shared buffer with dynamic thresholds (Choudhury and Hahne, IEEE/ACM ToN 1998):
//! all egress queues of a switch draw from one buffer of `size` bytes, and a queue may grow
//! only while it stays below `T = alpha (size - used)`, `used` the bytes every queue of the
//! switch holds. With `N` persistently congested queues each settles at
//! `alpha size / (1 + N alpha)`, and `size / (1 + N alpha)` stays free for newly busy ports.

use crate::units::{BufferSize, Bytes};

/// Shared buffer settings of every switch.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SharedBuffer {
    /// The switch's buffer, bytes.
    pub size: Bytes,
    /// The dynamic-threshold factor.
    pub alpha: f64,
}

impl SharedBuffer {
    /// The default dynamic-threshold factor (Choudhury and Hahne's `alpha = 1`).
    pub const DEFAULT_ALPHA: f64 = 1.0;
    /// The limit of one egress queue when the switch's queues hold `used` bytes: the dynamic
    /// threshold, and the port's own byte buffer if that is smaller (a packet-count buffer is
    /// replaced by the threshold).
    #[inline]
    pub fn limit(&self, own: BufferSize, used: u64) -> BufferSize {
        let threshold = (self.alpha * self.size.0.saturating_sub(used) as f64).floor() as u64;
        match own {
            BufferSize::Bytes(b) => BufferSize::Bytes(Bytes(b.0.min(threshold))),
            BufferSize::Packets(_) => BufferSize::Bytes(Bytes(threshold)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_shrinks_as_the_buffer_fills() {
        let sb = SharedBuffer {
            size: Bytes(300_000),
            alpha: 1.0,
        };
        let own = BufferSize::Bytes(Bytes(1_000_000));
        assert_eq!(sb.limit(own, 0), BufferSize::Bytes(Bytes(300_000)));
        assert_eq!(sb.limit(own, 100_000), BufferSize::Bytes(Bytes(200_000)));
        assert_eq!(sb.limit(own, 300_000), BufferSize::Bytes(Bytes(0)));
        assert_eq!(
            sb.limit(BufferSize::Bytes(Bytes(50_000)), 0),
            BufferSize::Bytes(Bytes(50_000))
        );
        // One queue alone: q + s <= B - q stops it at B / 2 (alpha 1).
        let mut q = 0u64;
        while sb.limit(own, q).fits(0, q, 1500) {
            q += 1500;
        }
        assert_eq!(q, 150_000);
    }
}

//! The shaper stage of the egress pipeline: a token bucket gating the transmitter
//! ([`crate::shaping::TokenBucket`]). The queue's next packet goes at once when it conforms;
//! otherwise the port holds it (the transmitter waits for it) and wakes when it will.

use super::state::PortCold;
use crate::engine::event::MAX_EVENT_TIME;
use crate::queue::Entry;
use crate::shaping::{TokenBucket, TokenBucketSpec};
use crate::units::SimTime;

/// What the shaper did with the packet the transmitter would send next.
pub(super) enum Gate {
    /// It conforms (its tokens are taken): send it now.
    Go(Entry),
    /// It is held until this time (the port must wake then).
    Held(SimTime),
    /// It would conform only past the latest representable time (the run stops).
    Overflow(SimTime),
}

/// Gates `entry` at `now` through the bucket of `spec` kept in `cold`.
#[inline]
pub(super) fn gate(
    cold: &mut PortCold,
    spec: &TokenBucketSpec,
    entry: Entry,
    now: SimTime,
) -> Gate {
    let bucket = cold.shaper.get_or_insert_with(|| TokenBucket::new(spec));
    let size = entry.packet.size_bytes;
    let at = bucket.ready_at(spec, now, size);
    if at <= now {
        bucket.take(spec, now, size);
        return Gate::Go(entry);
    }
    if at > MAX_EVENT_TIME {
        return Gate::Overflow(at);
    }
    cold.held = Some(entry);
    Gate::Held(at)
}

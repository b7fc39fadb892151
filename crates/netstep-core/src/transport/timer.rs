//! What the reliable transports (TCP, RDMA) share about timers: one encoding of a timer's
//! token, and the retry limit.
//!
//! Timers are cancelled lazily: a transport re-arms a timer by scheduling a new event with a
//! newer generation, and a firing timer whose generation is not the latest is stale and does
//! nothing.

use super::{FailureReason, TransportOut};
use crate::units::{MaybeTime, SimTime};

/// A timer's identity inside its transport: a kind (which timer: retransmission, pacing, a
/// rate control's own) in the top four bits of the event's `u32` token and a generation (the
/// low 28 bits of a counter the transport bumps on every re-arm) in the rest.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimerToken {
    /// Which timer (0-15).
    pub kind: u32,
    /// Its generation, masked to [`TimerToken::GENERATION_BITS`] bits.
    pub generation: u32,
}

impl TimerToken {
    /// Bits of the generation.
    pub const GENERATION_BITS: u32 = 28;
    const MASK: u32 = (1 << Self::GENERATION_BITS) - 1;

    /// The token of timer `kind` armed with generation counter `generation`.
    #[inline]
    pub const fn new(kind: u32, generation: u32) -> TimerToken {
        TimerToken {
            kind,
            generation: generation & Self::MASK,
        }
    }
    /// The event's token.
    #[inline]
    pub const fn encode(self) -> u32 {
        (self.kind << Self::GENERATION_BITS) | self.generation
    }
    /// The token of a firing timer event.
    #[inline]
    pub const fn decode(token: u32) -> TimerToken {
        TimerToken {
            kind: token >> Self::GENERATION_BITS,
            generation: token & Self::MASK,
        }
    }
    /// Whether this is the latest timer of its kind, armed with generation counter `current`.
    #[inline]
    pub const fn is_current(self, current: u32) -> bool {
        self.generation == current & Self::MASK
    }
}

/// A retransmission timer: a deadline that moves with progress, and at most one pending timer
/// event. Moving the deadline later does not set a new event (an LP holds one per flow, not one
/// per ACK): the pending one, when it fires before the deadline, is set again for it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RtoTimer {
    /// When the timeout happens (none: not armed; one word, as the sender of each of a
    /// million flows keeps one).
    deadline: MaybeTime,
    /// When the pending timer event fires (none when none is pending).
    event_at: MaybeTime,
    /// Generation of the latest event.
    generation: u32,
}

impl RtoTimer {
    /// Whether a timeout is armed.
    #[inline]
    pub fn is_armed(&self) -> bool {
        !self.deadline.is_none()
    }

    /// Arms the timeout for `deadline` (timer `kind`), setting an event only when none is
    /// pending at or before it.
    #[inline]
    pub fn arm(&mut self, deadline: SimTime, kind: u32, out: &mut TransportOut) {
        self.deadline = MaybeTime::at(deadline);
        if self.event_at.get().is_none_or(|at| deadline < at) {
            self.schedule(deadline, kind, out);
        }
    }

    /// Disarms the timeout (a pending event then does nothing).
    #[inline]
    pub fn disarm(&mut self) {
        self.deadline = MaybeTime::NONE;
    }

    /// A timer event of this timer (`token`, of timer `kind`) fired at `now`: whether the
    /// timeout happens now. A stale event, or one with nothing armed, does nothing; one that
    /// fires before the deadline is set again for it.
    pub fn fired(
        &mut self,
        token: TimerToken,
        kind: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) -> bool {
        if !token.is_current(self.generation) {
            return false;
        }
        self.event_at = MaybeTime::NONE;
        match self.deadline.get() {
            Some(deadline) if deadline <= now => true,
            Some(deadline) => {
                self.schedule(deadline, kind, out);
                false
            }
            None => false,
        }
    }

    /// Sets the timer event for `at` (a newer generation retires any pending).
    fn schedule(&mut self, at: SimTime, kind: u32, out: &mut TransportOut) {
        self.generation = self.generation.wrapping_add(1);
        self.event_at = MaybeTime::at(at);
        out.timers
            .push((at, TimerToken::new(kind, self.generation).encode()));
    }
}

/// Consecutive retransmission timeouts without progress, against the limit after which a
/// flow is given up (`max_retries`, Linux `tcp_retries2`; the HPCC simulator's retry count).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Retries {
    /// Timeouts since the last progress (the RTO's back-off count).
    pub backoffs: u32,
    /// Timeouts over the flow's life.
    pub timeouts: u64,
}

impl Retries {
    /// A retransmission timer expired: counts it, or gives the flow up when `max_retries`
    /// timeouts in a row have passed without progress.
    #[inline]
    pub fn on_timeout(&mut self, max_retries: u32) -> Result<(), FailureReason> {
        if self.backoffs >= max_retries {
            return Err(FailureReason::RetryLimit);
        }
        self.backoffs += 1;
        self.timeouts += 1;
        Ok(())
    }
    /// The flow made progress: the count of timeouts in a row restarts.
    #[inline]
    pub fn progress(&mut self) {
        self.backoffs = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_retire_older_generations() {
        let t = TimerToken::new(3, (1 << 28) + 5);
        assert_eq!(TimerToken::decode(t.encode()), t);
        assert!(t.is_current(5));
        assert!(!t.is_current(6));
        assert_eq!(
            TimerToken::decode(TimerToken::new(15, u32::MAX).encode()).kind,
            15
        );
    }

    /// One pending event while the deadline moves later; an early event is set again for
    /// the deadline; an earlier deadline retires the pending event; the timeout comes at the
    /// deadline.
    #[test]
    fn the_rto_timer_keeps_one_event_and_fires_at_its_deadline() {
        let mut out = TransportOut::default();
        let mut t = RtoTimer::default();
        let token = |out: &TransportOut| TimerToken::decode(out.timers.last().unwrap().1);
        t.arm(SimTime(10), 0, &mut out);
        assert_eq!(out.timers.len(), 1);
        let first = token(&out);
        t.arm(SimTime(20), 0, &mut out);
        assert_eq!(out.timers.len(), 1, "a later deadline sets no event");
        assert!(
            !t.fired(first, 0, SimTime(10), &mut out),
            "early: no timeout"
        );
        assert_eq!(out.timers.len(), 2);
        assert_eq!(out.timers[1].0, SimTime(20), "set again for the deadline");
        let second = token(&out);
        t.arm(SimTime(15), 0, &mut out);
        assert_eq!(out.timers.len(), 3, "an earlier deadline sets a new event");
        assert!(
            !t.fired(second, 0, SimTime(20), &mut out),
            "the retired event is stale"
        );
        assert!(t.fired(token(&out), 0, SimTime(15), &mut out));
        t.disarm();
        assert!(!t.is_armed());
    }

    #[test]
    fn the_flow_is_given_up_after_max_retries_timeouts_in_a_row() {
        let mut r = Retries::default();
        assert_eq!(r.on_timeout(2), Ok(()));
        r.progress();
        assert_eq!(r.on_timeout(2), Ok(()));
        assert_eq!(r.on_timeout(2), Ok(()));
        assert_eq!(r.on_timeout(2), Err(FailureReason::RetryLimit));
        assert_eq!((r.backoffs, r.timeouts), (2, 3));
    }
}

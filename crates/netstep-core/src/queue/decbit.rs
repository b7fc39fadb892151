//! DECbit congestion indication (Ramakrishnan and Jain, "A binary feedback scheme for
//! congestion avoidance in computer networks", ACM TOCS 1990; the DEC sources of REAL) on a
//! FIFO: the router keeps the number of packets it holds (waiting plus the one being sent)
//! over time and sets the congestion bit ([`crate::packet::Packet::CONGESTION`]) in every
//! packet that arrives while the average of that number, over the last regeneration cycle
//! (busy plus idle period) and the current busy period, is at least one packet. Exact: the
//! area under the queue-length curve is kept in packet-picoseconds and compared in integers.

use super::{Admission, Entry, FifoQueue, QueueCtx};
use crate::packet::Packet;
use crate::units::{Bytes, SimTime};

/// A FIFO that sets the DECbit.
#[derive(Clone, Debug, Default)]
pub struct DecBit {
    fifo: FifoQueue,
    /// When the packet being sent leaves the router (`None`: the transmitter is idle).
    service_end: Option<SimTime>,
    /// Time of the last change of the held count accounted in `area_cur`.
    last: SimTime,
    /// Start of the previous cycle (its busy period's start).
    prev_start: SimTime,
    /// Start of the current cycle (the current or last busy period's start).
    cur_start: SimTime,
    /// Area (packet-ps) of the previous cycle.
    area_prev: u128,
    /// Area since `cur_start` up to `last`.
    area_cur: u128,
}

/// The FIFO under the AQM: its length, bytes and head are the queue's (read-only: every
/// arrival goes through the AQM's `enqueue`).
impl std::ops::Deref for DecBit {
    type Target = FifoQueue;
    fn deref(&self) -> &FifoQueue {
        &self.fifo
    }
}

impl DecBit {
    /// Packets held: waiting plus the one in service.
    fn held(&self) -> u64 {
        self.fifo.len() as u64 + self.service_end.is_some() as u64
    }

    /// Accounts the held count up to `now`, including a transmission that ended silently.
    fn advance(&mut self, now: SimTime) {
        if let Some(end) = self.service_end
            && end <= now
            && self.fifo.is_empty()
        {
            // The last packet left at `end` and nothing was waiting: idle from then on.
            self.area_cur += (end.0.saturating_sub(self.last.0)) as u128;
            self.last = end;
            self.service_end = None;
        }
        self.area_cur += (now.0.saturating_sub(self.last.0)) as u128 * self.held() as u128;
        self.last = self.last.max(now);
    }

    /// Whether the average held count over the previous cycle and the current one up to now
    /// is at least one packet.
    pub fn congested(&mut self, now: SimTime) -> bool {
        self.advance(now);
        let span = now.0.saturating_sub(self.prev_start.0) as u128;
        span > 0 && self.area_prev + self.area_cur >= span
    }

    /// Offers an entry: the bit is set from the average seen on arrival, then the FIFO's tail
    /// drop applies.
    pub fn enqueue(&mut self, mut entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let mark = self.congested(ctx.now) && !entry.packet.has(Packet::CONGESTION);
        if self.held() == 0 {
            // Idle -> busy: the cycle that started at `cur_start` is complete.
            self.prev_start = self.cur_start;
            self.area_prev = self.area_cur;
            self.cur_start = ctx.now;
            self.area_cur = 0;
        }
        if mark {
            entry.packet.set(Packet::CONGESTION, true);
        }
        match self.fifo.enqueue(entry, ctx) {
            Admission::Accepted if mark => Admission::AcceptedMarked,
            other => other,
        }
    }

    /// Takes the next entry; it is in service for its serialization time.
    pub fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        self.advance(ctx.now);
        let e = self.fifo.dequeue(ctx)?;
        self.service_end =
            Some(ctx.now + ctx.rate.serialization(Bytes(e.packet.size_bytes as u64)));
        Some(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{entry, with_ctx};
    use crate::units::{BitsPerSec, BufferSize};

    /// Runs `f` at `at_us` on a port serving 1000 B in 1 us (8 Gb/s).
    fn at<R>(at_us: u64, f: impl FnOnce(&mut QueueCtx<'_>) -> R) -> R {
        with_ctx(BufferSize::Packets(1000), |ctx| {
            ctx.now = SimTime::from_us(at_us);
            ctx.rate = BitsPerSec(8_000_000_000);
            f(ctx)
        })
    }

    fn offer(q: &mut DecBit, at_us: u64, n: u32) -> bool {
        at(at_us, |ctx| {
            q.enqueue(entry(n, 1000, 0), ctx) == Admission::AcceptedMarked
        })
    }

    fn serve(q: &mut DecBit, at_us: u64) {
        at(at_us, |ctx| q.dequeue(ctx).unwrap());
    }

    #[test]
    fn light_load_is_never_marked_overload_is() {
        // One packet every 2 us, each served at once for 1 us: one packet held half the time.
        let mut q = DecBit::default();
        for i in 0..100 {
            assert!(!offer(&mut q, 2 * i, i as u32), "packet {i}");
            serve(&mut q, 2 * i);
        }
        // Two packets every 2 us (1 packet per us offered, 1 per us served): after the first
        // pair one packet waits while another is sent, so the average reaches 1 and stays.
        let mut q = DecBit::default();
        let mut marks = 0;
        for i in 0..100u64 {
            for k in 0..2 {
                marks += offer(&mut q, 2 * i, (2 * i + k) as u32) as u32;
            }
            serve(&mut q, 2 * i);
            serve(&mut q, 2 * i + 1);
        }
        assert!(marks >= 190, "{marks}");
    }

    #[test]
    fn the_average_spans_the_previous_cycle_and_the_current_busy_period() {
        let mut q = DecBit::default();
        // Cycle 1: busy 0-3 us with 3 packets arriving at 0 (held 3, 2, 1: area 6 packet-us),
        // then idle until 10 us.
        for n in 0..3 {
            offer(&mut q, 0, n);
        }
        serve(&mut q, 0);
        serve(&mut q, 1);
        serve(&mut q, 2);
        // Arrival at 10 us: the interval is [0, 10] (the first cycle so far), area 6 < 10.
        assert!(!offer(&mut q, 10, 3));
        serve(&mut q, 10);
        // Cycle 2 started at 10 us (busy 10-11). At 11.5 us the span is the previous cycle
        // [0, 10) plus [10, 11.5): area 6 + 1 = 7 over 11.5 us: not congested.
        assert!(!q.congested(SimTime(11_500_000)));
        // A burst of 7 at 12 us: the first sees 7 / 12 (idle -> busy: cycle 2 = [10, 12)
        // becomes the previous one, area 1 over 2 us); the later ones see the queue they
        // built: at 12 us the span [10, 12] holds area 1 < 2, so none is marked yet...
        for n in 0..7 {
            assert!(!offer(&mut q, 12, 10 + n));
        }
        // ...but 1.5 us later 7 packets held for 1.5 us (area 10.5 + 1 over 3.5 us) is.
        assert!(q.congested(SimTime(13_500_000)));
    }
}

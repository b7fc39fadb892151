//! Random early detection (Floyd and Jacobson, IEEE/ACM ToN 1993) on a FIFO: an EWMA of the
//! queue in bytes, `avg <- (1 - w) avg + w q` at every arrival (decayed over idle time as if
//! packets of the port's MTU had departed); below `min` nothing happens, at or above `max`
//! every arrival is dropped (or marked CE when it is ECN-capable and `ecn` is on), in between
//! with `p_b = max_p (avg - min) / (max - min)`, spread by the packet count since the last
//! drop: `p_a = p_b / (1 - count p_b)`. With `weight = 1` it marks on the instantaneous queue
//! (the RED-style marking DCQCN configures with Kmin, Kmax, Pmax). Not the "gentle" variant.
//!
//! Two options serve switches that are not Floyd and Jacobson's router. With `spread` off each
//! packet is hit with `p_b` independently (no count rule: a switch's WRED, and the HPCC
//! simulator's `ShouldSendCN`). With `at_dequeue` the decision is taken as a packet leaves,
//! on the bytes still waiting behind it (the HPCC simulator marks in `SwitchNotifyDequeue`
//! on the egress bytes after removing the packet): it only marks (it needs `ecn`), and a
//! packet that is not ECN-capable leaves unmarked.

use rand::RngExt;

use super::{Admission, DropReason, Entry, FifoQueue, QueueCtx};
use crate::packet::Ecn;
use crate::units::SimTime;

/// RED parameters (integers so a link class stays hashable).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RedSpec {
    /// Lower threshold on the average queue, bytes.
    pub min_bytes: u64,
    /// Upper threshold, bytes.
    pub max_bytes: u64,
    /// Drop (mark) probability at `max`, parts per million.
    pub max_p_ppm: u32,
    /// EWMA weight, parts per million (1,000,000 = the instantaneous queue).
    pub weight_ppm: u32,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// Spread hits by the count since the last one (`p_a = p_b / (1 - count p_b)`); false:
    /// every packet is hit with `p_b` independently.
    pub spread: bool,
    /// Decide as a packet leaves, on the bytes waiting behind it (marking only).
    pub at_dequeue: bool,
}

/// A FIFO with RED.
#[derive(Clone, Debug)]
pub struct Red {
    fifo: FifoQueue,
    spec: RedSpec,
    avg: f64,
    /// Arrivals since the last drop or mark (-1: avg was below min).
    count: i64,
    /// When the queue last became empty (for the idle decay).
    idle_since: Option<SimTime>,
}

/// What RED decided for an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedVerdict {
    /// Enqueue unchanged.
    Pass,
    /// Drop, or mark when the packet is ECN-capable and marking is on.
    Hit,
}

/// The FIFO under the AQM: its length, bytes and head are the queue's (read-only: every
/// arrival goes through the AQM's `enqueue`).
impl std::ops::Deref for Red {
    type Target = FifoQueue;
    fn deref(&self) -> &FifoQueue {
        &self.fifo
    }
}

impl Red {
    /// An empty RED queue.
    pub fn new(spec: RedSpec) -> Red {
        Red {
            fifo: FifoQueue::default(),
            spec,
            avg: 0.0,
            count: -1,
            idle_since: Some(SimTime::ZERO),
        }
    }

    /// The current average queue, bytes.
    pub fn average(&self) -> f64 {
        self.avg
    }

    /// Whether a packet offered to the empty queue of an idle transmitter may bypass it
    /// ([`super::Queue::passes_when_empty`]): when RED decides at dequeue on the
    /// instantaneous queue (weight 1) with a positive `min`. Such a packet leaves nothing
    /// behind, so it is never hit and no number is drawn (0 < `min`); the average is 0
    /// whenever the queue is empty (set from the bytes left behind at the dequeue that
    /// emptied it), so neither it nor the idle time the bypass leaves unrecorded changes a
    /// later decision.
    pub const fn passes_when_empty(&self) -> bool {
        self.spec.at_dequeue && self.spec.weight_ppm == 1_000_000 && self.spec.min_bytes > 0
    }

    /// Decays the average over the time the queue stood empty (as if packets of 1500 B had
    /// left), once, when the first packet after the idle period is seen.
    fn decay_idle(&mut self, ctx: &QueueCtx<'_>, w: f64) {
        match self.idle_since.take() {
            Some(since) if self.fifo.is_empty() => {
                // m packets of 1500 B could have left while the queue was idle.
                let per_packet = ctx.rate.serialization(crate::units::Bytes(1500)).0.max(1);
                let m = (ctx.now.0.saturating_sub(since.0) / per_packet) as i32;
                self.avg *= (1.0 - w).powi(m);
            }
            _ => {}
        }
    }

    /// Updates the average for an arrival and draws the verdict.
    pub fn verdict(&mut self, ctx: &mut QueueCtx<'_>) -> RedVerdict {
        let w = self.spec.weight_ppm as f64 / 1e6;
        self.decay_idle(ctx, w);
        self.draw(ctx, self.fifo.bytes(), w)
    }

    /// Moves the average towards `bytes` waiting and draws the verdict.
    fn draw(&mut self, ctx: &mut QueueCtx<'_>, bytes: u64, w: f64) -> RedVerdict {
        self.avg = (1.0 - w) * self.avg + w * bytes as f64;
        let (min, max) = (self.spec.min_bytes as f64, self.spec.max_bytes as f64);
        if self.avg < min {
            self.count = -1;
            return RedVerdict::Pass;
        }
        if self.avg >= max {
            self.count = 0;
            return RedVerdict::Hit;
        }
        let p_b = self.spec.max_p_ppm as f64 / 1e6 * (self.avg - min) / (max - min);
        let p_a = if self.spec.spread {
            self.count += 1;
            let denominator = 1.0 - self.count as f64 * p_b;
            if denominator <= 0.0 {
                1.0
            } else {
                p_b / denominator
            }
        } else {
            p_b
        };
        let u: f64 = ctx.rng.get().random();
        if u < p_a {
            self.count = 0;
            RedVerdict::Hit
        } else {
            RedVerdict::Pass
        }
    }

    /// Offers an entry: RED first, then the FIFO's tail drop.
    pub fn enqueue(&mut self, mut entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        if self.spec.at_dequeue {
            self.decay_idle(ctx, self.spec.weight_ppm as f64 / 1e6);
            return self.fifo.enqueue(entry, ctx);
        }
        let mut marked = false;
        if self.verdict(ctx) == RedVerdict::Hit {
            let capable = matches!(entry.packet.ecn, Ecn::Ect0 | Ecn::Ect1 | Ecn::Ce);
            if !(self.spec.ecn && capable) {
                return Admission::Dropped(entry, DropReason::Early);
            }
            // A packet the buffer will refuse is not marked (it is dropped as it was).
            let fits = ctx.limit.fits(
                self.fifo.len(),
                self.fifo.bytes(),
                entry.packet.size_bytes as u64,
            );
            if fits {
                marked = entry.packet.ecn != Ecn::Ce;
                entry.packet.ecn = Ecn::Ce;
            }
        }
        match self.fifo.enqueue(entry, ctx) {
            Admission::Accepted if marked => Admission::AcceptedMarked,
            other => other,
        }
    }

    /// Takes the next entry.
    pub fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        let mut e = self.fifo.dequeue(ctx);
        if self.spec.at_dequeue
            && let Some(entry) = e.as_mut()
        {
            let w = self.spec.weight_ppm as f64 / 1e6;
            if self.draw(ctx, self.fifo.bytes(), w) == RedVerdict::Hit {
                entry.mark_on_departure();
            }
        }
        if self.fifo.is_empty() {
            self.idle_since = Some(ctx.now);
        }
        e
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::{entry, with_ctx};
    use crate::units::BufferSize;

    #[test]
    fn the_hit_fraction_follows_the_configured_curve() {
        // Hold the queue at a fixed occupancy q (one arrival, one departure) with the
        // instantaneous queue as the average (weight 1), so p_b = max_p (q - min)/(max - min)
        // is constant. The hit fraction is 1 / E[gap], the gap between hits following RED's
        // count rule p_a(n) = p_b / (1 - n p_b) (Floyd and Jacobson, section 7: about uniform,
        // so the fraction is about 2 p_b).
        let spec = RedSpec {
            min_bytes: 10_000,
            max_bytes: 50_000,
            max_p_ppm: 100_000,
            weight_ppm: 1_000_000,
            ecn: false,
            spread: true,
            at_dequeue: false,
        };
        for q_packets in [12u32, 20, 30, 40, 48] {
            let mut red = Red::new(spec);
            let arrivals = 200_000u32;
            let mut hits = 0u32;
            with_ctx(BufferSize::Packets(1_000_000), |ctx| {
                for n in 0..q_packets {
                    red.fifo.enqueue(entry(n, 1000, 0), ctx);
                }
                for n in 0..arrivals {
                    match red.enqueue(entry(n, 1000, 0), ctx) {
                        Admission::Dropped(..) => hits += 1,
                        _ => {
                            red.dequeue(ctx);
                        }
                    }
                }
            });
            let q = q_packets as f64 * 1000.0;
            let p_b = 0.1 * (q - 10_000.0) / 40_000.0;
            let (mut survive, mut gap, mut n) = (1.0f64, 0.0f64, 1.0f64);
            while survive > 0.0 {
                let denominator = 1.0 - n * p_b;
                let p_a = if denominator <= 0.0 {
                    1.0
                } else {
                    (p_b / denominator).min(1.0)
                };
                gap += n * survive * p_a;
                survive *= 1.0 - p_a;
                n += 1.0;
            }
            let want = 1.0 / gap;
            assert!((want / (2.0 * p_b) - 1.0).abs() < 0.1, "about 2 p_b");
            let got = hits as f64 / arrivals as f64;
            // 4.5 standard errors of a binomial proportion (the count rule makes hits more
            // regular than Bernoulli, so this is conservative).
            let se = (want * (1.0 - want) / arrivals as f64).sqrt();
            assert!(
                (got - want).abs() < 4.5 * se,
                "q = {q} B: hit fraction {got:.5}, curve {want:.5} (se {se:.5})"
            );
        }
    }

    #[test]
    fn below_min_nothing_and_at_max_everything() {
        let spec = RedSpec {
            min_bytes: 5_000,
            max_bytes: 8_000,
            max_p_ppm: 100_000,
            weight_ppm: 1_000_000,
            ecn: true,
            spread: true,
            at_dequeue: false,
        };
        let mut red = Red::new(spec);
        with_ctx(BufferSize::Packets(1000), |ctx| {
            for n in 0..5 {
                // Queue 0..4 KB before each arrival: below min.
                assert_eq!(red.enqueue(entry(n, 1000, 0), ctx), Admission::Accepted);
            }
            for n in 5..8 {
                red.fifo.enqueue(entry(n, 1000, 0), ctx);
            }
            // 8 KB waiting: at max. Not ECN-capable: dropped; ECN-capable: marked.
            assert!(matches!(
                red.enqueue(entry(9, 1000, 0), ctx),
                Admission::Dropped(_, DropReason::Early)
            ));
            let mut ect = entry(10, 1000, 0);
            ect.packet.ecn = Ecn::Ect0;
            assert_eq!(red.enqueue(ect, ctx), Admission::AcceptedMarked);
        });
    }

    #[test]
    fn at_dequeue_without_spread_hits_with_p_b_on_the_bytes_behind() {
        // Hold q packets of 1000 B behind each departing packet (one arrival, one departure)
        // with weight 1: every departure is marked independently with
        // p_b = max_p (q - min)/(max - min) (the HPCC simulator's ShouldSendCN), a binomial
        // proportion.
        let spec = RedSpec {
            min_bytes: 10_000,
            max_bytes: 50_000,
            max_p_ppm: 200_000,
            weight_ppm: 1_000_000,
            ecn: true,
            spread: false,
            at_dequeue: true,
        };
        for q_packets in [5u32, 20, 30, 45, 60] {
            let mut red = Red::new(spec);
            let departures = 100_000u32;
            let mut marks = 0u32;
            with_ctx(BufferSize::Packets(1_000_000), |ctx| {
                let ect = |n: u32| {
                    let mut e = entry(n, 1000, 0);
                    e.packet.ecn = Ecn::Ect0;
                    e
                };
                for n in 0..=q_packets {
                    assert_eq!(red.enqueue(ect(n), ctx), Admission::Accepted);
                }
                for n in 0..departures {
                    let e = red.dequeue(ctx).unwrap();
                    assert_eq!(red.fifo.bytes(), q_packets as u64 * 1000);
                    marks += e.marked as u32;
                    assert_eq!(e.marked, e.packet.ecn == Ecn::Ce);
                    red.enqueue(ect(n), ctx);
                }
            });
            let q = q_packets as f64 * 1000.0;
            let want = (0.2 * (q - 10_000.0) / 40_000.0).clamp(0.0, 1.0);
            let want = if q >= 50_000.0 { 1.0 } else { want };
            let got = marks as f64 / departures as f64;
            let se = (want * (1.0 - want) / departures as f64).sqrt();
            assert!(
                (got - want).abs() <= 4.5 * se,
                "q = {q} B behind: marked {got:.5}, p_b {want:.5} (se {se:.5})"
            );
        }
    }
    /// What [`Red::passes_when_empty`] rests on: marking at dequeue on the instantaneous
    /// queue, the average is 0 each time the queue empties, so an idle port's packet that
    /// bypasses the queue changes nothing; with a weight below 1 the average stays positive
    /// after the queue empties (and each dequeue would step it), so such a queue must see
    /// every packet.
    #[test]
    fn the_average_is_zero_whenever_the_queue_empties_only_at_weight_one() {
        for (weight_ppm, passes) in [(1_000_000, true), (500_000, false)] {
            let mut red = Red::new(RedSpec {
                min_bytes: 100,
                max_bytes: 100_000,
                max_p_ppm: 100_000,
                weight_ppm,
                ecn: true,
                spread: false,
                at_dequeue: true,
            });
            assert_eq!(red.passes_when_empty(), passes, "weight {weight_ppm} ppm");
            with_ctx(BufferSize::Packets(1_000), |ctx| {
                for round in 0..3u32 {
                    for n in 0..5 {
                        red.enqueue(entry(round * 5 + n, 1_000, 0), ctx);
                    }
                    while red.dequeue(ctx).is_some() {}
                    assert_eq!(red.average() == 0.0, passes, "weight {weight_ppm} ppm");
                }
            });
        }
    }
}

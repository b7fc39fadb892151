//! Per-flow fair queueing as in REAL's FQ gateway (Demers, Keshav and Shenker, SIGCOMM 1989):
//! one queue per flow, equal weights, packets sent in order of their bit-by-bit round-robin
//! finish numbers (the GPS virtual time of [`super::gps`] with unit weights). One shared
//! buffer: when it is full, the flow holding the most bytes loses its last packet (which may
//! be the arriving one), so an ill-behaved source cannot take the buffer from the others.

use super::fair::{BufferRule, TaggedQueues};
use super::gps::GpsClock;
use super::{Admission, Entry, QueueCtx};

/// Fair queueing over flows.
#[derive(Clone, Debug, Default)]
pub struct FairQueueing {
    queues: TaggedQueues,
    clock: GpsClock,
}

impl FairQueueing {
    /// Offers an entry: tags it with its flow's finish number; push-out when the buffer is
    /// full.
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let flow = entry.packet.flow as u64;
        let size = entry.packet.size_bytes as u64;
        self.clock.advance(ctx.now, ctx.rate);
        let clock = &mut self.clock;
        let admission = self
            .queues
            .offer(flow, entry, BufferRule::SharedPushOut, ctx, || {
                clock.tag(flow, size, 1.0)
            });
        if let Admission::AcceptedDroppedOther(victim, _) = &admission {
            // The victim was its flow's last packet: its finish number is taken back.
            self.clock
                .untag(victim.packet.flow as u64, victim.packet.size_bytes as u64);
        }
        admission
    }
    /// The waiting packet with the smallest finish number.
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        self.queues.pop()
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its tagged queues's.
impl std::ops::Deref for FairQueueing {
    type Target = TaggedQueues;
    #[inline]
    fn deref(&self) -> &TaggedQueues {
        &self.queues
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::tests::with_ctx;
    use crate::units::{BufferSize, SimTime};

    fn flow_entry(flow: u32, n: u32) -> Entry {
        let mut e = crate::queue::tests::entry(n, 1500, 0);
        e.packet.flow = flow;
        e
    }

    #[test]
    fn backlogged_flows_alternate_and_a_greedy_flow_is_pushed_out() {
        let mut q = FairQueueing::default();
        with_ctx(BufferSize::Packets(8), |ctx| {
            // Flow 1 fills most of the buffer first, then flow 2 arrives.
            for n in 0..6 {
                assert_eq!(q.enqueue(flow_entry(1, n), ctx), Admission::Accepted);
            }
            for n in 0..4 {
                let a = q.enqueue(flow_entry(2, 100 + n), ctx);
                if n < 2 {
                    assert_eq!(a, Admission::Accepted);
                } else {
                    // Full: flow 1 (6 packets) loses its last one.
                    assert!(
                        matches!(a, Admission::AcceptedDroppedOther(v, _) if v.packet.flow == 1),
                        "{a:?}"
                    );
                }
            }
            ctx.now = SimTime::from_ns(1);
            let order: Vec<u32> = std::iter::from_fn(|| q.dequeue(ctx))
                .map(|e| e.packet.flow)
                .collect();
            assert_eq!(order, vec![1, 2, 1, 2, 1, 2, 1, 2]);
        });
    }
}

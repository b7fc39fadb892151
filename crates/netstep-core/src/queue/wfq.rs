//! Weighted fair queueing over the traffic classes (Demers, Keshav and Shenker 1989; Parekh
//! and Gallager 1993): each packet gets the finish tag it would have in the fluid GPS system,
//! `F = max(V(arrival), F_prev) + size / weight`, with `V` the exact GPS virtual time
//! ([`super::gps`]), and the smallest tag is sent first. Per-class buffers.

use super::classes::CLASSES;
use super::fair::{BufferRule, TaggedQueues};
use super::gps::GpsClock;
use super::{Admission, Entry, QueueCtx};

/// WFQ over the eight classes.
#[derive(Clone, Debug)]
pub struct Wfq {
    queues: TaggedQueues,
    clock: GpsClock,
    weights: [f64; CLASSES],
}

impl Wfq {
    /// WFQ with per-class weights (a class of weight 0 uses 1).
    pub fn new(weights: [u16; CLASSES]) -> Wfq {
        Wfq {
            queues: TaggedQueues::default(),
            clock: GpsClock::default(),
            weights: weights.map(|w| w.max(1) as f64),
        }
    }
    /// Offers an entry: tags it with its GPS finish time (tail drop per class).
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let class = entry.packet.class() as usize;
        let size = entry.packet.size_bytes as u64;
        self.clock.advance(ctx.now, ctx.rate);
        let (clock, weight) = (&mut self.clock, self.weights[class]);
        self.queues
            .offer(class as u64, entry, BufferRule::PerKey, ctx, || {
                clock.tag(class as u64, size, weight)
            })
    }
    /// The waiting packet with the smallest finish tag.
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        self.queues.pop()
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its tagged queues's.
impl std::ops::Deref for Wfq {
    type Target = TaggedQueues;
    #[inline]
    fn deref(&self) -> &TaggedQueues {
        &self.queues
    }
}

//! Virtual Clock (Zhang, SIGCOMM 1990): class `i` reserves the rate `r_i = C w_i / sum(w)`;
//! each packet is stamped `VC_i = max(arrival time, VC_i) + size / r_i` in real time and the
//! smallest stamp is sent first. Unlike WFQ, a class that used idle capacity beyond its
//! reservation is pushed back in later competition. Per-class buffers.

use super::classes::CLASSES;
use super::fair::{BufferRule, TaggedQueues};
use super::gps::Tag;
use super::{Admission, Entry, QueueCtx};

/// Virtual Clock over the eight classes.
#[derive(Clone, Debug)]
pub struct VirtualClock {
    queues: TaggedQueues,
    /// Reserved share of the link per class (w_i / sum w).
    shares: [f64; CLASSES],
    /// Each class's clock, ps.
    clocks: [f64; CLASSES],
}

impl VirtualClock {
    /// Virtual Clock with per-class weights (a class of weight 0 uses 1).
    pub fn new(weights: [u16; CLASSES]) -> VirtualClock {
        let w = weights.map(|w| w.max(1) as f64);
        let total: f64 = w.iter().sum();
        VirtualClock {
            queues: TaggedQueues::default(),
            shares: w.map(|w| w / total),
            clocks: [0.0; CLASSES],
        }
    }
    /// Offers an entry stamped with its class's clock (tail drop per class).
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let class = entry.packet.class() as usize;
        let size = entry.packet.size_bytes as f64;
        let bytes_per_ps = ctx.rate.0 as f64 / 8.0 / 1e12 * self.shares[class];
        let now = ctx.now.0 as f64;
        let clock = &mut self.clocks[class];
        self.queues
            .offer(class as u64, entry, BufferRule::PerKey, ctx, || {
                *clock = clock.max(now) + size / bytes_per_ps;
                Tag(*clock)
            })
    }
    /// The waiting packet with the smallest stamp.
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        self.queues.pop()
    }
}

/// What waits (`len`, `is_empty`, `bytes`) is its tagged queues's.
impl std::ops::Deref for VirtualClock {
    type Target = TaggedQueues;
    #[inline]
    fn deref(&self) -> &TaggedQueues {
        &self.queues
    }
}

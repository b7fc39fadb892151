//! FIFO egress queue with tail drop, limited in bytes or in packets.
//!
//! Models the drop-tail queue of every textbook router (and ns.py's `Port` with `qlimit`): a
//! packet that does not fit in the remaining buffer is dropped on arrival. The limit counts the
//! packets *waiting*; the packet being serialized has left the buffer.

use std::collections::VecDeque;

use super::{Admission, DropReason, Entry, QueueCtx};

/// A FIFO of waiting entries with its byte count.
#[derive(Clone, Debug, Default)]
pub struct FifoQueue {
    entries: VecDeque<Entry>,
    bytes: u64,
}

impl FifoQueue {
    /// Appends `entry` unless that would exceed the limit.
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        let size = entry.packet.size_bytes as u64;
        if !ctx.limit.fits(self.entries.len(), self.bytes, size) {
            return Admission::Dropped(entry, DropReason::BufferFull);
        }
        self.bytes += size;
        self.entries.push_back(entry);
        Admission::Accepted
    }
    /// Removes the oldest entry.
    #[inline]
    pub fn dequeue(&mut self, _ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        let e = self.entries.pop_front()?;
        self.bytes -= e.packet.size_bytes as u64;
        Some(e)
    }
    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.entries.len()
    }
    /// Traffic class of the head entry.
    pub fn head_class(&self) -> Option<u8> {
        self.entries.front().map(|e| e.packet.class())
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use crate::rng::LazyStream;
    use crate::units::{BufferSize, Bytes, SimTime};
    use proptest::prelude::*;

    fn entry(n: u32, size: u32) -> Entry {
        Entry {
            packet: Packet::new(PacketKind::Data, 0, n, n, 0, size),
            arrived_ps: n as u64,
            ahead_bytes: 0,
            ahead_packets: 0,
            traced: false,
            pfc: false,
            marked: false,
        }
    }

    fn with_ctx<R>(limit: BufferSize, f: impl FnOnce(&mut QueueCtx<'_>) -> R) -> R {
        let mut slot = None;
        let mut ctx = QueueCtx {
            now: SimTime::ZERO,
            limit,
            rate: crate::units::BitsPerSec(1_000_000_000),
            rng: LazyStream::new(&mut slot, 1, 0, 0),
        };
        f(&mut ctx)
    }

    #[test]
    fn packet_limit_drops_the_tail() {
        let mut q = FifoQueue::default();
        with_ctx(BufferSize::Packets(3), |ctx| {
            for n in 0..3 {
                assert_eq!(q.enqueue(entry(n, 100), ctx), Admission::Accepted);
            }
            assert_eq!(
                q.enqueue(entry(3, 100), ctx),
                Admission::Dropped(entry(3, 100), DropReason::BufferFull)
            );
            let first = q.dequeue(ctx).unwrap();
            assert_eq!(first.packet.number, 0);
            assert_eq!(first.arrived_ps, 0, "entries keep their arrival facts");
        });
        assert_eq!(q.bytes(), 200);
    }

    proptest! {
        /// Queues never exceed capacity and hand packets out in arrival order; bytes stay exact.
        #[test]
        fn fifo_respects_bound_and_order(ops in prop::collection::vec((any::<bool>(), 1u32..3000), 1..400), limit in 1u64..20_000) {
            let mut q = FifoQueue::default();
            let mut next = 0u32;
            let mut expected_out = 0u32;
            let mut accepted = Vec::new();
            let limit = BufferSize::Bytes(Bytes(limit));
            for (push, size) in ops {
                let result = with_ctx(limit, |ctx| {
                    if push {
                        if q.enqueue(entry(next, size), ctx) == Admission::Accepted {
                            accepted.push(next);
                        }
                        next += 1;
                    } else if let Some(e) = q.dequeue(ctx) {
                        prop_assert_eq!(e.packet.number, accepted[expected_out as usize]);
                        expected_out += 1;
                    }
                    Ok(())
                });
                result?;
                prop_assert!(q.bytes() <= limit.bytes_or_max());
                let sum: u64 = q.entries.iter().map(|e| e.packet.size_bytes as u64).sum();
                prop_assert_eq!(sum, q.bytes());
            }
        }
    }
}

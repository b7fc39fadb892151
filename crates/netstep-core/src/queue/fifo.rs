//! FIFO egress queue with tail drop, limited in bytes or in packets.
//!
//! Models the drop-tail queue of every textbook router (and ns.py's `Port` with `qlimit`): a
//! packet that does not fit in the remaining buffer is dropped on arrival. The limit counts the
//! packets *waiting*; the packet being serialized has left the buffer.

use std::collections::VecDeque;

use super::DropReason;
use crate::packet::Packet;
use crate::units::BufferSize;

/// A FIFO of waiting packets with its byte count.
#[derive(Clone, Debug, Default)]
pub struct FifoQueue {
    packets: VecDeque<Packet>,
    bytes: u64,
}

impl FifoQueue {
    /// Appends `packet` unless that would exceed `limit`.
    #[inline]
    pub fn enqueue(&mut self, packet: Packet, limit: BufferSize) -> Result<(), DropReason> {
        let fits = match limit {
            BufferSize::Packets(n) => self.packets.len() < n as usize,
            BufferSize::Bytes(b) => self.bytes + packet.size_bytes as u64 <= b.0,
        };
        if !fits {
            return Err(DropReason::BufferFull);
        }
        self.bytes += packet.size_bytes as u64;
        self.packets.push_back(packet);
        Ok(())
    }
    /// Removes the oldest packet.
    #[inline]
    pub fn dequeue(&mut self) -> Option<Packet> {
        let p = self.packets.pop_front()?;
        self.bytes -= p.size_bytes as u64;
        Some(p)
    }
    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.packets.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.packets.is_empty()
    }
    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;
    use crate::units::Bytes;
    use proptest::prelude::*;

    fn packet(n: u32, size: u32) -> Packet {
        Packet {
            flow: 0,
            number: n,
            seq: n,
            dst: 0,
            sent_ps: 0,
            size_bytes: size,
            kind: PacketKind::Data,
            hop: 0,
            ecn: 0,
            explicit_path: false,
        }
    }

    #[test]
    fn packet_limit_drops_the_tail() {
        let mut q = FifoQueue::default();
        for n in 0..3 {
            q.enqueue(packet(n, 100), BufferSize::Packets(3)).unwrap();
        }
        assert_eq!(
            q.enqueue(packet(3, 100), BufferSize::Packets(3)),
            Err(DropReason::BufferFull)
        );
        assert_eq!(q.dequeue().unwrap().number, 0);
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
            for (push, size) in ops {
                if push {
                    if q.enqueue(packet(next, size), BufferSize::Bytes(Bytes(limit))).is_ok() {
                        accepted.push(next);
                    }
                    next += 1;
                } else if let Some(p) = q.dequeue() {
                    prop_assert_eq!(p.number, accepted[expected_out as usize]);
                    expected_out += 1;
                }
                prop_assert!(q.bytes() <= limit);
                let sum: u64 = q.packets.iter().map(|p| p.size_bytes as u64).sum();
                prop_assert_eq!(sum, q.bytes());
            }
        }
    }
}

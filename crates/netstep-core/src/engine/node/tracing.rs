//! Tracing hand-off: whether a hop is recorded (decided at arrival from the filters and the
//! packet id only) and the [`HopRecord`] built from a queue entry.

use super::NodeState;
use crate::engine::Model;
use crate::engine::trace::{DropReason, HopRecord};
use crate::packet::Packet;
use crate::queue::Entry;
use crate::units::SimTime;

impl NodeState {
    /// Whether the hop of `packet` arriving here at `now` is recorded.
    #[inline]
    pub(super) fn traced(&self, packet: &Packet, now: SimTime, model: &Model) -> bool {
        model
            .trace
            .packet_hops
            .as_ref()
            .is_some_and(|f| f.accepts(packet, self.node, now))
    }

    /// Records the hop of `entry` at global port `port` if it is traced.
    #[inline]
    pub(super) fn record_hop(
        &mut self,
        entry: &Entry,
        port: u32,
        transmitted: Option<(u64, u64)>,
        drop: Option<DropReason>,
    ) {
        if !entry.traced {
            return;
        }
        let packet = &entry.packet;
        self.hop_records.push(HopRecord {
            packet_id: packet.id(),
            flow: packet.flow,
            hop: packet.hop as u16,
            node: self.node,
            port,
            kind: packet.kind,
            seq: packet.seq,
            size_bytes: packet.size_bytes,
            arrive_ps: entry.arrived_ps,
            dequeue_ps: transmitted.map(|t| t.0),
            depart_ps: transmitted.map(|t| t.1),
            queue_bytes: entry.ahead_bytes,
            queue_packets: entry.ahead_packets,
            ecn: packet.ecn.bits(),
            drop,
        });
    }
}

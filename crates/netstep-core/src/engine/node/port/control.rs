//! PFC's control lane on an egress port: PAUSE and RESUME frames go ahead of everything the
//! queue holds, and a frame that arrives pauses or resumes one traffic class of the port that
//! sends towards its sender. The switch's ingress accounting that decides when to send them
//! is [`crate::pfc::PfcIngress`]. With `[switch] ack_priority` a switch's ACKs, NACKs and
//! CNPs share the lane with the frames (the HPCC simulator's queue 0).

use super::state::{PortCold, PortState};
use super::{Egress, PortRef, transmitter};
use crate::engine::event::EventSink;
use crate::packet::{Packet, PacketKind};
use crate::pfc::FRAME_BYTES;
use crate::queue::Entry;
use crate::units::SimTime;

/// A PAUSE (`pause`) or RESUME frame for traffic class `class`, to node `peer`, made at `now`.
pub(super) fn frame(class: u8, pause: bool, peer: u32, now: SimTime) -> Entry {
    let mut packet = Packet::new(
        PacketKind::Pause,
        u32::MAX,
        0,
        pause as u32,
        peer,
        FRAME_BYTES,
    );
    packet.set_class(class);
    Entry::with_nothing_ahead(packet, now, false, false)
}

/// Queues `frame` (or a priority ACK) behind those already waiting, ahead of the queue element.
pub(super) fn push(cold: &mut PortCold, frame: Entry) {
    cold.control.push_back(frame);
}

/// The next frame waiting, if any.
pub(super) fn pop(cold: &mut PortCold) -> Option<Entry> {
    cold.control.pop_front()
}

/// Applies a frame that arrived on `port`'s link: pauses or resumes its class. Returns `true`
/// when it resumed the class.
pub(super) fn apply(port: &mut PortState, packet: &Packet) -> bool {
    let bit = 1u8 << packet.class();
    if packet.seq == 1 {
        port.paused |= bit;
        return false;
    }
    port.paused &= !bit;
    true
}

impl<'a> Egress<'a> {
    /// [`Egress::offer`] for an ACK, NACK or CNP at a switch with `ack_priority`: it joins
    /// the control lane, served before the queue element in arrival order with PFC frames
    /// (strict priority, no buffer limit, no AQM, outside PFC's accounting: the HPCC
    /// simulator's queue 0 with ACK_HIGH_PRIO).
    #[inline(never)]
    pub(super) fn offer_priority(
        &mut self,
        at: &PortRef<'a>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let traced = self.lp.traced(&packet, now, self.model);
        let port = &mut self.ports[at.local as usize];
        // What waits ahead of it, read only by its hop record: summed for traced packets only.
        let (ahead_packets, ahead_bytes) = match port.cold.as_ref() {
            Some(c) if traced => (
                c.control.len() as u32,
                c.control.iter().map(|e| e.packet.size_bytes as u64).sum(),
            ),
            _ => (0, 0),
        };
        let entry = Entry {
            packet,
            arrived_ps: now.0,
            ahead_bytes,
            ahead_packets,
            traced,
            pfc: false,
            marked: false,
        };
        if port.idle(now) {
            transmitter::transmit(self.lp, port, at, entry, true, now, self.model, sink);
            return;
        }
        push(port.cold_mut(at.class), entry);
        self.wake_if_waiting(at.local, now, sink);
    }
}

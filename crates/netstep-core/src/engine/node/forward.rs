//! Forwarding: a switch picks the egress port of an arriving packet (FatTree arithmetic or
//! shortest-path ECMP by flow hash, or the flow's explicit path; see [`Model::egress_port`]).

use super::NodeState;
use crate::engine::Model;
use crate::engine::event::EventSink;
use crate::packet::Packet;
use crate::units::SimTime;

impl NodeState {
    /// Routes `packet` to an egress port and offers it there; a packet with no route is
    /// counted as misrouted.
    pub(super) fn forward(
        &mut self,
        packet: Packet,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let Some(local) = model.egress_port(self.node, &packet) else {
            self.counters.misrouted += 1;
            return;
        };
        self.offer(local, packet, now, model, sink);
    }
}

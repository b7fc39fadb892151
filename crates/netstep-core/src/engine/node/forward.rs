//! Forwarding: a switch picks the egress port of an arriving packet: the flow's explicit path,
//! or among the equal-cost next hops by the load-balancing mode (per-flow ECMP by default, by
//! FatTree arithmetic or shortest-path tables; see [`Model::egress_port`] and
//! [`crate::balance`]).

use super::NodeState;
use super::port::PortState;
use crate::balance::{BalanceState, PortLoad};
use crate::engine::Model;
use crate::engine::event::EventSink;
use crate::packet::Packet;
use crate::units::{Bytes, SimTime};

/// The adaptive mode's view of a switch's ports.
struct Ports<'a> {
    ports: &'a [PortState],
    model: &'a Model,
    node: u32,
}

impl PortLoad for Ports<'_> {
    fn drain_time(&self, local: u32, now: SimTime) -> SimTime {
        let port = &self.ports[local as usize];
        let rate = self
            .model
            .net
            .class_of(self.model.net.port_id(self.node, local))
            .rate;
        port.busy_until.max(now) + rate.serialization(Bytes(port.queue_bytes()))
    }
}

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
        let local = if model.balance.is_plain_ecmp() || packet.explicit_path() {
            model.egress_port(self.node, &packet)
        } else {
            let state = self
                .balance
                .get_or_insert_with(Box::<BalanceState>::default);
            let load = Ports {
                ports: &self.ports,
                model,
                node: self.node,
            };
            state.choose(
                &model.balance,
                &model.net,
                self.node,
                &packet,
                now,
                model.seed,
                &load,
            )
        };
        let Some(local) = local else {
            self.counters.misrouted += 1;
            return;
        };
        self.offer(local, packet, now, model, sink);
    }
}

//! Forwarding: a switch picks the egress port of an arriving packet: the flow's explicit path,
//! or among the equal-cost next hops by the load-balancing mode (per-flow ECMP by default, by
//! FatTree arithmetic or shortest-path tables; see [`Model::egress_port`] and
//! [`crate::balance`]); while a link is down, over the live links ([`crate::failure`]).

use super::NodeState;
use super::port::PortState;
use crate::balance::{BalanceState, PortLoad};
use crate::engine::Model;
use crate::engine::event::EventSink;
use crate::network::ecmp_hash;
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
        let local = if packet.explicit_path()
            || (model.failures.is_none() && model.balance.is_plain_ecmp())
        {
            model.egress_port(self.node, &packet)
        } else {
            self.balanced_port(&packet, now, model)
        };
        let Some(local) = local else {
            self.counters.misrouted += 1;
            self.telemetry_take(&packet);
            return;
        };
        self.offer(local, packet, now, model, sink);
    }

    /// The egress port when load balancing is not plain ECMP or a failure schedule exists.
    #[inline(never)]
    fn balanced_port(&mut self, packet: &Packet, now: SimTime, model: &Model) -> Option<u32> {
        let failures = model.failures.as_deref().filter(|f| f.rerouting(now));
        if model.balance.is_plain_ecmp() && failures.is_none() {
            // A failure schedule with every link up right now: the topology's own routing.
            return model.egress_port(self.node, packet);
        }
        {
            let node = self.node;
            let state = self
                .balance
                .get_or_insert_with(Box::<BalanceState>::default);
            match failures {
                Some(f) if model.balance.is_plain_ecmp() => {
                    let hash = ecmp_hash(packet.flow, packet.kind.is_feedback(), node);
                    f.route(
                        &model.net,
                        node,
                        packet.dst,
                        hash,
                        now,
                        &mut state.candidates,
                    )
                }
                _ => {
                    let load = Ports {
                        ports: &self.ports,
                        model,
                        node,
                    };
                    state.choose(
                        &model.balance,
                        &model.net,
                        node,
                        packet,
                        now,
                        model.seed,
                        &load,
                        |out| match failures {
                            Some(f) => f.next_hops(&model.net, node, packet.dst, now, out),
                            None => model.net.next_hops(node, packet.dst, out),
                        },
                    )
                }
            }
        }
    }
}

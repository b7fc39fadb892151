//! Switches: forwarding (the flow's explicit path, or among the equal-cost next hops by the
//! load-balancing mode: per-flow ECMP by default, by FatTree arithmetic or shortest-path
//! tables; see [`Model::egress_port`] and [`crate::balance`]; while a link is down, over the
//! live links, [`crate::failure`]) and PFC's ingress accounting, which sends PAUSE and RESUME
//! frames upstream ([`crate::pfc`]).

use super::lp::Lp;
use super::port::{Egress, Owner, PortState};
use crate::balance::BalanceState;
use crate::engine::event::{Event, EventKind, EventSink};
use crate::engine::model::Model;
use crate::network::ecmp_hash;
use crate::packet::{Packet, PacketKind};
use crate::pfc::{FrameRequest, PfcEvent, PfcIngress};
use crate::queue::Entry;
use crate::shaping::TokenBucketSpec;
use crate::units::SimTime;

/// The state of a switch beyond its ports.
#[derive(Clone, Debug, Default)]
pub struct SwitchState {
    /// PFC ingress accounting (allocated on the first lossless packet).
    pub pfc: Option<Box<PfcIngress>>,
    /// PAUSE and RESUME frames this switch sent.
    pub pfc_events: Vec<PfcEvent>,
    /// Load-balancing state (stateful modes only, allocated on first use).
    pub balance: Option<Box<BalanceState>>,
}

impl Owner for SwitchState {
    const HOST: bool = false;
    #[inline]
    fn lossless(&self, packet: &Packet, model: &Model) -> bool {
        packet.ingress != Packet::NO_INGRESS
            && model.pfc.is_some_and(|p| p.is_lossless(packet.class()))
    }
    #[inline]
    fn own_shaper<'m>(&self, _model: &'m Model) -> Option<&'m TokenBucketSpec> {
        None
    }
    /// A counted lossless packet leaving the switch releases its ingress count (and may
    /// resume the upstream).
    #[inline]
    fn left<S: EventSink>(
        &mut self,
        eg: &mut Egress<'_>,
        entry: &Entry,
        sent: bool,
        now: SimTime,
        sink: &mut S,
    ) {
        if !(sent && entry.pfc) {
            return;
        }
        let p = &entry.packet;
        let (Some(spec), Some(ing)) = (&eg.model.pfc, self.pfc.as_mut()) else {
            return;
        };
        if ing.left(spec, p.ingress, p.class(), p.size_bytes) == Some(FrameRequest::Resume) {
            self.send_frame(eg, p.ingress as u32, p.class(), false, now, sink);
        }
    }
    /// A lossless packet waits here: counted against its ingress port (and may pause the
    /// upstream).
    fn queued_lossless<S: EventSink>(
        &mut self,
        eg: &mut Egress<'_>,
        packet: &Packet,
        now: SimTime,
        sink: &mut S,
    ) {
        let Some(spec) = &eg.model.pfc else { return };
        let degree = eg.degree();
        let ing = self.pfc.get_or_insert_with(|| {
            Box::new(match spec.dynamic() {
                None => PfcIngress::new(degree),
                Some(dynamic) => PfcIngress::dynamic(dynamic.for_switch(&eg.model.net, eg.lp.node)),
            })
        });
        let (ingress, class) = (packet.ingress, packet.class());
        if ing.arrived(spec, ingress, class, packet.size_bytes) == Some(FrameRequest::Pause) {
            self.send_frame(eg, ingress as u32, class, true, now, sink);
        }
    }
}

impl SwitchState {
    /// Handles one event at this switch; returns whether it did something. (Never inlined:
    /// the event loop around it is then inlined whole, `benches/hop-cost`.)
    #[inline(never)]
    pub(super) fn handle(
        &mut self,
        event: Event,
        lp: &mut Lp,
        ports: &mut [PortState],
        model: &Model,
        sink: &mut impl EventSink,
    ) -> bool {
        let now = event.key.time;
        let mut eg = Egress::new(lp, ports, model);
        match event.kind {
            EventKind::PortReady { port, .. } => eg.ready(self, port, now, sink),
            EventKind::Arrive(packet) if packet.kind == PacketKind::Pause => {
                eg.frame_arrived(self, &packet, now, sink);
            }
            EventKind::Arrive(packet) => self.forward(&mut eg, packet, now, sink),
            // Transports run at hosts only: nothing at a switch sets a timer or starts a flow.
            EventKind::Timer { .. }
            | EventKind::FlowStart { .. }
            | EventKind::DependencyDone { .. }
            | EventKind::Program { .. } => return false,
        }
        true
    }

    /// Sends a PAUSE (or RESUME) frame for `class` on local port `local` and records it.
    fn send_frame(
        &mut self,
        eg: &mut Egress<'_>,
        local: u32,
        class: u8,
        pause: bool,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        self.pfc_events.push(PfcEvent {
            time_ps: now.0,
            node: eg.lp.node,
            port: eg.model.net.port_id(eg.lp.node, local),
            class,
            pause,
        });
        eg.send_frame(local, class, pause, now, sink);
    }

    /// Routes `packet` to an egress port and offers it there; a packet with no route is
    /// counted as misrouted.
    fn forward(
        &mut self,
        eg: &mut Egress<'_>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let model = eg.model;
        let local = if packet.explicit_path()
            || (model.failures.is_none() && model.balance.is_plain_ecmp())
        {
            model.egress_port(eg.lp.node, &packet)
        } else {
            self.balanced_port(eg, &packet, now)
        };
        let Some(local) = local else {
            eg.lp.counters.misrouted += 1;
            eg.lp.side_record_take(&packet);
            return;
        };
        eg.offer(self, local, packet, now, sink);
    }

    /// The egress port when load balancing is not plain ECMP or a failure schedule exists.
    #[inline(never)]
    fn balanced_port(&mut self, eg: &Egress<'_>, packet: &Packet, now: SimTime) -> Option<u32> {
        let (model, node) = (eg.model, eg.lp.node);
        let failures = model.failures.as_deref().filter(|f| f.rerouting(now));
        if model.balance.is_plain_ecmp() && failures.is_none() {
            // A failure schedule with every link up right now: the topology's own routing.
            return model.egress_port(node, packet);
        }
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
            _ => state.choose(
                &model.balance,
                &model.net,
                node,
                packet,
                now,
                model.seed,
                eg,
                |out| match failures {
                    Some(f) => f.next_hops(&model.net, node, packet.dst, now, out),
                    None => model.net.next_hops(node, packet.dst, out),
                },
            ),
        }
    }
}

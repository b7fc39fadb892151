//! Hosts: the transports of the flows a host sends and receives, its NIC (socket queues,
//! scheduler, backpressure: see [`crate::nic`]) and delivery of arriving packets.

use super::{Delivery, NodeState};
use crate::engine::Model;
use crate::engine::event::{EventKind, EventSink, Phase, TimerSide};
use crate::nic::{HostNic, Socket};
use crate::packet::{Packet, PacketKind};
use crate::telemetry::IntStack;
use crate::transport::{FlowEnds, Receiver, Sender};
use crate::units::SimTime;

impl NodeState {
    fn ends(model: &Model, flow: u32) -> FlowEnds {
        let spec = &model.flows.flows[flow as usize];
        FlowEnds {
            flow,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            seed: model.seed,
            line_rate_bps: model.net.class_of(model.net.port_id(spec.src, 0)).rate.0 as f64,
            base_rtt: SimTime::ZERO,
        }
    }

    /// `flow` starts here.
    pub(super) fn flow_start(
        &mut self,
        flow: u32,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let spec = &model.flows.flows[flow as usize];
        let slot = model.flows.src_slot[flow as usize] as usize;
        if self.senders.len() <= slot {
            self.senders.resize(slot + 1, None);
        }
        let mut ends = Self::ends(model, flow);
        if spec.transport.telemetry() {
            // HPCC's default T: the flow's own unloaded round trip (its route was checked at
            // load time).
            ends.base_rtt =
                crate::flow::base_rtt(&model.net, &model.flows, flow).unwrap_or(SimTime::ZERO);
        }
        self.senders[slot] = Some(Sender::start(&spec.transport, ends, now, &mut self.out));
        self.flush_transport(flow, TimerSide::Sender, now, model, sink);
    }

    /// A transport timer fired; returns whether it was live.
    pub(super) fn transport_timer(
        &mut self,
        flow: u32,
        token: u32,
        side: TimerSide,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) -> bool {
        let spec = &model.flows.flows[flow as usize];
        let live = match side {
            TimerSide::Sender => {
                let slot = model.flows.src_slot[flow as usize] as usize;
                match self.senders.get_mut(slot) {
                    Some(Some(sender)) => {
                        sender.on_timer(&spec.transport, token, now, &mut self.out)
                    }
                    _ => false,
                }
            }
            TimerSide::Receiver => {
                let slot = model.flows.dst_slot[flow as usize] as usize;
                match self.receivers.get_mut(slot) {
                    Some(Some(receiver)) => {
                        receiver.on_timer(&spec.transport, token, now, &mut self.out)
                    }
                    _ => false,
                }
            }
        };
        self.flush_transport(flow, side, now, model, sink);
        live
    }

    /// A packet arrived at this host.
    pub(super) fn host_receive(
        &mut self,
        packet: Packet,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if packet.dst != self.node {
            self.counters.misrouted += 1;
            self.telemetry_take(&packet);
            return;
        }
        let flow = packet.flow as usize;
        let spec = &model.flows.flows[flow];
        let side = match packet.kind {
            PacketKind::Data => {
                if model.record_deliveries {
                    self.deliveries.push(Delivery {
                        arrived_ps: now.0,
                        flow: packet.flow,
                        number: packet.number,
                        seq: packet.seq,
                        sent_ps: packet.sent_ps,
                        size_bytes: packet.size_bytes,
                    });
                }
                let slot = model.flows.dst_slot[flow] as usize;
                if self.receivers.len() <= slot {
                    self.receivers.resize(slot + 1, None);
                }
                let receiver = self.receivers[slot].get_or_insert_with(|| {
                    Receiver::new(&spec.transport, Self::ends(model, packet.flow))
                });
                receiver.on_data(&spec.transport, &packet, now, &mut self.out);
                if let Some(stack) = self.telemetry_take(&packet) {
                    self.echo_telemetry(stack);
                }
                TimerSide::Receiver
            }
            PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp | PacketKind::Notify => {
                let telemetry = self.telemetry_take(&packet);
                let slot = model.flows.src_slot[flow] as usize;
                if let Some(Some(sender)) = self.senders.get_mut(slot) {
                    sender.on_feedback(
                        &spec.transport,
                        &packet,
                        telemetry.as_deref(),
                        now,
                        &mut self.out,
                    );
                }
                TimerSide::Sender
            }
            // Link-level frames are consumed by the port that receives them; no host element
            // sends or honours them yet, so one reaching a host is counted as misrouted.
            PacketKind::Pause => {
                self.counters.misrouted += 1;
                return;
            }
        };
        self.flush_transport(packet.flow, side, now, model, sink);
    }

    /// The receiver answered a telemetry packet: its first feedback packet (ACK or NACK)
    /// carries the stack back to the sender (HPCC's ACK copies the data packet's INT header).
    /// With no feedback (a coalesced ACK, a NACK held back), the stack is discarded.
    #[inline(never)]
    fn echo_telemetry(&mut self, stack: Box<IntStack>) {
        if let Some(feedback) = self.out.packets.iter_mut().find(|p| p.kind.is_feedback()) {
            feedback.set(Packet::TELEMETRY, true);
            let id = feedback.id();
            self.telemetry_in(id, stack);
        }
    }

    /// Moves what a transport (of `flow`, on `side`) produced into its socket queue and the
    /// event queue, then lets the NIC admit what fits.
    fn flush_transport(
        &mut self,
        flow: u32,
        side: TimerSide,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if self.out.packets.is_empty() && self.out.timers.is_empty() {
            return;
        }
        let mut out = std::mem::take(&mut self.out);
        for (at, token) in out.timers.drain(..) {
            self.schedule_local(
                at,
                now,
                Phase::Timer,
                EventKind::Timer {
                    flow,
                    token,
                    side,
                    seq: 0,
                },
                sink,
            );
        }
        if !out.packets.is_empty() {
            let spec = &model.flows.flows[flow as usize];
            let (explicit, class) = (spec.path.is_some(), spec.class);
            let socket = match side {
                TimerSide::Sender => Socket::sender(model.flows.src_slot[flow as usize]),
                TimerSide::Receiver => Socket::receiver(model.flows.dst_slot[flow as usize]),
            };
            for mut packet in out.packets.drain(..) {
                packet.set(Packet::EXPLICIT_PATH, explicit);
                packet.set_class(class);
                let nic = self.nic.get_or_insert_with(Box::<HostNic>::default);
                if nic.try_admit_now(socket, &packet, &model.nic) {
                    // Fast path: nothing waits ahead of it and it fits both budgets.
                    self.nic_offer(packet, now, model, sink);
                } else {
                    nic.push(socket, packet, &model.nic);
                }
            }
            self.fill_nic(now, model, sink);
        }
        self.out = out;
    }

    /// Admits packets from the socket queues into the NIC's egress queue while they fit.
    pub(super) fn fill_nic(&mut self, now: SimTime, model: &Model, sink: &mut impl EventSink) {
        loop {
            let Some(nic) = self.nic.as_mut() else {
                return;
            };
            let Some((_, packet)) = nic.admit(&model.nic) else {
                return;
            };
            self.nic_offer(packet, now, model, sink);
        }
    }

    /// Offers an admitted packet to the NIC's egress queue (a host's only port: hosts have
    /// exactly one link, and every flow's route was checked when the scenario was loaded).
    #[inline]
    fn nic_offer(
        &mut self,
        mut packet: Packet,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if packet.kind == PacketKind::Data {
            // The send time a receiver echoes: when the segment entered the NIC (as a TCP
            // timestamp is taken when the segment is handed to the device queue).
            packet.sent_ps = now.0;
        }
        self.offer(0, packet, now, model, sink);
    }

    /// A packet of this host left its NIC queue (transmitted or dropped by the queue element).
    pub(super) fn nic_left(&mut self, packet: &Packet, model: &Model) {
        let flow = packet.flow as usize;
        let socket = if packet.kind == PacketKind::Data {
            Socket::sender(model.flows.src_slot[flow])
        } else {
            Socket::receiver(model.flows.dst_slot[flow])
        };
        if let Some(nic) = self.nic.as_mut() {
            nic.left(socket, packet, &model.nic);
        }
    }
}

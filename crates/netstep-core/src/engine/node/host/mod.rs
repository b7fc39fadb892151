//! Hosts: the transports of the flows a host sends and receives, a NIC in front of each of its
//! egress ports ([`super::nic`]: socket queues, admission, backpressure, the pulling NIC), flows
//! that wait for others ([`deps`]) and delivery of arriving packets. A flow's packets leave by
//! the port its route starts with ([`crate::flow::first_port`]: the data at the source, the
//! feedback at the destination), through that port's NIC.

mod deps;
mod program;

use std::collections::BTreeMap;

pub use deps::Waiting;
use program::Call;
pub use program::HostProgram;

use super::lp::{Delivery, Lp};
use super::nic::{Nic, QueuePairs, Socket};
use super::port::{Egress, PortState};
use crate::engine::event::{Event, EventKind, EventSink, TimerSide};
use crate::engine::model::Model;
use crate::nic::NicScheduler;
use crate::packet::{Packet, PacketKind};
use crate::telemetry::SideRecord;
use crate::transport::{FlowEnds, Receiver, Sender, TransportOut};
use crate::units::SimTime;

/// The state of a host: NICs and transports (its egress ports are in [`super::NodeState`]).
#[derive(Clone, Debug, Default)]
pub struct HostState {
    /// The NIC of port 0: socket queues and budgets, or the pulling NIC's turn order.
    pub nic: Nic,
    /// The NICs of ports 1 and on, of a host of several ports (grown as they are used; empty,
    /// without an allocation, at a host of one port).
    pub more_nics: Box<[Nic]>,
    /// Senders of flows sourced here, by source slot.
    pub senders: Vec<Option<Sender>>,
    /// Receivers of flows sinking here, by destination slot.
    pub receivers: Vec<Option<Receiver>>,
    /// Flows sourced here that wait for other flows and have heard of one finishing.
    pub waiting: BTreeMap<u32, Waiting>,
    /// The job rank running here, if any ([`crate::job`]): allocated by its first call, so a
    /// host of a run without a job keeps one word for it.
    pub program: Option<Box<HostProgram>>,
}

impl HostState {
    /// Handles one event at this host; returns whether it did something (a stale timer does
    /// not).
    pub(super) fn handle(
        &mut self,
        event: Event,
        lp: &mut Lp,
        ports: &mut [PortState],
        model: &Model,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) -> bool {
        let now = event.key.time;
        let mut eg = Egress::new(lp, ports, model);
        match event.kind {
            EventKind::PortReady { port, .. } => {
                eg.ready(self.nic_of(port), port, now, sink);
                self.fill_nic(&mut eg, port, now, sink, out);
                true
            }
            EventKind::Arrive(packet) if packet.kind == PacketKind::Pause => {
                let port = packet.ingress as u32;
                if eg.frame_arrived(self.nic_of(port), &packet, now, sink) {
                    self.fill_nic(&mut eg, port, now, sink, out);
                }
                true
            }
            EventKind::Arrive(packet) => {
                self.receive(&mut eg, packet, now, sink, out);
                true
            }
            EventKind::Timer {
                flow, token, side, ..
            } => self.timer(&mut eg, (flow, token, side), now, sink, out),
            EventKind::FlowStart { flow } => {
                self.flow_start(&mut eg, flow, now, sink, out);
                true
            }
            EventKind::DependencyDone { flow, .. } => {
                self.dependency_done(eg.lp, model, flow, now, sink);
                true
            }
            EventKind::Program { token } => {
                self.program(eg.lp, model, Call::Wake(token), now, sink);
                true
            }
        }
    }

    /// The NIC of local port `port`.
    #[inline]
    fn nic_of(&mut self, port: u32) -> &mut Nic {
        Self::pick(&mut self.nic, &mut self.more_nics, port)
    }

    /// Of a host's NICs (port 0's, the others'), the one of local port `port`, growing the
    /// others to hold it.
    #[inline]
    fn pick<'a>(nic: &'a mut Nic, more: &'a mut Box<[Nic]>, port: u32) -> &'a mut Nic {
        if port == 0 {
            return nic;
        }
        let i = port as usize - 1;
        if more.len() <= i {
            Self::grow(more, i + 1);
        }
        &mut more[i]
    }

    /// Grows the NICs of ports 1 and on to `len`.
    #[cold]
    #[inline(never)]
    fn grow(more: &mut Box<[Nic]>, len: usize) {
        let mut grown = std::mem::take(more).into_vec();
        grown.resize_with(len, Nic::default);
        *more = grown.into_boxed_slice();
    }

    fn ends(model: &Model, flow: u32) -> FlowEnds {
        let spec = &model.flows.flows[flow as usize];
        // The line rate of the port the flow's data leaves by (with every link up).
        let first = crate::flow::first_port(&model.net, &model.flows, flow, false);
        let port = model.net.port_id(spec.src, first);
        FlowEnds {
            flow,
            src: spec.src,
            dst: spec.dst,
            size: spec.size,
            seed: model.seed,
            line_rate_bps: model.net.class_of(port).rate.0 as f64,
            base_rtt: SimTime::ZERO,
            nic_pulls: model.nic.scheduler == NicScheduler::Pull,
        }
    }

    /// `flow` starts here.
    fn flow_start(
        &mut self,
        eg: &mut Egress<'_>,
        flow: u32,
        now: SimTime,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) {
        let model = eg.model;
        let spec = &model.flows.flows[flow as usize];
        if spec.size.0 == 0 {
            // A flow of no bytes sends nothing and never completes, as in the HPCC simulator
            // (its queue pair has no bytes left: the NIC skips it and no ACK ever ends it).
            return;
        }
        let slot = model.flows.src_slot[flow as usize] as usize;
        if self.senders.len() <= slot {
            // Room for every flow this host sources, once (no growth by doubling).
            let all = model.flows.sourced_at(spec.src) as usize;
            self.senders
                .reserve_exact(all.saturating_sub(self.senders.len()));
            self.senders.resize(slot + 1, None);
        }
        if model.job.as_ref().is_some_and(|j| j.owns(flow)) {
            self.job_flow_started(model.flows.sourced_at(spec.src), slot as u32, now);
        }
        let mut ends = Self::ends(model, flow);
        if spec.transport.telemetry() {
            // HPCC's default T: the flow's own unloaded round trip (its route was checked at
            // load time).
            ends.base_rtt =
                crate::flow::base_rtt(&model.net, &model.flows, flow).unwrap_or(SimTime::ZERO);
        }
        self.senders[slot] = Some(Sender::start(&spec.transport, ends, now, out));
        if ends.nic_pulls {
            // The simulator's NewQp: it joins the turn order and may send at once.
            // (On the NIC of the port it starts on, where it stays.)
            let port = model.host_port(spec.src, flow, false, now);
            self.nic_of(port).add_qp(flow);
        }
        self.flush_transport(eg, flow, TimerSide::Sender, now, sink, out);
    }

    /// A transport timer (of `flow`, with `token`, on `side`) fired; returns whether it was
    /// live.
    fn timer(
        &mut self,
        eg: &mut Egress<'_>,
        (flow, token, side): (u32, u32, TimerSide),
        now: SimTime,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) -> bool {
        let model = eg.model;
        let live = match side {
            TimerSide::Nic => {
                // The wake-up of the NIC of port `flow` ([`Nic`]'s timers name their port).
                let port = flow;
                let mut qps = QueuePairs {
                    senders: &mut self.senders,
                    out,
                };
                Self::pick(&mut self.nic, &mut self.more_nics, port)
                    .woke(eg, port, &mut qps, now, sink);
                return true;
            }
            TimerSide::Sender => {
                let slot = model.flows.src_slot[flow as usize] as usize;
                match self.senders.get_mut(slot) {
                    Some(Some(sender)) => {
                        let spec = &model.flows.flows[flow as usize];
                        sender.on_timer(&spec.transport, token, now, out)
                    }
                    _ => false,
                }
            }
            TimerSide::Receiver => {
                let slot = model.flows.dst_slot[flow as usize] as usize;
                match self.receivers.get_mut(slot) {
                    Some(Some(receiver)) => {
                        let spec = &model.flows.flows[flow as usize];
                        receiver.on_timer(&spec.transport, token, now, out)
                    }
                    _ => false,
                }
            }
        };
        self.flush_transport(eg, flow, side, now, sink, out);
        live
    }

    /// A packet arrived at this host.
    fn receive(
        &mut self,
        eg: &mut Egress<'_>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) {
        if packet.dst != eg.lp.node {
            eg.lp.counters.misrouted += 1;
            eg.lp.side_record_take(&packet);
            return;
        }
        let model = eg.model;
        let flow = packet.flow as usize;
        let spec = &model.flows.flows[flow];
        let side = match packet.kind {
            PacketKind::Data => {
                // A SYN opens a connection; it delivers no data.
                if model.record_deliveries && !packet.has(Packet::SYN) {
                    eg.lp.rare_mut().deliveries.push(Delivery {
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
                    // Room for every flow this host sinks, once (no growth by doubling).
                    let all = model.flows.sinking_at(spec.dst) as usize;
                    self.receivers
                        .reserve_exact(all.saturating_sub(self.receivers.len()));
                    self.receivers.resize(slot + 1, None);
                }
                let receiver = self.receivers[slot].get_or_insert_with(|| {
                    Receiver::new(&spec.transport, Self::ends(model, packet.flow))
                });
                let job_flow = model.job.as_ref().is_some_and(|j| j.owns(packet.flow));
                let awaited = (job_flow || !model.flows.dependents(packet.flow).is_empty())
                    && receiver.outcome().1.is_none();
                receiver.on_data(&spec.transport, &packet, now, out);
                if awaited && receiver.outcome().1.is_some() {
                    Self::notify_dependents(eg.lp, model, packet.flow, now, sink);
                    if job_flow {
                        self.program(eg.lp, model, Call::Arrived(packet.flow), now, sink);
                    }
                }
                if let Some(stack) = eg.lp.side_record_take(&packet) {
                    Self::echo_telemetry(eg.lp, stack, out);
                }
                TimerSide::Receiver
            }
            PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp | PacketKind::Notify => {
                let side = eg.lp.side_record_take(&packet);
                let slot = model.flows.src_slot[flow] as usize;
                if let Some(Some(sender)) = self.senders.get_mut(slot) {
                    sender.on_feedback(&spec.transport, &packet, side.as_deref(), now, out);
                }
                TimerSide::Sender
            }
            // PAUSE frames are handled before (`handle`); nothing else is link-level.
            PacketKind::Pause => unreachable!("PFC frames are applied by the port"),
        };
        self.flush_transport(eg, packet.flow, side, now, sink, out);
    }

    /// The receiver answered a telemetry packet: its first feedback packet (ACK or NACK)
    /// carries the stack back to the sender (HPCC's ACK copies the data packet's INT header).
    /// With no feedback (a coalesced ACK, a NACK held back), the stack is discarded.
    #[inline(never)]
    fn echo_telemetry(lp: &mut Lp, stack: Box<SideRecord>, out: &mut TransportOut) {
        if let Some(feedback) = out.packets.iter_mut().find(|p| p.kind.is_feedback()) {
            feedback.set(Packet::SIDE_RECORD, true);
            lp.side_record_in(feedback.id(), stack);
        }
    }

    /// Moves what a transport (of `flow`, on `side`) produced into its socket queue and the
    /// event queue, then lets the NIC admit what fits.
    fn flush_transport(
        &mut self,
        eg: &mut Egress<'_>,
        flow: u32,
        side: TimerSide,
        now: SimTime,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) {
        let had_packets = !out.packets.is_empty();
        let port = if eg.degree() == 1 {
            0
        } else {
            let reverse = side == TimerSide::Receiver;
            eg.model.host_port(eg.lp.node, flow, reverse, now)
        };
        for (index, record) in out.side.drain(..) {
            let packet = &mut out.packets[index];
            packet.set(Packet::SIDE_RECORD, true);
            eg.lp.side_record_in(packet.id(), record);
        }
        if had_packets || !out.timers.is_empty() {
            eg.lp
                .schedule_timers(flow, side, &mut out.timers, now, sink);
            let model = eg.model;
            let spec = &model.flows.flows[flow as usize];
            let socket = match side {
                TimerSide::Sender => Socket::sender(model.flows.src_slot[flow as usize]),
                TimerSide::Receiver => Socket::receiver(model.flows.dst_slot[flow as usize]),
                TimerSide::Nic => unreachable!("the NIC's wake-ups run no transport"),
            };
            self.nic_of(port)
                .send(eg, port, socket, spec, &mut out.packets, now, sink);
        }
        // A pulling NIC looks again after any transport call (an ACK may have opened a
        // window, a rate moved); the others when packets came.
        if had_packets || eg.model.nic.scheduler == NicScheduler::Pull {
            self.fill_nic(eg, port, now, sink, out);
        }
        // A sender that is done keeps only its counters (a run keeps no state per finished
        // flow beyond its outcome).
        if side == TimerSide::Sender {
            let model = eg.model;
            let slot = model.flows.src_slot[flow as usize] as usize;
            let finished = match self.senders.get_mut(slot) {
                Some(Some(sender)) => sender.finish_if_done(),
                _ => false,
            };
            if finished && model.job.as_ref().is_some_and(|j| j.owns(flow)) {
                self.program(eg.lp, model, Call::Sent(flow), now, sink);
            }
        }
    }

    /// Lets the NIC of local port `port` admit (or pull) what fits now.
    #[inline]
    fn fill_nic(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        now: SimTime,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) {
        let mut qps = QueuePairs {
            senders: &mut self.senders,
            out,
        };
        Self::pick(&mut self.nic, &mut self.more_nics, port).fill(eg, port, &mut qps, now, sink);
    }
}

//! Hosts: the transports of the flows a host sends and receives, its NIC (socket queues,
//! scheduler, backpressure: see [`crate::nic`]) in front of its one egress port, and delivery
//! of arriving packets.

use std::collections::BTreeMap;

use super::lp::{Delivery, Lp};
use super::port::{Egress, Owner, PortState};
use crate::engine::Model;
use crate::engine::event::{
    Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase, TimerSide,
};
use crate::flow::{FlowSpec, FlowTable};
use crate::nic::{HostNic, NicScheduler, QpState, Socket};
use crate::packet::{Packet, PacketKind};
use crate::queue::Entry;
use crate::shaping::TokenBucketSpec;
use crate::telemetry::IntStack;
use crate::transport::{FlowEnds, Receiver, Sender, TransportOut, TransportSpec};
use crate::units::SimTime;

/// The state of a host: NIC and transports (its egress port is in [`super::NodeState`]).
#[derive(Clone, Debug, Default)]
pub struct HostState {
    /// The NIC's socket queues (created with the first packet a transport sends).
    pub nic: Option<Box<HostNic>>,
    /// Senders of flows sourced here, by source slot.
    pub senders: Vec<Option<Sender>>,
    /// Receivers of flows sinking here, by destination slot.
    pub receivers: Vec<Option<Receiver>>,
    /// Flows sourced here that wait for other flows and have heard of one finishing.
    pub waiting: BTreeMap<u32, Waiting>,
    /// What the transport being called produced (reused buffer).
    out: TransportOut,
}

/// A flow waiting for other flows (see [`crate::flow::Dependencies`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Notices still to come.
    pub left: u32,
    /// When the latest notice came.
    pub last: SimTime,
    /// When the flow starts, once every notice came.
    pub start: Option<SimTime>,
}

/// A host's one port (hosts have exactly one link, and every flow's route was checked when
/// the scenario was loaded).
const NIC_PORT: u32 = 0;

impl Owner for HostState {
    const HOST: bool = true;
    #[inline]
    fn lossless(&self, _packet: &Packet, _model: &Model) -> bool {
        false
    }
    #[inline]
    fn own_shaper<'m>(&self, model: &'m Model) -> Option<&'m TokenBucketSpec> {
        model.nic.shaper.as_ref()
    }
    /// A packet of this host left its NIC queue (transmitted or dropped by the queue element):
    /// it leaves the NIC's budgets.
    #[inline]
    fn left<S: EventSink>(
        &mut self,
        eg: &mut Egress<'_>,
        entry: &Entry,
        _: bool,
        _: SimTime,
        _: &mut S,
    ) {
        let packet = &entry.packet;
        let flow = packet.flow as usize;
        let socket = if packet.kind == PacketKind::Data {
            Socket::sender(eg.model.flows.src_slot[flow])
        } else {
            Socket::receiver(eg.model.flows.dst_slot[flow])
        };
        if let Some(nic) = self.nic.as_mut() {
            nic.left(socket, packet, &eg.model.nic);
        }
    }
    fn queued_lossless<S: EventSink>(
        &mut self,
        _: &mut Egress<'_>,
        _: &Packet,
        _: SimTime,
        _: &mut S,
    ) {
    }
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
    ) -> bool {
        let now = event.key.time;
        let mut eg = Egress { lp, ports, model };
        match event.kind {
            EventKind::PortReady { port, .. } => {
                eg.ready(self, port, now, sink);
                self.fill_nic(&mut eg, now, sink);
                true
            }
            EventKind::Arrive(packet) if packet.kind == PacketKind::Pause => {
                if eg.frame_arrived(self, &packet, now, sink) {
                    self.fill_nic(&mut eg, now, sink);
                }
                true
            }
            EventKind::Arrive(packet) => {
                self.receive(&mut eg, packet, now, sink);
                true
            }
            EventKind::Timer {
                flow, token, side, ..
            } => self.timer(&mut eg, flow, token, side, now, sink),
            EventKind::FlowStart { flow } => {
                self.flow_start(&mut eg, flow, now, sink);
                true
            }
            EventKind::DependencyDone { flow, .. } => {
                self.dependency_done(eg.lp, model, flow, now, sink);
                true
            }
        }
    }

    /// When `flow` (sourced here) started and when the flows it waited for were all known
    /// finished, as far as this host knows.
    pub fn started(
        &self,
        flow: u32,
        spec: &FlowSpec,
        flows: &FlowTable,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let sender = self
            .senders
            .get(flows.src_slot[flow as usize] as usize)
            .is_some_and(Option::is_some);
        if spec.after.is_none() {
            return (sender.then_some(spec.start), None);
        }
        let waiting = self.waiting.get(&flow).filter(|w| w.left == 0);
        (
            waiting.and_then(|w| w.start).filter(|_| sender),
            waiting.map(|w| w.last),
        )
    }

    /// A flow `flow` waits for is known finished here; the last such notice schedules its
    /// start.
    fn dependency_done(
        &mut self,
        lp: &mut Lp,
        model: &Model,
        flow: u32,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let spec = &model.flows.flows[flow as usize];
        let Some(deps) = spec.after.as_ref() else {
            return;
        };
        let waiting = self.waiting.entry(flow).or_insert(Waiting {
            left: deps.flows.len() as u32,
            last: SimTime::ZERO,
            start: None,
        });
        waiting.left = waiting.left.saturating_sub(1);
        waiting.last = waiting.last.max(now);
        if waiting.left == 0 {
            let at = spec.start.max(SimTime(now.0.saturating_add(deps.delay.0)));
            waiting.start = Some(at);
            lp.schedule_local(
                at,
                now,
                Phase::FlowStart,
                EventKind::FlowStart { flow },
                sink,
            );
        }
    }

    /// `flow` finished here (its receiver has every byte): tells the flows waiting for it, at
    /// once when they start here, else after a notice's one-way latency to their source.
    #[inline(never)]
    fn notify_dependents(
        lp: &mut Lp,
        model: &Model,
        flow: u32,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let here = lp.node;
        for &waiting in model.flows.dependents(flow) {
            let src = model.flows.flows[waiting as usize].src;
            let kind = EventKind::DependencyDone {
                flow: waiting,
                dep: flow,
            };
            if src == here {
                lp.schedule_local(now, now, Phase::Dependency, kind, sink);
                continue;
            }
            // Routes between every waiting pair were checked when the flows were loaded.
            let Some(latency) = crate::flow::notify_latency(&model.net, here, src, waiting) else {
                continue;
            };
            let at = SimTime(now.0.saturating_add(latency.0));
            if at > MAX_EVENT_TIME {
                lp.overflowed(at);
                continue;
            }
            sink.remote(
                src,
                Event {
                    key: EventKey::new(at, Phase::Dependency, now),
                    kind,
                },
            );
        }
    }

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
    ) {
        let model = eg.model;
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
        if ends.nic_pulls {
            // The simulator's NewQp: it joins the turn order and may send at once.
            let nic = self.nic.get_or_insert_with(Box::<HostNic>::default);
            nic.add_qp(flow);
        }
        self.flush_transport(eg, flow, TimerSide::Sender, now, sink);
    }

    /// A transport timer fired; returns whether it was live.
    fn timer(
        &mut self,
        eg: &mut Egress<'_>,
        flow: u32,
        token: u32,
        side: TimerSide,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> bool {
        let model = eg.model;
        let spec = &model.flows.flows[flow as usize];
        let live = match side {
            TimerSide::Nic => {
                if let Some(nic) = self.nic.as_mut() {
                    nic.woke(now);
                }
                self.fill_nic(eg, now, sink);
                return true;
            }
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
        self.flush_transport(eg, flow, side, now, sink);
        live
    }

    /// A packet arrived at this host.
    fn receive(
        &mut self,
        eg: &mut Egress<'_>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if packet.dst != eg.lp.node {
            eg.lp.counters.misrouted += 1;
            eg.lp.telemetry_take(&packet);
            return;
        }
        let model = eg.model;
        let flow = packet.flow as usize;
        let spec = &model.flows.flows[flow];
        let side = match packet.kind {
            PacketKind::Data => {
                if model.record_deliveries {
                    eg.lp.deliveries.push(Delivery {
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
                let awaited = !model.flows.dependents(packet.flow).is_empty()
                    && receiver.outcome().1.is_none();
                receiver.on_data(&spec.transport, &packet, now, &mut self.out);
                if awaited && receiver.outcome().1.is_some() {
                    Self::notify_dependents(eg.lp, model, packet.flow, now, sink);
                }
                if let Some(stack) = eg.lp.telemetry_take(&packet) {
                    self.echo_telemetry(eg.lp, stack);
                }
                TimerSide::Receiver
            }
            PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp | PacketKind::Notify => {
                let telemetry = eg.lp.telemetry_take(&packet);
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
            // PAUSE frames are handled before (`handle`); nothing else is link-level.
            PacketKind::Pause => unreachable!("PFC frames are applied by the port"),
        };
        self.flush_transport(eg, packet.flow, side, now, sink);
    }

    /// The receiver answered a telemetry packet: its first feedback packet (ACK or NACK)
    /// carries the stack back to the sender (HPCC's ACK copies the data packet's INT header).
    /// With no feedback (a coalesced ACK, a NACK held back), the stack is discarded.
    #[inline(never)]
    fn echo_telemetry(&mut self, lp: &mut Lp, stack: Box<IntStack>) {
        if let Some(feedback) = self.out.packets.iter_mut().find(|p| p.kind.is_feedback()) {
            feedback.set(Packet::TELEMETRY, true);
            lp.telemetry_in(feedback.id(), stack);
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
    ) {
        let had_packets = !self.out.packets.is_empty();
        if had_packets || !self.out.timers.is_empty() {
            let mut out = std::mem::take(&mut self.out);
            Self::schedule_timers(eg.lp, flow, side, &mut out.timers, now, sink);
            let model = eg.model;
            let spec = &model.flows.flows[flow as usize];
            let socket = match side {
                TimerSide::Sender => Socket::sender(model.flows.src_slot[flow as usize]),
                TimerSide::Receiver => Socket::receiver(model.flows.dst_slot[flow as usize]),
                TimerSide::Nic => unreachable!("the NIC's wake-ups run no transport"),
            };
            for mut packet in out.packets.drain(..) {
                Self::stamp(spec, &mut packet);
                let nic = self.nic.get_or_insert_with(Box::<HostNic>::default);
                if nic.try_admit_now(socket, &packet, &model.nic) {
                    // Fast path: nothing waits ahead of it and it fits both budgets.
                    self.nic_offer(eg, packet, now, sink);
                } else {
                    nic.push(socket, packet, &model.nic);
                }
            }
            self.out = out;
        }
        // A pulling NIC looks again after any transport call (an ACK may have opened a
        // window, a rate moved); the others when packets came.
        if had_packets || eg.model.nic.scheduler == NicScheduler::Pull {
            self.fill_nic(eg, now, sink);
        }
    }

    /// Schedules the timers a transport of `flow` (on `side`) asked for.
    fn schedule_timers(
        lp: &mut Lp,
        flow: u32,
        side: TimerSide,
        timers: &mut Vec<(SimTime, u32)>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        for (at, token) in timers.drain(..) {
            let kind = EventKind::Timer {
                flow,
                token,
                side,
                seq: 0,
            };
            lp.schedule_local(at, now, Phase::Timer, kind, sink);
        }
    }

    /// Stamps a packet a transport of the flow `spec` produced with the flow's explicit-path
    /// flag and traffic class.
    #[inline]
    fn stamp(spec: &FlowSpec, packet: &mut Packet) {
        packet.set(Packet::EXPLICIT_PATH, spec.path.is_some());
        packet.set_class(spec.class);
    }

    /// Admits packets from the socket queues into the NIC's egress queue while they fit.
    fn fill_nic(&mut self, eg: &mut Egress<'_>, now: SimTime, sink: &mut impl EventSink) {
        if eg.model.nic.scheduler == NicScheduler::Pull {
            self.pull_nic(eg, now, sink);
            return;
        }
        loop {
            let Some(nic) = self.nic.as_mut() else {
                return;
            };
            let Some((_, packet)) = nic.admit(&eg.model.nic) else {
                return;
            };
            self.nic_offer(eg, packet, now, sink);
        }
    }

    /// The pulling NIC ([`NicScheduler::Pull`], the HPCC simulator's `DequeueAndTransmit`):
    /// when the link is free, the oldest feedback packet, else one packet pulled from the
    /// next queue pair that may send ([`HostNic::select_qp`]); otherwise a wake-up when the
    /// link frees or the earliest queue pair's pacing allows.
    fn pull_nic(&mut self, eg: &mut Egress<'_>, now: SimTime, sink: &mut impl EventSink) {
        let Some(nic) = self.nic.as_mut() else {
            return;
        };
        let port = &eg.ports[NIC_PORT as usize];
        if port.queue_len() > 0 || port.held() {
            // A packet of a paused class, or one the shaper holds: the port's own wake-up
            // (or the RESUME) comes back here.
            return;
        }
        let model = eg.model;
        let paused = port.paused;
        if port.busy_until > now {
            // Look again when the link frees, if anything may want it then.
            let busy_until = port.busy_until;
            if nic.wakes_by(busy_until) {
                return;
            }
            let senders = &mut self.senders;
            let waiting = nic.has_feedback()
                || nic.any_ready(paused, |flow| Self::qp_state(senders, model, flow));
            if waiting {
                Self::wake_nic(nic, eg, busy_until, now, sink);
            }
            return;
        }
        if let Some(packet) = nic.pop_feedback(paused) {
            self.nic_offer(eg, packet, now, sink);
            self.pull_nic(eg, now, sink);
            return;
        }
        let senders = &mut self.senders;
        let Some(flow) = nic.select_qp(now, paused, |flow| Self::qp_state(senders, model, flow))
        else {
            if let Some(at) =
                nic.next_ready(now, paused, |flow| Self::qp_state(senders, model, flow))
            {
                Self::wake_nic(nic, eg, at, now, sink);
            }
            return;
        };
        let spec = &model.flows.flows[flow as usize];
        let slot = model.flows.src_slot[flow as usize] as usize;
        let mut out = std::mem::take(&mut self.out);
        if let (Some(Some(Sender::Rdma(sender))), TransportSpec::Rdma(rdma)) =
            (self.senders.get_mut(slot), &*spec.transport)
        {
            sender.pull(rdma, now, &mut out);
        }
        Self::schedule_timers(eg.lp, flow, TimerSide::Sender, &mut out.timers, now, sink);
        for mut packet in out.packets.drain(..) {
            Self::stamp(spec, &mut packet);
            self.nic_offer(eg, packet, now, sink);
        }
        self.out = out;
        // The link is busy now: look again when it frees.
        self.pull_nic(eg, now, sink);
    }

    /// The state of `flow`'s queue pair for the pulling NIC.
    fn qp_state(senders: &mut [Option<Sender>], model: &Model, flow: u32) -> QpState {
        let spec = &model.flows.flows[flow as usize];
        let slot = model.flows.src_slot[flow as usize] as usize;
        match (senders.get_mut(slot), &*spec.transport) {
            (Some(Some(Sender::Rdma(sender))), TransportSpec::Rdma(rdma)) => {
                sender.qp_state(rdma, spec.class)
            }
            _ => QpState::Finished,
        }
    }

    /// Schedules the pulling NIC's wake-up at `at` unless one at or before it is pending.
    fn wake_nic(
        nic: &mut HostNic,
        eg: &mut Egress<'_>,
        at: SimTime,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if nic.want_wake(at) {
            let kind = EventKind::Timer {
                flow: 0,
                token: 0,
                side: TimerSide::Nic,
                seq: 0,
            };
            eg.lp.schedule_local(at, now, Phase::Timer, kind, sink);
        }
    }

    /// Offers an admitted packet to the host's egress port.
    #[inline]
    fn nic_offer(
        &mut self,
        eg: &mut Egress<'_>,
        mut packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if packet.kind == PacketKind::Data {
            // The send time a receiver echoes: when the segment entered the NIC (as a TCP
            // timestamp is taken when the segment is handed to the device queue).
            packet.sent_ps = now.0;
        }
        eg.offer(self, NIC_PORT, packet, now, sink);
    }
}

//! The host NIC, in one place: what stands between a host's transports and one of its egress
//! ports ([`crate::nic`] describes the model and holds its settings). A host of several ports
//! has one NIC per port, each with its own socket queues, budgets and turn order; a flow's
//! packets go to the NIC of the port its route leaves by ([`crate::flow::first_port`]).
//!
//! A transmission goes host → NIC → port: the host hands what a transport produced to
//! [`Nic::send`], which stamps each packet with its flow's path flag and traffic class, admits
//! it into the egress queue at once when nothing waits ahead of it and it fits the budgets,
//! or keeps it in its socket queue ([`sockets`]); [`Nic::fill`] admits from the socket
//! queues while packets fit. The port calls back into the NIC only as the port's
//! [`Owner`]: a packet that leaves the egress queue leaves the budgets.
//!
//! The pulling NIC ([`NicScheduler::Pull`], [`pull`]) keeps no egress FIFO: when the link
//! frees it sends the oldest feedback packet, else asks the next RDMA sender whose turn it is
//! ([`QueuePairs`]) for one packet, and otherwise schedules its own wake-up (a
//! [`TimerSide::Nic`] timer) for when the link frees or the earliest queue pair's pacing
//! allows. It asks the port through [`Egress`] (what waits, what is paused, when it frees),
//! never reading the port's state.

mod pull;
mod sockets;
#[cfg(test)]
mod tests;

use super::port::{Egress, Owner};
use crate::engine::event::{EventKind, EventSink, Phase, TimerSide};
use crate::engine::model::Model;
use crate::flow::FlowSpec;
use crate::nic::{NicScheduler, QpState};
use crate::packet::{Packet, PacketKind};
use crate::queue::Entry;
use crate::shaping::TokenBucketSpec;
use crate::transport::{Sender, TransportOut, TransportSpec};
use crate::units::SimTime;
use sockets::HostNic;
pub(super) use sockets::Socket;

/// A host's NIC: its socket queues and budgets, or the pulling NIC's turn order and feedback
/// queue (allocated with the first packet a transport sends or the first queue pair).
#[derive(Clone, Debug, Default)]
pub struct Nic {
    state: Option<Box<HostNic>>,
}

/// The host's RDMA senders as the pulling NIC's queue pairs, and the buffer a pulled sender
/// writes its packet and timers into.
pub(super) struct QueuePairs<'a> {
    /// Senders of the flows sourced at the host, by source slot.
    pub senders: &'a mut [Option<Sender>],
    /// What the pulled sender produced (emptied by the NIC).
    pub out: &'a mut TransportOut,
}

/// The socket of `packet` at the host sending it: the flow's sending side for data, its
/// receiving side for feedback.
#[inline]
fn socket_of(packet: &Packet, model: &Model) -> Socket {
    let flow = packet.flow as usize;
    if packet.kind == PacketKind::Data {
        Socket::sender(model.flows.src_slot[flow])
    } else {
        Socket::receiver(model.flows.dst_slot[flow])
    }
}

/// Stamps a packet a transport of the flow `spec` produced with the flow's explicit-path flag
/// and traffic class.
#[inline]
fn stamp(spec: &FlowSpec, packet: &mut Packet) {
    packet.set(Packet::EXPLICIT_PATH, spec.path.is_some());
    packet.set_class(spec.class);
}

impl Owner for Nic {
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
        let socket = socket_of(packet, eg.model);
        if let Some(nic) = self.state.as_mut() {
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

impl Nic {
    /// The pulling NIC: the RDMA sender of `flow` started and joins the turn order (the
    /// simulator's `NewQp`).
    pub(super) fn add_qp(&mut self, flow: u32) {
        let nic = self.state.get_or_insert_with(Box::<HostNic>::default);
        nic.add_qp(flow);
    }

    /// A transport of the flow `spec` produced `packets` on `socket` at `now`, for this NIC's
    /// port `port`: each is stamped and admitted at once when nothing of the NIC waits and it
    /// fits the budgets, otherwise kept in its socket queue. Empties `packets`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn send(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        socket: Socket,
        spec: &FlowSpec,
        packets: &mut Vec<Packet>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let model = eg.model;
        let config = &model.nic;
        for mut packet in packets.drain(..) {
            stamp(spec, &mut packet);
            let nic = self.state.get_or_insert_with(Box::<HostNic>::default);
            if nic.try_admit_now(socket, &packet, config) {
                // Fast path: nothing waits ahead of it and it fits both budgets.
                self.offer(eg, port, packet, now, sink);
            } else {
                nic.push(socket, packet, config);
            }
        }
    }

    /// Admits packets from the socket queues into the egress queue of its port `port` while
    /// they fit (the pulling NIC: sends while the link is free, [`Nic::pull`]).
    pub(super) fn fill(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        qps: &mut QueuePairs<'_>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if eg.model.nic.scheduler == NicScheduler::Pull {
            self.pull(eg, port, qps, now, sink);
            return;
        }
        loop {
            let Some(nic) = self.state.as_mut() else {
                return;
            };
            let Some((_, packet)) = nic.admit(&eg.model.nic) else {
                return;
            };
            self.offer(eg, port, packet, now, sink);
        }
    }

    /// The pulling NIC's wake-up fired at `now`: it looks again.
    pub(super) fn woke(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        qps: &mut QueuePairs<'_>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if let Some(nic) = self.state.as_mut() {
            nic.woke(now);
        }
        self.fill(eg, port, qps, now, sink);
    }

    /// The pulling NIC ([`NicScheduler::Pull`], the HPCC simulator's `DequeueAndTransmit`):
    /// when the link is free, the oldest feedback packet, else one packet pulled from the
    /// next queue pair that may send ([`HostNic::select_qp`]); otherwise a wake-up when the
    /// link frees or the earliest queue pair's pacing allows.
    fn pull(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        qps: &mut QueuePairs<'_>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let Some(nic) = self.state.as_mut() else {
            return;
        };
        if eg.backlogged(port) {
            // A packet of a paused class, or one the shaper holds: the port's own wake-up
            // (or the RESUME) comes back here.
            return;
        }
        let model = eg.model;
        let paused = eg.paused(port);
        let free_at = eg.free_at(port);
        if free_at > now {
            // Look again when the link frees, if anything may want it then.
            if nic.wakes_by(free_at) {
                return;
            }
            let senders = &mut *qps.senders;
            let waiting = nic.has_feedback()
                || nic.any_ready(paused, |flow| QueuePairs::state(senders, model, flow));
            if waiting {
                Self::wake(nic, eg, port, free_at, now, sink);
            }
            return;
        }
        if let Some(packet) = nic.pop_feedback(paused) {
            self.offer(eg, port, packet, now, sink);
            self.pull(eg, port, qps, now, sink);
            return;
        }
        let senders = &mut *qps.senders;
        let Some(flow) = nic.select_qp(now, paused, |flow| QueuePairs::state(senders, model, flow))
        else {
            if let Some(at) =
                nic.next_ready(now, paused, |flow| QueuePairs::state(senders, model, flow))
            {
                Self::wake(nic, eg, port, at, now, sink);
            }
            return;
        };
        let spec = qps.pull(model, flow, now);
        eg.lp
            .schedule_timers(flow, TimerSide::Sender, &mut qps.out.timers, now, sink);
        for mut packet in qps.out.packets.drain(..) {
            stamp(spec, &mut packet);
            self.offer(eg, port, packet, now, sink);
        }
        // The link is busy now: look again when it frees.
        self.pull(eg, port, qps, now, sink);
    }

    /// Schedules the pulling NIC's wake-up at `at` unless one at or before it is pending (a
    /// [`TimerSide::Nic`] timer whose `flow` field names the NIC's port).
    fn wake(
        nic: &mut HostNic,
        eg: &mut Egress<'_>,
        port: u32,
        at: SimTime,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if nic.want_wake(at) {
            let kind = EventKind::Timer {
                flow: port,
                token: 0,
                side: TimerSide::Nic,
                seq: 0,
            };
            eg.lp.schedule_local(at, now, Phase::Timer, kind, sink);
        }
    }

    /// Offers an admitted packet to the host's egress port `port` (this NIC's).
    #[inline]
    fn offer(
        &mut self,
        eg: &mut Egress<'_>,
        port: u32,
        mut packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        if packet.kind == PacketKind::Data {
            // The send time a receiver echoes: when the segment entered the NIC (as a TCP
            // timestamp is taken when the segment is handed to the device queue).
            packet.sent_ps = now.0;
        }
        eg.offer(self, port, packet, now, sink);
    }
}

impl QueuePairs<'_> {
    /// The state of `flow`'s queue pair.
    fn state(senders: &mut [Option<Sender>], model: &Model, flow: u32) -> QpState {
        let spec = &model.flows.flows[flow as usize];
        let slot = model.flows.src_slot[flow as usize] as usize;
        match (senders.get_mut(slot), &*spec.transport) {
            (Some(Some(Sender::Rdma(sender))), TransportSpec::Rdma(rdma)) => {
                sender.qp_state(rdma, spec.class)
            }
            _ => QpState::Finished,
        }
    }

    /// Asks `flow`'s sender for its packet at `now` (into [`QueuePairs::out`]); returns the
    /// flow's spec.
    fn pull<'m>(&mut self, model: &'m Model, flow: u32, now: SimTime) -> &'m FlowSpec {
        let spec = &model.flows.flows[flow as usize];
        let slot = model.flows.src_slot[flow as usize] as usize;
        if let (Some(Some(Sender::Rdma(sender))), TransportSpec::Rdma(rdma)) =
            (self.senders.get_mut(slot), &*spec.transport)
        {
            sender.pull(rdma, now, self.out);
        }
        spec
    }
}

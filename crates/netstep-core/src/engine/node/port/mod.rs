//! Egress ports as an explicit pipeline, one stage per file, each borrowing only what it reads
//! and writes:
//!
//! ```text
//! offer ─► admission ─► queueing ─► shaper ─► transmitter ─► link (the far end's Arrive)
//!          (limit,      (scheduler, (token    (serialization, loss,
//!           policer)     AQM, the    bucket)   hop record, telemetry)
//!                        empty-queue
//!                        shortcut)
//!                         control: PFC frames, ahead of the queue ─┘
//! ```
//!
//! [`Egress`] drives a packet through the stages of one port of one node; the node that owns
//! the port adds what differs between hosts and switches through [`Owner`] (a host's NIC is
//! told when its packets leave; a switch counts lossless packets for PFC and sends frames).
//! The transmitter is idle or busy; while packets (or PFC frames) wait, one `PortReady` event
//! is kept pending at the time it frees ([`Egress::ready`]).

mod admission;
mod batch;
mod control;
mod owner;
mod queueing;
mod shaper;
mod state;
#[cfg(test)]
mod tests;
mod transmitter;
mod view;

pub(super) use owner::{Owner, PortRef};
pub use state::{PortCold, PortState};

use super::lp::Lp;
use crate::engine::event::{EventKind, EventSink, Phase};
use crate::engine::model::Model;
use crate::engine::trace::DropReason as TraceDrop;
use crate::packet::Packet;
use crate::queue::{Admission, DropReason, Entry};
use crate::shaping::TokenBucketSpec;
use crate::units::SimTime;
use shaper::Gate;

/// A queue marked a packet of `flow`: counted on the port and on the flow.
#[inline]
fn count_mark(cold: &mut state::PortCold, lp: &mut Lp, flow: u32) {
    cold.ecn_marks += 1;
    *lp.rare_mut().flow_marks.entry(flow).or_insert(0) += 1;
}

/// The egress side of one node while it handles an event: its ports and the LP bookkeeping
/// they write (counters, hop records, telemetry, its own events).
pub(super) struct Egress<'a> {
    /// The LP's bookkeeping.
    pub lp: &'a mut Lp,
    /// The node's egress ports (asked through [`Egress`]'s methods only).
    ports: &'a mut [PortState],
    /// The model.
    pub model: &'a Model,
}

impl<'a> Egress<'a> {
    /// The egress side of the node with bookkeeping `lp` and egress ports `ports`.
    #[inline]
    pub(super) fn new(lp: &'a mut Lp, ports: &'a mut [PortState], model: &'a Model) -> Self {
        Egress { lp, ports, model }
    }

    /// Local port `local` of this node.
    #[inline]
    fn port_ref(&self, local: u32) -> PortRef<'a> {
        let model: &'a Model = self.model;
        let global = model.net.port_id(self.lp.node, local);
        PortRef {
            local,
            global,
            class: model.net.class_of(global),
        }
    }

    /// Offers `packet` to egress port `local` at `now`. Returns `false` if the policer or the
    /// queue element refused it.
    #[inline]
    pub(super) fn offer<O: Owner>(
        &mut self,
        owner: &mut O,
        local: u32,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> bool {
        let at = self.port_ref(local);
        if !O::HOST && self.model.ack_priority && packet.kind.is_acknowledgement() {
            self.offer_priority(&at, packet, now, sink);
            return true;
        }
        let eligible = self.model.net.skips_empty_queue(at.global, O::HOST);
        if queueing::skips(&self.ports[local as usize], now, eligible, packet.class()) {
            let traced = self.lp.traced(&packet, now, self.model);
            let entry = Entry::with_nothing_ahead(packet, now, traced, false);
            self.depart(owner, &at, entry, now, sink);
            return true;
        }
        self.offer_to_queue(owner, &at, packet, now, sink)
    }

    /// [`Egress::offer`] when the queue element must decide.
    fn offer_to_queue<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        packet: Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> bool {
        let model = self.model;
        let lossless = owner.lossless(&packet, model);
        if lossless
            && model.net.skips_counting(at.global)
            && queueing::skips(&self.ports[at.local as usize], now, true, packet.class())
        {
            return self.pass_counted(owner, at, packet, now, sink);
        }
        let shared = model.shared_buffer.as_ref();
        let limit = admission::limit(O::HOST || lossless, at.class, shared, self.ports);
        let traced = self.lp.traced(&packet, now, model);
        let port = &mut self.ports[at.local as usize];
        let (idle, paused) = (port.idle(now), port.paused);
        let ahead = batch::waiting(port, now);
        let entry = Entry {
            packet,
            arrived_ps: now.0,
            ahead_bytes: port.queue_bytes() + ahead.1,
            ahead_packets: port.queue_len() as u32 + ahead.0,
            traced,
            pfc: lossless,
            marked: false,
        };
        let cold = port.cold_mut(at.class);
        if !O::HOST
            && let Some(spec) = &at.class.policer
            && !admission::police(cold, spec, now, packet.size_bytes)
        {
            self.drop_entry(owner, at, &entry, DropReason::Policed, now, sink);
            return false;
        }
        if !(O::HOST || lossless || admission::has_room(model.admission_room, limit, &entry)) {
            self.drop_entry(owner, at, &entry, DropReason::BufferFull, now, sink);
            return false;
        }
        let limit = batch::narrow(limit, ahead);
        let (admission, mut now_sending) =
            queueing::offer(cold, at, entry, idle, paused, limit, now, model.seed);
        let accepted = match admission {
            Admission::Accepted => true,
            Admission::AcceptedMarked => {
                count_mark(cold, self.lp, packet.flow);
                true
            }
            Admission::Dropped(dropped, reason) => {
                self.drop_entry(owner, at, &dropped, reason, now, sink);
                false
            }
            Admission::AcceptedDroppedOther(dropped, reason) => {
                self.drop_entry(owner, at, &dropped, reason, now, sink);
                true
            }
        };
        if accepted && lossless {
            match now_sending.as_mut() {
                // It leaves at once: it never waited, so static thresholds do not count it.
                Some(e)
                    if e.packet.id() == packet.id()
                        && e.packet.kind == packet.kind
                        && model.pfc.is_some_and(|p| p.dynamic().is_none()) =>
                {
                    e.pfc = false
                }
                _ => owner.queued_lossless(self, &packet, now, sink),
            }
        }
        if let Some(next) = now_sending {
            self.send_or_hold(owner, at, next, now, sink);
        } else if let Some(cold) = self.ports[at.local as usize].cold.as_mut() {
            queueing::record_peak(cold, ahead);
        }
        self.wake_if_waiting(at.local, now, sink);
        accepted
    }

    /// The transmitter of `local` is free: PFC frames first, then the packet the shaper
    /// held, then the queue's next packet.
    pub(super) fn ready<O: Owner>(
        &mut self,
        owner: &mut O,
        local: u32,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let at = self.port_ref(local);
        let port = &mut self.ports[local as usize];
        port.wake_pending = false;
        let paused = port.paused;
        let Some(cold) = port.cold.as_mut() else {
            return;
        };
        if let Some(frame) = control::pop(cold) {
            transmitter::transmit(self.lp, port, &at, frame, !O::HOST, now, self.model, sink);
        } else if let Some(held) = cold.held.take() {
            // The shaper's wake-up: the held packet conforms now.
            self.send_or_hold(owner, &at, held, now, sink);
        } else if let Some(next) = queueing::next(cold, &at, paused, now, self.model.seed) {
            self.send_or_hold(owner, &at, next, now, sink);
            let last = self.send_ahead(owner, &at, now, sink);
            // As the per-event path schedules it: by the last packet that left.
            self.wake_if_waiting(local, last, sink);
            return;
        } else {
            return;
        }
        self.wake_if_waiting(local, now, sink);
    }

    /// Sends a PAUSE (or RESUME) frame for `class` on local port `local`, ahead of the queue.
    pub(super) fn send_frame(
        &mut self,
        local: u32,
        class: u8,
        pause: bool,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let at = self.port_ref(local);
        let peer = self.model.net.port_peer[at.global as usize];
        let frame = control::frame(class, pause, peer, now);
        let port = &mut self.ports[local as usize];
        if port.idle(now) {
            // Only switches send frames: no telemetry to stamp on them either way.
            transmitter::transmit(self.lp, port, &at, frame, false, now, self.model, sink);
            return;
        }
        control::push(port.cold_mut(at.class), frame);
        self.wake_if_waiting(local, now, sink);
    }

    /// A PAUSE or RESUME frame arrived on the link of local port `packet.ingress`: pauses or
    /// resumes that class on the port towards its sender (restarting it if it is idle with
    /// packets waiting). Returns `true` for a RESUME.
    pub(super) fn frame_arrived<O: Owner>(
        &mut self,
        owner: &mut O,
        packet: &Packet,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> bool {
        let local = packet.ingress as u32;
        let port = &mut self.ports[local as usize];
        if !control::apply(port, packet) {
            return false;
        }
        if port.idle(now) && port.queue_len() > 0 {
            self.ready(owner, local, now, sink);
        }
        true
    }

    /// Starts `entry` now if the port's shaper (if any) lets it, else holds it and wakes the
    /// port when it conforms.
    #[inline]
    fn send_or_hold<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        entry: Entry,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        match owner.own_shaper(self.model).or(at.class.shaper.as_ref()) {
            Some(spec) => self.shape(owner, at, entry, spec, now, sink),
            None => self.depart(owner, at, entry, now, sink),
        }
    }

    /// [`Egress::send_or_hold`] on a shaped port.
    #[inline(never)]
    fn shape<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        entry: Entry,
        spec: &TokenBucketSpec,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let cold = self.ports[at.local as usize].cold_mut(at.class);
        match shaper::gate(cold, spec, entry, now) {
            Gate::Go(entry) => self.depart(owner, at, entry, now, sink),
            Gate::Held(when) => self.wake_at(at.local, when, now, sink),
            Gate::Overflow(when) => self.lp.overflowed(when),
        }
    }

    /// `entry` leaves the queue for the transmitter: the owner is told, then it is sent.
    #[inline]
    fn depart<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        entry: Entry,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        owner.left(self, &entry, true, now, sink);
        let port = &mut self.ports[at.local as usize];
        if entry.marked {
            // Marked by the queue as it left (marking at dequeue).
            count_mark(port.cold_mut(at.class), self.lp, entry.packet.flow);
        }
        transmitter::transmit(self.lp, port, at, entry, !O::HOST, now, self.model, sink);
    }

    /// The policer or the queue element dropped `entry`.
    fn drop_entry<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        entry: &Entry,
        reason: DropReason,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        self.ports[at.local as usize].cold_mut(at.class).drops += 1;
        self.lp.count_drop(Some(entry.packet.flow));
        let reason = match reason {
            DropReason::BufferFull => TraceDrop::BufferFull,
            DropReason::Early => TraceDrop::Early,
            DropReason::Policed => TraceDrop::Policed,
        };
        self.lp.record_hop(entry, at.global, None, Some(reason));
        owner.left(self, entry, false, now, sink);
        self.lp.side_record_take(&entry.packet);
    }

    /// Keeps one `PortReady` pending, at the time the transmitter frees, while packets (or
    /// PFC frames) wait.
    fn wake_if_waiting(&mut self, local: u32, now: SimTime, sink: &mut impl EventSink) {
        let port = &self.ports[local as usize];
        if !port.wake_pending && (port.queue_len() > 0 || port.has_control()) {
            let at = port.busy_until.max(now);
            self.wake_at(local, at, now, sink);
        }
    }

    /// Schedules the one pending `PortReady` of `local` at `at`.
    fn wake_at(&mut self, local: u32, at: SimTime, now: SimTime, sink: &mut impl EventSink) {
        self.ports[local as usize].wake_pending = true;
        let kind = EventKind::PortReady {
            port: local,
            seq: 0,
        };
        self.lp
            .schedule_local(at, now, Phase::PortReady, kind, sink);
    }
}

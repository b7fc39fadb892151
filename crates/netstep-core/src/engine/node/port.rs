//! Egress ports: admission into the queue element, scheduling of the transmitter and
//! transmission onto the link.
//!
//! Every packet goes through the queue (no idle bypass): it is offered with
//! [`crate::queue::Queue::enqueue`]; if the transmitter is idle and no wake-up is pending, the
//! queue is asked at once for the packet to send ([`crate::queue::Queue::dequeue`]), otherwise
//! one `PortReady` event is kept pending at the time the transmitter frees. A transmission
//! emits the packet's arrival at the far end (serialization + propagation later) at once, so
//! the lookahead includes the serialization of the smallest packet.

use rand_pcg::Pcg64Mcg;

use super::NodeState;
use super::link::lost_on_wire;
use crate::engine::Model;
use crate::engine::event::{Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase};
use crate::engine::trace::DropReason as TraceDrop;
use crate::packet::{Packet, PacketKind};
use crate::pfc::{FRAME_BYTES, FrameRequest, PfcEvent, PfcIngress};
use crate::queue::{Admission, DropReason, Entry, Queue, QueueCtx};
use crate::rng::{LazyStream, STREAM_QUEUE};
use crate::shaping::{Color, TokenBucket, TokenBucketSpec, TrTcm};
use crate::telemetry::IntHop;
use crate::topology::LinkClass;
use crate::units::{BufferSize, Bytes, SimTime};

/// Dynamic state of one egress port: the transmitter (hot, 40 bytes) and, once the port has
/// ever held a waiting packet, dropped or lost one, or runs a discipline that keeps state even
/// when empty, its cold part (allocated on first need). A packet that finds the transmitter
/// idle and a FIFO empty touches only the hot part.
#[derive(Clone, Debug, Default)]
pub struct PortState {
    /// The transmitter is busy until this time.
    pub busy_until: SimTime,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// A `PortReady` event is pending.
    pub wake_pending: bool,
    /// Classes paused by the downstream node's PFC (bit `c` for class `c`).
    pub paused: u8,
    /// The queue element and the rarely used counters.
    pub cold: Option<Box<PortCold>>,
}

/// The part of a port that queueing, drops and losses touch.
#[derive(Clone, Debug, Default)]
pub struct PortCold {
    /// The queue element.
    pub queue: Queue,
    /// Packets dropped at this port (by the queue element).
    pub drops: u64,
    /// Packets lost on the wire (random link loss).
    pub lost: u64,
    /// Packets marked CE by the queue element.
    pub ecn_marks: u64,
    /// Largest number of waiting packets seen.
    pub max_queue_packets: u64,
    /// Largest number of waiting bytes seen.
    pub max_queue_bytes: u64,
    /// The queue element's random stream (created on its first draw).
    queue_rng: Option<Box<Pcg64Mcg>>,
    /// The link's loss stream (created on the first draw of a lossy link).
    loss_rng: Option<Box<Pcg64Mcg>>,
    /// Token-bucket shaper state (shaped ports).
    shaper: Option<TokenBucket>,
    /// The packet the shaper holds until it conforms (the transmitter waits for it).
    held: Option<Entry>,
    /// trTCM policer state (policed ports).
    policer: Option<TrTcm>,
    /// Packets the policer colored yellow (forwarded).
    pub yellow: u64,
    /// PFC frames waiting to be sent ahead of the queue.
    control: std::collections::VecDeque<Entry>,
}

impl PortCold {
    /// The cold part of a port of link class `class`.
    fn new(class: &LinkClass) -> Box<PortCold> {
        Box::new(PortCold {
            queue: Queue::for_port(&class.scheduler, &class.aqm),
            ..PortCold::default()
        })
    }
}

impl PortState {
    /// True when the port has done or holds anything worth reporting.
    pub fn is_used(&self) -> bool {
        self.tx_packets > 0 || self.cold.is_some()
    }
    /// Packets waiting.
    pub fn queue_len(&self) -> usize {
        self.cold.as_ref().map_or(0, |c| c.queue.len())
    }
    /// Bytes waiting.
    pub fn queue_bytes(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.queue.bytes())
    }
    /// Packets dropped by the queue element.
    pub fn drops(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.drops)
    }
    /// Packets marked CE by the queue element.
    pub fn ecn_marks(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.ecn_marks)
    }
    /// Packets lost on the wire.
    pub fn lost(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.lost)
    }
    /// Largest number of waiting packets seen.
    pub fn max_queue_packets(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.max_queue_packets)
    }
    /// Largest number of waiting bytes seen.
    pub fn max_queue_bytes(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.max_queue_bytes)
    }
    /// Whether PFC frames wait to be sent.
    pub fn has_control(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| !c.control.is_empty())
    }
    /// Whether the shaper holds a packet (waiting for tokens).
    pub fn held(&self) -> bool {
        self.cold.as_ref().is_some_and(|c| c.held.is_some())
    }
    /// Packets the port's policer colored yellow.
    pub fn yellow(&self) -> u64 {
        self.cold.as_ref().map_or(0, |c| c.yellow)
    }
}

/// The buffer limit of queues that must not tail-drop: a host's egress queue takes whatever
/// the NIC admitted (the NIC enforces `nic.buffer` before offering), and a switch queues
/// every lossless (PFC) packet (PFC pauses the upstream instead).
const UNLIMITED: BufferSize = BufferSize::Bytes(Bytes(u64::MAX));

impl NodeState {
    /// Offers `packet` to egress port `local` at `now`. Returns `false` if the queue element
    /// refused it.
    pub(super) fn offer(
        &mut self,
        local: u32,
        packet: Packet,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) -> bool {
        let global = model.net.port_id(self.node, local);
        let port = &self.ports[local as usize];
        let idle = port.busy_until <= now && !port.wake_pending;
        if idle
            && port.queue_len() == 0
            && model.net.empty_passes_through(global)
            && port.paused & (1 << packet.class()) == 0
            && !(self.host && model.nic.shaper.is_some())
        {
            // The transmitter is idle, nothing waits and the port's discipline hands a packet
            // for an idle transmitter straight back, unchanged (the queue element would decide
            // exactly this): no queue state is touched or materialized.
            let entry = Entry {
                traced: self.traced(&packet, now, model),
                packet,
                arrived_ps: now.0,
                ahead_bytes: 0,
                ahead_packets: 0,
                pfc: false,
            };
            self.start_transmission(local, global, entry, now, model, sink);
            return true;
        }
        self.offer_to_queue(local, global, packet, idle, now, model, sink)
    }

    /// [`NodeState::offer`] when the queue element must decide.
    #[allow(clippy::too_many_arguments)]
    fn offer_to_queue(
        &mut self,
        local: u32,
        global: u32,
        packet: Packet,
        idle: bool,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) -> bool {
        let lossless = !self.host
            && packet.ingress != Packet::NO_INGRESS
            && model.pfc.is_some_and(|p| p.is_lossless(packet.class()));
        let limit = if self.is_host(model) || lossless {
            // Hosts: the NIC admitted it. Lossless classes: never dropped (PFC pauses the
            // upstream instead).
            UNLIMITED
        } else {
            let own = model.net.class_of(global).buffer;
            match &model.shared_buffer {
                // The dynamic threshold counts every queue of this switch.
                Some(shared) => shared.limit(own, self.ports.iter().map(|p| p.queue_bytes()).sum()),
                None => own,
            }
        };
        let traced = self.traced(&packet, now, model);
        let class = model.net.class_of(global);
        let port = &mut self.ports[local as usize];
        let entry = Entry {
            packet,
            arrived_ps: now.0,
            ahead_bytes: port.queue_bytes(),
            ahead_packets: port.queue_len() as u32,
            traced,
            pfc: lossless,
        };
        let offered_flow = entry.packet.flow;
        let pfc_info = lossless.then(|| {
            let p = &entry.packet;
            (p.id(), p.kind, p.ingress, p.class(), p.size_bytes)
        });
        let paused = port.paused;
        let cold = port.cold.get_or_insert_with(|| PortCold::new(class));
        if let Some(spec) = &class.policer
            && !self.host
        {
            // RFC 2698 metering on arrival at a switch port (a host never drops its own).
            let meter = cold.policer.get_or_insert_with(|| TrTcm::new(spec));
            match meter.meter(spec, now, entry.packet.size_bytes) {
                Color::Green => {}
                Color::Yellow => cold.yellow += 1,
                Color::Red => {
                    self.drop_entry(local, global, &entry, DropReason::Policed, model);
                    return false;
                }
            }
        }
        let mut ctx = QueueCtx {
            now,
            limit,
            rate: model.net.class_of(global).rate,
            rng: LazyStream::new(&mut cold.queue_rng, model.seed, STREAM_QUEUE, global as u64),
        };
        let (admission, mut now_sending) = if idle && paused == 0 {
            // The transmitter is idle: the queue decides and picks what goes now.
            cold.queue.enqueue_for_idle(entry, &mut ctx)
        } else if idle {
            let admission = cold.queue.enqueue(entry, &mut ctx);
            (admission, cold.queue.dequeue_unpaused(&mut ctx, paused))
        } else {
            (cold.queue.enqueue(entry, &mut ctx), None)
        };
        let accepted = match admission {
            Admission::Accepted => true,
            Admission::AcceptedMarked => {
                if let Some(cold) = self.ports[local as usize].cold.as_mut() {
                    cold.ecn_marks += 1;
                }
                *self.flow_marks.entry(offered_flow).or_insert(0) += 1;
                true
            }
            Admission::Dropped(dropped, reason) => {
                self.drop_entry(local, global, &dropped, reason, model);
                false
            }
            Admission::AcceptedDroppedOther(dropped, reason) => {
                self.drop_entry(local, global, &dropped, reason, model);
                true
            }
        };
        if accepted && let Some((id, kind, ingress, class, size)) = pfc_info {
            match now_sending.as_mut() {
                // It leaves at once: it never waited, so it is not counted.
                Some(e) if e.packet.id() == id && e.packet.kind == kind => e.pfc = false,
                _ => self.pfc_arrived(ingress, class, size, now, model, sink),
            }
        }
        if let Some(next) = now_sending {
            self.send_or_hold(local, global, next, now, model, sink);
            self.wake_if_waiting(local, now, sink);
            return accepted;
        }
        let cold = self.ports[local as usize]
            .cold
            .as_mut()
            .expect("allocated above");
        cold.max_queue_packets = cold.max_queue_packets.max(cold.queue.len() as u64);
        cold.max_queue_bytes = cold.max_queue_bytes.max(cold.queue.bytes());
        self.wake_if_waiting(local, now, sink);
        accepted
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
        self.schedule_local(
            at,
            now,
            Phase::PortReady,
            EventKind::PortReady {
                port: local,
                seq: 0,
            },
            sink,
        );
    }

    /// The transmitter of `local` is free: the queue picks the next packet.
    pub(super) fn port_ready(
        &mut self,
        local: u32,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let global = model.net.port_id(self.node, local);
        let limit = model.net.class_of(global).buffer;
        let port = &mut self.ports[local as usize];
        port.wake_pending = false;
        let Some(cold) = port.cold.as_mut() else {
            return;
        };
        if let Some(frame) = cold.control.pop_front() {
            // PFC frames go ahead of everything waiting.
            self.start_transmission(local, global, frame, now, model, sink);
            self.wake_if_waiting(local, now, sink);
            return;
        }
        if let Some(held) = cold.held.take() {
            // The shaper's wake-up: the held packet conforms now.
            self.send_or_hold(local, global, held, now, model, sink);
            self.wake_if_waiting(local, now, sink);
            return;
        }
        let mut ctx = QueueCtx {
            now,
            limit,
            rate: model.net.class_of(global).rate,
            rng: LazyStream::new(&mut cold.queue_rng, model.seed, STREAM_QUEUE, global as u64),
        };
        let paused = port.paused;
        let Some(next) = cold.queue.dequeue_unpaused(&mut ctx, paused) else {
            return;
        };
        self.send_or_hold(local, global, next, now, model, sink);
        self.wake_if_waiting(local, now, sink);
    }

    /// The token-bucket shaper of global port `global`, if any: the NIC's at a host when
    /// `[nic] shaper` is set, else the link class's.
    #[inline]
    fn shaper_of<'m>(&self, global: u32, model: &'m Model) -> Option<&'m TokenBucketSpec> {
        match &model.nic.shaper {
            Some(spec) if self.host => Some(spec),
            _ => model.net.class_of(global).shaper.as_ref(),
        }
    }

    /// Starts `entry` now if the port's shaper (if any) lets it, else holds it and wakes the
    /// port when it conforms.
    #[inline]
    fn send_or_hold(
        &mut self,
        local: u32,
        global: u32,
        entry: Entry,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if let Some(spec) = self.shaper_of(global, model) {
            self.shape(local, global, entry, spec, now, model, sink);
            return;
        }
        self.start_transmission(local, global, entry, now, model, sink);
    }

    /// [`NodeState::send_or_hold`] on a shaped port.
    #[allow(clippy::too_many_arguments)]
    #[inline(never)]
    fn shape(
        &mut self,
        local: u32,
        global: u32,
        entry: Entry,
        spec: &TokenBucketSpec,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let class = model.net.class_of(global);
        let cold = self.ports[local as usize]
            .cold
            .get_or_insert_with(|| PortCold::new(class));
        let bucket = cold.shaper.get_or_insert_with(|| TokenBucket::new(spec));
        let size = entry.packet.size_bytes;
        let at = bucket.ready_at(spec, now, size);
        if at <= now {
            bucket.take(spec, now, size);
            self.start_transmission(local, global, entry, now, model, sink);
            return;
        }
        if at > MAX_EVENT_TIME {
            self.overflow.get_or_insert(at);
            return;
        }
        cold.held = Some(entry);
        self.wake_at(local, at, now, sink);
    }

    fn drop_entry(
        &mut self,
        local: u32,
        global: u32,
        entry: &Entry,
        reason: DropReason,
        model: &Model,
    ) {
        self.ports[local as usize]
            .cold
            .get_or_insert_with(|| PortCold::new(model.net.class_of(global)))
            .drops += 1;
        self.counters.drops += 1;
        *self.flow_drops.entry(entry.packet.flow).or_insert(0) += 1;
        let reason = match reason {
            DropReason::BufferFull => TraceDrop::BufferFull,
            DropReason::Early => TraceDrop::Early,
            DropReason::Policed => TraceDrop::Policed,
        };
        self.record_hop(entry, global, None, Some(reason));
        if self.is_host(model) {
            self.nic_left(&entry.packet, model);
        }
        self.telemetry_take(&entry.packet);
    }

    /// Starts serializing `entry` on `local` at `now`; the far end receives it once the last
    /// bit has propagated.
    #[inline]
    fn start_transmission(
        &mut self,
        local: u32,
        global: u32,
        entry: Entry,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if self.is_host(model) {
            self.nic_left(&entry.packet, model);
        }
        if entry.pfc {
            let p = &entry.packet;
            self.pfc_left(p.ingress, p.class(), p.size_bytes, now, model, sink);
        }
        let class = model.net.class_of(global);
        let serialization = model.net.serialization(global, entry.packet.size_bytes);
        let done = now + serialization;
        let port = &mut self.ports[local as usize];
        port.busy_until = done;
        port.tx_packets += 1;
        port.tx_bytes += entry.packet.size_bytes as u64;
        self.counters.packet_hops += 1;
        let at = done + class.delay;
        let down = model
            .failures
            .as_ref()
            .is_some_and(|f| f.lost(global, now, at));
        let lost = down
            || class.loss_ppm > 0 && {
                let cold = port.cold.get_or_insert_with(|| PortCold::new(class));
                lost_on_wire(class, &mut cold.loss_rng, model.seed, global)
            };
        if lost {
            port.cold.get_or_insert_with(|| PortCold::new(class)).lost += 1;
            self.counters.drops += 1;
            if entry.packet.kind != PacketKind::Pause {
                *self.flow_drops.entry(entry.packet.flow).or_insert(0) += 1;
            }
            let reason = if down {
                TraceDrop::LinkDown
            } else {
                TraceDrop::LinkLoss
            };
            self.record_hop(&entry, global, Some((now.0, done.0)), Some(reason));
            if entry.packet.has(Packet::TELEMETRY) {
                self.telemetry_take(&entry.packet);
            }
            return;
        }
        self.record_hop(&entry, global, Some((now.0, done.0)), None);
        let mut packet = entry.packet;
        packet.hop = packet.hop.saturating_add(1);
        packet.ingress = model.net.port_peer_local[global as usize];
        if at > MAX_EVENT_TIME {
            self.overflow.get_or_insert(at);
            return;
        }
        let peer = model.net.port_peer[global as usize];
        sink.remote(
            peer,
            Event {
                key: EventKey::new(at, Phase::Arrive, now),
                kind: EventKind::Arrive(packet),
            },
        );
        if packet.has(Packet::TELEMETRY) {
            self.telemetry_hand_off(local, global, &packet, now, peer, model, sink);
        }
    }

    /// A telemetry packet started transmission on `local` at `now` (its arrival at `peer` is
    /// scheduled): a switch stamps a data packet with the port's record (HPCC: time, bytes
    /// sent before it, queue left behind, link rate); the stack leaves the side table to
    /// travel with the packet. Out of line, so the common path only tests the flag.
    #[cold]
    #[inline(never)]
    #[allow(clippy::too_many_arguments)]
    fn telemetry_hand_off(
        &mut self,
        local: u32,
        global: u32,
        packet: &Packet,
        now: SimTime,
        peer: u32,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        if !self.host && packet.kind == PacketKind::Data {
            let port = &self.ports[local as usize];
            let hop = IntHop {
                ts_ps: now.0,
                // The counter already includes this packet.
                tx_bytes: port.tx_bytes - packet.size_bytes as u64,
                qlen_bytes: port.queue_bytes(),
                rate_bps: model.net.class_of(global).rate.0,
            };
            self.telemetry
                .get_or_insert_with(Box::default)
                .entry(packet.id())
                .push(hop);
        }
        if let Some(stack) = self.telemetry_take(packet) {
            sink.telemetry(peer, packet.id(), stack);
        }
    }

    /// A lossless packet from local ingress port `ingress` was queued here (switch).
    #[allow(clippy::too_many_arguments)]
    fn pfc_arrived(
        &mut self,
        ingress: u16,
        class: u8,
        size: u32,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let Some(spec) = &model.pfc else { return };
        let degree = self.ports.len() as u32;
        let ing = self
            .pfc
            .get_or_insert_with(|| Box::new(PfcIngress::new(degree)));
        if ing.arrived(spec, ingress, class, size) == Some(FrameRequest::Pause) {
            self.send_frame(ingress as u32, class, true, now, model, sink);
        }
    }

    /// A counted lossless packet from `ingress` leaves this switch.
    fn pfc_left(
        &mut self,
        ingress: u16,
        class: u8,
        size: u32,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let (Some(spec), Some(ing)) = (&model.pfc, self.pfc.as_mut()) else {
            return;
        };
        if ing.left(spec, ingress, class, size) == Some(FrameRequest::Resume) {
            self.send_frame(ingress as u32, class, false, now, model, sink);
        }
    }

    /// Sends a PAUSE (or RESUME) frame for `class` on local port `local`, ahead of the queue.
    fn send_frame(
        &mut self,
        local: u32,
        class: u8,
        pause: bool,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let global = model.net.port_id(self.node, local);
        self.pfc_events.push(PfcEvent {
            time_ps: now.0,
            node: self.node,
            port: global,
            class,
            pause,
        });
        let peer = model.net.port_peer[global as usize];
        let mut packet = Packet::new(
            PacketKind::Pause,
            u32::MAX,
            0,
            pause as u32,
            peer,
            FRAME_BYTES,
        );
        packet.set_class(class);
        let frame = Entry {
            packet,
            arrived_ps: now.0,
            ahead_bytes: 0,
            ahead_packets: 0,
            traced: false,
            pfc: false,
        };
        let port = &mut self.ports[local as usize];
        if port.busy_until <= now && !port.wake_pending {
            self.start_transmission(local, global, frame, now, model, sink);
            return;
        }
        let class_spec = model.net.class_of(global);
        port.cold
            .get_or_insert_with(|| PortCold::new(class_spec))
            .control
            .push_back(frame);
        self.wake_if_waiting(local, now, sink);
    }

    /// A PAUSE or RESUME frame arrived (on the link of local port `packet.ingress`): pause or
    /// resume that class on the port towards its sender.
    pub(super) fn pfc_frame(
        &mut self,
        packet: &Packet,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let local = packet.ingress as u32;
        let bit = 1u8 << packet.class();
        let port = &mut self.ports[local as usize];
        if packet.seq == 1 {
            port.paused |= bit;
            return;
        }
        port.paused &= !bit;
        if port.busy_until <= now && !port.wake_pending && port.queue_len() > 0 {
            self.port_ready(local, now, model, sink);
        }
        if self.is_host(model) {
            self.fill_nic(now, model, sink);
        }
    }
}

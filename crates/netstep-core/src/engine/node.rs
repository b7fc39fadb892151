//! One logical process: a host or a switch with its egress ports and, on hosts, the flows it
//! sends and receives. [`NodeState::handle`] is the single piece of element code both engines
//! run; it only ever talks to the outside through an [`EventSink`].

use std::collections::BTreeMap;

use super::Model;
use super::event::{Event, EventKey, EventKind, EventSink, Phase};
use super::trace::{DropReason, HopRecord};
use crate::packet::{Packet, PacketKind};
use crate::queue::Queue;
use crate::topology::NodeKind;
use crate::transport::{FlowEnds, Receiver, Sender, TransportOut};
use crate::units::SimTime;

/// Dynamic state of one egress port: the transmitter (hot, 32 bytes) and, once the port has
/// ever queued, dropped or lost a packet, its backlog (allocated on first need). A packet that
/// finds the transmitter idle touches only the hot part.
#[derive(Clone, Debug, Default)]
pub struct PortState {
    /// The transmitter is busy until this time.
    pub busy_until: SimTime,
    /// Packets transmitted.
    pub tx_packets: u64,
    /// Bytes transmitted.
    pub tx_bytes: u64,
    /// Queue and rarely used counters.
    pub backlog: Option<Box<Backlog>>,
}

/// The part of a port that only queueing, drops and losses touch.
#[derive(Clone, Debug, Default)]
pub struct Backlog {
    /// Waiting packets.
    pub queue: Queue,
    /// Arrival facts of the waiting packets, in queue order, kept only while packet tracing is
    /// on (the FIFO dequeues in arrival order; schedulers will carry this per entry).
    pub arrivals: std::collections::VecDeque<Arrival>,
    /// A `PortReady` event is pending.
    pub wake_pending: bool,
    /// Packets dropped at this port.
    pub drops: u64,
    /// Largest number of waiting packets seen.
    pub max_queue_packets: u64,
    /// Largest number of waiting bytes seen.
    pub max_queue_bytes: u64,
    /// Packets lost on the wire (random link loss).
    pub lost: u64,
    /// Loss generator, created on the first draw of a lossy link.
    loss_rng: Option<Box<rand_pcg::Pcg64Mcg>>,
}

/// When and into what a packet arrived at a queue (for its hop record).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arrival {
    /// Arrival time, ps.
    pub at_ps: u64,
    /// Bytes waiting ahead of it.
    pub queue_bytes: u64,
    /// Packets waiting ahead of it.
    pub queue_packets: u32,
    /// Whether its hop is recorded.
    pub traced: bool,
}

impl PortState {
    /// True when a packet may start at `now` without queueing.
    #[inline]
    fn is_idle(&self, now: SimTime) -> bool {
        self.busy_until <= now
            && self
                .backlog
                .as_ref()
                .is_none_or(|b| !b.wake_pending && b.queue.is_empty())
    }
}

/// Counters a logical process keeps about itself.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NodeCounters {
    /// Events handled.
    pub events: u64,
    /// Packet transmissions started (one per packet per egress port).
    pub packet_hops: u64,
    /// Packets dropped here.
    pub drops: u64,
    /// Packets that arrived at a host they were not addressed to, or found no route.
    pub misrouted: u64,
}

/// State of one logical process.
#[derive(Clone, Debug)]
pub struct NodeState {
    /// Node index.
    pub node: u32,
    next_seq: u64,
    /// Egress ports (local index).
    pub ports: Vec<PortState>,
    /// Senders of flows sourced here, by source slot.
    pub senders: Vec<Option<Sender>>,
    /// Receivers of flows sinking here, by destination slot.
    pub receivers: Vec<Option<Receiver>>,
    /// Drops per flow at this node.
    pub flow_drops: BTreeMap<u32, u64>,
    /// Counters.
    pub counters: NodeCounters,
    /// Data packets delivered here (only when [`Model::record_deliveries`] is set).
    pub deliveries: Vec<Delivery>,
    /// Hop records of the current window (packet tracing only).
    pub hop_records: Vec<HopRecord>,
    out: TransportOut,
}

/// One data packet reaching its receiver (recorded on request, for analysis and tests).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Delivery {
    /// Arrival time at the receiver, ps.
    pub arrived_ps: u64,
    /// Flow id.
    pub flow: u32,
    /// Per-flow packet number.
    pub number: u32,
    /// Segment / packet sequence number.
    pub seq: u32,
    /// Time the packet left its sender, ps.
    pub sent_ps: u64,
    /// Wire size, bytes.
    pub size_bytes: u32,
}

impl NodeState {
    /// Fresh state for `node` with `degree` idle ports.
    pub fn new(node: u32, degree: u32) -> NodeState {
        NodeState {
            node,
            next_seq: 0,
            ports: vec![PortState::default(); degree as usize],
            senders: Vec::new(),
            receivers: Vec::new(),
            flow_drops: BTreeMap::new(),
            counters: NodeCounters::default(),
            deliveries: Vec::new(),
            hop_records: Vec::new(),
            out: TransportOut::default(),
        }
    }

    fn key(&mut self, time: SimTime, phase: Phase) -> EventKey {
        let seq = self.next_seq;
        self.next_seq += 1;
        EventKey::new(time, phase, self.node, seq)
    }

    /// Handles one event at its time.
    pub fn handle(&mut self, event: Event, model: &Model, sink: &mut impl EventSink) {
        let now = event.key.time;
        self.counters.events += 1;
        match event.kind {
            EventKind::PortReady { port } => self.port_ready(port, now, model, sink),
            EventKind::Arrive(packet) => self.arrive(packet, now, model, sink),
            EventKind::Timer { flow, token } => {
                let spec = &model.flows.flows[flow as usize];
                let slot = model.flows.src_slot[flow as usize] as usize;
                if let Some(Some(sender)) = self.senders.get_mut(slot) {
                    sender.on_timer(&spec.transport, token, now, &mut self.out);
                }
                self.flush_transport(flow, now, model, sink);
            }
            EventKind::FlowStart { flow } => {
                let spec = &model.flows.flows[flow as usize];
                let slot = model.flows.src_slot[flow as usize] as usize;
                if self.senders.len() <= slot {
                    self.senders.resize(slot + 1, None);
                }
                let ends = FlowEnds {
                    flow,
                    src: spec.src,
                    dst: spec.dst,
                    size: spec.size,
                    seed: model.seed,
                };
                self.senders[slot] = Some(Sender::start(&spec.transport, ends, now, &mut self.out));
                self.flush_transport(flow, now, model, sink);
            }
        }
    }

    /// Moves what a transport produced into the NIC and the event queue.
    fn flush_transport(
        &mut self,
        flow: u32,
        now: SimTime,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let mut out = std::mem::take(&mut self.out);
        for (at, token) in out.timers.drain(..) {
            let key = self.key(at, Phase::Timer);
            sink.local(Event {
                key,
                kind: EventKind::Timer { flow, token },
            });
        }
        let explicit = model.flows.flows[flow as usize].path.is_some();
        for mut packet in out.packets.drain(..) {
            packet.explicit_path = explicit;
            self.forward(packet, now, model, sink);
        }
        self.out = out;
    }

    fn arrive(&mut self, packet: Packet, now: SimTime, model: &Model, sink: &mut impl EventSink) {
        if model.net.node_kind[self.node as usize] == NodeKind::Switch {
            self.forward(packet, now, model, sink);
            return;
        }
        if packet.dst != self.node {
            self.counters.misrouted += 1;
            return;
        }
        let flow = packet.flow as usize;
        let spec = &model.flows.flows[flow];
        match packet.kind {
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
                    let ends = FlowEnds {
                        flow: packet.flow,
                        src: spec.src,
                        dst: spec.dst,
                        size: spec.size,
                        seed: model.seed,
                    };
                    Receiver::new(&spec.transport, ends)
                });
                receiver.on_data(&spec.transport, &packet, now, &mut self.out);
            }
            PacketKind::Ack => {
                let slot = model.flows.src_slot[flow] as usize;
                if let Some(Some(sender)) = self.senders.get_mut(slot) {
                    sender.on_ack(&spec.transport, &packet, now, &mut self.out);
                }
            }
        }
        self.flush_transport(packet.flow, now, model, sink);
    }

    /// Routes a packet to an egress port and offers it there.
    fn forward(&mut self, packet: Packet, now: SimTime, model: &Model, sink: &mut impl EventSink) {
        let Some(local) = model.egress_port(self.node, &packet) else {
            self.counters.misrouted += 1;
            return;
        };
        let global = model.net.port_id(self.node, local);
        let limit = model.net.class_of(global).buffer;
        let traced = model
            .trace
            .packet_hops
            .as_ref()
            .is_some_and(|f| f.accepts(&packet, self.node, now));
        let port = &mut self.ports[local as usize];
        if port.is_idle(now) {
            let arrival = Arrival {
                at_ps: now.0,
                queue_bytes: 0,
                queue_packets: 0,
                traced,
            };
            self.transmit(local, packet, now, arrival, model, sink);
            return;
        }
        let busy_until = port.busy_until;
        let port = port.backlog.get_or_insert_with(Box::default);
        let arrival = Arrival {
            at_ps: now.0,
            queue_bytes: port.queue.bytes(),
            queue_packets: port.queue.len() as u32,
            traced,
        };
        match port.queue.enqueue(packet, limit) {
            Ok(()) => {
                if model.trace.packet_hops.is_some() {
                    port.arrivals.push_back(arrival);
                }
                port.max_queue_packets = port.max_queue_packets.max(port.queue.len() as u64);
                port.max_queue_bytes = port.max_queue_bytes.max(port.queue.bytes());
                if !port.wake_pending {
                    port.wake_pending = true;
                    let at = busy_until.max(now);
                    let key = self.key(at, Phase::PortReady);
                    sink.local(Event {
                        key,
                        kind: EventKind::PortReady { port: local },
                    });
                }
            }
            Err(_) => {
                port.drops += 1;
                self.counters.drops += 1;
                *self.flow_drops.entry(packet.flow).or_insert(0) += 1;
                if traced {
                    self.hop_records.push(hop_record(
                        &packet,
                        self.node,
                        global,
                        arrival,
                        None,
                        Some(DropReason::BufferFull),
                    ));
                }
            }
        }
    }

    fn port_ready(&mut self, local: u32, now: SimTime, model: &Model, sink: &mut impl EventSink) {
        let Some(backlog) = self.ports[local as usize].backlog.as_mut() else {
            return;
        };
        backlog.wake_pending = false;
        let Some(packet) = backlog.queue.dequeue() else {
            return;
        };
        let arrival = backlog.arrivals.pop_front().unwrap_or(Arrival {
            at_ps: now.0,
            queue_bytes: 0,
            queue_packets: 0,
            traced: false,
        });
        self.transmit(local, packet, now, arrival, model, sink);
        let port = &mut self.ports[local as usize];
        let busy_until = port.busy_until;
        let backlog = port.backlog.as_mut().expect("backlog exists");
        if !backlog.queue.is_empty() {
            backlog.wake_pending = true;
            let at = busy_until;
            let key = self.key(at, Phase::PortReady);
            sink.local(Event {
                key,
                kind: EventKind::PortReady { port: local },
            });
        }
    }

    /// Starts serializing `packet` on `local` at `now`; the far end receives it once the last
    /// bit has propagated.
    fn transmit(
        &mut self,
        local: u32,
        mut packet: Packet,
        now: SimTime,
        arrival: Arrival,
        model: &Model,
        sink: &mut impl EventSink,
    ) {
        let global = model.net.port_id(self.node, local);
        let class = model.net.class_of(global);
        let serialization = model.net.serialization(global, packet.size_bytes);
        let port = &mut self.ports[local as usize];
        port.busy_until = now + serialization;
        port.tx_packets += 1;
        port.tx_bytes += packet.size_bytes as u64;
        self.counters.packet_hops += 1;
        let transmitted = Some((now.0, (now + serialization).0));
        let record_from = packet;
        packet.hop = packet.hop.saturating_add(1);
        let mut lost = false;
        if class.loss_ppm > 0 {
            let port = port.backlog.get_or_insert_with(Box::default);
            let rng = port.loss_rng.get_or_insert_with(|| {
                Box::new(crate::rng::stream(
                    model.seed,
                    crate::rng::STREAM_LOSS,
                    global as u64,
                ))
            });
            if rand::Rng::next_u32(rng.as_mut()) % 1_000_000 < class.loss_ppm {
                port.lost += 1;
                self.counters.drops += 1;
                *self.flow_drops.entry(packet.flow).or_insert(0) += 1;
                lost = true;
            }
        }
        if arrival.traced {
            let drop = lost.then_some(DropReason::LinkLoss);
            self.hop_records.push(hop_record(
                &record_from,
                self.node,
                global,
                arrival,
                transmitted,
                drop,
            ));
        }
        if lost {
            return;
        }
        let peer = model.net.port_peer[global as usize];
        let key = self.key(now + serialization + class.delay, Phase::Arrive);
        sink.remote(
            peer,
            Event {
                key,
                kind: EventKind::Arrive(packet),
            },
        );
    }
}

/// Builds the hop record of `packet` (as it arrived) at global port `port` of `node`.
fn hop_record(
    packet: &Packet,
    node: u32,
    port: u32,
    arrival: Arrival,
    transmitted: Option<(u64, u64)>,
    drop: Option<DropReason>,
) -> HopRecord {
    HopRecord {
        packet_id: packet.id(),
        flow: packet.flow,
        hop: packet.hop as u16,
        node,
        port,
        kind: packet.kind,
        seq: packet.seq,
        size_bytes: packet.size_bytes,
        arrive_ps: arrival.at_ps,
        dequeue_ps: transmitted.map(|t| t.0),
        depart_ps: transmitted.map(|t| t.1),
        queue_bytes: arrival.queue_bytes,
        queue_packets: arrival.queue_packets,
        ecn: packet.ecn,
        drop,
    }
}

//! One logical process: a host or a switch with its egress ports and, on hosts, the NIC and
//! the flows it sends and receives. [`NodeState::handle`] is the single piece of element code
//! both engines run; it only ever talks to the outside through an [`EventSink`].
//!
//! One file per stage of a packet's way through a node:
//! - [`forward`]: a switch picks the egress port (routing, ECMP, explicit paths);
//! - [`port`]: admission into the egress queue (the queue element decides: accept, drop,
//!   push out), scheduling (`PortReady`: the queue picks the next packet) and transmission;
//! - [`link`]: what happens on the wire (random loss);
//! - [`host`]: transports, the NIC with its socket queues and backpressure, delivery;
//! - [`tracing`]: the hand-off of hop records to the trace.

mod forward;
mod host;
mod link;
mod port;
mod tracing;

use std::collections::BTreeMap;

pub use port::PortState;

use super::Model;
use super::event::{Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase};
use super::trace::HopRecord;
use crate::nic::HostNic;
use crate::packet::Packet;
use crate::telemetry::{IntStack, TelemetryTable};
use crate::topology::NodeKind;
use crate::transport::{Receiver, Sender, TransportOut};
use crate::units::SimTime;

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
    /// The node is a host (it runs transports and has a NIC).
    pub host: bool,
    next_seq: u64,
    /// Egress ports (local index).
    pub ports: Vec<PortState>,
    /// The NIC's socket queues (hosts only, created with the first packet a transport sends).
    pub nic: Option<Box<HostNic>>,
    /// Senders of flows sourced here, by source slot.
    pub senders: Vec<Option<Sender>>,
    /// Receivers of flows sinking here, by destination slot.
    pub receivers: Vec<Option<Receiver>>,
    /// Drops per flow at this node.
    pub flow_drops: BTreeMap<u32, u64>,
    /// Marks (ECN CE or DECbit) per flow at this node.
    pub flow_marks: BTreeMap<u32, u64>,
    /// Counters.
    pub counters: NodeCounters,
    /// Data packets delivered here (only when [`Model::record_deliveries`] is set).
    pub deliveries: Vec<Delivery>,
    /// Hop records of the current window (packet tracing only).
    pub hop_records: Vec<HopRecord>,
    /// Time of the last event that did something (not a stale or cancelled timer).
    pub last_useful: SimTime,
    /// PFC ingress accounting of a switch (allocated on its first lossless packet).
    pub pfc: Option<Box<crate::pfc::PfcIngress>>,
    /// PAUSE and RESUME frames this node sent.
    pub pfc_events: Vec<crate::pfc::PfcEvent>,
    /// Load-balancing state of a switch (stateful modes only, allocated on first use).
    pub balance: Option<Box<crate::balance::BalanceState>>,
    /// The first event this LP tried to schedule past [`MAX_EVENT_TIME`], if any: the run
    /// stops with an error.
    pub overflow: Option<SimTime>,
    /// Telemetry stacks of the packets this LP holds (allocated on first use).
    pub telemetry: Option<Box<TelemetryTable>>,
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
    /// Time the packet entered its sender's NIC, ps.
    pub sent_ps: u64,
    /// Wire size, bytes.
    pub size_bytes: u32,
}

impl NodeState {
    /// Fresh state for `node` of `model`.
    pub fn for_node(node: u32, model: &Model) -> NodeState {
        let host = model.net.node_kind[node as usize] == NodeKind::Host;
        NodeState::new(node, model.net.degree(node), host)
    }

    /// Fresh state for `node` with `degree` idle ports.
    pub fn new(node: u32, degree: u32, host: bool) -> NodeState {
        NodeState {
            node,
            host,
            next_seq: 0,
            ports: vec![PortState::default(); degree as usize],
            nic: None,
            senders: Vec::new(),
            receivers: Vec::new(),
            flow_drops: BTreeMap::new(),
            flow_marks: BTreeMap::new(),
            counters: NodeCounters::default(),
            deliveries: Vec::new(),
            hop_records: Vec::new(),
            last_useful: SimTime::ZERO,
            overflow: None,
            balance: None,
            pfc: None,
            pfc_events: Vec::new(),
            telemetry: None,
            out: TransportOut::default(),
        }
    }

    /// Stores the telemetry stack of a packet that is arriving here.
    pub fn telemetry_in(&mut self, id: u64, stack: Box<IntStack>) {
        self.telemetry
            .get_or_insert_with(Box::<TelemetryTable>::default)
            .insert(id, stack);
    }

    /// Takes the telemetry stack of `packet` out of the side table (a packet leaving, being
    /// consumed or dropped).
    #[inline]
    fn telemetry_take(&mut self, packet: &Packet) -> Option<Box<IntStack>> {
        if !packet.has(Packet::TELEMETRY) {
            return None;
        }
        self.telemetry.as_mut()?.take(packet.id())
    }

    /// Schedules an event for this LP at `at` (created `now`); an event past
    /// [`MAX_EVENT_TIME`] is not scheduled but recorded in [`NodeState::overflow`].
    #[inline]
    fn schedule_local(
        &mut self,
        at: SimTime,
        now: SimTime,
        phase: Phase,
        kind: EventKind,
        sink: &mut impl EventSink,
    ) {
        if at > MAX_EVENT_TIME {
            self.overflow.get_or_insert(at);
            return;
        }
        let mut kind = kind;
        match &mut kind {
            EventKind::PortReady { seq, .. } | EventKind::Timer { seq, .. } => {
                *seq = self.next_seq;
                self.next_seq += 1;
            }
            EventKind::Arrive(_) | EventKind::FlowStart { .. } => {}
        }
        sink.local(Event {
            key: EventKey::new(at, phase, now),
            kind,
        });
    }

    /// Handles one event at its time.
    pub fn handle(&mut self, event: Event, model: &Model, sink: &mut impl EventSink) {
        let now = event.key.time;
        self.counters.events += 1;
        let useful = match event.kind {
            EventKind::PortReady { port, .. } => {
                self.port_ready(port, now, model, sink);
                if self.is_host(model) {
                    self.fill_nic(now, model, sink);
                }
                true
            }
            EventKind::Arrive(packet) if packet.kind == crate::packet::PacketKind::Pause => {
                self.pfc_frame(&packet, now, model, sink);
                true
            }
            EventKind::Arrive(packet) => {
                if self.is_host(model) {
                    self.host_receive(packet, now, model, sink);
                } else {
                    self.forward(packet, now, model, sink);
                }
                true
            }
            EventKind::Timer {
                flow, token, side, ..
            } => self.transport_timer(flow, token, side, now, model, sink),
            EventKind::FlowStart { flow } => {
                self.flow_start(flow, now, model, sink);
                true
            }
        };
        if useful {
            self.last_useful = now;
        }
    }

    #[inline]
    fn is_host(&self, _model: &Model) -> bool {
        self.host
    }
}

//! Test support for the node code: a recording [`EventSink`], small models built through the
//! World's setup systems ([`ModelBuilder`]), and a one-LP driver that runs a node's own events
//! in key order ([`Recorder::run_until`]).

use bevy_ecs::world::World;

use super::NodeState;
use crate::engine::event::{Event, EventKind, EventSink};
use crate::engine::model::Model;
use crate::engine::trace::{HopFilter, TraceConfig};
use crate::flow::FlowSpec;
use crate::nic::NicConfig;
use crate::packet::{Packet, PacketKind};
use crate::telemetry::SideRecord;
use crate::topology::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};
use crate::transport::{OpenLoopSpec, TransportSpec};
use crate::units::{BitsPerSec, BufferSize, Bytes, SimTime};
use crate::world::{NicSettings, SwitchSettings, TraceSettings};

/// 10 Gb/s: a 1,000-byte packet serializes in 800 ns.
pub(crate) const RATE: BitsPerSec = BitsPerSec(10_000_000_000);
/// Propagation delay of every test link: 1 us.
pub(crate) const DELAY: SimTime = SimTime(1_000_000);
/// Serialization of a 1,000-byte packet at [`RATE`], ps.
pub(crate) const SER_1000: u64 = 800_000;

/// A 10 Gb/s, 1 us FIFO link class with a buffer of `buffer`.
pub(crate) fn class(buffer: BufferSize) -> LinkClass {
    LinkClass::new(RATE, DELAY, buffer)
}

/// One switch with `hosts` hosts: hosts are nodes `0..hosts`, the switch is node `hosts`, and
/// the switch's local port `i` leads to host `i`.
pub(crate) fn star(hosts: u32, class: LinkClass) -> TopologySpec {
    let mut nodes: Vec<NodeSpec> = (0..hosts)
        .map(|i| NodeSpec {
            kind: NodeKind::Host,
            name: format!("h{i}"),
        })
        .collect();
    nodes.push(NodeSpec {
        kind: NodeKind::Switch,
        name: "s".into(),
    });
    let links = (0..hosts)
        .map(|i| LinkSpec {
            a: hosts,
            b: i,
            class: 0,
            class_ba: 0,
        })
        .collect();
    TopologySpec {
        nodes,
        links,
        classes: vec![class],
        routing: RoutingKind::ShortestPath,
    }
}

/// An open-loop flow of `n` packets of `size` bytes from `src` to `dst`, all at `start`.
pub(crate) fn open_loop(src: u32, dst: u32, n: u32, size: u64, start: SimTime) -> FlowSpec {
    let transport = TransportSpec::OpenLoop(OpenLoopSpec {
        packet_size: Bytes(size),
        n_packets: n,
        interval: SimTime::ZERO,
        exponential: false,
        size_distribution: Default::default(),
        ecn: false,
    });
    FlowSpec {
        src,
        dst,
        start,
        size: Bytes(size * n as u64),
        transport: transport.into(),
        path: None,
        class: 0,
        after: None,
        ports: None,
    }
}

/// A small model built through the World's setup schedule.
pub(crate) struct ModelBuilder {
    world: World,
}

impl ModelBuilder {
    /// The topology `spec` with `flows`.
    pub(crate) fn new(spec: TopologySpec, flows: Vec<FlowSpec>) -> ModelBuilder {
        let mut world = World::new();
        crate::world::spawn_topology(&mut world, spec);
        crate::world::spawn_flows(&mut world, flows, 7);
        ModelBuilder { world }
    }
    /// Every host's NIC settings.
    pub(crate) fn nic(mut self, nic: NicConfig) -> Self {
        self.world.insert_resource(NicSettings(nic));
        self
    }
    /// Every switch's settings.
    pub(crate) fn switches(mut self, settings: SwitchSettings) -> Self {
        self.world.insert_resource(settings);
        self
    }
    /// Records every packet hop.
    pub(crate) fn traced(mut self) -> Self {
        self.world.insert_resource(TraceSettings(TraceConfig {
            packet_hops: Some(HopFilter::all()),
            ..TraceConfig::default()
        }));
        self
    }
    /// Link failures `(a, b, down, up)`.
    pub(crate) fn failures(mut self, list: &[(u32, u32, SimTime, Option<SimTime>)]) -> Self {
        crate::world::spawn_failures(&mut self.world, list);
        self
    }
    /// The model.
    pub(crate) fn build(mut self) -> Model {
        crate::world::build_model(&mut self.world).expect("a valid test topology")
    }
}

/// A data packet of `flow`, number `n`, `size` bytes, to `dst`, in traffic class `class`.
pub(crate) fn data(flow: u32, n: u32, dst: u32, size: u32, class: u8) -> Packet {
    let mut packet = Packet::new(PacketKind::Data, flow, n, n, dst, size);
    packet.set_class(class);
    packet
}

/// Every event a node emitted: its own (`local`), those for other LPs (`remote`, with the
/// destination), and the side records sent along (destination, packet id).
#[derive(Default)]
pub(crate) struct Recorder {
    pub(crate) local: Vec<Event>,
    pub(crate) remote: Vec<(u32, Event)>,
    pub(crate) side_records: Vec<(u32, u64)>,
}

impl EventSink for Recorder {
    fn local(&mut self, event: Event) {
        self.local.push(event);
    }
    fn remote(&mut self, node: u32, event: Event) {
        self.remote.push((node, event));
    }
    fn side_record(&mut self, node: u32, id: u64, _stack: Box<SideRecord>) {
        self.side_records.push((node, id));
    }
}

/// A packet that left over a link: where to, when it arrives, when it was sent, the packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sent {
    pub(crate) to: u32,
    pub(crate) arrives: u64,
    pub(crate) created: u64,
    pub(crate) packet: Packet,
}

impl Recorder {
    /// The packets sent to other LPs so far, in the order they were sent.
    pub(crate) fn sent(&self) -> Vec<Sent> {
        self.remote
            .iter()
            .filter_map(|(to, e)| match e.kind {
                EventKind::Arrive(packet) => Some(Sent {
                    to: *to,
                    arrives: e.key.time.0,
                    created: e.key.created().0,
                    packet,
                }),
                _ => None,
            })
            .collect()
    }

    /// The times and kinds of the node's own pending events, earliest first.
    pub(crate) fn pending(&self) -> Vec<(u64, EventKind)> {
        let mut events = self.local.clone();
        // `Event`'s order is reversed (for a max-heap).
        events.sort_by(|a, b| b.cmp(a));
        events.iter().map(|e| (e.key.time.0, e.kind)).collect()
    }

    /// Takes the node's earliest own event, if any is before `bound`.
    pub(crate) fn pop_before(&mut self, bound: SimTime) -> Option<Event> {
        let (i, _) = self.local.iter().enumerate().max_by(|a, b| a.1.cmp(b.1))?;
        (self.local[i].key.time < bound).then(|| self.local.swap_remove(i))
    }

    /// Lets `state` handle its own events in key order until none is left before `bound`.
    pub(crate) fn run_until(&mut self, state: &mut NodeState, model: &Model, bound: SimTime) {
        let mut out = crate::transport::TransportOut::default();
        while let Some(event) = self.pop_before(bound) {
            state.handle(event, model, self, &mut out);
        }
    }
}

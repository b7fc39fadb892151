//! The model: everything read-only during a run (the compiled network, the flow table, the
//! element settings), which both engines and every LP share. It depends on the elements only,
//! never on the engines, so the node code reads it without reaching back into the engine.

use super::event::{Event, EventKey, EventKind, Phase};
use super::trace;
use crate::flow::FlowTable;
use crate::network::{Network, ecmp_hash};
use crate::packet::Packet;
use crate::units::{Bytes, SimTime};

/// Everything read-only during a run.
#[derive(Clone, Debug)]
pub struct Model {
    /// Topology and routing.
    pub net: Network,
    /// Flows.
    pub flows: FlowTable,
    /// Seed of all random streams.
    pub seed: u64,
    /// Record every data packet's delivery ([`crate::engine::RunOutput::deliveries`]); off by default.
    pub record_deliveries: bool,
    /// Packet and queue tracing.
    pub trace: trace::TraceConfig,
    /// NIC settings of every host.
    pub nic: crate::nic::NicConfig,
    /// Every switch's shared buffer with dynamic thresholds (`None`: each port has its own
    /// buffer).
    pub shared_buffer: Option<crate::queue::SharedBuffer>,
    /// How switches pick among equal-cost next hops.
    pub balance: crate::balance::BalanceSpec,
    /// Links that go down (and up) during the run, with each epoch's routing.
    pub failures: Option<Box<crate::failure::FailureSchedule>>,
    /// Priority flow control on every switch (`None`: every class is lossy).
    pub pfc: Option<crate::pfc::PfcSpec>,
    /// Switches send ACKs, NACKs and CNPs ahead of their queues (`[switch] ack_priority`).
    pub ack_priority: bool,
    /// Switch ports admit a packet only while this many more bytes fit their byte buffer,
    /// whatever the packet's own size (`[switch] admission_room`: ns-3's stopped device queue).
    pub admission_room: Option<u32>,
    /// A training job whose ranks' walkers start its flows ([`crate::job`]).
    pub job: Option<std::sync::Arc<crate::job::JobSpec>>,
}

impl Model {
    /// The egress port (local index) a packet takes at `node`.
    #[inline]
    pub fn egress_port(&self, node: u32, packet: &Packet) -> Option<u32> {
        let reverse = packet.kind.is_feedback();
        if packet.explicit_path() {
            let path = self.flows.flows[packet.flow as usize].path.as_ref()?;
            let hops = if reverse {
                &path.reverse
            } else {
                &path.forward
            };
            return hops.get(packet.hop as usize).copied();
        }
        self.net
            .route(node, packet.dst, ecmp_hash(packet.flow, reverse, node))
    }

    /// The local port by which host `node` sends `flow`'s packets at `now` (its data at the
    /// source; its feedback, `reverse`, at the destination): 0 at a host of one port; else the
    /// first hop of the flow's route ([`crate::flow::first_port`]), over the live links while
    /// some link is down (as switches reroute), the flow's explicit path when it has one.
    #[inline(never)]
    pub fn host_port(&self, node: u32, flow: u32, reverse: bool, now: SimTime) -> u32 {
        if self.net.degree(node) == 1 {
            return 0;
        }
        let spec = &self.flows.flows[flow as usize];
        if spec.path.is_none()
            && let Some(f) = self.failures.as_deref().filter(|f| f.rerouting(now))
        {
            let dst = if reverse { spec.src } else { spec.dst };
            let hash = ecmp_hash(flow, reverse, node);
            if let Some(local) = f.route(&self.net, node, dst, hash, now, &mut Vec::new()) {
                return local;
            }
        }
        crate::flow::first_port(&self.net, &self.flows, flow, reverse)
    }

    /// Whether a FIFO switch port's departures depend on nothing but its own queue, so the
    /// window engine may send a window's worth of them as a batch (`engine/node/port/batch.rs`):
    /// no PFC (a pause arriving inside the window would stop them), no shared buffer and no
    /// load balancing beyond plain ECMP (both read other ports' queues as they stand), no ACK
    /// lane (an ACK arriving later would go first), no link failures, and no flow whose
    /// packets switches stamp with telemetry (the stamp reads the queue at the start).
    pub fn batches_departures(&self) -> bool {
        self.pfc.is_none()
            && self.shared_buffer.is_none()
            && self.balance.is_plain_ecmp()
            && !self.ack_priority
            && self.failures.is_none()
            && !self.flows.flows.iter().any(|f| f.transport.telemetry())
    }

    /// Smallest packet any flow sends (bytes), for the lookahead.
    pub fn min_packet(&self) -> Bytes {
        let smallest = self
            .flows
            .flows
            .iter()
            .map(|f| f.transport.min_packet(f.size))
            .min()
            .unwrap_or(Bytes(u64::MAX / 8_000_000_000_000));
        let smallest = match self.pfc {
            // PAUSE frames cross links too.
            Some(_) => smallest.min(Bytes(crate::pfc::FRAME_BYTES as u64)),
            None => smallest,
        };
        // So do the notices of finished dependencies.
        if self.flows.has_remote_dependencies() {
            smallest.min(crate::flow::NOTIFY_BYTES)
        } else {
            smallest
        }
    }

    /// The lookahead: smallest propagation + serialization of the smallest packet over all
    /// links.
    pub fn lookahead(&self) -> SimTime {
        self.net.lookahead(self.min_packet())
    }

    /// The initial events: one `FlowStart` per flow that starts on its own (at its source
    /// host), then the first wake-up of each job rank's walker (at its host).
    pub fn initial_events(&self) -> impl Iterator<Item = (u32, Event)> + '_ {
        let flows = self.flows.flows.iter().enumerate();
        flows
            .filter(|&(i, _)| self.starts_alone(i as u32))
            .map(|(i, f)| (f.src, self.start_event(i as u32)))
            .chain(self.program_events())
    }

    /// True when flow `flow` starts at its `start` time, on its own: it waits for no other
    /// flow and no job walker releases it.
    #[inline]
    pub fn starts_alone(&self, flow: u32) -> bool {
        self.flows.flows[flow as usize].after.is_none()
            && !self.job.as_ref().is_some_and(|j| j.owns(flow))
    }

    /// The first wake-up of each job rank's walker, at time zero at its host.
    pub fn program_events(&self) -> impl Iterator<Item = (u32, Event)> + '_ {
        let hosts = self.job.as_ref().map_or(&[][..], |j| &j.hosts[..]);
        hosts.iter().map(|&host| {
            let key = EventKey::new(SimTime::ZERO, Phase::Program, SimTime::ZERO);
            let kind = EventKind::Program { token: 0 };
            (host, Event { key, kind })
        })
    }

    /// Flow `flow`'s `FlowStart` event (at its start time).
    pub fn start_event(&self, flow: u32) -> Event {
        let f = &self.flows.flows[flow as usize];
        Event {
            key: EventKey::new(f.start, Phase::FlowStart, SimTime::ZERO),
            kind: EventKind::FlowStart { flow },
        }
    }
}

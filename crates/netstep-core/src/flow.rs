//! Flows: the read-only flow table (who sends what to whom, when, with which transport and
//! optional explicit path) and the per-flow outcome the run reports.

mod outcomes;

pub use outcomes::{FlowOutcome, FlowOutcomes, Iter as OutcomeIter};

use crate::network::{Network, ecmp_hash};
use crate::transport::{SizeDistribution, TransportSpec};
use crate::units::{Bytes, SimTime};

/// An explicit path: the local egress port to use at each hop, for data and for ACKs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExplicitPath {
    /// Local port at hop `h` of the data direction (hop 0 is the sender's NIC).
    pub forward: Box<[u32]>,
    /// Local port at hop `h` of the ACK direction.
    pub reverse: Box<[u32]>,
}

/// One flow.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowSpec {
    /// Sending host (node index).
    pub src: u32,
    /// Receiving host (node index).
    pub dst: u32,
    /// Start time.
    pub start: SimTime,
    /// Payload bytes to deliver (open loop: packets × packet size). Zero (a TCP or RDMA row of
    /// a flow file) is a flow that sends nothing and never completes, as in the HPCC simulator.
    pub size: Bytes,
    /// Transport and its parameters (shared by the flows that have the same: a trace of
    /// millions of flows keeps a handful).
    pub transport: std::sync::Arc<TransportSpec>,
    /// Explicit path, or `None` for ECMP.
    pub path: Option<Box<ExplicitPath>>,
    /// Traffic class (0-7) of the flow's packets, data and feedback alike.
    pub class: u8,
    /// Flows that must finish before this one starts (`None`: it starts at `start`).
    pub after: Option<Box<Dependencies>>,
    /// The flow's source and destination port numbers, `[sport, dport]`, when its input gave
    /// them (a flow file's `sport` / `dport` columns, as the HPCC simulator's flow files do):
    /// labels carried to the HPCC-format output, not used to route.
    pub ports: Option<[u16; 2]>,
}

/// What a flow waits for: other flows' finish, then a delay (compute time).
///
/// A dependency finishes when its receiver has every byte. The flow's source learns of it at
/// once when it is that receiver (a collective's next step), otherwise after the unloaded
/// one-way latency of a [`NOTIFY_BYTES`] message from the receiver to the source
/// ([`notify_latency`]). The flow starts at `max(start, last notice + delay)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dependencies {
    /// Flow ids (distinct).
    pub flows: Box<[u32]>,
    /// Time between the last notice and the start.
    pub delay: SimTime,
}

/// Size of the notice a dependency's receiver sends to a dependent flow's source on another
/// host (a minimum Ethernet frame).
pub const NOTIFY_BYTES: Bytes = Bytes(64);

/// Why a flow table's dependencies cannot run.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DependencyError {
    /// A flow names a flow id that does not exist.
    #[error("flow {flow} waits for flow {missing}, which does not exist ({count} flows)")]
    Unknown {
        /// The waiting flow.
        flow: u32,
        /// The id it names.
        missing: u32,
        /// How many flows there are.
        count: usize,
    },
    /// A flow waits for itself through a chain of dependencies.
    #[error("flow {flow} waits for itself through {cycle:?}")]
    Cycle {
        /// A flow on the cycle.
        flow: u32,
        /// The cycle, starting and ending at `flow`: each flow waits for the next.
        cycle: Vec<u32>,
    },
}

/// All flows, plus each flow's slot at its sender and receiver host.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    /// Flows by index (= flow id).
    pub flows: Vec<FlowSpec>,
    /// Index of the flow among the flows sent by its source host.
    pub src_slot: Vec<u32>,
    /// Index of the flow among the flows received by its destination host.
    pub dst_slot: Vec<u32>,
    /// The flows waiting for each flow, in compressed rows: those of flow `f` are
    /// `dependents[dependents_at[f]..dependents_at[f + 1]]` (both empty when no flow waits).
    /// Flows sourced at each node (the number of its sender slots).
    sent: Vec<u32>,
    /// Flows sinking at each node (the number of its receiver slots).
    received: Vec<u32>,
    dependents_at: Vec<u32>,
    dependents: Vec<u32>,
}

impl FlowTable {
    /// Builds the table and assigns per-host slots (dense, in flow order).
    pub fn new(flows: Vec<FlowSpec>, n_nodes: usize) -> FlowTable {
        let mut sent = vec![0u32; n_nodes];
        let mut received = vec![0u32; n_nodes];
        let mut src_slot = Vec::with_capacity(flows.len());
        let mut dst_slot = Vec::with_capacity(flows.len());
        for f in &flows {
            src_slot.push(sent[f.src as usize]);
            sent[f.src as usize] += 1;
            dst_slot.push(received[f.dst as usize]);
            received[f.dst as usize] += 1;
        }
        let (dependents_at, dependents) = dependents(&flows);
        FlowTable {
            flows,
            src_slot,
            dst_slot,
            sent,
            received,
            dependents_at,
            dependents,
        }
    }

    /// Flows sourced at `node` (its sender slots).
    #[inline]
    pub fn sourced_at(&self, node: u32) -> u32 {
        self.sent.get(node as usize).copied().unwrap_or(0)
    }

    /// Flows sinking at `node` (its receiver slots).
    #[inline]
    pub fn sinking_at(&self, node: u32) -> u32 {
        self.received.get(node as usize).copied().unwrap_or(0)
    }

    /// The flows waiting for `flow` (in flow id order).
    #[inline]
    pub fn dependents(&self, flow: u32) -> &[u32] {
        match self.dependents_at.get(flow as usize..flow as usize + 2) {
            Some(&[from, to]) => &self.dependents[from as usize..to as usize],
            _ => &[],
        }
    }

    /// True when some flow waits for a flow received by another host than its source (a
    /// notice then crosses the network: see [`Dependencies`]).
    pub fn has_remote_dependencies(&self) -> bool {
        self.flows.iter().any(|f| {
            f.after.as_ref().is_some_and(|deps| {
                deps.flows
                    .iter()
                    .any(|&d| self.flows.get(d as usize).is_some_and(|d| d.dst != f.src))
            })
        })
    }

    /// Checks that every dependency names an existing flow and that no flow waits for itself
    /// (through any chain): [`check_dependencies`].
    pub fn check_dependencies(&self) -> Result<(), DependencyError> {
        check_dependencies(&self.flows)
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.flows.len()
    }
    /// True when there are no flows.
    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }
}

/// Checks that every dependency names an existing flow and that no flow waits for itself
/// (through any chain); a cycle is reported from its lowest flow id.
pub fn check_dependencies(flows: &[FlowSpec]) -> Result<(), DependencyError> {
    let n = flows.len();
    for (i, f) in flows.iter().enumerate() {
        for &d in f.after.iter().flat_map(|deps| deps.flows.iter()) {
            if d as usize >= n {
                return Err(DependencyError::Unknown {
                    flow: i as u32,
                    missing: d,
                    count: n,
                });
            }
        }
    }
    let (at, list) = dependents(flows);
    if at.is_empty() {
        return Ok(());
    }
    // Kahn's algorithm: what is never released lies on a cycle or behind one.
    let mut waiting: Vec<u32> = flows
        .iter()
        .map(|f| f.after.as_ref().map_or(0, |d| d.flows.len() as u32))
        .collect();
    let mut ready: Vec<u32> = (0..n as u32)
        .filter(|&f| waiting[f as usize] == 0)
        .collect();
    let mut released = 0;
    while let Some(f) = ready.pop() {
        released += 1;
        for &d in &list[at[f as usize] as usize..at[f as usize + 1] as usize] {
            waiting[d as usize] -= 1;
            if waiting[d as usize] == 0 {
                ready.push(d);
            }
        }
    }
    if released == n {
        return Ok(());
    }
    // Walk from a blocked flow through blocked dependencies until a flow repeats.
    let first = waiting.iter().position(|&w| w > 0).unwrap_or(0) as u32;
    let mut seen = vec![usize::MAX; n];
    let mut walk = Vec::new();
    let mut here = first;
    while seen[here as usize] == usize::MAX {
        seen[here as usize] = walk.len();
        walk.push(here);
        here = flows[here as usize]
            .after
            .iter()
            .flat_map(|deps| deps.flows.iter())
            .copied()
            .find(|&d| waiting[d as usize] > 0)
            .unwrap_or(here);
    }
    // Each flow of the cycle waits for the next; the last waits for the first.
    let mut cycle: Vec<u32> = walk[seen[here as usize]..].to_vec();
    let flow = *cycle.iter().min().unwrap_or(&here);
    let from = cycle.iter().position(|&c| c == flow).unwrap_or(0);
    cycle.rotate_left(from);
    cycle.push(flow);
    Err(DependencyError::Cycle { flow, cycle })
}

/// The compressed rows of [`FlowTable::dependents`].
fn dependents(flows: &[FlowSpec]) -> (Vec<u32>, Vec<u32>) {
    if flows.iter().all(|f| f.after.is_none()) {
        return (Vec::new(), Vec::new());
    }
    let mut at = vec![0u32; flows.len() + 1];
    for f in flows {
        for &d in f.after.iter().flat_map(|deps| deps.flows.iter()) {
            if let Some(slot) = at.get_mut(d as usize + 1) {
                *slot += 1;
            }
        }
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    let mut fill = at.clone();
    let mut list = vec![0u32; at[flows.len()] as usize];
    for (i, f) in flows.iter().enumerate() {
        for &d in f.after.iter().flat_map(|deps| deps.flows.iter()) {
            if let Some(slot) = fill.get_mut(d as usize) {
                list[*slot as usize] = i as u32;
                *slot += 1;
            }
        }
    }
    (at, list)
}

/// The unloaded one-way latency of a [`NOTIFY_BYTES`] notice from host `from` to host `to`
/// (serialization and propagation on every link of the route ECMP picks for `flow`), or `None`
/// when `to` is unreachable.
pub fn notify_latency(net: &Network, from: u32, to: u32, flow: u32) -> Option<SimTime> {
    let mut latency = SimTime::ZERO;
    let mut node = from;
    let mut hops = 0;
    while node != to {
        let local = net.route(node, to, ecmp_hash(flow, false, node))?;
        let port = net.port_id(node, local);
        let class = net.class_of(port);
        latency = latency + class.delay + class.rate.serialization(NOTIFY_BYTES);
        node = net.port_peer[port as usize];
        hops += 1;
        if hops > net.n_nodes() {
            return None;
        }
    }
    Some(latency)
}

/// The egress ports a flow's data (or ACKs, with `reverse`) traverse: `(node, local port)` per
/// hop, from the sender's NIC to the last switch. `None` if routing cannot reach the peer.
pub fn flow_route(
    net: &Network,
    flows: &FlowTable,
    flow: u32,
    reverse: bool,
) -> Option<Vec<(u32, u32)>> {
    let spec = &flows.flows[flow as usize];
    let (src, dst) = if reverse {
        (spec.dst, spec.src)
    } else {
        (spec.src, spec.dst)
    };
    let mut hops = Vec::new();
    let mut node = src;
    while node != dst {
        let local = match &spec.path {
            Some(path) => *(if reverse {
                &path.reverse
            } else {
                &path.forward
            })
            .get(hops.len())?,
            None => net.route(node, dst, ecmp_hash(flow, reverse, node))?,
        };
        hops.push((node, local));
        node = net.port_peer[net.port_id(node, local) as usize];
        if hops.len() > net.n_nodes() {
            return None;
        }
    }
    Some(hops)
}

/// The local port by which the host sending `flow`'s packets (its source for data, its
/// destination for feedback when `reverse`) sends them: the first hop of the flow's route
/// ([`flow_route`]'s), so one port for every packet of the flow and direction. Port 0 at a
/// host of one port, and where there is no route (the flow's route was checked at load).
#[inline]
pub fn first_port(net: &Network, flows: &FlowTable, flow: u32, reverse: bool) -> u32 {
    let spec = &flows.flows[flow as usize];
    let (src, dst) = if reverse {
        (spec.dst, spec.src)
    } else {
        (spec.src, spec.dst)
    };
    if net.degree(src) == 1 {
        return 0;
    }
    let local = match &spec.path {
        Some(path) if reverse => path.reverse.first().copied(),
        Some(path) => path.forward.first().copied(),
        None => net.route(src, dst, ecmp_hash(flow, reverse, src)),
    };
    local.unwrap_or(0)
}

/// Flow completion time on an otherwise empty network, exactly: every data packet goes through
/// the store-and-forward pipeline of the flow's path (each egress port serializes one packet
/// at a time, in order; a packet starts on a port once its last bit has arrived and the port
/// is free), and the flow completes when the last bit of its last packet reaches the receiver.
///
/// What is counted: the wire size of every data packet (headers included: every packet must
/// carry them), serialization at every hop at that hop's rate, and propagation. What is not:
/// the ACKs (the FCT ends when the receiver has every byte), and any congestion window. A TCP
/// flow's packets are all available at its start; an open-loop flow's packets leave when its
/// source emits them (the same keyed random stream as in the run, so exponential gaps and
/// sizes are replayed exactly). Hence `fct >= ideal_fct` for every completed flow, with
/// equality for a lone open-loop flow.
pub fn ideal_fct(net: &Network, flows: &FlowTable, flow: u32, seed: u64) -> Option<SimTime> {
    let spec = &flows.flows[flow as usize];
    let hops = path_ports(net, flows, flow)?;
    let mut free = vec![SimTime::ZERO; hops.len()];
    let mut arrival = SimTime::ZERO;
    let periodic = periodic_packets(&spec.transport, spec.size);
    if let Some(Periodic { n, full, gap, .. }) = periodic {
        // Packets released every `gap` (TCP: 0, all available at the start), all but the last
        // of one size: the pipeline has a closed form (O(hops), not O(packets x hops)). With
        // A_h the time the first packet leaves hop h and M_h the slowest serialization up to
        // h, packet j leaves hop h at A_h + j * max(gap, M_h) (by induction over hops: a
        // queue fed every P serves every max(P, its serialization), and the first packet
        // never waits). The last packet then goes through the loop below like any packet.
        if n > 1 {
            let (mut first, mut slowest, mut delay_before) = (SimTime::ZERO, gap, SimTime::ZERO);
            for (&(port, delay), free) in hops.iter().zip(free.iter_mut()) {
                let ser = net.serialization(port, full);
                first = first + delay_before + ser;
                slowest = slowest.max(ser);
                *free = first + SimTime(slowest.0.saturating_mul(n - 2));
                delay_before = delay;
            }
            arrival = free.last().copied().unwrap_or(SimTime::ZERO) + delay_before;
        }
    }
    let mut send = |release: SimTime, size: u32| {
        arrival = arrival.max(through_pipeline(net, &hops, &mut free, release, size));
    };
    match periodic {
        Some(Periodic { n: 0, .. }) => {}
        Some(Periodic { n, gap, last, .. }) => {
            send(SimTime(gap.0.saturating_mul(n - 1)), last);
        }
        None => for_each_release(&spec.transport, spec.size, flow, seed, &mut send),
    }
    Some(arrival)
}

/// A flow whose `n` data packets are released every `gap` from its start and all have `full`
/// wire bytes but the last (`last`).
#[derive(Clone, Copy, Debug)]
struct Periodic {
    n: u64,
    full: u32,
    last: u32,
    gap: SimTime,
}

/// The flow's packets as a [`Periodic`] train: TCP and RDMA (every segment available at the
/// start), open loop with constant gaps and sizes; `None` for random gaps or sizes.
fn periodic_packets(transport: &TransportSpec, size: Bytes) -> Option<Periodic> {
    match transport {
        TransportSpec::OpenLoop(s)
            if !s.exponential && s.size_distribution == SizeDistribution::Constant =>
        {
            let bytes = s.packet_size.0 as u32;
            Some(Periodic {
                n: s.n_packets as u64,
                full: bytes,
                last: bytes,
                gap: s.interval,
            })
        }
        _ => transport
            .uniform_packets(size)
            .map(|(n, full, last)| Periodic {
                n,
                full,
                last,
                gap: SimTime::ZERO,
            }),
    }
}

/// [`ideal_fct`] by its definition: every data packet, one at a time, through every hop
/// (O(packets x hops); the closed form for TCP is checked against it by a property test).
pub fn ideal_fct_per_packet(
    net: &Network,
    flows: &FlowTable,
    flow: u32,
    seed: u64,
) -> Option<SimTime> {
    let spec = &flows.flows[flow as usize];
    let hops = path_ports(net, flows, flow)?;
    let mut free = vec![SimTime::ZERO; hops.len()];
    let mut arrival = SimTime::ZERO;
    let mut send = |release: SimTime, size: u32| {
        arrival = arrival.max(through_pipeline(net, &hops, &mut free, release, size));
    };
    for_each_release(&spec.transport, spec.size, flow, seed, &mut send);
    Some(arrival)
}

/// The egress ports of `flow`'s forward path, each with its link's propagation delay.
fn path_ports(net: &Network, flows: &FlowTable, flow: u32) -> Option<Vec<(u32, SimTime)>> {
    Some(
        flow_route(net, flows, flow, false)?
            .into_iter()
            .map(|(node, local)| {
                let port = net.port_id(node, local);
                (port, net.class_of(port).delay)
            })
            .collect(),
    )
}

/// Sends one packet of `size` bytes, released at `release`, through the store-and-forward
/// pipeline of `hops` (each port's next free time in `free`, updated); returns when its last
/// bit reaches the end of the path.
fn through_pipeline(
    net: &Network,
    hops: &[(u32, SimTime)],
    free: &mut [SimTime],
    release: SimTime,
    size: u32,
) -> SimTime {
    let mut t = release;
    for (&(port, delay), free) in hops.iter().zip(free.iter_mut()) {
        let done = t.max(*free) + net.serialization(port, size);
        *free = done;
        t = done + delay;
    }
    t
}

/// Calls `send(release, wire size)` for every data packet a flow's source emits, relative to
/// the flow's start, ignoring any congestion window.
fn for_each_release(
    transport: &TransportSpec,
    size: Bytes,
    flow: u32,
    seed: u64,
    send: &mut impl FnMut(SimTime, u32),
) {
    match transport {
        TransportSpec::OpenLoop(spec) => {
            use crate::transport::{FlowEnds, OpenLoopSender, TransportOut};
            let ends = FlowEnds {
                flow,
                src: 0,
                dst: 0,
                size,
                seed,
                line_rate_bps: 0.0,
                base_rtt: SimTime::ZERO,
                nic_pulls: false,
            };
            let mut out = TransportOut::default();
            let mut sender = OpenLoopSender::start(spec, ends, SimTime::ZERO, &mut out);
            loop {
                for packet in out.packets.drain(..) {
                    send(SimTime(packet.sent_ps), packet.size_bytes);
                }
                let Some((at, token)) = out.timers.pop() else {
                    break;
                };
                sender.on_timer(spec, token, at, &mut out);
            }
        }
        _ => {
            for wire in transport.packet_sizes(size) {
                send(SimTime::ZERO, wire.0 as u32);
            }
        }
    }
}

/// Round-trip time of a flow with empty queues: its largest data packet out along the data
/// path plus its smallest packet (the ACK) back along the reverse path.
pub fn base_rtt(net: &Network, flows: &FlowTable, flow: u32) -> Option<SimTime> {
    let spec = &flows.flows[flow as usize];
    let (data, ack) = (
        spec.transport.max_packet(spec.size),
        spec.transport.feedback_packet(spec.size),
    );
    let mut rtt = SimTime::ZERO;
    for (reverse, size) in [(false, data), (true, ack)] {
        for (node, local) in flow_route(net, flows, flow, reverse)? {
            let port = net.port_id(node, local);
            rtt = rtt + net.class_of(port).delay + net.class_of(port).rate.serialization(size);
        }
    }
    Some(rtt)
}

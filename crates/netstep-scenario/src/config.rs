//! The scenario file format: serde types that mirror the TOML one to one. Unknown keys are
//! rejected everywhere. Every field is documented here with its unit, default and an example;
//! `scenarios/REFERENCE.md` is the same reference for readers.

use serde::{Deserialize, Serialize};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Scenario name; `netstep run` writes to `out/<name>` unless told otherwise.
    ///
    /// Unit: text · Default: the file stem · Example: `name = "quickstart"`
    pub name: Option<String>,
    /// Run control: duration, seed, threads, window (`[simulation]` below).
    ///
    /// Unit: table · Default: see below · Example: `[simulation]`
    #[serde(default)]
    pub simulation: SimulationConfig,
    /// The network: `kind` picks the shape (`[topology]` below).
    ///
    /// Unit: table · Default: required · Example: `[topology]`
    pub topology: TopologyConfig,
    /// Route selection among equal-cost next hops (`[routing]` below).
    ///
    /// Unit: table · Default: ECMP (by flow hash) · Example: `[routing]`
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Every host's NIC (`[nic]` below).
    ///
    /// Unit: table · Default: see below (1 MB buffer, 2 packets per flow, round robin) ·
    /// Example: `[nic]`
    #[serde(default)]
    pub nic: NicFileConfig,
    /// Settings of every switch: shared buffer, PFC, ACK priority (`[switch]` below).
    ///
    /// Unit: table · Default: each port its own buffer · Example: `[switch]`
    #[serde(default)]
    pub switch: SwitchFileConfig,
    /// Default transport of every traffic block that does not set its own (`[transport]`
    /// below).
    ///
    /// Unit: table · Default: `tcp` (NewReno, SACK) with defaults · Example: `[transport]`
    pub transport: Option<TransportConfig>,
    /// Traffic blocks; several may be combined (`[[traffic]]` below).
    ///
    /// Unit: array of tables · Default: none (no flows) · Example: `[[traffic]]`
    #[serde(default)]
    pub traffic: Vec<TrafficConfig>,
    /// Optional trace tables and their filters; `flows`, `links` and `run` are always written
    /// (`[trace]` below).
    ///
    /// Unit: table · Default: no optional tables · Example: `[trace]`
    #[serde(default)]
    pub trace: TraceTablesConfig,
    /// Links that go down (and come back up) during the run (`[[failures]]` below).
    ///
    /// Unit: array of tables · Default: no failures · Example: `[[failures]]`
    #[serde(default)]
    pub failures: Vec<FailureConfig>,
}

/// `[[failures]]`: one link outage. Example:
/// `link = ["agg0_0", "core0_0"]`, `down = "2ms"`, `up = "6ms"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { link = [\"agg0_0\", \"core0_1\"], down = \"500us\" }"
)]
pub struct FailureConfig {
    /// The link that goes down, named by its two end nodes; exactly one link must join them.
    ///
    /// Unit: list of the two end nodes' names · Default: — (required) · Example:
    /// `link = ["agg0_0", "core0_1"]`
    pub link: Vec<String>,
    /// When the link goes down: a time from the start of the run, at most 2^59 ps (about 6.7
    /// days).
    ///
    /// Unit: duration · Default: — (required) · Example: `down = "500us"`
    pub down: String,
    /// When it comes back up: after `down`, at most 2^59 ps.
    ///
    /// Unit: duration, after `down` · Default: never · Example: `up = "2ms"`
    pub up: Option<String>,
}

/// `[trace]`: which optional tables to write and which packets to record.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of trace settings such as { tables = [\"packet_hops\"] }"
)]
pub struct TraceTablesConfig {
    /// Optional tables to write besides `flows`, `links` and `run`: `"packet_hops"`,
    /// `"queue_samples"`, `"cc_samples"` (`"flows"` is accepted and always written).
    /// `netstep run --trace` overrides it.
    ///
    /// Unit: list of table names · Default: `[]` · Example:
    /// `tables = ["packet_hops", "queue_samples", "cc_samples"]`
    pub tables: Option<Vec<String>>,
    /// Sampling period of `queue_samples` and `cc_samples`; above zero.
    /// `netstep run --sample-interval` overrides it.
    ///
    /// Unit: duration · Default: `"10us"` · Example: `sample_interval = "1us"`
    pub sample_interval: Option<String>,
    /// Record hops, and sample congestion control, of these flow ids only (each must exist).
    ///
    /// Unit: list of flow ids · Default: all · Example: `flows = [0, 3]`
    pub flows: Option<Vec<u32>>,
    /// Record hops at these nodes' egress ports only.
    ///
    /// Unit: list of node names · Default: all · Example: `nodes = ["edge0_0"]`
    pub nodes: Option<Vec<String>>,
    /// Record hops arriving at or after this time.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `from = "1ms"`
    pub from: Option<String>,
    /// Record hops arriving before this time; later than `from`.
    ///
    /// Unit: duration · Default: no limit · Example: `until = "2ms"`
    pub until: Option<String>,
    /// Keep 1 packet in N (at least 1), chosen by a hash of the packet id (deterministic).
    ///
    /// Unit: integer · Default: 1 · Example: `sample_one_in = 10`
    pub sample_one_in: Option<u32>,
}

impl TraceTablesConfig {
    /// Sampling period of `queue_samples` and `cc_samples` when `sample_interval` is unset.
    pub const DEFAULT_SAMPLE_INTERVAL: netstep_core::units::SimTime =
        netstep_core::units::SimTime::from_us(10);
    /// One packet in this many is traced when `sample_one_in` is unset (all).
    pub const DEFAULT_SAMPLE_ONE_IN: u32 = 1;
}

/// `[nic]`: the host NIC between a host's transports and its link (its rate is the link's).
/// Packets a host's own transports send are never dropped at the NIC: they wait in their
/// socket until the NIC admits them.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of NIC settings such as { buffer = \"64KB\" }"
)]
pub struct NicFileConfig {
    /// What may wait in the NIC's egress queue (an empty NIC always takes one packet); above
    /// zero.
    ///
    /// Unit: bytes or packets · Default: `"1MB"` · Example: `buffer = "64KB"`
    pub buffer: Option<String>,
    /// What one flow (each direction separately) may have waiting in the NIC queue, like Linux
    /// TCP Small Queues (a flow with nothing there always gets one packet in); above zero.
    ///
    /// Unit: bytes or packets · Default: `"2pkts"` · Example: `per_flow = "64KB"`
    pub per_flow: Option<String>,
    /// How the NIC takes packets from the sockets. `"round_robin"`: one packet per flow with
    /// data in turn; `"fifo"`: in the order the transports produced them (`per_flow` does not
    /// apply); `"pull"`: no egress queue, the HPCC simulator's NIC: ACKs first, then the next
    /// RDMA sender that may send builds its packet (see below; RDMA flows only).
    ///
    /// Unit: `"round_robin"`, `"fifo"`, `"pull"` · Default: `"round_robin"` · Example:
    /// `scheduler = "fifo"`
    pub scheduler: Option<NicSchedulerConfig>,
    /// A token-bucket shaper on every host's egress (replacing the host link's `shaper` there);
    /// packets wait in the NIC queue, so transports feel the backpressure and nothing is
    /// dropped.
    ///
    /// Unit: table `{ rate, burst }` · Default: none (line rate) · Example:
    /// `shaper = { rate = "1Gbps", burst = "15KB" }`
    pub shaper: Option<ShaperConfig>,
}

/// A token-bucket shaper: packets wait until `burst`-sized bucket filling at `rate` holds them.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { rate = \"1Gbps\", burst = \"15KB\" }"
)]
pub struct ShaperConfig {
    /// Token rate (long-run output rate). Example: `rate = "1Gbps"`.
    pub rate: String,
    /// Bucket size (largest burst). Example: `burst = "15KB"`.
    pub burst: String,
}

/// A two-rate three-color policer (RFC 2698): red packets are dropped.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { kind = \"trtcm\", cir = \"1Gbps\", cbs = \"15KB\", pir = \"2Gbps\", pbs = \"15KB\" }"
)]
pub struct PolicerConfig {
    /// `"trtcm"` (the only kind).
    pub kind: PolicerKind,
    /// Committed information rate. Example: `cir = "1Gbps"`.
    pub cir: String,
    /// Committed burst size. Example: `cbs = "10KB"`.
    pub cbs: String,
    /// Peak information rate (>= cir). Example: `pir = "2Gbps"`.
    pub pir: String,
    /// Peak burst size. Example: `pbs = "20KB"`.
    pub pbs: String,
}

/// Policer kinds.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PolicerKind {
    /// RFC 2698 two-rate three-color marker; red dropped.
    Trtcm,
}

/// `[switch]`: settings of every switch.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of switch settings such as { shared_buffer = \"12MB\" }"
)]
pub struct SwitchFileConfig {
    /// One buffer shared by all egress queues of each switch, with dynamic thresholds
    /// (Choudhury and Hahne 1998): a queue grows only while below
    /// `alpha x (shared_buffer - bytes all the switch's queues hold)`; a port's own byte
    /// `buffer` still caps it, a packet `buffer` is replaced by the threshold. Above zero.
    ///
    /// Unit: size · Default: none (each port has its own `buffer`) · Example:
    /// `shared_buffer = "12MB"`
    pub shared_buffer: Option<String>,
    /// The dynamic-threshold factor: a queue may grow while below `alpha` times the free shared
    /// buffer; with N congested queues each settles at `alpha B / (1 + N alpha)`. Needs
    /// `shared_buffer`.
    ///
    /// Unit: number > 0 · Default: 1 · Example: `alpha = 0.5`
    pub alpha: Option<f64>,
    /// Priority flow control (IEEE 802.1Qbb), see below: lossless `classes` (0-7) with static
    /// thresholds `xoff`, `xon` and `headroom`, or `threshold = "dynamic"` ones from the
    /// switch's free `buffer` (the HPCC simulator's switch MMU).
    ///
    /// Unit: table `{ classes, xoff, xon, headroom? }` or
    /// `{ classes, threshold = "dynamic", buffer, ... }` · Default: none (every class lossy) ·
    /// Example: `pfc = { classes = [3], xoff = "40KB", xon = "20KB", headroom = "30KB" }`
    pub pfc: Option<PfcConfig>,
    /// ACKs, NACKs and CNPs go ahead of the port's queue, in arrival order with PFC frames:
    /// strict priority, no buffer limit, no AQM, outside PFC's accounting (the HPCC simulator's
    /// ACK_HIGH_PRIO, its queue 0).
    ///
    /// Unit: bool · Default: false (they queue with their flow's class) · Example:
    /// `ack_priority = true`
    pub ack_priority: Option<bool>,
    /// A packet is admitted to a switch port's byte buffer only while `admission_room` more
    /// bytes still fit, whatever its own size (a packet that finds the port idle with nothing
    /// waiting is sent): ns-3's point-to-point device queue without a queue disc, which the
    /// device stops once it has no room for a packet of the device's MTU (1500 B), so that
    /// the traffic-control layer drops every packet, ACKs included, until it wakes.
    /// The bytes counted are the whole port's (as ns-3's one device queue), against the
    /// packet's class buffer. Packet-count buffers and lossless (PFC) packets are unaffected.
    ///
    /// Unit: size · Default: none (a packet is admitted while it fits itself) · Example:
    /// `admission_room = "1500B"`
    pub admission_room: Option<String>,
}

/// `[switch] pfc`: lossless classes and per-ingress thresholds.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { classes = [3], xoff = \"40KB\", xon = \"20KB\" }"
)]
pub struct PfcConfig {
    /// Lossless traffic classes (0-7). Example: `classes = [3]`.
    pub classes: Vec<u8>,
    /// `"static"` (default: `xoff` and `xon`) or `"dynamic"` (thresholds from the free
    /// buffer, the HPCC simulator's switch MMU: `buffer`, `reserve`, `resume_offset`,
    /// `headroom_bdps`, `shift`).
    pub threshold: Option<PfcThresholdConfig>,
    /// Static: bytes of one class from one ingress port above which the upstream is paused.
    pub xoff: Option<String>,
    /// Static: bytes at or below which it is resumed (at most `xoff`).
    pub xon: Option<String>,
    /// Static: bytes the switch can still absorb per ingress port and class after XOFF
    /// (reported when exceeded; lossless packets are never dropped). Default `"30KB"`.
    pub headroom: Option<String>,
    /// Dynamic: the switch buffer shared by its ports. Example: `buffer = "12MB"`.
    pub buffer: Option<String>,
    /// Dynamic: private bytes per ingress port and class. Default `"4096B"`.
    pub reserve: Option<String>,
    /// Dynamic: RESUME once the shared bytes are this far below the threshold. Default
    /// `"3072B"`.
    pub resume_offset: Option<String>,
    /// Dynamic: headroom per port in link bandwidth-delay products. Default 3.
    pub headroom_bdps: Option<u32>,
    /// Dynamic: the threshold is the free buffer / 2^shift at ports of the host link rate,
    /// one less per doubling above it. Default 3.
    pub shift: Option<u8>,
}

/// How PFC thresholds are set.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum PfcThresholdConfig {
    /// Fixed `xoff` and `xon`.
    Static,
    /// From the switch's free buffer.
    Dynamic,
}

/// NIC socket scheduler.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum NicSchedulerConfig {
    /// One packet per flow with data in turn.
    RoundRobin,
    /// In the order the transports produced them.
    Fifo,
    /// No egress FIFO: feedback first, then one packet pulled from the next RDMA sender
    /// that may send (the HPCC simulator's NIC).
    Pull,
}

/// `[simulation]`: run control.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of simulation settings such as { seed = 3 }"
)]
pub struct SimulationConfig {
    /// Stop before events at or after this time (above zero); flows unfinished then get null
    /// `end_ns`.
    ///
    /// Unit: duration · Default: until no event is left (all flows finished or given up) ·
    /// Example: `duration = "10ms"`
    pub duration: Option<String>,
    /// Seed of every random stream (flow pairs, sizes, arrivals, exponential gaps, loss).
    ///
    /// Unit: integer · Default: 1 · Example: `seed = 3`
    pub seed: Option<u64>,
    /// Worker threads, 1 to 1024. `netstep run --threads N` overrides it.
    ///
    /// Unit: integer · Default: 1 · Example: `threads = 2`
    pub threads: Option<usize>,
    /// `"exact"`: windows of one lookahead, results identical to a sequential simulation; a
    /// duration (above zero, at most 1000 s): opt-in time quantization.
    ///
    /// Unit: `"exact"` or duration · Default: `"exact"` · Example: `window = "5us"`
    pub window: Option<String>,
}

impl SimulationConfig {
    /// Seed of every random stream when `seed` is unset.
    pub const DEFAULT_SEED: u64 = 1;
    /// Worker threads when `threads` is unset.
    pub const DEFAULT_THREADS: usize = 1;
}

/// Link parameters; every field optional so tiers can override some of them.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of link settings such as { rate = \"10Gbps\", delay = \"1us\" }"
)]
pub struct LinkConfig {
    /// Line rate; above zero.
    ///
    /// Unit: rate, > 0 · Default: `"100Gbps"` · Example: `rate = "320kbps"`
    pub rate: Option<String>,
    /// Propagation delay.
    ///
    /// Unit: duration · Default: `"1us"` · Example: `delay = "0s"`
    pub delay: Option<String>,
    /// Egress buffer at each end: what may wait there (the packet being serialized has left
    /// it).
    ///
    /// Unit: size or packets · Default: `"1MB"` · Example: `buffer = "100pkts"`
    pub buffer: Option<String>,
    /// Probability that a packet is lost on the wire, independently per packet (resolution
    /// 1e-6).
    ///
    /// Unit: probability in [0, 1] (1 = a dead link) · Default: 0 · Example: `loss = 0.01`
    pub loss: Option<f64>,
    /// Egress queue discipline at both ends of the link (the kinds below).
    ///
    /// Unit: table · Default: FIFO · Example:
    /// `scheduler = { kind = "drr", quantum = "1500B", weights = [1, 2, 3] }`
    pub scheduler: Option<SchedulerConfig>,
    /// Active queue management at both ends, on FIFO ports only (the kinds below).
    ///
    /// Unit: table · Default: none (tail drop) · Example:
    /// `aqm = { kind = "step", k = "30KB" }`,
    /// `aqm = { kind = "red", min = "20KB", max = "60KB", max_p = 0.1, ecn = true }`
    pub aqm: Option<AqmConfig>,
    /// Token-bucket shaper at each end (below).
    ///
    /// Unit: table `{ rate, burst }` (both > 0) · Default: none · Example:
    /// `shaper = { rate = "1Gbps", burst = "15KB" }`
    pub shaper: Option<ShaperConfig>,
    /// Two-rate three-color policer (RFC 2698) on the packets arriving at each switch end
    /// (below); a host never polices its own packets.
    ///
    /// Unit: table `{ kind = "trtcm", cir, cbs, pir, pbs }` (`pir >= cir`) · Default: none ·
    /// Example:
    /// `policer = { kind = "trtcm", cir = "1Gbps", cbs = "15KB", pir = "2Gbps", pbs = "15KB" }`
    pub policer: Option<PolicerConfig>,
}

/// Active queue management on a FIFO port.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { kind = \"step\", k = \"30KB\" }"
)]
pub struct AqmConfig {
    /// `"red"` (random early detection), `"step"` (DCTCP step marking) or `"decbit"` (the
    /// DECbit congestion bit, no parameters).
    pub kind: AqmKind,
    /// RED: lower threshold on the average queue (size). Required for `red`.
    pub min: Option<String>,
    /// RED: upper threshold (size). Required for `red`.
    pub max: Option<String>,
    /// RED: drop (mark) probability at `max`. Default 0.1.
    pub max_p: Option<f64>,
    /// RED: EWMA weight in (0, 1]; 1 uses the instantaneous queue. Default 0.002.
    pub weight: Option<f64>,
    /// RED: mark ECN-capable packets instead of dropping them. Default false.
    pub ecn: Option<bool>,
    /// Step marking: threshold K on the bytes waiting (size). Required for `step`.
    pub k: Option<String>,
    /// RED and step marking: decide as a packet arrives (`"enqueue"`, default) or as it
    /// leaves, on the bytes waiting behind it (`"dequeue"`: marking only, RED needs
    /// `ecn = true`; the HPCC simulator marks at dequeue).
    pub mark_at: Option<MarkAt>,
    /// RED: spread hits by the count since the last one (Floyd and Jacobson's
    /// `p_a = p_b / (1 - count p_b)`, default true); false hits every packet with `p_b`
    /// independently (a switch's WRED; the HPCC simulator).
    pub spread: Option<bool>,
}

/// When an AQM decides on a packet.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum MarkAt {
    /// As it arrives, on the bytes ahead of it.
    Enqueue,
    /// As it leaves, on the bytes behind it.
    Dequeue,
}

/// The AQM elements.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum AqmKind {
    /// Random early detection.
    Red,
    /// DCTCP step marking.
    Step,
    /// DECbit congestion indication (no parameters).
    Decbit,
}

/// A port's queue discipline over the eight traffic classes.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { kind = \"drr\", quantum = \"1500B\", weights = [1, 2] }"
)]
pub struct SchedulerConfig {
    /// `"fifo"`, `"strict_priority"` (class 7 first), `"drr"`, `"wrr"`, `"wfq"`,
    /// `"virtual_clock"` or `"fair_queueing"`.
    pub kind: SchedulerKind,
    /// DRR: bytes a class of weight 1 may send per turn. Default `"1500B"`.
    pub quantum: Option<String>,
    /// DRR, WRR, WFQ and Virtual Clock: per-class weights, class 0 first (up to 8; missing
    /// classes weigh 1).
    pub weights: Option<Vec<u16>>,
}

/// The queue disciplines.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SchedulerKind {
    /// One FIFO, tail drop.
    Fifo,
    /// Per-class FIFOs, highest class first.
    StrictPriority,
    /// Deficit round robin.
    Drr,
    /// Weighted round robin.
    Wrr,
    /// Weighted fair queueing (GPS finish tags).
    Wfq,
    /// Virtual Clock.
    VirtualClock,
    /// Per-flow fair queueing (REAL's FQ).
    FairQueueing,
}

/// `[routing]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of routing settings such as { mode = \"ecmp\" }"
)]
pub struct RoutingConfig {
    /// How a switch picks among the equal-cost next hops of a packet (the modes are in the
    /// table below). A flow with an explicit `path` always follows it.
    ///
    /// Unit: `"ecmp"`, `"spray_random"`, `"spray_round_robin"`, `"flowlet"`, `"adaptive"` ·
    /// Default: `"ecmp"` · Example: `mode = "flowlet"`
    pub mode: Option<RoutingMode>,
    /// Idle gap after which a flow may change path; above zero. Only with `mode = "flowlet"`,
    /// and required there.
    ///
    /// Unit: duration, > 0 · Default: — (required with `mode = "flowlet"`) · Example:
    /// `flowlet_gap = "50us"`
    pub flowlet_gap: Option<String>,
    /// Weight the choice by the next hops' link rates (WCMP, Zhou et al. 2014); with `ecmp`,
    /// `spray_random` and `flowlet` only (`adaptive` already counts link rates, round robin is
    /// unweighted).
    ///
    /// Unit: bool · Default: false · Example: `weighted = true`
    pub weighted: Option<bool>,
}

/// Route selection.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RoutingMode {
    /// ECMP by flow hash.
    #[default]
    Ecmp,
    /// Per-packet keyed random choice.
    SprayRandom,
    /// Per-packet round robin.
    SprayRoundRobin,
    /// Per-flowlet hash.
    Flowlet,
    /// Per-packet least drain time.
    Adaptive,
}

// The transport kinds' config types live with their resolvers (`crate::transport`), the
// traffic kinds' with their generators (`crate::traffic`); they are part of the format.
pub use crate::topology::{CustomLink, TopologyConfig};
pub use crate::traffic::{ExplicitFlow, TrafficConfig};
pub use crate::transport::{
    CcConfig, OpenLoopConfig, RdmaCcConfig, RdmaConfig, SizeDistributionConfig, TcpConfig,
    TransportConfig,
};

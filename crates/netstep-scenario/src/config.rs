//! The scenario file format: serde types that mirror the TOML one to one. Unknown keys are
//! rejected everywhere. Every field is documented here with its unit, default and an example;
//! `scenarios/REFERENCE.md` is the same reference for readers.

use serde::{Deserialize, Serialize};

/// A whole scenario file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ScenarioFile {
    /// Scenario name. Default: the file stem. Example: `name = "quickstart"`.
    pub name: Option<String>,
    /// Run control.
    #[serde(default)]
    pub simulation: SimulationConfig,
    /// The network.
    pub topology: TopologyConfig,
    /// Route selection. Default: ECMP by flow hash.
    #[serde(default)]
    pub routing: RoutingConfig,
    /// Host NICs (every host). Default: 1 MB buffer, 2 packets per flow, round robin.
    #[serde(default)]
    pub nic: NicFileConfig,
    /// `[switch]`: settings of every switch.
    #[serde(default)]
    pub switch: SwitchFileConfig,
    /// Default transport of every traffic block that does not set its own.
    /// Default: `tcp` (NewReno with SACK) with its defaults.
    pub transport: Option<TransportConfig>,
    /// Traffic blocks; several may be combined.
    #[serde(default)]
    pub traffic: Vec<TrafficConfig>,
    /// Optional trace tables. Default: none beyond flows, links and run.
    #[serde(default)]
    pub trace: TraceTablesConfig,
    /// Links that go down (and come back up) during the run.
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
    /// The two end nodes of the link (by name).
    pub link: Vec<String>,
    /// When the link goes down (duration from the start).
    pub down: String,
    /// When it comes back up (after `down`). Default: never.
    pub up: Option<String>,
}

/// `[trace]`: which optional tables to write and which packets to record.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of trace settings such as { tables = [\"packet_hops\"] }"
)]
pub struct TraceTablesConfig {
    /// Tables to write besides flows, links and run: `"packet_hops"`, `"queue_samples"`,
    /// `"cc_samples"` (`"flows"` is accepted and always written). Example:
    /// `tables = ["packet_hops"]`.
    pub tables: Option<Vec<String>>,
    /// Sampling interval of queue_samples and cc_samples. Default `"10us"`. Example:
    /// `sample_interval = "1us"`.
    pub sample_interval: Option<String>,
    /// Record hops (and sample congestion control) of these flow ids only. Example:
    /// `flows = [0, 3]`.
    pub flows: Option<Vec<u32>>,
    /// Record hops at egress ports of these nodes only. Example: `nodes = ["edge0_0"]`.
    pub nodes: Option<Vec<String>>,
    /// Record hops arriving at or after this time. Example: `from = "1ms"`.
    pub from: Option<String>,
    /// Record hops arriving before this time. Example: `until = "2ms"`.
    pub until: Option<String>,
    /// Record 1 packet in N, by a hash of the packet id (deterministic). Default 1.
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
    /// Bytes or packets that may wait in the NIC's egress queue. Default `"1MB"`.
    /// Example: `buffer = "64KB"`.
    pub buffer: Option<String>,
    /// Bytes or packets one flow (each direction separately) may have waiting in the NIC's
    /// egress queue, like Linux TCP Small Queues. Default `"2pkts"`. Example: `per_flow = "64KB"`.
    pub per_flow: Option<String>,
    /// `"round_robin"` (default: one packet per flow with data in turn), `"fifo"` (in the
    /// order the transports produced them; `per_flow` does not apply) or `"pull"` (no FIFO:
    /// ACKs first, then the next RDMA sender that may send builds its packet; RDMA flows
    /// only).
    pub scheduler: Option<NicSchedulerConfig>,
    /// Token-bucket shaper on every host's egress. Example:
    /// `shaper = { rate = "1Gbps", burst = "15KB" }`.
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
    /// One buffer shared by all egress queues of a switch, with dynamic thresholds. Default:
    /// none (each port has its own `buffer`). Example: `shared_buffer = "12MB"`.
    pub shared_buffer: Option<String>,
    /// Dynamic-threshold factor: a queue may grow while below `alpha` times the free shared
    /// buffer. Default 1. Example: `alpha = 0.5`.
    pub alpha: Option<f64>,
    /// Priority flow control (IEEE 802.1Qbb). Example:
    /// `pfc = { classes = [3], xoff = "40KB", xon = "20KB", headroom = "30KB" }`.
    pub pfc: Option<PfcConfig>,
    /// Send ACKs, NACKs and CNPs ahead of the queues: strict priority, no buffer limit, no
    /// AQM, outside PFC (the HPCC simulator's ACK_HIGH_PRIO, queue 0). Default false: they
    /// queue with their flow's class.
    pub ack_priority: Option<bool>,
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
    /// Stop simulating at this time. Default: run until no event is left (all flows finished
    /// or given up). Example: `duration = "10ms"`.
    pub duration: Option<String>,
    /// Seed of every random stream (flow pairs, sizes, arrivals, exponential gaps). Default 1.
    pub seed: Option<u64>,
    /// Worker threads. Default 1. `netstep run --threads N` overrides it.
    pub threads: Option<usize>,
    /// `"exact"` (default: windows of one lookahead, results identical to a sequential
    /// simulation) or a duration for opt-in time quantization. Example: `window = "5us"`.
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
    /// Line rate. Default `"100Gbps"`. Example: `rate = "320kbps"`.
    pub rate: Option<String>,
    /// Propagation delay. Default `"1us"`. Example: `delay = "0s"`.
    pub delay: Option<String>,
    /// Egress buffer at each end, bytes or packets. Default `"1MB"`. Example: `buffer = "100pkts"`.
    pub buffer: Option<String>,
    /// Probability that a packet is lost on the wire (independently per packet, resolution
    /// 1e-6). Default 0. Example: `loss = 0.01`.
    pub loss: Option<f64>,
    /// Egress queue discipline at each end. Default FIFO. Example:
    /// `scheduler = { kind = "drr", quantum = "1500B", weights = [1, 2, 3] }`.
    pub scheduler: Option<SchedulerConfig>,
    /// Active queue management at each end (FIFO ports). Example:
    /// `aqm = { kind = "red", min = "20KB", max = "60KB", max_p = 0.1, ecn = true }`.
    pub aqm: Option<AqmConfig>,
    /// Token-bucket shaper at each end. Example: `shaper = { rate = "1Gbps", burst = "15KB" }`.
    pub shaper: Option<ShaperConfig>,
    /// trTCM policer at each switch end. Example:
    /// `policer = { kind = "trtcm", cir = "1Gbps", cbs = "10KB", pir = "2Gbps", pbs = "20KB" }`.
    pub policer: Option<PolicerConfig>,
}

/// Active queue management on a FIFO port.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { kind = \"step\", k = \"30KB\" }"
)]
pub struct AqmConfig {
    /// `"red"` (random early detection) or `"step"` (DCTCP step marking).
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
    /// How a switch picks among equal-cost next hops (default `"ecmp"`). Flows with an
    /// explicit `path` always follow it.
    pub mode: Option<RoutingMode>,
    /// Idle gap after which a flow may change path (`mode = "flowlet"` only; duration).
    pub flowlet_gap: Option<String>,
    /// Weight hash-based choices by link rate (WCMP; default false).
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

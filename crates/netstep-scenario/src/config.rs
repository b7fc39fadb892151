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

/// `[topology]`: one of the built-in shapes or a custom graph.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TopologyConfig {
    /// k-ary FatTree. Example: `kind = "fat_tree"`, `k = 4`.
    FatTree {
        /// Switch radix: even, 2..=256.
        k: u32,
        /// Hosts per edge switch. Default k/2.
        hosts_per_edge: Option<u32>,
        /// Defaults for every link.
        links: Option<LinkConfig>,
        /// Overrides for host-to-edge links.
        host_links: Option<LinkConfig>,
        /// Overrides for switch-to-switch links.
        fabric_links: Option<LinkConfig>,
    },
    /// Leaf-spine. Example: `kind = "leaf_spine"`, `leaves = 4`, `spines = 2`, `hosts_per_leaf = 8`.
    LeafSpine {
        /// Leaf switches (>= 1).
        leaves: u32,
        /// Spine switches (>= 1).
        spines: u32,
        /// Hosts per leaf (>= 1).
        hosts_per_leaf: u32,
        /// Defaults for every link.
        links: Option<LinkConfig>,
        /// Overrides for host-to-leaf links.
        host_links: Option<LinkConfig>,
        /// Overrides for leaf-to-spine links.
        fabric_links: Option<LinkConfig>,
    },
    /// Rail-optimized AI-cluster fabric (`netstep_core::topology::rail`). Example:
    /// `kind = "rail_optimized"`, `servers = 16`, `gpus = 8`, `spines = 4`.
    RailOptimized {
        /// Servers (>= 1).
        servers: u32,
        /// GPUs per server, one rail each (>= 1).
        gpus: u32,
        /// Spines over the rail leaves (0: none; cross-rail traffic then needs `pxn`).
        spines: u32,
        /// Cross-rail traffic over NVLink to the destination's rail first (NCCL's PXN).
        /// Default false (over the spines).
        pxn: Option<bool>,
        /// Defaults for every link.
        links: Option<Box<LinkConfig>>,
        /// Overrides for GPU-to-NIC links (PCIe).
        host_links: Option<Box<LinkConfig>>,
        /// Overrides for NIC-to-NVSwitch links (the intra-server fabric).
        nvlink_links: Option<Box<LinkConfig>>,
        /// Overrides for NIC-to-rail-leaf links.
        rail_links: Option<Box<LinkConfig>>,
        /// Overrides for rail-leaf-to-spine links.
        fabric_links: Option<Box<LinkConfig>>,
    },
    /// 2D or 3D torus with dimension-order routing. Example: `kind = "torus"`,
    /// `dims = [4, 4]`, `hosts_per_switch = 1`.
    Torus {
        /// Ring sizes: 2 or 3 dimensions, each >= 2.
        dims: Vec<u32>,
        /// Hosts per switch (>= 1). Default 1.
        hosts_per_switch: Option<u32>,
        /// Defaults for every link.
        links: Option<LinkConfig>,
        /// Overrides for host-to-switch links.
        host_links: Option<LinkConfig>,
        /// Overrides for switch-to-switch links.
        fabric_links: Option<LinkConfig>,
    },
    /// Dumbbell: `left` hosts — switch — bottleneck — switch — `right` hosts.
    Dumbbell {
        /// Hosts on the left (>= 1).
        left: u32,
        /// Hosts on the right (>= 1).
        right: u32,
        /// Defaults for every link.
        links: Option<LinkConfig>,
        /// Overrides for host links.
        host_links: Option<LinkConfig>,
        /// Overrides for the bottleneck link.
        fabric_links: Option<LinkConfig>,
    },
    /// Any graph of named hosts and switches.
    Custom {
        /// Host names. Example: `hosts = ["a", "b"]`.
        #[serde(default)]
        hosts: Vec<String>,
        /// Switch names. Example: `switches = ["s1"]`.
        #[serde(default)]
        switches: Vec<String>,
        /// Links between named nodes, each with optional rate/delay/buffer.
        #[serde(default)]
        links: Vec<CustomLink>,
        /// Defaults for every link.
        defaults: Option<LinkConfig>,
        /// More nodes from a CSV or Parquet file with columns `name` and `kind` (`host` or
        /// `switch`), relative to the scenario file's folder.
        nodes_file: Option<String>,
        /// More links from a CSV or Parquet file with columns `a`, `b` and optionally `rate`
        /// (or `rate_bps`), `delay` (or `delay_ns`, `delay_ps`), `buffer` (or `buffer_bytes`),
        /// `loss`.
        links_file: Option<String>,
        /// Rows of `links_file` (counted when the scenario is loaded).
        #[serde(skip)]
        file_links: u64,
    },
}

/// One link of a custom topology.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { a = \"s1\", b = \"s2\" }"
)]
pub struct CustomLink {
    /// Queue discipline at both ends (see the link tables).
    pub scheduler: Option<SchedulerConfig>,
    /// Active queue management at both ends (see the link tables).
    pub aqm: Option<AqmConfig>,
    /// Token-bucket shaper at both ends (see the link tables).
    pub shaper: Option<ShaperConfig>,
    /// trTCM policer at both switch ends (see the link tables).
    pub policer: Option<PolicerConfig>,
    /// One end (node name).
    pub a: String,
    /// The other end (node name).
    pub b: String,
    /// Line rate (default from `defaults`).
    pub rate: Option<String>,
    /// Propagation delay (default from `defaults`).
    pub delay: Option<String>,
    /// Egress buffer (default from `defaults`).
    pub buffer: Option<String>,
    /// Loss probability (default from `defaults`).
    pub loss: Option<f64>,
    /// Overrides for the `a -> b` direction only (`a`'s egress port). Example:
    /// `a_to_b = { rate = "1Gbps", buffer = "100KB" }`.
    pub a_to_b: Option<LinkConfig>,
    /// Overrides for the `b -> a` direction only (`b`'s egress port).
    pub b_to_a: Option<LinkConfig>,
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

/// A transport and its parameters.
// Parsed once per traffic block and resolved at once: the size of the largest variant
// (RDMA's parameters) costs nothing that boxing would save.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TransportConfig {
    /// Open-loop packets, no ACKs.
    OpenLoop {
        /// Wire size of each packet. Default `"1000B"`.
        packet_size: Option<String>,
        /// Gap between packets. Give `interval` or `rate`, not both. Example: `interval = "1s"`.
        interval: Option<String>,
        /// Sending rate (the interval is packet_size·8/rate). Example: `rate = "1Gbps"`.
        rate: Option<String>,
        /// Exponential gaps with that mean (Poisson packets). Default false.
        exponential: Option<bool>,
        /// `"constant"` (default) or `"exponential"` packet sizes with mean `packet_size`
        /// (exponential service times at a single bottleneck: M/M/1).
        size_distribution: Option<SizeDistributionConfig>,
        /// Send packets ECN-capable (ECT(0)) so marking queues mark instead of dropping.
        /// Default false.
        ecn: Option<bool>,
    },
    /// TCP (`kind = "tcp"`, or `"tcp_newreno"` as before): reliable sender with SACK recovery
    /// and a congestion control. An unset field takes its default from
    /// `netstep_core::transport::tcp::TcpSpec::new`, the one place defaults are written
    /// (`scenarios/REFERENCE.md` states them, checked by a test).
    #[serde(alias = "tcp_newreno")]
    Tcp {
        /// Congestion control.
        cc: Option<CcConfig>,
        /// SACK (RFC 2018) and SACK-based recovery (RFC 6675); false gives NewReno's
        /// cumulative-ACK recovery (RFC 6582).
        sack: Option<bool>,
        /// Delayed-ACK timeout (ACK every second segment or after this delay); `"0s"` is
        /// off. Example: `delayed_ack = "200us"`.
        delayed_ack: Option<String>,
        /// Slow-start increase per ACK in segments (RFC 3465 `L`); 0 = no limit.
        abc_limit: Option<u32>,
        /// Pace segments at 2x / 1.2x cwnd per RTT (Linux `fq` pacing).
        pacing: Option<bool>,
        /// Payload per segment.
        mss: Option<String>,
        /// Header bytes per segment and ACK size.
        header: Option<String>,
        /// Initial window, segments.
        initial_cwnd: Option<u32>,
        /// Minimum RTO.
        rto_min: Option<String>,
        /// RTO before the first RTT sample.
        rto_initial: Option<String>,
        /// Maximum backed-off RTO.
        rto_max: Option<String>,
        /// Retransmission timeouts in a row without progress before the flow is given up
        /// (marked failed, `fail_reason = "retry_limit"`).
        max_retries: Option<u32>,
        /// DCTCP's EWMA gain `g` in (0, 1] (`cc = "dctcp"` only).
        dctcp_g: Option<f64>,
    },
    /// RDMA (RoCEv2-style): rate-based sender, per-packet ACKs, go-back-N, with a rate control.
    /// An unset field takes its default from `netstep_core::transport::rdma::RdmaSpec::new`
    /// and the rate control's `Default` (`DcqcnSpec`, `TimelySpec`, `HpccSpec`).
    Rdma {
        /// Rate control: `"dcqcn"`, `"timely"` or `"hpcc"`.
        cc: Option<RdmaCcConfig>,
        /// Payload per packet.
        mtu: Option<String>,
        /// Header bytes per data packet (and the ACK/NACK size unless `ack_size` is given).
        header: Option<String>,
        /// ACK/NACK size.
        ack_size: Option<String>,
        /// No progress for this long: go back to the first unacknowledged packet.
        rto: Option<String>,
        /// Timeouts in a row without progress before the flow is given up.
        max_retries: Option<u32>,
        /// At most one NACK per gap in this interval.
        nack_interval: Option<String>,
        /// Acknowledge in-order packets once every this many (coalesced ACKs).
        ack_every: Option<u32>,
        /// Loss recovery: `"go_back_n"` or `"selective_repeat"`.
        recovery: Option<String>,
        /// DCQCN and DCTCP: EWMA gain of alpha.
        g: Option<f64>,
        /// DCQCN: alpha update period.
        alpha_interval: Option<String>,
        /// DCQCN: rate-decrease check period.
        decrease_interval: Option<String>,
        /// DCQCN: rate-increase timer.
        increase_interval: Option<String>,
        /// DCQCN: fast-recovery stages before additive increase.
        fast_recovery_stages: Option<u32>,
        /// Additive increase step (HPCC's default depends on the line rate).
        rate_ai: Option<String>,
        /// DCQCN and TIMELY: hyper increase step.
        rate_hai: Option<String>,
        /// Lowest rate (DCQCN, TIMELY, HPCC).
        min_rate: Option<String>,
        /// TIMELY: EWMA weight of a new RTT difference.
        timely_alpha: Option<f64>,
        /// TIMELY: multiplicative decrease factor.
        timely_beta: Option<f64>,
        /// TIMELY: always increase below this RTT.
        t_low: Option<String>,
        /// TIMELY: decrease in proportion to the excess above this RTT.
        t_high: Option<String>,
        /// TIMELY: the gradient's normalizing RTT.
        min_rtt: Option<String>,
        /// HPCC: target utilisation eta in (0, 1].
        eta: Option<f64>,
        /// HPCC: additive increases in a row before a multiplicative step.
        max_stage: Option<u32>,
        /// HPCC: the base RTT `T` (window = rate x T); unset: each flow's own unloaded round
        /// trip.
        base_rtt: Option<String>,
        /// HPCC: react to every ACK (true) or once per round trip.
        fast_react: Option<bool>,
        /// The highest rate a flow sends at (the HPCC simulator's `MAX_RATE`).
        max_rate: Option<String>,
        /// At most this many payload bytes in flight (the HPCC simulator's `FIXED_WIN`).
        window: Option<String>,
        /// Scale `window` by the current rate over the highest (`VAR_WIN`).
        variable_window: Option<bool>,
    },
}

/// An RDMA rate control.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RdmaCcConfig {
    /// DCQCN (Zhu et al. 2015).
    Dcqcn,
    /// TIMELY (Mittal et al. 2015).
    Timely,
    /// HPCC (Li et al. 2019).
    Hpcc,
    /// DCTCP's alpha steering a rate (the HPCC simulator's `CC_MODE 8`).
    Dctcp,
}

/// A TCP congestion control.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcConfig {
    /// NewReno (RFC 5681, RFC 6582).
    Newreno,
    /// DCTCP (RFC 8257).
    Dctcp,
    /// CUBIC (RFC 9438).
    Cubic,
    /// REAL's generic source: a fixed window (`initial_cwnd`), no congestion control.
    Generic,
    /// REAL's JK source: Jacobson-Karels slow start and congestion avoidance.
    Jk,
    /// REAL's DEC source: the DECbit window rule.
    Dec,
    /// BBR version 1 (Cardwell et al. 2016).
    Bbr,
}

/// Packet size distribution of an open-loop source.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SizeDistributionConfig {
    /// All packets `packet_size`.
    Constant,
    /// Exponential with mean `packet_size`.
    Exponential,
}

/// One `[[traffic]]` block.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum TrafficConfig {
    /// Explicitly listed flows.
    Flows {
        /// Traffic class (0-7) of every flow in the block unless a flow sets its own. Default 0.
        class: Option<u8>,
        /// The flows.
        flows: Vec<ExplicitFlow>,
        /// Transport of these flows (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// `count` flows between seeded uniformly random host pairs (src != dst).
    RandomPairs {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// Number of flows.
        count: u32,
        /// Payload per flow (or give `packets`).
        size: Option<String>,
        /// Packets per flow (open loop) (or give `size`).
        packets: Option<u32>,
        /// Start time of every flow. Default `"0s"`.
        start: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Every host sends one flow to one other host and receives one (a derangement).
    Permutation {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// Payload per flow (or give `packets`).
        size: Option<String>,
        /// Packets per flow (open loop) (or give `size`).
        packets: Option<u32>,
        /// Start time of every flow. Default `"0s"`.
        start: Option<String>,
        /// Host `i` of `n` sends to host `(i + n/2) mod n` instead of a random derangement.
        /// Default false.
        across_bisection: Option<bool>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Every host sends one flow to every other host, all at `start`.
    AllToAll {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// Payload per flow (or give `packets`).
        size: Option<String>,
        /// Packets per flow (open loop) (or give `size`).
        packets: Option<u32>,
        /// Start time of every flow. Default `"0s"`.
        start: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Incast (partition-aggregate): `senders` hosts send to one `receiver` at once, in
    /// `rounds` rounds `interval` apart.
    Incast {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// The receiving host's name. Default: a host drawn from the seed.
        receiver: Option<String>,
        /// Number of senders per round, drawn from the other hosts (distinct within a round).
        senders: u32,
        /// Payload each sender sends per round (or give `packets`).
        size: Option<String>,
        /// Packets each sender sends per round (open loop) (or give `size`).
        packets: Option<u32>,
        /// Rounds. Default 1.
        rounds: Option<u32>,
        /// Time between the starts of two rounds (needed with more than one round).
        interval: Option<String>,
        /// Start of the first round. Default `"0s"`.
        start: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// A collective over a group of hosts (ranks), as flows that wait for each other
    /// (`crate::traffic::collective`).
    Collective {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// The algorithm.
        collective: crate::traffic::collective::Algorithm,
        /// Host names in rank order. Default: every host, in host order.
        ranks: Option<Vec<String>>,
        /// Shuffle the rank order with the seed. Default false.
        shuffle: Option<bool>,
        /// Buffer bytes per rank (the vector all-reduced; all-to-all sends size/n to each
        /// peer; broadcast sends size).
        size: String,
        /// Flows per send (pipelining). Default 1.
        chunks: Option<u32>,
        /// Iterations. Default 1.
        iterations: Option<u32>,
        /// Compute time between a rank's end of one iteration and its start of the next.
        /// Default `"0s"`.
        compute: Option<String>,
        /// Start of the first iteration. Default `"0s"`.
        start: Option<String>,
        /// Job name in `collectives.parquet` and the summary. Default `"job<block index>"`.
        job: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Sources alternating on and off periods (`crate::traffic::on_off`).
    OnOff {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// Number of sources, each a random (source, destination) pair. Default: every host,
        /// each to a random other host.
        sources: Option<u32>,
        /// Sending rate while on. Example: `rate = "1Gbps"`.
        rate: String,
        /// Mean on period. Example: `on = "100us"`.
        on: String,
        /// Mean off period. Example: `off = "300us"`.
        off: String,
        /// `"exponential"` (default) or `"pareto"`.
        periods: Option<crate::traffic::on_off::Periods>,
        /// Pareto shape alpha (> 1). Default 1.5.
        shape: Option<f64>,
        /// When the sources start (on). Default `"0s"`.
        start: Option<String>,
        /// How long they run.
        duration: String,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Closed-loop request/response clients (`crate::traffic::request_response`).
    RequestResponse {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// The server's host name. Default: a host drawn from the seed.
        server: Option<String>,
        /// Client host names. Default: every host but the server.
        clients: Option<Vec<String>>,
        /// Requests each client sends, one after the other.
        exchanges: u32,
        /// Request size. Default `"1KB"`.
        request: Option<String>,
        /// Response size (or give `cdf`).
        response: Option<String>,
        /// Response sizes from a CDF file (as for `poisson`).
        cdf: Option<String>,
        /// Mean think time between a response's arrival and the next request (exponential).
        /// Default `"0s"`.
        think: Option<String>,
        /// First requests' start. Default `"0s"`.
        start: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
    /// Flows read from a CSV or Parquet file, one per row (`crate::traffic::flow_file`).
    FlowFile {
        /// Traffic class (0-7) of rows without a `class` cell. Default 0.
        class: Option<u8>,
        /// The file (`.csv` or `.parquet`), relative to the scenario file's folder, then to the
        /// working directory.
        path: String,
        /// Transport of rows without a `transport` cell (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
        /// Transports that rows name in their `transport` column. Example:
        /// `transports = { bulk = { kind = "tcp", cc = "cubic" } }`.
        transports: Option<std::collections::BTreeMap<String, TransportConfig>>,
    },
    /// Poisson flow arrivals at a target load of the host links, sizes from an empirical CDF.
    Poisson {
        /// Traffic class (0-7) of the block's flows. Default 0.
        class: Option<u8>,
        /// Offered load as a fraction of total host-link capacity, in (0, 1].
        load: f64,
        /// CDF file (netstep CDF TOML), relative to the scenario file's folder, then to the
        /// working directory. Example: `cdf = "../datasets/websearch.toml"`.
        cdf: String,
        /// Arrivals happen in `[start, start + duration)`.
        duration: String,
        /// First possible arrival. Default `"0s"`.
        start: Option<String>,
        /// Stop after this many flows (optional cap).
        max_flows: Option<u32>,
        /// A traffic matrix (CSV or Parquet: `src`, `dst`, `weight`; host or switch names)
        /// giving each pair its share of the arrivals. Default: uniform over host pairs.
        matrix: Option<String>,
        /// Transport (default: the top-level `[transport]`).
        transport: Option<TransportConfig>,
    },
}

impl TrafficConfig {
    /// The block's own transport, if it sets one.
    pub fn transport(&self) -> Option<&TransportConfig> {
        match self {
            TrafficConfig::Flows { transport, .. }
            | TrafficConfig::RandomPairs { transport, .. }
            | TrafficConfig::Permutation { transport, .. }
            | TrafficConfig::AllToAll { transport, .. }
            | TrafficConfig::Incast { transport, .. }
            | TrafficConfig::Collective { transport, .. }
            | TrafficConfig::OnOff { transport, .. }
            | TrafficConfig::RequestResponse { transport, .. }
            | TrafficConfig::FlowFile { transport, .. }
            | TrafficConfig::Poisson { transport, .. } => transport.as_ref(),
        }
    }
}

/// One explicitly listed flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { src = \"h0\", dst = \"h5\", size = \"10KB\" }"
)]
pub struct ExplicitFlow {
    /// Traffic class (0-7) of this flow (overrides the block's `class`).
    pub class: Option<u8>,
    /// Sending host name.
    pub src: String,
    /// Receiving host name.
    pub dst: String,
    /// Payload (or give `packets`). Example: `size = "1MB"`.
    pub size: Option<String>,
    /// Packet count (open loop) (or give `size`).
    pub packets: Option<u32>,
    /// Start time. Default `"0s"`.
    pub start: Option<String>,
    /// Explicit node path from `src` to `dst` (every consecutive pair must be linked).
    pub path: Option<Vec<String>>,
    /// A name other flows' `after` can refer to (unique in the scenario).
    pub name: Option<String>,
    /// Names of flows that must finish (their receiver has every byte) before this one starts.
    pub after: Option<Vec<String>>,
    /// With `after`: time between the last of them finishing and this flow's start (compute
    /// time). Default `"0s"`.
    pub delay: Option<String>,
}

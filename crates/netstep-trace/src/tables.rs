//! Row types and their Arrow schemas. Column names are snake_case with unit suffixes; times are
//! integer nanoseconds (`_ns`) except where sub-nanosecond precision matters (`_ps`); enums are
//! dictionary columns (Polars reads them as categoricals).

use std::sync::Arc;

use crate::columns::{name_column, optional_u64_column, u32_column, u64_column};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, StringDictionaryBuilder, UInt32Builder, UInt64Builder,
};
use arrow_array::types::Int8Type;
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt64Array};
use arrow_schema::{ArrowError, DataType, Field, Schema};

fn dict() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

/// One row of `flows.parquet`.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowRow {
    /// Flow id (0-based, in scenario order).
    pub flow_id: u32,
    /// Sending host (node id).
    pub src: u32,
    /// Receiving host (node id).
    pub dst: u32,
    /// `open_loop` or `tcp_newreno`.
    pub transport: &'static str,
    /// Payload bytes.
    pub size_bytes: u64,
    /// Start time, ns: the flow's `start`, or for a flow with `after`, when the last notice of
    /// its dependencies came plus its delay (None when that never happened).
    pub start_ns: Option<u64>,
    /// When the last flow it waited for was known finished at its source, ns (None without
    /// `after`, or when they did not all finish).
    pub deps_done_ns: Option<u64>,
    /// Completion time, ns (None when unfinished).
    pub end_ns: Option<u64>,
    /// end - start, ns; with a TCP handshake end - `handshake_ns` unless the transport's
    /// `fct_from = "connection_start"`.
    pub fct_ns: Option<u64>,
    /// When the TCP handshake completed (the SYN-ACK's arrival), ns (None without one).
    pub handshake_ns: Option<u64>,
    /// FCT on an empty network, ns.
    pub ideal_fct_ns: u64,
    /// fct / ideal fct (from picosecond values).
    pub slowdown: Option<f64>,
    /// Data packets sent, retransmissions included.
    pub packets_sent: u64,
    /// Distinct data packets delivered.
    pub packets_delivered: u64,
    /// Packets (data or ACK) dropped.
    pub packets_dropped: u64,
    /// Packets marked (ECN CE or DECbit) at any hop.
    pub ecn_marks: u64,
    /// Retransmitted data packets.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Why the flow was given up (`retry_limit`), if it was.
    pub fail_reason: Option<&'static str>,
    /// Every byte reached the receiver.
    pub completed: bool,
    /// The HPCC simulator's ideal ("standalone") FCT, ns, written with `netstep run --format
    /// hpcc|hpcc-m3` (a second ideal; `None` otherwise).
    pub standalone_fct_ns: Option<u64>,
}

/// The `flows` table's schema; with `standalone`, two columns follow the others:
/// `standalone_fct_ns` and `standalone_slowdown` (`fct_ns / standalone_fct_ns`).
pub fn flows_schema(standalone: bool) -> Arc<Schema> {
    let mut fields = vec![
        Field::new("flow_id", DataType::UInt32, false),
        Field::new("src", DataType::UInt32, false),
        Field::new("dst", DataType::UInt32, false),
        Field::new("transport", dict(), false),
        Field::new("size_bytes", DataType::UInt64, false),
        Field::new("start_ns", DataType::UInt64, true),
        Field::new("deps_done_ns", DataType::UInt64, true),
        Field::new("end_ns", DataType::UInt64, true),
        Field::new("fct_ns", DataType::UInt64, true),
        Field::new("ideal_fct_ns", DataType::UInt64, false),
        Field::new("slowdown", DataType::Float64, true),
        Field::new("packets_sent", DataType::UInt64, false),
        Field::new("packets_delivered", DataType::UInt64, false),
        Field::new("packets_dropped", DataType::UInt64, false),
        Field::new("ecn_marks", DataType::UInt64, false),
        Field::new("retransmits", DataType::UInt64, false),
        Field::new("timeouts", DataType::UInt64, false),
        Field::new("completed", DataType::Boolean, false),
        Field::new("fail_reason", dict(), true),
        Field::new("handshake_ns", DataType::UInt64, true),
    ];
    if standalone {
        fields.push(Field::new("standalone_fct_ns", DataType::UInt64, true));
        fields.push(Field::new("standalone_slowdown", DataType::Float64, true));
    }
    Arc::new(Schema::new(fields))
}

/// Builds a `flows` batch of `rows` in [`flows_schema`] (`standalone`: with the simulator's
/// standalone FCT columns, from the rows' `standalone_fct_ns`).
pub fn flows_batch(rows: &[FlowRow], standalone: bool) -> Result<RecordBatch, ArrowError> {
    let schema = flows_schema(standalone);
    let u32col = |f: fn(&FlowRow) -> u32| u32_column(rows, f);
    let u64col = |f: fn(&FlowRow) -> u64| u64_column(rows, f);
    let opt_u64 = |f: fn(&FlowRow) -> Option<u64>| optional_u64_column(rows, f);
    let mut transport = StringDictionaryBuilder::<Int8Type>::new();
    rows.iter()
        .for_each(|r| transport.append_value(r.transport));
    let mut slowdown = Float64Builder::with_capacity(rows.len());
    rows.iter().for_each(|r| slowdown.append_option(r.slowdown));
    let mut fail_reason = StringDictionaryBuilder::<Int8Type>::new();
    rows.iter()
        .for_each(|r| fail_reason.append_option(r.fail_reason));
    let mut completed = BooleanBuilder::with_capacity(rows.len());
    rows.iter()
        .for_each(|r| completed.append_value(r.completed));
    let mut columns: Vec<ArrayRef> = vec![
        u32col(|r| r.flow_id),
        u32col(|r| r.src),
        u32col(|r| r.dst),
        Arc::new(transport.finish()),
        u64col(|r| r.size_bytes),
        opt_u64(|r| r.start_ns),
        opt_u64(|r| r.deps_done_ns),
        opt_u64(|r| r.end_ns),
        opt_u64(|r| r.fct_ns),
        u64col(|r| r.ideal_fct_ns),
        Arc::new(slowdown.finish()),
        u64col(|r| r.packets_sent),
        u64col(|r| r.packets_delivered),
        u64col(|r| r.packets_dropped),
        u64col(|r| r.ecn_marks),
        u64col(|r| r.retransmits),
        u64col(|r| r.timeouts),
        Arc::new(completed.finish()),
        Arc::new(fail_reason.finish()),
        opt_u64(|r| r.handshake_ns),
    ];
    if standalone {
        columns.push(opt_u64(|r| r.standalone_fct_ns));
        let mut ratio = Float64Builder::with_capacity(rows.len());
        rows.iter().for_each(|r| {
            ratio.append_option(
                r.fct_ns
                    .zip(r.standalone_fct_ns)
                    .map(|(fct, ideal)| fct as f64 / ideal.max(1) as f64),
            )
        });
        columns.push(Arc::new(ratio.finish()));
    }
    RecordBatch::try_new(schema, columns)
}

/// One row of `links.parquet`: one egress port (a link direction).
#[derive(Clone, Debug, PartialEq)]
pub struct LinkRow {
    /// Global port id.
    pub port_id: u32,
    /// Node owning the port.
    pub node: u32,
    /// `host` or `switch`.
    pub node_kind: &'static str,
    /// Node at the far end.
    pub peer: u32,
    /// `host` or `switch`.
    pub peer_kind: &'static str,
    /// Port index within its node.
    pub local_port: u32,
    /// Line rate, bits/s.
    pub rate_bps: u64,
    /// Propagation delay, ps.
    pub delay_ps: u64,
    /// Buffer limit in bytes (None when limited in packets).
    pub buffer_bytes: Option<u64>,
    /// Buffer limit in packets (None when limited in bytes).
    pub buffer_packets: Option<u64>,
    /// Packets transmitted during the run.
    pub tx_packets: u64,
    /// Bytes transmitted during the run.
    pub tx_bytes: u64,
    /// Packets dropped at this port (buffer full).
    pub drops: u64,
    /// Packets lost on the wire (random loss).
    pub lost: u64,
    /// Largest queue seen, bytes.
    pub max_queue_bytes: u64,
    /// Packets a trTCM policer colored yellow (forwarded; red ones are in `drops`).
    pub yellow: u64,
    /// Packets the queue element marked (ECN CE or DECbit).
    pub ecn_marks: u64,
}

/// Schema of `links.parquet`.
pub fn links_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("port_id", DataType::UInt32, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("node_kind", dict(), false),
        Field::new("peer", DataType::UInt32, false),
        Field::new("peer_kind", dict(), false),
        Field::new("local_port", DataType::UInt32, false),
        Field::new("rate_bps", DataType::UInt64, false),
        Field::new("delay_ps", DataType::UInt64, false),
        Field::new("buffer_bytes", DataType::UInt64, true),
        Field::new("buffer_packets", DataType::UInt64, true),
        Field::new("tx_packets", DataType::UInt64, false),
        Field::new("tx_bytes", DataType::UInt64, false),
        Field::new("drops", DataType::UInt64, false),
        Field::new("lost", DataType::UInt64, false),
        Field::new("max_queue_bytes", DataType::UInt64, false),
        Field::new("yellow", DataType::UInt64, false),
        Field::new("ecn_marks", DataType::UInt64, false),
    ]))
}

/// Builds one `links` batch.
pub fn links_batch(rows: &[LinkRow]) -> Result<RecordBatch, ArrowError> {
    let u32col = |f: fn(&LinkRow) -> u32| u32_column(rows, f);
    let u64col = |f: fn(&LinkRow) -> u64| u64_column(rows, f);
    let opt_u64 = |f: fn(&LinkRow) -> Option<u64>| optional_u64_column(rows, f);
    let kind = |f: fn(&LinkRow) -> &'static str| name_column(rows, f);
    RecordBatch::try_new(
        links_schema(),
        vec![
            u32col(|r| r.port_id),
            u32col(|r| r.node),
            kind(|r| r.node_kind),
            u32col(|r| r.peer),
            kind(|r| r.peer_kind),
            u32col(|r| r.local_port),
            u64col(|r| r.rate_bps),
            u64col(|r| r.delay_ps),
            opt_u64(|r| r.buffer_bytes),
            opt_u64(|r| r.buffer_packets),
            u64col(|r| r.tx_packets),
            u64col(|r| r.tx_bytes),
            u64col(|r| r.drops),
            u64col(|r| r.lost),
            u64col(|r| r.max_queue_bytes),
            u64col(|r| r.yellow),
            u64col(|r| r.ecn_marks),
        ],
    )
}

/// One row of `collectives.parquet`: one step of one iteration of one collective job.
#[derive(Clone, Debug, PartialEq)]
pub struct CollectiveRow {
    /// Job name.
    pub job: String,
    /// Iteration (0-based).
    pub iteration: u32,
    /// Algorithm (`ring_all_reduce`, ...).
    pub collective: &'static str,
    /// Step within the iteration (0-based).
    pub step: u32,
    /// Flows of the step (sends x chunks).
    pub flows: u32,
    /// When its first flow started, ns (None when none did).
    pub start_ns: Option<u64>,
    /// When its last flow ended, ns (None unless every flow of the step completed).
    pub end_ns: Option<u64>,
    /// Payload bytes of the step's flows.
    pub bytes: u64,
}

/// Builds the `collectives` batch.
pub fn collectives_batch(rows: &[CollectiveRow]) -> Result<RecordBatch, ArrowError> {
    let schema = Arc::new(Schema::new(vec![
        Field::new("job", DataType::Utf8, false),
        Field::new("iteration", DataType::UInt32, false),
        Field::new("collective", dict(), false),
        Field::new("step", DataType::UInt32, false),
        Field::new("flows", DataType::UInt32, false),
        Field::new("start_ns", DataType::UInt64, true),
        Field::new("end_ns", DataType::UInt64, true),
        Field::new("bytes", DataType::UInt64, false),
    ]));
    RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from_iter_values(rows.iter().map(|r| &r.job))),
            u32_column(rows, |r| r.iteration),
            name_column(rows, |r| r.collective),
            u32_column(rows, |r| r.step),
            u32_column(rows, |r| r.flows),
            optional_u64_column(rows, |r| r.start_ns),
            optional_u64_column(rows, |r| r.end_ns),
            u64_column(rows, |r| r.bytes),
        ],
    )
}

/// The single row of `run.parquet`.
#[derive(Clone, Debug, PartialEq)]
pub struct RunRow {
    /// Scenario name.
    pub scenario: String,
    /// Scenario hash (16 hex digits).
    pub scenario_hash: String,
    /// Seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: u32,
    /// `exact` or `quantized`.
    pub window_mode: &'static str,
    /// Window width used, ps (in exact mode the lookahead, or that of the links between link
    /// groups where those form).
    pub window_ps: u64,
    /// Lookahead, ps.
    pub lookahead_ps: u64,
    /// Configured stop time, ns (None = until done).
    pub duration_ns: Option<u64>,
    /// Time of the last simulated event, ns.
    pub sim_end_ns: u64,
    /// Wall-clock seconds of the simulation proper.
    pub wall_seconds: f64,
    /// Packet transmissions (packets × egress ports).
    pub packet_hops: u64,
    /// Events handled.
    pub events: u64,
    /// Of `events`, departures a switch port handled in a batch instead of as a queued event.
    pub batched_events: u64,
    /// Windows executed.
    pub windows: u64,
    /// Packets dropped.
    pub drops: u64,
    /// Flows.
    pub flows: u64,
    /// Flows that completed.
    pub flows_completed: u64,
    /// netstep version.
    pub version: String,
    /// Base round-trip time: the largest no-queueing RTT of any flow's path, ns.
    pub base_rtt_ns: u64,
    /// Fastest host link rate, bits/s.
    pub host_rate_bps: u64,
    /// Largest packet any flow sends, bytes.
    pub mtu_bytes: u64,
    /// Optional tables written (comma-separated).
    pub trace_tables: String,
    /// Queue sampling interval, ns.
    pub sample_interval_ns: Option<u64>,
    /// Host NIC buffer, with its unit (`"1MB"`, `"100pkts"`).
    pub nic_buffer: String,
    /// Host NIC per-flow budget, with its unit.
    pub nic_per_flow: String,
    /// Host NIC scheduler (`round_robin`, `fifo`, `pull`).
    pub nic_scheduler: &'static str,
    /// An AICB training job's totals, in the order of [`JOB_COLUMNS`] (ns); `None` without a
    /// job (the columns are null) and each `None` where the job did not finish.
    pub job: Option<[Option<u64>; 7]>,
}

/// `run.parquet`'s training-job columns: the iteration time (the last rank's finish), then
/// rank 0's compute, exposed communication (its finish minus its compute, as SimAI) and that
/// exposed time by the dimension of the collectives it waited on.
pub const JOB_COLUMNS: [&str; 7] = [
    "job_iteration_ns",
    "job_compute_ns",
    "job_exposed_ns",
    "job_exposed_tp_ns",
    "job_exposed_ep_ns",
    "job_exposed_dp_ns",
    "job_exposed_dp_ep_ns",
];

/// Builds the `run` batch.
pub fn run_batch(row: &RunRow) -> Result<RecordBatch, ArrowError> {
    let mut fields = vec![
        Field::new("scenario", DataType::Utf8, false),
        Field::new("scenario_hash", DataType::Utf8, false),
        Field::new("seed", DataType::UInt64, false),
        Field::new("threads", DataType::UInt32, false),
        Field::new("window_mode", dict(), false),
        Field::new("window_ps", DataType::UInt64, false),
        Field::new("lookahead_ps", DataType::UInt64, false),
        Field::new("duration_ns", DataType::UInt64, true),
        Field::new("sim_end_ns", DataType::UInt64, false),
        Field::new("wall_seconds", DataType::Float64, false),
        Field::new("packet_hops", DataType::UInt64, false),
        Field::new("events", DataType::UInt64, false),
        Field::new("batched_events", DataType::UInt64, false),
        Field::new("windows", DataType::UInt64, false),
        Field::new("drops", DataType::UInt64, false),
        Field::new("flows", DataType::UInt64, false),
        Field::new("flows_completed", DataType::UInt64, false),
        Field::new("version", DataType::Utf8, false),
        Field::new("base_rtt_ns", DataType::UInt64, false),
        Field::new("host_rate_bps", DataType::UInt64, false),
        Field::new("mtu_bytes", DataType::UInt64, false),
        Field::new("trace_tables", DataType::Utf8, false),
        Field::new("sample_interval_ns", DataType::UInt64, true),
        Field::new("nic_buffer", DataType::Utf8, false),
        Field::new("nic_per_flow", DataType::Utf8, false),
        Field::new("nic_scheduler", dict(), false),
    ];
    fields.extend(
        JOB_COLUMNS
            .iter()
            .map(|name| Field::new(*name, DataType::UInt64, true)),
    );
    let schema = Arc::new(Schema::new(fields));
    let one = |v: u64| -> ArrayRef {
        let mut b = UInt64Builder::with_capacity(1);
        b.append_value(v);
        Arc::new(b.finish())
    };
    let mut mode = StringDictionaryBuilder::<Int8Type>::new();
    mode.append_value(row.window_mode);
    let mut duration = UInt64Builder::with_capacity(1);
    duration.append_option(row.duration_ns);
    let mut wall = Float64Builder::with_capacity(1);
    wall.append_value(row.wall_seconds);
    let mut nic_scheduler = StringDictionaryBuilder::<Int8Type>::new();
    nic_scheduler.append_value(row.nic_scheduler);
    let mut threads = UInt32Builder::with_capacity(1);
    threads.append_value(row.threads);
    let mut columns: Vec<ArrayRef> = vec![
        Arc::new(StringArray::from(vec![row.scenario.clone()])),
        Arc::new(StringArray::from(vec![row.scenario_hash.clone()])),
        one(row.seed),
        Arc::new(threads.finish()),
        Arc::new(mode.finish()),
        one(row.window_ps),
        one(row.lookahead_ps),
        Arc::new(duration.finish()),
        one(row.sim_end_ns),
        Arc::new(wall.finish()),
        one(row.packet_hops),
        one(row.events),
        one(row.batched_events),
        one(row.windows),
        one(row.drops),
        one(row.flows),
        one(row.flows_completed),
        Arc::new(StringArray::from(vec![row.version.clone()])),
        one(row.base_rtt_ns),
        one(row.host_rate_bps),
        one(row.mtu_bytes),
        Arc::new(StringArray::from(vec![row.trace_tables.clone()])),
        Arc::new(UInt64Array::from(vec![row.sample_interval_ns])),
        Arc::new(StringArray::from(vec![row.nic_buffer.clone()])),
        Arc::new(StringArray::from(vec![row.nic_per_flow.clone()])),
        Arc::new(nic_scheduler.finish()),
    ];
    for i in 0..JOB_COLUMNS.len() {
        let value = row.job.and_then(|j| j[i]);
        columns.push(Arc::new(UInt64Array::from(vec![value])));
    }
    RecordBatch::try_new(schema, columns)
}

//! The optional trace tables, `packet_hops`, `queue_samples` and `cc_samples`, PFC's
//! `pfc_events` (a run with PFC writes it as it goes, so a run with millions of frames keeps
//! none of them), and the writer thread that turns records into Parquet off the simulation's
//! threads.
//!
//! The engine hands records to a [`TraceWriter`] (a [`TraceSink`]); it buffers up to
//! [`BATCH_ROWS`] rows per table and sends full batches over a bounded channel to one writer
//! thread, so memory stays bounded whatever the trace volume (at most `CHANNEL_BATCHES + 2`
//! batches exist at once) and the simulation only blocks when the writer falls behind.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

use arrow_array::builder::Int8Builder;
use arrow_array::builder::{BooleanBuilder, UInt8Builder, UInt16Builder};
use arrow_array::types::Int8Type;
use arrow_array::{DictionaryArray, Float64Array, RecordBatch, StringArray};
use arrow_schema::{ArrowError, DataType, Field, Schema};
use netstep_core::engine::trace::{CcSample, DropReason, HopRecord, QueueSample, TraceSink};
use netstep_core::packet::PacketKind;
use netstep_core::pfc::PfcEvent;

use crate::columns::{optional_u64_column, u32_column, u64_column};
use crate::{Layout, TableWriter, TraceError};

/// Rows per Parquet batch (and per channel message).
pub const BATCH_ROWS: usize = 1 << 16;
/// Full batches that may wait in the channel.
const CHANNEL_BATCHES: usize = 2;

fn dict() -> DataType {
    DataType::Dictionary(Box::new(DataType::Int8), Box::new(DataType::Utf8))
}

fn ns(ps: u64) -> u64 {
    ps / 1_000
}

/// Schema of `packet_hops.parquet`.
pub fn packet_hops_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("packet_id", DataType::UInt64, false),
        Field::new("flow_id", DataType::UInt32, false),
        Field::new("hop", DataType::UInt16, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("port", DataType::UInt32, false),
        Field::new("kind", dict(), false),
        Field::new("seq", DataType::UInt32, false),
        Field::new("size_bytes", DataType::UInt32, false),
        Field::new("arrive_ns", DataType::UInt64, false),
        Field::new("enqueue_ns", DataType::UInt64, false),
        Field::new("dequeue_ns", DataType::UInt64, true),
        Field::new("depart_ns", DataType::UInt64, true),
        Field::new("queue_bytes", DataType::UInt64, false),
        Field::new("queue_packets", DataType::UInt32, false),
        Field::new("ecn", DataType::UInt8, false),
        Field::new("dropped", DataType::Boolean, false),
        Field::new("drop_reason", dict(), true),
    ]))
}

/// Builds a `packet_hops` batch.
pub fn packet_hops_batch(rows: &[HopRecord]) -> Result<RecordBatch, ArrowError> {
    let n = rows.len();
    let u64col = |f: &dyn Fn(&HopRecord) -> u64| u64_column(rows, f);
    let opt_u64 = |f: &dyn Fn(&HopRecord) -> Option<u64>| optional_u64_column(rows, f);
    let u32col = |f: &dyn Fn(&HopRecord) -> u32| u32_column(rows, f);
    let mut hop = UInt16Builder::with_capacity(n);
    // Enum columns are built from their keys against fixed dictionaries (no string hashing).
    let mut kind = Int8Builder::with_capacity(n);
    let mut ecn = UInt8Builder::with_capacity(n);
    let mut dropped = BooleanBuilder::with_capacity(n);
    let mut reason = Int8Builder::with_capacity(n);
    for r in rows {
        hop.append_value(r.hop);
        kind.append_value(r.kind as i8);
        ecn.append_value(r.ecn);
        dropped.append_value(r.drop.is_some());
        reason.append_option(r.drop.map(|d| d as i8));
    }
    // Keys are `PacketKind` codes: every kind's name, in code order (feedback packets such as
    // an RDMA receiver's NACKs and CNPs have rows too).
    let kind = DictionaryArray::<Int8Type>::try_new(
        kind.finish(),
        Arc::new(StringArray::from(
            PacketKind::ALL.iter().map(|k| k.name()).collect::<Vec<_>>(),
        )),
    )?;
    let reason = DictionaryArray::<Int8Type>::try_new(
        reason.finish(),
        Arc::new(StringArray::from(vec![
            DropReason::BufferFull.name(),
            DropReason::LinkLoss.name(),
            DropReason::Early.name(),
            DropReason::LinkDown.name(),
            DropReason::Policed.name(),
        ])),
    )?;
    RecordBatch::try_new(
        packet_hops_schema(),
        vec![
            u64col(&|r| r.packet_id),
            u32col(&|r| r.flow),
            Arc::new(hop.finish()),
            u32col(&|r| r.node),
            u32col(&|r| r.port),
            Arc::new(kind),
            u32col(&|r| r.seq),
            u32col(&|r| r.size_bytes),
            u64col(&|r| ns(r.arrive_ps)),
            u64col(&|r| ns(r.arrive_ps)),
            opt_u64(&|r| r.dequeue_ps.map(ns)),
            opt_u64(&|r| r.depart_ps.map(ns)),
            u64col(&|r| r.queue_bytes),
            u32col(&|r| r.queue_packets),
            Arc::new(ecn.finish()),
            Arc::new(dropped.finish()),
            Arc::new(reason),
        ],
    )
}

/// Schema of `queue_samples.parquet`.
pub fn queue_samples_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("time_ns", DataType::UInt64, false),
        Field::new("port", DataType::UInt32, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("queue_bytes", DataType::UInt64, false),
        Field::new("queue_packets", DataType::UInt32, false),
        Field::new("tx_bytes", DataType::UInt64, false),
        Field::new("tx_packets", DataType::UInt64, false),
        Field::new("drops", DataType::UInt64, false),
        Field::new("ecn_marks", DataType::UInt64, false),
    ]))
}

/// Builds a `queue_samples` batch.
pub fn queue_samples_batch(rows: &[QueueSample]) -> Result<RecordBatch, ArrowError> {
    let u64col = |f: &dyn Fn(&QueueSample) -> u64| u64_column(rows, f);
    let u32col = |f: &dyn Fn(&QueueSample) -> u32| u32_column(rows, f);
    RecordBatch::try_new(
        queue_samples_schema(),
        vec![
            u64col(&|r| ns(r.time_ps)),
            u32col(&|r| r.port),
            u32col(&|r| r.node),
            u64col(&|r| r.queue_bytes),
            u32col(&|r| r.queue_packets),
            u64col(&|r| r.tx_bytes),
            u64col(&|r| r.tx_packets),
            u64col(&|r| r.drops),
            u64col(&|r| r.ecn_marks),
        ],
    )
}

/// Schema of `cc_samples.parquet`.
pub fn cc_samples_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("time_ns", DataType::UInt64, false),
        Field::new("flow_id", DataType::UInt32, false),
        Field::new("cwnd_segments", DataType::Float64, false),
        Field::new("ssthresh_segments", DataType::Float64, true),
        Field::new("srtt_ns", DataType::UInt64, true),
        Field::new("rto_ns", DataType::UInt64, false),
        Field::new("inflight_segments", DataType::UInt32, false),
        Field::new("acked_segments", DataType::UInt32, false),
        Field::new("in_recovery", DataType::Boolean, false),
        Field::new("alpha", DataType::Float64, true),
        Field::new("w_max_segments", DataType::Float64, true),
        Field::new("pacing_rate_bps", DataType::Float64, true),
        Field::new("btl_bw_bps", DataType::Float64, true),
    ]))
}

/// Builds a `cc_samples` batch.
pub fn cc_samples_batch(rows: &[CcSample]) -> Result<RecordBatch, ArrowError> {
    let f64col = |f: &dyn Fn(&CcSample) -> Option<f64>| -> Arc<Float64Array> {
        Arc::new(rows.iter().map(f).collect::<Float64Array>())
    };
    let mut recovery = BooleanBuilder::with_capacity(rows.len());
    for r in rows {
        recovery.append_value(r.in_recovery);
    }
    RecordBatch::try_new(
        cc_samples_schema(),
        vec![
            u64_column(rows, |r| ns(r.time_ps)),
            u32_column(rows, |r| r.flow),
            f64col(&|r| Some(r.cwnd)),
            f64col(&|r| r.ssthresh),
            optional_u64_column(rows, |r| r.srtt_ps.map(ns)),
            u64_column(rows, |r| ns(r.rto_ps)),
            u32_column(rows, |r| r.inflight),
            u32_column(rows, |r| r.acked),
            Arc::new(recovery.finish()),
            f64col(&|r| r.alpha),
            f64col(&|r| r.w_max),
            f64col(&|r| r.pacing_rate_bps),
            f64col(&|r| r.btl_bw_bps),
        ],
    )
}

enum Batch {
    Hops(Vec<HopRecord>),
    Samples(Vec<QueueSample>),
    Cc(Vec<CcSample>),
    Pfc(Vec<PfcEvent>),
}

/// Which optional tables a [`TraceWriter`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TraceTables {
    /// `packet_hops.parquet`.
    pub packet_hops: bool,
    /// `queue_samples.parquet`.
    pub queue_samples: bool,
    /// `cc_samples.parquet`.
    pub cc_samples: bool,
    /// `pfc_events.parquet`, written as the run goes (the engine then keeps no frames:
    /// [`TraceSink::takes_pfc`]).
    pub pfc_events: bool,
}

/// Writes `packet_hops`, `queue_samples`, `cc_samples` and/or `pfc_events` on a background
/// thread.
pub struct TraceWriter {
    sender: Option<SyncSender<Batch>>,
    thread: Option<JoinHandle<Result<u64, TraceError>>>,
    hops: Vec<HopRecord>,
    samples: Vec<QueueSample>,
    cc: Vec<CcSample>,
    pfc: Vec<PfcEvent>,
    takes_pfc: bool,
    /// Rows handed over so far (every table).
    pub rows: u64,
}

impl TraceWriter {
    /// Starts the writer thread for the tables asked for, in folder `dir`.
    pub fn start(
        dir: &Path,
        tables: TraceTables,
        metadata: Vec<(String, String)>,
    ) -> Result<TraceWriter, TraceError> {
        let create = |on: bool, name: &str, schema: Arc<Schema>| -> Result<_, TraceError> {
            if !on {
                return Ok(None);
            }
            TableWriter::create_with(&dir.join(name), schema, &metadata, Layout::Trace).map(Some)
        };
        let mut cc_writer = create(tables.cc_samples, "cc_samples.parquet", cc_samples_schema())?;
        let mut hops_writer = create(
            tables.packet_hops,
            "packet_hops.parquet",
            packet_hops_schema(),
        )?;
        let mut samples_writer = create(
            tables.queue_samples,
            "queue_samples.parquet",
            queue_samples_schema(),
        )?;
        let mut pfc_writer = create(tables.pfc_events, "pfc_events.parquet", pfc_events_schema())?;
        let (sender, receiver): (SyncSender<Batch>, Receiver<Batch>) =
            sync_channel(CHANNEL_BATCHES);
        let dir: PathBuf = dir.to_path_buf();
        let thread = std::thread::Builder::new()
            .name("netstep-trace-writer".into())
            .spawn(move || {
                let mut written = 0u64;
                for batch in receiver {
                    written += match batch {
                        Batch::Hops(rows) => {
                            write_rows(&mut hops_writer, &rows, packet_hops_batch, &dir)?
                        }
                        Batch::Samples(rows) => {
                            write_rows(&mut samples_writer, &rows, queue_samples_batch, &dir)?
                        }
                        Batch::Cc(rows) => {
                            write_rows(&mut cc_writer, &rows, cc_samples_batch, &dir)?
                        }
                        Batch::Pfc(rows) => {
                            write_rows(&mut pfc_writer, &rows, pfc_events_batch, &dir)?
                        }
                    };
                }
                for w in [pfc_writer, cc_writer, hops_writer, samples_writer]
                    .into_iter()
                    .flatten()
                {
                    w.finish()?;
                }
                Ok(written)
            })
            .map_err(|source| TraceError::Io {
                path: PathBuf::from("<trace writer thread>"),
                source,
            })?;
        Ok(TraceWriter {
            sender: Some(sender),
            thread: Some(thread),
            hops: Vec::new(),
            samples: Vec::new(),
            cc: Vec::new(),
            pfc: Vec::new(),
            takes_pfc: tables.pfc_events,
            rows: 0,
        })
    }

    fn send(&mut self, batch: Batch) {
        if let Some(sender) = &self.sender {
            // A send error means the writer thread stopped on an error; `finish` reports it.
            if sender.send(batch).is_err() {
                self.sender = None;
            }
        }
    }

    /// Flushes what is buffered, waits for the writer and closes the files (atomic renames).
    pub fn finish(mut self) -> Result<u64, TraceError> {
        let hops = std::mem::take(&mut self.hops);
        let samples = std::mem::take(&mut self.samples);
        let cc = std::mem::take(&mut self.cc);
        let pfc = std::mem::take(&mut self.pfc);
        // Empty tables still get one (empty) batch so their files exist with the schema.
        self.send(Batch::Hops(hops));
        self.send(Batch::Samples(samples));
        self.send(Batch::Cc(cc));
        self.send(Batch::Pfc(pfc));
        self.sender = None;
        let thread = self.thread.take().expect("writer started");
        thread.join().map_err(|_| TraceError::Parquet {
            path: PathBuf::from("<trace writer thread>"),
            message: "the writer thread panicked".into(),
        })?
    }
}

/// Writes `rows`, built into a batch by `build`, when the table is written (`writer`);
/// returns how many rows there were.
fn write_rows<T>(
    writer: &mut Option<TableWriter>,
    rows: &[T],
    build: fn(&[T]) -> Result<RecordBatch, ArrowError>,
    dir: &Path,
) -> Result<u64, TraceError> {
    if let Some(w) = writer.as_mut() {
        let batch = build(rows).map_err(|e| TraceError::Parquet {
            path: dir.to_path_buf(),
            message: e.to_string(),
        })?;
        w.write(&batch)?;
    }
    Ok(rows.len() as u64)
}

/// Moves `more` into `buffer` (counting the rows in `rows`); a buffer that reached
/// [`BATCH_ROWS`] is handed back whole, to be sent, and starts again empty.
fn fill<T>(rows: &mut u64, buffer: &mut Vec<T>, more: &mut Vec<T>) -> Option<Vec<T>> {
    *rows += more.len() as u64;
    buffer.append(more);
    (buffer.len() >= BATCH_ROWS).then(|| std::mem::replace(buffer, Vec::with_capacity(BATCH_ROWS)))
}

impl TraceSink for TraceWriter {
    fn hops(&mut self, records: &mut Vec<HopRecord>) {
        if let Some(batch) = fill(&mut self.rows, &mut self.hops, records) {
            self.send(Batch::Hops(batch));
        }
    }

    fn samples(&mut self, rows: &mut Vec<QueueSample>) {
        if let Some(batch) = fill(&mut self.rows, &mut self.samples, rows) {
            self.send(Batch::Samples(batch));
        }
    }

    fn cc_samples(&mut self, rows: &mut Vec<CcSample>) {
        if let Some(batch) = fill(&mut self.rows, &mut self.cc, rows) {
            self.send(Batch::Cc(batch));
        }
    }

    fn takes_pfc(&self) -> bool {
        self.takes_pfc
    }

    fn pfc(&mut self, rows: &mut Vec<PfcEvent>) {
        if let Some(batch) = fill(&mut self.rows, &mut self.pfc, rows) {
            self.send(Batch::Pfc(batch));
        }
    }
}

/// Schema of `pfc_events.parquet`: one row per PAUSE or RESUME frame a switch sent.
pub fn pfc_events_schema() -> Arc<Schema> {
    Arc::new(Schema::new(vec![
        Field::new("time_ns", DataType::UInt64, false),
        Field::new("time_ps", DataType::UInt64, false),
        Field::new("node", DataType::UInt32, false),
        Field::new("port", DataType::UInt32, false),
        Field::new("class", DataType::UInt8, false),
        Field::new("pause", DataType::Boolean, false),
    ]))
}

/// Builds a `pfc_events` batch.
pub fn pfc_events_batch(rows: &[PfcEvent]) -> Result<RecordBatch, ArrowError> {
    let n = rows.len();
    let mut class = UInt8Builder::with_capacity(n);
    let mut pause = BooleanBuilder::with_capacity(n);
    for r in rows {
        class.append_value(r.class);
        pause.append_value(r.pause);
    }
    RecordBatch::try_new(
        pfc_events_schema(),
        vec![
            u64_column(rows, |r| ns(r.time_ps)),
            u64_column(rows, |r| r.time_ps),
            u32_column(rows, |r| r.node),
            u32_column(rows, |r| r.port),
            Arc::new(class.finish()),
            Arc::new(pause.finish()),
        ],
    )
}

/// Reads `pfc_events.parquet` at `path` back, handing `each` its rows a batch at a time in
/// file order (the frames as the run sorted them), so a file of millions of frames is never
/// held at once.
pub fn read_pfc_events(path: &Path, mut each: impl FnMut(&[PfcEvent])) -> Result<(), TraceError> {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt8Type, UInt32Type, UInt64Type};
    let error = |message: String| TraceError::Parquet {
        path: path.to_path_buf(),
        message,
    };
    let file = std::fs::File::open(path).map_err(|source| TraceError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(file)
        .and_then(|b| b.build())
        .map_err(|e| error(e.to_string()))?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| error(e.to_string()))?;
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .ok_or_else(|| error(format!("no column `{name}`")))
        };
        let time = column("time_ps")?.as_primitive::<UInt64Type>();
        let node = column("node")?.as_primitive::<UInt32Type>();
        let port = column("port")?.as_primitive::<UInt32Type>();
        let class = column("class")?.as_primitive::<UInt8Type>();
        let pause = column("pause")?.as_boolean();
        rows.clear();
        rows.extend((0..batch.num_rows()).map(|i| PfcEvent {
            time_ps: time.value(i),
            node: node.value(i),
            port: port.value(i),
            class: class.value(i),
            pause: pause.value(i),
        }));
        each(&rows);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(kind: PacketKind) -> HopRecord {
        HopRecord {
            packet_id: kind as u64,
            flow: 0,
            hop: 1,
            node: 2,
            port: 3,
            kind,
            seq: 4,
            size_bytes: 64,
            arrive_ps: 1_000,
            dequeue_ps: Some(2_000),
            depart_ps: Some(3_000),
            queue_bytes: 0,
            queue_packets: 0,
            ecn: 0,
            drop: None,
        }
    }

    /// Every packet kind gets its own name in the `kind` column (a traced RDMA run sends NACKs
    /// and CNPs; the column once knew only data and ACKs and the table could not be written).
    #[test]
    fn every_packet_kind_is_written_by_name() {
        let rows: Vec<HopRecord> = PacketKind::ALL.iter().map(|&k| record(k)).collect();
        let batch = packet_hops_batch(&rows).expect("every kind has a dictionary entry");
        let column = batch
            .column_by_name("kind")
            .expect("kind column")
            .as_any()
            .downcast_ref::<DictionaryArray<Int8Type>>()
            .expect("a dictionary column");
        let names = column
            .values()
            .as_any()
            .downcast_ref::<StringArray>()
            .expect("string values");
        let written: Vec<&str> = column
            .keys()
            .iter()
            .map(|key| names.value(key.expect("not null") as usize))
            .collect();
        let expected: Vec<&str> = PacketKind::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(written, expected);
    }
}

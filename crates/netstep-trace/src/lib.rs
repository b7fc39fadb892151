//! netstep trace tables: Arrow schemas, row types and atomic, zstd-compressed Parquet writing.
//!
//! Tables of a run folder (schema version [`SCHEMA_VERSION`]; column reference in
//! `docs/trace-schema.md`):
//! - `flows.parquet`: one row per flow ([`FlowRow`]);
//! - `links.parquet`: one row per egress port (directed link) with its static parameters and
//!   end-of-run counters ([`LinkRow`]);
//! - `run.parquet`: one row describing the run ([`RunRow`]);
//! - optional `packet_hops.parquet` (one row per packet per egress queue) and
//!   `queue_samples.parquet` (every sample interval, one row per used egress port), written by
//!   the [`TraceWriter`] thread;
//! - `pfc_events.parquet` when PFC is on: every PAUSE and RESUME frame, written by the
//!   [`TraceWriter`] thread as the run goes.
//!
//! Every file carries the schema version and run parameters in its Parquet key-value metadata,
//! is written to a temporary name and renamed when complete.

mod columns;
mod tables;
mod traces;

pub use tables::{
    CollectiveRow, FlowRow, JOB_COLUMNS, LinkRow, RunRow, collectives_batch, flows_batch,
    flows_schema, links_batch, links_schema, run_batch,
};
pub use traces::{
    BATCH_ROWS, TraceTables, TraceWriter, cc_samples_batch, cc_samples_schema, packet_hops_batch,
    packet_hops_schema, pfc_events_batch, pfc_events_schema, queue_samples_batch,
    queue_samples_schema, read_pfc_events,
};

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::RecordBatch;
use arrow_schema::{DataType, Schema};
use parquet::arrow::ArrowWriter;
use parquet::basic::Encoding;
use parquet::basic::{Compression, ZstdLevel};
use parquet::file::metadata::KeyValue;
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;

/// Version of the table schemas; bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// Writing a table failed.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// File system error.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// Parquet / Arrow error.
    #[error("{path}: {message}")]
    Parquet {
        /// The file.
        path: PathBuf,
        /// What failed.
        message: String,
    },
}

/// How a table's columns are encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Parquet defaults (dictionary encoding where it pays) with zstd: small tables.
    Default,
    /// Large trace tables: dictionaries only for enum columns, delta encoding for integers.
    Trace,
}

/// A Parquet table being written: rows go to a temporary file that [`TableWriter::finish`]
/// renames to its final name.
pub struct TableWriter {
    writer: ArrowWriter<File>,
    temporary: PathBuf,
    path: PathBuf,
}

impl TableWriter {
    /// Starts `path` with `schema`; `metadata` goes into the file's key-value metadata (with
    /// the schema version added).
    pub fn create(
        path: &Path,
        schema: Arc<Schema>,
        metadata: &[(String, String)],
    ) -> Result<TableWriter, TraceError> {
        TableWriter::create_with(path, schema, metadata, Layout::Default)
    }

    /// Like [`TableWriter::create`], with a column layout tuned for large trace tables.
    pub fn create_with(
        path: &Path,
        schema: Arc<Schema>,
        metadata: &[(String, String)],
        layout: Layout,
    ) -> Result<TableWriter, TraceError> {
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let temporary = path.with_file_name(format!(".{file_name}.partial"));
        let file = File::create(&temporary).map_err(|source| TraceError::Io {
            path: temporary.clone(),
            source,
        })?;
        let mut kv = vec![KeyValue::new(
            "netstep.schema_version".into(),
            SCHEMA_VERSION.to_string(),
        )];
        kv.extend(
            metadata
                .iter()
                .map(|(k, v)| KeyValue::new(k.clone(), v.clone())),
        );
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(
                ZstdLevel::try_new(1).expect("level 1 is valid"),
            ))
            .set_key_value_metadata(Some(kv));
        if layout == Layout::Trace {
            // Dictionary encoding of high-cardinality integers costs a hash-map insert per
            // value (measured: 20 % of the writer's time) for nothing: keep it for the enum
            // columns only and delta-encode the integers (times are nearly sorted).
            props = props.set_dictionary_enabled(false);
            for field in schema.fields() {
                let column = ColumnPath::from(field.name().as_str());
                match field.data_type() {
                    DataType::Dictionary(_, _) => {
                        props = props.set_column_dictionary_enabled(column, true)
                    }
                    DataType::UInt64 | DataType::UInt32 => {
                        props = props.set_column_encoding(column, Encoding::DELTA_BINARY_PACKED)
                    }
                    _ => {}
                }
            }
        }
        let props = props.build();
        let writer =
            ArrowWriter::try_new(file, schema, Some(props)).map_err(|e| TraceError::Parquet {
                path: path.to_path_buf(),
                message: e.to_string(),
            })?;
        Ok(TableWriter {
            writer,
            temporary,
            path: path.to_path_buf(),
        })
    }

    /// Appends a batch of rows.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<(), TraceError> {
        self.writer.write(batch).map_err(|e| TraceError::Parquet {
            path: self.path.clone(),
            message: e.to_string(),
        })
    }

    /// Closes the file and moves it to its final name.
    pub fn finish(self) -> Result<(), TraceError> {
        let TableWriter {
            writer,
            temporary,
            path,
        } = self;
        writer.close().map_err(|e| TraceError::Parquet {
            path: path.clone(),
            message: e.to_string(),
        })?;
        std::fs::rename(&temporary, &path).map_err(|source| TraceError::Io {
            path: path.clone(),
            source,
        })
    }
}

/// Writes one complete table.
pub fn write_table(
    path: &Path,
    batch: &RecordBatch,
    metadata: &[(String, String)],
) -> Result<(), TraceError> {
    let mut writer = TableWriter::create(path, batch.schema(), metadata)?;
    writer.write(batch)?;
    writer.finish()
}

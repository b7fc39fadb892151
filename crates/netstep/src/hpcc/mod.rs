//! The HPCC ns-3 simulator's users (m3, Parsimon): `netstep import hpcc` turns the simulator's
//! config file and the topology, flow and trace files it names into a netstep scenario, and
//! [`export`] writes a run's `fct.txt` and `pfc.txt` in the simulator's formats.
//!
//! The config is read as the m3/Parsimon fork of the simulator reads it (its `third.cc`),
//! the version that produced the published m3 data; [`Variant`] tells that fork's versions
//! and the upstream simulator apart where their readings differ (buffer units, the switch
//! MMU's headroom and reserve).

pub mod export;
pub mod files;
mod mapping;
pub mod simai;

pub use mapping::{Imported, Variant, import};

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt8Array, UInt16Array, UInt64Array};

/// Imports `config` into the folder `out` (created if needed): `scenario.toml` and
/// `flows.parquet`. Returns the scenario's path and what was not modeled.
pub fn import_into(config: &Path, out: &Path) -> anyhow::Result<(PathBuf, Imported)> {
    let imported = import(config)?;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let flows = &imported.flows;
    let names = |f: fn(&files::Flow) -> u32| -> ArrayRef {
        Arc::new(StringArray::from_iter_values(
            flows.iter().map(|x| f(x).to_string()),
        ))
    };
    let batch = RecordBatch::try_from_iter([
        ("src", names(|f| f.src)),
        ("dst", names(|f| f.dst)),
        (
            "size_bytes",
            Arc::new(UInt64Array::from_iter_values(flows.iter().map(|f| f.size))) as ArrayRef,
        ),
        (
            "start_ns",
            Arc::new(UInt64Array::from_iter_values(
                flows.iter().map(|f| f.start_ns),
            )),
        ),
        (
            "class",
            Arc::new(UInt8Array::from_iter_values(flows.iter().map(|f| f.pg))),
        ),
        (
            "sport",
            Arc::new(UInt16Array::from_iter_values(
                imported.sports.iter().copied(),
            )),
        ),
        (
            "dport",
            Arc::new(UInt16Array::from_iter_values(flows.iter().map(|f| f.dport))),
        ),
    ])?;
    let flows_path = out.join("flows.parquet");
    let file = std::fs::File::create(&flows_path)
        .with_context(|| format!("creating {}", flows_path.display()))?;
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None)?;
    writer.write(&batch)?;
    writer.close()?;
    let scenario = out.join("scenario.toml");
    std::fs::write(&scenario, &imported.toml)
        .with_context(|| format!("writing {}", scenario.display()))?;
    Ok((scenario, imported))
}

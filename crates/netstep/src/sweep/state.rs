//! A sweep folder's state: one record per point folder, file locks, and the manifest.
//!
//! `DIR/.netstep-sweep/points/<hash of the point's folder>.json` records the last finished
//! attempt at that folder (point id, done or failed, wall, error, netstep version); it is
//! written atomically after the run folder was renamed into place. A point is done when its
//! folder's record names its id with status done and the folder holds `run.parquet`: a run
//! killed before its record was written is simply run again (its folder is replaced
//! atomically), and a folder taken over by a changed point gets that point's record. Records
//! are separate files, so points finishing at once on a cluster never contend; locks
//! (`flock`) keep one writer per point folder and per manifest. `DIR/sweep.parquet` is
//! derived from the plan and the records and can be rebuilt at any time.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, anyhow, bail};
use arrow_array::{
    Array, ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray,
};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use serde::{Deserialize, Serialize};

use super::plan::{Plan, Point, display};

/// The hidden state folder inside a sweep folder.
pub const STATE_DIR: &str = ".netstep-sweep";

/// The manifest's file name.
pub const MANIFEST: &str = "sweep.parquet";

/// A point's status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Its run folder is complete.
    Done,
    /// Its last attempt failed; the error is recorded.
    Failed,
    /// Not run yet (or its run was interrupted).
    Pending,
}

impl Status {
    /// The manifest's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Done => "done",
            Status::Failed => "failed",
            Status::Pending => "pending",
        }
    }
}

/// The last finished attempt at one point folder.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Record {
    /// Point id.
    pub id: String,
    /// Folder relative to the sweep folder.
    pub path: String,
    /// Done or failed.
    pub status: Status,
    /// Wall-clock seconds of the attempt.
    pub wall_s: Option<f64>,
    /// Error message of a failed attempt.
    pub error: Option<String>,
    /// netstep version that ran it.
    pub netstep_version: String,
}

/// An open sweep folder.
pub struct SweepDir {
    /// The sweep folder (absolute, symbolic links resolved).
    pub root: PathBuf,
    state: PathBuf,
}

/// A held file lock; released when dropped (or when the process dies).
pub struct Lock(#[allow(dead_code)] File);

impl SweepDir {
    /// Opens (creating if needed) a sweep folder. An existing folder must be empty or hold a
    /// sweep's state; anything else is refused, never written into.
    pub fn open(root: &Path) -> anyhow::Result<SweepDir> {
        let shown = root.display();
        if root.exists() {
            if !root.is_dir() {
                bail!("--out {shown}: exists and is not a folder");
            }
            let state = root.join(STATE_DIR);
            if !state.is_dir() {
                let entries = std::fs::read_dir(root)
                    .with_context(|| format!("--out {shown}: cannot list the folder"))?;
                // The sweep state itself may appear between the check above and this listing:
                // another sweep started at the same moment is creating it (that sweep's lock
                // then decides which one runs).
                for entry in entries {
                    let name = entry?.file_name();
                    if name == STATE_DIR {
                        continue;
                    }
                    bail!(
                        "--out {shown}: the folder holds {} and no sweep state ({STATE_DIR}); it is not a netstep sweep and will not be written into: choose another folder",
                        name.to_string_lossy()
                    );
                }
            }
        }
        std::fs::create_dir_all(root.join(STATE_DIR).join("points"))
            .with_context(|| format!("--out {shown}: cannot create the sweep folder"))?;
        Self::existing(root)?.ok_or_else(|| anyhow!("--out {shown}: vanished"))
    }

    /// An existing sweep folder, read-only use (`None` when there is no sweep state yet).
    pub fn existing(root: &Path) -> anyhow::Result<Option<SweepDir>> {
        if !root.join(STATE_DIR).is_dir() {
            return Ok(None);
        }
        let root = std::fs::canonicalize(root)
            .with_context(|| format!("--out {}: cannot resolve the path", root.display()))?;
        let state = root.join(STATE_DIR);
        Ok(Some(SweepDir { root, state }))
    }

    fn key(path: &str) -> String {
        format!(
            "{:016x}",
            netstep_scenario::fnv1a(path.as_bytes(), 0xcbf2_9ce4_8422_2325)
        )
    }

    /// The record of the last finished attempt at a point folder.
    pub fn record(&self, path: &str) -> Option<Record> {
        let file = self
            .state
            .join("points")
            .join(format!("{}.json", Self::key(path)));
        let text = std::fs::read_to_string(file).ok()?;
        serde_json::from_str::<Record>(&text)
            .ok()
            .filter(|r| r.path == path)
    }

    /// Every record (including those of points no longer in the sweep file).
    pub fn records(&self) -> Vec<Record> {
        let mut out = Vec::new();
        if let Ok(entries) = std::fs::read_dir(self.state.join("points")) {
            for entry in entries.flatten() {
                let name = entry.file_name().to_string_lossy().into_owned();
                if name.ends_with(".json")
                    && !name.starts_with('.')
                    && let Ok(text) = std::fs::read_to_string(entry.path())
                    && let Ok(record) = serde_json::from_str::<Record>(&text)
                {
                    out.push(record);
                }
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }

    /// Writes a record atomically (temporary file, then rename).
    pub fn write_record(&self, record: &Record) -> anyhow::Result<()> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = self.state.join("points");
        let key = Self::key(&record.path);
        let temporary = dir.join(format!(
            ".{key}.{}-{}.tmp",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        let text = serde_json::to_string_pretty(record).expect("plain data serializes");
        std::fs::write(&temporary, text)
            .with_context(|| format!("writing {}", temporary.display()))?;
        std::fs::rename(&temporary, dir.join(format!("{key}.json")))
            .with_context(|| format!("recording point {}", record.path))
    }

    fn lock(&self, name: &str, wait: bool) -> anyhow::Result<Option<Lock>> {
        let path = self.state.join(name);
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
            .with_context(|| format!("opening {}", path.display()))?;
        if wait {
            file.lock()
                .with_context(|| format!("locking {}", path.display()))?;
            Ok(Some(Lock(file)))
        } else {
            match file.try_lock() {
                Ok(()) => Ok(Some(Lock(file))),
                Err(std::fs::TryLockError::WouldBlock) => Ok(None),
                Err(std::fs::TryLockError::Error(e)) => {
                    Err(e).with_context(|| format!("locking {}", path.display()))
                }
            }
        }
    }

    /// Waits for exclusive use of a point folder.
    pub fn lock_point(&self, path: &str) -> anyhow::Result<Lock> {
        Ok(self
            .lock(&format!("points/{}.lock", Self::key(path)), true)?
            .expect("a waiting lock is always taken"))
    }

    /// The driver's lock: one `netstep sweep` per folder at a time.
    pub fn lock_driver(&self) -> anyhow::Result<Lock> {
        self.lock("driver.lock", false)?.ok_or_else(|| {
            anyhow!(
                "{}: another `netstep sweep` is running on this folder; wait for it or stop it",
                self.root.display()
            )
        })
    }

    /// Whether `point` is done: its folder's record names it as done and the folder holds a
    /// complete run.
    pub fn is_done(&self, point: &Point) -> bool {
        self.status(point).0 == Status::Done
    }

    /// A point's status and its record (when the record is about this point).
    pub fn status(&self, point: &Point) -> (Status, Option<Record>) {
        match self.record(&point.path) {
            Some(r) if r.id == point.id => match r.status {
                Status::Done if self.root.join(&point.path).join("run.parquet").is_file() => {
                    (Status::Done, Some(r))
                }
                Status::Failed => (Status::Failed, Some(r)),
                _ => (Status::Pending, None),
            },
            _ => (Status::Pending, None),
        }
    }

    /// Removes what an interrupted run left next to a point's folder: its staging folders
    /// (`.<name>.partial-<pid>`) and a previous run moved aside. Call with the point locked.
    pub fn clean_staging(&self, path: &str) -> anyhow::Result<()> {
        let target = self.root.join(path);
        let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
            return Ok(());
        };
        let prefix = format!(".{}.partial-", name.to_string_lossy());
        let Ok(entries) = std::fs::read_dir(parent) else {
            return Ok(());
        };
        for entry in entries.flatten() {
            if entry.file_name().to_string_lossy().starts_with(&prefix)
                && entry.file_type().is_ok_and(|t| t.is_dir())
            {
                std::fs::remove_dir_all(entry.path())
                    .with_context(|| format!("removing {}", entry.path().display()))?;
            }
        }
        Ok(())
    }

    /// Rewrites `sweep.parquet` from the plan and the records, under the manifest lock.
    /// Returns the statuses in plan order.
    pub fn write_manifest(&self, plan: &Plan) -> anyhow::Result<Vec<Status>> {
        let _lock = self.lock("manifest.lock", true)?;
        let rows: Vec<(Status, Option<Record>)> =
            plan.points.iter().map(|p| self.status(p)).collect();
        let batch = manifest_batch(plan, &rows)?;
        let axes = serde_json::to_string(
            &plan
                .axes
                .iter()
                .map(|a| serde_json::json!({"name": a.name, "key": a.key, "group": a.group}))
                .collect::<Vec<_>>(),
        )
        .expect("plain data serializes");
        let metadata = vec![
            ("netstep.sweep".to_string(), plan.name.clone()),
            ("netstep.sweep_axes".to_string(), axes),
            (
                "netstep.version".to_string(),
                env!("CARGO_PKG_VERSION").to_string(),
            ),
        ];
        netstep_trace::write_table(&self.root.join(MANIFEST), &batch, &metadata)
            .context("writing sweep.parquet")?;
        Ok(rows.into_iter().map(|(s, _)| s).collect())
    }
}

/// The manifest as one record batch: point_id, path, one typed column per axis, status,
/// wall_s, error, netstep_version.
fn manifest_batch(plan: &Plan, rows: &[(Status, Option<Record>)]) -> anyhow::Result<RecordBatch> {
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (
            "point_id".into(),
            Arc::new(StringArray::from_iter_values(
                plan.points.iter().map(|p| p.id.as_str()),
            )),
        ),
        (
            "path".into(),
            Arc::new(StringArray::from_iter_values(
                plan.points.iter().map(|p| p.path.as_str()),
            )),
        ),
    ];
    for (i, axis) in plan.axes.iter().enumerate() {
        let values: Vec<&toml::Value> = plan.points.iter().map(|p| &p.values[i]).collect();
        columns.push((axis.name.clone(), axis_column(&values)));
    }
    columns.push((
        "status".into(),
        Arc::new(StringArray::from_iter_values(
            rows.iter().map(|(s, _)| s.as_str()),
        )),
    ));
    columns.push((
        "wall_s".into(),
        Arc::new(Float64Array::from(
            rows.iter()
                .map(|(_, r)| r.as_ref().and_then(|r| r.wall_s))
                .collect::<Vec<_>>(),
        )),
    ));
    columns.push((
        "error".into(),
        Arc::new(StringArray::from(
            rows.iter()
                .map(|(_, r)| r.as_ref().and_then(|r| r.error.as_deref()))
                .collect::<Vec<_>>(),
        )),
    ));
    columns.push((
        "netstep_version".into(),
        Arc::new(StringArray::from(
            rows.iter()
                .map(|(_, r)| r.as_ref().map(|r| r.netstep_version.as_str()))
                .collect::<Vec<_>>(),
        )),
    ));
    RecordBatch::try_from_iter(columns).map_err(|e| anyhow!("building the manifest: {e}"))
}

/// One axis as the narrowest column that holds all its values: Int64, Float64, Boolean, else
/// strings.
fn axis_column(values: &[&toml::Value]) -> ArrayRef {
    use toml::Value::{Boolean, Float, Integer};
    if values.iter().all(|v| matches!(v, Integer(_))) {
        Arc::new(Int64Array::from_iter_values(
            values.iter().map(|v| v.as_integer().expect("checked")),
        ))
    } else if values.iter().all(|v| matches!(v, Integer(_) | Float(_))) {
        Arc::new(Float64Array::from_iter_values(values.iter().map(
            |v| match v {
                Integer(i) => *i as f64,
                other => other.as_float().expect("checked"),
            },
        )))
    } else if values.iter().all(|v| matches!(v, Boolean(_))) {
        Arc::new(BooleanArray::from(
            values
                .iter()
                .map(|v| v.as_bool().expect("checked"))
                .collect::<Vec<_>>(),
        ))
    } else {
        Arc::new(StringArray::from_iter_values(
            values.iter().map(|v| display(v)),
        ))
    }
}

/// A sweep manifest's (path, status) rows, for tools that read a sweep folder.
pub fn read_manifest(root: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let path = root.join(MANIFEST);
    let file = File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    let reader = ParquetRecordBatchReaderBuilder::try_new(file)
        .map_err(|e| anyhow!("{}: not a readable Parquet file: {e}", path.display()))?
        .build()?;
    let mut rows = Vec::new();
    for batch in reader {
        let batch = batch?;
        let column = |name: &str| {
            batch
                .column_by_name(name)
                .and_then(|c| c.as_any().downcast_ref::<StringArray>().cloned())
                .ok_or_else(|| {
                    anyhow!("{}: no {name} column; not a sweep manifest", path.display())
                })
        };
        let (paths, statuses) = (column("path")?, column("status")?);
        for i in 0..batch.num_rows() {
            if !paths.is_null(i) && !statuses.is_null(i) {
                rows.push((paths.value(i).to_string(), statuses.value(i).to_string()));
            }
        }
    }
    Ok(rows)
}

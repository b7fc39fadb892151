//! AICB / SimAI workload files: the text format AICB writes for SimAI
//! (`workload_generator/SimAI_training_workload_generator.py`) and SimAI reads
//! (`Workload::initialize_workload`, `astra-sim/workload/Workload.cc:1134-1549`, SimAI
//! `f5efb5a`), parsed into typed rows.
//!
//! ```text
//! HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 8 ga: 1 all_gpus: 16 checkpoints: 0 checkpoint_initiates: 0 pp_comm: 0
//! 2
//! attn  -1  1000 ALLREDUCE 4096  900 ALLREDUCE 4096  800 NONE 0         100
//! mlp   -1  2000 NONE      0     1800 NONE     0     1600 ALLREDUCE 8192 100
//! ```
//!
//! - **Line 1**: the policy, then the header (see [`Header`]); tokens are split on any
//!   whitespace, as SimAI does.
//! - **Line 2**: the number of rows.
//! - **Rows**: one per line, 12 whitespace-separated columns (see [`COLUMNS`]): name, `-1`, then
//!   for the forward pass, the input gradient (ig) and the weight gradient (wg) each a compute
//!   time in ns, a collective type and its size in bytes (the whole collective's buffer), and
//!   last the update time in ns (a delay after each of the row's collectives). Blank lines are
//!   skipped.
//!
//! Where netstep is stricter than SimAI, which reads the rows token by token and never checks
//! them: a row must sit on one line with exactly 12 columns (SimAI would let a row wrap across
//! lines; no generator writes one), the second column must be `-1`, and the row count must
//! equal the rows present. SimAI ignores rows past the count and, short of rows, builds layers
//! from uninitialised values; netstep refuses both, naming both numbers (AICB's own
//! `L65B-M1-C05_Llama65B_megatron_tp8_pp1_mbs1_A100.txt` declares 839 rows and has 33).
//! Collective types SimAI does not know become "no collective" there; here they are refused.
//!
//! Every error reads `FILE:LINE: FIELD: message`, naming the header key or the row's column and
//! what was expected.

use std::fmt;
use std::path::Path;

use super::groups::Dimension;
use super::header::{Header, parse_header};

/// The 12 row columns, by the names errors use.
pub const COLUMNS: [&str; 12] = [
    "name",
    "reserved",
    "fwd_compute",
    "fwd_type",
    "fwd_size",
    "ig_compute",
    "ig_type",
    "ig_size",
    "wg_compute",
    "wg_type",
    "wg_size",
    "update_time",
];

/// A workload file that cannot be read: `file:line: field: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct WorkloadError {
    /// The file, as given.
    pub file: String,
    /// The 1-based line, when the problem is on one.
    pub line: Option<usize>,
    /// The header key or row column (`ep`, `row count`, `wg_type (column 10)`); empty when the
    /// file as a whole is at fault.
    pub field: String,
    /// What is wrong and what was expected.
    pub message: String,
}

impl fmt::Display for WorkloadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.field.is_empty() {
            write!(f, ": {}", self.field)?;
        }
        write!(f, ": {}", self.message)
    }
}

/// A parsed workload file.
#[derive(Clone, Debug, PartialEq)]
pub struct Workload {
    /// The file it came from, as given.
    pub file: String,
    /// Line 1.
    pub header: Header,
    /// The rows, in file order.
    pub rows: Vec<Row>,
}

/// One row: a layer (or a step AICB records, such as `grad_gather`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The 1-based line it is on.
    pub line: usize,
    /// Column 1, the layer name (SimAI's layer id).
    pub name: String,
    /// The forward pass (columns 3-5).
    pub forward: Phase,
    /// The input gradient (columns 6-8).
    pub input_grad: Phase,
    /// The weight gradient (columns 9-11).
    pub weight_grad: Phase,
    /// Column 12 in ns: the delay after each of this row's collectives completes before the
    /// layer counts it done (SimAI's `wg_update_time`, used for all three; not scaled).
    pub update_ns: u64,
}

/// One pass over a layer: compute, then a collective.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Phase {
    /// Compute time in ns.
    pub compute_ns: u64,
    /// The collective after it.
    pub comm: Comm,
    /// The collective's size in bytes: the whole buffer, as SimAI's size column (kept for
    /// `NONE` and `BROADCAST` too, which run nothing).
    pub bytes: u64,
}

impl Phase {
    /// The collective this phase runs, if any: its kind, its group's dimension and its bytes.
    pub fn collective(&self) -> Option<(CollectiveKind, Dimension, u64)> {
        match self.comm {
            Comm::Collective { kind, group } => Some((kind, group, self.bytes)),
            Comm::None | Comm::Broadcast => None,
        }
    }
}

/// A collective type column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Comm {
    /// `NONE`: no collective.
    None,
    /// `BROADCAST` (old AICB files, e.g. the `norm` row): SimAI runs no collective for it
    /// (`ComType::None`, `Workload.cc:1318-1489`); kept apart from `NONE` only so callers can
    /// say so.
    Broadcast,
    /// A collective over a group.
    Collective {
        /// What it does.
        kind: CollectiveKind,
        /// Over which group: a bare type means TP in the fwd and ig columns and DP in the wg
        /// column; `_EP` means EP and `_DP_EP` means DP_EP in any column.
        group: Dimension,
    },
}

/// The collectives SimAI runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CollectiveKind {
    /// `ALLREDUCE`.
    AllReduce,
    /// `ALLGATHER`.
    AllGather,
    /// `REDUCESCATTER`.
    ReduceScatter,
    /// `ALLTOALL`.
    AllToAll,
}

impl CollectiveKind {
    /// Every kind with its type name.
    const NAMES: [(&'static str, CollectiveKind); 4] = [
        ("ALLREDUCE", CollectiveKind::AllReduce),
        ("ALLGATHER", CollectiveKind::AllGather),
        ("REDUCESCATTER", CollectiveKind::ReduceScatter),
        ("ALLTOALL", CollectiveKind::AllToAll),
    ];
}

/// Which of a row's three type columns: decides the group of a bare type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Column {
    /// fwd or ig: a bare type is TP.
    Model,
    /// wg: a bare type is DP.
    WeightGrad,
}

impl Comm {
    /// A type column's value; `None` for a type SimAI does not run a collective for and
    /// netstep does not know.
    fn parse(token: &str, column: Column) -> Option<Comm> {
        match token {
            "NONE" => return Some(Comm::None),
            "BROADCAST" => return Some(Comm::Broadcast),
            _ => {}
        }
        let (kind, suffix) = CollectiveKind::NAMES
            .iter()
            .find_map(|(name, kind)| token.strip_prefix(name).map(|rest| (*kind, rest)))?;
        let group = match (suffix, column) {
            ("", Column::Model) => Dimension::Tp,
            ("", Column::WeightGrad) => Dimension::Dp,
            ("_EP", _) => Dimension::Ep,
            ("_DP_EP", _) => Dimension::DpEp,
            _ => return None,
        };
        Some(Comm::Collective { kind, group })
    }
}

/// Reads and parses the workload file at `path` (shown in errors as given).
pub fn read(path: &Path) -> Result<Workload, WorkloadError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| WorkloadError {
        file: file.clone(),
        line: None,
        field: String::new(),
        message: format!("cannot read the workload file: {e}"),
    })?;
    parse(&text, &file)
}

/// Parses workload text; `file` names it in errors.
pub fn parse(text: &str, file: &str) -> Result<Workload, WorkloadError> {
    let at = |line: usize, field: &str, message: String| WorkloadError {
        file: file.to_string(),
        line: Some(line),
        field: field.to_string(),
        message,
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let first = lines.next().map_or("", |(_, l)| l);
    let header = parse_header(first).map_err(|(field, message)| at(1, field, message))?;
    let Some((_, second)) = lines.next() else {
        return Err(at(
            2,
            "row count",
            "missing: expected line 2 to hold the number of rows".into(),
        ));
    };
    let declared: usize = second.trim().parse().map_err(|_| {
        at(
            2,
            "row count",
            format!("expected the number of rows (a non-negative integer), got {second:?}"),
        )
    })?;
    let data: Vec<(usize, &str)> = lines.filter(|(_, l)| !l.trim().is_empty()).collect();
    if data.len() != declared {
        let found = match (data.first(), data.last()) {
            (Some((first, _)), Some((last, _))) => {
                format!("{} (on lines {first}-{last})", data.len())
            }
            _ => "none".to_string(),
        };
        return Err(at(
            2,
            "row count",
            format!(
                "line 2 declares {declared} rows but the file has {found}; expected the count to \
                 equal the rows that follow (SimAI would ignore extra rows or read past the end)"
            ),
        ));
    }
    let rows = data
        .into_iter()
        .map(|(line, text)| {
            parse_row(line, text).map_err(|(field, message)| at(line, &field, message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Workload {
        file: file.to_string(),
        header,
        rows,
    })
}

/// A column's name in errors: `fwd_type (column 4)`.
fn column_field(index: usize) -> String {
    format!("{} (column {})", COLUMNS[index], index + 1)
}

/// The row on line `line`; an error is (field, message).
fn parse_row(line: usize, text: &str) -> Result<Row, (String, String)> {
    let tokens: Vec<&str> = text.split_whitespace().collect();
    if tokens.len() != COLUMNS.len() {
        let message = if tokens.len() < COLUMNS.len() {
            format!(
                "expected {} whitespace-separated columns ({}), found {}: {} missing",
                COLUMNS.len(),
                COLUMNS.join(" "),
                tokens.len(),
                COLUMNS[tokens.len()..].join(", "),
            )
        } else {
            format!(
                "expected {} whitespace-separated columns ({}), found {} (a 13th column, \
                 SimAI's HYBRID_CUSTOMIZED per-layer policy, is not supported)",
                COLUMNS.len(),
                COLUMNS.join(" "),
                tokens.len(),
            )
        };
        let field = match COLUMNS.get(tokens.len()) {
            Some(_) => column_field(tokens.len()),
            None => format!("column {}", COLUMNS.len() + 1),
        };
        return Err((field, message));
    }
    if tokens[1] != "-1" {
        return Err((
            column_field(1),
            format!(
                "expected -1 (AICB's placeholder, which SimAI reads as a dependency and \
                 ignores), got {:?}",
                tokens[1]
            ),
        ));
    }
    let number = |index: usize, unit: &str| -> Result<u64, (String, String)> {
        tokens[index].parse::<u64>().map_err(|_| {
            (
                column_field(index),
                format!(
                    "expected a non-negative integer ({unit}), got {:?}",
                    tokens[index]
                ),
            )
        })
    };
    let phase = |first: usize, column: Column| -> Result<Phase, (String, String)> {
        let compute_ns = number(first, "ns")?;
        let comm = Comm::parse(tokens[first + 1], column).ok_or_else(|| {
            let bare = match column {
                Column::Model => "TP",
                Column::WeightGrad => "DP",
            };
            (
                column_field(first + 1),
                format!(
                    "unknown collective type {:?}: expected NONE, BROADCAST, or ALLREDUCE, \
                     ALLGATHER, REDUCESCATTER or ALLTOALL, bare (over {bare} in this column) or \
                     with the suffix _EP or _DP_EP",
                    tokens[first + 1]
                ),
            )
        })?;
        let bytes = number(first + 2, "bytes")?;
        Ok(Phase {
            compute_ns,
            comm,
            bytes,
        })
    };
    Ok(Row {
        line,
        name: tokens[0].to_string(),
        forward: phase(2, Column::Model)?,
        input_grad: phase(5, Column::Model)?,
        weight_grad: phase(8, Column::WeightGrad)?,
        update_ns: number(11, "ns")?,
    })
}

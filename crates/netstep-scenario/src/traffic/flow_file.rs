//! `kind = "flow_file"`: flows read from a CSV or Parquet file, one per row, streamed (a trace
//! of millions of flows is never copied into TOML).
//!
//! Columns (names carry the unit; text cells with a unit are accepted in the unit-less form):
//! `src`, `dst` (host names; in Parquet an integer column is a node index), the size as
//! `size_bytes` (integer), `size` (text with a unit: `"10KB"`) or `packets`, the start as
//! `start_ns`, `start_ps` (integers) or `start` (`"1.5us"`; default 0), and optionally `class`
//! (0-7), `transport` (a name from the block's `transports`), `after` (row ids, from 0, of the
//! flows in this file it waits for: a Parquet list of integers, or text such as `"3 17"`) and
//! `delay_ns` or `delay` (with `after`), and `sport` and `dport` (port numbers, labels carried
//! to the HPCC-format output).

use std::collections::{BTreeMap, HashMap};

use netstep_core::flow::{Dependencies, DependencyError, FlowSpec};
use netstep_core::topology::{NodeKind, TopologySpec};
use netstep_core::units::{Bytes, SimTime, parse_duration, parse_size};

use serde::{Deserialize, Serialize};

use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::fields::traffic_class;
use crate::table_file::{self, Cell, RowAt, TableFile};
use crate::transport::{TransportConfig, TransportTemplate, resolve_transport};

/// Flows read from a CSV or Parquet file, one per row. Example: `kind = "flow_file"`,
/// `path = "flows.parquet"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowFileConfig {
    /// Traffic class (0-7) of rows without a `class` cell.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The flow file, CSV or Parquet by its extension (`.csv` or `.parquet`), relative to the
    /// scenario file's folder, then to the working directory.
    ///
    /// Unit: path · Default: required · Example: `path = "trace.csv"`
    pub path: String,
    /// Transport of rows without a `transport` cell: a table with the fields of `[transport]`.
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
    /// Named transports that rows select in their `transport` column.
    ///
    /// Unit: table of transport tables · Default: none · Example:
    /// `transports = { bulk = { kind = "tcp", cc = "cubic" } }`
    pub transports: Option<BTreeMap<String, TransportConfig>>,
}

impl FlowFileConfig {
    /// The named transports rows may select, resolved.
    pub(crate) fn named_transports(
        &self,
        path: &FieldPath,
    ) -> Result<BTreeMap<String, TransportTemplate>, Invalid> {
        let mut named = BTreeMap::new();
        for (name, t) in self.transports.iter().flatten() {
            named.insert(
                name.clone(),
                resolve_transport(t, path.key("transports").key(name))?,
            );
        }
        Ok(named)
    }
}

impl TrafficKind for FlowFileConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid> {
        let resolved = table_file::resolve(&self.path, on.base_dir);
        TableFile::open(&resolved, &self.path)
            .and_then(|t| t.row_count())
            .map_err(|e| Invalid::new(path.key("path"), e))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let default = b.transport(&self.transport)?;
        let named = self.named_transports(&path)?;
        let file = &self.path;
        let resolved = table_file::resolve(file, b.ctx.base_dir);
        let table =
            TableFile::open(&resolved, file).map_err(|e| Invalid::new(path.key("path"), e))?;
        b.out.inputs.push(format!(
            "flow_file {file} {:016x}",
            table_file::file_hash(&resolved).map_err(|e| Invalid::new(path.key("path"), e))?
        ));
        b.names();
        let ctx = b.ctx;
        let out = &mut *b.out;
        let reader = FlowFile {
            file: table,
            default: &default,
            named: &named,
            class: traffic_class(self.class, &path.key("class"))?,
            names: out.names.as_ref().expect("built above"),
            topology: ctx.topology,
        };
        let before = out.flows.len();
        reader.read(&mut out.flows, &path, &mut |n| {
            ctx.check_flows(before, (n - before) as u64, &path.key("path"))
        })
    }
}

/// The columns a flow file may have.
pub const COLUMNS: [&str; 15] = [
    "src",
    "dst",
    "size_bytes",
    "size",
    "packets",
    "start_ns",
    "start_ps",
    "start",
    "class",
    "transport",
    "after",
    "delay_ns",
    "delay",
    "sport",
    "dport",
];

/// A row waiting for others: its flow id, the row ids it waits for, the delay after them and
/// where it is (for errors).
type Wait = (u32, Vec<u64>, SimTime, RowAt);

/// What a `flow_file` block reads with.
pub struct FlowFile<'a> {
    /// The file.
    pub file: TableFile,
    /// Transport of rows without a `transport` cell.
    pub default: &'a TransportTemplate,
    /// Named transports rows may select.
    pub named: &'a BTreeMap<String, TransportTemplate>,
    /// Class of rows without a `class` cell.
    pub class: u8,
    /// Node index by name.
    pub names: &'a HashMap<&'a str, u32>,
    /// The topology (node kinds).
    pub topology: &'a TopologySpec,
}

impl FlowFile<'_> {
    /// Appends the file's flows to `flows` (ids from `flows.len()` on); `check` is called with
    /// the running flow count every 65,536 rows (the flow limit and memory budget).
    pub fn read(
        &self,
        flows: &mut Vec<FlowSpec>,
        path: &FieldPath,
        check: &mut dyn FnMut(usize) -> Result<(), Invalid>,
    ) -> Result<(), Invalid> {
        let first = flows.len();
        let file = &self.file;
        if let Some(rows) = file.known_rows() {
            check(first.saturating_add(rows as usize))?;
            flows.reserve(rows as usize);
        }
        let bad = |message: String| Invalid::new(path.key("path"), message);
        let mut waits: Vec<Wait> = Vec::new();
        let present = file
            .for_each_row(&COLUMNS, &COLUMNS, |at, cells| {
                let (flow, wait) = self.row(at, cells, flows.len() as u32)?;
                waits.extend(wait);
                flows.push(flow);
                if flows.len().is_multiple_of(65_536) {
                    check(flows.len()).map_err(|e| e.message)?;
                }
                Ok(())
            })
            .map_err(bad)?;
        if !present[0] || !present[1] {
            return Err(bad(format!(
                "{}: needs the columns \"src\" and \"dst\"",
                file.shown()
            )));
        }
        check(flows.len())?;
        self.resolve_waits(flows, first, waits, path)
    }

    /// One row as flow `id`, and what it waits for; the error names the row and column.
    fn row(
        &self,
        at: RowAt,
        cells: &[Cell<'_>],
        id: u32,
    ) -> Result<(FlowSpec, Option<Wait>), String> {
        let err = |column: &str, message: &str| self.file.error(at, column, message);
        let [
            src,
            dst,
            size_bytes,
            size,
            packets,
            start_ns,
            start_ps,
            start,
            class,
            transport,
            after,
            delay_ns,
            delay,
            sport,
            dport,
        ] = cells
        else {
            unreachable!("one cell per column")
        };
        let src_id = self.host(src).map_err(|m| err("src", &m))?;
        let dst_id = self.host(dst).map_err(|m| err("dst", &m))?;
        if src_id == dst_id {
            return Err(err(
                "dst",
                "the flow's source and destination are the same host",
            ));
        }
        let bytes = match (size_bytes, size) {
            (Cell::Null, Cell::Null) => None,
            (cell, Cell::Null) => cell
                .unsigned()
                .map_err(|m| err("size_bytes", &m))?
                .map(Bytes),
            (Cell::Null, cell) => Some(unit(cell, parse_size).map_err(|m| err("size", &m))?),
            _ => return Err(err("size", "give size_bytes or size, not both")),
        };
        let packets = packets
            .unsigned()
            .map_err(|m| err("packets", &m))?
            .map(|p| u32::try_from(p).map_err(|_| err("packets", "more than 2^32 packets")))
            .transpose()?;
        let start = time(
            [start_ns, start_ps, start],
            ["start_ns", "start_ps", "start"],
            &err,
        )?
        .unwrap_or(SimTime::ZERO);
        let class = match class.unsigned().map_err(|m| err("class", &m))? {
            None => self.class,
            Some(c) if c < netstep_core::queue::CLASSES as u64 => c as u8,
            Some(c) => {
                return Err(err(
                    "class",
                    &format!("traffic classes are 0 to 7, got {c}"),
                ));
            }
        };
        let template = match transport.text().map_err(|m| err("transport", &m))? {
            None => self.default,
            Some(name) => self.named.get(name.as_ref()).ok_or_else(|| {
                err(
                    "transport",
                    &format!(
                        "{name:?} is not one of the block's transports ({})",
                        self.named.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )
            })?,
        };
        let column = if packets.is_some() {
            "packets"
        } else {
            "size_bytes"
        };
        // A row of zero bytes, as the HPCC simulator and its generators write them: a flow
        // that sends nothing and never completes.
        let empty = (bytes == Some(Bytes(0)) && packets.is_none())
            .then(|| template.shared())
            .flatten();
        let (spec, bytes) = match empty {
            Some(spec) => (spec, Bytes(0)),
            None => template
                .for_flow(bytes, packets, &FieldPath::of(&[column]))
                .map_err(|e| err(column, &e.message))?,
        };
        let ids = after.id_list().map_err(|m| err("after", &m))?;
        let delay = time(
            [delay_ns, &Cell::Null, delay],
            ["delay_ns", "delay_ps", "delay"],
            &err,
        )?;
        let port = |cell: &Cell, column: &str| -> Result<Option<u16>, String> {
            match cell.unsigned().map_err(|m| err(column, &m))? {
                None => Ok(None),
                Some(p) => u16::try_from(p)
                    .map(Some)
                    .map_err(|_| err(column, &format!("port numbers are 0 to 65535, got {p}"))),
            }
        };
        let ports = match (port(sport, "sport")?, port(dport, "dport")?) {
            (Some(s), Some(d)) => Some([s, d]),
            (None, None) => None,
            (None, Some(_)) => return Err(err("sport", "missing (dport is given)")),
            (Some(_), None) => return Err(err("dport", "missing (sport is given)")),
        };
        let wait = if !ids.is_empty() {
            Some((id, ids, delay.unwrap_or(SimTime::ZERO), at))
        } else if delay.is_some() {
            return Err(err(
                "delay",
                "is the time after the flows in `after` finish; give `after` too",
            ));
        } else {
            None
        };
        let flow = FlowSpec {
            src: src_id,
            dst: dst_id,
            start,
            size: bytes,
            transport: spec,
            path: None,
            class,
            after: None,
            ports,
        };
        Ok((flow, wait))
    }

    /// Sets the dependencies of the rows with `after` (row ids of this file, from `first`
    /// on in `flows`); refuses ids past the file, self-waits, repeats and cycles.
    fn resolve_waits(
        &self,
        flows: &mut [FlowSpec],
        first: usize,
        waits: Vec<Wait>,
        path: &FieldPath,
    ) -> Result<(), Invalid> {
        let file = &self.file;
        let bad = |message: String| Invalid::new(path.key("path"), message);
        let rows = (flows.len() - first) as u64;
        for (id, ids, delay, at) in waits {
            let mut deps = Vec::with_capacity(ids.len());
            for dep in ids {
                if dep >= rows {
                    return Err(bad(file.error(
                        at,
                        "after",
                        &format!("row id {dep} is past the file's last row id, {}", rows - 1),
                    )));
                }
                let dep = first as u32 + dep as u32;
                if dep == id {
                    return Err(bad(file.error(
                        at,
                        "after",
                        "a flow cannot wait for itself",
                    )));
                }
                if deps.contains(&dep) {
                    return Err(bad(file.error(
                        at,
                        "after",
                        &format!("row id {} is listed twice", dep - first as u32),
                    )));
                }
                deps.push(dep);
            }
            flows[id as usize].after = Some(Box::new(Dependencies {
                flows: deps.into_boxed_slice(),
                delay,
            }));
        }
        match netstep_core::flow::check_dependencies(flows) {
            Ok(()) => Ok(()),
            Err(DependencyError::Cycle { cycle, .. }) => {
                let rows: Vec<String> = cycle
                    .iter()
                    .map(|r| (*r as usize - first).to_string())
                    .collect();
                Err(bad(format!(
                    "{}: row ids {} wait for each other in a cycle (each waits for the next); they would never start",
                    file.shown(),
                    rows.join(" -> ")
                )))
            }
            Err(e) => Err(bad(format!("{}: {e}", file.shown()))),
        }
    }

    /// A host's node index from a cell: a name, or (an integer column) a node index.
    fn host(&self, cell: &Cell<'_>) -> Result<u32, String> {
        let node = match cell {
            Cell::Null => return Err("missing".to_string()),
            Cell::Int(i) => u32::try_from(*i)
                .ok()
                .filter(|&n| (n as usize) < self.topology.nodes.len())
                .ok_or_else(|| format!("node index {i} is not in the topology"))?,
            Cell::Text(name) => *self
                .names
                .get(name)
                .ok_or_else(|| format!("unknown host {name:?}"))?,
            other => return Err(format!("expected a host name, got {other:?}")),
        };
        match self.topology.nodes[node as usize].kind {
            NodeKind::Host => Ok(node),
            NodeKind::Switch => Err(format!(
                "{:?} is a switch; flows run between hosts",
                self.topology.nodes[node as usize].name
            )),
        }
    }
}

/// A text cell with a unit, parsed by `parse`.
fn unit<T, E: std::fmt::Display>(
    cell: &Cell<'_>,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<T, String> {
    match cell {
        Cell::Text(t) => parse(t).map_err(|e| e.to_string()),
        other => Err(format!(
            "expected text with a unit (such as \"10KB\" or \"1.5us\"), got {other:?}; use the column with the unit in its name (size_bytes, start_ns, delay_ns) for numbers"
        )),
    }
}

/// A time from the `_ns` column, the `_ps` column or the text column (at most one), named
/// `names` in that order.
fn time(
    cells: [&Cell<'_>; 3],
    names: [&str; 3],
    err: &dyn Fn(&str, &str) -> String,
) -> Result<Option<SimTime>, String> {
    let [ns, ps, text] = cells;
    if cells.iter().filter(|c| ***c != Cell::Null).count() > 1 {
        return Err(err(names[2], "give the time in one column only"));
    }
    if let Some(v) = ns.unsigned().map_err(|m| err(names[0], &m))? {
        return v
            .checked_mul(1_000)
            .map(|ps| Some(SimTime(ps)))
            .ok_or_else(|| err(names[0], "too large"));
    }
    if let Some(v) = ps.unsigned().map_err(|m| err(names[1], &m))? {
        return Ok(Some(SimTime(v)));
    }
    match text {
        Cell::Null => Ok(None),
        cell => unit(cell, parse_duration)
            .map(Some)
            .map_err(|m| err(names[2], &m)),
    }
}

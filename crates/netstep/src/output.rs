//! The run folder: staged in a temporary sibling folder and renamed into place only when every
//! table is complete, so a failed or interrupted run never leaves partial output at the final
//! path.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use netstep_core::engine::RunOutput;
use netstep_core::flow::base_rtt;
use netstep_core::topology::NodeKind;
use netstep_core::units::BufferSize;
use netstep_core::units::SimTime;
use netstep_scenario::{CollectiveStep, Scenario};
use netstep_trace::{
    CollectiveRow, FlowRow, LinkRow, RunRow, TableWriter, collectives_batch, flows_batch,
    flows_schema, links_batch, links_schema, run_batch, write_table,
};

use crate::flow_rows::{FlowRows, FlowStats};
use std::collections::BTreeMap;

/// Tables every run writes.
pub const TABLES: [&str; 3] = ["flows.parquet", "links.parquet", "run.parquet"];

/// Every file a run folder may hold: the tables netstep writes. A folder holding anything else
/// is not a netstep run and is never replaced or deleted.
pub const RUN_FILES: [&str; 10] = [
    "flows.parquet",
    "collectives.parquet",
    "links.parquet",
    "run.parquet",
    "packet_hops.parquet",
    "queue_samples.parquet",
    "cc_samples.parquet",
    "pfc_events.parquet",
    "layers.parquet",
    "EndToEnd.csv",
];

/// A run folder being written.
pub struct Staging {
    /// The temporary folder.
    pub dir: PathBuf,
    /// The final folder, symbolic links resolved.
    target: PathBuf,
}

/// Resolves `--out` to an absolute path without symbolic links: an existing path is
/// canonicalized (a dangling link or a loop is an error), a new one is its canonical parent
/// (created if missing) joined with its name.
fn resolve(target: &Path) -> anyhow::Result<PathBuf> {
    let shown = target.display();
    match std::fs::symlink_metadata(target) {
        Ok(meta) => std::fs::canonicalize(target).map_err(|e| {
            if meta.file_type().is_symlink() {
                anyhow!(
                    "--out {shown}: a symbolic link that does not resolve to a folder ({e}); remove it or choose another folder"
                )
            } else {
                anyhow!("--out {shown}: cannot resolve the path ({e})")
            }
        }),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
            ) =>
        {
            let name = match target.components().next_back() {
                Some(std::path::Component::Normal(name)) => name.to_owned(),
                _ => bail!("--out {shown}: not a folder name"),
            };
            let parent = match target.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            std::fs::create_dir_all(&parent).map_err(|e| {
                anyhow!(
                    "--out {shown}: cannot create parent folder {}: {e}",
                    parent.display()
                )
            })?;
            let parent = std::fs::canonicalize(&parent)
                .map_err(|e| anyhow!("--out {shown}: cannot resolve {}: {e}", parent.display()))?;
            Ok(parent.join(name))
        }
        Err(e) => bail!("--out {shown}: cannot inspect the path ({e})"),
    }
}

/// Checks that an existing folder holds nothing but a previous run's tables (or nothing).
fn check_replaceable(target: &Path, shown: &Path) -> anyhow::Result<()> {
    if !target.is_dir() {
        bail!("--out {}: exists and is not a folder", shown.display());
    }
    let entries = std::fs::read_dir(target)
        .map_err(|e| anyhow!("--out {}: cannot list the folder ({e})", shown.display()))?;
    let mut foreign = Vec::new();
    let mut any = false;
    let mut has_run = false;
    for entry in entries {
        let entry = entry
            .map_err(|e| anyhow!("--out {}: cannot list the folder ({e})", shown.display()))?;
        any = true;
        let name = entry.file_name().to_string_lossy().into_owned();
        let is_file = entry.file_type().map(|t| t.is_file()).unwrap_or(false);
        if is_file && RUN_FILES.contains(&name.as_str()) {
            has_run |= name == "run.parquet";
        } else {
            foreign.push(name);
        }
    }
    if !foreign.is_empty() {
        foreign.sort();
        let more = if foreign.len() > 3 {
            format!(" and {} more", foreign.len() - 3)
        } else {
            String::new()
        };
        foreign.truncate(3);
        bail!(
            "--out {}: the folder holds {}{more}, which netstep did not write; it is not a netstep run and will not be replaced: choose another folder",
            shown.display(),
            foreign.join(", ")
        );
    }
    if any && !has_run {
        bail!(
            "--out {}: the folder is not a complete netstep run (no run.parquet); choose another folder or remove it",
            shown.display()
        );
    }
    Ok(())
}

impl Staging {
    /// Resolves the target (symbolic links included), refuses the working directory or a
    /// folder containing it, checks that an existing target is a previous netstep run (only
    /// netstep's tables in it) or empty, and creates the temporary folder next to it.
    pub fn prepare(target: &Path) -> anyhow::Result<Staging> {
        let resolved = resolve(target)?;
        let parent = match resolved.parent() {
            Some(parent) => parent.to_path_buf(),
            None => bail!(
                "--out {}: the file-system root cannot be a run folder",
                target.display()
            ),
        };
        if let Ok(cwd) = std::env::current_dir().and_then(std::fs::canonicalize)
            && cwd.starts_with(&resolved)
        {
            bail!(
                "--out {}: is the working directory or a folder containing it ({}); netstep replaces its output folder, so choose a new folder such as out/run",
                target.display(),
                resolved.display()
            );
        }
        if resolved.exists() {
            check_replaceable(&resolved, target)?;
        }
        let name = resolved
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        remove_stale_staging(&parent, &name);
        let dir = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if dir.exists() {
            // Only a staging folder of this very process id can be here: a crashed run's.
            std::fs::remove_dir_all(&dir).ok();
        }
        std::fs::create_dir(&dir).map_err(|e| {
            anyhow!(
                "--out {}: the output folder is not writable ({e})",
                target.display()
            )
        })?;
        Ok(Staging {
            dir,
            target: resolved,
        })
    }

    /// Moves the complete folder into place. A previous run there is first moved aside, then
    /// the new one renamed in, then the old run's tables (and nothing else) are removed; a
    /// folder that gained foreign files meanwhile is refused, not deleted.
    pub fn commit(self) -> anyhow::Result<()> {
        let target = &self.target;
        let exists = std::fs::symlink_metadata(target).is_ok();
        let empty_dir = exists
            && std::fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
        if !exists || empty_dir {
            // rename(2) replaces an empty folder atomically.
            return std::fs::rename(&self.dir, target)
                .with_context(|| format!("moving the run into {}", target.display()));
        }
        check_replaceable(target, target)?;
        let mut aside_name = self.dir.file_name().unwrap_or_default().to_owned();
        aside_name.push(".previous");
        let aside = self.dir.with_file_name(aside_name);
        std::fs::rename(target, &aside)
            .with_context(|| format!("moving the previous run at {} aside", target.display()))?;
        if let Err(e) = std::fs::rename(&self.dir, target) {
            let _ = std::fs::rename(&aside, target);
            return Err(e).with_context(|| format!("moving the run into {}", target.display()));
        }
        for file in RUN_FILES {
            match std::fs::remove_file(aside.join(file)) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(e).with_context(|| {
                        format!("removing the previous run's {file} in {}", aside.display())
                    });
                }
                _ => {}
            }
        }
        // Not recursive: anything that appeared in the old folder meanwhile is kept.
        std::fs::remove_dir(&aside)
            .with_context(|| format!("removing the previous run's folder {}", aside.display()))
    }
}

/// Removes the staging folders of earlier runs towards the same folder whose process is gone
/// (a `kill -9`, a power cut, a second signal): netstep's own name pattern
/// `.NAME.partial-PID` with no live process PID, and nothing else. (Linux: liveness from
/// `/proc`; elsewhere nothing is removed.)
fn remove_stale_staging(parent: &Path, name: &str) {
    let prefix = format!(".{name}.partial-");
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(pid) = file_name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .and_then(|pid| pid.parse::<u32>().ok())
        else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && pid != std::process::id() && process_is_gone(pid) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// Whether no process `pid` exists (known on Linux only; elsewhere assumed alive).
fn process_is_gone(pid: u32) -> bool {
    cfg!(target_os = "linux") && !Path::new(&format!("/proc/{pid}")).exists()
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What the run's tables and summary share (the flow rows themselves are made on demand,
/// [`FlowRows`]).
pub struct Tables {
    /// What the summary needs of the flow rows.
    pub flows: FlowStats,
    /// `run.parquet` row.
    pub run: RunRow,
    /// `collectives.parquet` rows (empty without collective traffic), by job, iteration, step.
    pub collectives: Vec<CollectiveRow>,
    /// Each collective job's name and completion time (its last flow's end minus its start;
    /// `None` when some flow did not complete).
    pub jobs: Vec<(String, Option<SimTime>)>,
}

impl Tables {
    /// Builds what the tables and the summary share from the flow rows and the run.
    pub fn build(
        scenario: &Scenario,
        output: &RunOutput,
        rows: &FlowRows<'_>,
        wall_seconds: f64,
    ) -> Tables {
        let model = &scenario.model;
        let flows = rows.stats();
        let meta = &scenario.meta;
        let run = RunRow {
            scenario: meta.name.clone(),
            scenario_hash: format!("{:016x}", meta.hash),
            seed: meta.seed,
            threads: meta.threads as u32,
            window_mode: match meta.window {
                netstep_core::engine::WindowMode::Exact => "exact",
                netstep_core::engine::WindowMode::Quantized(_) => "quantized",
            },
            window_ps: output.stats.window.0,
            lookahead_ps: model.lookahead().0,
            duration_ns: meta.duration.map(|d| d.as_ns()),
            sim_end_ns: output.stats.last_event.as_ns(),
            wall_seconds,
            packet_hops: output.stats.packet_hops,
            events: output.stats.events,
            batched_events: output.stats.batched,
            windows: output.stats.windows,
            drops: output.stats.drops,
            flows: flows.total,
            flows_completed: flows.completed,
            version: env!("CARGO_PKG_VERSION").to_string(),
            base_rtt_ns: (0..model.flows.len() as u32)
                .filter_map(|f| base_rtt(&model.net, &model.flows, f))
                .max()
                .unwrap_or(SimTime::ZERO)
                .as_ns(),
            host_rate_bps: (0..model.net.n_nodes() as u32)
                .filter(|&n| model.net.node_kind[n as usize] == NodeKind::Host)
                .flat_map(|n| (0..model.net.degree(n)).map(move |l| (n, l)))
                .map(|(n, l)| model.net.class_of(model.net.port_id(n, l)).rate.0)
                .max()
                .unwrap_or(0),
            mtu_bytes: model
                .flows
                .flows
                .iter()
                .map(|f| f.transport.max_packet(f.size).0)
                .max()
                .unwrap_or(0),
            trace_tables: meta.trace_tables.join(","),
            sample_interval_ns: model.trace.queue_samples.map(|i| i.as_ns()),
            nic_buffer: model.nic.buffer.to_string(),
            nic_per_flow: model.nic.per_flow.to_string(),
            nic_scheduler: model.nic.scheduler.name(),
            job: None,
        };
        let (collectives, jobs) = collective_rows(scenario, rows, output);
        Tables {
            flows,
            run,
            collectives,
            jobs,
        }
    }
}

/// The `collectives.parquet` rows (one per job, iteration and step) and each job's completion
/// time, from the flow rows (by flow id) and the flows' step tags.
fn collective_rows(
    scenario: &Scenario,
    flows: &FlowRows<'_>,
    output: &RunOutput,
) -> (Vec<CollectiveRow>, Vec<(String, Option<SimTime>)>) {
    let jobs = &scenario.collectives.jobs;
    if jobs.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let mut steps: BTreeMap<CollectiveStep, (CollectiveRow, bool)> = BTreeMap::new();
    // Each job's latest end in ps (None once a flow of it did not complete).
    let mut ends: Vec<Option<SimTime>> = vec![Some(SimTime::ZERO); jobs.len()];
    for (id, tag) in &scenario.collectives.steps {
        let end = &mut ends[tag.job as usize];
        *end = end
            .zip(output.flows.end(*id as usize))
            .map(|(a, b)| a.max(b));
        let row = flows.row(*id);
        let job = &jobs[tag.job as usize];
        let (entry, open) = steps.entry(*tag).or_insert_with(|| {
            (
                CollectiveRow {
                    job: job.name.clone(),
                    iteration: tag.iteration,
                    collective: job.collective,
                    step: tag.step,
                    flows: 0,
                    start_ns: None,
                    end_ns: None,
                    bytes: 0,
                },
                false,
            )
        });
        entry.flows += 1;
        entry.bytes += row.size_bytes;
        entry.start_ns = match (entry.start_ns, row.start_ns) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        entry.end_ns = entry.end_ns.max(row.end_ns);
        *open |= row.end_ns.is_none();
    }
    let rows: Vec<CollectiveRow> = steps
        .into_values()
        .map(|(mut row, open)| {
            if open {
                row.end_ns = None;
            }
            row
        })
        .collect();
    let times = jobs
        .iter()
        .zip(ends)
        .map(|(job, end)| {
            let time = end.map(|e| SimTime(e.0.saturating_sub(job.start.0)));
            (job.name.clone(), time)
        })
        .collect();
    (rows, times)
}

/// Key-value metadata of every table: schema version (added by the writer) and the run
/// parameters that do not depend on how the run was executed (no thread count, no wall time),
/// so tables stay byte-identical across thread counts.
pub fn metadata(meta: &netstep_scenario::ScenarioMeta) -> Vec<(String, String)> {
    let window = match meta.window {
        netstep_core::engine::WindowMode::Exact => "exact".to_string(),
        netstep_core::engine::WindowMode::Quantized(q) => q.to_string(),
    };
    vec![
        ("netstep.scenario".to_string(), meta.name.clone()),
        (
            "netstep.scenario_hash".to_string(),
            format!("{:016x}", meta.hash),
        ),
        ("netstep.seed".to_string(), meta.seed.to_string()),
        ("netstep.window".to_string(), window),
        (
            "netstep.duration".to_string(),
            meta.duration
                .map_or("until done".to_string(), |d| d.to_string()),
        ),
        (
            "netstep.version".to_string(),
            env!("CARGO_PKG_VERSION").to_string(),
        ),
    ]
}

/// Rows per `links` batch (bounds memory on very large topologies).
const LINK_BATCH: usize = 1 << 20;

/// Rows per `flows` batch. The writer gathers batches into row groups of its own size
/// (1,048,576 rows), so the file does not depend on this; small batches keep a run of
/// millions of flows from holding a million rows at once (about 300 B each).
const FLOW_BATCH: usize = 1 << 16;

/// Writes `flows.parquet`, a batch of rows at a time.
fn write_flows(path: &Path, rows: &FlowRows<'_>, kv: &[(String, String)]) -> anyhow::Result<()> {
    let standalone = rows.has_standalone();
    let mut writer = TableWriter::create(path, flows_schema(standalone), kv)?;
    let mut batch: Vec<FlowRow> = Vec::with_capacity(FLOW_BATCH.min(rows.len()));
    for id in 0..rows.len() as u32 {
        batch.push(rows.row(id));
        if batch.len() == FLOW_BATCH {
            writer.write(&flows_batch(&batch, standalone)?)?;
            batch.clear();
        }
    }
    if !batch.is_empty() || rows.is_empty() {
        writer.write(&flows_batch(&batch, standalone)?)?;
    }
    writer.finish()?;
    Ok(())
}

/// Writes every table into the staging folder.
pub fn write(
    staging: &Staging,
    scenario: &Scenario,
    tables: &Tables,
    rows: &FlowRows<'_>,
    output: &RunOutput,
) -> anyhow::Result<()> {
    let meta = &scenario.meta;
    let kv = metadata(meta);
    write_flows(&staging.dir.join("flows.parquet"), rows, &kv)?;
    let net = &scenario.model.net;
    let mut writer = TableWriter::create(&staging.dir.join("links.parquet"), links_schema(), &kv)?;
    let mut counters = output.ports.iter().peekable();
    let mut rows = Vec::with_capacity(LINK_BATCH.min(net.n_ports()));
    let kind = |k: NodeKind| k.name();
    for node in 0..net.n_nodes() as u32 {
        for local in 0..net.degree(node) {
            let port = net.port_id(node, local);
            let class = net.class_of(port);
            let peer = net.port_peer[port as usize];
            let mut row = LinkRow {
                port_id: port,
                node,
                node_kind: kind(net.node_kind[node as usize]),
                peer,
                peer_kind: kind(net.node_kind[peer as usize]),
                local_port: local,
                rate_bps: class.rate.0,
                delay_ps: class.delay.0,
                buffer_bytes: match class.buffer {
                    BufferSize::Bytes(b) => Some(b.0),
                    BufferSize::Packets(_) => None,
                },
                buffer_packets: match class.buffer {
                    BufferSize::Packets(n) => Some(n as u64),
                    BufferSize::Bytes(_) => None,
                },
                tx_packets: 0,
                tx_bytes: 0,
                drops: 0,
                lost: 0,
                max_queue_bytes: 0,
                yellow: 0,
                ecn_marks: 0,
            };
            if let Some(c) = counters.next_if(|c| c.port == port) {
                row.tx_packets = c.tx_packets;
                row.tx_bytes = c.tx_bytes;
                row.drops = c.drops;
                row.lost = c.lost;
                row.max_queue_bytes = c.max_queue_bytes;
                row.yellow = c.yellow;
                row.ecn_marks = c.ecn_marks;
            }
            rows.push(row);
            if rows.len() == LINK_BATCH {
                writer.write(&links_batch(&rows)?)?;
                rows.clear();
            }
        }
    }
    if !rows.is_empty() || net.n_ports() == 0 {
        writer.write(&links_batch(&rows)?)?;
    }
    writer.finish()?;
    if !tables.collectives.is_empty() {
        write_table(
            &staging.dir.join("collectives.parquet"),
            &collectives_batch(&tables.collectives)?,
            &kv,
        )?;
    }
    write_table(
        &staging.dir.join("run.parquet"),
        &run_batch(&tables.run)?,
        &kv,
    )?;
    Ok(())
}

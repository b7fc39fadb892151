//! The run folder: staged in a temporary sibling folder and renamed into place only when every
//! table is complete, so a failed or interrupted run never leaves partial output at the final
//! path.

use std::path::{Path, PathBuf};

use anyhow::{Context, anyhow, bail};
use netstep_core::engine::RunOutput;
use netstep_core::flow::{base_rtt, ideal_fct};
use netstep_core::topology::NodeKind;
use netstep_core::transport::TransportSpec;
use netstep_core::units::BufferSize;
use netstep_core::units::SimTime;
use netstep_core::world::{Flow, FlowResult};
use netstep_scenario::Scenario;
use netstep_trace::{
    FlowRow, LinkRow, RunRow, TableWriter, flows_batch, links_batch, links_schema, run_batch,
    write_table,
};

/// Tables every run writes.
pub const TABLES: [&str; 3] = ["flows.parquet", "links.parquet", "run.parquet"];

/// A run folder being written.
pub struct Staging {
    /// The temporary folder.
    pub dir: PathBuf,
    target: PathBuf,
}

impl Staging {
    /// Checks the target and creates the temporary folder next to it. A target that exists
    /// must be a previous netstep run (it will be replaced); anything else is refused.
    pub fn prepare(target: &Path) -> anyhow::Result<Staging> {
        if target.exists() {
            if !target.is_dir() {
                bail!("--out {}: exists and is not a folder", target.display());
            }
            let empty = std::fs::read_dir(target)
                .map(|mut d| d.next().is_none())
                .unwrap_or(false);
            if !empty && !target.join("run.parquet").exists() {
                bail!(
                    "--out {}: the folder exists and is not a netstep run (no run.parquet); choose another folder or remove it",
                    target.display()
                );
            }
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| {
            anyhow!(
                "--out {}: cannot create parent folder {}: {e}",
                target.display(),
                parent.display()
            )
        })?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "run".into());
        let dir = parent.join(format!(".{name}.partial-{}", std::process::id()));
        if dir.exists() {
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
            target: target.to_path_buf(),
        })
    }

    /// Moves the complete folder into place (replacing a previous run there).
    pub fn commit(self) -> anyhow::Result<()> {
        if self.target.exists() {
            std::fs::remove_dir_all(&self.target).with_context(|| {
                format!("removing the previous run at {}", self.target.display())
            })?;
        }
        // After the rename the staging path no longer exists, so `Drop` finds nothing to remove.
        std::fs::rename(&self.dir, &self.target)
            .with_context(|| format!("moving the run into {}", self.target.display()))
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Rows computed from the run, shared by the writer and the summary.
pub struct Tables {
    /// `flows.parquet` rows.
    pub flows: Vec<FlowRow>,
    /// `run.parquet` row.
    pub run: RunRow,
}

impl Tables {
    /// Builds the rows: flow rows from the World's flow entities and their recorded results.
    pub fn build(scenario: &mut Scenario, output: &RunOutput, wall_seconds: f64) -> Tables {
        let model = &scenario.model;
        let mut flows: Vec<FlowRow> = scenario
            .world
            .query::<(&Flow, &FlowResult)>()
            .iter(&scenario.world)
            .map(|(flow, result)| {
                let r = &result.0;
                let ideal = ideal_fct(&model.net, &model.flows, flow.id, model.seed)
                    .expect("validated: every flow has a route");
                let fct = r.end.map(|end| end - flow.spec.start);
                FlowRow {
                    flow_id: flow.id,
                    src: flow.spec.src,
                    dst: flow.spec.dst,
                    transport: match &flow.spec.transport {
                        TransportSpec::OpenLoop(_) => "open_loop",
                        TransportSpec::Tcp(t) => t.cc.transport_name(),
                    },
                    size_bytes: flow.spec.size.0,
                    start_ns: flow.spec.start.as_ns(),
                    end_ns: r.end.map(|e| e.as_ns()),
                    // In whole ns as end_ns - start_ns, so the table is self-consistent;
                    // slowdown uses the exact picosecond values.
                    fct_ns: r.end.map(|e| e.as_ns() - flow.spec.start.as_ns()),
                    ideal_fct_ns: ideal.as_ns(),
                    slowdown: fct.map(|f| f.0 as f64 / ideal.0.max(1) as f64),
                    packets_sent: r.packets_sent,
                    packets_delivered: r.packets_delivered,
                    packets_dropped: r.packets_dropped,
                    retransmits: r.retransmits,
                    timeouts: r.timeouts,
                    fail_reason: r.failure.map(|f| f.name()),
                    completed: r.end.is_some(),
                }
            })
            .collect();
        flows.sort_by_key(|f| f.flow_id);
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
            windows: output.stats.windows,
            drops: output.stats.drops,
            flows: flows.len() as u64,
            flows_completed: flows.iter().filter(|f| f.completed).count() as u64,
            version: env!("CARGO_PKG_VERSION").to_string(),
            base_rtt_ns: (0..model.flows.len() as u32)
                .filter_map(|f| base_rtt(&model.net, &model.flows, f))
                .max()
                .unwrap_or(SimTime::ZERO)
                .as_ns(),
            host_rate_bps: (0..model.net.n_nodes() as u32)
                .filter(|&n| model.net.node_kind[n as usize] == NodeKind::Host)
                .map(|n| model.net.class_of(model.net.port_id(n, 0)).rate.0)
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
        };
        Tables { flows, run }
    }
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

/// Writes every table into the staging folder.
pub fn write(
    staging: &Staging,
    scenario: &Scenario,
    tables: &Tables,
    output: &RunOutput,
) -> anyhow::Result<()> {
    let meta = &scenario.meta;
    let kv = metadata(meta);
    write_table(
        &staging.dir.join("flows.parquet"),
        &flows_batch(&tables.flows)?,
        &kv,
    )?;
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
            };
            if let Some(c) = counters.next_if(|c| c.port == port) {
                row.tx_packets = c.tx_packets;
                row.tx_bytes = c.tx_bytes;
                row.drops = c.drops;
                row.lost = c.lost;
                row.max_queue_bytes = c.max_queue_bytes;
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
    write_table(
        &staging.dir.join("run.parquet"),
        &run_batch(&tables.run)?,
        &kv,
    )?;
    Ok(())
}

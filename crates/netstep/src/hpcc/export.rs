//! A run's results in the HPCC simulator's output formats: `fct.txt` (one line per completed
//! flow, in completion order) and `pfc.txt` (one line per PAUSE or RESUME frame), so the
//! simulator's users' scripts (`analysis/fct_to_file.py`) read netstep's runs unchanged.
//!
//! Node ids: a node whose name is a number (as `netstep import hpcc` names them) has that id,
//! any other its netstep index. Addresses are the simulator's `11.(id/256).(id%256).1`.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;

use anyhow::Context as _;

use netstep_core::flow::{FlowSpec, flow_route};
use netstep_core::pfc::PfcEvent;
use netstep_core::topology::NodeKind;
use netstep_core::transport::TransportSpec;
use netstep_scenario::Scenario;

use super::files::SourcePorts;
use crate::flow_rows::FlowRows;

/// Which of the simulator's FCT line formats to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FctFormat {
    /// Upstream (alibaba-edu): `sip dip sport dport size start_ns fct_ns standalone_fct_ns`
    /// (`fct_ns` ends when the receiver has every byte, the fork's definition; upstream's
    /// ends at the sender's last ACK),
    /// the ideal `base_rtt + (size + packets x 48 B) / bottleneck` with the base RTT counting
    /// one payload's serialization per hop.
    Upstream,
    /// The m3/Parsimon fork: the flow id first, then the same fields, the ideal one-way (half
    /// the propagation round trip, the first packet store-and-forward over every hop, the rest
    /// at the bottleneck capped at 10 Gb/s, 48 B headers).
    M3,
}

/// The simulator's IPv4 address of node `id`.
pub fn node_ip(id: u32) -> u32 {
    // uint32 arithmetic, as the simulator's (ids past 2^16 wrap there too).
    0x0b00_0001u32
        .wrapping_add((id / 256).wrapping_mul(0x1_0000))
        .wrapping_add((id % 256) * 0x100)
}

/// The simulator's id of each netstep node: its name when the name is a number, else its
/// index.
pub fn simulator_ids(scenario: &Scenario) -> Vec<u32> {
    let mut ids: Vec<u32> = (0..scenario.model.net.n_nodes() as u32).collect();
    for (node, name) in scenario.node_names.iter().enumerate() {
        if let Ok(id) = name.parse::<u32>() {
            ids[node] = id;
        }
    }
    ids
}

/// Payload bytes per packet of a flow's transport.
fn payload(spec: &FlowSpec) -> u64 {
    match &*spec.transport {
        TransportSpec::Rdma(r) => r.mtu_bytes as u64,
        TransportSpec::Tcp(t) => t.mss_bytes as u64,
        TransportSpec::OpenLoop(o) => o.packet_size.0,
    }
}

/// The simulator's ideal ("standalone") FCT of `flow`, ns, in `format`'s formula (integer ns,
/// each division truncated as the simulator's integer arithmetic does).
pub fn standalone_fct_ns(scenario: &Scenario, flow: u32, format: FctFormat) -> Option<u64> {
    const HEADER: u64 = 48;
    let model = &scenario.model;
    let spec = &model.flows.flows[flow as usize];
    let route = flow_route(&model.net, &model.flows, flow, false)?;
    let hops: Vec<(u64, u64)> = route
        .iter()
        .map(|&(node, local)| {
            let class = model.net.class_of(model.net.port_id(node, local));
            (class.rate.0, class.delay.0 / 1000)
        })
        .collect();
    let delay: u64 = hops.iter().map(|h| h.1).sum();
    let bottleneck = hops.iter().map(|h| h.0).min()?;
    let mtu = payload(spec).max(1);
    let size = spec.size.0;
    Some(match format {
        FctFormat::Upstream => {
            let tx: u64 = hops.iter().map(|&(bw, _)| mtu * 8_000_000_000 / bw).sum();
            let base_rtt = 2 * delay + tx;
            let total = size + (size.saturating_sub(1) / mtu + 1) * HEADER;
            base_rtt + (total as u128 * 8_000_000_000 / bottleneck as u128) as u64
        }
        FctFormat::M3 => {
            let b = bottleneck.min(10_000_000_000);
            let header_delay = HEADER * 8_000_000_000 / b;
            let head = mtu.min(size);
            let rest = size - head;
            let rest_packets = size.saturating_sub(1) / mtu;
            let tx: u64 = hops
                .iter()
                .map(|&(bw, _)| ((head + HEADER) as u128 * 8_000_000_000 / bw as u128) as u64)
                .sum();
            let rest_delay =
                (rest as u128 * 8_000_000_000 / b as u128) as u64 + rest_packets * header_delay;
            2 * delay / 2 + tx + rest_delay
        }
    })
}

/// Writes `fct.txt` to `path`: one line per completed flow, in completion order (then flow
/// id), with the rows' `standalone_fct_ns` (rows made with `format`), line by line. `ids` are
/// [`simulator_ids`].
pub fn write_fct_txt(
    path: &Path,
    ids: &[u32],
    rows: &FlowRows<'_>,
    format: FctFormat,
) -> std::io::Result<()> {
    let flows = &rows.scenario().model.flows.flows;
    // Source ports for flows without their own: the simulator's counters from 10000.
    let mut counters = SourcePorts::new(format == FctFormat::M3);
    let ports: Vec<[u16; 2]> = flows
        .iter()
        .map(|f| {
            f.ports
                .unwrap_or_else(|| [counters.next(f.src, f.dst), 100])
        })
        .collect();
    // By the end in whole ns (as the line writes it), then flow id.
    let mut done: Vec<(u64, u32)> = rows
        .output()
        .flows
        .iter()
        .enumerate()
        .filter_map(|(id, r)| Some((r.end?.as_ns(), id as u32)))
        .collect();
    done.sort_unstable();
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    for (_, id) in done {
        let row = rows.row(id);
        let f = &flows[id as usize];
        let [sport, dport] = ports[id as usize];
        let (Some(start), Some(fct), Some(ideal)) =
            (row.start_ns, row.fct_ns, row.standalone_fct_ns)
        else {
            continue;
        };
        if format == FctFormat::M3 {
            write!(out, "{id} ")?;
        }
        writeln!(
            out,
            "{:08x} {:08x} {sport} {dport} {} {start} {fct} {ideal}",
            node_ip(ids[f.src as usize]),
            node_ip(ids[f.dst as usize]),
            f.size.0
        )?;
    }
    out.flush()
}

/// `pfc.txt`: `time_ns node node_type if_index type` per frame, as the simulator writes it,
/// except the time: when the switch issued the frame (the simulator logs its reception, a
/// frame's serialization and the link's delay later); the node that received the frame
/// (whose egress it pauses), 0 for a host and 1 for a switch,
/// its device index (its local port + 1: devices count from 1 in the order of the links that
/// name the node), 1 for PAUSE and 0 for RESUME.
/// `ids` are [`simulator_ids`].
pub fn pfc_txt(scenario: &Scenario, ids: &[u32], events: &[PfcEvent]) -> String {
    let mut out = String::new();
    pfc_lines(&mut out, scenario, ids, events);
    out
}

/// Writes `dir/pfc.txt` ([`pfc_txt`]) from the run's `dir/pfc_events.parquet`, a batch at a
/// time (empty when the run had no PFC).
pub fn write_pfc_txt(dir: &Path, scenario: &Scenario, ids: &[u32]) -> anyhow::Result<()> {
    let path = dir.join("pfc.txt");
    let file = std::fs::File::create(&path).with_context(|| format!("{}", path.display()))?;
    let mut file = std::io::BufWriter::new(file);
    let events = dir.join("pfc_events.parquet");
    if scenario.model.pfc.is_some() {
        let mut text = String::new();
        let mut written = Ok(());
        netstep_trace::read_pfc_events(&events, |rows| {
            text.clear();
            pfc_lines(&mut text, scenario, ids, rows);
            if written.is_ok() {
                written = file.write_all(text.as_bytes());
            }
        })?;
        written.with_context(|| format!("{}", path.display()))?;
    }
    file.flush()
        .with_context(|| format!("{}", path.display()))?;
    Ok(())
}

/// Appends the `pfc.txt` lines of `events` to `out`.
fn pfc_lines(out: &mut String, scenario: &Scenario, ids: &[u32], events: &[PfcEvent]) {
    let net = &scenario.model.net;
    for e in events {
        let peer = net.port_peer[e.port as usize];
        let local = net.port_peer_local[e.port as usize] as u32;
        let kind = match net.node_kind[peer as usize] {
            NodeKind::Host => 0,
            NodeKind::Switch => 1,
        };
        let _ = writeln!(
            out,
            "{} {} {kind} {} {}",
            e.time_ps / 1000,
            ids[peer as usize],
            local + 1,
            u8::from(e.pause)
        );
    }
}

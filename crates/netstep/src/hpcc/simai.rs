//! SimAI's inputs as one scenario (`netstep import simai`): its topology file, its `SimAI.conf`
//! (the HPCC simulator's keys: [`super::mapping::import_job`]) and an AICB workload (the
//! `aicb` traffic kind).
//!
//! The topology file (SimAI `f5efb5a`, `network_frontend/ns3/common.h:694-815`; written by
//! `inputs/topo/gen_Topo_Template.py`):
//!
//! ```text
//! <nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>
//! <the NVSwitch ids> <the switch ids>
//! <src> <dst> <rate> <delay> <error_rate>        (one per link)
//! ```
//!
//! GPUs are the nodes in neither list; SimAI numbers them first (`0..G`) and puts GPU `i` on
//! server `i / gpus_per_server`. Each GPU is a host with all of its links (NVLink to its
//! server's NVSwitch, one or two NIC links to leaf switches), as SimAI's: its ports are its
//! links in the file's order (SimAI's devices), each port has its own NIC, and a queue pair
//! leaves by the port its route starts with (SimAI's `GetNicIdxOfQp`: the flow hash over the
//! GPU's next hops towards the destination). Routes are shortest paths that never pass through
//! a GPU and take the NVSwitch where it ties with another next hop (`prefer`), as SimAI's BFS
//! routes (it never continues through a GPU and prefers an NVSwitch next hop among
//! equal-length ones).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use super::files::{Link, Tokens, Topology};
use super::mapping::{JobImport, import_job};

/// SimAI's topology file, read.
#[derive(Clone, Debug)]
pub struct SimaiTopology {
    /// GPUs (hosts `0..gpus`).
    pub gpus: u32,
    /// GPUs per server.
    pub gpus_per_server: u32,
    /// NVSwitch ids.
    pub nvswitches: Vec<u32>,
    /// Switch ids.
    pub switches: Vec<u32>,
    /// Line 1's GPU type (`A100`, `H100`, ...).
    pub gpu_type: String,
    /// The fabric: the file's nodes and links, the GPUs as hosts.
    pub topology: Topology,
}

/// Reads SimAI's topology file.
pub fn read_topology(path: &Path) -> anyhow::Result<SimaiTopology> {
    let mut t = Tokens::open(path, "SimAI topology file")?;
    let nodes: u32 = t.parse("the node count")?;
    let gps: u32 = t.parse("gpus_per_server")?;
    let nv: u32 = t.parse("the NVSwitch count")?;
    let sw: u32 = t.parse("the switch count")?;
    let links: u32 = t.parse("the link count")?;
    let gpu_type = t.next("the GPU type")?;
    if nodes as u64 > netstep_scenario::limits::MAX_NODES / 2 {
        return Err(t.error(&format!("{nodes} nodes: more than netstep can build")));
    }
    let gpus = nodes
        .checked_sub(nv + sw)
        .filter(|&g| g > 0)
        .ok_or_else(|| {
            t.error(&format!(
                "{nv} NVSwitches and {sw} switches leave no GPU of {nodes} nodes"
            ))
        })?;
    if gps == 0 || gpus % gps != 0 {
        return Err(t.error(&format!(
            "gpus_per_server {gps} does not divide the {gpus} GPUs (nodes minus NVSwitches and switches)"
        )));
    }
    let mut kind = vec![0u8; nodes as usize];
    let mut ids = |count: u32, what: &str, mark: u8, t: &mut Tokens| -> anyhow::Result<Vec<u32>> {
        let mut list = Vec::with_capacity(count as usize);
        for _ in 0..count {
            let id: u32 = t.parse(what)?;
            if id >= nodes || kind[id as usize] != 0 {
                return Err(t.error(&format!("{what} {id}: not below {nodes}, or listed twice")));
            }
            if id < gpus {
                return Err(t.error(&format!(
                    "{what} {id}: SimAI numbers the GPUs first (0 to {}), then NVSwitches and switches",
                    gpus - 1
                )));
            }
            kind[id as usize] = mark;
            list.push(id);
        }
        Ok(list)
    };
    let nvswitches = ids(nv, "an NVSwitch id", 2, &mut t)?;
    let switches = ids(sw, "a switch id", 1, &mut t)?;
    let mut list = Vec::with_capacity((links as usize).min(1 << 22));
    for _ in 0..links {
        list.push(Link::read(&mut t, nodes)?);
    }
    if let Some((line, extra)) = t.rest() {
        bail!(
            "{}:{line}: {extra:?} after the {links} links line 1 announces",
            path.display()
        );
    }
    let mut linked = vec![false; gpus as usize];
    for l in &list {
        for end in [l.a, l.b] {
            if let Some(g) = linked.get_mut(end as usize) {
                *g = true;
            }
        }
    }
    if let Some(g) = linked.iter().position(|&l| !l) {
        bail!("{}: GPU {g} has no link", path.display());
    }
    let topology = Topology {
        nodes,
        is_switch: kind.iter().map(|&k| k != 0).collect(),
        links: list,
    };
    Ok(SimaiTopology {
        gpus,
        gpus_per_server: gps,
        nvswitches,
        switches,
        gpu_type,
        topology,
    })
}

/// The files `netstep import simai` reads.
pub struct SimaiFiles<'a> {
    /// SimAI's topology file.
    pub topology: &'a Path,
    /// `SimAI.conf`.
    pub config: &'a Path,
    /// The AICB workload.
    pub workload: &'a Path,
}

/// Imports SimAI's three files into `out` (created if needed): `scenario.toml` and a copy of
/// the workload (`workload.txt`). Returns the scenario's path and what was not modeled.
pub fn import_into(files: &SimaiFiles<'_>, out: &Path) -> anyhow::Result<(PathBuf, Vec<String>)> {
    let simai = read_topology(files.topology)?;
    // The workload is read (and checked) by the scenario at load; here only copied.
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    std::fs::copy(files.workload, out.join("workload.txt"))
        .with_context(|| format!("copying {}", files.workload.display()))?;
    let mut traffic = String::new();
    writeln!(
        traffic,
        "[[traffic]]\nkind = \"aicb\"\nworkload = \"workload.txt\"\ngpus_per_server = {}\nclass = {SIMAI_PG}\nsend_latency = \"6us\"",
        simai.gpus_per_server
    )?;
    let name = files
        .workload
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "simai".to_string());
    let sources = vec![
        format!(
            "Topology: {} ({} GPUs, {} per server, {} NVSwitches, {} switches, {}); each GPU a host of all its links.",
            files.topology.display(),
            simai.gpus,
            simai.gpus_per_server,
            simai.nvswitches.len(),
            simai.switches.len(),
            simai.gpu_type,
        ),
        format!("Workload: {} -> workload.txt.", files.workload.display()),
    ];
    let job = JobImport {
        topology: &simai.topology,
        rules: routing_rules(&simai),
        sources,
        traffic,
        name,
        lossless: BTreeSet::from([SIMAI_PG]),
        mapped: vec![
            format!("flows in priority group {SIMAI_PG}, as SimAI's SendFlow (entry.h) -> the job's class {SIMAI_PG}"),
            "AS_SEND_LAT -> send_latency 6us (SimAI's documented default; its unset code reads 6 ms)".to_string(),
        ],
        not_modeled: vec![format!(
            "gpu_type {}: NVLS (AS_NVLS_ENABLE) and PXN (AS_PXN_ENABLE), which SimAI runs only when asked, are not modeled",
            simai.gpu_type
        )],
    };
    let (toml, not_modeled) = import_job(files.config, job)?;
    let scenario = out.join("scenario.toml");
    std::fs::write(&scenario, toml).with_context(|| format!("writing {}", scenario.display()))?;
    Ok((scenario, not_modeled))
}

/// The `[topology]` line that keeps routes as SimAI's: the NVSwitch where it ties with
/// another next hop (SimAI's BFS prefers it). No route passes through a GPU: netstep's never
/// pass through a host.
fn routing_rules(simai: &SimaiTopology) -> String {
    let quoted: Vec<String> = simai
        .nvswitches
        .iter()
        .map(|i| format!("\"{i}\""))
        .collect();
    format!("prefer = [{}]\n", quoted.join(", "))
}

/// The priority group SimAI's flows use (`entry.h`: `pg = 3`).
const SIMAI_PG: u8 = 3;

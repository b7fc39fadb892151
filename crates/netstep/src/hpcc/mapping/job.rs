//! A training job's config: SimAI's `SimAI.conf`, read as the upstream HPCC simulator's config
//! (SimAI's packet backend is a fork of it, `BUFFER_SIZE` in MB), over a topology and traffic
//! block the caller supplies (`netstep import simai`, [`crate::hpcc::simai`]).

use std::collections::BTreeSet;
use std::path::Path;

use super::{Log, Sections, Variant, failures, keys, scenario_text, switch, topology, transport};
use crate::hpcc::files::{Config, Topology};

/// What the caller supplies.
pub(crate) struct JobImport<'a> {
    /// The fabric, in the simulator's form (node ids as names).
    pub topology: &'a Topology,
    /// `[topology]` routing-rule lines (`no_transit`, `prefer`).
    pub rules: String,
    /// Lines for the scenario's header: where the topology and the job came from.
    pub sources: Vec<String>,
    /// The `[[traffic]]` block.
    pub traffic: String,
    /// The scenario's name.
    pub name: String,
    /// The traffic classes the switches' MMU accounts (the job's).
    pub lossless: BTreeSet<u8>,
    /// Keys mapped by the caller, for the header.
    pub mapped: Vec<String>,
    /// Keys or inputs the caller does not model, for the header.
    pub not_modeled: Vec<String>,
}

/// The scenario text and what was not modeled.
pub(crate) fn import_job(
    config_path: &Path,
    job: JobImport<'_>,
) -> anyhow::Result<(String, Vec<String>)> {
    let config = Config::read(config_path)?;
    let variant = Variant::Upstream;
    let mut log = Log::new(&config);
    log.mapped.extend(job.mapped);
    log.not_modeled.extend(job.not_modeled);
    let mut switch = switch::buffer_and_mmu(variant, job.topology, &job.lossless, &mut log)?;
    let ecn = switch::Ecn::read(variant, &mut log)?;
    // The fabric's switches mark; the GPUs' NICs do not.
    let switches = &job.topology.is_switch;
    let marks = |n: u32| switches[n as usize];
    let mut topology = topology::topology(job.topology, &ecn, &marks, &mut log)?;
    topology.rules = job.rules;
    let (mut transport, cc, mtu) = transport::transport(config_path, variant, &mut log)?;
    transport::nic_and_acks(variant, mtu, &mut transport, &mut switch, &mut log)?;
    let failures = failures(&mut log)?;
    for (key, reason) in [
        (
            "SIMULATOR_STOP_TIME",
            "the job runs until every GPU has finished its iteration",
        ),
        (
            "FLOW_FILE",
            "SimAI's frontend makes the flows from the workload; so does netstep",
        ),
        (
            "ENABLE_TRACE",
            "no packet trace by default; set [trace] tables = [\"packet_hops\"] to have one",
        ),
        ("TRACE_FILE", "see ENABLE_TRACE"),
    ] {
        if config.has(key) {
            log.note(key, reason);
        }
    }
    keys::other_keys(variant, cc, None, &mut log);
    let sections = Sections {
        simulation: String::new(),
        switch,
        topology,
        transport,
        failures,
        trace: String::new(),
    };
    let from = format!(
        "`netstep import simai`, SimAI.conf {} (read as the upstream HPCC simulator's config: SimAI's ns-3 backend is its fork)",
        config_path.display()
    );
    let toml = scenario_text(
        &from,
        &job.sources,
        &job.name,
        &sections,
        &log,
        &job.traffic,
    )?;
    Ok((toml, log.not_modeled))
}

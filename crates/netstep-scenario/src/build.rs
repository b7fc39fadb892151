//! Building a parsed scenario, as named steps: the run settings, the topology and its size,
//! the routing budget, the traffic, the trace settings, the World and the model compiled from
//! it, the checks on the model, and the row estimates of the trace tables.

use std::collections::HashMap;
use std::path::Path;

use bevy_ecs::world::World;
use netstep_core::engine::trace::TraceConfig;
use netstep_core::engine::{Model, WindowMode};
use netstep_core::flow::FlowSpec;
use netstep_core::topology::TopologySpec;
use netstep_core::units::{SimTime, parse_duration};
use netstep_core::world;

use crate::config::{ScenarioFile, SimulationConfig, TransportConfig};
use crate::error::{FieldPath, Invalid};
use crate::limits::{self, Footprint, Limits};
use crate::overrides::fnv1a;
use crate::settings::{
    ResolvedFailure, admission_room, balance, nic_config, pfc, resolve_failures, shared_buffer,
};
use crate::trace_settings::{trace_config, trace_tables};
use crate::{Collectives, Scenario, ScenarioMeta, VALIDATE_BUILD_BYTES, Validated};
use crate::{checks, estimate, topology, traffic, transport};

/// `[simulation]` resolved: what the run is, apart from the model.
struct RunSettings {
    /// Stop time, if any.
    duration: Option<SimTime>,
    /// Window mode.
    window: WindowMode,
    /// Worker threads.
    threads: usize,
    /// Seed.
    seed: u64,
}

/// Where the scenario text came from, for its identity.
pub(crate) struct Source<'a> {
    /// The text after `--set`.
    pub effective: &'a str,
    /// The file as errors show it.
    pub file: &'a str,
    /// The name when the file gives none (its stem).
    pub default_name: &'a str,
    /// Folder of the scenario file (input files are relative to it).
    pub base_dir: Option<&'a Path>,
}

/// Builds the scenario (or, for validation of a topology too large to build, estimates it).
pub(crate) fn build(
    mut parsed: ScenarioFile,
    source: &Source<'_>,
    limits: &Limits,
    validate_only: bool,
) -> Result<Validated, Invalid> {
    let run = run_settings(&parsed.simulation)?;
    let base_dir = source.base_dir;
    let topology_inputs = topology::read_files(&mut parsed.topology, base_dir)?;
    let counts = topology::check_size(&parsed.topology, limits)?;
    let building = Footprint {
        nodes: counts.nodes,
        ports: counts.ports,
        ..Default::default()
    }
    .memory_bytes()
    .saturating_sub(limits::BASE_BYTES);
    if validate_only
        && building > VALIDATE_BUILD_BYTES
        && let Some((hosts, classes)) = topology::arithmetic(&parsed.topology)?
    {
        let host_rate = topology::host_rate_bps(&parsed.topology, &classes);
        let mut found = estimate::estimate(
            &parsed,
            (hosts, host_rate),
            &classes,
            counts,
            base_dir,
            limits,
            run.window,
        )?;
        if found.name.is_empty() {
            found.name = source.default_name.to_string();
        }
        return Ok(Validated::Estimated(found));
    }
    let topology = topology::build(&parsed.topology)?;
    let failures = resolve_failures(&parsed.failures, &topology, limits)?;
    let routing_entries = routing_budget(&topology, counts, failures.len(), limits)?;
    let mut footprint = Footprint {
        nodes: counts.nodes,
        ports: counts.ports,
        routing_entries,
        ..Default::default()
    };
    let mut generated = generate_traffic(&parsed, &topology, &run, source, limits, &footprint)?;
    count_packets(&generated.flows, &mut footprint, limits)?;
    let mut hash = fnv1a(source.effective.as_bytes(), 0xcbf2_9ce4_8422_2325);
    for input in topology_inputs.iter().chain(&generated.inputs) {
        hash = fnv1a(input.as_bytes(), hash);
    }
    let tables = trace_tables(&parsed.trace)?;
    let trace = trace(&parsed, &tables, &topology, &generated.flows)?;
    if let Some(interval) = trace.queue_samples {
        // Every port is sampled at every interval up to the end: the duration, or without
        // one at least up to the last flow start.
        let horizon = run.duration.unwrap_or_else(|| {
            let last = generated.flows.iter().map(|f| f.start).max();
            last.unwrap_or(SimTime::ZERO)
        });
        footprint.queue_sample_rows = counts
            .ports
            .saturating_mul(horizon.0 / interval.0.max(1) + 1);
        limits.check_count(
            footprint.queue_sample_rows,
            limits::MAX_QUEUE_SAMPLE_ROWS,
            "queue_samples rows (every port at every sample_interval)",
            &FieldPath::of(&["trace", "sample_interval"]),
        )?;
    }
    let collectives = Collectives {
        jobs: std::mem::take(&mut generated.jobs),
        steps: std::mem::take(&mut generated.tags),
    };
    let aicb = generated.aicb.take();
    let job = aicb.as_ref().map(|a| std::sync::Arc::new(a.job.clone()));
    let (mut world, model) = spawn(
        &parsed, topology, generated, job, &failures, trace, run.seed,
    )?;
    checks::check_model(&model, &mut world)?;
    // The setup World's work is done: the model holds the flows, the node names are kept for
    // outputs and messages; dropping it frees its flow storage before the run.
    let node_names = world::node_names(&mut world);
    drop(world);
    estimate::trace_rows(&model, run.duration, &mut footprint, limits)?;
    footprint.live_flows = Some(estimate::live_flows(&model));
    footprint.job_flows = model.job.as_ref().map_or(0, |j| j.flows.len() as u64);
    limits.check_memory(&footprint, &FieldPath::of(&["traffic"]))?;
    let meta = ScenarioMeta {
        name: parsed
            .name
            .clone()
            .unwrap_or_else(|| source.default_name.to_string()),
        file: source.file.to_string(),
        hash,
        text: source.effective.to_string(),
        seed: run.seed,
        threads: run.threads,
        window: run.window,
        duration: run.duration,
        trace_tables: tables,
        footprint,
    };
    Ok(Validated::Built(Box::new(Scenario {
        meta,
        model,
        node_names,
        collectives,
        aicb,
    })))
}

/// `[simulation]`: duration, window, threads and seed, checked.
fn run_settings(sim: &SimulationConfig) -> Result<RunSettings, Invalid> {
    let path = FieldPath::of(&["simulation"]);
    let duration = sim
        .duration
        .as_ref()
        .map(|d| parse_duration(d).map_err(|e| Invalid::unit(path.key("duration"), e)))
        .transpose()?;
    if duration == Some(SimTime::ZERO) {
        return Err(Invalid::new(
            path.key("duration"),
            "must be positive (leave it out to run until all flows finish)",
        ));
    }
    let window = match sim.window.as_deref() {
        None | Some("exact") => WindowMode::Exact,
        Some(w) => WindowMode::Quantized(window_width(w, &path)?),
    };
    let threads = sim.threads.unwrap_or(SimulationConfig::DEFAULT_THREADS);
    if threads == 0 || threads > limits::MAX_THREADS {
        return Err(Invalid::new(
            path.key("threads"),
            format!(
                "must be between 1 and {}, got {threads}",
                limits::MAX_THREADS
            ),
        ));
    }
    Ok(RunSettings {
        duration,
        window,
        threads,
        seed: sim.seed.unwrap_or(SimulationConfig::DEFAULT_SEED),
    })
}

/// A quantized window's width: positive and at most [`limits::MAX_WINDOW`].
fn window_width(w: &str, path: &FieldPath) -> Result<SimTime, Invalid> {
    let width = parse_duration(w).map_err(|_| {
        Invalid::new(
            path.key("window"),
            format!("{w:?} is not valid: expected \"exact\" or a duration such as \"5us\""),
        )
    })?;
    if width == SimTime::ZERO {
        return Err(Invalid::new(
            path.key("window"),
            "a zero window never advances; expected \"exact\" or a positive duration",
        ));
    }
    if width > limits::MAX_WINDOW {
        return Err(Invalid::new(
            path.key("window"),
            format!(
                "{w:?} is longer than the limit of {}; a quantum that coarse moves every arrival to one instant",
                limits::MAX_WINDOW
            ),
        ));
    }
    Ok(width)
}

/// The routing table entries the run will build (every epoch with a dead link has its own
/// shortest-path tables), checked against the limits.
fn routing_budget(
    topology: &TopologySpec,
    counts: topology::Counts,
    failures: usize,
    limits: &Limits,
) -> Result<u64, Invalid> {
    let routing_entries = topology::routing_entries(topology).saturating_add(
        topology::shortest_path_entries(topology).saturating_mul(2 * failures as u64),
    );
    let links_path = FieldPath::of(&["topology", "links"]);
    limits.check_count(
        routing_entries,
        limits::MAX_ROUTING_ENTRIES,
        "routing table entries (switches hosts attach to x nodes)",
        &links_path,
    )?;
    limits.check_memory(
        &Footprint {
            nodes: counts.nodes,
            ports: counts.ports,
            routing_entries,
            ..Default::default()
        },
        &links_path,
    )?;
    Ok(routing_entries)
}

/// Generates the flows of every traffic block; refuses a flow starting past the limit.
fn generate_traffic(
    parsed: &ScenarioFile,
    topology: &TopologySpec,
    run: &RunSettings,
    source: &Source<'_>,
    limits: &Limits,
    sized: &Footprint,
) -> Result<traffic::Generated, Invalid> {
    let default_transport = match &parsed.transport {
        Some(t) => transport::resolve_transport(t, FieldPath::of(&["transport"]))?,
        None => transport::resolve_transport(
            &TransportConfig::Tcp(Default::default()),
            FieldPath::of(&["transport"]),
        )?,
    };
    let ctx = traffic::TrafficContext {
        topology,
        seed: run.seed,
        default_transport,
        base_dir: source.base_dir,
        limits,
        nodes: sized.nodes,
        ports: sized.ports,
        routing_entries: sized.routing_entries,
    };
    let generated = traffic::generate(&parsed.traffic, &ctx)?;
    let flows = &generated.flows;
    if let Some(late) = flows.iter().position(|f| f.start > limits::MAX_START) {
        return Err(Invalid::new(
            FieldPath::of(&["traffic"]),
            format!(
                "flow {late} starts at {}, later than the limit of {} (events must stay below {}, about 13 days)",
                flows[late].start,
                limits::MAX_START,
                netstep_core::engine::event::MAX_EVENT_TIME
            ),
        ));
    }
    Ok(generated)
}

/// Counts the flows and their data packets into `footprint`, checked against the limit.
fn count_packets(
    flows: &[FlowSpec],
    footprint: &mut Footprint,
    limits: &Limits,
) -> Result<(), Invalid> {
    footprint.flows = flows.len() as u64;
    footprint.packets = flows
        .iter()
        .map(|f| transport::data_packets(&f.transport, f.size))
        .fold(0u64, u64::saturating_add);
    limits.check_count(
        footprint.packets,
        limits::MAX_PACKETS,
        "data packets",
        &FieldPath::of(&["traffic"]),
    )
}

/// `[trace]` resolved against the topology's node names and the flow count.
fn trace(
    parsed: &ScenarioFile,
    tables: &[String],
    topology: &TopologySpec,
    flows: &[FlowSpec],
) -> Result<TraceConfig, Invalid> {
    let names: HashMap<&str, u32> = match &parsed.trace.nodes {
        Some(list) if !list.is_empty() => topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u32))
            .collect(),
        _ => Default::default(),
    };
    trace_config(
        &parsed.trace,
        tables,
        &names,
        topology.nodes.len(),
        flows.len(),
    )
}

/// Puts every entity and setting into a World and compiles the model from it with the setup
/// systems.
fn spawn(
    parsed: &ScenarioFile,
    topology: TopologySpec,
    generated: traffic::Generated,
    job: Option<std::sync::Arc<netstep_core::job::JobSpec>>,
    failures: &[ResolvedFailure],
    trace: TraceConfig,
    seed: u64,
) -> Result<(World, Model), Invalid> {
    let nic = world::NicSettings(nic_config(&parsed.nic)?);
    let switches = world::SwitchSettings {
        shared_buffer: shared_buffer(&parsed.switch)?,
        balance: balance(&parsed.routing)?,
        pfc: pfc(&parsed.switch, &topology.classes)?,
        ack_priority: parsed.switch.ack_priority.unwrap_or(false),
        admission_room: admission_room(&parsed.switch)?,
    };
    let mut world = World::new();
    world::spawn_topology(&mut world, topology);
    world::spawn_flows(&mut world, generated.flows, seed);
    world::spawn_failures(&mut world, failures);
    if let Some(job) = job {
        world.insert_resource(world::Job(job));
    }
    world.insert_resource(nic);
    world.insert_resource(switches);
    world.insert_resource(world::TraceSettings(trace));
    let model = world::build_model(&mut world)
        .map_err(|e| Invalid::new(FieldPath::of(&["topology"]), e.to_string()))?;
    Ok((world, model))
}

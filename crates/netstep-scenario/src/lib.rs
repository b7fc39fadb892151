//! netstep scenarios: the TOML format ([`config`]), unit-checked validation, `--set`
//! overrides, traffic generation, and building the bevy World and the engine [`Model`] from a
//! scenario file. Every error names the file, the field, the line and column where known, the
//! value and what was expected.

pub mod cdf;
pub mod config;
pub mod error;
pub mod topology;
pub mod traffic;

use std::path::Path;

use bevy_ecs::world::World;
use netstep_core::engine::{EngineConfig, Model, WindowMode};
use netstep_core::units::{BufferSize, Bytes, SimTime, parse_buffer, parse_duration};
use netstep_core::world;

use config::{ScenarioFile, TransportConfig};
pub use error::{FieldPath, Invalid, ScenarioError};

/// Name used for the built-in scenario in messages.
pub const QUICKSTART_NAME: &str = "<built-in quickstart>";
/// The built-in quickstart scenario (`scenarios/quickstart.toml`).
pub const QUICKSTART: &str = include_str!("../../../scenarios/quickstart.toml");

/// Run settings and identity of a loaded scenario.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioMeta {
    /// Scenario name.
    pub name: String,
    /// File it came from.
    pub file: String,
    /// FNV-1a 64 hash of the effective scenario text (after `--set`) and its CDF inputs.
    pub hash: u64,
    /// The effective scenario text.
    pub text: String,
    /// Seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Window mode.
    pub window: WindowMode,
    /// Stop time, if any.
    pub duration: Option<SimTime>,
    /// Optional tables written by this run (`packet_hops`, `queue_samples`).
    pub trace_tables: Vec<String>,
}

impl ScenarioMeta {
    /// The engine configuration these settings describe.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            threads: self.threads,
            window: self.window,
            end: self.duration,
        }
    }
}

/// A loaded, validated scenario: its settings, the World holding the model's entities, and the
/// dense model the setup systems compiled from them.
pub struct Scenario {
    /// Settings and identity.
    pub meta: ScenarioMeta,
    /// Nodes, links and flows as entities.
    pub world: World,
    /// The compiled model the engines run.
    pub model: Model,
}

/// Loads a scenario file, applying `--set KEY=VALUE` overrides.
pub fn load(path: &Path, overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let file = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| ScenarioError {
        file: file.clone(),
        line_col: None,
        field: String::new(),
        message: format!("cannot read scenario: {e}"),
    })?;
    let default_name = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "scenario".into());
    load_str(&text, &file, &default_name, path.parent(), overrides)
}

/// Loads the built-in quickstart.
pub fn load_quickstart(overrides: &[String]) -> Result<Scenario, ScenarioError> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    load_str(
        QUICKSTART,
        QUICKSTART_NAME,
        "quickstart",
        Some(&base),
        overrides,
    )
}

/// Loads scenario text. `file` names it in errors, `base_dir` anchors relative CDF paths.
pub fn load_str(
    text: &str,
    file: &str,
    default_name: &str,
    base_dir: Option<&Path>,
    overrides: &[String],
) -> Result<Scenario, ScenarioError> {
    let effective = apply_overrides(text, overrides).map_err(|message| ScenarioError {
        file: file.to_string(),
        line_col: None,
        field: "--set".into(),
        message,
    })?;
    let shown_file = if overrides.is_empty() {
        file.to_string()
    } else {
        format!("{file} (after --set)")
    };
    let parsed: ScenarioFile = toml::from_str(&effective).map_err(|e| ScenarioError {
        file: shown_file.clone(),
        line_col: e.span().map(|s| error::line_col(&effective, s.start)),
        field: String::new(),
        message: e.message().trim().to_string(),
    })?;
    let locate = |invalid: Invalid| ScenarioError {
        file: shown_file.clone(),
        line_col: error::locate(&effective, &invalid.path)
            .map(|s| error::line_col(&effective, s.start)),
        field: invalid.path.to_string(),
        message: invalid.message,
    };
    build(parsed, &effective, file, default_name, base_dir).map_err(locate)
}

fn nic_config(nic: &config::NicFileConfig) -> Result<netstep_core::nic::NicConfig, Invalid> {
    let path = FieldPath::of(&["nic"]);
    let defaults = netstep_core::nic::NicConfig::default();
    let buffer = |value: &Option<String>, field: &str, default: BufferSize| match value {
        None => Ok(default),
        Some(v) => {
            let b = parse_buffer(v).map_err(|e| Invalid::unit(path.key(field), e))?;
            if matches!(b, BufferSize::Packets(0) | BufferSize::Bytes(Bytes(0))) {
                return Err(Invalid::new(
                    path.key(field),
                    format!("must be positive, got {v:?} (a NIC that holds nothing never sends)"),
                ));
            }
            Ok(b)
        }
    };
    Ok(netstep_core::nic::NicConfig {
        buffer: buffer(&nic.buffer, "buffer", defaults.buffer)?,
        per_flow: buffer(&nic.per_flow, "per_flow", defaults.per_flow)?,
        scheduler: match nic.scheduler {
            None => defaults.scheduler,
            Some(config::NicSchedulerConfig::RoundRobin) => {
                netstep_core::nic::NicScheduler::RoundRobin
            }
            Some(config::NicSchedulerConfig::Fifo) => netstep_core::nic::NicScheduler::Fifo,
        },
    })
}

fn build(
    parsed: ScenarioFile,
    effective: &str,
    file: &str,
    default_name: &str,
    base_dir: Option<&Path>,
) -> Result<Scenario, Invalid> {
    let sim = &parsed.simulation;
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
        Some(w) => {
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
            WindowMode::Quantized(width)
        }
    };
    let threads = sim.threads.unwrap_or(1);
    if threads == 0 || threads > 1024 {
        return Err(Invalid::new(
            path.key("threads"),
            format!("must be between 1 and 1024, got {threads}"),
        ));
    }
    let seed = sim.seed.unwrap_or(1);
    let topology = topology::build(&parsed.topology)?;
    let default_transport = match &parsed.transport {
        Some(t) => traffic::resolve_transport(t, FieldPath::of(&["transport"]))?,
        None => traffic::resolve_transport(
            &TransportConfig::Tcp {
                cc: None,
                sack: None,
                delayed_ack: None,
                abc_limit: None,
                pacing: None,
                mss: None,
                header: None,
                initial_cwnd: None,
                rto_min: None,
                rto_initial: None,
                rto_max: None,
                max_retries: None,
            },
            FieldPath::of(&["transport"]),
        )?,
    };
    let ctx = traffic::TrafficContext {
        topology: &topology,
        seed,
        default_transport,
        base_dir,
    };
    let (flows, inputs) = traffic::generate(&parsed.traffic, &ctx)?;
    let mut hash = fnv1a(effective.as_bytes(), 0xcbf2_9ce4_8422_2325);
    for input in &inputs {
        hash = fnv1a(input.as_bytes(), hash);
    }
    let trace_tables = trace_tables(&parsed.trace)?;
    let names: std::collections::HashMap<&str, u32> = match &parsed.trace.nodes {
        Some(_) => topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u32))
            .collect(),
        None => Default::default(),
    };
    let trace = trace_config(
        &parsed.trace,
        &trace_tables,
        &names,
        topology.nodes.len(),
        flows.len(),
    )?;
    drop(names);
    let mut world = World::new();
    world::spawn_topology(&mut world, topology);
    world::spawn_flows(&mut world, flows, seed);
    let mut model = world::build_model(&mut world)
        .map_err(|e| Invalid::new(FieldPath::of(&["topology"]), e.to_string()))?;
    model.trace = trace;
    model.nic = nic_config(&parsed.nic)?;
    for flow in 0..model.flows.len() as u32 {
        if netstep_core::flow::flow_route(&model.net, &model.flows, flow, false).is_none() {
            let f = &model.flows.flows[flow as usize];
            return Err(Invalid::new(
                FieldPath::of(&["traffic"]),
                format!(
                    "flow {flow} from node {} to node {} has no route",
                    f.src, f.dst
                ),
            ));
        }
    }
    if !model.flows.is_empty() && model.lookahead() == SimTime::ZERO {
        return Err(Invalid::new(
            FieldPath::of(&["topology"]),
            format!(
                "zero lookahead: a link has propagation delay 0 and the smallest packet is {} bytes, so a packet could cross it in no time; give links a delay or packets a size",
                model.min_packet().0
            ),
        ));
    }
    let meta = ScenarioMeta {
        name: parsed
            .name
            .clone()
            .unwrap_or_else(|| default_name.to_string()),
        file: file.to_string(),
        hash,
        text: effective.to_string(),
        seed,
        threads,
        window,
        duration,
        trace_tables,
    };
    Ok(Scenario { meta, world, model })
}

/// Tables `[trace] tables` may name.
pub const TRACE_TABLES: [&str; 3] = ["flows", "packet_hops", "queue_samples"];

fn trace_tables(config: &config::TraceTablesConfig) -> Result<Vec<String>, Invalid> {
    let mut tables = Vec::new();
    for (i, table) in config.tables.iter().flatten().enumerate() {
        if !TRACE_TABLES.contains(&table.as_str()) {
            return Err(Invalid::new(
                FieldPath::of(&["trace", "tables"]).index(i),
                format!(
                    "unknown table {table:?}; expected one of {}",
                    TRACE_TABLES.join(", ")
                ),
            ));
        }
        if table != "flows" && !tables.contains(table) {
            tables.push(table.clone());
        }
    }
    tables.sort();
    Ok(tables)
}

fn trace_config(
    config: &config::TraceTablesConfig,
    tables: &[String],
    names: &std::collections::HashMap<&str, u32>,
    n_nodes: usize,
    n_flows: usize,
) -> Result<netstep_core::engine::trace::TraceConfig, Invalid> {
    use netstep_core::engine::trace::{HopFilter, TraceConfig};
    let path = FieldPath::of(&["trace"]);
    let duration =
        |value: &Option<String>, field: &str, default: SimTime| -> Result<SimTime, Invalid> {
            value.as_ref().map_or(Ok(default), |v| {
                parse_duration(v).map_err(|e| Invalid::unit(path.key(field), e))
            })
        };
    let mut trace = TraceConfig::default();
    if tables.iter().any(|t| t == "queue_samples") {
        let interval = duration(
            &config.sample_interval,
            "sample_interval",
            SimTime::from_us(10),
        )?;
        if interval == SimTime::ZERO {
            return Err(Invalid::new(
                path.key("sample_interval"),
                "must be positive",
            ));
        }
        trace.queue_samples = Some(interval);
    }
    if tables.iter().any(|t| t == "packet_hops") {
        let mut filter = HopFilter::all();
        if let Some(flows) = &config.flows {
            let mut keep = vec![false; n_flows];
            for (i, &flow) in flows.iter().enumerate() {
                *keep.get_mut(flow as usize).ok_or_else(|| {
                    Invalid::new(path.key("flows").index(i), format!("flow {flow} does not exist; the scenario has {n_flows} flows (ids 0..{n_flows})"))
                })? = true;
            }
            filter.flows = Some(keep);
        }
        if let Some(nodes) = &config.nodes {
            let mut keep = vec![false; n_nodes];
            for (i, name) in nodes.iter().enumerate() {
                let node = names.get(name.as_str()).ok_or_else(|| {
                    Invalid::new(path.key("nodes").index(i), format!("unknown node {name:?}"))
                })?;
                keep[*node as usize] = true;
            }
            filter.nodes = Some(keep);
        }
        filter.from = duration(&config.from, "from", SimTime::ZERO)?;
        filter.until = duration(&config.until, "until", SimTime::MAX)?;
        if filter.until <= filter.from {
            return Err(Invalid::new(
                path.key("until"),
                "must be later than trace.from",
            ));
        }
        filter.one_in = config.sample_one_in.unwrap_or(1);
        if filter.one_in == 0 {
            return Err(Invalid::new(
                path.key("sample_one_in"),
                "must be at least 1",
            ));
        }
        trace.packet_hops = Some(filter);
    }
    Ok(trace)
}

/// FNV-1a 64: a stable, dependency-free content hash.
pub fn fnv1a(bytes: &[u8], mut hash: u64) -> u64 {
    for &b in bytes {
        hash ^= b as u64;
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// Applies `KEY.PATH=VALUE` overrides to the document. Values are parsed as TOML (`8`,
/// `"1us"`, `true`); anything that is not valid TOML is taken as a string (`--set
/// topology.links.rate=10Gbps`). Numeric segments index arrays (`traffic.0.count=4`).
pub fn apply_overrides(text: &str, overrides: &[String]) -> Result<String, String> {
    if overrides.is_empty() {
        return Ok(text.to_string());
    }
    let mut doc: toml::Table = toml::from_str(text).map_err(|e| {
        format!(
            "cannot apply overrides to a scenario that does not parse: {}",
            e.message()
        )
    })?;
    for item in overrides {
        let (key, raw) = item
            .split_once('=')
            .ok_or_else(|| format!("{item:?} is not KEY=VALUE (e.g. topology.k=8)"))?;
        let key = key.trim();
        let value = match toml::from_str::<toml::Table>(&format!("v = {raw}")) {
            Ok(mut t) => t.remove("v").expect("parsed"),
            Err(_) => toml::Value::String(raw.to_string()),
        };
        let segments: Vec<&str> = key.split('.').collect();
        if segments.iter().any(|s| s.is_empty()) {
            return Err(format!(
                "{key:?} is not a dotted key path (e.g. simulation.seed)"
            ));
        }
        set_path(&mut doc, &segments, value).map_err(|e| format!("{key}: {e}"))?;
    }
    toml::to_string(&doc).map_err(|e| format!("cannot re-serialize the scenario: {e}"))
}

fn set_path(table: &mut toml::Table, segments: &[&str], value: toml::Value) -> Result<(), String> {
    let (first, rest) = segments.split_first().expect("non-empty");
    if rest.is_empty() {
        table.insert((*first).to_string(), value);
        return Ok(());
    }
    let entry = table
        .entry((*first).to_string())
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    set_value(entry, rest, value)
}

fn set_value(
    current: &mut toml::Value,
    segments: &[&str],
    value: toml::Value,
) -> Result<(), String> {
    match current {
        toml::Value::Table(t) => set_path(t, segments, value),
        toml::Value::Array(items) => {
            let (first, rest) = segments.split_first().expect("non-empty");
            let index: usize = first
                .parse()
                .map_err(|_| format!("{first:?} must be an array index"))?;
            let len = items.len();
            let item = items.get_mut(index).ok_or_else(|| {
                format!("index {index} is out of range (the array has {len} items)")
            })?;
            if rest.is_empty() {
                *item = value;
                Ok(())
            } else {
                set_value(item, rest, value)
            }
        }
        _ => Err(format!(
            "cannot set {:?} inside a value that is not a table",
            segments.join(".")
        )),
    }
}

#[cfg(test)]
mod tests {
    /// The scenario reference must mention every field of the format: adding a field to
    /// `config.rs` without documenting it in `scenarios/REFERENCE.md` fails here.
    #[test]
    fn reference_documents_every_field() {
        let config = include_str!("config.rs");
        let reference = include_str!("../../../scenarios/REFERENCE.md");
        let mut missing = Vec::new();
        for line in config.lines() {
            let line = line.trim();
            let field = line.strip_prefix("pub ").unwrap_or(line);
            if let Some((name, rest)) = field.split_once(':')
                && !name.contains(' ')
                && !name.is_empty()
                && rest.trim_end().ends_with(',')
                && !reference.contains(&format!("`{name}`"))
            {
                missing.push(name.to_string());
            }
        }
        assert!(
            missing.is_empty(),
            "scenarios/REFERENCE.md does not document: {missing:?}"
        );
    }
}

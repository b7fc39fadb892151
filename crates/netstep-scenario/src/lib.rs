//! netstep scenarios: the TOML format ([`config`]), unit-checked validation, `--set`
//! overrides, traffic generation, and building the bevy World and the engine [`Model`] from a
//! scenario file. Every error names the file, the field, the line and column where known, the
//! value and what was expected.

pub mod cdf;
pub mod config;
pub mod error;
pub mod limits;
pub mod table_file;
pub mod topology;
pub mod traffic;

use std::path::Path;

use bevy_ecs::world::World;
use netstep_core::engine::{EngineConfig, Model, WindowMode};
use netstep_core::units::{BufferSize, Bytes, SimTime, parse_buffer, parse_duration};
use netstep_core::world;

use config::{ScenarioFile, TransportConfig};
pub use error::{FieldPath, Invalid, ScenarioError};
pub use limits::{Footprint, Limits};

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
    /// Size and expected memory, checked against the limits before building.
    pub footprint: Footprint,
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

/// Loads a scenario file, applying `--set KEY=VALUE` overrides; a scenario larger than
/// `limits` is refused before it is built.
pub fn load(path: &Path, overrides: &[String], limits: &Limits) -> Result<Scenario, ScenarioError> {
    let (text, file, default_name) = read(path, limits)?;
    load_str(
        &text,
        &file,
        &default_name,
        path.parent(),
        overrides,
        limits,
    )
}

/// A scenario file's text, its name for errors and the default scenario name (its stem); a
/// file past the size limit is refused before it is read.
fn read(path: &Path, limits: &Limits) -> Result<(String, String, String), ScenarioError> {
    let file = path.display().to_string();
    if let Ok(meta) = std::fs::metadata(path) {
        limits
            .check_text(meta.len())
            .map_err(|message| ScenarioError {
                file: file.clone(),
                line_col: None,
                field: String::new(),
                message,
            })?;
    }
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
    Ok((text, file, default_name))
}

/// Scenario text after its overrides, to place errors in.
struct Located {
    /// The text after `--set`.
    effective: String,
    /// The file as errors show it (`FILE (after --set)` with overrides).
    shown: String,
}

impl Located {
    /// A validation problem placed in the text: file, line:column, field.
    fn locate(&self, invalid: Invalid) -> ScenarioError {
        ScenarioError {
            file: self.shown.clone(),
            line_col: error::locate(&self.effective, &invalid.path)
                .map(|s| error::line_col(&self.effective, s.start)),
            field: invalid.path.to_string(),
            message: invalid.message,
        }
    }
}

/// Applies `overrides` to `text` (from `file`) and parses it.
fn parse(
    text: &str,
    file: &str,
    overrides: &[String],
) -> Result<(ScenarioFile, Located), ScenarioError> {
    let effective = apply_overrides(text, overrides).map_err(|message| ScenarioError {
        file: file.to_string(),
        line_col: None,
        field: "--set".into(),
        message,
    })?;
    let shown = if overrides.is_empty() {
        file.to_string()
    } else {
        format!("{file} (after --set)")
    };
    // Inside tagged tables (`kind = ...`) the parser reports the enclosing table; the error
    // names the key the message is about within it.
    let parsed =
        toml::from_str(&effective).map_err(|e| error::toml_error(&effective, &shown, &e))?;
    Ok((parsed, Located { effective, shown }))
}

/// Loads the built-in quickstart.
pub fn load_quickstart(overrides: &[String], limits: &Limits) -> Result<Scenario, ScenarioError> {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    load_str(
        QUICKSTART,
        QUICKSTART_NAME,
        "quickstart",
        Some(&base),
        overrides,
        limits,
    )
}

/// Loads scenario text. `file` names it in errors, `base_dir` anchors relative CDF paths.
pub fn load_str(
    text: &str,
    file: &str,
    default_name: &str,
    base_dir: Option<&Path>,
    overrides: &[String],
    limits: &Limits,
) -> Result<Scenario, ScenarioError> {
    let (parsed, at) = parse(text, file, overrides)?;
    let built = build(
        parsed,
        &at.effective,
        file,
        default_name,
        base_dir,
        limits,
        false,
    );
    match built.map_err(|e| at.locate(e))? {
        Validated::Built(scenario) => Ok(*scenario),
        Validated::Estimated(_) => unreachable!("only validation estimates"),
    }
}

/// What `netstep validate` found.
pub enum Validated {
    /// Built as a run builds it: everything checked.
    Built(Box<Scenario>),
    /// A generated topology too large to build within [`VALIDATE_BUILD_BYTES`]: its sizes,
    /// memory and lookahead come from arithmetic.
    Estimated(Estimate),
}

/// A scenario's sizes by arithmetic (see [`Validated::Estimated`]).
#[derive(Clone, Debug)]
pub struct Estimate {
    /// Scenario name.
    pub name: String,
    /// Hosts of the topology.
    pub hosts: u64,
    /// Counts and expected memory (flows by arithmetic; packets not counted).
    pub footprint: Footprint,
    /// The lookahead.
    pub lookahead: SimTime,
    /// Window mode.
    pub window: WindowMode,
}

/// The most memory `netstep validate` spends building a generated topology (its nodes and
/// ports at the per-entity costs of the memory estimate); a larger one is validated by
/// arithmetic, so validate answers within about a second and 100 MB whatever the size.
pub const VALIDATE_BUILD_BYTES: u64 = 48_000_000;

/// Loads a scenario file as `netstep validate` does: like [`load`], except that a generated
/// topology larger than [`VALIDATE_BUILD_BYTES`] is not built: its sizes, the flow count, the
/// memory estimate and the lookahead come from arithmetic.
pub fn validate(
    path: &Path,
    overrides: &[String],
    limits: &Limits,
) -> Result<Validated, ScenarioError> {
    let (text, file, default_name) = read(path, limits)?;
    let (parsed, at) = parse(&text, &file, overrides)?;
    build(
        parsed,
        &at.effective,
        &file,
        &default_name,
        path.parent(),
        limits,
        true,
    )
    .map_err(|e| at.locate(e))
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
            Some(config::NicSchedulerConfig::Pull) => netstep_core::nic::NicScheduler::Pull,
        },
        shaper: nic
            .shaper
            .as_ref()
            .map(|s| topology::shaper_spec(s, &path.key("shaper")))
            .transpose()?,
    })
}

/// Dynamic PFC thresholds need a buffer larger than what every switch keeps out of the
/// shared pool (its ports' headroom and reserve), else the threshold is 0 and every lossless
/// arrival pauses.
fn check_pfc_buffer(model: &Model, world: &mut World) -> Result<(), Invalid> {
    let Some(dynamic) = model.pfc.as_ref().and_then(|p| p.dynamic()) else {
        return Ok(());
    };
    let net = &model.net;
    for node in 0..net.n_nodes() as u32 {
        if net.node_kind[node as usize] != netstep_core::topology::NodeKind::Switch {
            continue;
        }
        let fixed = dynamic.for_switch(net, node).fixed;
        if fixed >= dynamic.buffer.0 {
            let name = world::node_name(world, node).unwrap_or_else(|| format!("node {node}"));
            return Err(Invalid::new(
                FieldPath::of(&["switch", "pfc", "buffer"]),
                format!(
                    "switch {name:?} keeps {fixed} B out of the shared pool ({} ports x ({} link BDPs of headroom + {} reserve)), not less than the buffer {}: its PAUSE threshold would be 0; give a larger buffer or fewer headroom_bdps",
                    net.degree(node),
                    dynamic.headroom_bdps,
                    dynamic.reserve,
                    dynamic.buffer
                ),
            ));
        }
    }
    Ok(())
}

/// A pulling NIC (`[nic] scheduler = "pull"`) asks RDMA senders for packets; other
/// transports push theirs, so every flow must be RDMA.
fn check_pulled_flows(model: &Model, world: &mut World) -> Result<(), Invalid> {
    if model.nic.scheduler != netstep_core::nic::NicScheduler::Pull {
        return Ok(());
    }
    let Some(flow) = model.flows.flows.iter().position(|f| {
        !matches!(
            *f.transport,
            netstep_core::transport::TransportSpec::Rdma(_)
        )
    }) else {
        return Ok(());
    };
    let f = &model.flows.flows[flow];
    let mut name = |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
    let (src, dst) = (name(f.src), name(f.dst));
    let kind = match *f.transport {
        netstep_core::transport::TransportSpec::Tcp(_) => "tcp",
        _ => "open_loop",
    };
    Err(Invalid::new(
        FieldPath::of(&["nic", "scheduler"]),
        format!(
            "\"pull\" needs every flow to use transport kind = \"rdma\" (the NIC asks RDMA senders for their packets); flow {flow} from {src:?} to {dst:?} is {kind}"
        ),
    ))
}

/// A `[[failures]]` entry with node indices: (one end, other end, down, up).
type ResolvedFailure = (u32, u32, SimTime, Option<SimTime>);

/// Resolves `[[failures]]` to (node, node, down, up), checking names, that exactly one link
/// joins the two nodes, and the times.
fn resolve_failures(
    list: &[config::FailureConfig],
    topology: &netstep_core::topology::TopologySpec,
    limits: &Limits,
) -> Result<Vec<ResolvedFailure>, Invalid> {
    if list.is_empty() {
        return Ok(Vec::new());
    }
    limits.check_count(
        list.len() as u64,
        limits::MAX_FAILURES,
        "link failures",
        &FieldPath::of(&["failures"]),
    )?;
    let names: std::collections::HashMap<&str, u32> = topology
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let mut links: std::collections::HashMap<(u32, u32), u32> = Default::default();
    for l in &topology.links {
        *links.entry((l.a.min(l.b), l.a.max(l.b))).or_insert(0) += 1;
    }
    let mut out = Vec::with_capacity(list.len());
    for (i, f) in list.iter().enumerate() {
        let path = FieldPath::of(&["failures"]).index(i);
        let [a, b] = f.link.as_slice() else {
            return Err(Invalid::new(
                path.key("link"),
                format!(
                    "names the link's two end nodes, e.g. [\"agg0_0\", \"core0_0\"]; got {} names",
                    f.link.len()
                ),
            ));
        };
        let node = |name: &String| {
            names
                .get(name.as_str())
                .copied()
                .ok_or_else(|| Invalid::new(path.key("link"), format!("no node named {name:?}")))
        };
        let (na, nb) = (node(a)?, node(b)?);
        match links.get(&(na.min(nb), na.max(nb))).copied().unwrap_or(0) {
            1 => {}
            0 => {
                return Err(Invalid::new(
                    path.key("link"),
                    format!("no link joins {a:?} and {b:?}"),
                ));
            }
            n => {
                return Err(Invalid::new(
                    path.key("link"),
                    format!(
                        "{n} parallel links join {a:?} and {b:?}; a failure must name one link"
                    ),
                ));
            }
        }
        let time = |field: &str, text: &String| {
            let t = parse_duration(text).map_err(|e| Invalid::unit(path.key(field), e))?;
            if t > limits::MAX_START {
                return Err(Invalid::new(
                    path.key(field),
                    format!("{t} is later than the limit of {}", limits::MAX_START),
                ));
            }
            Ok(t)
        };
        let down = time("down", &f.down)?;
        let up = f.up.as_ref().map(|u| time("up", u)).transpose()?;
        if let Some(up) = up
            && up <= down
        {
            return Err(Invalid::new(
                path.key("up"),
                format!("must be after down ({down}), got {up}"),
            ));
        }
        out.push((na, nb, down, up));
    }
    Ok(out)
}

fn balance(config: &config::RoutingConfig) -> Result<netstep_core::balance::BalanceSpec, Invalid> {
    use config::RoutingMode;
    use netstep_core::balance::{BalanceSpec, LoadBalancing};
    let path = FieldPath::of(&["routing"]);
    let mode = config.mode.unwrap_or_default();
    let gap = match (&config.flowlet_gap, mode) {
        (Some(text), RoutingMode::Flowlet) => {
            let gap =
                parse_duration(text).map_err(|e| Invalid::unit(path.key("flowlet_gap"), e))?;
            if gap == SimTime::ZERO {
                return Err(Invalid::new(path.key("flowlet_gap"), "must be positive"));
            }
            gap
        }
        (None, RoutingMode::Flowlet) => {
            return Err(Invalid::new(
                path.key("flowlet_gap"),
                "mode = \"flowlet\" needs flowlet_gap (a duration such as \"50us\")",
            ));
        }
        (Some(_), _) => {
            return Err(Invalid::new(
                path.key("flowlet_gap"),
                "applies to mode = \"flowlet\" only",
            ));
        }
        (None, _) => SimTime::ZERO,
    };
    let weighted = config.weighted.unwrap_or(false);
    if weighted && matches!(mode, RoutingMode::SprayRoundRobin | RoutingMode::Adaptive) {
        return Err(Invalid::new(
            path.key("weighted"),
            "applies to ecmp, spray_random and flowlet (adaptive already counts link rates; round robin is unweighted)",
        ));
    }
    Ok(BalanceSpec {
        mode: match mode {
            RoutingMode::Ecmp => LoadBalancing::Ecmp,
            RoutingMode::SprayRandom => LoadBalancing::SprayRandom,
            RoutingMode::SprayRoundRobin => LoadBalancing::SprayRoundRobin,
            RoutingMode::Flowlet => LoadBalancing::Flowlet { gap },
            RoutingMode::Adaptive => LoadBalancing::Adaptive,
        },
        weighted,
    })
}

fn pfc(
    config: &config::SwitchFileConfig,
    classes: &[netstep_core::topology::LinkClass],
) -> Result<Option<netstep_core::pfc::PfcSpec>, Invalid> {
    let Some(pfc) = &config.pfc else {
        return Ok(None);
    };
    let path = FieldPath::of(&["switch", "pfc"]);
    let mut lossless = 0u8;
    for (i, &class) in pfc.classes.iter().enumerate() {
        if class > 7 {
            return Err(Invalid::new(
                path.key("classes").index(i),
                format!("traffic classes are 0-7, got {class}"),
            ));
        }
        lossless |= 1 << class;
    }
    if lossless == 0 {
        return Err(Invalid::new(
            path.key("classes"),
            "name at least one lossless class, e.g. classes = [3]",
        ));
    }
    let size = |field: &str, text: &str| {
        netstep_core::units::parse_size(text).map_err(|e| Invalid::unit(path.key(field), e))
    };
    // An optional size, or its default.
    let or = |field: &str, text: &Option<String>, default: Bytes| match text {
        Some(t) => size(field, t),
        None => Ok(default),
    };
    let dynamic = pfc.threshold == Some(config::PfcThresholdConfig::Dynamic);
    // Fields of the other kind of threshold are refused, not ignored.
    let (mode, needs, refused): (&str, &str, Vec<(&str, bool)>) = if dynamic {
        (
            "threshold = \"dynamic\"",
            "buffer",
            vec![
                ("xoff", pfc.xoff.is_some()),
                ("xon", pfc.xon.is_some()),
                ("headroom", pfc.headroom.is_some()),
            ],
        )
    } else {
        (
            "static thresholds",
            "xoff and xon",
            vec![
                ("buffer", pfc.buffer.is_some()),
                ("reserve", pfc.reserve.is_some()),
                ("resume_offset", pfc.resume_offset.is_some()),
                ("headroom_bdps", pfc.headroom_bdps.is_some()),
                ("shift", pfc.shift.is_some()),
            ],
        )
    };
    if let Some((field, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(Invalid::new(
            path.key(field),
            format!("does not apply with {mode} (which take {needs})"),
        ));
    }
    let thresholds = if dynamic {
        let Some(buffer) = &pfc.buffer else {
            return Err(Invalid::new(
                path.key("buffer"),
                "threshold = \"dynamic\" needs the switch buffer, e.g. buffer = \"12MB\"",
            ));
        };
        let buffer = size("buffer", buffer)?;
        use netstep_core::pfc::DynamicPfc;
        let shift = pfc.shift.unwrap_or(DynamicPfc::DEFAULT_SHIFT);
        if buffer.0 == 0 || shift > 31 {
            return Err(Invalid::new(
                path.key(if buffer.0 == 0 { "buffer" } else { "shift" }),
                format!("need buffer > 0 and shift in 0..=31, got buffer {buffer}, shift {shift}"),
            ));
        }
        let spec = DynamicPfc {
            buffer,
            reserve: or("reserve", &pfc.reserve, DynamicPfc::DEFAULT_RESERVE)?,
            resume_offset: or(
                "resume_offset",
                &pfc.resume_offset,
                DynamicPfc::DEFAULT_RESUME_OFFSET,
            )?,
            headroom_bdps: pfc
                .headroom_bdps
                .unwrap_or(DynamicPfc::DEFAULT_HEADROOM_BDPS),
            shift,
            host_rate: 0,
        };
        netstep_core::pfc::PfcThresholds::Dynamic(spec)
    } else {
        let (Some(xoff), Some(xon)) = (&pfc.xoff, &pfc.xon) else {
            return Err(Invalid::new(
                path.key(if pfc.xoff.is_none() { "xoff" } else { "xon" }),
                "static PFC thresholds need xoff and xon, e.g. xoff = \"40KB\", xon = \"20KB\" (or threshold = \"dynamic\" with a buffer)",
            ));
        };
        let xoff = size("xoff", xoff)?;
        let xon = size("xon", xon)?;
        if xoff.0 == 0 || xon > xoff {
            return Err(Invalid::new(
                path.key("xon"),
                format!("need 0 < xoff and xon <= xoff, got xoff {xoff}, xon {xon}"),
            ));
        }
        let headroom = or(
            "headroom",
            &pfc.headroom,
            netstep_core::pfc::StaticPfc::DEFAULT_HEADROOM,
        )?;
        netstep_core::pfc::PfcThresholds::Static(netstep_core::pfc::StaticPfc {
            xoff,
            xon,
            headroom,
        })
    };
    if let Some(class) = classes
        .iter()
        .find(|c| !netstep_core::queue::Queue::supports_pfc(&c.scheduler))
    {
        return Err(Invalid::new(
            path.clone(),
            format!(
                "PFC pauses classes on fifo and strict_priority ports; a link runs {:?}",
                class.scheduler.name()
            ),
        ));
    }
    Ok(Some(netstep_core::pfc::PfcSpec {
        lossless,
        thresholds,
    }))
}

fn shared_buffer(
    config: &config::SwitchFileConfig,
) -> Result<Option<netstep_core::queue::SharedBuffer>, Invalid> {
    let path = FieldPath::of(&["switch"]);
    let Some(size) = &config.shared_buffer else {
        if config.alpha.is_some() {
            return Err(Invalid::new(
                path.key("alpha"),
                "applies to a shared buffer; set switch.shared_buffer too",
            ));
        }
        return Ok(None);
    };
    let size = netstep_core::units::parse_size(size)
        .map_err(|e| Invalid::unit(path.key("shared_buffer"), e))?;
    if size.0 == 0 {
        return Err(Invalid::new(path.key("shared_buffer"), "must be positive"));
    }
    let alpha = config
        .alpha
        .unwrap_or(netstep_core::queue::SharedBuffer::DEFAULT_ALPHA);
    if !(alpha.is_finite() && alpha > 0.0) {
        return Err(Invalid::new(
            path.key("alpha"),
            format!("must be a positive number, got {alpha}"),
        ));
    }
    Ok(Some(netstep_core::queue::SharedBuffer { size, alpha }))
}

fn build(
    parsed: ScenarioFile,
    effective: &str,
    file: &str,
    default_name: &str,
    base_dir: Option<&Path>,
    limits: &Limits,
    validate_only: bool,
) -> Result<Validated, Invalid> {
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
            if width > limits::MAX_WINDOW {
                return Err(Invalid::new(
                    path.key("window"),
                    format!(
                        "{w:?} is longer than the limit of {}; a quantum that coarse moves every arrival to one instant",
                        limits::MAX_WINDOW
                    ),
                ));
            }
            WindowMode::Quantized(width)
        }
    };
    let threads = sim
        .threads
        .unwrap_or(config::SimulationConfig::DEFAULT_THREADS);
    if threads == 0 || threads > limits::MAX_THREADS {
        return Err(Invalid::new(
            path.key("threads"),
            format!(
                "must be between 1 and {}, got {threads}",
                limits::MAX_THREADS
            ),
        ));
    }
    let seed = sim.seed.unwrap_or(config::SimulationConfig::DEFAULT_SEED);
    let mut parsed = parsed;
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
        let mut found = estimate(&parsed, hosts, &classes, counts, base_dir, limits, window)?;
        if found.name.is_empty() {
            found.name = default_name.to_string();
        }
        return Ok(Validated::Estimated(found));
    }
    let topology = topology::build(&parsed.topology)?;
    let failures = resolve_failures(&parsed.failures, &topology, limits)?;
    // Every epoch with a dead link has its own shortest-path tables.
    let routing_entries = topology::routing_entries(&topology).saturating_add(
        topology::shortest_path_entries(&topology).saturating_mul(2 * failures.len() as u64),
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
                dctcp_g: None,
            },
            FieldPath::of(&["transport"]),
        )?,
    };
    let ctx = traffic::TrafficContext {
        topology: &topology,
        seed,
        default_transport,
        base_dir,
        limits,
        nodes: counts.nodes,
        ports: counts.ports,
        routing_entries,
    };
    let traffic::Generated {
        flows,
        inputs,
        jobs,
        tags,
    } = traffic::generate(&parsed.traffic, &ctx)?;
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
    let packets = flows
        .iter()
        .map(|f| traffic::data_packets(&f.transport, f.size))
        .fold(0u64, u64::saturating_add);
    let mut footprint = Footprint {
        nodes: counts.nodes,
        ports: counts.ports,
        flows: flows.len() as u64,
        packets,
        queue_sample_rows: 0,
        routing_entries,
        packet_hop_rows: 0,
        packet_hops_bounded: false,
        cc_sample_rows: 0,
    };
    limits.check_count(
        packets,
        limits::MAX_PACKETS,
        "data packets",
        &FieldPath::of(&["traffic"]),
    )?;
    let mut hash = fnv1a(effective.as_bytes(), 0xcbf2_9ce4_8422_2325);
    for input in topology_inputs.iter().chain(&inputs) {
        hash = fnv1a(input.as_bytes(), hash);
    }
    let trace_tables = trace_tables(&parsed.trace)?;
    let names: std::collections::HashMap<&str, u32> = match &parsed.trace.nodes {
        Some(list) if !list.is_empty() => topology
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i as u32))
            .collect(),
        _ => Default::default(),
    };
    let trace = trace_config(
        &parsed.trace,
        &trace_tables,
        &names,
        topology.nodes.len(),
        flows.len(),
    )?;
    drop(names);
    if let Some(interval) = trace.queue_samples {
        // Every port is sampled at every interval up to the end: the duration, or without
        // one at least up to the last flow start.
        let horizon = duration
            .unwrap_or_else(|| flows.iter().map(|f| f.start).max().unwrap_or(SimTime::ZERO));
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
    // Every setting goes into the World; the setup systems compile the model from it.
    let nic = world::NicSettings(nic_config(&parsed.nic)?);
    let switches = world::SwitchSettings {
        shared_buffer: shared_buffer(&parsed.switch)?,
        balance: balance(&parsed.routing)?,
        pfc: pfc(&parsed.switch, &topology.classes)?,
        ack_priority: parsed.switch.ack_priority.unwrap_or(false),
    };
    let mut world = World::new();
    world::spawn_topology(&mut world, topology);
    world::spawn_flows(&mut world, flows, seed);
    world::spawn_collectives(&mut world, jobs, &tags);
    world::spawn_failures(&mut world, &failures);
    world.insert_resource(nic);
    world.insert_resource(switches);
    world.insert_resource(world::TraceSettings(trace));
    let model = world::build_model(&mut world)
        .map_err(|e| Invalid::new(FieldPath::of(&["topology"]), e.to_string()))?;
    for flow in 0..model.flows.len() as u32 {
        let route = netstep_core::flow::flow_route(&model.net, &model.flows, flow, false);
        let f = &model.flows.flows[flow as usize];
        // Telemetry (HPCC) stacks hold one record per switch egress port on the path.
        let too_long = route.as_ref().is_some_and(|r| {
            f.transport.telemetry()
                && r.len().saturating_sub(1) > netstep_core::telemetry::MAX_INT_HOPS
        });
        if route.is_none() || too_long {
            let mut name =
                |n: u32| world::node_name(&mut world, n).unwrap_or_else(|| format!("node {n}"));
            let (src, dst) = (name(f.src), name(f.dst));
            let why = match route {
                None => "has no route: no chain of links connects them".to_string(),
                Some(r) => format!(
                    "crosses {} switches, more than the {} per-hop telemetry records HPCC carries",
                    r.len() - 1,
                    netstep_core::telemetry::MAX_INT_HOPS
                ),
            };
            return Err(Invalid::new(
                FieldPath::of(&["traffic"]),
                format!("flow {flow} from {src:?} to {dst:?} {why}"),
            ));
        }
    }
    check_notices(&model, &mut world)?;
    check_min_rates(&model)?;
    check_pulled_flows(&model, &mut world)?;
    check_pfc_buffer(&model, &mut world)?;
    if let Some(failures) = &model.failures {
        check_telemetry_under_failures(&model, failures, &mut world)?;
    }
    if let Some(filter) = &model.trace.packet_hops {
        footprint.packet_hop_rows = estimate_packet_hops(&model, filter);
        // With a duration or a time filter the run writes fewer: no refusal on disk space.
        footprint.packet_hops_bounded =
            duration.is_some() || filter.from > SimTime::ZERO || filter.until < SimTime::MAX;
        limits.check_count(
            footprint.packet_hop_rows,
            limits::MAX_PACKET_HOP_ROWS,
            "packet_hops rows (packets x hops after trace.flows, trace.nodes and trace.sample_one_in)",
            &FieldPath::of(&["trace", "sample_one_in"]),
        )?;
    }
    if let Some(interval) = model.trace.cc_samples {
        footprint.cc_sample_rows = estimate_cc_samples(&model, interval, duration);
        limits.check_count(
            footprint.cc_sample_rows,
            limits::MAX_CC_SAMPLE_ROWS,
            "cc_samples rows (every sample_interval in each kept TCP or RDMA flow's lifetime, at least its ideal FCT and its last ACK's way back; a longer trace.sample_interval or a trace.flows filter writes fewer)",
            &FieldPath::of(&["trace", "sample_interval"]),
        )?;
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
        footprint,
    };
    Ok(Validated::Built(Box::new(Scenario { meta, world, model })))
}

/// [`Validated::Estimated`]: the sizes of a generated topology of `hosts` hosts and link
/// `classes` (host links first), the flows its traffic blocks would generate, the memory
/// estimate (checked against the budget) and the lookahead, all by arithmetic.
fn estimate(
    parsed: &ScenarioFile,
    hosts: u64,
    classes: &[netstep_core::topology::LinkClass],
    counts: topology::Counts,
    base_dir: Option<&Path>,
    limits: &Limits,
    window: WindowMode,
) -> Result<Estimate, Invalid> {
    let host_rate = classes.first().map_or(0.0, |c| c.rate.0 as f64);
    let flows = traffic::count_flows(&parsed.traffic, hosts, host_rate, base_dir)?;
    let footprint = Footprint {
        nodes: counts.nodes,
        ports: counts.ports,
        flows,
        ..Default::default()
    };
    limits.check_count(
        flows,
        limits::MAX_FLOWS,
        "flows",
        &FieldPath::of(&["traffic"]),
    )?;
    limits.check_memory(&footprint, &FieldPath::of(&["traffic"]))?;
    // The smallest packet of any block's transport (a flow of one byte), PAUSE frames with PFC.
    let default = match &parsed.transport {
        Some(t) => Some(traffic::resolve_transport(
            t,
            FieldPath::of(&["transport"]),
        )?),
        None => None,
    };
    let mut smallest = u64::MAX;
    for (b, block) in parsed.traffic.iter().enumerate() {
        let path = FieldPath::of(&["traffic"]).index(b);
        let template = match block.transport() {
            Some(t) => Some(traffic::resolve_transport(t, path.key("transport"))?),
            None => default.clone(),
        };
        let min = match template {
            Some(t) => {
                let (spec, size) = t.for_flow(Some(netstep_core::units::Bytes(1)), None, &path)?;
                spec.min_packet(size).0
            }
            // The default TCP: a 40 B header.
            None => 40,
        };
        smallest = smallest.min(min);
        // A flow file's rows may name the block's other transports.
        if let config::TrafficConfig::FlowFile {
            transports: Some(named),
            ..
        } = block
        {
            for (name, t) in named {
                let t = traffic::resolve_transport(t, path.key("transports").key(name))?;
                let (spec, size) = t.for_flow(Some(netstep_core::units::Bytes(1)), None, &path)?;
                smallest = smallest.min(spec.min_packet(size).0);
            }
        }
    }
    if parsed.switch.pfc.is_some() {
        smallest = smallest.min(netstep_core::pfc::FRAME_BYTES as u64);
    }
    let lookahead = classes
        .iter()
        .map(|c| c.delay + c.rate.serialization(netstep_core::units::Bytes(smallest)))
        .min()
        .unwrap_or(SimTime::MAX);
    Ok(Estimate {
        name: parsed.name.clone().unwrap_or_default(),
        hosts,
        footprint,
        lookahead,
        window,
    })
}

/// Refuses an RDMA transport whose `min_rate` is above the line rate of a host that sends
/// with it (a sender's rate lies between the two).
fn check_min_rates(model: &netstep_core::engine::Model) -> Result<(), Invalid> {
    use netstep_core::transport::TransportSpec;
    for (id, f) in model.flows.flows.iter().enumerate() {
        if let TransportSpec::Rdma(r) = &*f.transport {
            let line = model.net.class_of(model.net.port_id(f.src, 0)).rate.0 as f64;
            let min = r.cc.min_rate_bps();
            if let Some(max) = r.max_rate_bps
                && min > max
            {
                return Err(Invalid::new(
                    FieldPath::of(&["transport", "min_rate"]),
                    format!(
                        "{} is above max_rate ({}); a sender's rate lies between min_rate and max_rate",
                        netstep_core::units::BitsPerSec(min as u64),
                        netstep_core::units::BitsPerSec(max as u64)
                    ),
                ));
            }
            if min > line {
                return Err(Invalid::new(
                    FieldPath::of(&["transport", "min_rate"]),
                    format!(
                        "{} is above the line rate of flow {id}'s sender ({}); a sender's rate lies between min_rate and its line rate",
                        netstep_core::units::BitsPerSec(min as u64),
                        netstep_core::units::BitsPerSec(line as u64)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a flow waiting for a flow whose receiver cannot reach the waiting flow's source
/// (the notice of its finish could not get there).
fn check_notices(model: &netstep_core::engine::Model, world: &mut World) -> Result<(), Invalid> {
    let flows = &model.flows.flows;
    for (id, f) in flows.iter().enumerate() {
        for &dep in f.after.iter().flat_map(|d| d.flows.iter()) {
            let from = flows[dep as usize].dst;
            if from != f.src
                && netstep_core::flow::notify_latency(&model.net, from, f.src, id as u32).is_none()
            {
                let mut name =
                    |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
                let (at, to) = (name(from), name(f.src));
                return Err(Invalid::new(
                    FieldPath::of(&["traffic"]),
                    format!(
                        "flow {id} waits for flow {dep}, which ends at {at:?}, and no chain of links leads from {at:?} to {to:?}, where flow {id} starts"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a telemetry (HPCC) flow whose path, in some epoch of the failure schedule (the
/// routing over the live links while a link is down), crosses more switches than a telemetry
/// stack holds: the same rule as for its path with every link up. (A packet rerouted between
/// epochs while in flight can still get there; the run then stops with an error.)
fn check_telemetry_under_failures(
    model: &netstep_core::engine::Model,
    failures: &netstep_core::failure::FailureSchedule,
    world: &mut World,
) -> Result<(), Invalid> {
    use netstep_core::telemetry::MAX_INT_HOPS;
    let net = &model.net;
    let mut scratch = Vec::new();
    for at in failures.rerouted_epochs() {
        for (flow, f) in model.flows.flows.iter().enumerate() {
            if !f.transport.telemetry() || f.path.is_some() {
                continue;
            }
            let (mut node, mut switches) = (f.src, 0usize);
            while node != f.dst && switches <= net.n_nodes() {
                let hash = netstep_core::network::ecmp_hash(flow as u32, false, node);
                let Some(local) = failures.route(net, node, f.dst, hash, at, &mut scratch) else {
                    break;
                };
                node = net.port_peer[net.port_id(node, local) as usize];
                if node != f.dst {
                    switches += 1;
                }
            }
            if switches > MAX_INT_HOPS {
                let mut name =
                    |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
                let (src, dst) = (name(f.src), name(f.dst));
                return Err(Invalid::new(
                    FieldPath::of(&["failures"]),
                    format!(
                        "while links are down from {at}, flow {flow} from {src:?} to {dst:?} crosses {switches} switches, more than the {MAX_INT_HOPS} per-hop telemetry records HPCC carries"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether a `--set` value that failed to parse as TOML was meant as a TOML array, table or
/// number (an error) rather than a bare word taken as a string (`dctcp`, `2us`).
fn meant_as_toml(raw: &str) -> bool {
    let raw = raw.trim();
    raw.starts_with(['[', '{', '-', '+'])
        || raw.parse::<f64>().is_ok()
        || (!raw.is_empty() && raw.chars().all(|c| c.is_ascii_digit() || c == '_'))
}

/// Expected `packet_hops` rows (see [`Footprint::packet_hop_rows`]): each kept flow's data
/// packets over its route and its ACKs over the way back (TCP: one per segment, or one per two
/// with delayed ACKs; RDMA: one per `ack_every`; open loop: none), counted at the nodes the
/// filter keeps, divided by the 1-in-N sampling.
/// A lower bound on the `cc_samples` rows: each kept TCP or RDMA flow is sampled at every
/// multiple of `interval` from its start while its sender runs, at least its ideal FCT plus the
/// unloaded way back of its last ACK, cut at the run's end.
fn estimate_cc_samples(
    model: &netstep_core::engine::Model,
    interval: SimTime,
    duration: Option<SimTime>,
) -> u64 {
    use netstep_core::transport::TransportSpec;
    let keep = model.trace.cc_flows.as_deref();
    let step = interval.0.max(1);
    let mut rows = 0u64;
    for (id, f) in model.flows.flows.iter().enumerate() {
        // A flow that waits for others may start late or never: counted as none (a lower
        // bound).
        if matches!(&*f.transport, TransportSpec::OpenLoop(_))
            || f.after.is_some()
            || keep.is_some_and(|k| !k.get(id).copied().unwrap_or(false))
        {
            continue;
        }
        let flow = id as u32;
        // The last ACK's way back: propagation and its serialization at every hop.
        let ack = f.transport.min_packet(f.size);
        let back: u64 = netstep_core::flow::flow_route(&model.net, &model.flows, flow, true)
            .unwrap_or_default()
            .into_iter()
            .map(|(node, local)| {
                let class = model.net.class_of(model.net.port_id(node, local));
                class.delay.0 + class.rate.serialization(ack).0
            })
            .sum();
        let life = netstep_core::flow::ideal_fct(&model.net, &model.flows, flow, model.seed)
            .unwrap_or(SimTime::ZERO)
            .0
            .saturating_add(back);
        let start = f.start.0;
        let mut end = start.saturating_add(life);
        if let Some(d) = duration {
            end = end.min(d.0);
        }
        if end <= start {
            continue;
        }
        // Multiples of the interval in (start, end]: a sample at `t` sees the state before
        // the events at `t` (no sender yet at its start; still running when its last ACK is
        // due).
        rows = rows.saturating_add(end / step - start / step);
    }
    rows
}

fn estimate_packet_hops(
    model: &netstep_core::engine::Model,
    filter: &netstep_core::engine::trace::HopFilter,
) -> u64 {
    use netstep_core::transport::TransportSpec;
    let kept = |node: u32| {
        filter
            .nodes
            .as_ref()
            .is_none_or(|n| n.get(node as usize).copied().unwrap_or(false))
    };
    let hops = |flow: u32, reverse: bool| {
        netstep_core::flow::flow_route(&model.net, &model.flows, flow, reverse).map_or(0, |route| {
            route.iter().filter(|(node, _)| kept(*node)).count() as u64
        })
    };
    let mut rows = 0u64;
    for (flow, f) in model.flows.flows.iter().enumerate() {
        if !filter
            .flows
            .as_ref()
            .is_none_or(|k| k.get(flow).copied().unwrap_or(false))
        {
            continue;
        }
        let data = traffic::data_packets(&f.transport, f.size);
        let acks = match &*f.transport {
            TransportSpec::OpenLoop(_) => 0,
            TransportSpec::Tcp(t) if t.delayed_ack.is_some() => data.div_ceil(2),
            TransportSpec::Tcp(_) => data,
            TransportSpec::Rdma(r) => data.div_ceil(r.ack_every.max(1) as u64),
        };
        rows = rows
            .saturating_add(data.saturating_mul(hops(flow as u32, false)))
            .saturating_add(acks.saturating_mul(hops(flow as u32, true)));
    }
    rows / filter.one_in.max(1) as u64
}

/// Tables `[trace] tables` may name.
pub const TRACE_TABLES: [&str; 4] = ["flows", "packet_hops", "queue_samples", "cc_samples"];

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
    // Every setting is checked whether or not its table is on, so a typo never waits for
    // the day the table is switched on.
    let mut trace = TraceConfig::default();
    let interval = duration(
        &config.sample_interval,
        "sample_interval",
        config::TraceTablesConfig::DEFAULT_SAMPLE_INTERVAL,
    )?;
    if interval == SimTime::ZERO {
        return Err(Invalid::new(
            path.key("sample_interval"),
            "must be positive",
        ));
    }
    if tables.iter().any(|t| t == "queue_samples") {
        trace.queue_samples = Some(interval);
    }
    if tables.iter().any(|t| t == "cc_samples") {
        trace.cc_samples = Some(interval);
    }
    let mut filter = HopFilter::all();
    if let Some(flows) = &config.flows {
        let mut keep = vec![false; n_flows];
        for (i, &flow) in flows.iter().enumerate() {
            *keep.get_mut(flow as usize).ok_or_else(|| {
                Invalid::new(path.key("flows").index(i), format!("flow {flow} does not exist; the scenario has {n_flows} flows (ids 0..{n_flows})"))
            })? = true;
        }
        if trace.cc_samples.is_some() {
            trace.cc_flows = Some(keep.clone());
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
    filter.one_in = config
        .sample_one_in
        .unwrap_or(config::TraceTablesConfig::DEFAULT_SAMPLE_ONE_IN);
    if filter.one_in == 0 {
        return Err(Invalid::new(
            path.key("sample_one_in"),
            "must be at least 1",
        ));
    }
    if tables.iter().any(|t| t == "packet_hops") {
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
            // A bare word is a string (`--set transport.cc=dctcp`); something that is meant as
            // a TOML array, table or number but does not parse is an error, not a string.
            Err(e) if meant_as_toml(raw) => {
                return Err(format!(
                    "{}: cannot read {raw:?} as a TOML value: {}",
                    key.trim(),
                    e.message().split_whitespace().collect::<Vec<_>>().join(" ")
                ));
            }
            Err(_) => toml::Value::String(raw.to_string()),
        };
        let segments: Vec<&str> = key.split('.').collect();
        if segments.len() > limits::MAX_SET_SEGMENTS {
            return Err(format!(
                "a key path of {} segments; the limit is {} (scenario keys are at most a few deep)",
                segments.len(),
                limits::MAX_SET_SEGMENTS
            ));
        }
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
        // A field marked `#[serde(skip)]` is not part of the format.
        let mut skipped = false;
        for line in config.lines() {
            let line = line.trim();
            if line == "#[serde(skip)]" {
                skipped = true;
                continue;
            }
            let field = line.strip_prefix("pub ").unwrap_or(line);
            if std::mem::take(&mut skipped) {
                continue;
            }
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
    /// The rows of the field table that follows `marker` in REFERENCE.md: `(field, default)`.
    fn reference_table(reference: &str, marker: &str) -> Vec<(String, String)> {
        let start = reference.find(marker).expect("marker in REFERENCE.md");
        let mut rows = Vec::new();
        let mut in_table = false;
        let mut columns = 0;
        for line in reference[start..].lines() {
            if line.starts_with("| field | ") && line.contains(" | default |") {
                in_table = true;
                columns = line.split(" | ").count();
                continue;
            }
            if !in_table || line.starts_with("|---") {
                continue;
            }
            if !line.starts_with('|') {
                break;
            }
            let cells: Vec<&str> = line.split(" | ").collect();
            assert_eq!(
                cells.len(),
                columns,
                "REFERENCE.md row with a stray ' | ': {line}"
            );
            rows.push((
                cells[0].trim_start_matches("| ").to_string(),
                cells[2].to_string(),
            ));
        }
        rows
    }

    /// A duration as a scenario writes it, in the largest unit that divides it exactly.
    fn duration(t: netstep_core::units::SimTime) -> String {
        let units = [
            (1_000_000_000_000, "s"),
            (1_000_000_000, "ms"),
            (1_000_000, "us"),
            (1_000, "ns"),
        ];
        let (div, unit) = units
            .into_iter()
            .find(|(d, _)| t.0.is_multiple_of(*d))
            .unwrap_or((1, "ps"));
        format!("`\"{}{unit}\"`", t.0 / div)
    }

    fn size(bytes: u32) -> String {
        format!("`\"{bytes}B\"`")
    }

    /// A buffer as a scenario writes it: packets, or bytes in the largest exact decimal unit.
    fn buffer(b: netstep_core::units::BufferSize) -> String {
        use netstep_core::units::BufferSize;
        match b {
            BufferSize::Packets(n) => format!("`\"{n}pkts\"`"),
            BufferSize::Bytes(bytes) => {
                let units = [(1_000_000_000, "GB"), (1_000_000, "MB"), (1_000, "KB")];
                let (div, unit) = units
                    .into_iter()
                    .find(|(d, _)| bytes.0.is_multiple_of(*d))
                    .unwrap_or((1, "B"));
                format!("`\"{}{unit}\"`", bytes.0 / div)
            }
        }
    }

    fn rate(bps: f64) -> String {
        let units = [(1e9, "Gbps"), (1e6, "Mbps"), (1e3, "Kbps")];
        let (div, unit) = units
            .into_iter()
            .find(|(d, _)| (bps / d).fract() == 0.0)
            .unwrap_or((1.0, "bps"));
        format!("`\"{}{unit}\"`", bps / div)
    }

    /// A gain as the reference writes it: `1/n` when it is one over a whole number.
    fn gain(g: f64) -> String {
        let n = 1.0 / g;
        if n.fract() == 0.0 {
            format!("1/{n}")
        } else {
            format!("{g}")
        }
    }

    /// Compares a REFERENCE.md table with the defaults the code uses, name by name: every
    /// documented field has the default stated (the cell equals it, or starts with it and
    /// goes on with an explanation), and every field is documented.
    fn check_table(marker: &str, expected: &[(&str, String)]) {
        let reference = include_str!("../../../scenarios/REFERENCE.md");
        let rows = reference_table(reference, marker);
        let mut problems = Vec::new();
        for (field, cell) in &rows {
            match expected
                .iter()
                .find(|(name, _)| format!("`{name}`") == *field)
            {
                None => problems.push(format!("{field}: documented but not checked")),
                Some((_, want)) => {
                    let ok = cell == want
                        || cell.starts_with(&format!("{want};"))
                        || cell.starts_with(&format!("{want} ("));
                    if !ok {
                        problems.push(format!(
                            "{field}: REFERENCE.md says {cell}, the code {want}"
                        ));
                    }
                }
            }
        }
        for (name, _) in expected {
            if !rows.iter().any(|(field, _)| *field == format!("`{name}`")) {
                problems.push(format!("`{name}`: not in the table after {marker:?}"));
            }
        }
        assert!(problems.is_empty(), "{problems:#?}");
    }

    /// One place per default: the TCP and RDMA transports take every unset field from
    /// `TcpSpec::new` / `RdmaSpec::new` and the rate controls' `Default`, and REFERENCE.md
    /// states exactly those values.
    #[test]
    fn reference_states_the_transport_defaults() {
        use netstep_core::transport::CcSpec;
        use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
        use netstep_core::transport::rdma::hpcc::HpccSpec;
        use netstep_core::transport::rdma::timely::TimelySpec;
        use netstep_core::transport::rdma::{RdmaCc, RdmaSpec, Recovery};
        use netstep_core::transport::tcp::TcpSpec;
        let t = TcpSpec::new(CcSpec::NewReno);
        check_table(
            "`kind = \"tcp\"` (the default transport",
            &[
                ("cc", format!("`\"{}\"`", t.cc.name())),
                ("dctcp_g", gain(CcSpec::DCTCP_DEFAULT_G)),
                ("sack", t.sack.to_string()),
                ("delayed_ack", t.delayed_ack.map_or("off".into(), duration)),
                ("pacing", t.pacing.to_string()),
                ("abc_limit", t.abc_limit.to_string()),
                ("mss", size(t.mss_bytes)),
                ("header", size(t.header_bytes)),
                ("initial_cwnd", t.initial_cwnd.to_string()),
                ("rto_min", duration(t.rto_min)),
                ("rto_initial", duration(t.rto_initial)),
                ("rto_max", duration(t.rto_max)),
                ("max_retries", t.max_retries.to_string()),
            ],
        );
        let d = DcqcnSpec::default();
        let r = RdmaSpec::new(RdmaCc::Dcqcn(d));
        let (tm, h) = (TimelySpec::default(), HpccSpec::default());
        assert_eq!(
            (
                tm.rate_ai_bps,
                tm.rate_hai_bps,
                tm.min_rate_bps,
                h.min_rate_bps
            ),
            (
                d.rate_ai_bps,
                d.rate_hai_bps,
                d.min_rate_bps,
                d.min_rate_bps
            ),
            "the rate steps are documented once for the three rate controls"
        );
        assert_eq!(
            (h.rate_ai_bps, h.base_rtt),
            (None, None),
            "HPCC's defaults depend on the flow"
        );
        check_table(
            "### `kind = \"rdma\"`",
            &[
                ("cc", "`\"dcqcn\"`".into()),
                ("mtu", size(r.mtu_bytes)),
                ("header", size(r.header_bytes)),
                ("ack_size", "the `header`".into()),
                ("rto", duration(r.rto)),
                ("max_retries", r.max_retries.to_string()),
                ("nack_interval", duration(r.nack_interval)),
                ("ack_every", r.ack_every.to_string()),
                (
                    "recovery",
                    match r.recovery {
                        Recovery::GoBackN => "`\"go_back_n\"`".into(),
                        Recovery::SelectiveRepeat => "`\"selective_repeat\"`".into(),
                    },
                ),
                ("g", gain(d.g)),
                ("alpha_interval", duration(d.alpha_interval)),
                ("decrease_interval", duration(d.decrease_interval)),
                ("increase_interval", duration(d.increase_interval)),
                ("fast_recovery_stages", d.fast_recovery_stages.to_string()),
                ("rate_ai", rate(d.rate_ai_bps)),
                ("rate_hai", rate(d.rate_hai_bps)),
                ("min_rate", rate(d.min_rate_bps)),
                ("timely_alpha", tm.alpha.to_string()),
                ("timely_beta", tm.beta.to_string()),
                (
                    "t_low`, `t_high",
                    format!("{}, {}", duration(tm.t_low), duration(tm.t_high)),
                ),
                ("min_rtt", duration(tm.min_rtt)),
                ("eta", h.eta.to_string()),
                ("max_stage", h.max_stage.to_string()),
                ("base_rtt", "the flow's unloaded round trip".into()),
                ("fast_react", h.fast_react.to_string()),
                (
                    "max_rate",
                    match r.max_rate_bps {
                        None => "the NIC's line rate".into(),
                        Some(x) => rate(x),
                    },
                ),
                (
                    "window",
                    match r.window {
                        None => "none".into(),
                        Some(w) => w.bytes.to_string(),
                    },
                ),
                (
                    "variable_window",
                    r.window.is_some_and(|w| w.variable).to_string(),
                ),
            ],
        );
    }

    /// The NIC, switch and open-loop defaults: `NicConfig::default`, `SharedBuffer`'s and
    /// `PfcSpec`'s constants, `OpenLoopSpec::DEFAULT_PACKET_SIZE`, as REFERENCE.md states them.
    #[test]
    fn reference_states_the_element_defaults() {
        use netstep_core::nic::NicConfig;
        use netstep_core::pfc::StaticPfc;
        use netstep_core::queue::SharedBuffer;
        use netstep_core::transport::OpenLoopSpec;
        use netstep_core::units::BufferSize;
        let nic = NicConfig::default();
        check_table(
            "## `[nic]` (every host's NIC)",
            &[
                ("buffer", buffer(nic.buffer)),
                ("per_flow", buffer(nic.per_flow)),
                ("scheduler", format!("`\"{}\"`", nic.scheduler.name())),
                (
                    "shaper",
                    nic.shaper
                        .map_or("none (line rate)".into(), |_| "a shaper".into()),
                ),
            ],
        );
        check_table(
            "## `[switch]` (every switch)",
            &[
                ("shared_buffer", "none".into()),
                ("alpha", SharedBuffer::DEFAULT_ALPHA.to_string()),
                ("pfc", "none (every class lossy)".into()),
                ("ack_priority", "false".into()),
            ],
        );
        let reference = include_str!("../../../scenarios/REFERENCE.md");
        let headroom = buffer(BufferSize::Bytes(StaticPfc::DEFAULT_HEADROOM));
        assert!(
            reference.contains(&format!("`headroom` (default {headroom})")),
            "REFERENCE.md's PFC section states the headroom default {headroom}"
        );
        // Dynamic thresholds: reserve, resume offset, headroom in BDPs, shift.
        use netstep_core::pfc::DynamicPfc;
        for stated in [
            format!(
                "`reserve` bytes (default {})",
                size(DynamicPfc::DEFAULT_RESERVE.0 as u32)
            ),
            format!(
                "`resume_offset` (default {})",
                size(DynamicPfc::DEFAULT_RESUME_OFFSET.0 as u32)
            ),
            format!(
                "link bandwidth-delay products, default {})",
                DynamicPfc::DEFAULT_HEADROOM_BDPS
            ),
            format!("(default {}, one eighth)", DynamicPfc::DEFAULT_SHIFT),
        ] {
            assert!(
                reference.replace('\n', " ").contains(&stated),
                "REFERENCE.md's dynamic PFC text states {stated}"
            );
        }
        check_table(
            "`kind = \"open_loop\"`:",
            &[
                (
                    "packet_size",
                    size(OpenLoopSpec::DEFAULT_PACKET_SIZE.0 as u32),
                ),
                ("interval", "—".into()),
                ("rate", "—".into()),
                ("exponential", "false".into()),
                ("size_distribution", "`\"constant\"`".into()),
                ("ecn", "false".into()),
            ],
        );
    }

    /// The simulation, link, routing and trace defaults: the constants on their config types
    /// (`SimulationConfig`, `TraceTablesConfig`) and in `topology.rs`, as REFERENCE.md states.
    #[test]
    fn reference_states_the_run_and_link_defaults() {
        use crate::config::{SimulationConfig, TraceTablesConfig};
        check_table(
            "## `[simulation]`",
            &[
                ("duration", "until no event is left".into()),
                ("seed", SimulationConfig::DEFAULT_SEED.to_string()),
                ("threads", SimulationConfig::DEFAULT_THREADS.to_string()),
                ("window", "`\"exact\"`".into()),
            ],
        );
        check_table(
            "`defaults` and per-link fields for `custom`",
            &[
                ("rate", rate(crate::topology::DEFAULT_RATE.0 as f64)),
                ("delay", duration(crate::topology::DEFAULT_DELAY)),
                ("buffer", buffer(crate::topology::DEFAULT_BUFFER)),
                ("loss", "0".into()),
                ("scheduler", "FIFO".into()),
                ("aqm", "none (tail drop)".into()),
                ("shaper", "none".into()),
                ("policer", "none".into()),
            ],
        );
        let mode = toml::Value::try_from(crate::config::RoutingMode::default()).unwrap();
        check_table(
            "## `[routing]`",
            &[
                ("mode", format!("`\"{}\"`", mode.as_str().unwrap())),
                ("flowlet_gap", "—".into()),
                ("weighted", "false".into()),
            ],
        );
        check_table(
            "## `[[failures]]`",
            &[
                ("link", "—".into()),
                ("down", "—".into()),
                ("up", "never".into()),
            ],
        );
        check_table(
            "## `[trace]`",
            &[
                ("tables", "`[]`".into()),
                (
                    "sample_interval",
                    duration(TraceTablesConfig::DEFAULT_SAMPLE_INTERVAL),
                ),
                ("flows", "all".into()),
                ("nodes", "all".into()),
                ("from", duration(netstep_core::units::SimTime::ZERO)),
                ("until", "no limit".into()),
                (
                    "sample_one_in",
                    TraceTablesConfig::DEFAULT_SAMPLE_ONE_IN.to_string(),
                ),
            ],
        );
    }

    /// The scenario format's defaults are the spec types' own: a transport table with no
    /// field set resolves to `TcpSpec::new` / `RdmaSpec::new`.
    #[test]
    fn unset_transport_fields_resolve_to_the_spec_defaults() {
        use netstep_core::transport::CcSpec;
        use netstep_core::transport::TransportSpec;
        use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
        use netstep_core::transport::rdma::{RdmaCc, RdmaSpec};
        use netstep_core::transport::tcp::TcpSpec;
        let resolved = |kind: &str| {
            let text = format!(
                "[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n[[traffic]]\nkind = \"flows\"\ntransport = {{ kind = \"{kind}\" }}\nflows = [{{ src = \"l0\", dst = \"r0\", size = \"10KB\" }}]\n"
            );
            let limits = crate::limits::Limits::machine();
            let s = crate::load_str(&text, "defaults.toml", "defaults", None, &[], &limits)
                .expect("loads");
            s.model.flows.flows[0].transport.clone()
        };
        match &*resolved("tcp") {
            TransportSpec::Tcp(spec) => assert_eq!(*spec, TcpSpec::new(CcSpec::NewReno)),
            other => panic!("expected TCP, got {other:?}"),
        }
        match &*resolved("rdma") {
            TransportSpec::Rdma(spec) => {
                assert_eq!(*spec, RdmaSpec::new(RdmaCc::Dcqcn(DcqcnSpec::default())))
            }
            other => panic!("expected RDMA, got {other:?}"),
        }
    }
}

//! From the simulator's config to a netstep scenario: every key netstep models becomes a
//! scenario field, every key it does not is listed with the reason (in the scenario's header
//! comment and on stderr).
//!
//! [`import`] runs the steps in the order the simulator's keys are checked (the first error
//! found is the one reported): read the inputs and check the flows, `[simulation]`, the switch
//! buffer and its MMU ([`switch`]), ECN marking and the links ([`topology`]), the transport
//! and the NIC's acknowledgements ([`transport`]), failures and tracing, then the keys with no
//! effect and the unknown ones ([`keys`]); the scenario text is written last.

mod job;
pub(crate) use job::{JobImport, import_job};
mod keys;
mod switch;
mod topology;
mod transport;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::bail;
use netstep_core::units::{BitsPerSec, SimTime};

use super::files::{
    Config, Flow, FlowFormat, SourcePorts, Topology, read_flows, read_trace, seconds_to_ns,
};

/// Which reading of the config: the versions differ in units and in the switch MMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The m3-era fork (kwzhao/High-Precision-Congestion-Control, `third.cc` that reads
    /// `ENABLE_PFC` and `TIMELY_*`), as at commit 5d3beeb (the one m3's fig 8 ran):
    /// `BUFFER_SIZE` in KB, headroom three link BDPs, reserve 4,096 B, PFC thresholds free / 4
    /// at the host rate (shift 2), switch ECN always on.
    M3Fork,
    /// An earlier fork version with `MAX_RATE`: `BUFFER_SIZE` in KB, headroom three link
    /// BDPs, reserve 4,096 B, ECN on with `ENABLE_QCN`.
    Fork,
    /// The Parsimon-era fork (`FIXED_WIN` / `BASE_RTT`, no `MAX_RATE`): `BUFFER_SIZE` in MB,
    /// headroom three link BDPs, reserve 4,096 B, ECN on with `ENABLE_QCN` at a threshold
    /// fixed in its code: `kmin = kmax = rate x 3 / 10^9` KB (30 KB at 10 Gb/s).
    Parsimon,
    /// The upstream simulator (alibaba-edu): `BUFFER_SIZE` in MB, headroom three link BDPs,
    /// reserve 4,096 B, ECN on with `ENABLE_QCN`.
    Upstream,
}

impl Variant {
    /// Tells the version by the keys the config has.
    pub fn detect(config: &Config) -> Variant {
        if ["ENABLE_PFC", "TIMELY_T_HIGH", "TIMELY_T_LOW", "TIMELY_BETA"]
            .iter()
            .any(|k| config.has(k))
        {
            Variant::M3Fork
        } else if config.has("MAX_RATE") {
            Variant::Fork
        } else if config.has("FIXED_WIN") || config.has("BASE_RTT") {
            Variant::Parsimon
        } else {
            Variant::Upstream
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Variant::M3Fork => "the m3/Parsimon fork (m3-era third.cc: BUFFER_SIZE in KB)",
            Variant::Fork => "the m3/Parsimon fork (earlier third.cc: BUFFER_SIZE in KB)",
            Variant::Parsimon => {
                "the Parsimon-era fork (BUFFER_SIZE in MB, ECN threshold rate x 3 / 10^9 KB)"
            }
            Variant::Upstream => "the upstream HPCC simulator (BUFFER_SIZE in MB)",
        }
    }
}

/// An imported run: the scenario text, its flow rows, and what was not modeled.
pub struct Imported {
    /// The scenario (TOML), naming `flows.parquet` beside it.
    pub toml: String,
    /// The flows, in file order.
    pub flows: Vec<Flow>,
    /// Source ports the simulator assigns (per flow).
    pub sports: Vec<u16>,
    /// `KEY value: reason` for each key netstep does not model.
    pub not_modeled: Vec<String>,
    /// The config's reading.
    pub variant: Variant,
    /// The flow file's form.
    pub format: FlowFormat,
}

/// Durations in the config are clamped here (10^12 us, 11.6 days) before they become
/// picoseconds, so no absurd value overflows netstep's clock; the scenario then states them.
const MAX_CONFIG_US: u64 = 1_000_000_000_000;

/// A scenario duration, exactly.
fn duration(t: SimTime) -> String {
    format!("\"{t}\"")
}

/// A scenario rate, exactly.
fn rate(r: BitsPerSec) -> String {
    format!("\"{r}\"")
}

/// The config and what the steps found, in the order they found it: the keys mapped (for the
/// scenario's header) and those not modeled (header and stderr).
struct Log<'a> {
    config: &'a Config,
    mapped: Vec<String>,
    not_modeled: Vec<String>,
}

impl<'a> Log<'a> {
    fn new(config: &'a Config) -> Self {
        Log {
            config,
            mapped: Vec::new(),
            not_modeled: Vec::new(),
        }
    }

    /// A key (or keys) and the scenario field it became.
    fn mapped(&mut self, line: impl Into<String>) {
        self.mapped.push(line.into());
    }

    /// `KEY value: reason` for a key netstep does not model.
    fn note(&mut self, key: &str, reason: &str) {
        let value = self
            .config
            .get(key)
            .map(|e| e.values.join(" "))
            .unwrap_or_default();
        self.not_modeled.push(format!("{key} {value}: {reason}"));
    }
}

/// The files the config names, read, with the flows checked against the topology.
struct Inputs {
    flow_path: PathBuf,
    topology: Topology,
    format: FlowFormat,
    flows: Vec<Flow>,
}

/// The scenario's sections, as text (empty: the section is left out).
struct Sections {
    simulation: String,
    switch: String,
    topology: topology::TopologyText,
    transport: String,
    failures: String,
    trace: String,
}

/// Reads `config_path` and the files it names; returns the scenario and its flows.
pub fn import(config_path: &Path) -> anyhow::Result<Imported> {
    let config = Config::read(config_path)?;
    let variant = Variant::detect(&config);
    let mut log = Log::new(&config);
    let inputs = read_inputs(config_path, &config)?;
    let pg_zero = pg_zero_note(&inputs);
    // Source ports: the fork counts per (src, dst) pair from 10000, upstream per source.
    let mut ports = SourcePorts::new(variant != Variant::Upstream);
    let sports = inputs
        .flows
        .iter()
        .map(|f| ports.next(f.src, f.dst))
        .collect();
    let name = config_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hpcc".to_string());

    let simulation = simulation(&mut log)?;
    // The classes the MMU accounts: the flows' priority groups but 0 (the simulator's queue
    // 0 bypasses it).
    let lossless = inputs
        .flows
        .iter()
        .map(|f| f.pg)
        .filter(|&c| c != 0)
        .collect();
    let mut switch = switch::buffer_and_mmu(variant, &inputs.topology, &lossless, &mut log)?;
    let ecn = switch::Ecn::read(variant, &mut log)?;
    let switches = &inputs.topology.is_switch;
    let topology = topology::topology(&inputs.topology, &ecn, &|n| switches[n as usize], &mut log)?;
    let (mut transport, cc, mtu) = transport::transport(config_path, variant, &mut log)?;
    transport::nic_and_acks(variant, mtu, &mut transport, &mut switch, &mut log)?;
    let failures = failures(&mut log)?;
    let trace = trace(inputs.topology.nodes, &mut log)?;
    keys::other_keys(variant, cc, pg_zero, &mut log);

    let sections = Sections {
        simulation,
        switch,
        topology,
        transport,
        failures,
        trace,
    };
    let sources = [format!(
        "Flows: {} ({} flows) -> flows.parquet.",
        inputs.flow_path.display(),
        inputs.flows.len()
    )];
    let traffic = "[[traffic]]\nkind = \"flow_file\"\npath = \"flows.parquet\"\n";
    let from = format!(
        "`netstep import hpcc` from {} ({})",
        config_path.display(),
        variant.describe()
    );
    let toml = scenario_text(&from, &sources, &name, &sections, &log, traffic)?;
    Ok(Imported {
        toml,
        flows: inputs.flows,
        sports,
        not_modeled: log.not_modeled,
        variant,
        format: inputs.format,
    })
}

/// Reads the topology and flow files the config names and checks that every flow runs
/// between two distinct hosts.
fn read_inputs(config_path: &Path, config: &Config) -> anyhow::Result<Inputs> {
    let required = |key: &str| -> anyhow::Result<PathBuf> {
        config.path(key)?.ok_or_else(|| {
            anyhow::anyhow!(
                "{}: {key} is missing (the simulator needs it)",
                config_path.display()
            )
        })
    };
    let topology_path = required("TOPOLOGY_FILE")?;
    let flow_path = required("FLOW_FILE")?;
    let topology = Topology::read(&topology_path)?;
    let (format, flows) = read_flows(&flow_path)?;
    for (i, f) in flows.iter().enumerate() {
        for (what, id) in [("src", f.src), ("dst", f.dst)] {
            if id >= topology.nodes || topology.is_switch[id as usize] {
                bail!(
                    "{}:{}: flow {i}: {what} {id} is not a host of {}",
                    flow_path.display(),
                    f.line,
                    topology_path.display()
                );
            }
        }
        if f.src == f.dst {
            bail!(
                "{}:{}: flow {i}: src and dst are both {}",
                flow_path.display(),
                f.line,
                f.src
            );
        }
    }
    Ok(Inputs {
        flow_path,
        topology,
        format,
        flows,
    })
}

/// The note for flows in priority group 0, if any.
fn pg_zero_note(inputs: &Inputs) -> Option<String> {
    inputs.flows.iter().any(|f| f.pg == 0).then(|| {
        format!(
            "pg 0 in {}: the simulator's queue 0 is strict priority without buffer accounting or ECN marking; netstep's class 0 is an ordinary class",
            inputs.flow_path.display()
        )
    })
}

/// `[simulation]`: `SIMULATOR_STOP_TIME` as the run's duration.
fn simulation(log: &mut Log) -> anyhow::Result<String> {
    let config = log.config;
    let mut sim = String::new();
    if let Some((e, stop)) = config.one("SIMULATOR_STOP_TIME")? {
        // Seconds(double), as the simulator reads it.
        let ns = seconds_to_ns(stop).ok_or_else(|| config.error(e, "expected seconds >= 0"))?;
        let ps = ns.checked_mul(1000).ok_or_else(|| {
            config.error(
                e,
                "too long for netstep's picosecond clock (at most about 213 days)",
            )
        })?;
        writeln!(sim, "duration = {}", duration(SimTime(ps)))?;
        log.mapped(format!("SIMULATOR_STOP_TIME {stop} -> simulation.duration"));
    }
    Ok(sim)
}

/// `[[failures]]`: `LINK_DOWN time_us a b` (0: none), at 2 s plus the time as the simulator
/// schedules it.
fn failures(log: &mut Log) -> anyhow::Result<String> {
    let config = log.config;
    let mut failures = String::new();
    if let Some(e) = config.get("LINK_DOWN") {
        let v: Vec<u64> = e
            .values
            .iter()
            .map(|v| v.parse())
            .collect::<Result<_, _>>()
            .map_err(|_| config.error(e, "expected `time_us nodeA nodeB`"))?;
        if v.len() != 3 {
            return Err(config.error(e, "expected `time_us nodeA nodeB`"));
        }
        if v[0] > 0 {
            let at = SimTime::from_secs(2) + SimTime::from_us(v[0].min(MAX_CONFIG_US));
            writeln!(
                failures,
                "[[failures]]\nlink = [\"{}\", \"{}\"]\ndown = {}",
                v[1],
                v[2],
                duration(at)
            )?;
            log.mapped("LINK_DOWN -> [[failures]] at 2 s + time");
        }
    }
    Ok(failures)
}

/// `[trace]`: `ENABLE_TRACE` and `TRACE_FILE` as packet hops at the traced nodes.
fn trace(nodes: u32, log: &mut Log) -> anyhow::Result<String> {
    let config = log.config;
    let mut trace = String::new();
    if config.flag("ENABLE_TRACE")? == Some(true)
        && let Some(path) = config.path("TRACE_FILE")?
    {
        let nodes = read_trace(&path, nodes)?;
        writeln!(
            trace,
            "[trace]\ntables = [\"packet_hops\"]\nnodes = [{}]",
            nodes
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        log.mapped("ENABLE_TRACE, TRACE_FILE -> [trace] packet_hops at the traced nodes");
    }
    Ok(trace)
}

/// The scenario: a header comment (what it was imported `from`, the `sources` lines, what was
/// mapped and what was not), then the sections and the `traffic` block.
fn scenario_text(
    from: &str,
    sources: &[String],
    name: &str,
    sections: &Sections,
    log: &Log,
    traffic: &str,
) -> anyhow::Result<String> {
    let mut toml = String::new();
    writeln!(toml, "# Imported by {from}.")?;
    for line in sources {
        writeln!(toml, "# {line}")?;
    }
    writeln!(toml, "#\n# Mapped:")?;
    for m in &log.mapped {
        writeln!(toml, "#   {m}")?;
    }
    writeln!(toml, "#\n# Not modeled (netstep runs without them):")?;
    for m in &log.not_modeled {
        writeln!(toml, "#   {m}")?;
    }
    writeln!(toml, "\nname = \"{name}\"\n")?;
    if !sections.simulation.is_empty() {
        writeln!(toml, "[simulation]\n{}", sections.simulation)?;
    }
    writeln!(toml, "[nic]\nscheduler = \"pull\"\n")?;
    if !sections.switch.is_empty() {
        writeln!(toml, "[switch]\n{}", sections.switch)?;
    }
    let topology = &sections.topology;
    writeln!(
        toml,
        "[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [{}]\n{}links = [\n{}]\n",
        topology.hosts.join(", "),
        topology.switches.join(", "),
        topology.rules,
        topology.links
    )?;
    writeln!(toml, "[transport]\n{}", sections.transport)?;
    writeln!(toml, "{traffic}")?;
    if !sections.failures.is_empty() {
        writeln!(toml, "{}", sections.failures)?;
    }
    if !sections.trace.is_empty() {
        writeln!(toml, "{}", sections.trace)?;
    }
    Ok(toml)
}

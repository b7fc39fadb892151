//! netstep scenarios: the TOML format ([`config`]), unit-checked validation, `--set`
//! overrides, traffic generation, and building the bevy World and the engine [`Model`] from a
//! scenario file. Every error names the file, the field, the line and column where known, the
//! value and what was expected.
//!
//! The crate by job: `config` (the file's top-level tables), `topology` and `traffic` (one
//! file per kind), `transport` (one file per transport), `overrides` (`--set`), `build` (the
//! named steps from a parsed file to a World and a model), `settings` and `trace_settings`
//! (element and trace settings), `checks` (checks on the compiled model), `estimate` (sizes by
//! arithmetic), `aicb` (AICB / SimAI training workload files and SimAI's communication
//! groups; read, not yet run).

pub mod aicb;
pub mod cdf;
pub mod collectives;
pub mod config;
pub mod error;
pub mod limits;
pub mod table_file;
pub mod topology;
pub mod traffic;
pub mod transport;

mod build;
mod checks;
mod estimate;
mod fields;
mod overrides;
mod settings;
mod trace_settings;

use std::path::Path;

use netstep_core::engine::{EngineConfig, Model, WindowMode};
use netstep_core::units::SimTime;

pub use collectives::{CollectiveJob, CollectiveStep, Collectives};
use config::ScenarioFile;
pub use error::{FieldPath, Invalid, ScenarioError};
pub use limits::{Footprint, Limits};
pub use overrides::{apply_overrides, fnv1a};
pub use trace_settings::TRACE_TABLES;

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

/// A loaded, validated scenario: its settings, the dense model the setup systems compiled from
/// the setup World (`netstep_core::world`, dropped once the model is built), and what outputs
/// need beside the model. Nothing here is ECS: the run reads the model, the outputs read the
/// model, the run's `RunOutput` and the fields below.
pub struct Scenario {
    /// Run settings and identity.
    pub meta: ScenarioMeta,
    /// The compiled model the engines run (its flow table is the one copy of the flows).
    pub model: Model,
    /// Node names, by node index.
    pub node_names: Vec<String>,
    /// The collective jobs and their flows' steps.
    pub collectives: Collectives,
    /// The AICB training job, if the scenario runs one (its ops, groups and workload, for the
    /// reports; the engine's part is in the model).
    pub aicb: Option<traffic::aicb::AicbJob>,
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
    let source = build::Source {
        effective: &at.effective,
        file,
        default_name,
        base_dir,
    };
    let built = build::build(parsed, &source, limits, false);
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
    let source = build::Source {
        effective: &at.effective,
        file: &file,
        default_name: &default_name,
        base_dir: path.parent(),
    };
    build::build(parsed, &source, limits, true).map_err(|e| at.locate(e))
}

#[cfg(test)]
mod tests;

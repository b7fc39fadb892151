//! The `netstep` command line: run a scenario into a run folder of Parquet tables, or validate
//! it. `main.rs` only parses arguments and maps errors to exit codes; the work is here so tests
//! can call it.

pub mod compare;
pub mod output;
pub mod summary;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use netstep_core::engine::RunOutput;
use netstep_core::engine::window::WindowEngine;
use netstep_scenario::Scenario;

/// An error with the exit code it deserves.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The user's input is wrong (exit 2).
    #[error("{0:#}")]
    BadInput(anyhow::Error),
    /// netstep failed (exit 1).
    #[error("{0:#}")]
    Internal(anyhow::Error),
}

impl CliError {
    /// Process exit code: 2 for bad input, 1 for internal errors.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BadInput(_) => 2,
            CliError::Internal(_) => 1,
        }
    }
}

/// What `netstep run` was asked to do.
#[derive(Clone, Debug, Default)]
pub struct RunRequest {
    /// Scenario file; `None` runs the built-in quickstart.
    pub scenario: Option<PathBuf>,
    /// Output folder; default `out/<scenario name>`.
    pub out: Option<PathBuf>,
    /// Worker threads (overrides the scenario).
    pub threads: Option<usize>,
    /// `KEY=VALUE` overrides.
    pub overrides: Vec<String>,
    /// Show a progress bar (only when stdout is a terminal).
    pub progress: bool,
    /// `--trace` list of optional tables (overrides `[trace] tables`).
    pub trace: Option<String>,
    /// `--sample-interval` (overrides `[trace] sample_interval`).
    pub sample_interval: Option<String>,
}

/// The result of a completed run.
pub struct RunReport {
    /// Where the tables are.
    pub out: PathBuf,
    /// The summary printed to stdout.
    pub summary: String,
    /// Engine output.
    pub output: RunOutput,
}

/// Loads a scenario (or the quickstart) with overrides; errors are bad input.
pub fn load(scenario: Option<&Path>, overrides: &[String]) -> Result<Scenario, CliError> {
    let loaded = match scenario {
        Some(path) => netstep_scenario::load(path, overrides),
        None => netstep_scenario::load_quickstart(overrides),
    };
    loaded.map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))
}

/// `netstep validate`: loads and checks a scenario, returns a one-paragraph description.
pub fn validate(scenario: &Path, overrides: &[String]) -> Result<String, CliError> {
    let s = load(Some(scenario), overrides)?;
    Ok(format!(
        "{}: ok — scenario {:?}, {} nodes, {} egress ports, {} flows, lookahead {}, window {}",
        scenario.display(),
        s.meta.name,
        s.model.net.n_nodes(),
        s.model.net.n_ports(),
        s.model.flows.len(),
        s.model.lookahead(),
        match s.meta.window {
            netstep_core::engine::WindowMode::Exact => "exact".to_string(),
            netstep_core::engine::WindowMode::Quantized(q) => q.to_string(),
        }
    ))
}

/// `netstep run`: simulate and write the run folder atomically.
pub fn run(request: &RunRequest) -> Result<RunReport, CliError> {
    let mut overrides = request.overrides.clone();
    if let Some(list) = &request.trace {
        let mut tables = Vec::new();
        for table in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
            if !netstep_scenario::TRACE_TABLES.contains(&table) {
                return Err(CliError::BadInput(anyhow::anyhow!(
                    "--trace: unknown table {table:?}; expected a comma-separated list of {}",
                    netstep_scenario::TRACE_TABLES.join(", ")
                )));
            }
            tables.push(format!("{table:?}"));
        }
        overrides.push(format!("trace.tables=[{}]", tables.join(", ")));
    }
    if let Some(interval) = &request.sample_interval {
        overrides.push(format!("trace.sample_interval={interval:?}"));
    }
    let mut scenario = load(request.scenario.as_deref(), &overrides)?;
    if let Some(threads) = request.threads {
        if threads == 0 {
            return Err(CliError::BadInput(anyhow::anyhow!(
                "--threads: must be at least 1, got 0"
            )));
        }
        scenario.meta.threads = threads;
    }
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&scenario.meta.name));
    let staging = output::Staging::prepare(&out).map_err(CliError::BadInput)?;
    let engine = WindowEngine::new(&scenario.model, scenario.meta.engine_config())
        .map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))?;
    let width = engine.width();
    let bar = summary::progress_bar(request.progress, scenario.meta.duration);
    let started = Instant::now();
    let mut windows = 0u64;
    let progress = |t| {
        windows += 1;
        if windows.is_multiple_of(64) {
            summary::tick(&bar, t);
        }
    };
    let trace = &scenario.model.trace;
    let output = if trace.packet_hops.is_some() || trace.queue_samples.is_some() {
        let mut writer = netstep_trace::TraceWriter::start(
            &staging.dir,
            trace.packet_hops.is_some(),
            trace.queue_samples.is_some(),
            output::metadata(&scenario.meta),
        )
        .map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))?;
        let output = engine.run_traced(progress, &mut writer);
        writer
            .finish()
            .context("writing the trace tables")
            .map_err(CliError::Internal)?;
        output
    } else {
        engine.run(progress)
    }
    .context("simulating")
    .map_err(CliError::Internal)?;
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    debug_assert_eq!(output.stats.window, width);
    netstep_core::world::record_run(&mut scenario.world, output.clone());
    let tables = output::Tables::build(&mut scenario, &output, wall);
    let summary_text = summary::render(&scenario, &tables, &output, wall);
    output::write(&staging, &scenario, &tables, &output)
        .context("writing the run folder")
        .map_err(CliError::Internal)?;
    staging.commit().map_err(CliError::Internal)?;
    Ok(RunReport {
        out,
        summary: summary_text,
        output,
    })
}

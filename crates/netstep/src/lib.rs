//! The `netstep` command line: run a scenario into a run folder of Parquet tables, or validate
//! it. `main.rs` only parses arguments and maps errors to exit codes; the work is here so tests
//! can call it.

pub mod compare;
pub mod flow_rows;
pub mod hpcc;
pub mod interrupt;
pub mod output;
pub mod summary;
pub mod sweep;
pub mod training;
pub mod watchdog;

use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use netstep_core::engine::RunOutput;
use netstep_core::engine::window::WindowEngine;
use netstep_scenario::{Limits, Scenario};

/// An error with the exit code it deserves.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The user's input is wrong (exit 2).
    #[error("{0:#}")]
    BadInput(anyhow::Error),
    /// netstep failed (exit 1).
    #[error("{0:#}")]
    Internal(anyhow::Error),
    /// SIGINT or SIGTERM stopped the command (exit 128 + the signal's number).
    #[error("interrupted by {}: nothing was written", interrupt::name(*.0))]
    Interrupted(i32),
}

impl CliError {
    /// Process exit code: 2 for bad input, 1 for internal errors.
    pub fn exit_code(&self) -> i32 {
        match self {
            CliError::BadInput(_) => 2,
            CliError::Internal(_) => 1,
            CliError::Interrupted(signal) => interrupt::exit_code(*signal),
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
    /// `--max-memory`: the memory budget, checked before the run and watched during it
    /// (default: the machine's available memory).
    pub max_memory: Option<String>,
    /// `--max-disk`: the output budget, watched while the run writes (default: the free space
    /// of the output's file system).
    pub max_disk: Option<String>,
    /// `--format hpcc` / `hpcc-m3`: also write the HPCC simulator's `fct.txt` and `pfc.txt`.
    pub format: Option<hpcc::export::FctFormat>,
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

/// The limits a run or validation works under: `--max-memory` (a size such as `"8GB"`) or,
/// without it, the machine's available memory.
pub fn limits(max_memory: Option<&str>) -> Result<Limits, CliError> {
    match max_memory {
        None => Ok(Limits::machine()),
        Some(text) => {
            let bytes = netstep_core::units::parse_size(text).map_err(|e| {
                CliError::BadInput(anyhow::anyhow!(
                    "--max-memory: {e}; expected a size such as \"8GB\""
                ))
            })?;
            if bytes.0 == 0 {
                return Err(CliError::BadInput(anyhow::anyhow!(
                    "--max-memory: must be positive, got {text:?}"
                )));
            }
            Ok(Limits::with_budget(bytes.0))
        }
    }
}

/// Loads a scenario (or the quickstart) with overrides under `limits`; errors are bad input.
pub fn load(
    scenario: Option<&Path>,
    overrides: &[String],
    limits: &Limits,
) -> Result<Scenario, CliError> {
    let loaded = match scenario {
        Some(path) => netstep_scenario::load(path, overrides, limits),
        None => netstep_scenario::load_quickstart(overrides, limits),
    };
    loaded.map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))
}

/// `netstep validate`: loads and checks a scenario, returns a description with its size and
/// expected memory.
pub fn validate(
    scenario: &Path,
    overrides: &[String],
    max_memory: Option<&str>,
) -> Result<String, CliError> {
    let limits = limits(max_memory)?;
    let started = Instant::now();
    let found = netstep_scenario::validate(scenario, overrides, &limits)
        .map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))?;
    let window = |mode: netstep_core::engine::WindowMode| match mode {
        netstep_core::engine::WindowMode::Exact => "exact".to_string(),
        netstep_core::engine::WindowMode::Quantized(q) => q.to_string(),
    };
    let s = match found {
        netstep_scenario::Validated::Built(s) => *s,
        netstep_scenario::Validated::Estimated(e) => {
            let f = &e.footprint;
            return Ok([
                format!(
                    "{}: ok by arithmetic — scenario {:?}, lookahead {}, window {}",
                    scenario.display(),
                    e.name,
                    e.lookahead,
                    window(e.window)
                ),
                format!(
                    "{} nodes, {} ports, {} flows; expected memory {}",
                    f.nodes,
                    f.ports,
                    f.flows,
                    netstep_scenario::limits::human_bytes(f.memory_bytes())
                ),
                format!(
                    "the topology ({} hosts) is too large to build for validation: sizes, flows and memory are computed; host names, the traffic blocks' settings, packets, routes and failures are checked when a run builds it",
                    e.hosts
                ),
                format!("setup took {:.2} s", started.elapsed().as_secs_f64()),
            ]
            .join("\n"));
        }
    };
    Ok(format!(
        "{}: ok — scenario {:?}, lookahead {}, window {}\n{}\nsetup took {:.2} s",
        scenario.display(),
        s.meta.name,
        s.model.lookahead(),
        match s.meta.window {
            netstep_core::engine::WindowMode::Exact => "exact".to_string(),
            netstep_core::engine::WindowMode::Quantized(q) => q.to_string(),
        },
        s.meta.footprint,
        started.elapsed().as_secs_f64(),
    ))
}

/// The run's `--set` overrides, with `--trace` (tables checked) and `--sample-interval` as
/// overrides of `[trace]`.
fn run_overrides(request: &RunRequest) -> Result<Vec<String>, CliError> {
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
    Ok(overrides)
}

/// `--max-disk` in bytes (a positive size such as `"10GB"`), if given.
fn max_disk(text: Option<&str>) -> Result<Option<u64>, CliError> {
    let Some(text) = text else {
        return Ok(None);
    };
    match netstep_core::units::parse_size(text) {
        Ok(bytes) if bytes.0 > 0 => Ok(Some(bytes.0)),
        Ok(_) => Err(CliError::BadInput(anyhow::anyhow!(
            "--max-disk: must be positive, got {text:?}"
        ))),
        Err(e) => Err(CliError::BadInput(anyhow::anyhow!(
            "--max-disk: {e}; expected a size such as \"10GB\""
        ))),
    }
}

/// `netstep run`: simulate and write the run folder atomically.
pub fn run(request: &RunRequest) -> Result<RunReport, CliError> {
    // SIGINT / SIGTERM: stop at the next window; the staging folder is dropped on the way out.
    let interrupt = interrupt::Interrupt::install(false)
        .map_err(|e| CliError::Internal(anyhow::anyhow!("listening for signals: {e}")))?;
    let stopped = || match interrupt.received() {
        Some(signal) => Err(CliError::Interrupted(signal)),
        None => Ok(()),
    };
    let overrides = run_overrides(request)?;
    if let Some(threads) = request.threads
        && !(1..=netstep_scenario::limits::MAX_THREADS).contains(&threads)
    {
        return Err(CliError::BadInput(anyhow::anyhow!(
            "--threads: must be between 1 and {}, got {threads}",
            netstep_scenario::limits::MAX_THREADS
        )));
    }
    let limits = limits(request.max_memory.as_deref())?;
    let mut scenario = load(request.scenario.as_deref(), &overrides, &limits)?;
    if let Some(threads) = request.threads {
        scenario.meta.threads = threads;
    }
    let out = request
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out").join(&scenario.meta.name));
    let staging = output::Staging::prepare(&out).map_err(CliError::BadInput)?;
    let _watch = limits
        .memory
        .map(|(budget, source)| watchdog::MemoryWatch::start(budget, source, staging.dir.clone()));
    let max_disk = max_disk(request.max_disk.as_deref())?;
    let budget = watchdog::DiskBudget::for_dir(max_disk, &staging.dir);
    // Refused before the run when the estimate alone is past the budget.
    if let (expected, Some(table)) = scenario.meta.footprint.trace_disk_bytes()
        && expected > budget.bytes()
    {
        return Err(CliError::BadInput(anyhow::anyhow!(
            "the trace tables would take about {} on disk (mostly {table}), more than the budget of {} ({}); write fewer rows: a longer trace.sample_interval, trace.flows or trace.nodes filters, trace.sample_one_in",
            netstep_scenario::limits::human_bytes(expected),
            netstep_scenario::limits::human_bytes(budget.bytes()),
            budget.source()
        )));
    }
    let _disk = watchdog::DiskWatch::start(budget, staging.dir.clone());
    stopped()?;
    let engine = WindowEngine::new(&scenario.model, scenario.meta.engine_config())
        .map_err(|e| CliError::BadInput(anyhow::anyhow!(e)))?
        .stop_when(interrupt.flag());
    let width = engine.width();
    let starts = scenario.model.flows.flows.iter().map(|f| f.start);
    let first_start = starts
        .clone()
        .min()
        .unwrap_or(netstep_core::units::SimTime::ZERO);
    let span = (first_start, starts.max());
    let bar = summary::progress_bar(request.progress, scenario.meta.duration, span);
    let started = Instant::now();
    let mut windows = 0u64;
    let progress = |t| {
        windows += 1;
        if windows.is_multiple_of(64) {
            summary::tick(&bar, t, first_start);
        }
    };
    let trace = &scenario.model.trace;
    let tables = netstep_trace::TraceTables {
        packet_hops: trace.packet_hops.is_some(),
        queue_samples: trace.queue_samples.is_some(),
        cc_samples: trace.cc_samples.is_some(),
        pfc_events: scenario.model.pfc.is_some(),
    };
    let output = if tables != netstep_trace::TraceTables::default() {
        let mut writer = netstep_trace::TraceWriter::start(
            &staging.dir,
            tables,
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
    // A run fails on an event past the representable time or a telemetry overflow, which
    // the scenario caused: bad input (exit 2), named in the message; or it was stopped.
    .map_err(|e| match e {
        netstep_core::engine::RunError::Interrupted => {
            CliError::Interrupted(interrupt.received().unwrap_or(2))
        }
        e => CliError::BadInput(anyhow::anyhow!("simulating: {e}")),
    })?;
    stopped()?;
    let wall = started.elapsed().as_secs_f64();
    bar.finish_and_clear();
    debug_assert_eq!(output.stats.window, width);
    // With a simulator format, the simulator's ideal beside netstep's, so both slowdowns can
    // be reported.
    let rows = flow_rows::FlowRows::new(&scenario, &output, request.format);
    let mut tables = output::Tables::build(&scenario, &output, &rows, wall);
    let training = training::report(&scenario, &output);
    tables.run.job = training.as_ref().map(|t| t.breakdown.columns());
    let mut summary_text = summary::render(&scenario, &tables, &output, wall);
    output::write(&staging, &scenario, &tables, &rows, &output)
        .context("writing the run folder")
        .map_err(CliError::Internal)?;
    if let Some(training) = &training {
        summary_text.push_str(&training::summary(training));
        for note in scenario.aicb.iter().flat_map(|a| &a.schedule.notes) {
            summary_text.push_str(&format!("\nnote           {note}"));
        }
        training::write(&staging.dir, training, &output::metadata(&scenario.meta))
            .context("writing layers.parquet and EndToEnd.csv")
            .map_err(CliError::Internal)?;
    }
    if let Some(format) = request.format {
        let ids = hpcc::export::simulator_ids(&scenario);
        hpcc::export::write_fct_txt(&staging.dir.join("fct.txt"), &ids, &rows, format)
            .context("writing fct.txt")
            .map_err(CliError::Internal)?;
        hpcc::export::write_pfc_txt(&staging.dir, &scenario, &ids)
            .context("writing pfc.txt")
            .map_err(CliError::Internal)?;
    }
    drop(rows);
    stopped()?;
    staging.commit().map_err(CliError::Internal)?;
    Ok(RunReport {
        out,
        summary: summary_text,
        output,
    })
}

//! `netstep`: packet-level network simulation from a scenario file to Parquet.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use netstep::compare::{GroupBy, Metric};
use netstep::{CliError, RunRequest};

const EXAMPLES: &str = "Examples:
  netstep run                                   run the built-in quickstart (FatTree-4, TCP, web search)
  netstep run scenarios/days-baseline/fattree-k16-f512.toml --threads 2
  netstep run scenarios/quickstart.toml --set topology.k=8 --set simulation.seed=3 --out out/k8
  netstep run scenarios/queueing/mm1-rho08.toml --trace packet_hops,queue_samples --sample-interval 10us
  netstep run scenarios/quickstart.toml --set simulation.window=\\\"10us\\\" --out out/q10
  netstep compare out/quickstart out/q10 --metric slowdown --by size_bucket
  netstep validate scenarios/scale/fattree-k128-f128.toml
  netstep sweep scenarios/sweeps/quickstart-load.toml --out out/load --jobs 2
  netstep sweep plan scenarios/sweeps/quickstart-load.toml

Exit codes: 0 ok, 2 bad input (scenario, arguments, output folder), 1 internal error,
3 `compare --max-nw1` exceeded, 4 `sweep`: some points failed (the others completed).";

const SWEEP_EXAMPLES: &str = "Examples:
  netstep sweep scenarios/sweeps/quickstart-load.toml --out out/load --jobs 2
  netstep sweep scenarios/sweeps/quickstart-load.toml --out out/load      (again: resumes)
  netstep sweep plan scenarios/sweeps/quickstart-load.toml --out out/load --pending
  netstep sweep run-point scenarios/sweeps/quickstart-load.toml --id 3f2a... --out out/load
  netstep sweep scenarios/sweeps/quickstart-load.toml --out /shared/load --emit-slurm
  netstep sweep manifest scenarios/sweeps/quickstart-load.toml --out /shared/load

Sweep file format: scenarios/REFERENCE.md, \"Sweeps\". Exit codes: 0 every point done,
2 bad input, 1 internal error, 4 some points failed (recorded in DIR/sweep.parquet).";

/// Packet-level network simulator: scenario file in, Parquet tables out.
#[derive(Parser)]
#[command(name = "netstep", version, about, after_help = EXAMPLES)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Simulate a scenario and write flows.parquet, links.parquet and run.parquet.
    #[command(after_help = EXAMPLES)]
    Run {
        /// Scenario file (TOML). Without it, the built-in quickstart runs.
        scenario: Option<PathBuf>,
        /// Output folder (default: out/<scenario name>). Written atomically.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (overrides simulation.threads).
        #[arg(long)]
        threads: Option<usize>,
        /// Override any scenario value: --set topology.k=8 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
        /// Optional tables besides flows, links and run: packet_hops, queue_samples,
        /// cc_samples (comma-separated; overrides [trace] tables).
        #[arg(long, value_name = "TABLES")]
        trace: Option<String>,
        /// Sampling interval of queue_samples and cc_samples, e.g. 10us.
        #[arg(long, value_name = "DURATION")]
        sample_interval: Option<String>,
        /// Memory budget, e.g. 8GB: a scenario expected to need more is refused before it
        /// runs, and a run that grows past it stops with exit 2 and no output (default: the
        /// memory available on this machine).
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
        /// Output budget, e.g. 10GB: a run whose output (trace tables stream to disk while it
        /// runs) grows past it stops with exit 2 and no output (default: the free space of the
        /// output's file system).
        #[arg(long, value_name = "SIZE")]
        max_disk: Option<String>,
        /// Also write the HPCC simulator's fct.txt and pfc.txt into the run folder: `hpcc`
        /// (upstream lines) or `hpcc-m3` (the m3/Parsimon fork's, with the flow id first).
        #[arg(long, value_enum)]
        format: Option<OutputFormat>,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Turn another simulator's inputs into a netstep scenario.
    Import {
        #[command(subcommand)]
        from: ImportFrom,
    },
    /// Check a scenario without running it.
    Validate {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Override any scenario value: --set topology.k=8 (repeatable).
        #[arg(long = "set", value_name = "KEY=VALUE")]
        overrides: Vec<String>,
        /// Memory budget to check the scenario against, e.g. 8GB (default: the memory
        /// available on this machine).
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
    },
    /// Run a sweep file's points (resuming), or plan / run one point / rebuild the manifest.
    #[command(after_help = SWEEP_EXAMPLES, args_conflicts_with_subcommands = true)]
    Sweep {
        #[command(subcommand)]
        action: Option<SweepAction>,
        /// Sweep file (TOML).
        file: Option<PathBuf>,
        /// Sweep folder (default: out/<sweep name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Points run at once (default: cores / threads per run).
        #[arg(long)]
        jobs: Option<usize>,
        /// Worker threads of each run (default 1).
        #[arg(long)]
        threads_per_run: Option<usize>,
        /// Memory budget of each run, e.g. 4GB (default: the memory available).
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
        /// Write DIR/sweep.slurm, a Slurm job array over the pending points, instead of running.
        #[arg(long)]
        emit_slurm: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Compare two runs (or sweeps, or globs of runs) by Wasserstein distance per group.
    #[command(after_help = EXAMPLES)]
    Compare {
        /// Reference: a run folder, a folder of runs, or a glob.
        a: String,
        /// Compared: a run folder, a folder of runs, or a glob.
        b: String,
        /// Metric to compare.
        #[arg(long, value_enum, default_value = "slowdown")]
        metric: Metric,
        /// Grouping (default: size_bucket for flow metrics, none otherwise).
        #[arg(long, value_enum)]
        by: Option<GroupBy>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Exit with code 3 when any group's normalized W1 exceeds this.
        #[arg(long, value_name = "X")]
        max_nw1: Option<f64>,
    },
}

#[derive(Subcommand)]
enum ImportFrom {
    /// The HPCC ns-3 simulator (and its m3/Parsimon fork): its config file and the topology,
    /// flow and trace files it names -> scenario.toml and flows.parquet.
    Hpcc {
        /// The simulator's config file (paths in it are looked up as written, then beside
        /// the config, then in its parent folder).
        config: PathBuf,
        /// Output folder (default: the config's name without extension, here).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// SimAI (its ns-3 backend): its topology file, SimAI.conf and an AICB workload ->
    /// scenario.toml and workload.txt.
    Simai {
        /// SimAI's topology file (as gen_Topo_Template.py writes it).
        #[arg(long)]
        topology: PathBuf,
        /// SimAI.conf (the HPCC simulator's keys).
        #[arg(long)]
        conf: PathBuf,
        /// The AICB / SimAI workload file.
        #[arg(long)]
        workload: PathBuf,
        /// Output folder (default: the workload's name without extension, here).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Also run the scenario into OUT/run and print its summary.
        #[arg(long)]
        run: bool,
    },
}

/// Extra output formats of `netstep run`.
#[derive(Clone, Copy, clap::ValueEnum)]
enum OutputFormat {
    /// The upstream HPCC simulator's fct.txt lines and pfc.txt.
    Hpcc,
    /// The m3/Parsimon fork's fct.txt lines (flow id first) and pfc.txt.
    HpccM3,
}

#[derive(Subcommand)]
enum SweepAction {
    /// Print the points as JSON lines (id, path, status, values, overrides).
    Plan {
        /// Sweep file (TOML).
        file: PathBuf,
        /// Sweep folder whose state gives each point's status (default: out/<sweep name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only points that are not done.
        #[arg(long)]
        pending: bool,
    },
    /// Run one point by id (what a cluster task calls); a done point is skipped.
    RunPoint {
        /// Sweep file (TOML).
        file: PathBuf,
        /// Point id (from `netstep sweep plan`).
        #[arg(long)]
        id: String,
        /// Sweep folder (default: out/<sweep name>).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Worker threads (default 1).
        #[arg(long)]
        threads: Option<usize>,
        /// Memory budget, e.g. 4GB.
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
        /// Do not refresh DIR/sweep.parquet (the local driver does it itself).
        #[arg(long, hide = true)]
        no_manifest: bool,
        /// Exit when standard input closes (the local driver's children).
        #[arg(long, hide = true)]
        exit_with_parent: bool,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Rebuild DIR/sweep.parquet from the points' records (e.g. after a Slurm array).
    Manifest {
        /// Sweep file (TOML).
        file: PathBuf,
        /// Sweep folder (default: out/<sweep name>).
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

fn sweep_command(
    action: Option<SweepAction>,
    request: netstep::sweep::SweepRequest,
    quiet: bool,
) -> Result<ExitCode, CliError> {
    use netstep::sweep;
    match action {
        Some(SweepAction::Plan { file, out, pending }) => {
            emit(&sweep::plan_lines(&file, out.as_deref(), pending)?);
            Ok(ExitCode::SUCCESS)
        }
        Some(SweepAction::RunPoint {
            file,
            id,
            out,
            threads,
            max_memory,
            no_manifest,
            exit_with_parent,
            quiet,
        }) => {
            if exit_with_parent {
                sweep::exit_with_parent();
            }
            let outcome = sweep::run_point(
                &file,
                &id,
                out.as_deref(),
                threads,
                max_memory.as_deref(),
                !no_manifest,
            )?;
            if !quiet {
                emit(match outcome {
                    sweep::PointOutcome::Ran => "done\n",
                    sweep::PointOutcome::AlreadyDone => "already done\n",
                });
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(SweepAction::Manifest { file, out }) => {
            let (done, failed, pending) = sweep::rebuild_manifest(&file, out.as_deref())?;
            emit(&format!(
                "{done} done, {failed} failed, {pending} pending\n"
            ));
            Ok(ExitCode::SUCCESS)
        }
        None => {
            let report = sweep::sweep(&request)?;
            if !quiet {
                let mut text = String::new();
                for note in &report.notes {
                    text.push_str(note);
                    text.push('\n');
                }
                match &report.slurm_script {
                    Some(script) => text.push_str(&format!(
                        "{} point(s), {} done; Slurm script for the others: {}\nsubmit: sbatch {}\n",
                        report.points,
                        report.skipped,
                        script.display(),
                        script.display()
                    )),
                    None if request.emit_slurm => text.push_str(&format!(
                        "all {} point(s) are done; no Slurm script needed\n",
                        report.points
                    )),
                    None => text.push_str(&format!(
                        "{} point(s): {} ran, {} already done, {} failed\nmanifest       {}\n",
                        report.points,
                        report.ran,
                        report.skipped,
                        report.failed,
                        report.root.join("sweep.parquet").display()
                    )),
                }
                emit(&text);
            }
            if report.failed > 0 {
                eprintln!(
                    "netstep sweep: {} point(s) failed; their errors are in {}",
                    report.failed,
                    report.root.join("sweep.parquet").display()
                );
                Ok(ExitCode::from(sweep::EXIT_POINTS_FAILED))
            } else {
                Ok(ExitCode::SUCCESS)
            }
        }
    }
}

/// Writes to stdout; a closed pipe (`netstep run | head`) is not an error worth a panic.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if matches!(cli.command, Command::Compare { .. }) {
        // compare writes nothing: a signal exits at once, with one line and 130 / 143 (if
        // the listener cannot start, the default action ends the process all the same).
        let _ = netstep::interrupt::Interrupt::install(true);
    }
    let result = match cli.command {
        Command::Run {
            scenario,
            out,
            threads,
            overrides,
            trace,
            sample_interval,
            max_memory,
            max_disk,
            format,
            quiet,
        } => {
            let request = RunRequest {
                format: format.map(|f| match f {
                    OutputFormat::Hpcc => netstep::hpcc::export::FctFormat::Upstream,
                    OutputFormat::HpccM3 => netstep::hpcc::export::FctFormat::M3,
                }),
                scenario,
                out,
                threads,
                overrides,
                progress: !quiet,
                trace,
                sample_interval,
                max_memory,
                max_disk,
            };
            netstep::run(&request).map(|report| {
                if !quiet {
                    emit(&format!(
                        "{}
output         {}
",
                        report.summary,
                        report.out.display()
                    ));
                }
                ExitCode::SUCCESS
            })
        }
        Command::Import { from } => import(from),
        Command::Validate {
            scenario,
            overrides,
            max_memory,
        } => netstep::validate(&scenario, &overrides, max_memory.as_deref()).map(|text| {
            emit(&format!("{text}\n"));
            ExitCode::SUCCESS
        }),
        Command::Sweep {
            action,
            file,
            out,
            jobs,
            threads_per_run,
            max_memory,
            emit_slurm,
            quiet,
        } => match (&action, file) {
            (None, None) => Err(CliError::BadInput(anyhow::anyhow!(
                "sweep: give a sweep file (netstep sweep SWEEP.toml) or a subcommand (plan, run-point, manifest)"
            ))),
            (_, file) => sweep_command(
                action,
                netstep::sweep::SweepRequest {
                    file: file.unwrap_or_default(),
                    out,
                    jobs,
                    threads_per_run,
                    max_memory,
                    progress: !quiet,
                    emit_slurm,
                },
                quiet,
            ),
        },
        Command::Compare {
            a,
            b,
            metric,
            by,
            json,
            max_nw1,
        } => match max_nw1 {
            Some(limit) if !(limit.is_finite() && limit >= 0.0) => Err(CliError::BadInput(
                anyhow::anyhow!("--max-nw1: must be a finite number at least 0, got {limit}"),
            )),
            _ => netstep::compare::compare(&a, &b, metric, by)
                .map_err(CliError::BadInput)
                .map(|results| {
                    if json {
                        emit(&format!(
                            "{}
",
                            serde_json::to_string_pretty(&results).expect("plain data serializes")
                        ));
                    } else {
                        emit(&netstep::compare::render(&results));
                    }
                    match max_nw1 {
                        Some(limit) if results.iter().any(|r| r.nw1 > limit) => {
                            eprintln!("netstep compare: normalized W1 above --max-nw1 {limit}");
                            ExitCode::from(3)
                        }
                        _ => ExitCode::SUCCESS,
                    }
                }),
        },
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(err.exit_code() as u8)
        }
    }
}

/// `netstep import`.
fn import(from: ImportFrom) -> Result<ExitCode, CliError> {
    match from {
        ImportFrom::Hpcc { config, out } => {
            let out = out.unwrap_or_else(|| {
                PathBuf::from(config.file_stem().unwrap_or(std::ffi::OsStr::new("hpcc")))
            });
            let (scenario, imported) =
                netstep::hpcc::import_into(&config, &out).map_err(CliError::BadInput)?;
            for line in &imported.not_modeled {
                eprintln!("not modeled: {line}");
            }
            emit(&format!(
                "imported {} flows ({:?} flow file, {:?} config) into {}\nrun it: netstep run {} --format {}\n",
                imported.flows.len(),
                imported.format,
                imported.variant,
                scenario.display(),
                scenario.display(),
                if imported.format == netstep::hpcc::files::FlowFormat::WithId {
                    "hpcc-m3"
                } else {
                    "hpcc"
                }
            ));
            Ok(ExitCode::SUCCESS)
        }
        ImportFrom::Simai {
            topology,
            conf,
            workload,
            out,
            run,
        } => {
            let out = out.unwrap_or_else(|| {
                PathBuf::from(
                    workload
                        .file_stem()
                        .unwrap_or(std::ffi::OsStr::new("simai")),
                )
            });
            let files = netstep::hpcc::simai::SimaiFiles {
                topology: &topology,
                config: &conf,
                workload: &workload,
            };
            let (scenario, not_modeled) =
                netstep::hpcc::simai::import_into(&files, &out).map_err(CliError::BadInput)?;
            for line in &not_modeled {
                eprintln!("not modeled: {line}");
            }
            emit(&format!(
                "imported SimAI's run into {}\n",
                scenario.display()
            ));
            if !run {
                emit(&format!("run it: netstep run {}\n", scenario.display()));
                return Ok(ExitCode::SUCCESS);
            }
            let report = netstep::run(&netstep::RunRequest {
                scenario: Some(scenario.clone()),
                out: Some(out.join("run")),
                threads: None,
                overrides: Vec::new(),
                progress: true,
                trace: None,
                sample_interval: None,
                max_memory: None,
                max_disk: None,
                format: None,
            })?;
            emit(&format!(
                "{}\noutput         {}\n",
                report.summary,
                report.out.display()
            ));
            Ok(ExitCode::SUCCESS)
        }
    }
}

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

Exit codes: 0 ok, 2 bad input (scenario, arguments, output folder), 1 internal error,
3 `compare --max-nw1` exceeded.";

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
        /// Optional tables besides flows, links and run: packet_hops, queue_samples
        /// (comma-separated; overrides [trace] tables).
        #[arg(long, value_name = "TABLES")]
        trace: Option<String>,
        /// Queue sampling interval for queue_samples, e.g. 10us.
        #[arg(long, value_name = "DURATION")]
        sample_interval: Option<String>,
        /// Memory budget, e.g. 8GB: a scenario expected to need more is refused before it
        /// runs, and a run that grows past it stops with exit 2 and no output (default: the
        /// memory available on this machine).
        #[arg(long, value_name = "SIZE")]
        max_memory: Option<String>,
        /// Print only errors.
        #[arg(long, short)]
        quiet: bool,
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

/// Writes to stdout; a closed pipe (`netstep run | head`) is not an error worth a panic.
fn emit(text: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            out,
            threads,
            overrides,
            trace,
            sample_interval,
            max_memory,
            quiet,
        } => {
            let request = RunRequest {
                scenario,
                out,
                threads,
                overrides,
                progress: !quiet,
                trace,
                sample_interval,
                max_memory,
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
        Command::Validate {
            scenario,
            overrides,
            max_memory,
        } => netstep::validate(&scenario, &overrides, max_memory.as_deref()).map(|text| {
            emit(&format!("{text}\n"));
            ExitCode::SUCCESS
        }),
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

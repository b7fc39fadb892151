//! `netstep`: packet-level network simulation from a scenario file to Parquet.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use netstep::{CliError, RunRequest};

const EXAMPLES: &str = "Examples:
  netstep run                                   run the built-in quickstart (FatTree-4, TCP, web search)
  netstep run scenarios/days-baseline/fattree-k16-f512.toml --threads 2
  netstep run scenarios/quickstart.toml --set topology.k=8 --set simulation.seed=3 --out out/k8
  netstep validate scenarios/scale/fattree-k128-f128.toml

Exit codes: 0 ok, 2 bad input (scenario, arguments, output folder), 1 internal error.";

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
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Run {
            scenario,
            out,
            threads,
            overrides,
            quiet,
        } => {
            let request = RunRequest {
                scenario,
                out,
                threads,
                overrides,
                progress: !quiet,
            };
            netstep::run(&request).map(|report| {
                if !quiet {
                    println!(
                        "{}\noutput         {}",
                        report.summary,
                        report.out.display()
                    );
                }
            })
        }
        Command::Validate {
            scenario,
            overrides,
        } => netstep::validate(&scenario, &overrides).map(|text| println!("{text}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err}");
            ExitCode::from(match err {
                CliError::BadInput(_) => 2,
                CliError::Internal(_) => 1,
            })
        }
    }
}

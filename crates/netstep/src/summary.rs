//! The short summary `netstep run` prints, and the progress bar it shows on terminals.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use netstep_core::engine::RunOutput;
use netstep_core::units::SimTime;
use netstep_scenario::Scenario;

use crate::output::Tables;

/// A progress bar over simulated time when `wanted` and stdout is a terminal; hidden otherwise.
/// It runs from `from` (the first flow's start; [`tick`] is given the same) to the run's
/// `duration` or, sooner, the last flow's start (`last_start`): a run of arrivals is mostly
/// over when the last one has come, so the bar's ETA is the arrivals' (the last flows'
/// completion follows).
pub fn progress_bar(
    wanted: bool,
    duration: Option<SimTime>,
    (from, last_start): (SimTime, Option<SimTime>),
) -> ProgressBar {
    if !wanted || !std::io::stdout().is_terminal() {
        return ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
    }
    let end = match (duration, last_start.filter(|&s| s > SimTime::ZERO)) {
        (Some(d), Some(s)) => Some(d.min(s)),
        (d, s) => d.or(s),
    };
    let bar = match end {
        Some(d) => {
            let b = ProgressBar::new(d.as_ns().saturating_sub(from.as_ns()).max(1));
            b.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {percent:>3}% {msg} [{elapsed_precise}, ETA {eta}]",
                )
                .expect("valid template"),
            );
            b
        }
        None => {
            let b = ProgressBar::new_spinner();
            b.set_style(
                ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
                    .expect("valid template"),
            );
            b
        }
    };
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

/// Reports simulated time `t` on the bar (which starts at `from`).
pub fn tick(bar: &ProgressBar, t: SimTime, from: SimTime) {
    if bar.is_hidden() {
        return;
    }
    let done = t.as_ns().saturating_sub(from.as_ns());
    bar.set_position(done.min(bar.length().unwrap_or(u64::MAX)));
    bar.set_message(format!("simulated {t}"));
}

/// Percentile (nearest rank) of sorted values.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some(sorted[rank - 1])
}

/// The summary text.
pub fn render(scenario: &Scenario, tables: &Tables, output: &RunOutput, wall: f64) -> String {
    let mut text = render_main(scenario, tables, output, wall);
    for (job, time) in &tables.jobs {
        let time = time.map_or("did not complete".to_string(), |t| t.to_string());
        text.push_str(&format!(
            "\njob {job:<10} completion {time} (collectives.parquet)"
        ));
    }
    if scenario.model.pfc.is_some() {
        text.push_str(&format!(
            "\npfc            {} PAUSE, {} RESUME frames (pfc_events.parquet)",
            output.pfc_pauses, output.pfc_resumes
        ));
        if output.pfc_headroom_exceeded > 0 {
            text.push_str(&format!(
                "\nwarning        PFC headroom exceeded by {} lossless arrivals (headroom smaller than the link round trip needs)",
                output.pfc_headroom_exceeded
            ));
        }
        if let Some(cycle) = &output.pfc_deadlock {
            let names: Vec<String> = cycle.iter().map(|n| format!("node {n}")).collect();
            text.push_str(&format!(
                "\nwarning        PFC deadlock: cyclic pause {} -> {}; packets still wait on paused ports",
                names.join(" -> "),
                names[0]
            ));
        }
    }
    text
}

fn render_main(scenario: &Scenario, tables: &Tables, output: &RunOutput, wall: f64) -> String {
    let slowdowns = &tables.flows.slowdowns;
    let fmt = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
    let hops_per_sec = output.stats.packet_hops as f64 / wall.max(1e-9);
    format!(
        "scenario {name} (seed {seed}, {threads} thread{s}, window {window})\n\
         flows done     {done}/{total}{failed}\n\
         slowdown       p50 {p50}  p99 {p99}\n\
         drops          {drops}\n\
         simulated      {simulated} (last flow done at {last_done})\n\
         packet-hops    {hops} ({rate:.1} M/s)\n\
         wall time      {wall:.3} s",
        name = scenario.meta.name,
        seed = scenario.meta.seed,
        threads = scenario.meta.threads,
        s = if scenario.meta.threads == 1 { "" } else { "s" },
        window = output.stats.window,
        done = tables.run.flows_completed,
        total = tables.run.flows,
        failed = match tables.flows.failed {
            0 => String::new(),
            n => format!(" ({n} failed: retry limit)"),
        },
        p50 = fmt(percentile(slowdowns, 0.5)),
        p99 = fmt(percentile(slowdowns, 0.99)),
        drops = output.stats.drops,
        simulated = output.stats.last_event,
        last_done = tables
            .flows
            .last_end_ns
            .map_or("-".to_string(), |ns| SimTime::from_ns(ns).to_string()),
        hops = output.stats.packet_hops,
        rate = hops_per_sec / 1e6,
    )
}

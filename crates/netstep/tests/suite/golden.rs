//! Golden scenarios: a canonical text summary of each run (totals, every flow's outcome, every
//! used port's counters) is compared with the snapshot in `tests/golden/`. Any change in
//! simulated behaviour shows up here as a readable diff. After an intended change, regenerate
//! with `NETSTEP_UPDATE_GOLDEN=1 cargo test --release -p netstep --test suite golden` and
//! review the diff before committing it.

use std::fmt::Write;

use netstep_core::engine::{RunOutput, WindowMode};

use crate::common::*;

fn summary(name: &str, out: &RunOutput) -> String {
    let mut text = String::new();
    let s = &out.stats;
    writeln!(text, "scenario {name}").unwrap();
    writeln!(
        text,
        "events {} packet_hops {} drops {} misrouted {} last_event_ps {}",
        s.events, s.packet_hops, s.drops, s.misrouted, s.last_event.0
    )
    .unwrap();
    for f in &out.flows {
        writeln!(
            text,
            "flow {} sent {} delivered {} dropped {} retransmits {} timeouts {} end_ps {}",
            f.flow,
            f.packets_sent,
            f.packets_delivered,
            f.packets_dropped,
            f.retransmits,
            f.timeouts,
            f.end.map_or("-".to_string(), |e| e.0.to_string())
        )
        .unwrap();
    }
    for p in &out.ports {
        writeln!(
            text,
            "port {} tx_packets {} tx_bytes {} drops {} lost {} max_queue_bytes {}",
            p.port, p.tx_packets, p.tx_bytes, p.drops, p.lost, p.max_queue_bytes
        )
        .unwrap();
    }
    text
}

fn check(name: &str, file: &str, overrides: &[&str]) {
    let s = scenario_file(file, overrides);
    let out = run_window(&s, 2, WindowMode::Exact);
    let actual = summary(name, &out);
    let path = repo()
        .join("crates/netstep/tests/golden")
        .join(format!("{name}.txt"));
    // The `-newreno` snapshots pin the behaviour of earlier code: never rewritten.
    if std::env::var_os("NETSTEP_UPDATE_GOLDEN").is_some() && !name.ends_with("-newreno") {
        std::fs::write(&path, &actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with NETSTEP_UPDATE_GOLDEN=1",
            path.display()
        )
    });
    if actual != expected {
        let first = actual
            .lines()
            .zip(expected.lines())
            .position(|(a, e)| a != e)
            .unwrap_or(actual.lines().count().min(expected.lines().count()));
        panic!(
            "{name}: simulated behaviour changed (first difference at line {}):\n  expected: {}\n  actual:   {}\nIf intended, regenerate with NETSTEP_UPDATE_GOLDEN=1 and review the diff.",
            first + 1,
            expected.lines().nth(first).unwrap_or("<end>"),
            actual.lines().nth(first).unwrap_or("<end>")
        );
    }
}

#[test]
fn golden_quickstart() {
    check(
        "quickstart-3ms",
        "scenarios/quickstart.toml",
        &["traffic.0.duration=\"3ms\""],
    );
}

#[test]
fn golden_days_baseline() {
    check(
        "days-k4-f64-20pkts",
        "scenarios/days-baseline/fattree-k4-f64.toml",
        &["traffic.0.packets=20"],
    );
}

#[test]
fn golden_md1() {
    check(
        "md1-rho09-2000pkts",
        "scenarios/queueing/md1-rho09.toml",
        &["traffic.0.flows.0.packets=2000"],
    );
}

/// What `sack = false, abc_limit = 0` must reproduce: the NewReno sender that netstep had
/// before the reliable sender and the congestion control were split (these two snapshots were
/// written by that code, commit b3281d3, and must not be regenerated).
const NEWRENO_AS_BEFORE: [&str; 2] = ["transport.sack=false", "transport.abc_limit=0"];

#[test]
fn golden_quickstart_newreno_as_before() {
    check(
        "quickstart-3ms-newreno",
        "scenarios/quickstart.toml",
        &[
            "traffic.0.duration=\"3ms\"",
            NEWRENO_AS_BEFORE[0],
            NEWRENO_AS_BEFORE[1],
        ],
    );
}

#[test]
fn golden_lossy_newreno_as_before() {
    check(
        "lossy-dumbbell-newreno",
        "scenarios/tcp/sack-lossy-dumbbell.toml",
        &NEWRENO_AS_BEFORE,
    );
}

#[test]
fn golden_lossy_sack() {
    check(
        "lossy-dumbbell-sack",
        "scenarios/tcp/sack-lossy-dumbbell.toml",
        &[],
    );
}

//! Shared helpers: load scenario text, run either engine, compare outputs.

use std::path::{Path, PathBuf};

use netstep_core::engine::window::WindowEngine;
use netstep_core::engine::{EngineConfig, RunOutput, WindowMode, reference};
use netstep_scenario::Scenario;

/// The `netstep` binary, as a command.
pub fn netstep() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_netstep"))
}

/// Runs `command`, asserting it succeeded (its stderr as the message); returns its output.
pub fn run_ok(command: &mut std::process::Command) -> std::process::Output {
    let output = command.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Loads scenario text as if it were a file in `scenarios/`.
pub fn scenario(text: &str, overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    netstep_scenario::load_str(
        text,
        "test.toml",
        "test",
        Some(&repo().join("scenarios")),
        &overrides,
        &netstep_scenario::Limits::machine(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Loads a scenario file of the repository.
pub fn scenario_file(relative: &str, overrides: &[&str]) -> Scenario {
    let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    netstep_scenario::load(
        &repo().join(relative),
        &overrides,
        &netstep_scenario::Limits::machine(),
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

/// Runs the window engine.
pub fn run_window(s: &Scenario, threads: usize, window: WindowMode) -> RunOutput {
    let config = EngineConfig {
        threads,
        window,
        end: s.meta.duration,
    };
    WindowEngine::new(&s.model, config)
        .unwrap()
        .run(|_| {})
        .expect("run")
}

/// Runs the sequential reference engine.
pub fn run_reference(s: &Scenario) -> RunOutput {
    reference::run(&s.model, s.meta.duration).expect("run")
}

/// Runs the reference engine and asserts the window engine in exact mode simulates exactly
/// the same on each thread count of `threads`; returns the reference run. The one exactness
/// check every element's test calls.
pub fn exact_on(s: &Scenario, what: &str, threads: &[usize]) -> RunOutput {
    let reference = run_reference(s);
    for &threads in threads {
        let window = run_window(s, threads, WindowMode::Exact);
        assert_same_simulation(&reference, &window, &format!("{what}, {threads} threads"));
    }
    reference
}

/// [`exact_on`] on 1 and 4 threads.
pub fn exact_on_1_and_4_threads(s: &Scenario, what: &str) -> RunOutput {
    exact_on(s, what, &[1, 4])
}

/// Asserts two runs simulated the same thing (ignoring how many windows they took).
pub fn assert_same_simulation(a: &RunOutput, b: &RunOutput, what: &str) {
    assert_eq!(a.flows, b.flows, "{what}: flow outcomes differ");
    assert_eq!(a.ports, b.ports, "{what}: port counters differ");
    assert_eq!(a.job, b.job, "{what}: training job ranks differ");
    assert_eq!(
        a.deliveries.len(),
        b.deliveries.len(),
        "{what}: delivery counts differ"
    );
    for (i, (x, y)) in a.deliveries.iter().zip(&b.deliveries).enumerate() {
        assert_eq!(x, y, "{what}: delivery row {i} differs");
    }
    assert_eq!(
        a.stats.events, b.stats.events,
        "{what}: event counts differ"
    );
    assert_eq!(
        a.stats.packet_hops, b.stats.packet_hops,
        "{what}: packet-hops differ"
    );
    assert_eq!(a.stats.drops, b.stats.drops, "{what}: drops differ");
    assert_eq!(a.pfc_events, b.pfc_events, "{what}: PFC frames differ");
    assert_eq!(
        a.pfc_deadlock, b.pfc_deadlock,
        "{what}: PFC deadlock differs"
    );
    assert_eq!(
        a.stats.last_event, b.stats.last_event,
        "{what}: end times differ"
    );
}

/// Mean of a correlated time series after a 2 % warm-up, with the half-width of its 99.9 %
/// confidence interval from 40 batch means (Student t, 39 degrees of freedom); returns
/// `(mean, half_width, samples used)`.
pub fn batch_means_ci(samples: &[f64]) -> (f64, f64, usize) {
    let data = &samples[samples.len() / 50..];
    let batches = 40;
    let per_batch = data.len() / batches;
    let means: Vec<f64> = (0..batches)
        .map(|b| data[b * per_batch..(b + 1) * per_batch].iter().sum::<f64>() / per_batch as f64)
        .collect();
    let mean = means.iter().sum::<f64>() / batches as f64;
    let var = means.iter().map(|m| (m - mean).powi(2)).sum::<f64>() / (batches - 1) as f64;
    (mean, 3.558 * (var / batches as f64).sqrt(), data.len())
}

/// A dumbbell with TCP flows l_i -> r_i; `extra` is appended (traffic, overrides of links).
pub fn dumbbell_tcp(
    pairs: u32,
    bottleneck: &str,
    delay: &str,
    buffer: &str,
    size: &str,
    extra: &str,
) -> String {
    let flows: Vec<String> = (0..pairs)
        .map(|i| format!("{{ src = \"l{i}\", dst = \"r{i}\", size = \"{size}\" }}"))
        .collect();
    format!(
        r#"
[topology]
kind = "dumbbell"
left = {pairs}
right = {pairs}
[topology.links]
rate = "10Gbps"
delay = "{delay}"
buffer = "{buffer}"
[topology.fabric_links]
rate = "{bottleneck}"

[transport]
kind = "tcp_newreno"
rto_min = "10ms"
rto_initial = "10ms"

[[traffic]]
kind = "flows"
flows = [{flows}]
{extra}
"#,
        flows = flows.join(", ")
    )
}

/// Runs `s` with packet_hops and queue_samples in memory.
pub fn traced(
    s: &mut netstep_scenario::Scenario,
) -> (
    netstep_core::engine::RunOutput,
    netstep_core::engine::trace::MemoryTrace,
) {
    use netstep_core::engine::EngineConfig;
    use netstep_core::engine::trace::{HopFilter, MemoryTrace};
    use netstep_core::engine::window::WindowEngine;
    use netstep_core::units::SimTime;
    s.model.trace.packet_hops = Some(HopFilter::all());
    s.model.trace.queue_samples = Some(SimTime::from_us(100));
    s.model.trace.cc_samples = Some(SimTime::from_us(100));
    let mut trace = MemoryTrace::default();
    let config = EngineConfig {
        threads: 1,
        window: WindowMode::Exact,
        end: s.meta.duration,
    };
    let out = WindowEngine::new(&s.model, config)
        .unwrap()
        .run_traced(|_| {}, &mut trace)
        .expect("run");
    (out, trace)
}

/// The error that loading the repository scenario file `relative` with `overrides` gives;
/// panics if it loads.
pub fn load_error(relative: &str, overrides: &[&str]) -> String {
    let owned: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
    netstep_scenario::load(
        &repo().join(relative),
        &owned,
        &netstep_scenario::Limits::machine(),
    )
    .err()
    .unwrap_or_else(|| panic!("{relative} with {overrides:?} was accepted"))
    .to_string()
}

/// The error that loading the scenario `text` (no base folder) gives; panics if it loads.
pub fn text_error(text: &str) -> String {
    netstep_scenario::load_str(
        text,
        "test.toml",
        "test",
        None,
        &[],
        &netstep_scenario::Limits::machine(),
    )
    .err()
    .unwrap_or_else(|| panic!("accepted:\n{text}"))
    .to_string()
}

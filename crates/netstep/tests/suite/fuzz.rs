//! A proptest-driven fuzz harness over scenario text and `--set` values: starting from small
//! valid scenarios (every topology, traffic and transport kind), it applies random overrides
//! drawn from extreme and malformed values and random text mutations, then runs the real
//! binary under a 4 GB address-space limit and a time limit. Every input must end in exit 0
//! (accepted) or 2 (refused, with an `error:` line): never a panic (101), an abort (134, a
//! failed allocation), a signal, or a hang. An accepted scenario is also run for 1 ms of
//! simulated time; half of those runs get SIGINT or SIGTERM 0-15 ms after they start, and may
//! then also end with 130 or 143 and one line saying nothing was written (or, when the signal
//! comes before netstep has installed its handler, die of it before writing anything). After
//! every run no staging folder (`.out.partial-PID`) may be left.
//!
//! CI runs `NETSTEP_FUZZ_CASES` inputs (default 200, deterministic). For a long campaign:
//! `NETSTEP_FUZZ_SECONDS=600 cargo test --release -p netstep --test suite fuzz -- --nocapture`
//! (prints the number of inputs tried; the README's testing section records the last one).

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};

/// Valid starting points, one per topology and traffic kind.
const BASES: [&str; 5] = [
    r#"[topology]
kind = "fat_tree"
k = 4
[topology.links]
rate = "10Gbps"
delay = "1us"
buffer = "100KB"
[[traffic]]
kind = "random_pairs"
count = 4
size = "10KB"
"#,
    r#"[topology]
kind = "leaf_spine"
leaves = 2
spines = 2
hosts_per_leaf = 2
[transport]
kind = "open_loop"
rate = "1Gbps"
[[traffic]]
kind = "flows"
flows = [{ src = "h0", dst = "h3", packets = 10 }]
"#,
    r#"[topology]
kind = "dumbbell"
left = 2
right = 2
[topology.fabric_links]
rate = "1Gbps"
loss = 0.01
[transport]
kind = "tcp"
sack = true
[[traffic]]
kind = "flows"
flows = [{ src = "l0", dst = "r0", size = "50KB" }, { src = "l1", dst = "r1", size = "50KB", start = "10us" }]
"#,
    r#"[topology]
kind = "fat_tree"
k = 4
[[traffic]]
kind = "poisson"
load = 0.3
cdf = "websearch.toml"
duration = "50us"
[trace]
tables = ["packet_hops", "queue_samples"]
sample_interval = "10us"
"#,
    r#"[topology]
kind = "custom"
hosts = ["a", "b"]
switches = ["s"]
links = [{ a = "a", b = "s", rate = "1Gbps" }, { a = "b", b = "s" }]
[[traffic]]
kind = "flows"
flows = [{ src = "a", dst = "b", size = "5KB", path = ["a", "s", "b"] }]
"#,
];

/// Keys the overrides target (array indices included).
const KEYS: [&str; 67] = [
    "topology.links.scheduler",
    "topology.fabric_links.aqm",
    "switch.shared_buffer",
    "switch.alpha",
    "switch.pfc",
    "routing.mode",
    "transport.cc",
    "transport.dctcp_g",
    "topology.links.0.a_to_b",
    "topology.links.1.b_to_a",
    "routing.flowlet_gap",
    "routing.weighted",
    "traffic.0.class",
    "traffic.0.transport.ecn",
    "topology.k",
    "topology.hosts_per_edge",
    "topology.leaves",
    "topology.spines",
    "topology.hosts_per_leaf",
    "topology.left",
    "topology.right",
    "topology.kind",
    "failures",
    "topology.fabric_links.shaper",
    "topology.links.policer",
    "nic.shaper",
    "failures.0.link",
    "failures.0.down",
    "failures.0.up",
    "topology.dims",
    "topology.hosts_per_switch",
    "topology.links.rate",
    "topology.links.delay",
    "topology.links.buffer",
    "topology.links.loss",
    "topology.fabric_links.rate",
    "topology.host_links.buffer",
    "topology.hosts",
    "topology.links",
    "traffic.0.count",
    "traffic.0.size",
    "traffic.0.packets",
    "traffic.0.start",
    "traffic.0.load",
    "traffic.0.duration",
    "traffic.0.max_flows",
    "traffic.0.cdf",
    "traffic.0.kind",
    "traffic.0.flows",
    "traffic.0.flows.0.size",
    "traffic.0.flows.0.packets",
    "traffic.0.flows.0.start",
    "traffic.0.flows.0.path",
    "simulation.seed",
    "simulation.threads",
    "simulation.window",
    "simulation.duration",
    "transport.kind",
    "transport.mss",
    "transport.initial_cwnd",
    "transport.rto_min",
    "transport.delayed_ack",
    "transport.interval",
    "nic.buffer",
    "nic.per_flow",
    "trace.sample_one_in",
    "trace.nodes",
];

/// Values: extremes, zeros, wrong types, malformed units, deep nesting.
const VALUES: [&str; 64] = [
    "{ classes = [0], xoff = \"1B\", xon = \"0B\", headroom = \"0B\" }",
    "\"dctcp\"",
    "\"cubic\"",
    "\"dec\"",
    "\"bbr\"",
    "{ kind = \"rdma\", mtu = \"1B\", min_rate = \"1bps\" }",
    "{ rate = \"1bps\", delay = \"0s\", buffer = \"0B\" }",
    "{ kind = \"decbit\" }",
    "{ rate = \"1bps\", burst = \"1B\" }",
    "{ kind = \"trtcm\", cir = \"1bps\", cbs = \"1B\", pir = \"1Tbps\", pbs = \"1B\" }",
    "[\"h0\", \"h0\"]",
    "[{ link = [\"h0\", \"edge0_0\"], down = \"0s\" }]",
    "\"torus\"",
    "[3, 2]",
    "[4294967295, 2, 2]",
    "\"spray_random\"",
    "\"flowlet\"",
    "\"adaptive\"",
    "{ kind = \"drr\", weights = [1, 2, 3], quantum = \"1B\" }",
    "{ kind = \"wfq\", weights = [65535, 1] }",
    "{ kind = \"fair_queueing\" }",
    "{ kind = \"red\", min = \"1B\", max = \"2B\", max_p = 1.0, weight = 1.0, ecn = true }",
    "{ kind = \"step\", k = \"0B\" }",
    "{ kind = \"strict_priority\", weights = [1] }",
    "0",
    "1",
    "-1",
    "2",
    "7",
    "256",
    "65535",
    "1000000",
    "4294967295",
    "4294967296",
    "18446744073709551615",
    "1e308",
    "nan",
    "inf",
    "-0.5",
    "0.5",
    "true",
    "[]",
    "{}",
    "[[]]",
    "\"\"",
    "\"0s\"",
    "\"1ps\"",
    "\"1000000s\"",
    "\"18446744073709551615ps\"",
    "\"1Tbps\"",
    "\"0bps\"",
    "\"1bps\"",
    "\"1B\"",
    "\"1TB\"",
    "\"100GB\"",
    "\"4294967295pkts\"",
    "\"abc\"",
    "\"1us\"",
    "\"10Gbps\"",
    "\"h0\"",
    "[\"h0\", \"h0\"]",
    "\"tcp\"",
    "\"open_loop\"",
    "\"poisson\"",
];

/// One fuzz input.
#[derive(Clone, Debug)]
struct Input {
    base: usize,
    overrides: Vec<String>,
    /// Text edits: (byte position fraction, kind, payload index).
    edits: Vec<(f64, u8, usize)>,
    /// Send SIGINT or SIGTERM (odd / even) to the run this many ms after it starts (`None`:
    /// let it finish).
    interrupt: Option<u16>,
}

fn input() -> impl Strategy<Value = Input> {
    let overrides = prop::collection::vec(
        (0..KEYS.len(), 0..VALUES.len(), 0..4usize).prop_map(|(k, v, deep)| {
            let value = if deep == 0 && v % 7 == 0 {
                // A deeply nested value: the TOML parser must refuse it, not overflow.
                format!("{}{}", "[".repeat(5000), "]".repeat(5000))
            } else {
                VALUES[v].to_string()
            };
            format!("{}={value}", KEYS[k])
        }),
        0..4,
    );
    let edits = prop::collection::vec((0.0..1.0f64, 0u8..4, 0..VALUES.len()), 0..3);
    let interrupt = prop::option::weighted(0.5, 0u16..15);
    (0..BASES.len(), overrides, edits, interrupt).prop_map(|(base, overrides, edits, interrupt)| {
        Input {
            base,
            overrides,
            edits,
            interrupt,
        }
    })
}

/// Applies the text edits: delete a byte range, duplicate a line, insert a value, truncate.
fn mutate(text: &str, edits: &[(f64, u8, usize)]) -> String {
    let mut text = text.to_string();
    for &(at, kind, payload) in edits {
        let mut pos = ((text.len() as f64) * at) as usize;
        while !text.is_char_boundary(pos) {
            pos -= 1;
        }
        match kind {
            0 => {
                let mut end = (pos + 5).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.replace_range(pos..end, "");
            }
            1 => {
                let line_start = text[..pos].rfind('\n').map_or(0, |i| i + 1);
                let line_end = text[pos..].find('\n').map_or(text.len(), |i| pos + i);
                let line = text[line_start..line_end].to_string();
                text.insert_str(line_end, &format!("\n{line}"));
            }
            2 => text.insert_str(pos, VALUES[payload]),
            _ => text.truncate(pos),
        }
    }
    text
}

/// Runs the binary under the address-space and time limits; returns (exit code, stderr).
/// A signal or a timeout is reported as an error.
fn netstep(args: &[String], timeout: Duration) -> Result<(i32, String), String> {
    netstep_interrupted(args, timeout, None)
}

/// The exit "code" of a run our signal ended before its handler was installed.
const EARLY: i32 = -1;

/// [`netstep`], sending `signal` (`"INT"` or `"TERM"`) after the delay when given.
fn netstep_interrupted(
    args: &[String],
    timeout: Duration,
    interrupt: Option<(Duration, &str)>,
) -> Result<(i32, String), String> {
    let mut script = String::from("ulimit -v 4000000; exec \"$0\"");
    for i in 0..args.len() {
        script.push_str(&format!(" \"${{{}}}\"", i + 1));
    }
    let mut child = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_netstep"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut pending = interrupt;
    loop {
        if let Some((after, signal)) = pending
            && started.elapsed() >= after
        {
            // `exec` made the child netstep itself.
            Command::new("kill")
                .args([format!("-{signal}"), child.id().to_string()])
                .status()
                .ok();
            pending = None;
        }
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            let mut stderr = String::new();
            use std::io::Read;
            child
                .stderr
                .take()
                .expect("piped")
                .read_to_string(&mut stderr)
                .ok();
            use std::os::unix::process::ExitStatusExt;
            let sent = interrupt.is_some() && pending.is_none();
            return match status.code() {
                Some(code) => Ok((code, stderr)),
                // Our signal arrived before netstep installed its handler (the first
                // milliseconds of the process): the default action, before anything was written.
                None if sent && matches!(status.signal(), Some(2 | 15)) => Ok((EARLY, stderr)),
                None => Err(format!("killed by a signal: {status:?}; stderr: {stderr}")),
            };
        }
        if started.elapsed() > timeout {
            child.kill().ok();
            child.wait().ok();
            return Err(format!("no exit within {timeout:?} (a hang)"));
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Exit 0, or exit 2 with an `error:` line; anything else fails the case.
fn check(what: &str, outcome: Result<(i32, String), String>) -> Result<bool, TestCaseError> {
    match outcome {
        Ok((0, _)) => Ok(true),
        Ok((2, stderr))
            if stderr.starts_with("error: ")
                && !stderr.contains("panicked")
                && !stderr.contains("unexpected argument") =>
        {
            Ok(false)
        }
        Ok((code, stderr)) => Err(TestCaseError::fail(format!(
            "{what}: exit {code}: {stderr}"
        ))),
        Err(e) => Err(TestCaseError::fail(format!("{what}: {e}"))),
    }
}

/// Inputs that validated and ran (the rest were refused with exit 2).
static ACCEPTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn one(input: &Input, dir: &std::path::Path) -> Result<(), TestCaseError> {
    let text = mutate(BASES[input.base], &input.edits);
    let file = dir.join("fuzz.toml");
    std::fs::write(&file, &text).expect("write the scenario");
    let mut args = vec![
        "validate".to_string(),
        file.display().to_string(),
        "--max-memory".into(),
        "2GB".into(),
    ];
    for o in &input.overrides {
        args.push("--set".into());
        args.push(o.clone());
    }
    let accepted = check("validate", netstep(&args, Duration::from_secs(60)))?;
    if accepted {
        // Run it for 1 ms of simulated time (the cap is applied after the fuzzed overrides).
        args[0] = "run".into();
        args.extend(
            [
                "--set",
                "simulation.duration=\"1ms\"",
                "--set",
                "simulation.window=\"exact\"",
                "--quiet",
                "--out",
            ]
            .map(String::from),
        );
        args.push(dir.join("out").display().to_string());
        let signal = input.interrupt.map(|ms| {
            (
                Duration::from_millis(ms as u64),
                if ms % 2 == 1 { "INT" } else { "TERM" },
            )
        });
        let outcome = netstep_interrupted(&args, Duration::from_secs(120), signal);
        let stopped = match &outcome {
            Ok((EARLY, _)) => true,
            // Stopped by the signal: 130 / 143 and one line saying nothing was written.
            Ok((code @ (130 | 143), stderr)) if signal.is_some() => {
                if stderr.lines().count() != 1 || !stderr.contains("nothing was written") {
                    return Err(TestCaseError::fail(format!("run: exit {code}: {stderr}")));
                }
                true
            }
            _ => false,
        };
        if !stopped && check("run", outcome)? {
            ACCEPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        if stopped {
            INTERRUPTED.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        // Whatever happened, no staging folder is left beside the output.
        let left: Vec<String> = std::fs::read_dir(dir)
            .expect("read the fuzz folder")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains(".partial-"))
            .collect();
        if !left.is_empty() {
            return Err(TestCaseError::fail(format!(
                "staging folders left: {left:?}"
            )));
        }
    }
    Ok(())
}

/// Runs stopped by SIGINT or SIGTERM (exit 130 or 143).
static INTERRUPTED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

#[test]
fn fuzzed_scenarios_exit_0_or_2_without_panic_abort_or_hang() {
    let cases: u32 = std::env::var("NETSTEP_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let seconds: Option<u64> = std::env::var("NETSTEP_FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok());
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        crate::common::repo().join("datasets/websearch.toml"),
        dir.path().join("websearch.toml"),
    )
    .unwrap();
    let config = Config {
        cases: if seconds.is_some() { 16 } else { cases },
        failure_persistence: None,
        ..Config::default()
    };
    // One runner per batch (a runner runs its `cases` once), each with a fresh deterministic
    // stream split off the first.
    let mut seeds = TestRunner::new_with_rng(
        config.clone(),
        TestRng::deterministic_rng(RngAlgorithm::ChaCha),
    );
    let started = Instant::now();
    let tried = std::sync::atomic::AtomicU64::new(0);
    loop {
        let mut runner = TestRunner::new_with_rng(config.clone(), seeds.new_rng());
        let result = runner.run(&input(), |input| {
            tried.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            one(&input, dir.path())
        });
        if let Err(e) = result {
            panic!("{e}");
        }
        match seconds {
            Some(s) if started.elapsed() < Duration::from_secs(s) => continue,
            _ => break,
        }
    }
    let accepted = ACCEPTED.load(std::sync::atomic::Ordering::Relaxed);
    let interrupted = INTERRUPTED.load(std::sync::atomic::Ordering::Relaxed);
    println!(
        "fuzz: {} inputs in {:.0} s, every one exit 0 or 2 ({accepted} accepted and run to the end, {interrupted} stopped by SIGINT or SIGTERM with exit 130 or 143), no staging folder left",
        tried.into_inner(),
        started.elapsed().as_secs_f64()
    );
    // The mutations must leave some inputs valid, or the runs are never exercised.
    assert!(accepted > 0, "no fuzzed input was accepted");
}

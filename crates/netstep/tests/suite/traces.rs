//! Packet-hop and queue-sample traces: deterministic, filtered as asked, consistent with the
//! run's counters, and usable for queueing theory.

use netstep_core::engine::WindowMode;
use netstep_core::engine::trace::{HopFilter, MemoryTrace, packet_hash};
use netstep_core::engine::window::WindowEngine;
use netstep_core::engine::{EngineConfig, RunOutput};
use netstep_core::units::SimTime;
use netstep_scenario::Scenario;

use crate::common::*;

fn traced(s: &Scenario, threads: usize, window: WindowMode) -> (RunOutput, MemoryTrace) {
    let mut trace = MemoryTrace::default();
    let config = EngineConfig {
        threads,
        window,
        end: s.meta.duration,
    };
    let out = WindowEngine::new(&s.model, config)
        .unwrap()
        .run_traced(|_| {}, &mut trace)
        .expect("run");
    (out, trace)
}

fn quickstart_traced() -> Scenario {
    let mut s = scenario_file("scenarios/quickstart.toml", &["traffic.0.duration=\"2ms\""]);
    s.model.trace.packet_hops = Some(HopFilter::all());
    s.model.trace.queue_samples = Some(SimTime::from_us(20));
    // Another interval, so windows are cut at both sets of sample times.
    s.model.trace.cc_samples = Some(SimTime::from_us(13));
    s
}

#[test]
fn traces_are_identical_for_any_thread_count() {
    let s = quickstart_traced();
    let (one, t1) = traced(&s, 1, WindowMode::Exact);
    for threads in [2, 4] {
        let (many, tn) = traced(&s, threads, WindowMode::Exact);
        assert_same_simulation(&one, &many, "traced");
        assert!(
            t1.hops == tn.hops,
            "hop records differ for {threads} threads"
        );
        assert!(
            t1.samples == tn.samples,
            "queue samples differ for {threads} threads"
        );
        assert!(t1.cc == tn.cc, "cc samples differ for {threads} threads");
    }
    assert!(!t1.cc.is_empty());
}

#[test]
fn cc_samples_follow_each_running_tcp_flow() {
    let s = quickstart_traced();
    let (out, trace) = traced(&s, 2, WindowMode::Exact);
    let interval = 13_000_000u64;
    let mut last: std::collections::HashMap<u32, (u64, u32)> = Default::default();
    for c in &trace.cc {
        assert_eq!(c.time_ps % interval, 0, "sampled on the interval");
        let flow = &out.flows.get(c.flow as usize);
        let started = s.model.flows.flows[c.flow as usize].start;
        assert!(
            started.0 <= c.time_ps,
            "flow {} sampled before its start",
            c.flow
        );
        if let Some(end) = flow.end
            && c.time_ps > end.0
        {
            // The receiver has everything; the sender still waits for the last ACKs.
            assert!(c.inflight > 0, "flow {} sampled after its last ACK", c.flow);
        }
        assert!(c.cwnd >= 1.0 && c.alpha.is_none());
        if let Some((t, acked)) = last.insert(c.flow, (c.time_ps, c.acked)) {
            assert!(t < c.time_ps && acked <= c.acked, "acked never goes back");
        }
    }
    // Every flow that ran across a sample time appears at it.
    let sampled: std::collections::HashSet<u32> = trace.cc.iter().map(|c| c.flow).collect();
    for (i, flow) in out.flows.iter().enumerate() {
        let start = s.model.flows.flows[i].start.0;
        if start.div_ceil(interval) * interval < flow.end.map_or(u64::MAX, |e| e.0) {
            assert!(
                sampled.contains(&(i as u32)),
                "flow {i} ran across a sample time"
            );
        }
    }
}

#[test]
fn the_flow_filter_limits_cc_samples() {
    let s = scenario_file(
        "scenarios/quickstart.toml",
        &[
            "traffic.0.duration=\"2ms\"",
            "trace.tables=[\"cc_samples\"]",
            "trace.flows=[0, 2]",
            "trace.sample_interval=\"5us\"",
        ],
    );
    assert_eq!(s.model.trace.cc_samples, Some(SimTime::from_us(5)));
    let (_, trace) = traced(&s, 1, WindowMode::Exact);
    let flows: std::collections::BTreeSet<u32> = trace.cc.iter().map(|c| c.flow).collect();
    assert_eq!(flows, [0, 2].into_iter().collect());
}

#[test]
fn tracing_does_not_change_the_simulation() {
    let mut s = quickstart_traced();
    let (traced_out, _) = traced(&s, 2, WindowMode::Exact);
    s.model.trace = Default::default();
    let plain = run_window(&s, 2, WindowMode::Exact);
    assert_same_simulation(&plain, &traced_out, "traced vs untraced");
    // Quantized windows are aligned, so cutting them at sample times changes nothing either.
    let q = WindowMode::Quantized(SimTime::from_us(7));
    let plain_q = run_window(&s, 1, q);
    let s = quickstart_traced();
    let (traced_q, _) = traced(&s, 1, q);
    assert_same_simulation(&plain_q, &traced_q, "quantized traced vs untraced");
}

#[test]
fn hop_records_agree_with_the_counters() {
    let s = quickstart_traced();
    let (out, trace) = traced(&s, 1, WindowMode::Exact);
    let transmitted = trace.hops.iter().filter(|h| h.dequeue_ps.is_some()).count() as u64;
    assert_eq!(
        transmitted, out.stats.packet_hops,
        "one transmitted record per packet-hop"
    );
    let dropped = trace.hops.iter().filter(|h| h.drop.is_some()).count() as u64;
    assert_eq!(dropped, out.stats.drops);
    for h in &trace.hops {
        if let (Some(dq), Some(dp)) = (h.dequeue_ps, h.depart_ps) {
            assert!(h.arrive_ps <= dq && dq < dp, "{h:?}");
        }
    }
    // Records come in window order, sorted inside each window; times never run backwards by
    // more than one window.
    let window = out.stats.window.0;
    for pair in trace.hops.windows(2) {
        assert!(
            pair[1].order_key().0 + window >= pair[0].order_key().0,
            "{pair:?}"
        );
    }
    // Queue samples: cumulative counters never decrease per port.
    let mut last = std::collections::HashMap::new();
    for row in &trace.samples {
        if let Some((t, tx)) = last.insert(row.port, (row.time_ps, row.tx_bytes)) {
            assert!(row.time_ps > t && row.tx_bytes >= tx, "{row:?}");
        }
    }
    let final_tx: u64 = out.ports.iter().map(|p| p.tx_bytes).sum();
    let max_sampled: u64 = last.values().map(|v| v.1).sum();
    assert_eq!(
        max_sampled, final_tx,
        "the last sample holds the final counters"
    );
}

#[test]
fn one_in_n_sampling_is_deterministic_and_exact() {
    let full = quickstart_traced();
    let (_, all) = traced(&full, 1, WindowMode::Exact);
    let mut sampled = quickstart_traced();
    sampled.model.trace.packet_hops = Some(HopFilter {
        one_in: 7,
        ..HopFilter::all()
    });
    let (_, some) = traced(&sampled, 2, WindowMode::Exact);
    let expected: Vec<_> = all
        .hops
        .iter()
        .filter(|h| packet_hash(h.packet_id).is_multiple_of(7))
        .copied()
        .collect();
    assert!(!expected.is_empty());
    assert!(
        some.hops == expected,
        "1-in-7 sampling keeps exactly the packets whose hash says so"
    );
    let fraction = some.hops.len() as f64 / all.hops.len() as f64;
    assert!((0.10..0.19).contains(&fraction), "{fraction}");
}

#[test]
fn flow_node_and_time_filters_select_hops() {
    let s = quickstart_traced();
    let (_, all) = traced(&s, 1, WindowMode::Exact);
    // Pick a busy flow, two nodes it crosses and a time span around its middle from the full trace.
    let flow = all.hops[all.hops.len() / 2].flow;
    let mine: Vec<_> = all.hops.iter().filter(|h| h.flow == flow).collect();
    let mut visited: Vec<u32> = mine.iter().map(|h| h.node).collect();
    visited.sort_unstable();
    visited.dedup();
    let (node_a, node_b) = (visited[0], visited[visited.len() - 1]);
    let middle = mine[mine.len() / 2].arrive_ps;
    let (from, until) = (
        SimTime(middle.saturating_sub(50_000_000)),
        SimTime(middle + 50_000_000),
    );
    let mut f = quickstart_traced();
    let mut flows = vec![false; f.model.flows.len()];
    flows[flow as usize] = true;
    let mut nodes = vec![false; f.model.net.n_nodes()];
    nodes[node_a as usize] = true;
    nodes[node_b as usize] = true;
    f.model.trace.packet_hops = Some(HopFilter {
        flows: Some(flows),
        nodes: Some(nodes),
        from,
        until,
        one_in: 1,
    });
    let (_, some) = traced(&f, 1, WindowMode::Exact);
    let expected: Vec<_> = all
        .hops
        .iter()
        .filter(|h| {
            h.flow == flow
                && (h.node == node_a || h.node == node_b)
                && h.arrive_ps >= from.0
                && h.arrive_ps < until.0
        })
        .copied()
        .collect();
    assert!(!expected.is_empty(), "the filter should select something");
    assert!(some.hops == expected);
}

#[test]
fn mm1_sojourn_from_packet_hops_matches_theory() {
    let mut s = scenario_file("scenarios/queueing/mm1-rho08.toml", &[]);
    s.model.trace.packet_hops = Some(HopFilter::all());
    let (_, trace) = traced(&s, 1, WindowMode::Exact);
    let switch = s.model.net.n_nodes() as u32 - 1;
    let mut at_switch: Vec<_> = trace.hops.iter().filter(|h| h.node == switch).collect();
    at_switch.sort_by_key(|h| h.packet_id);
    let sojourn: Vec<f64> = at_switch
        .iter()
        .map(|h| (h.depart_ps.unwrap() - h.arrive_ps) as f64 / 1e6)
        .collect();
    assert_eq!(sojourn.len(), 200_000);
    let (mean, half_width, _) = batch_means_ci(&sojourn);
    let theory = 8.0 / (1.0 - 0.8);
    assert!(
        (mean - theory).abs() <= half_width,
        "mean sojourn {mean:.3} us vs theory {theory} us (+-{half_width:.3})"
    );
}

/// Runs `s` on one thread with exactly the trace tables its model asks for.
fn run_as_configured(s: &netstep_scenario::Scenario) -> netstep_core::engine::trace::MemoryTrace {
    let mut trace = netstep_core::engine::trace::MemoryTrace::default();
    let config = netstep_core::engine::EngineConfig {
        threads: 1,
        window: WindowMode::Exact,
        end: s.meta.duration,
    };
    netstep_core::engine::window::WindowEngine::new(&s.model, config)
        .unwrap()
        .run_traced(|_| {}, &mut trace)
        .unwrap();
    trace
}

/// The `packet_hops` row estimate that `validate` prints and the limits check (every data
/// packet over its route, every ACK back, after filters and sampling) is within 10 % of the
/// rows a run writes: exact for open-loop traffic without loss, and close for TCP, whose
/// retransmissions add rows, with drops (incast) or without many (the quickstart).
#[test]
fn the_packet_hop_estimate_is_within_ten_percent_of_the_rows_written() {
    for (file, overrides) in [
        (
            "scenarios/days-baseline/fattree-k4-f64.toml",
            &["traffic.0.packets=200"][..],
        ),
        (
            "scenarios/quickstart.toml",
            &["traffic.0.duration=\"5ms\""][..],
        ),
        ("scenarios/workloads/incast.toml", &[][..]),
    ] {
        let mut with_table = overrides.to_vec();
        with_table.push("trace.tables=[\"packet_hops\"]");
        let mut s = scenario_file(file, &with_table);
        let estimate = s.meta.footprint.packet_hop_rows as f64;
        s.model.trace.packet_hops = Some(netstep_core::engine::trace::HopFilter::all());
        let trace = run_as_configured(&s);
        let written = trace.hops.len() as f64;
        assert!(
            (estimate - written).abs() <= 0.1 * written,
            "{file}: estimate {estimate}, written {written}"
        );
    }
}

/// The `cc_samples` row estimate (each kept TCP or RDMA flow sampled over its ideal FCT plus
/// the way back of its last ACK) is a lower bound on the rows a run writes, and within 10 % of them
/// where flows run alone at line rate (RDMA, no congestion); congestion only adds rows.
#[test]
fn the_cc_sample_estimate_bounds_the_rows_written_from_below() {
    let lone_rdma = "[topology]\nkind = \"fat_tree\"\nk = 4\n[topology.links]\nrate = \"10Gbps\"\n\
        [transport]\nkind = \"rdma\"\ncc = \"dcqcn\"\n[[traffic]]\nkind = \"flows\"\nflows = [\
        { src = \"h0\", dst = \"h5\", size = \"2MB\" }, { src = \"h1\", dst = \"h9\", size = \"3MB\", start = \"10us\" }]\n\
        [trace]\ntables = [\"cc_samples\"]\nsample_interval = \"1us\"\n";
    let cases: Vec<(String, netstep_scenario::Scenario)> = vec![
        ("lone RDMA flows".into(), scenario(lone_rdma, &[])),
        (
            "quickstart".into(),
            scenario_file(
                "scenarios/quickstart.toml",
                &[
                    "traffic.0.duration=\"5ms\"",
                    "trace.tables=[\"cc_samples\"]",
                    "trace.sample_interval=\"10us\"",
                ],
            ),
        ),
        (
            "incast".into(),
            scenario_file(
                "scenarios/workloads/incast.toml",
                &[
                    "trace.tables=[\"cc_samples\"]",
                    "trace.sample_interval=\"5us\"",
                ],
            ),
        ),
    ];
    for (what, s) in cases {
        let estimate = s.meta.footprint.cc_sample_rows as f64;
        let trace = run_as_configured(&s);
        let written = trace.cc.len() as f64;
        assert!(
            estimate > 0.0 && estimate <= written,
            "{what}: estimate {estimate}, written {written}"
        );
        if what == "lone RDMA flows" {
            assert!(
                written - estimate <= 0.1 * written,
                "{what}: estimate {estimate}, written {written}"
            );
        }
    }
}

/// A run whose trace tables alone are expected past `--max-disk` is refused before it runs:
/// exit 2, one line naming the table and the settings that shrink it, nothing written.
#[test]
fn a_run_expected_past_its_disk_budget_is_refused_before_it_starts() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args([
            "run",
            "--trace",
            "packet_hops",
            "--max-disk",
            "1MB",
            "--out",
        ])
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("mostly packet_hops") && stderr.contains("trace.sample_one_in"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
    // With a duration the packet_hops estimate is only an upper bound: no refusal before the
    // run (the guard watches the rows written).
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args([
            "run",
            "--trace",
            "packet_hops",
            "--max-disk",
            "1MB",
            "--quiet",
        ])
        .args(["--set", "simulation.duration=\"100us\"", "--out"])
        .arg(dir.path().join("short"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! AICB training jobs (`kind = "aicb"`): closed forms of a lone ring all-reduce and of a
//! weight-gradient collective hidden behind compute, the shipped example, exactness on 1 and
//! 4 threads, and bad input.

use netstep_core::engine::{RankOutcome, RunOutput};
use netstep_core::units::{Bytes, SimTime};

use crate::common::{exact_on_1_and_4_threads, repo, scenario, scenario_file, text_error};

/// Writes a workload file into a fresh temporary folder (removed when the returned guard
/// drops); returns the guard and the file's path.
fn workload(name: &str, text: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::Builder::new()
        .prefix(&format!("netstep-aicb-{name}-"))
        .tempdir()
        .unwrap();
    let path = dir.path().join("w.txt");
    std::fs::write(&path, text).unwrap();
    let path = path.display().to_string();
    (dir, path)
}

/// One server of 8 GPUs, every link 400 Gb/s and 500 ns, RDMA, the job from `file`.
fn one_server(file: &str, extra: &str) -> String {
    format!(
        r#"
[topology]
kind = "rail_optimized"
servers = 1
gpus = 8
spines = 1
links = {{ rate = "400Gbps", delay = "500ns" }}
[transport]
kind = "rdma"
[[traffic]]
kind = "aicb"
workload = "{file}"
{extra}
"#
    )
}

const RATE_BPS: f64 = 400e9;
const DELAY_NS: f64 = 500.0;
const LATENCY_NS: f64 = 6_000.0;

/// Closed form of one ring all-reduce of `bytes` over the 8 GPUs of one server (8 rings, each
/// rank sending `bytes / 8 / 8` to the next on every ring): 2(n-1) steps, each the send
/// latency, the 8 chunks through the GPU's link, the last packet's 3 more store-and-forward
/// hops and 4 link delays; then the last ACK's 4 hops back. In ns.
fn ring_closed_form(s: &netstep_scenario::Scenario, bytes: u64) -> f64 {
    let n = 8.0;
    let chunk = bytes / 8 / 8;
    let spec = &s.model.flows.flows[0].transport;
    let wire: u64 = spec.packet_sizes(Bytes(chunk)).iter().map(|b| b.0).sum();
    let packet = spec.max_packet(Bytes(chunk)).0 as f64;
    let ack = spec.feedback_packet(Bytes(chunk)).0 as f64;
    let ns = |b: f64| b * 8.0 / RATE_BPS * 1e9;
    let step = LATENCY_NS + ns(8.0 * wire as f64) + 3.0 * ns(packet) + 4.0 * DELAY_NS;
    2.0 * (n - 1.0) * step + 4.0 * (ns(ack) + DELAY_NS)
}

fn rank0(out: &RunOutput) -> &RankOutcome {
    &out.job.as_ref().expect("a job")[0]
}

fn span(out: &RunOutput, op: usize) -> f64 {
    let t = rank0(out).ops[op];
    (t.done.unwrap().0 - t.issued.unwrap().0) as f64 / 1e3
}

#[test]
fn a_lone_ring_all_reduce_takes_its_closed_form_time() {
    // MICRO: the row's weight-gradient collective over DP = all 8 GPUs (TP defaults to 1).
    let (_dir, file) = workload(
        "ring",
        "MICRO\n1\nallreduce -1 0 NONE 0 0 NONE 0 0 ALLREDUCE 8388608 0\n",
    );
    let s = scenario(&one_server(&file, ""), &[]);
    let out = exact_on_1_and_4_threads(&s, "ring all-reduce");
    let expected = ring_closed_form(&s, 8_388_608);
    let got = span(&out, 0);
    assert!(
        (got / expected - 1.0).abs() < 0.05,
        "ring all-reduce took {got:.0} ns, closed form {expected:.0} ns"
    );
    // Every rank sent and received 2(n-1) x 8 rings flows of bytes/64.
    assert_eq!(s.model.flows.len(), 8 * 8 * 14);
    assert!(s.model.flows.flows.iter().all(|f| f.size == Bytes(131_072)));
    // The memory estimate counts every one of them as a job's flow.
    assert_eq!(s.meta.footprint.job_flows, 8 * 8 * 14);
}

#[test]
fn a_weight_gradient_collective_hides_behind_the_backward_compute() {
    // DATA: backward from the last row: row 1's weight gradient (compute, all-reduce, not
    // waited for), row 1's input-gradient compute (400 us, longer than the all-reduce), row
    // 0's weight gradient: its all-reduce is the exposed tail.
    let text = "DATA\n2\n\
                r0 -1 50000 NONE 0 7000 NONE 0 20000 ALLREDUCE 8388608 100\n\
                r1 -1 60000 NONE 0 400000 NONE 0 30000 ALLREDUCE 8388608 100\n";
    let (_dir, file) = workload("data", text);
    let s = scenario(&one_server(&file, ""), &[]);
    let out = exact_on_1_and_4_threads(&s, "DATA overlap");
    let ring = ring_closed_form(&s, 8_388_608);
    // Ops: fwd r0, fwd r1, wg r1, ig r1, wg r0, each followed by 1 ns.
    let r = rank0(&out);
    let wg1_finish = r.ops[2].done.unwrap() + SimTime::from_ns(100);
    assert!(
        wg1_finish < r.ops[4].issued.unwrap(),
        "row 1's all-reduce is hidden"
    );
    let compute_ns = 50_000.0 + 60_000.0 + 30_000.0 + 400_000.0 + 20_000.0;
    let by_hand = compute_ns + 5.0 + ring + 100.0;
    let iteration = r.finished.unwrap().0 as f64 / 1e3;
    assert!(
        (iteration / by_hand - 1.0).abs() < 0.05,
        "iteration {iteration:.0} ns, by hand {by_hand:.0} ns"
    );
}

#[test]
fn the_shipped_training_example_runs_as_its_comment_says() {
    let s = scenario_file("scenarios/workloads/aicb-training.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "aicb-training");
    let job = s.aicb.as_ref().expect("an aicb job");
    let ranks = out.job.as_ref().unwrap();
    assert_eq!(ranks.len(), 16);
    let compute_ns: u64 = job.schedule.info.iter().map(|i| i.compute_ns).sum();
    assert_eq!(compute_ns, 305_000, "the comment's compute per GPU");
    // Every collective's time back to back, from rank 0's own spans.
    let r = &ranks[0];
    let back_to_back: u64 = r
        .ops
        .iter()
        .zip(&job.job.ops)
        .filter_map(|(t, op)| Some((t.done? + op.update).0 - t.issued?.0))
        .sum();
    for rank in ranks {
        let end = rank.finished.expect("every GPU finishes").0;
        assert!(
            end > compute_ns * 1_000,
            "rank {} ends at {end} ps",
            rank.rank
        );
        assert!(end < compute_ns * 1_000 + back_to_back + 1_000_000);
    }
    assert!(out.flows.iter().all(|f| f.end.is_some()));
}

#[test]
fn a_training_run_writes_its_layer_table_and_simai_end_to_end_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("run");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netstep"))
        .arg("run")
        .arg(repo().join("scenarios/workloads/aicb-training.toml"))
        .arg("--out")
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("iteration"), "{stdout}");
    let csv = std::fs::read_to_string(dir.join("EndToEnd.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("File name, Expose DP comm"));
    assert!(lines[2].starts_with("layer_name,test1,fwd compute"));
    // 4 rows, SUM, the totals line.
    assert_eq!(lines.len(), 3 + 4 + 2);
    assert!(lines[3].starts_with("embedding_layer,test1,2.000000,1.000000,2.000000"));
    // Total time = total comp + total exposed comm.
    let last: Vec<f64> = lines[8]
        .split(',')
        .skip(1)
        .step_by(2)
        .map(|v| v.parse().unwrap())
        .collect();
    assert!((last[0] + last[1] - last[2]).abs() <= 1.0, "{}", lines[8]);
    assert!(dir.join("layers.parquet").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_training_jobs_are_refused_naming_file_line_and_field() {
    let header = "HYBRID_TRANSFORMER model_parallel_NPU_group: 8 ep: 1 pp: 1 vpp: 1 ga: 1";
    // The header's GPUs are not the job's ranks.
    let (_dir, file) = workload(
        "gpus",
        &format!("{header} all_gpus: 16\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
    );
    let e = text_error(&one_server(&file, ""));
    assert!(
        e.contains("traffic[0].ranks") && e.contains("all_gpus: 16"),
        "{e}"
    );
    // A ring chunk of 0 bytes (SimAI hangs on it): line 3, the ig size.
    let (_dir, file) = workload(
        "tiny",
        &format!("{header} all_gpus: 8\n1\nl -1 1 NONE 0 1 ALLREDUCE 8 1 NONE 0 1\n"),
    );
    let e = text_error(&one_server(&file, ""));
    assert!(
        e.contains(":3: ig_size") && e.contains("chunks of 0 bytes"),
        "{e}"
    );
    // A collective of 0 bytes.
    let (_dir, file) = workload(
        "zero",
        &format!("{header} all_gpus: 8\n1\nl -1 1 ALLGATHER 0 1 NONE 0 1 NONE 0 1\n"),
    );
    let e = text_error(&one_server(&file, ""));
    assert!(e.contains(":3: fwd_size") && e.contains("0 bytes"), "{e}");
    // Open loop has no acknowledgements to count sends by.
    let (_dir, file) = workload(
        "open",
        &format!("{header} all_gpus: 8\n1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
    );
    let text =
        one_server(&file, "").replace("kind = \"rdma\"", "kind = \"open_loop\"\nrate = \"1Gbps\"");
    let e = text_error(&text);
    assert!(
        e.contains("transport") && e.contains("acknowledgements"),
        "{e}"
    );
    // A second job.
    let text =
        one_server(&file, "") + &format!("[[traffic]]\nkind = \"aicb\"\nworkload = \"{file}\"\n");
    let e = text_error(&text);
    assert!(
        e.contains("traffic[1].kind") && e.contains("one AICB job"),
        "{e}"
    );
    // The workload's own errors carry its file and line (AICB's row-count mismatch).
    let (_dir, file) = workload(
        "count",
        &format!("{header} all_gpus: 8\n3\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 1\n"),
    );
    let e = text_error(&one_server(&file, ""));
    assert!(e.contains("w.txt") && e.contains("row count"), "{e}");
}

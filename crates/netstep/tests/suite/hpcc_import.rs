//! `netstep import hpcc` and `--format hpcc-m3` against the HPCC ns-3 simulator's own results
//! on two shards of m3's demo set (fixtures re-expressed in `tests/fixtures/hpcc-m3/`, with
//! their source), and the RDMA parameters the import needs: `max_rate`, `window`, DCTCP.

use arrow_array::cast::AsArray;
use std::path::{Path, PathBuf};

use netstep::hpcc::export::FctFormat;
use netstep::{RunRequest, hpcc};

use crate::common::{exact_on_1_and_4_threads, repo, scenario};

fn fixtures() -> PathBuf {
    repo().join("crates/netstep/tests/fixtures/hpcc-m3")
}

/// One fixture flow: id, src, dst, size, arrival (ns), ns-3's FCT and standalone FCT (ns).
struct Flow {
    src: u32,
    dst: u32,
    size: u64,
    arrival_ns: u64,
    ns3_fct: u64,
    ns3_standalone: u64,
}

fn flows(shard: &str) -> Vec<Flow> {
    let text = std::fs::read_to_string(fixtures().join(format!("{shard}.csv"))).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with("id,"))
        .enumerate()
        .map(|(i, l)| {
            let v: Vec<u64> = l.split(',').map(|x| x.parse().unwrap()).collect();
            assert_eq!(v[0], i as u64, "{shard}: rows by flow id");
            Flow {
                src: v[1] as u32,
                dst: v[2] as u32,
                size: v[3],
                arrival_ns: v[4],
                ns3_fct: v[5],
                ns3_standalone: v[6],
            }
        })
        .collect()
}

/// Writes the shard's simulator inputs into `dir` as m3 ran them (the config's paths are the
/// authors' machine paths, found by name beside the config); `edit` may change config lines.
fn write_inputs(shard: &str, dir: &Path, edit: &dyn Fn(&str, &str) -> String) -> PathBuf {
    let fixture: toml::Table =
        toml::from_str(&std::fs::read_to_string(fixtures().join("shards.toml")).unwrap()).unwrap();
    std::fs::write(
        dir.join("topo-pl-3.txt"),
        fixture["topology"].as_str().unwrap(),
    )
    .unwrap();
    std::fs::write(dir.join("trace-pl-3.txt"), "4\n0 1 2 3\n").unwrap();
    let config: String = fixture[shard]["config"]
        .as_array()
        .unwrap()
        .iter()
        .map(|kv| {
            let kv = kv.as_array().unwrap();
            let (k, v) = (kv[0].as_str().unwrap(), kv[1].as_str().unwrap());
            format!("{k} {}\n", edit(k, v))
        })
        .collect();
    let path = dir.join("config_topo-pl-3_flows_s0.txt");
    std::fs::write(&path, config).unwrap();
    // The flow file as m3 writes it: the count, then `id src dst pg dport size start_s`
    // with the start as the shortest decimal of ns / 1e9.
    let list = flows(shard);
    let mut text = format!("{}\n", list.len());
    for (i, f) in list.iter().enumerate() {
        text += &format!(
            "{i} {} {} 3 100 {} {}\n",
            f.src,
            f.dst,
            f.size,
            f.arrival_ns as f64 / 1e9
        );
    }
    std::fs::write(dir.join("flows.txt"), text).unwrap();
    path
}

/// netstep's `fct.txt` lines (the fork's form): id -> (fct, standalone).
fn read_fct(path: &Path) -> Vec<Option<(u64, u64)>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 9, "{line}");
        let id: usize = f[0].parse().unwrap();
        if out.len() <= id {
            out.resize(id + 1, None);
        }
        out[id] = Some((f[7].parse().unwrap(), f[8].parse().unwrap()));
    }
    out
}

/// Normalized W1 (`a` the reference): `netstep compare`'s W1 over mean a.
fn nw1(a: &[f64], b: &[f64]) -> f64 {
    netstep::compare::wasserstein1(a, b) / (a.iter().sum::<f64>() / a.len() as f64)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Imports the shard, runs it with `--format hpcc-m3`, and compares flow by flow with ns-3:
/// the standalone FCT must be ns-3's exactly (the import read the flows and the topology as
/// the simulator does), and the slowdowns must meet the targets (nW1 <= 0.05, the
/// median |log FCT ratio| <= 0.03), FCTs taken as ns-3 stores them: max(FCT, standalone).
fn matches_ns3(shard: &str) -> (f64, f64) {
    let dir = tempfile::tempdir().unwrap();
    let config = write_inputs(shard, dir.path(), &|_, v| v.to_string());
    let (scenario, imported) = hpcc::import_into(&config, &dir.path().join("imported")).unwrap();
    assert_eq!(imported.variant, hpcc::Variant::M3Fork);
    let request = RunRequest {
        scenario: Some(scenario),
        out: Some(dir.path().join("run")),
        format: Some(FctFormat::M3),
        ..RunRequest::default()
    };
    netstep::run(&request).unwrap_or_else(|e| panic!("{e}"));
    let mine = read_fct(&dir.path().join("run/fct.txt"));
    let list = flows(shard);
    let (mut ns3, mut ours, mut log) = (Vec::new(), Vec::new(), Vec::new());
    for (i, f) in list.iter().enumerate() {
        let (fct, standalone) = mine
            .get(i)
            .copied()
            .flatten()
            .unwrap_or_else(|| panic!("{shard}: flow {i} missing from fct.txt"));
        assert_eq!(
            standalone, f.ns3_standalone,
            "{shard}: flow {i}: the simulator's standalone FCT"
        );
        let ideal = f.ns3_standalone as f64;
        let fct = (fct as f64).max(ideal);
        ns3.push(f.ns3_fct as f64 / ideal);
        ours.push(fct / ideal);
        log.push((fct / f.ns3_fct as f64).ln().abs());
    }
    // flows.parquet carries the simulator's ideal as a second ideal, and its slowdown.
    let file = std::fs::File::open(dir.path().join("run/flows.parquet")).unwrap();
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1 << 16)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();
    let (standalone, slowdown, fct) = (
        col("standalone_fct_ns"),
        col("standalone_slowdown"),
        col("fct_ns"),
    );
    let standalone = standalone.as_primitive::<arrow_array::types::UInt64Type>();
    let slowdown = slowdown.as_primitive::<arrow_array::types::Float64Type>();
    let fct = fct.as_primitive::<arrow_array::types::UInt64Type>();
    for (i, f) in list.iter().enumerate() {
        assert_eq!(standalone.value(i), f.ns3_standalone, "{shard}: flow {i}");
        let ratio = fct.value(i) as f64 / f.ns3_standalone as f64;
        assert_eq!(slowdown.value(i), ratio, "{shard}: flow {i}");
    }
    let (w, l) = (nw1(&ns3, &ours), median(log));
    println!("{shard}: nW1 {w:.4}, median |log ratio| {l:.4}");
    assert!(w <= 0.05, "{shard}: nW1 {w}");
    assert!(l <= 0.03, "{shard}: median |log ratio| {l}");
    (w, l)
}

#[test]
fn an_imported_dcqcn_shard_matches_ns3_flow_by_flow() {
    matches_ns3("shard1");
}

#[test]
fn an_imported_hpcc_shard_matches_ns3_flow_by_flow() {
    matches_ns3("shard8");
}

/// Zero-byte flows, as the m3 generators write a few (a size CDF starting at 0, rounded): the
/// simulator creates a queue pair that sends nothing and is never acknowledged, so the flow
/// never completes and has no `fct.txt` line, and it still takes its source port. netstep
/// imports and runs the flow file unmodified and does the same.
#[test]
fn zero_byte_flows_run_unmodified_and_are_left_out_as_the_simulator_does() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_inputs("shard1", dir.path(), &|_, v| v.to_string());
    let (_, unmodified) = hpcc::import_into(&config, &dir.path().join("unmodified")).unwrap();
    let zero = [5usize, 17];
    let flows_txt = dir.path().join("flows.txt");
    let text = std::fs::read_to_string(&flows_txt).unwrap();
    let edited: Vec<String> = text
        .lines()
        .map(|line| {
            let mut f: Vec<String> = line.split(' ').map(str::to_string).collect();
            if f.len() == 7 && zero.contains(&f[0].parse::<usize>().unwrap()) {
                f[5] = "0".to_string();
            }
            f.join(" ")
        })
        .collect();
    std::fs::write(&flows_txt, edited.join("\n") + "\n").unwrap();
    let (scenario, imported) = hpcc::import_into(&config, &dir.path().join("imported")).unwrap();
    assert_eq!(
        imported.sports, unmodified.sports,
        "a zero-byte flow takes its port"
    );
    let request = RunRequest {
        scenario: Some(scenario),
        out: Some(dir.path().join("run")),
        format: Some(FctFormat::M3),
        ..RunRequest::default()
    };
    netstep::run(&request).unwrap_or_else(|e| panic!("{e}"));
    let fct = read_fct(&dir.path().join("run/fct.txt"));
    for i in 0..flows("shard1").len() {
        let present = fct.get(i).copied().flatten().is_some();
        assert_eq!(present, !zero.contains(&i), "flow {i} in fct.txt");
    }
    let file = std::fs::File::open(dir.path().join("run/flows.parquet")).unwrap();
    let batch = parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1 << 16)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();
    let (size, end, sent) = (col("size_bytes"), col("end_ns"), col("packets_sent"));
    let size = size.as_primitive::<arrow_array::types::UInt64Type>();
    let sent = sent.as_primitive::<arrow_array::types::UInt64Type>();
    for i in zero {
        assert_eq!(size.value(i), 0, "flow {i}");
        assert!(end.is_null(i), "flow {i} never completes");
        assert_eq!(sent.value(i), 0, "flow {i} sends nothing");
    }
    assert!(!end.is_null(6) && sent.value(6) > 0, "the others run");
}

/// Loads the scenario `import hpcc` makes of `shard` with `edit` applied to its config.
fn imported(shard: &str, edit: &dyn Fn(&str, &str) -> String) -> netstep_scenario::Scenario {
    let dir = tempfile::tempdir().unwrap();
    let config = write_inputs(shard, dir.path(), edit);
    let (path, _) = hpcc::import_into(&config, &dir.path().join("imported")).unwrap();
    netstep_scenario::load(&path, &[], &netstep_scenario::Limits::machine())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// max_rate, the variable window, the simulator's ACK size and DCTCP as a rate control keep
/// the engines exact: the imported shards (DCQCN, HPCC, and shard 1's config with CC_MODE 8)
/// simulate identically on the reference engine and the window engine on 1 and 4 threads.
#[test]
fn imported_runs_are_exact_for_every_rate_control() {
    for (shard, cc) in [("shard1", None), ("shard8", None), ("shard1", Some("8"))] {
        let s = imported(shard, &|k, v| match (k, cc) {
            ("CC_MODE", Some(mode)) => mode.to_string(),
            _ => v.to_string(),
        });
        let out = exact_on_1_and_4_threads(&s, &format!("{shard} CC_MODE {cc:?}"));
        assert!(
            out.flows.iter().all(|f| f.end.is_some()),
            "{shard}: all finish"
        );
    }
}

#[test]
fn import_errors_name_the_file_the_line_and_what_was_expected() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_inputs("shard1", dir.path(), &|k, v| match k {
        "CC_MODE" => "10".to_string(),
        _ => v.to_string(),
    });
    let err = hpcc::import(&config).err().unwrap().to_string();
    assert!(
        err.contains("CC_MODE 10 (HPCC-PINT) is not modeled"),
        "{err}"
    );
    let config = write_inputs("shard1", dir.path(), &|k, v| match k {
        "PACKET_PAYLOAD_SIZE" => "0".to_string(),
        _ => v.to_string(),
    });
    let err = hpcc::import(&config).err().unwrap().to_string();
    assert!(
        err.contains(":4: PACKET_PAYLOAD_SIZE: expected a payload of 1 to 65535 bytes"),
        "{err}"
    );

    let config = write_inputs("shard1", dir.path(), &|_, v| v.to_string());
    std::fs::write(
        dir.path().join("flows.txt"),
        "2\n0 0 2 3 100 1000 1.0\n1 0 2 3 100 1.0\n",
    )
    .unwrap();
    let err = hpcc::import(&config).err().unwrap().to_string();
    assert!(
        err.contains("flows.txt:3") && err.contains("expected 7 columns"),
        "{err}"
    );
    std::fs::write(dir.path().join("flows.txt"), "1\n0 0 3 3 100 1000 1.0\n").unwrap();
    let err = hpcc::import(&config).err().unwrap().to_string();
    assert!(
        err.contains("flows.txt:2: flow 0: dst 3 is not a host"),
        "{err}"
    );
    std::fs::write(dir.path().join("flows.txt"), "1\n0 0 2 3 100 1000 1.0\n").unwrap();
    std::fs::remove_file(dir.path().join("topo-pl-3.txt")).unwrap();
    let err = hpcc::import(&config).err().unwrap().to_string();
    assert!(
        err.contains("TOPOLOGY_FILE") && err.contains("no such file"),
        "{err}"
    );
}

/// The rate cap, against arithmetic: a lone DCQCN flow on 100 Gb/s links capped at 10 Gb/s
/// sends its packets `wire x 8 / 10 Gb/s` apart, so it completes after `(n - 1)` gaps plus one
/// packet's way through the path; and the fixed window: a flow whose window is 10 packets
/// on a long path completes a round of 10 packets per round trip.
#[test]
fn max_rate_and_window_follow_arithmetic() {
    let text = |transport: &str| {
        format!(
            "[simulation]\nduration = \"100ms\"\n[topology]\nkind = \"dumbbell\"\nleft = 1\nright = 1\n[topology.links]\nrate = \"100Gbps\"\ndelay = \"10us\"\n[transport]\nkind = \"rdma\"\n{transport}\n[[traffic]]\nkind = \"flows\"\nflows = [{{ src = \"l0\", dst = \"r0\", size = \"1MB\" }}]\n"
        )
    };
    let s = scenario(&text("max_rate = \"10Gbps\""), &[]);
    let out = exact_on_1_and_4_threads(&s, "max_rate");
    let fct = out.flows.get(0).end.unwrap().0 as f64;
    // 1,000 packets of 1,048 B: 999 gaps of 838.4 ns, then the last packet's three hops
    // (serialization at 100 Gb/s, 10 us each).
    let gap = 1048.0 * 8.0 / 10e9 * 1e12;
    let last = 3.0 * (1048.0 * 8.0 / 100e9 * 1e12 + 10e6);
    let expected = 999.0 * gap + last;
    assert!(
        (fct - expected).abs() / expected < 1e-3,
        "{fct} ps vs {expected} ps"
    );

    let s = scenario(&text("window = \"10000B\""), &[]);
    let out = exact_on_1_and_4_threads(&s, "window");
    let rtt = netstep_core::flow::base_rtt(&s.model.net, &s.model.flows, 0)
        .unwrap()
        .0 as f64;
    let fct = out.flows.get(0).end.unwrap().0 as f64;
    // 100 rounds of 10 packets; each round waits for the first ACK of the previous one
    // (one base RTT, plus the 10 packets' serialization at 100 Gb/s on the way).
    let rounds = 100.0;
    assert!(
        fct >= (rounds - 1.0) * rtt && fct <= rounds * (rtt + 10.0 * 1048.0 * 8.0 / 100e9 * 1e12),
        "{fct} ps for {rounds} rounds of {rtt} ps"
    );
}

/// The readings that differ between the simulator's versions, and map entries that read 0.
#[test]
fn versions_and_empty_map_entries_are_read_as_the_simulator_reads_them() {
    let dir = tempfile::tempdir().unwrap();
    // Without ENABLE_PFC, TIMELY_* and MAX_RATE but with FIXED_WIN: the Parsimon-era fork,
    // BUFFER_SIZE in MB and the ECN threshold fixed at rate x 3 / 10^9 KB (30 KB at 10 Gb/s).
    let config = write_inputs("shard1", dir.path(), &|_, v| v.to_string());
    let kept: String = std::fs::read_to_string(&config)
        .unwrap()
        .lines()
        .filter(|l| {
            !["ENABLE_PFC", "TIMELY_", "MAX_RATE"]
                .iter()
                .any(|k| l.starts_with(k))
        })
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(&config, kept).unwrap();
    let imported = hpcc::import(&config).unwrap();
    assert_eq!(imported.variant, hpcc::Variant::Parsimon);
    assert!(
        imported.toml.contains("kind = \"step\", k = \"30000B\""),
        "{}",
        imported.toml
    );
    // 325 MB is more than the headroom: no wrap, so the MMU's dynamic PFC thresholds, with
    // this version's 4,096 B reserve, three link BDPs of headroom and free / 8 (shift 3).
    assert!(
        imported.toml.contains(
            "pfc = { classes = [3], threshold = \"dynamic\", buffer = \"340787200B\", reserve = \"4096B\", headroom_bdps = 3, shift = 3 }"
        ),
        "{}",
        imported.toml
    );
    // A PMAX_MAP without the link's rate reads 0: marking only above kmax (step).
    let config = write_inputs("shard1", dir.path(), &|k, v| match k {
        "PMAX_MAP" => "1 40000000000 0.2".to_string(),
        _ => v.to_string(),
    });
    let (path, _) = hpcc::import_into(&config, &dir.path().join("imported")).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("kind = \"step\", k = \"22000B\""), "{text}");
    netstep_scenario::load(&path, &[], &netstep_scenario::Limits::machine())
        .unwrap_or_else(|e| panic!("{e}"));
    // min_rate above max_rate is refused before the run.
    let err = netstep_scenario::load(
        &path,
        &["transport.min_rate=\"20Gbps\"".to_string()],
        &netstep_scenario::Limits::machine(),
    )
    .err()
    .unwrap()
    .to_string();
    assert!(err.contains("above max_rate"), "{err}");
}

/// Where the simulator's MMU threshold does not wrap (a buffer larger than every port's
/// headroom and reserve), the import sets dynamic PFC thresholds as the fork at commit 5d3beeb
/// (m3's fig 8) has them: a 4,096 B reserve and three link BDPs of headroom per port,
/// thresholds free / 4 at the host rate, for the flows' class; the run stays exact.
#[test]
fn a_buffer_that_does_not_wrap_gets_the_mmus_dynamic_pfc() {
    // The 100 Tb/s, 1 us link alone has a 12.5 MB BDP, 37.5 MB as three: 40,000 KB leaves a
    // pool (36,640 KB would not).
    let s = imported("shard1", &|k, v| match k {
        "BUFFER_SIZE" => "40000".to_string(),
        _ => v.to_string(),
    });
    let pfc = s.model.pfc.expect("PFC");
    let dynamic = *pfc.dynamic().expect("dynamic thresholds");
    assert_eq!(pfc.lossless, 1 << 3);
    assert_eq!(dynamic.buffer.0, 40_000 * 1024);
    assert_eq!(dynamic.reserve.0, 4096);
    assert_eq!(dynamic.headroom_bdps, 3);
    assert_eq!(dynamic.shift, 2);
    assert_eq!(dynamic.host_rate, 10_000_000_000, "the first host's link");
    assert!(s.model.shared_buffer.is_none(), "no egress limit");
    // 20,000 KB, which the earlier forks' one BDP left a pool in, wraps at 5d3beeb: no PFC.
    let s20 = imported("shard1", &|k, v| match k {
        "BUFFER_SIZE" => "20000".to_string(),
        _ => v.to_string(),
    });
    assert!(s20.model.pfc.is_none(), "the threshold wraps: never pauses");
    let out = exact_on_1_and_4_threads(&s, "shard1 with a dynamic-PFC MMU");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
}

//! `netstep import simai`: SimAI's topology file, SimAI.conf and an AICB workload as one
//! scenario (fixtures written by SimAI's own generator, `tests/fixtures/simai/README.md`).

use std::path::{Path, PathBuf};
use std::process::Command;

use netstep::hpcc::simai::{SimaiFiles, import_into, read_topology};
use netstep_core::engine::WindowMode;

use crate::common::{repo, run_window};

fn fixture(name: &str) -> PathBuf {
    repo()
        .join("crates/netstep/tests/fixtures/simai")
        .join(name)
}

fn fresh(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("netstep-simai-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn import(topology: &str, out: &Path) -> PathBuf {
    let files = SimaiFiles {
        topology: &fixture(topology),
        config: &fixture("SimAI.conf"),
        workload: &repo().join("scenarios/workloads/aicb-training.txt"),
    };
    import_into(&files, out).expect("imports").0
}

/// The node names a packet from `src` to `dst` visits (ECMP hash 0).
fn route(s: &netstep_scenario::Scenario, src: &str, dst: &str) -> Vec<String> {
    route_with(s, src, dst, 0)
}

/// The node names a packet from `src` to `dst` visits, `hash` at every hop.
fn route_with(s: &netstep_scenario::Scenario, src: &str, dst: &str, hash: u64) -> Vec<String> {
    let names = &s.node_names;
    let id = |n: &str| names.iter().position(|x| x == n).unwrap() as u32;
    let (mut at, to) = (id(src), id(dst));
    let mut path = vec![src.to_string()];
    while at != to {
        let port = s.model.net.route(at, to, hash).expect("a route");
        at = s.model.net.port_peer[s.model.net.port_id(at, port) as usize];
        path.push(names[at as usize].clone());
        assert!(path.len() < 10, "{path:?}");
    }
    path
}

#[test]
fn a_spectrum_x_topology_keeps_nvlink_inside_servers_and_rails_across() {
    let t = read_topology(&fixture("spectrum-x-16g.txt")).unwrap();
    assert_eq!(
        (t.gpus, t.gpus_per_server, t.gpu_type.as_str()),
        (16, 8, "H100")
    );
    assert_eq!(t.nvswitches, vec![16, 17]);
    assert_eq!(t.switches.len(), 10);
    let out = fresh("spectrum");
    let scenario = import("spectrum-x-16g.txt", &out);
    let s = netstep_scenario::load(&scenario, &[], &netstep_scenario::Limits::machine()).unwrap();
    // GPU 0, a host of two ports as in SimAI: same server over NVSwitch 16, GPU 8 along rail
    // ASW 18.
    assert_eq!(route(&s, "0", "1"), ["0", "16", "1"]);
    assert_eq!(route(&s, "0", "8"), ["0", "18", "8"]);
    // Across rails and servers: up rail 0's ASW, a PSW, down rail 1's; never through GPU 1
    // (NVLink then its NIC: a path as short).
    let across = route(&s, "0", "9");
    assert_eq!(across.len(), 5, "{across:?}");
    assert_eq!(across[..2], ["0", "18"], "{across:?}");
    assert_eq!(across[3..], ["19", "9"], "{across:?}");
    no_route_crosses_another_gpu(&s, 16);
    // Each queue pair starts at the line rate of the port it leaves by: NVLink inside the
    // server, the NIC's 400 Gb/s across (SimAI's NICs, one per port).
    let net = &s.model.net;
    let rate = |src: u32, dst: u32| {
        let flow = s
            .model
            .flows
            .flows
            .iter()
            .position(|f| f.src == src && f.dst == dst)
            .expect("a flow") as u32;
        let first = netstep_core::flow::first_port(net, &s.model.flows, flow, false);
        net.class_of(net.port_id(src, first)).rate.0
    };
    assert_eq!(rate(0, 1), 2_880_000_000_000);
    assert_eq!(rate(0, 8), 400_000_000_000);
    // Every GPU is a rank, in id order; SimAI's flows' priority group 3 is the job's class.
    let job = s.model.job.as_ref().unwrap();
    let hosts: Vec<&str> = job
        .hosts
        .iter()
        .map(|&h| s.node_names[h as usize].as_str())
        .collect();
    assert_eq!(hosts, (0..16).map(|i| i.to_string()).collect::<Vec<_>>());
    assert!(s.model.flows.flows.iter().all(|f| f.class == 3));
    let text = std::fs::read_to_string(&scenario).unwrap();
    assert!(text.contains("pfc = { classes = [3]"), "{text}");
    assert!(text.contains("mtu = \"9000B\""), "{text}");
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn simai_s_three_files_run_with_one_command() {
    let out = fresh("run");
    let done = Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["import", "simai", "--topology"])
        .arg(fixture("hpn-dual-plane-16g.txt"))
        .arg("--conf")
        .arg(fixture("SimAI.conf"))
        .arg("--workload")
        .arg(repo().join("scenarios/workloads/aicb-training.txt"))
        .arg("--out")
        .arg(&out)
        .arg("--run")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&done.stdout);
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(done.status.success(), "{stdout}{stderr}");
    assert!(stdout.contains("iteration"), "{stdout}");
    assert!(
        stderr.contains("not modeled: SIMULATOR_STOP_TIME"),
        "{stderr}"
    );
    assert!(out.join("run/layers.parquet").exists());
    assert!(out.join("run/EndToEnd.csv").exists());
    // In issue order every GPU finishes; each GPU reaches its two ASWs by its two NIC ports.
    let s = netstep_scenario::load(
        &out.join("scenario.toml"),
        &["traffic.0.queue_order=oldest_first".to_string()],
        &netstep_scenario::Limits::machine(),
    )
    .unwrap();
    let run = run_window(&s, 2, WindowMode::Exact);
    assert!(
        run.job
            .as_ref()
            .unwrap()
            .iter()
            .all(|r| r.finished.is_some())
    );
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn bad_simai_topology_files_are_refused_with_file_and_line() {
    let dir = fresh("bad");
    std::fs::create_dir_all(&dir).unwrap();
    let good = std::fs::read_to_string(fixture("spectrum-x-16g.txt")).unwrap();
    let cases = [
        (
            good.replacen("28 8 2 10", "28 5 2 10", 1),
            ":1: gpus_per_server 5 does not divide the 16 GPUs",
        ),
        (
            good.replacen("16 17 18", "3 17 18", 1),
            ":2: an NVSwitch id 3: SimAI numbers the GPUs first",
        ),
        (good.replacen("0 16 2880Gbps", "0 16 fast", 1), ":3:"),
        (good.clone() + "0 1 1Gbps 1us 0\n", "after the 48 links"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let path = dir.join(format!("t{i}.txt"));
        std::fs::write(&path, text).unwrap();
        let e = read_topology(&path).unwrap_err().to_string();
        assert!(
            e.contains(&format!("t{i}.txt")) && e.contains(expected),
            "{e}"
        );
    }
    // A GPU none of the links names (GPU 15's two links removed).
    let unlinked: String = good
        .lines()
        .filter(|l| !l.starts_with("15 "))
        .collect::<Vec<_>>()
        .join("\n")
        .replacen("28 8 2 10 48", "28 8 2 10 46", 1);
    let path = dir.join("unlinked.txt");
    std::fs::write(&path, unlinked).unwrap();
    let e = read_topology(&path).unwrap_err().to_string();
    assert!(
        e.contains("unlinked.txt") && e.contains("GPU 15 has no link"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// SimAI's generated file and the native `gpu_cluster` of the same shape have the same nodes
/// and links, in the same order: GPUs (hosts of several ports) first, then the NVSwitches,
/// ASWs and PSWs in SimAI's id order.
fn same_fabric(file: &str, native: &str) {
    let t = read_topology(&fixture(file)).unwrap();
    let s = crate::common::scenario(native, &[]);
    let net = &s.model.net;
    assert_eq!(net.n_nodes() as u32, t.topology.nodes, "{file}");
    let mut native_links = Vec::new();
    for node in 0..net.n_nodes() as u32 {
        for local in 0..net.degree(node) {
            let peer = net.port_peer[net.port_id(node, local) as usize];
            if node < peer {
                native_links.push((node, peer));
            }
        }
    }
    let mut simai_links: Vec<(u32, u32)> = t
        .topology
        .links
        .iter()
        .map(|l| (l.a.min(l.b), l.a.max(l.b)))
        .collect();
    assert!(!simai_links.is_empty());
    native_links.sort_unstable();
    simai_links.sort_unstable();
    assert_eq!(native_links.len(), simai_links.len(), "{file}");
    assert_eq!(native_links, simai_links, "{file}");
}

#[test]
fn native_gpu_clusters_wire_as_simai_s_generator() {
    same_fabric(
        "spectrum-x-16g.txt",
        "[topology]\nkind = \"gpu_cluster\"\nshape = \"rail_single_tor\"\ngpus = 16\npsws = 2\n\
         links = { rate = \"400Gbps\", delay = \"500ns\" }\n[[traffic]]\nkind = \"permutation\"\nsize = \"1KB\"\n",
    );
    same_fabric(
        "hpn-dual-plane-16g.txt",
        "[topology]\nkind = \"gpu_cluster\"\nshape = \"rail_dual_plane\"\ngpus = 16\npsws = 4\nnics_per_switch = 128\n\
         links = { rate = \"200Gbps\", delay = \"500ns\" }\n[[traffic]]\nkind = \"permutation\"\nsize = \"1KB\"\n",
    );
}

/// No route between two of the first `gpus` nodes (the GPUs), under any of a few ECMP hashes,
/// visits a GPU other than its ends.
fn no_route_crosses_another_gpu(s: &netstep_scenario::Scenario, gpus: u32) {
    let name = |i: u32| s.node_names[i as usize].clone();
    let id = |n: &String| s.node_names.iter().position(|x| x == n).unwrap();
    for a in 0..gpus {
        for b in (0..gpus).filter(|&b| b != a) {
            for hash in 0..4 {
                let path = route_with(s, &name(a), &name(b), hash);
                let through = path.iter().filter(|n| id(n) < gpus as usize).count();
                assert_eq!(through, 2, "{a} -> {b}: {path:?}");
            }
        }
    }
}

#[test]
fn native_clusters_route_as_simai_never_through_another_gpu() {
    let native = |shape: &str| {
        crate::common::scenario(
            &format!(
                "[topology]\nkind = \"gpu_cluster\"\nshape = \"{shape}\"\ngpus = 16\npsws = 4\nnics_per_switch = 4\n\
                 links = {{ rate = \"400Gbps\", delay = \"500ns\" }}\n[[traffic]]\nkind = \"permutation\"\nsize = \"1KB\"\n"
            ),
            &[],
        )
    };
    for shape in [
        "rail_single_tor",
        "rail_dual_tor",
        "rail_dual_plane",
        "dcn",
        "dcn_dual_tor",
    ] {
        let s = native(shape);
        no_route_crosses_another_gpu(&s, 16);
        // Same server: over the NVSwitch, also where the two GPUs share an ASW (DCN+).
        assert_eq!(
            route(&s, "gpu0", "gpu1"),
            ["gpu0", "nvs0", "gpu1"],
            "{shape}"
        );
    }
}

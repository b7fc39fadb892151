//! Nodes joined by short links run as groups inside wider windows (`engine/groups.rs`): two
//! "servers" of four GPUs on an NVSwitch (25 ns links) with NIC links to two leaves and a
//! spine (500 ns). The grouped window engine (`Grouping::Always`: a network this small is
//! not grouped by default) must reproduce the sequential reference engine
//! on 1, 2 and 4 threads, and an ungrouped run's hop records and queue samples, with every
//! kind of traffic a member can send another: data and ACKs through the NVSwitch, PFC frames,
//! HPCC's telemetry stacks (side records), TCP's SACK blocks, a FIFO port's batched
//! departures, and a training job's dependency notices.

use crate::common::{assert_same_simulation, run_reference, scenario};
use netstep_core::engine::groups::Grouping;
use netstep_core::engine::trace::{HopFilter, MemoryTrace};
use netstep_core::engine::window::WindowEngine;
use netstep_core::engine::{EngineConfig, RunOutput, WindowMode};
use netstep_core::units::SimTime;

/// The two servers with `extra` appended (transport, NIC, switch and traffic sections).
fn two_servers(extra: &str) -> String {
    let gpus: Vec<String> = (0..8).map(|g| format!("\"g{g}\"")).collect();
    let mut links = Vec::new();
    for g in 0..8 {
        let nv = g / 4;
        let leaf = (g % 4) / 2;
        links.push(format!(
            "{{ a = \"g{g}\", b = \"nv{nv}\", rate = \"400Gbps\", delay = \"25ns\" }}"
        ));
        links.push(format!("{{ a = \"g{g}\", b = \"leaf{leaf}\" }}"));
    }
    links.push("{ a = \"leaf0\", b = \"spine\" }".into());
    links.push("{ a = \"leaf1\", b = \"spine\" }".into());
    format!(
        r#"
[simulation]
seed = 5
[topology]
kind = "custom"
hosts = [{}]
switches = ["nv0", "nv1", "leaf0", "leaf1", "spine"]
defaults = {{ rate = "100Gbps", delay = "500ns", buffer = "400KB" }}
links = [
  {}
]
{extra}
"#,
        gpus.join(", "),
        links.join(",\n  ")
    )
}

/// Flows within each server and across, starting a little apart.
const FLOWS: &str = r#"
[[traffic]]
kind = "flows"
flows = [
  { src = "g0", dst = "g1", size = "300KB" },
  { src = "g1", dst = "g2", size = "200KB", start = "1us" },
  { src = "g2", dst = "g0", size = "250KB", start = "2us" },
  { src = "g3", dst = "g1", size = "150KB", start = "3us" },
  { src = "g0", dst = "g4", size = "300KB", start = "1us" },
  { src = "g5", dst = "g1", size = "200KB", start = "4us" },
  { src = "g6", dst = "g7", size = "250KB" },
  { src = "g7", dst = "g2", size = "180KB", start = "2us" },
  { src = "g4", dst = "g6", size = "220KB", start = "5us" },
]
"#;

/// A run of `s` on the window engine, grouped or not, with its hop records and queue samples.
fn traced(
    s: &netstep_scenario::Scenario,
    threads: usize,
    grouped: bool,
) -> (RunOutput, MemoryTrace) {
    let config = EngineConfig {
        threads,
        window: WindowMode::Exact,
        end: s.meta.duration,
    };
    let grouping = if grouped {
        Grouping::Always
    } else {
        Grouping::Never
    };
    let engine = WindowEngine::with_grouping(&s.model, config, grouping);
    let mut trace = MemoryTrace::default();
    let out = engine
        .expect("engine")
        .run_traced(|_| {}, &mut trace)
        .expect("run");
    (out, trace)
}

/// Checks `s` grouped against the reference engine (1, 2, 4 threads) and against an ungrouped
/// run's traces; returns the reference run.
fn check(name: &str, text: &str) -> RunOutput {
    let mut s = scenario(text, &[]);
    s.model.record_deliveries = true;
    let reference = run_reference(&s);
    for threads in [1, 2, 4] {
        let (grouped, _) = traced(&s, threads, true);
        assert_same_simulation(&reference, &grouped, &format!("{name}, {threads} threads"));
    }
    assert!(
        reference.flows.iter().all(|f| f.end.is_some()),
        "{name}: every flow finishes"
    );
    s.model.trace.packet_hops = Some(HopFilter::all());
    s.model.trace.queue_samples = Some(SimTime::from_us(3));
    let (ungrouped, tu) = traced(&s, 2, false);
    for threads in [1, 2] {
        let (grouped, tg) = traced(&s, threads, true);
        let what = format!("{name}, {threads} threads");
        // The window spans the NIC links (500 ns and a 64 B packet's 5 ns), not the NVLinks.
        assert!(
            grouped.stats.window > SimTime::from_ns(500),
            "{what}: {:?}",
            grouped.stats.window
        );
        assert!(ungrouped.stats.window < SimTime::from_ns(30), "{what}");
        assert!(
            grouped.stats.windows * 4 < ungrouped.stats.windows,
            "{what}: windows"
        );
        assert_same_simulation(&grouped, &ungrouped, &what);
        assert_eq!(tg.hops, tu.hops, "{what}: hop records");
        assert_eq!(tg.samples, tu.samples, "{what}: queue samples");
    }
    reference
}

#[test]
fn groups_run_rdma_with_pfc_exactly() {
    let text = two_servers(&format!(
        "[nic]\nscheduler = \"pull\"\n[switch]\npfc = {{ classes = [0], xoff = \"40KB\", xon = \"20KB\" }}\n\
         [transport]\nkind = \"rdma\"\ncc = \"dcqcn\"\n{FLOWS}"
    ));
    let run = check("rdma, dcqcn, pfc", &text);
    assert!(!run.pfc_events.is_empty(), "pauses form");
}

#[test]
fn groups_run_hpcc_telemetry_exactly() {
    let text = two_servers(&format!(
        "[nic]\nscheduler = \"pull\"\n[transport]\nkind = \"rdma\"\ncc = \"hpcc\"\n{FLOWS}"
    ));
    check("hpcc", &text);
}

#[test]
fn groups_run_lossy_tcp_with_batched_departures_exactly() {
    let text = two_servers(&format!("[transport]\nkind = \"tcp\"\n{FLOWS}"))
        .replace("buffer = \"400KB\"", "buffer = \"40KB\"");
    let s = scenario(&text, &[]);
    assert!(s.model.batches_departures());
    let run = check("tcp, small buffers", &text);
    assert!(run.stats.drops > 0, "drops and SACK recovery");
    assert!(run.flows.iter().any(|f| f.retransmits > 0));
}

#[test]
fn groups_run_dependent_flows_exactly() {
    // A ring within each server, each step waiting for the one before (notices between
    // members), and a cross-server flow after the ring.
    let text = two_servers(
        r#"
[transport]
kind = "tcp"
[[traffic]]
kind = "flows"
flows = [
  { name = "a", src = "g0", dst = "g1", size = "100KB" },
  { name = "b", src = "g1", dst = "g2", size = "100KB", after = ["a"] },
  { name = "c", src = "g2", dst = "g3", size = "100KB", after = ["b"] },
  { name = "d", src = "g3", dst = "g4", size = "100KB", after = ["c"] },
  { name = "e", src = "g4", dst = "g5", size = "100KB", after = ["d"] },
]
"#,
    );
    check("dependent flows", &text);
}

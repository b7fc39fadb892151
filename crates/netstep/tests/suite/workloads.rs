//! Workloads: each shipped example under `scenarios/workloads/` does what its "Expected"
//! header says.

use netstep_core::engine::WindowMode;
use netstep_core::units::SimTime;

use crate::common::*;

/// `scenarios/workloads/permutation.toml`: every host sends one flow and receives one, to
/// the host half the fabric away; all complete; slowdowns 1.21 to 2.99, median 1.24.
#[test]
fn the_permutation_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/permutation.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 16);
    let mut received = [0u32; 16];
    for f in flows.iter() {
        assert_eq!(f.dst, (f.src + 8) % 16, "across the bisection");
        received[f.dst as usize] += 1;
    }
    assert!(received.iter().all(|&r| r == 1), "{received:?}");
    let out = run_window(&s, 1, WindowMode::Exact);
    let mut slowdowns: Vec<f64> = out
        .flows
        .iter()
        .map(|o| {
            let end = o.end.expect("every flow completes");
            let spec = &s.model.flows.flows[o.flow as usize];
            let ideal =
                netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, o.flow, s.model.seed)
                    .unwrap();
            (end - spec.start).0 as f64 / ideal.0 as f64
        })
        .collect();
    slowdowns.sort_by(f64::total_cmp);
    let median = (slowdowns[7] + slowdowns[8]) / 2.0;
    let shown = |x: f64| format!("{x:.2}");
    assert_eq!(
        (shown(slowdowns[0]), shown(median), shown(slowdowns[15])),
        ("1.21".into(), "1.24".into(), "2.99".into()),
        "{slowdowns:?}"
    );
}

/// A random permutation (the default) is a derangement drawn from the seed: the same seed
/// gives the same one, another seed another.
#[test]
fn random_permutations_follow_the_seed() {
    let text = |seed: u32| {
        format!(
            "[simulation]\nseed = {seed}\n[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"permutation\"\nsize = \"10KB\"\n"
        )
    };
    let pairs = |seed| -> Vec<(u32, u32)> {
        scenario(&text(seed), &[])
            .model
            .flows
            .flows
            .iter()
            .map(|f| (f.src, f.dst))
            .collect()
    };
    let (a, b, c) = (pairs(1), pairs(1), pairs(2));
    assert_eq!(a, b);
    assert_ne!(a, c);
    assert_eq!(a.len(), 16);
    assert!(a.iter().all(|(s, d)| s != d));
}

/// The new traffic kinds are exact: the window engine on 1 and 4 threads simulates what the
/// reference engine does.
#[test]
fn workload_examples_are_exact_on_1_and_4_threads() {
    for file in [
        "scenarios/workloads/permutation.toml",
        "scenarios/workloads/incast.toml",
        "scenarios/workloads/all-to-all.toml",
        "scenarios/workloads/rail-optimized.toml",
    ] {
        let s = scenario_file(file, &[]);
        let reference = exact_on_1_and_4_threads(&s, file);
        assert!(reference.flows.iter().all(|f| f.end.is_some()), "{file}");
    }
}

/// `scenarios/workloads/incast.toml`: 3 rounds of 8 distinct senders to h0, 2 ms apart; 186
/// drops, 151 at the port towards h0; 8 timeouts; each round 1.22 to 1.28 ms.
#[test]
fn the_incast_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/incast.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 24);
    for round in 0..3u64 {
        let mut senders: Vec<u32> = flows
            .iter()
            .filter(|f| f.start.0 == round * 2_000_000_000)
            .map(|f| f.src)
            .collect();
        senders.sort_unstable();
        senders.dedup();
        assert_eq!(senders.len(), 8, "round {round}: 8 distinct senders");
        assert!(!senders.contains(&0));
    }
    assert!(flows.iter().all(|f| f.dst == 0), "all to h0");
    let out = run_window(&s, 1, WindowMode::Exact);
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(out.stats.drops, 186);
    let towards_h0 = s
        .model
        .net
        .port_id(16, s.model.net.port_towards(16, 0).unwrap());
    let port = out.ports.iter().find(|p| p.port == towards_h0).unwrap();
    assert_eq!(port.drops, 151);
    assert_eq!(out.flows.iter().map(|f| f.timeouts).sum::<u64>(), 8);
    for round in 0..3u64 {
        let start = round * 2_000_000_000;
        let end = out
            .flows
            .iter()
            .filter(|f| flows[f.flow as usize].start.0 == start)
            .map(|f| f.end.unwrap().0)
            .max()
            .unwrap();
        let ms = (end - start) as f64 / 1e9;
        assert!(
            (1.22..=1.28).contains(&format!("{ms:.2}").parse::<f64>().unwrap()),
            "round {round}: {ms} ms"
        );
    }
    // The bound the header quotes: 8 x 64 KB with TCP's 40 B headers (44 segments of at most
    // 1,460 B) through one 10 Gb/s link.
    let wire = 64_000.0 + (64_000f64 / 1460.0).ceil() * 40.0;
    let ideal_ms = 8.0 * wire * 8.0 / 10e9 * 1e3;
    assert_eq!(format!("{ideal_ms:.2}"), "0.42");
}

/// `scenarios/workloads/all-to-all.toml`: every ordered pair once; the exchange cannot end
/// before each host has pushed its 15 flows through its own link (1.23 ms) and ends at 2.71 ms;
/// 113 drops; median slowdown 14.1.
#[test]
fn the_all_to_all_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/all-to-all.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 240);
    let mut pairs: Vec<(u32, u32)> = flows.iter().map(|f| (f.src, f.dst)).collect();
    pairs.sort_unstable();
    pairs.dedup();
    assert_eq!(pairs.len(), 240);
    assert!(pairs.iter().all(|(a, b)| a != b && *a < 16 && *b < 16));
    let out = run_window(&s, 1, WindowMode::Exact);
    let end = out
        .flows
        .iter()
        .map(|f| f.end.expect("completes").0)
        .max()
        .unwrap();
    // The bound: 15 flows of 100,000 B in 69 segments with 40 B headers, 10 Gb/s.
    let bound_ps = 15.0 * (100_000.0 + 69.0 * 40.0) * 8.0 / 10e9 * 1e12;
    assert!(end as f64 >= bound_ps, "no exchange beats the host links");
    assert_eq!(format!("{:.2}", bound_ps / 1e9), "1.23");
    assert_eq!(format!("{:.2}", end as f64 / 1e9), "2.71");
    assert_eq!(format!("{:.2}", end as f64 / bound_ps), "2.20");
    assert_eq!(out.stats.drops, 113);
    let mut slowdowns: Vec<f64> = out
        .flows
        .iter()
        .map(|o| {
            let ideal =
                netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, o.flow, s.model.seed)
                    .unwrap();
            (o.end.unwrap() - flows[o.flow as usize].start).0 as f64 / ideal.0 as f64
        })
        .collect();
    slowdowns.sort_by(f64::total_cmp);
    let median = (slowdowns[119] + slowdowns[120]) / 2.0;
    assert_eq!(format!("{median:.1}"), "14.1");
}

/// Every flow that waits starts exactly when the engine's rule says: the latest of its
/// dependencies' ends (plus, for one received elsewhere, the notice's unloaded latency from
/// that receiver to the flow's source), plus its delay, and no earlier than its `start`; and
/// `deps_done` is that latest notice. Returns how many flows waited.
fn assert_dependency_order(
    s: &netstep_scenario::Scenario,
    out: &netstep_core::engine::RunOutput,
) -> usize {
    let flows = &s.model.flows.flows;
    let mut waited = 0;
    for (id, f) in flows.iter().enumerate() {
        let outcome = &out.flows.get(id);
        let Some(deps) = &f.after else {
            assert_eq!(outcome.deps_done, None);
            continue;
        };
        waited += 1;
        let notices: Option<Vec<u64>> = deps
            .flows
            .iter()
            .map(|&d| {
                let dep = &flows[d as usize];
                let latency = if dep.dst == f.src {
                    0
                } else {
                    netstep_core::flow::notify_latency(&s.model.net, dep.dst, f.src, id as u32)
                        .unwrap()
                        .0
                };
                out.flows.get(d as usize).end.map(|e| e.0 + latency)
            })
            .collect();
        let Some(notices) = notices else {
            assert_eq!(
                outcome.start, None,
                "flow {id} started before its dependencies ended"
            );
            continue;
        };
        let last = *notices.iter().max().unwrap();
        assert_eq!(outcome.deps_done.map(|t| t.0), Some(last), "flow {id}");
        assert_eq!(
            outcome.start.map(|t| t.0),
            Some(f.start.0.max(last + deps.delay.0)),
            "flow {id}"
        );
    }
    waited
}

/// `scenarios/workloads/dependencies.toml`: "reduce" starts 20 us after the later mapper's
/// end; "report" starts 6.307 us (the notice from h5 to h9) after "reduce" ends.
#[test]
fn the_dependencies_example_does_what_its_header_says() {
    let s = scenario_file("scenarios/workloads/dependencies.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "dependencies example");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(assert_dependency_order(&s, &out), 2);
    let end = |f: usize| out.flows.get(f).end.unwrap().0;
    let start = |f: usize| out.flows.get(f).start.unwrap().0;
    assert_eq!(start(2), end(0).max(end(1)) + 20_000_000);
    // Six links from h5 (pod 1) to h9 (pod 2), each 1 us plus 64 B at 10 Gb/s (51.2 ns).
    let notice = 6 * (1_000_000 + 51_200);
    assert_eq!(start(3), end(2) + notice);
    assert_eq!(format!("{:.3}", notice as f64 / 1e6), "6.307");
}

/// `scenarios/workloads/ring-all-reduce.toml` against its closed form: every step is the
/// lone-flow FCT of 1 MB (82.08 us) and the job takes 2 x 14 steps plus one notice and one
/// compute gap.
#[test]
fn the_ring_all_reduce_example_matches_its_closed_form() {
    let s = scenario_file("scenarios/workloads/ring-all-reduce.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "ring all-reduce");
    assert_eq!(out.flows.len(), 2 * 14 * 8);
    assert_eq!(assert_dependency_order(&s, &out), 2 * 14 * 8 - 8);
    // The lone-flow FCT of 1,000 packets of 1,000 B: 1,000 serializations of 80 ns on the NIC
    // link, the last packet's 80 ns on the leaf's port, two 1 us links.
    let lone = 1_000 * 80_000 + 80_000 + 2 * 1_000_000;
    assert_eq!(lone, 82_080_000);
    for (id, o) in out.flows.iter().enumerate() {
        assert_eq!(
            o.end.unwrap() - o.start.unwrap(),
            SimTime(lone),
            "flow {id}"
        );
        let ideal =
            netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, id as u32, 1).unwrap();
        assert_eq!(ideal, SimTime(lone));
    }
    // Between iterations: the notice of a rank's own last send, back from its neighbour over
    // two links (1 us + 64 B at 100 Gb/s each), then the compute gap.
    let notice = 2 * (1_000_000 + 5_120);
    let job = out.flows.iter().map(|o| o.end.unwrap().0).max().unwrap();
    assert_eq!(job, 2 * 14 * lone + notice + 50_000_000);
    assert_eq!(format!("{:.3}", job as f64 / 1e9), "2.350");
}

fn collective(block: &str, topology: &str) -> String {
    format!(
        "[simulation]\nseed = 3\n{topology}\n[topology.links]\nrate = \"100Gbps\"\ndelay = \"1us\"\n\
         [transport]\nkind = \"open_loop\"\nrate = \"100Gbps\"\npacket_size = \"1000B\"\n\
         [[traffic]]\nkind = \"collective\"\n{block}\n"
    )
}

const ONE_LEAF: &str =
    "[topology]\nkind = \"leaf_spine\"\nleaves = 1\nspines = 1\nhosts_per_leaf = 8";

/// Halving-doubling all-reduce on a fabric where no two flows share a link direction: the job
/// is the sum over its 2 log2 n steps of the lone-flow FCT of that step's size (S/2, S/4,
/// S/8, then back up), computed from the model's own ideal FCTs.
#[test]
fn halving_doubling_takes_the_sum_of_its_steps_lone_flow_times() {
    let s = scenario(
        &collective(
            "collective = \"halving_doubling_all_reduce\"\nsize = \"8MB\"",
            ONE_LEAF,
        ),
        &[],
    );
    let out = exact_on_1_and_4_threads(&s, "halving-doubling");
    assert_eq!(out.flows.len(), 6 * 8);
    assert_dependency_order(&s, &out);
    let ideal = |f: u32| netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, f, 3).unwrap();
    let sizes: Vec<u64> = (0..6)
        .map(|step| s.model.flows.flows[step * 8].size.0)
        .collect();
    assert_eq!(
        sizes,
        [
            4_000_000, 2_000_000, 1_000_000, 1_000_000, 2_000_000, 4_000_000
        ]
    );
    let closed: u64 = (0..6u32).map(|step| ideal(step * 8).0).sum();
    let job = out.flows.iter().map(|o| o.end.unwrap().0).max().unwrap();
    assert_eq!(job, closed);
}

/// All-to-all on a non-blocking fabric (two leaves, four spines, 4 hosts each) is limited by
/// each host's link: each of the 8 ranks sends 7 flows of S/8 and receives 7. Sent at 1/7 of
/// the line rate each, the exchange ends no earlier than the host link's busy time and no
/// later than that plus the longest path's latency and one packet per other rank queued at the
/// receiver's port.
#[test]
fn all_to_all_is_limited_by_each_hosts_link() {
    let two_leaves =
        "[topology]\nkind = \"leaf_spine\"\nleaves = 2\nspines = 4\nhosts_per_leaf = 4";
    let text = collective("collective = \"all_to_all\"\nsize = \"800KB\"", two_leaves).replace(
        "rate = \"100Gbps\"\npacket_size",
        "rate = \"14285714286bps\"\npacket_size",
    );
    let s = scenario(&text, &[]);
    let out = exact_on_1_and_4_threads(&s, "all-to-all collective");
    assert_eq!(out.flows.len(), 56);
    assert!(out.flows.iter().all(|o| o.end.is_some()));
    assert_eq!(out.stats.drops, 0);
    // 7 flows of 100 packets of 1,000 B (80 ns each at 100 Gb/s) out of each host.
    let busy = 7 * 100 * 80_000u64;
    let longest_path = 4 * 1_000_000 + 4 * 80_000u64;
    let job = out.flows.iter().map(|o| o.end.unwrap().0).max().unwrap();
    assert!(job >= busy, "{job} < {busy}");
    assert!(job <= busy + longest_path + 7 * 80_000, "{job}");
}

/// Collectives with chunks, several iterations, a shuffled rank order and two jobs at once
/// (one a broadcast, whose root hears of its own sends by notice) keep the dependency rule
/// exactly and are exact on 1 and 4 threads; `collectives.parquet`-style tags cover every flow.
#[test]
fn chunked_iterated_collectives_keep_their_order_and_are_exact() {
    let text = collective(
        "collective = \"reduce_scatter\"\nsize = \"400KB\"\nchunks = 3\niterations = 2\n\
         compute = \"5us\"\nshuffle = true\nranks = [\"h0\", \"h1\", \"h2\", \"h5\", \"h6\"]\njob = \"rs\"\n\
         [[traffic]]\nkind = \"collective\"\ncollective = \"broadcast\"\nsize = \"300KB\"\nchunks = 4\n\
         iterations = 2\nranks = [\"h3\", \"h4\", \"h7\"]\njob = \"bcast\"",
        "[topology]\nkind = \"fat_tree\"\nk = 4",
    );
    let s = scenario(&text, &[]);
    let out = exact_on_1_and_4_threads(&s, "chunked collectives");
    // reduce-scatter: 4 steps x 5 sends x 3 chunks x 2 iterations; broadcast: 2 steps x 1
    // send x 4 chunks x 2 iterations.
    assert_eq!(out.flows.len(), 120 + 16);
    assert!(out.flows.iter().all(|o| o.end.is_some()));
    assert!(assert_dependency_order(&s, &out) > 100);
    assert!(
        s.model.flows.has_remote_dependencies(),
        "chunks wait for their send's previous chunk"
    );
}

/// Bad dependencies and collectives are refused at load, naming the flow or field.
#[test]
fn bad_dependencies_and_collectives_are_refused_with_the_field() {
    let flows = |list: &str| {
        format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"flows\"\nflows = [{list}]\n"
        )
    };
    let err = |text: &str| match netstep_scenario::load_str(
        text,
        "t.toml",
        "t",
        None,
        &[],
        &netstep_scenario::Limits::machine(),
    ) {
        Ok(_) => panic!("accepted: {text}"),
        Err(e) => e.to_string(),
    };
    let cycle = err(&flows(
        "{ name = \"a\", src = \"h0\", dst = \"h1\", size = \"1KB\", after = [\"c\"] },\n\
         { name = \"b\", src = \"h1\", dst = \"h2\", size = \"1KB\", after = [\"a\"] },\n\
         { name = \"c\", src = \"h2\", dst = \"h0\", size = \"1KB\", after = [\"b\"] }",
    ));
    assert!(
        cycle.contains("traffic[0].flows[0].after")
            && cycle.contains("\"a\" -> \"c\" -> \"b\" -> \"a\""),
        "{cycle}"
    );
    let unknown = err(&flows(
        "{ src = \"h0\", dst = \"h1\", size = \"1KB\", after = [\"x\"] }",
    ));
    assert!(
        unknown.contains("traffic[0].flows[0].after[0]")
            && unknown.contains("no flow is named \"x\""),
        "{unknown}"
    );
    let twice = err(&flows(
        "{ name = \"a\", src = \"h0\", dst = \"h1\", size = \"1KB\" },\n{ name = \"a\", src = \"h1\", dst = \"h2\", size = \"1KB\" }",
    ));
    assert!(
        twice.contains("traffic[0].flows[1].name") && twice.contains("unique"),
        "{twice}"
    );
    let own = err(&flows(
        "{ name = \"a\", src = \"h0\", dst = \"h1\", size = \"1KB\", after = [\"a\"] }",
    ));
    assert!(own.contains("itself"), "{own}");
    let delay = err(&flows(
        "{ src = \"h0\", dst = \"h1\", size = \"1KB\", delay = \"1us\" }",
    ));
    assert!(
        delay.contains("traffic[0].flows[0].delay") && delay.contains("give `after`"),
        "{delay}"
    );
    let bare = err(&flows(
        "{ name = \"a\", src = \"h0\", dst = \"h1\", size = \"1KB\" },\n{ src = \"h0\", dst = \"h1\", size = \"1KB\", after = [\"a\"], delay = 5 }",
    ));
    assert!(bare.contains("traffic[0].flows[1].delay"), "{bare}");
    let block = |b: &str| collective(b, ONE_LEAF);
    let hd = err(&block(
        "collective = \"halving_doubling_all_reduce\"\nsize = \"1MB\"\nranks = [\"h0\", \"h1\", \"h2\"]",
    ));
    assert!(
        hd.contains("traffic[0].ranks") && hd.contains("power of two"),
        "{hd}"
    );
    let chunks = err(&block(
        "collective = \"ring_all_reduce\"\nsize = \"1MB\"\nchunks = 0",
    ));
    assert!(chunks.contains("traffic[0].chunks"), "{chunks}");
    let rank = err(&block(
        "collective = \"ring_all_reduce\"\nsize = \"1MB\"\nranks = [\"h0\", \"leaf0\"]",
    ));
    assert!(
        rank.contains("traffic[0].ranks[1]") && rank.contains("switch"),
        "{rank}"
    );
    let dup = err(&block(
        "collective = \"ring_all_reduce\"\nsize = \"1MB\"\nranks = [\"h0\", \"h0\"]",
    ));
    assert!(
        dup.contains("traffic[0].ranks[1]") && dup.contains("twice"),
        "{dup}"
    );
    let kind = err(&block("collective = \"tree\"\nsize = \"1MB\""));
    assert!(
        kind.contains("traffic[0].collective") || kind.contains("ring_all_reduce"),
        "{kind}"
    );
    let tiny = err(&block("collective = \"ring_all_reduce\"\nsize = \"4B\""));
    assert!(tiny.contains("no bytes"), "{tiny}");
    let split = err(&block(
        "collective = \"ring_all_reduce\"\nsize = \"16B\"\nchunks = 3",
    ));
    assert!(
        split.contains("traffic[0].chunks") && split.contains("between 1 and 2"),
        "{split}"
    );
}

/// `scenarios/workloads/trace.toml`: 9 flows from CSV, all complete; each answer starts 10 us
/// after its request's end; the last flow when the last answer ends. The same rows written as
/// Parquet (integer columns with units, a list column for `after`) give the same run.
#[test]
fn the_trace_example_does_what_its_header_says_from_csv_and_parquet() {
    let s = scenario_file("scenarios/workloads/trace.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "trace example");
    assert_eq!(out.flows.len(), 9);
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(assert_dependency_order(&s, &out), 4);
    let (start, end) = (
        |f: usize| out.flows.get(f).start.unwrap().0,
        |f: usize| out.flows.get(f).end.unwrap().0,
    );
    for (answer, request) in [(3, 0), (4, 1), (5, 2)] {
        assert_eq!(start(answer), end(request) + 10_000_000);
    }
    assert_eq!(start(8), end(3).max(end(4)).max(end(5)));
    let flows = &s.model.flows.flows;
    assert_eq!((flows[6].class, flows[7].class, flows[0].class), (1, 1, 0));
    assert!(matches!(
        &*flows[6].transport,
        netstep_core::transport::TransportSpec::Tcp(t) if t.cc == netstep_core::transport::CcSpec::Cubic
    ));

    // The same rows as Parquet.
    use arrow_array::builder::{ListBuilder, UInt32Builder};
    use arrow_array::{ArrayRef, RecordBatch, StringArray, UInt8Array, UInt64Array};
    let dir = tempfile::tempdir().unwrap();
    let hosts = |f: fn(&netstep_core::flow::FlowSpec) -> u32| -> ArrayRef {
        std::sync::Arc::new(StringArray::from_iter_values(
            flows.iter().map(|x| format!("h{}", f(x))),
        ))
    };
    let mut after = ListBuilder::new(UInt32Builder::new());
    for f in flows.iter() {
        match &f.after {
            Some(d) => {
                d.flows.iter().for_each(|&x| after.values().append_value(x));
                after.append(true);
            }
            None => after.append(false),
        }
    }
    let batch = RecordBatch::try_from_iter([
        ("src", hosts(|f| f.src)),
        ("dst", hosts(|f| f.dst)),
        (
            "size_bytes",
            std::sync::Arc::new(UInt64Array::from_iter_values(flows.iter().map(|f| f.size.0)))
                as ArrayRef,
        ),
        (
            "start_ns",
            std::sync::Arc::new(UInt64Array::from_iter_values(
                flows.iter().map(|f| f.start.as_ns()),
            )),
        ),
        (
            "class",
            std::sync::Arc::new(UInt8Array::from_iter_values(flows.iter().map(|f| f.class))),
        ),
        (
            "transport",
            std::sync::Arc::new(StringArray::from_iter(flows.iter().map(|f| {
                matches!(&*f.transport, netstep_core::transport::TransportSpec::Tcp(t) if t.cc == netstep_core::transport::CcSpec::Cubic).then_some("bulk")
            }))),
        ),
        ("after", std::sync::Arc::new(after.finish())),
        (
            "delay_ns",
            std::sync::Arc::new(UInt64Array::from_iter(
                flows.iter().map(|f| f.after.as_ref().map(|d| d.delay.as_ns())),
            )),
        ),
    ])
    .unwrap();
    let file = std::fs::File::create(dir.path().join("trace.parquet")).unwrap();
    let mut writer = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    let text = std::fs::read_to_string(repo().join("scenarios/workloads/trace.toml"))
        .unwrap()
        .replace(
            "trace.csv",
            &dir.path().join("trace.parquet").display().to_string(),
        );
    let p = scenario(&text, &[]);
    assert_eq!(p.model.flows.flows, s.model.flows.flows);
    assert_eq!(run_reference(&p), out);

    // An `after` list of anything but integers, or with a null inside, is refused (never
    // read as no dependency).
    use arrow_array::builder::Float64Builder;
    let write = |after: ArrayRef| {
        let batch = RecordBatch::try_from_iter([
            (
                "src",
                std::sync::Arc::new(StringArray::from(vec!["h0", "h1"])) as ArrayRef,
            ),
            (
                "dst",
                std::sync::Arc::new(StringArray::from(vec!["h4", "h5"])) as ArrayRef,
            ),
            (
                "size_bytes",
                std::sync::Arc::new(UInt64Array::from(vec![1000u64, 1000])),
            ),
            ("after", after),
        ])
        .unwrap();
        let file = std::fs::File::create(dir.path().join("trace.parquet")).unwrap();
        let mut w = parquet::arrow::ArrowWriter::try_new(file, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        match netstep_scenario::load_str(
            &text,
            "t.toml",
            "t",
            None,
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted"),
            Err(e) => e.to_string(),
        }
    };
    let mut floats = ListBuilder::new(Float64Builder::new());
    floats.append(false);
    floats.values().append_value(0.0);
    floats.append(true);
    let e = write(std::sync::Arc::new(floats.finish()));
    assert!(e.contains("expected a list of integers"), "{e}");
    let mut nulls = ListBuilder::new(UInt32Builder::new());
    nulls.append(false);
    nulls.values().append_null();
    nulls.append(true);
    let e = write(std::sync::Arc::new(nulls.finish()));
    assert!(
        e.contains("row id 1") && e.contains("a null inside the list"),
        "{e}"
    );
}

/// A flow file's errors name the file, the row id (and CSV line) and the column.
#[test]
fn flow_file_errors_name_the_file_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let err = |csv: &str| {
        std::fs::write(dir.path().join("f.csv"), csv).unwrap();
        let text = format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"flow_file\"\npath = {:?}\n",
            dir.path().join("f.csv").display().to_string()
        );
        match netstep_scenario::load_str(
            &text,
            "t.toml",
            "t",
            None,
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted: {csv}"),
            Err(e) => e.to_string(),
        }
    };
    let cases = [
        (
            "src,dst,size_bytes\nh0,h1,5\nh0,sw,5\n",
            "row id 1 (line 3), column \"dst\": unknown host \"sw\"",
        ),
        (
            "src,dst,size_bytes,bogus\nh0,h1,5,1\n",
            "column 4 is \"bogus\"",
        ),
        (
            "src,dst,size\nh0,h1,5\n",
            "row id 0 (line 2), column \"size\"",
        ),
        (
            "src,dst,size_bytes\nh0,h0,5\n",
            "column \"dst\": the flow's source and destination are the same host",
        ),
        (
            "src,dst,size_bytes\nh0,h1,-5\n",
            "column \"size_bytes\": expected a non-negative integer",
        ),
        (
            "src,dst,size_bytes,class\nh0,h1,5,9\n",
            "column \"class\": traffic classes are 0 to 7",
        ),
        (
            "src,dst,size_bytes,transport\nh0,h1,5,fast\n",
            "column \"transport\": \"fast\" is not one of",
        ),
        (
            "src,dst,size_bytes,after\nh0,h1,5,1\nh1,h2,5,0\n",
            "row ids 0 -> 1 -> 0 wait for each other in a cycle",
        ),
        (
            "src,dst,size_bytes,after\nh0,h1,5,7\n",
            "column \"after\": row id 7 is past the file's last row id, 0",
        ),
        (
            "src,dst,size_bytes,start_ns,start\nh0,h1,5,1,1us\n",
            "give the time in one column only",
        ),
        (
            "src,dst,size_bytes,delay\nh0,h1,5,1us\n",
            "column \"delay\"",
        ),
        ("src,size_bytes\nh0,5\n", "column \"dst\": missing"),
        ("src,dst\nh0,h1\n", "give the flow a size"),
    ];
    for (csv, expected) in cases {
        let e = err(csv);
        assert!(
            e.contains("traffic[0].path") && e.contains(expected),
            "{csv:?}: {e}"
        );
        assert!(e.contains("f.csv"), "{e}");
    }
}

/// A custom topology from a nodes file and a links file (CSV or Parquet) is the same network
/// as the one listed in TOML, and runs the same; errors name the file, row id and column.
#[test]
fn custom_topologies_from_node_and_link_files_equal_their_toml_form() {
    let toml_form = "[topology]\nkind = \"custom\"\nhosts = [\"a\", \"b\", \"c\"]\nswitches = [\"s1\", \"s2\"]\n\
        links = [{ a = \"a\", b = \"s1\" }, { a = \"b\", b = \"s1\", rate = \"10Gbps\" }, \
        { a = \"s1\", b = \"s2\", delay = \"5us\", buffer = \"100pkts\" }, { a = \"c\", b = \"s2\", loss = 0.25 }]\n\
        [[traffic]]\nkind = \"flows\"\nflows = [{ src = \"a\", dst = \"c\", size = \"50KB\" }, { src = \"b\", dst = \"c\", size = \"50KB\" }]\n";
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("nodes.csv"),
        "name,kind\nb,host\nc,host\ns2,switch\n",
    )
    .unwrap();
    std::fs::write(
        dir.path().join("links.csv"),
        "a,b,rate,delay_ns,buffer_packets,loss\nb,s1,10Gbps,,,\ns1,s2,,5000,100,\nc,s2,,,,0.25\n",
    )
    .unwrap();
    let file_form = format!(
        "[topology]\nkind = \"custom\"\nhosts = [\"a\"]\nswitches = [\"s1\"]\nlinks = [{{ a = \"a\", b = \"s1\" }}]\n\
         nodes_file = {:?}\nlinks_file = {:?}\n[[traffic]]\nkind = \"flows\"\n\
         flows = [{{ src = \"a\", dst = \"c\", size = \"50KB\" }}, {{ src = \"b\", dst = \"c\", size = \"50KB\" }}]\n",
        dir.path().join("nodes.csv").display().to_string(),
        dir.path().join("links.csv").display().to_string()
    );
    let (t, f) = (scenario(toml_form, &[]), scenario(&file_form, &[]));
    assert_eq!(t.model.net.port_peer, f.model.net.port_peer);
    assert_eq!(t.model.net.n_nodes(), f.model.net.n_nodes());
    for port in 0..t.model.net.n_ports() as u32 {
        assert_eq!(
            t.model.net.class_of(port),
            f.model.net.class_of(port),
            "port {port}"
        );
    }
    assert_eq!(run_reference(&t), run_reference(&f));

    let err = |nodes: &str, links: &str| {
        std::fs::write(dir.path().join("nodes.csv"), nodes).unwrap();
        std::fs::write(dir.path().join("links.csv"), links).unwrap();
        match netstep_scenario::load_str(
            &file_form,
            "t.toml",
            "t",
            None,
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted: {nodes} / {links}"),
            Err(e) => e.to_string(),
        }
    };
    let good_nodes = "name,kind\nb,host\nc,host\ns2,switch\n";
    let cases = [
        (
            "name,kind\nb,host\nc,router\n",
            "a,b\n",
            "topology.nodes_file",
            "row id 1 (line 3), column \"kind\": expected \"host\" or \"switch\"",
        ),
        (
            good_nodes,
            "a,b\nb,s1\ns1,s9\n",
            "topology.links_file",
            "row id 1 (line 3), column \"b\": unknown node \"s9\"",
        ),
        (
            good_nodes,
            "a,b,rate\nb,s1,fast\n",
            "topology.links_file",
            "row id 0 (line 2), column \"rate\"",
        ),
        (
            good_nodes,
            "a,b,delay,delay_ns\nb,s1,1us,5\n",
            "topology.links_file",
            "column \"delay_ns\": also given as \"delay\"",
        ),
        (
            good_nodes,
            "a,b,loss\nb,s1,2\n",
            "topology.links_file",
            "column \"loss\"",
        ),
        (good_nodes, "a,b\nb,b\n", "topology.links_file", "to itself"),
        (
            good_nodes,
            "a,c\nb,s1\n",
            "topology.links_file",
            "column 2 is \"c\"",
        ),
        (
            good_nodes,
            "a,b,rate_bps\nb,s1,0\n",
            "topology.links_file",
            "row id 0 (line 2), column \"rate_bps\"",
        ),
    ];
    for (nodes, links, field, expected) in cases {
        let e = err(nodes, links);
        assert!(e.contains(field) && e.contains(expected), "{links:?}: {e}");
    }
}

/// `scenarios/workloads/on-off.toml`: the bytes the 16 sources send lie within 4 standard
/// errors of the renewal-reward expectation. Over a window T an alternating renewal process
/// with exponential on and off periods (means m_on, m_off) is on for T m_on / (m_on + m_off) on
/// average, with variance 2 T m_on^2 m_off^2 / (m_on + m_off)^3; each on period's bytes are
/// rounded up to whole 1,000 B packets (500 B on average, at most 1,000 B).
#[test]
fn the_on_off_example_sends_what_the_renewal_process_predicts() {
    let s = scenario_file("scenarios/workloads/on-off.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "on-off example");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(out.stats.drops, 0);
    let flows = &s.model.flows.flows;
    let mut sources: Vec<u32> = flows.iter().map(|f| f.src).collect();
    sources.sort_unstable();
    sources.dedup();
    assert_eq!(sources.len(), 16, "every host is a source");
    let (t, on, off, rate): (f64, f64, f64, f64) = (20e-3, 50e-6, 150e-6, 1e9);
    let expected_on = 16.0 * t * on / (on + off);
    let sd_on = (16.0 * 2.0 * t * on * on * off * off / (on + off).powi(3)).sqrt();
    let n = flows.len() as f64;
    let bytes: f64 = flows.iter().map(|f| f.size.0 as f64).sum();
    let expected = expected_on * rate / 8.0 + n * 500.0;
    // Rounding adds a uniform 0-1,000 B per flow: sd 1,000 / sqrt(12) each.
    let sd = ((sd_on * rate / 8.0).powi(2) + n * 1000f64.powi(2) / 12.0).sqrt();
    assert!(
        (bytes - expected).abs() < 4.0 * sd,
        "{bytes} B against {expected} +- {sd}"
    );
    assert_eq!(format!("{:.1}", expected_on * rate / 8.0 / 1e6), "10.0");
    assert_eq!(flows.len(), 1607);
    // Each flow is one on period: it starts inside the window and no source overlaps itself.
    for src in sources {
        let mut mine: Vec<&netstep_core::flow::FlowSpec> =
            flows.iter().filter(|f| f.src == src).collect();
        mine.sort_by_key(|f| f.start);
        assert_eq!(mine[0].start, SimTime::ZERO, "sources start on");
        assert!(mine.iter().all(|f| f.start.0 < 20_000_000_000));
    }
}

/// `scenarios/workloads/request-response.toml`: 280 flows; responses start when their request
/// arrived, requests a think time after the previous response arrived; the think times are
/// exponential with mean 20 us (sample mean within 4 standard errors).
#[test]
fn the_request_response_example_closes_the_loop() {
    let s = scenario_file("scenarios/workloads/request-response.toml", &[]);
    let out = exact_on_1_and_4_threads(&s, "request-response example");
    assert_eq!(out.flows.len(), 280);
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(assert_dependency_order(&s, &out), 280 - 7);
    let flows = &s.model.flows.flows;
    let thinks: Vec<f64> = flows
        .iter()
        .filter(|f| f.src != 0)
        .filter_map(|f| f.after.as_ref().map(|d| d.delay.0 as f64))
        .collect();
    assert_eq!(thinks.len(), 7 * 19);
    for (i, f) in flows.iter().enumerate() {
        let deps = f.after.as_ref().map(|d| d.flows.to_vec());
        if f.src == 0 {
            // A response: from the server to the client of the request just before it.
            assert_eq!(deps, Some(vec![i as u32 - 1]));
            assert_eq!(f.dst, flows[i - 1].src);
        } else if let Some(deps) = deps {
            assert_eq!(
                flows[deps[0] as usize].dst, f.src,
                "waits for its own response"
            );
        }
    }
    let mean = thinks.iter().sum::<f64>() / thinks.len() as f64;
    let se = 20e6 / (thinks.len() as f64).sqrt();
    assert!((mean - 20e6).abs() < 4.0 * se, "mean think {mean} ps");
}

/// Bad on/off and request/response blocks are refused naming the field.
#[test]
fn bad_on_off_and_request_response_blocks_name_the_field() {
    let block = |b: &str| {
        let text = format!("[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\n{b}\n");
        match netstep_scenario::load_str(
            &text,
            "t.toml",
            "t",
            Some(&repo().join("scenarios")),
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted: {b}"),
            Err(e) => e.to_string(),
        }
    };
    let on_off =
        "kind = \"on_off\"\nrate = \"1Gbps\"\non = \"1us\"\noff = \"1us\"\nduration = \"1ms\"";
    for (extra, field) in [
        ("sources = 0", "traffic[0].sources"),
        ("periods = \"pareto\"\nshape = 1.0", "traffic[0].shape"),
        ("periods = \"weibull\"", "traffic[0].periods"),
    ] {
        let e = block(&format!("{on_off}\n{extra}"));
        assert!(e.contains(field), "{extra}: {e}");
    }
    let e = block(&on_off.replace("on = \"1us\"", "on = \"0s\""));
    assert!(e.contains("traffic[0].on") && e.contains("positive"), "{e}");
    let rr = "kind = \"request_response\"\nexchanges = 2\nserver = \"h0\"";
    for (extra, field) in [
        (
            "response = \"1KB\"\ncdf = \"../datasets/websearch.toml\"",
            "traffic[0].cdf",
        ),
        ("", "traffic[0].response"),
        (
            "response = \"1KB\"\nclients = [\"h1\", \"h0\"]",
            "traffic[0].clients[1]",
        ),
        ("response = \"1KB\"\nthink = 5", "traffic[0].think"),
    ] {
        let e = block(&format!("{rr}\n{extra}"));
        assert!(e.contains(field), "{extra}: {e}");
    }
    let e = block("kind = \"request_response\"\nexchanges = 0\nresponse = \"1KB\"");
    assert!(e.contains("traffic[0].exchanges"), "{e}");
}

/// `scenarios/workloads/traffic-matrix.toml`: 110 flows, each between the racks of one row, in
/// shares 3/5, 1/5, 1/5 within 4 binomial standard deviations; exact on 1 and 4 threads.
#[test]
fn the_traffic_matrix_example_shares_arrivals_by_weight() {
    let s = scenario_file("scenarios/workloads/traffic-matrix.toml", &[]);
    let flows = &s.model.flows.flows;
    assert_eq!(flows.len(), 110);
    // Racks (edge switches of FatTree-4): edge0_0 = h0, h1; edge0_1 = h2, h3; edge1_0 = h4,
    // h5; edge2_0 = h8, h9; edge3_0 = h12, h13.
    let rack = |h: u32| h / 2;
    let mut counts = [0usize; 3];
    for f in flows.iter() {
        let row = match (rack(f.src), rack(f.dst)) {
            (0, 2) => 0,
            (4, 6) => 1,
            (1, 1) => 2,
            other => panic!("flow between racks {other:?}"),
        };
        counts[row] += 1;
        assert_ne!(f.src, f.dst);
    }
    let n = flows.len() as f64;
    for (count, p) in counts.iter().zip([0.6, 0.2, 0.2]) {
        let sd = (n * p * (1.0 - p)).sqrt();
        assert!((*count as f64 - n * p).abs() < 4.0 * sd, "{counts:?}");
    }
    assert_eq!(counts, [66, 19, 25]);
    let out = exact_on_1_and_4_threads(&s, "traffic matrix example");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
}

/// Bad traffic matrices are refused naming the file, row and column.
#[test]
fn bad_traffic_matrices_name_the_file_row_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let err = |csv: &str| {
        std::fs::write(dir.path().join("m.csv"), csv).unwrap();
        let text = format!(
            "[topology]\nkind = \"fat_tree\"\nk = 4\n[[traffic]]\nkind = \"poisson\"\nload = 0.1\n\
             cdf = \"datasets/websearch.toml\"\nduration = \"1ms\"\nmatrix = {:?}\n",
            dir.path().join("m.csv").display().to_string()
        );
        match netstep_scenario::load_str(
            &text,
            "t.toml",
            "t",
            Some(&repo()),
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted: {csv}"),
            Err(e) => e.to_string(),
        }
    };
    for (csv, expected) in [
        (
            "src,dst,weight\nh0,edge0_0,1\n",
            "row id 0 (line 2), column \"dst\": \"edge0_0\" is a switch",
        ),
        (
            "src,dst,weight\nh0,h9,1\nh0,h0,1\n",
            "row id 1 (line 3), column \"dst\": the same host",
        ),
        (
            "src,dst,weight\nh0,h9,-1\n",
            "column \"weight\": must be a finite number >= 0",
        ),
        ("src,dst,weight\nh0,hx,1\n", "unknown node \"hx\""),
        ("src,dst,weight\nh0,h9,0\n", "no row has a positive weight"),
        (
            "src,dst,weight\ncore0_0,core0_1,1\n",
            "no host is attached to \"core0_0\"",
        ),
    ] {
        let e = err(csv);
        assert!(
            e.contains("traffic[0].matrix") && e.contains(expected),
            "{csv:?}: {e}"
        );
    }
}

/// The nodes a packet from `src` to `dst` visits under the model's routing (hash 0).
fn walk(net: &netstep_core::network::Network, src: u32, dst: u32) -> Vec<u32> {
    let mut at = src;
    let mut visited = vec![src];
    while at != dst {
        let port = net.route(at, dst, 0).expect("a route");
        at = net.port_peer[net.port_id(at, port) as usize];
        visited.push(at);
        assert!(visited.len() <= net.n_nodes(), "a loop");
    }
    visited
}

/// Hops of the shortest path between every pair of nodes from `src` (BFS over all links).
fn bfs(net: &netstep_core::network::Network, src: u32) -> Vec<u32> {
    let mut dist = vec![u32::MAX; net.n_nodes()];
    dist[src as usize] = 0;
    let mut queue = std::collections::VecDeque::from([src]);
    while let Some(n) = queue.pop_front() {
        for local in 0..net.degree(n) {
            let peer = net.port_peer[net.port_id(n, local) as usize];
            if dist[peer as usize] == u32::MAX {
                dist[peer as usize] = dist[n as usize] + 1;
                queue.push_back(peer);
            }
        }
    }
    dist
}

/// `scenarios/workloads/rail-optimized.toml`: the three routes its header names, each alone at
/// slowdown 1.00; and over every pair of GPUs, with and without PXN, every route is a shortest
/// path, traffic within a server stays on its NVSwitch, along a rail on the rail leaf (no
/// spine), and across rails uses a spine (or, with PXN, the NVSwitch then the destination's
/// rail, no spine).
#[test]
fn rail_optimized_routes_keep_rails_and_servers() {
    let s = scenario_file("scenarios/workloads/rail-optimized.toml", &[]);
    let all: Vec<String> = s.node_names.clone();
    let names = |path: Vec<u32>| -> Vec<String> {
        path.into_iter().map(|n| all[n as usize].clone()).collect()
    };
    let net = &s.model.net;
    assert_eq!(
        names(walk(net, 0, 1)),
        ["h0", "nic0_0", "nvs0", "nic0_1", "h1"]
    );
    assert_eq!(
        names(walk(net, 0, 4)),
        ["h0", "nic0_0", "rail0", "nic1_0", "h4"]
    );
    let cross = names(walk(net, 0, 5));
    assert_eq!(cross.len(), 7);
    assert_eq!(&cross[..3], ["h0", "nic0_0", "rail0"]);
    assert!(cross[3].starts_with("spine"));
    assert_eq!(&cross[4..], ["rail1", "nic1_1", "h5"]);
    let out = exact_on_1_and_4_threads(&s, "rail-optimized example");
    for (id, o) in out.flows.iter().enumerate() {
        let ideal =
            netstep_core::flow::ideal_fct(&s.model.net, &s.model.flows, id as u32, 1).unwrap();
        assert_eq!(o.end.unwrap() - o.start.unwrap(), ideal, "flow {id} alone");
    }
    for pxn in [false, true] {
        let s = scenario_file(
            "scenarios/workloads/rail-optimized.toml",
            &[&format!("topology.pxn={pxn}")],
        );
        let net = &s.model.net;
        let (gpus, hosts) = (4u32, 16u32);
        for src in 0..hosts {
            let dist = bfs(net, src);
            for dst in (0..hosts).filter(|&d| d != src) {
                let path = walk(net, src, dst);
                assert_eq!(
                    path.len() as u32 - 1,
                    dist[dst as usize],
                    "{src} -> {dst}: shortest"
                );
                let visited = names(path);
                let spine = visited.iter().any(|n| n.starts_with("spine"));
                let nvswitch = visited.iter().any(|n| n.starts_with("nvs"));
                let rails: Vec<&String> =
                    visited.iter().filter(|n| n.starts_with("rail")).collect();
                if src / gpus == dst / gpus {
                    assert!(nvswitch && !spine && rails.is_empty(), "{visited:?}");
                } else if src % gpus == dst % gpus {
                    assert!(!nvswitch && !spine && rails.len() == 1, "{visited:?}");
                } else if pxn {
                    assert!(nvswitch && !spine && rails.len() == 1, "{visited:?}");
                    assert_eq!(*rails[0], format!("rail{}", dst % gpus));
                } else {
                    assert!(!nvswitch && spine && rails.len() == 2, "{visited:?}");
                }
            }
        }
    }
}

/// A rail-optimized fabric without spines needs PXN; zero servers or GPUs are refused.
#[test]
fn bad_rail_optimized_fabrics_name_the_field() {
    for (fields, field) in [
        ("servers = 2\ngpus = 4\nspines = 0", "topology.spines"),
        ("servers = 0\ngpus = 4\nspines = 1", "topology.servers"),
        ("servers = 2\ngpus = 0\nspines = 1", "topology.gpus"),
    ] {
        let text = format!(
            "[topology]\nkind = \"rail_optimized\"\n{fields}\n[[traffic]]\nkind = \"flows\"\nflows = [{{ src = \"h0\", dst = \"h1\", size = \"1KB\" }}]\n"
        );
        let e = match netstep_scenario::load_str(
            &text,
            "t.toml",
            "t",
            None,
            &[],
            &netstep_scenario::Limits::machine(),
        ) {
            Ok(_) => panic!("accepted: {fields}"),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(field), "{fields}: {e}");
    }
    // With PXN and no spines every pair is still reachable.
    let s = scenario(
        "[topology]\nkind = \"rail_optimized\"\nservers = 3\ngpus = 2\nspines = 0\npxn = true\n[[traffic]]\nkind = \"all_to_all\"\nsize = \"10KB\"\n",
        &[],
    );
    let out = exact_on_1_and_4_threads(&s, "rail without spines, PXN");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
}

/// `netstep run` on two collective jobs at once writes `collectives.parquet` (one row per job,
/// iteration and step: flows, bytes, start and end from the flow rows) and prints each job's
/// completion time.
#[test]
fn collectives_parquet_and_the_summary_report_each_job() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::{UInt32Type, UInt64Type};
    let dir = tempfile::tempdir().unwrap();
    let text = collective(
        "collective = \"ring_all_reduce\"\nsize = \"4MB\"\nranks = [\"h0\", \"h1\", \"h2\", \"h3\"]\n\
         iterations = 2\njob = \"left\"\n[[traffic]]\nkind = \"collective\"\ncollective = \"all_gather\"\n\
         size = \"2MB\"\nranks = [\"h4\", \"h5\"]\nchunks = 2\nstart = \"10us\"\njob = \"right\"",
        ONE_LEAF,
    );
    std::fs::write(dir.path().join("c.toml"), &text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_netstep"))
        .args(["run", "c.toml", "--out", "run"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let s = scenario(&text, &[]);
    let result = run_reference(&s);
    let flows = &s.model.flows.flows;
    // left: 2 iterations x 6 steps x 4 flows; right: 1 step x 2 sends x 2 chunks.
    assert_eq!(flows.len(), 48 + 4);
    let job_end = |range: std::ops::Range<usize>, start: u64| {
        let end = range
            .map(|f| result.flows.get(f).end.unwrap().0)
            .max()
            .unwrap();
        SimTime(end - start).to_string()
    };
    assert!(
        stdout.contains(&format!("job left       completion {}", job_end(0..48, 0))),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!(
            "job right      completion {}",
            job_end(48..52, 10_000_000)
        )),
        "{stdout}"
    );
    let file = std::fs::File::open(dir.path().join("run/collectives.parquet")).unwrap();
    let batches: Vec<arrow_array::RecordBatch> =
        parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(file, 1024)
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let batch = &batches[0];
    assert_eq!(batch.num_rows(), 12 + 1);
    let col = |name: &str| batch.column_by_name(name).unwrap().clone();
    let job = col("job");
    let job = job.as_string::<i32>();
    let (iteration, step, count) = (col("iteration"), col("step"), col("flows"));
    let (start, end, bytes) = (col("start_ns"), col("end_ns"), col("bytes"));
    for row in 0..13 {
        let (it, st) = (
            iteration.as_primitive::<UInt32Type>().value(row),
            step.as_primitive::<UInt32Type>().value(row),
        );
        let members: Vec<usize> = if job.value(row) == "left" {
            let first = ((it * 6 + st) * 4) as usize;
            (first..first + 4).collect()
        } else {
            (48..52).collect()
        };
        assert_eq!(
            count.as_primitive::<UInt32Type>().value(row),
            members.len() as u32
        );
        let sum: u64 = members.iter().map(|&f| flows[f].size.0).sum();
        assert_eq!(bytes.as_primitive::<UInt64Type>().value(row), sum);
        let first = members
            .iter()
            .map(|&f| result.flows.get(f).start.unwrap().as_ns())
            .min();
        let last = members
            .iter()
            .map(|&f| result.flows.get(f).end.unwrap().as_ns())
            .max();
        assert_eq!(Some(start.as_primitive::<UInt64Type>().value(row)), first);
        assert_eq!(Some(end.as_primitive::<UInt64Type>().value(row)), last);
    }
    // left: 6 steps of 1 MB (4 sends of 4 MB / 4); right: 2 sends of 1 MB in 2 chunks.
    assert_eq!(bytes.as_primitive::<UInt64Type>().value(0), 4_000_000);
    assert_eq!(bytes.as_primitive::<UInt64Type>().value(12), 2_000_000);
}

/// `scenarios/workloads/links-file.toml`: the network read from its CSV files equals the same
/// topology as TOML lists, port by port, and so does the run; all three flows complete.
#[test]
fn the_links_file_example_equals_its_toml_form() {
    let s = scenario_file("scenarios/workloads/links-file.toml", &[]);
    let hosts = ["a0", "a1", "a2", "b0", "b1", "b2"];
    let mut links = String::new();
    for h in hosts {
        let tor = if h.starts_with('a') { "tor_a" } else { "tor_b" };
        links.push_str(&format!(
            "{{ a = \"{h}\", b = \"{tor}\", rate = \"10Gbps\" }}, "
        ));
    }
    links.push_str("{ a = \"tor_a\", b = \"core\", rate = \"40Gbps\", buffer = \"4MB\" }, ");
    links.push_str("{ a = \"tor_b\", b = \"core\", rate = \"40Gbps\", buffer = \"4MB\" }");
    let text = std::fs::read_to_string(repo().join("scenarios/workloads/links-file.toml"))
        .unwrap()
        .replace(
            "nodes_file = \"links-file-nodes.csv\"\nlinks_file = \"links-file-links.csv\"",
            &format!(
                "hosts = {hosts:?}\nswitches = [\"tor_a\", \"tor_b\", \"core\"]\nlinks = [{links}]"
            ),
        );
    let t = scenario(&text, &[]);
    assert_eq!(s.model.net.port_peer, t.model.net.port_peer);
    for port in 0..s.model.net.n_ports() as u32 {
        assert_eq!(
            s.model.net.class_of(port),
            t.model.net.class_of(port),
            "port {port}"
        );
    }
    let out = exact_on_1_and_4_threads(&s, "links-file example");
    assert!(out.flows.iter().all(|f| f.end.is_some()));
    assert_eq!(out, run_reference(&t));
}

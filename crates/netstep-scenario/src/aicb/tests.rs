//! Tests of the AICB reader and SimAI's groups: real AICB and SimAI files (a few rows each,
//! `tests/fixtures/aicb/README.md` names their sources), SimAI's own group dumps, and every
//! error naming its file, line and field.

use std::path::{Path, PathBuf};

use super::groups::{Dimension, GroupLayout};
use super::header::Policy;
use super::workload::{CollectiveKind, Comm, Phase, read};

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/aicb")
        .join(name)
}

fn phase(compute_ns: u64, comm: Comm, bytes: u64) -> Phase {
    Phase {
        compute_ns,
        comm,
        bytes,
    }
}

fn collective(kind: CollectiveKind, group: Dimension) -> Comm {
    Comm::Collective { kind, group }
}

use CollectiveKind::{AllGather, AllReduce, AllToAll, ReduceScatter};
use Dimension::{Dp, DpEp, Ep, Tp};

// ---- Real files -------------------------------------------------------------------------

/// AICB's old TP-only header: the five other sizes take netstep's defaults and are listed;
/// `BROADCAST` (the `norm` row) is kept apart from `NONE`; bare types are TP in fwd/ig and DP
/// in wg. Expected values are the fixture's own columns.
#[test]
fn aicb_megatron_file_with_a_tp_only_header() {
    let path = fixture_path("l7b-megatron-tp2-head.txt");
    let workload = read(&path).unwrap();
    let header = &workload.header;
    assert_eq!(header.policy, Policy::HybridTransformerFwdInBckwd);
    assert_eq!(header.tp, 2);
    assert_eq!(
        (header.ep, header.pp, header.vpp, header.ga, header.all_gpus),
        (1, 1, 1, 1, None)
    );
    assert_eq!(header.defaulted, ["ep", "pp", "vpp", "ga", "all_gpus"]);
    assert!(header.checkpoints.is_empty() && header.checkpoint_initiates.is_empty());
    assert_eq!(header.pp_comm, 0);
    assert_eq!(workload.file, path.display().to_string());
    assert_eq!(workload.rows.len(), 6);
    let names: Vec<&str> = workload.rows.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "norm",
            "grad_norm",
            "layernorm",
            "embedding_layer",
            "attention_layer",
            "mlp_layer"
        ]
    );
    // norm -1 0 BROADCAST 16384 1 NONE 0 1 NONE 0 100
    let norm = &workload.rows[0];
    assert_eq!(norm.line, 3);
    assert_eq!(norm.forward, phase(0, Comm::Broadcast, 16384));
    assert_eq!(norm.forward.collective(), None);
    assert_eq!(norm.input_grad, phase(1, Comm::None, 0));
    assert_eq!(norm.weight_grad, phase(1, Comm::None, 0));
    assert_eq!(norm.update_ns, 100);
    // grad_norm -1 1 ALLGATHER 6754926592 1 NONE 0 1 REDUCESCATTER 13509853184 100
    let grad_norm = &workload.rows[1];
    assert_eq!(
        grad_norm.forward.collective(),
        Some((AllGather, Tp, 6_754_926_592))
    );
    assert_eq!(
        grad_norm.weight_grad.collective(),
        Some((ReduceScatter, Dp, 13_509_853_184))
    );
    // attention_layer -1 539986 ALLREDUCE 16777216 592000 ALLREDUCE 16777216 592000 NONE 0 100
    let attention = &workload.rows[4];
    assert_eq!(attention.line, 7);
    assert_eq!(
        attention.forward,
        phase(539_986, collective(AllReduce, Tp), 16_777_216)
    );
    assert_eq!(
        attention.input_grad,
        phase(592_000, collective(AllReduce, Tp), 16_777_216)
    );
    assert_eq!(attention.weight_grad, phase(592_000, Comm::None, 0));
}

/// Columns padded with tabs and runs of spaces (AICB's DeepSpeed and GPT-175B files) read as
/// SimAI reads them, split on any whitespace.
#[test]
fn aicb_files_with_mixed_whitespace() {
    let deepspeed = read(&fixture_path("l65b-deepspeed-tp1-head.txt")).unwrap();
    assert_eq!(deepspeed.header.tp, 1);
    // Llama_layer1 -1 14356000 NONE 0   4756000 ALLGATHER 357468 1 REDUCESCATTER 1889785610 100
    let layer = &deepspeed.rows[0];
    assert_eq!(layer.name, "Llama_layer1");
    assert_eq!(layer.forward, phase(14_356_000, Comm::None, 0));
    assert_eq!(
        layer.input_grad,
        phase(4_756_000, collective(AllGather, Tp), 357_468)
    );
    assert_eq!(
        layer.weight_grad,
        phase(1, collective(ReduceScatter, Dp), 1_889_785_610)
    );
    assert_eq!(deepspeed.rows.len(), 3);

    let gpt = read(&fixture_path("g175b-megatron-tp8-head.txt")).unwrap();
    assert_eq!(gpt.header.tp, 8);
    let rows: Vec<_> = gpt
        .rows
        .iter()
        .map(|r| {
            (
                r.name.as_str(),
                r.input_grad.collective(),
                r.weight_grad.collective(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("grad_gather", None, Some((AllGather, Dp, 1))),
            (
                "grad_param",
                None,
                Some((ReduceScatter, Dp, 11_175_321_600))
            ),
            ("layernorm", Some((AllReduce, Tp, 5_587_660_800)), None),
        ]
    );
    assert_eq!(gpt.rows[1].input_grad.compute_ns, 13_740_000);
}

/// AICB's MICRO benchmark: no header keys at all, so every size is a default.
#[test]
fn aicb_micro_benchmark() {
    let micro = read(&fixture_path("micro-all-to-all-head.txt")).unwrap();
    assert_eq!(micro.header.policy, Policy::Micro);
    assert_eq!(micro.header.tp, 1);
    assert_eq!(micro.header.defaulted.len(), 6);
    let sizes: Vec<_> = micro
        .rows
        .iter()
        .map(|r| (r.forward.comm, r.weight_grad.collective(), r.update_ns))
        .collect();
    assert_eq!(
        sizes,
        [
            (Comm::None, Some((AllToAll, Dp, 4096)), 1),
            (Comm::None, Some((AllToAll, Dp, 8192)), 1),
            (Comm::None, Some((AllToAll, Dp, 16384)), 1),
        ]
    );
}

/// SimAI's own example: the full header with `pp_comm` written without its colon, and the
/// `_EP` and `_DP_EP` suffixes in every column.
#[test]
fn aicb_simai_example_with_expert_parallel_types() {
    let workload = read(&fixture_path("simai-analytical-head.txt")).unwrap();
    let h = &workload.header;
    assert_eq!(
        (h.tp, h.ep, h.pp, h.vpp, h.ga, h.all_gpus, h.pp_comm),
        (2, 16, 12, 8, 24, Some(9216), 50_331_648)
    );
    assert!(h.defaulted.is_empty());
    assert!(h.group_layout(9216, 8).is_ok());
    let rows = &workload.rows;
    assert_eq!(rows.len(), 14);
    // moe_grad_norm1 -1 1 NONE 0 1 NONE 0 1 ALLGATHER_DP_EP 19327352832 100
    assert_eq!(
        rows[4].weight_grad.collective(),
        Some((AllGather, DpEp, 19_327_352_832))
    );
    assert_eq!(
        rows[5].weight_grad.collective(),
        Some((ReduceScatter, DpEp, 38_654_705_664))
    );
    // attention_column -1 1750840 ALLGATHER 50331648 875420 REDUCESCATTER 0 875420 NONE 0 100
    assert_eq!(
        rows[7].input_grad.collective(),
        Some((ReduceScatter, Tp, 0))
    );
    // mlp_moelayer -1 1 ALLTOALL 25165824 1 ALLTOALL 25165824 ...
    assert_eq!(
        rows[10].forward.collective(),
        Some((AllToAll, Tp, 25_165_824))
    );
    // mlp_moelayer -1 1 ALLTOALL_EP 100663296 1 ALLTOALL_EP 100663296 ...
    assert_eq!(rows[11].line, 14);
    assert_eq!(
        rows[11].forward.collective(),
        Some((AllToAll, Ep, 100_663_296))
    );
    assert_eq!(
        rows[11].input_grad.collective(),
        Some((AllToAll, Ep, 100_663_296))
    );
}

/// AICB's L65B-M1-C05 declares 839 rows and holds 33: refused, naming both numbers (here the
/// first 3 rows under its header and count).
#[test]
fn aicb_file_with_a_wrong_row_count_is_refused() {
    let path = fixture_path("l65b-megatron-count-839-head.txt");
    let error = read(&path).unwrap_err();
    assert_eq!(
        error.to_string(),
        format!(
            "{}:2: row count: line 2 declares 839 rows but the file has 3 (on lines 3-5); \
             expected the count to equal the rows that follow (SimAI would ignore extra rows or \
             read past the end)",
            path.display()
        )
    );
}

// ---- SimAI's group dumps ----------------------------------------------------------------

/// One group of a group fixture (see the fixture files' headers).
struct DumpGroup {
    dimension: Dimension,
    servers: u32,
    ranks: Vec<u32>,
    /// Per ring channel, the next rank of each of `ranks`.
    channels: Vec<Vec<u32>>,
}

/// A group fixture: the layout, whether it lists every group, and its groups.
fn read_dump(name: &str) -> (GroupLayout, bool, Vec<DumpGroup>) {
    let text = std::fs::read_to_string(fixture_path(name)).unwrap();
    let numbers =
        |words: &[&str]| -> Vec<u32> { words.iter().map(|w| w.parse().unwrap()).collect() };
    let mut layout = None;
    let mut groups: Vec<DumpGroup> = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "layout" => {
                let n = numbers(&words[1..5]);
                let built = GroupLayout::new(n[0], n[1], n[2], n[3]).unwrap();
                layout = Some((built, words[5] == "all"));
            }
            "group" => {
                let dimension = *Dimension::ALL
                    .iter()
                    .find(|d| d.name() == words[1])
                    .unwrap();
                assert_eq!((words[2], words[4]), ("servers", "ranks"));
                groups.push(DumpGroup {
                    dimension,
                    servers: words[3].parse().unwrap(),
                    ranks: numbers(&words[5..]),
                    channels: Vec::new(),
                });
            }
            word => {
                let copies = match word.strip_prefix("next*") {
                    Some(k) => k.parse().unwrap(),
                    None if word == "next" => 1,
                    None => panic!("{name}: unexpected line {line:?}"),
                };
                let next = numbers(&words[1..]);
                let group = groups.last_mut().unwrap();
                assert_eq!(next.len(), group.ranks.len());
                group.channels.extend(std::iter::repeat_n(next, copies));
            }
        }
    }
    let (layout, all) = layout.unwrap();
    (layout, all, groups)
}

/// netstep's groups and rings equal SimAI's dump: each dumped group is netstep's group of
/// its first rank, with the same servers and the same ring channels in order; a whole dump
/// also lists exactly netstep's groups of every dimension of more than one rank, in order.
fn check_against_dump(name: &str) {
    let (layout, all, dumped) = read_dump(name);
    assert!(!dumped.is_empty());
    for want in &dumped {
        let group = layout.group_of(want.ranks[0], want.dimension).unwrap();
        let what = format!("{name}: {} group of rank {}", want.dimension, want.ranks[0]);
        assert_eq!(group.ranks, want.ranks, "{what}");
        assert_eq!(group.servers, want.servers, "{what}");
        let channels: Vec<Vec<u32>> = group
            .rings()
            .unwrap()
            .iter()
            .map(|ring| want.ranks.iter().map(|&r| ring.next(r).unwrap()).collect())
            .collect();
        assert_eq!(channels, want.channels, "{what}");
    }
    if all {
        for dimension in Dimension::ALL {
            let want: Vec<&Vec<u32>> = dumped
                .iter()
                .filter(|g| g.dimension == dimension)
                .map(|g| &g.ranks)
                .collect();
            let formed = layout.groups(dimension);
            if layout.size(dimension) == 1 {
                assert!(want.is_empty(), "{name}: SimAI forms no {dimension} group");
                continue;
            }
            let got: Vec<&Vec<u32>> = formed.iter().map(|g| &g.ranks).collect();
            assert_eq!(got, want, "{name}: {dimension} groups");
        }
    }
}

#[test]
fn aicb_groups_equal_simai_w128_tp2_ep32() {
    check_against_dump("groups-w128-tp2-ep32.txt");
}

#[test]
fn aicb_groups_equal_simai_w128_tp8_ep1() {
    check_against_dump("groups-w128-tp8-ep1.txt");
}

#[test]
fn aicb_groups_equal_simai_w1024_tp2_ep32() {
    check_against_dump("groups-w1024-tp2-ep32-some.txt");
}

// ---- Group invariants --------------------------------------------------------------------

/// On layouts of various shapes: every dimension partitions the ranks into groups of its size;
/// a rank's TP and DP groups meet only in it, as do its EP and DP_EP groups, both inside its DP
/// group; each ring visits its group's ranks once, `prev` undoes `next`, and ring `c` starts
/// at the group's `c`-th lowest rank (SimAI's rotation `c` of the local ranks).
#[test]
fn aicb_groups_partition_the_ranks_and_rings_visit_each_once() {
    let layouts = [
        (16, 8, 2, 4),
        (32, 8, 8, 2),
        (64, 8, 16, 2),
        (48, 8, 4, 2),
        (16, 4, 1, 4),
        (8, 8, 8, 1),
        (24, 8, 12, 1),
    ];
    for (world, gps, tp, ep) in layouts {
        let layout = GroupLayout::new(world, gps, tp, ep).unwrap();
        let what = format!("W {world} gps {gps} TP {tp} EP {ep}");
        for dimension in Dimension::ALL {
            let mut seen = vec![0; world as usize];
            for group in layout.groups(dimension) {
                assert_eq!(group.ranks.len() as u32, layout.size(dimension), "{what}");
                for &rank in &group.ranks {
                    seen[rank as usize] += 1;
                    assert_eq!(layout.group_of(rank, dimension).unwrap(), group, "{what}");
                }
                let rings = group.rings().unwrap();
                let mut sorted = group.ranks.clone();
                sorted.sort_unstable();
                if sorted.len() < 2 {
                    assert!(rings.is_empty());
                }
                for (c, ring) in rings.iter().enumerate() {
                    assert_eq!(ring.ranks()[0], sorted[c], "{what}: {dimension} ring {c}");
                    let mut visited = ring.ranks().to_vec();
                    visited.sort_unstable();
                    assert_eq!(visited, sorted, "{what}: {dimension} ring {c}");
                    for &rank in &group.ranks {
                        assert_eq!(ring.prev(ring.next(rank).unwrap()), Some(rank));
                    }
                }
            }
            assert!(seen.iter().all(|&n| n == 1), "{what}: {dimension}");
        }
        for rank in 0..world {
            let of = |d| layout.group_of(rank, d).unwrap().ranks;
            let meet = |a: &[u32], b: &[u32]| -> Vec<u32> {
                a.iter().copied().filter(|r| b.contains(r)).collect()
            };
            assert_eq!(meet(&of(Tp), &of(Dp)), [rank], "{what}");
            assert_eq!(meet(&of(Ep), &of(DpEp)), [rank], "{what}");
            assert_eq!(meet(&of(Ep), &of(Dp)), of(Ep), "{what}");
            assert_eq!(meet(&of(DpEp), &of(Dp)), of(DpEp), "{what}");
        }
        assert_eq!(layout.group_of(world, Tp), None);
        assert_eq!(layout.group(Dp, layout.group_count(Dp)), None);
    }
}

/// Layouts SimAI's `MockNcclGroup` forms no groups for are refused, saying why.
#[test]
fn aicb_group_layouts_simai_cannot_form_are_refused() {
    let cases = [
        (
            (12, 8, 2, 1),
            "12 GPUs are not a whole number of servers of 8 GPUs",
        ),
        ((16, 8, 3, 1), "TP 3 does not divide the 16 GPUs"),
        (
            (16, 8, 2, 3),
            "EP 3 does not divide DP = 16 GPUs / TP 2 = 8",
        ),
        ((16, 8, 0, 1), "must all be at least 1"),
    ];
    for ((world, gps, tp, ep), message) in cases {
        let error = GroupLayout::new(world, gps, tp, ep).unwrap_err();
        assert!(error.contains(message), "{error}");
    }
}

/// TP 3 on 8-GPU servers spreads a DP group unevenly (ranks 0 3 6 | 9 12 15 | 18 21), so
/// SimAI's ring, which repeats the first server's offsets on every server, would skip 18 and
/// 21: refused. (The TP groups themselves SimAI counts as one server each, so their rings are
/// whole.)
#[test]
fn aicb_a_group_spread_unevenly_has_no_rings() {
    let layout = GroupLayout::new(24, 8, 3, 1).unwrap();
    let dp = layout.group_of(0, Dp).unwrap();
    assert_eq!(dp.servers, 3);
    let error = dp.rings().unwrap_err();
    assert!(
        error.starts_with("DP group 0 (ranks 0 3 6 9 12 15 18 21) is spread unevenly over its 3 servers: SimAI's ring channel 0 would visit 0 3 6 9 12 15 instead"),
        "{error}"
    );
    let tp = layout.group_of(6, Tp).unwrap();
    assert_eq!((tp.ranks.as_slice(), tp.servers), ([6, 7, 8].as_slice(), 1));
    assert_eq!(tp.rings().unwrap().len(), 3);
}

/// The walker order of each policy and the flow count by arithmetic against the expansion.
#[test]
fn schedules_follow_simai_s_walker_order_and_count_their_flows() {
    use super::schedule::{Pass, expand, flow_count, plan};
    let text = |policy: &str| {
        format!(
            "{policy} model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 8\n2\n\
             a -1 10 ALLREDUCE 4096 20 ALLGATHER 4096 30 REDUCESCATTER 8192 5\n\
             b -1 11 NONE 0 21 ALLTOALL 4096 31 ALLREDUCE 8192 5\n"
        )
    };
    let order = |policy: &str| {
        let w = super::parse(&text(policy), "w.txt").unwrap();
        let layout = w.header.group_layout(8, 4).unwrap();
        let s = plan(&w, &layout).unwrap();
        let counted = flow_count(&s, &layout).unwrap();
        let mut emitted = 0u64;
        let job = expand(
            &s,
            &layout,
            (0..8).collect(),
            (netstep_core::units::SimTime::ZERO, true),
            0,
            |_| {
                emitted += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(counted, emitted, "{policy}");
        assert_eq!(job.flows.len() as u64, emitted);
        s.info
            .iter()
            .map(|i| (i.row, i.pass, i.collective.is_some()))
            .collect::<Vec<_>>()
    };
    use Pass::*;
    assert_eq!(
        order("HYBRID_TRANSFORMER"),
        [
            (0, Forward, true),
            (1, Forward, false),
            (1, InputGrad, true),
            (1, WeightGrad, true),
            (0, InputGrad, true),
            (0, WeightGrad, true),
        ]
    );
    assert_eq!(
        order("DATA"),
        [
            (0, Forward, false),
            (1, Forward, false),
            (1, WeightGrad, true),
            (1, InputGrad, false),
            (0, WeightGrad, true),
        ]
    );
    assert_eq!(
        order("MICRO"),
        [(0, WeightGrad, true), (1, WeightGrad, true)]
    );
}

/// Groups of one dimension can have different ring counts (EP windows of 2 ranks on servers of
/// 3 GPUs: ranks 0-1 share a server, 2-3 straddle two, 4-5 share one): the flow count and the
/// expansion take each group's own.
#[test]
fn each_group_counts_its_own_ring_channels() {
    use super::schedule::{expand, flow_count, plan};
    let text = "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 2 pp: 1 vpp: 1 ga: 1 \
                all_gpus: 6\n1\n\
                a -1 10 NONE 0 20 NONE 0 30 ALLREDUCE_EP 8192 5\n";
    let w = super::parse(text, "w.txt").unwrap();
    let layout = w.header.group_layout(6, 3).unwrap();
    let counts = layout.channel_counts(Dimension::Ep).unwrap();
    assert_eq!(counts, vec![2, 1, 2]);
    let s = plan(&w, &layout).unwrap();
    let mut emitted = 0u64;
    expand(
        &s,
        &layout,
        (0..6).collect(),
        (netstep_core::units::SimTime::ZERO, true),
        0,
        |_| {
            emitted += 1;
            Ok(())
        },
    )
    .unwrap();
    // All-reduce on 2 ranks: 2 steps per rank per channel; 5 channels over the 3 groups.
    assert_eq!(emitted, 5 * 2 * 2);
    assert_eq!(flow_count(&s, &layout).unwrap(), emitted);
}

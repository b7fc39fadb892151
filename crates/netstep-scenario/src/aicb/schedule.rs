//! A workload's schedule: the ops every rank runs (SimAI's walker order) and the flows of
//! their collectives as SimAI's NCCL model decomposes them, as a [`JobSpec`] for the engine's
//! walkers ([`netstep_core::job`]).
//!
//! **Op order** (`Workload.cc`, SimAI `f5efb5a`):
//!
//! - `HYBRID_TRANSFORMER` and `HYBRID_TRANSFORMER_FWD_IN_BCKWD`: the forward pass, rows in
//!   file order (compute, then a blocking collective on the model queue); then the backward
//!   pass, rows in reverse: input-gradient compute and blocking collective (model queue), then
//!   weight-gradient compute and a non-blocking collective (data queue). FWD_IN_BCKWD raises
//!   forward collectives of 1-4,095 bytes to 4,096. One pass (SimAI on ns-3 runs one); the
//!   forward wait for the previous pass's weight gradient therefore never waits.
//! - `DATA`: forward compute only; backward from the last row: weight-gradient compute and
//!   non-blocking collective, then (except for row 0) input-gradient compute with no collective.
//! - `MICRO` (a netstep extension: SimAI-ns3 runs row 0 once over an undefined group): every
//!   row's weight-gradient collective in file order, each blocking, after its compute.
//!
//! After every op the rank waits 1 ns (SimAI schedules its walker 1 tick later at each state
//! change), and every collective's completion is followed by its row's update time. With
//! TP = 1 SimAI involves no dimension for forward and input-gradient collectives, so it runs
//! none of them (all-to-alls of EP included): netstep does the same, and says so at build.
//! A collective over a one-rank group runs nothing.
//!
//! **Flows** per collective, per group of its dimension, per ring channel of the group
//! ([`super::Group::rings`]), with `n` ranks, `C` channels and `D` bytes:
//!
//! - all-reduce: `2(n-1)` steps, each rank sending `D / n / C` bytes (integer divisions, as
//!   SimAI) to the next rank of the ring; reduce-scatter and all-gather: `n-1` such steps. A
//!   step's flow from rank `r` is released by the arrival at `r` of the previous step's flow;
//!   step 0 flows are initial. A chunk of 0 bytes is refused (SimAI generates no flow and
//!   never finishes the collective).
//! - all-to-all: one flow of `D / n` bytes (at least 1, as SimAI sends 0 as 1) from every rank
//!   to every other, all initial.
//!
//! A collective of 0 bytes of a known type is refused: SimAI creates it with no stream and
//! never finishes it (a hang, for a blocking one).

use netstep_core::job::{JobBuilder, JobSpec, Op, Queue};
use netstep_core::units::SimTime;

use super::groups::{Dimension, GroupLayout};
use super::header::Policy;
use super::workload::{CollectiveKind, Phase, Workload, WorkloadError};

/// Which pass of a row an op is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pass {
    /// Forward (columns 3-5).
    Forward,
    /// Input gradient (columns 6-8).
    InputGrad,
    /// Weight gradient (columns 9-11).
    WeightGrad,
}

impl Pass {
    /// Short name: `fwd`, `ig`, `wg`.
    pub fn name(self) -> &'static str {
        match self {
            Pass::Forward => "fwd",
            Pass::InputGrad => "ig",
            Pass::WeightGrad => "wg",
        }
    }
}

/// One op as the workload describes it (for reports).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpInfo {
    /// Row index (0-based, file order).
    pub row: u32,
    /// Which pass.
    pub pass: Pass,
    /// Compute before the collective, ns.
    pub compute_ns: u64,
    /// The collective the op runs: kind, dimension, bytes and group size; `None` when it runs
    /// none.
    pub collective: Option<(CollectiveKind, Dimension, u64, u32)>,
}

/// The schedule of a workload on a group layout.
#[derive(Clone, Debug)]
pub struct Schedule {
    /// Each op's description, in walker order.
    pub info: Vec<OpInfo>,
    /// The engine's ops, in the same order.
    pub ops: Vec<Op>,
    /// Warnings (SimAI behaviours that drop collectives).
    pub notes: Vec<String>,
}

/// The 1 ns SimAI's walker waits at each state change.
const GAP: SimTime = SimTime(1_000);

/// The ops of `workload` on `layout`, in walker order.
pub fn plan(workload: &Workload, layout: &GroupLayout) -> Result<Schedule, WorkloadError> {
    let mut s = Schedule {
        info: Vec::new(),
        ops: Vec::new(),
        notes: Vec::new(),
    };
    let tp_skips = layout.size(Dimension::Tp) == 1;
    let rows = &workload.rows;
    let policy = workload.header.policy;
    // The most ring channels any group of a dimension has, computed once per dimension.
    let mut channels = std::collections::HashMap::new();
    let mut push =
        |row: usize, pass: Pass, blocking: bool, comm: bool| -> Result<(), WorkloadError> {
            let r = &rows[row];
            let phase = match pass {
                Pass::Forward => &r.forward,
                Pass::InputGrad => &r.input_grad,
                Pass::WeightGrad => &r.weight_grad,
            };
            let mut collective = None;
            if comm && !(tp_skips && pass != Pass::WeightGrad) {
                let at = (row, pass, phase);
                collective = resolve(workload, at, layout, policy, &mut channels)?;
            }
            s.info.push(OpInfo {
                row: row as u32,
                pass,
                compute_ns: phase.compute_ns,
                collective,
            });
            s.ops.push(Op {
                compute: SimTime::from_ns(phase.compute_ns),
                collective: collective.is_some(),
                queue: if pass == Pass::WeightGrad {
                    Queue::Data
                } else {
                    Queue::Model
                },
                blocking,
                update: SimTime::from_ns(r.update_ns),
                gap: GAP,
            });
            Ok(())
        };
    let n = rows.len();
    match policy {
        Policy::HybridTransformer | Policy::HybridTransformerFwdInBckwd => {
            for i in 0..n {
                push(i, Pass::Forward, true, true)?;
            }
            for i in (0..n).rev() {
                push(i, Pass::InputGrad, true, true)?;
                push(i, Pass::WeightGrad, false, true)?;
            }
        }
        Policy::Data => {
            for i in 0..n {
                push(i, Pass::Forward, true, false)?;
            }
            for i in (0..n).rev() {
                push(i, Pass::WeightGrad, false, true)?;
                if i > 0 {
                    push(i, Pass::InputGrad, true, false)?;
                }
            }
        }
        Policy::Micro => {
            for i in 0..n {
                push(i, Pass::WeightGrad, true, true)?;
            }
        }
    }
    let dropped = if tp_skips && policy != Policy::Micro && policy != Policy::Data {
        rows.iter()
            .filter(|r| r.forward.collective().is_some() || r.input_grad.collective().is_some())
            .count()
    } else {
        0
    };
    if dropped > 0 {
        s.notes.push(format!(
            "{}: TP is 1, so (as SimAI) the forward and input-gradient collectives of {dropped} \
             rows run nothing",
            workload.file
        ));
    }
    Ok(s)
}

/// The collective of one pass of row `row`, checked: kind, dimension, bytes (after the
/// FWD_IN_BCKWD raise) and group size; `None` for no collective or a one-rank group.
/// `channels` caches the most ring channels of any group per dimension.
fn resolve(
    workload: &Workload,
    (row, pass, phase): (usize, Pass, &Phase),
    layout: &GroupLayout,
    policy: Policy,
    channels: &mut std::collections::HashMap<Dimension, u64>,
) -> Result<Option<(CollectiveKind, Dimension, u64, u32)>, WorkloadError> {
    let Some((kind, dim, mut bytes)) = phase.collective() else {
        return Ok(None);
    };
    if pass == Pass::Forward && policy == Policy::HybridTransformerFwdInBckwd && bytes > 0 {
        bytes = bytes.max(4096);
    }
    let n = layout.size(dim);
    if n < 2 {
        return Ok(None);
    }
    let line = workload.rows[row].line;
    let field = format!("{}_size", pass.name());
    let fail = |message: String| WorkloadError {
        file: workload.file.clone(),
        line: Some(line),
        field: field.clone(),
        message,
    };
    if bytes == 0 {
        return Err(fail(format!(
            "a {dim} collective of 0 bytes: SimAI creates it with no flow and never finishes \
             it; give its size or make its type NONE"
        )));
    }
    if kind != CollectiveKind::AllToAll {
        // The group with the most channels has the smallest ring chunks.
        let channels = match channels.get(&dim) {
            Some(&c) => c,
            None => {
                let counts = layout.channel_counts(dim).map_err(fail)?;
                let most = counts.iter().copied().max().unwrap_or(1).max(1);
                *channels.entry(dim).or_insert(most)
            }
        };
        if bytes / n as u64 / channels == 0 {
            return Err(fail(format!(
                "{bytes} bytes over a {dim} group of {n} ranks in {channels} rings leaves ring \
                 chunks of 0 bytes (size / ranks / rings): SimAI generates no flow and never \
                 finishes the collective; give at least {} bytes",
                n as u64 * channels
            )));
        }
    }
    Ok(Some((kind, dim, bytes, n)))
}

/// Flows of the whole schedule, by arithmetic.
pub fn flow_count(schedule: &Schedule, layout: &GroupLayout) -> Result<u64, String> {
    let mut total = 0u64;
    // Every group's channels summed, once per dimension.
    let mut channels = std::collections::HashMap::new();
    for info in &schedule.info {
        let Some((kind, dim, _, n)) = info.collective else {
            continue;
        };
        let groups = u64::from(layout.group_count(dim));
        let n = u64::from(n);
        total += match kind {
            CollectiveKind::AllToAll => groups * n * (n - 1),
            // Every group's own channels.
            _ => {
                let sum = match channels.get(&dim) {
                    Some(&sum) => sum,
                    None => *channels
                        .entry(dim)
                        .or_insert(layout.channel_counts(dim)?.iter().sum::<u64>()),
                };
                sum * n * steps(kind, n as u32) as u64
            }
        };
    }
    Ok(total)
}

/// Ring steps of a collective on `n` ranks.
fn steps(kind: CollectiveKind, n: u32) -> u32 {
    match kind {
        CollectiveKind::AllReduce => 2 * (n - 1),
        CollectiveKind::AllGather | CollectiveKind::ReduceScatter => n - 1,
        CollectiveKind::AllToAll => 1,
    }
}

/// A flow of the job: sending rank, receiving rank, bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobFlow {
    /// Sending rank.
    pub src: u32,
    /// Receiving rank.
    pub dst: u32,
    /// Payload bytes.
    pub bytes: u64,
}

/// Expands the schedule into its flows (ids from `first_flow`, passed to `emit` in id order)
/// and the job the engine runs, with its ranks on `hosts`.
pub fn expand(
    schedule: &Schedule,
    layout: &GroupLayout,
    hosts: Vec<u32>,
    (send_latency, newest_first): (SimTime, bool),
    first_flow: u32,
    mut emit: impl FnMut(JobFlow) -> Result<(), String>,
) -> Result<JobSpec, String> {
    let mut b = JobBuilder::new(hosts, schedule.ops.clone(), send_latency, first_flow);
    if !newest_first {
        b = b.oldest_first();
    }
    for (k, info) in schedule.info.iter().enumerate() {
        let Some((kind, dim, bytes, n)) = info.collective else {
            continue;
        };
        let k = k as u32;
        for group in layout.groups(dim) {
            if kind == CollectiveKind::AllToAll {
                let each = (bytes / u64::from(n)).max(1);
                for &src in &group.ranks {
                    for &dst in group.ranks.iter().filter(|&&d| d != src) {
                        b.add(k, src, dst, None);
                        emit(JobFlow {
                            src,
                            dst,
                            bytes: each,
                        })?;
                    }
                }
                continue;
            }
            let rings = group.rings()?;
            let chunk = bytes / u64::from(n) / rings.len() as u64;
            for ring in &rings {
                let order = ring.ranks();
                let len = order.len();
                // The flow into each ring position in the previous step.
                let mut into: Vec<Option<u32>> = vec![None; len];
                for _ in 0..steps(kind, n) {
                    let mut next = vec![None; len];
                    for (i, &src) in order.iter().enumerate() {
                        let to = (i + 1) % len;
                        let id = b.add(k, src, order[to], into[i]);
                        emit(JobFlow {
                            src,
                            dst: order[to],
                            bytes: chunk,
                        })?;
                        next[to] = Some(id);
                    }
                    into = next;
                }
            }
        }
    }
    Ok(b.finish())
}

//! Training jobs: one program per rank (GPU) that computes, issues collectives and waits for
//! them, driving the job's flows from its rank's host. This is SimAI's workload walker
//! (`astra-sim/workload/Workload.cc`, its system layer's per-dimension collective queues in
//! `Sys.cc` and its NCCL flow model's release rule in `NcclTreeFlowModel.cc`, SimAI
//! `f5efb5a`) as engine state: the scenario layer (`netstep-scenario`'s `aicb` traffic kind)
//! turns a workload file into a [`JobSpec`] and the flows it owns; the engine runs one
//! [`Walker`] per rank at that rank's host.
//!
//! Every rank runs the same list of [`Op`]s, in order. An op computes for its `compute` time,
//! then issues its collective (if it has one) on one of the rank's two queues ([`Queue`]):
//! a blocking op waits until the collective is done at this rank, plus its `update` time; a
//! non-blocking one goes on at once. After each op the rank waits `gap` (SimAI's 1 ns per
//! state change) before the next. Each queue runs one collective at a time per rank; the
//! ones waiting behind it start newest first (SimAI's LIFO stream scheduling; a rank whose
//! collectives were issued at other times than its peers' may then run them in another order
//! than they do and wait forever, as SimAI would: [`JobSpec::newest_first`] false runs them
//! in issue order, the same on every rank). A rank's part
//! of a collective:
//!
//! - **starts** when its queue takes it: the rank's *initial* flows (those no other flow
//!   releases: a ring's first step, every flow of an all-to-all) start one `send_latency`
//!   later;
//! - **forwards**: when a flow of the collective has arrived at this rank (its receiver has
//!   every byte) and the collective is running here, the flow it releases (the next ring step
//!   this rank sends, [`JobSpec::child`]) starts one `send_latency` later; a flow that arrives
//!   before the collective starts here is kept and releases its child at the start;
//! - **is done** when every flow it receives here has arrived and every flow it sends from
//!   here is acknowledged (SimAI counts a send at its last packet's transmission: netstep
//!   later, by the last acknowledgement's return, under a microsecond on the fabrics SimAI
//!   models).
//!
//! The rank is finished when its last op is over and every non-blocking collective it issued
//! is done (plus its update time). Everything a walker does happens at its own host, so the
//! job adds no messages between logical processes and keeps the engine exact.

mod walker;

pub use walker::{Action, OpTimes, Walker};

use std::ops::Range;

use crate::units::SimTime;

/// "No flow" in [`JobSpec::child`].
pub const NO_FLOW: u32 = u32::MAX;

/// Which of a rank's two collective queues an op uses: SimAI's two logical dimensions
/// (`break_dimension(TP)`: forward and input-gradient collectives on the first, weight-gradient
/// collectives on the second, whatever their group).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Queue {
    /// Forward and input-gradient collectives.
    Model = 0,
    /// Weight-gradient collectives.
    Data = 1,
}

/// One step of every rank's program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Compute before the collective is issued.
    pub compute: SimTime,
    /// The op runs a collective (false: compute only).
    pub collective: bool,
    /// The queue its collective uses.
    pub queue: Queue,
    /// The rank waits for the collective (and `update`) before its next op.
    pub blocking: bool,
    /// Delay after the collective is done at a rank before it counts as finished (SimAI's
    /// per-layer `update_time`).
    pub update: SimTime,
    /// Delay after the op before the next one begins.
    pub gap: SimTime,
}

/// A rank's part in one op: its initial flows and how many flows it sends and receives.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RankOp {
    /// Start of its initial flows in [`JobSpec`]'s initial list.
    pub first: u32,
    /// Number of initial flows.
    pub initial: u32,
    /// Flows this rank sends in the op.
    pub sends: u32,
    /// Flows this rank receives in the op.
    pub recvs: u32,
}

/// A training job: the ranks' shared program, their hosts, and the structure of the flows the
/// job owns (a contiguous range of the flow table).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobSpec {
    /// The flow ids the job owns (they start when their rank's walker releases them, not at
    /// their `start`).
    pub flows: Range<u32>,
    /// Delay from a flow's release to its start (SimAI's `send_lat`).
    pub send_latency: SimTime,
    /// Waiting collectives start newest first (SimAI's order); false: in issue order.
    pub newest_first: bool,
    /// Every rank's program.
    pub ops: Vec<Op>,
    /// Host node of each rank.
    pub hosts: Vec<u32>,
    /// Each rank's part in each op, rank-major (`rank * ops + op`).
    rank_ops: Vec<RankOp>,
    /// Initial flows, grouped per (rank, op) as `rank_ops` says.
    initial: Vec<u32>,
    /// Op of each owned flow (by `flow - flows.start`).
    op_of: Vec<u32>,
    /// The flow each owned flow releases at its receiver, or [`NO_FLOW`].
    child: Vec<u32>,
    /// (host, rank), sorted by host.
    by_host: Vec<(u32, u32)>,
}

impl JobSpec {
    /// True when the job owns `flow`.
    #[inline]
    pub fn owns(&self, flow: u32) -> bool {
        self.flows.contains(&flow)
    }

    /// The rank whose host is `host`.
    pub fn rank_of(&self, host: u32) -> Option<u32> {
        self.by_host
            .binary_search_by_key(&host, |&(h, _)| h)
            .ok()
            .map(|i| self.by_host[i].1)
    }

    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        self.hosts.len() as u32
    }

    /// Rank `rank`'s part in op `op`.
    #[inline]
    pub fn rank_op(&self, rank: u32, op: u32) -> RankOp {
        self.rank_ops[rank as usize * self.ops.len() + op as usize]
    }

    /// Rank `rank`'s initial flows of op `op`.
    pub fn initial_flows(&self, rank: u32, op: u32) -> &[u32] {
        let r = self.rank_op(rank, op);
        &self.initial[r.first as usize..(r.first + r.initial) as usize]
    }

    /// The op an owned flow belongs to.
    #[inline]
    pub fn op_of(&self, flow: u32) -> u32 {
        self.op_of[(flow - self.flows.start) as usize]
    }

    /// The flow an owned flow releases when it arrives (sent by its receiver), if any.
    #[inline]
    pub fn child(&self, flow: u32) -> Option<u32> {
        let c = self.child[(flow - self.flows.start) as usize];
        (c != NO_FLOW).then_some(c)
    }
}

/// Builds a [`JobSpec`] flow by flow.
#[derive(Debug)]
pub struct JobBuilder {
    spec: JobSpec,
    /// Initial flows per (rank, op), before they are packed.
    initial: Vec<Vec<u32>>,
}

impl JobBuilder {
    /// A job over ranks on `hosts` running `ops`, owning flows from `first_flow` on.
    pub fn new(hosts: Vec<u32>, ops: Vec<Op>, send_latency: SimTime, first_flow: u32) -> Self {
        let cells = hosts.len() * ops.len();
        let mut by_host: Vec<(u32, u32)> = hosts
            .iter()
            .enumerate()
            .map(|(rank, &h)| (h, rank as u32))
            .collect();
        by_host.sort_unstable();
        JobBuilder {
            spec: JobSpec {
                flows: first_flow..first_flow,
                send_latency,
                newest_first: true,
                ops,
                hosts,
                rank_ops: vec![RankOp::default(); cells],
                by_host,
                ..JobSpec::default()
            },
            initial: vec![Vec::new(); cells],
        }
    }

    /// Waiting collectives start in issue order instead of newest first.
    pub fn oldest_first(mut self) -> Self {
        self.spec.newest_first = false;
        self
    }

    /// The id the next flow gets.
    pub fn next_flow(&self) -> u32 {
        self.spec.flows.end
    }

    /// Adds the next flow (id [`JobBuilder::next_flow`]) of op `op` from rank `src` to rank
    /// `dst`; `parent` is the flow whose arrival at `src` releases it (`None`: an initial
    /// flow). Returns its id.
    pub fn add(&mut self, op: u32, src: u32, dst: u32, parent: Option<u32>) -> u32 {
        let id = self.spec.flows.end;
        self.spec.flows.end += 1;
        self.spec.op_of.push(op);
        self.spec.child.push(NO_FLOW);
        let n_ops = self.spec.ops.len();
        match parent {
            Some(p) => self.spec.child[(p - self.spec.flows.start) as usize] = id,
            None => self.initial[src as usize * n_ops + op as usize].push(id),
        }
        self.spec.rank_ops[src as usize * n_ops + op as usize].sends += 1;
        self.spec.rank_ops[dst as usize * n_ops + op as usize].recvs += 1;
        id
    }

    /// The finished spec.
    pub fn finish(mut self) -> JobSpec {
        let mut packed = Vec::with_capacity(self.initial.iter().map(Vec::len).sum());
        for (cell, list) in self.initial.iter().enumerate() {
            let r = &mut self.spec.rank_ops[cell];
            r.first = packed.len() as u32;
            r.initial = list.len() as u32;
            packed.extend_from_slice(list);
        }
        self.spec.initial = packed;
        self.spec
    }
}

#[cfg(test)]
mod tests;

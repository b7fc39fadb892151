//! One rank's walker: the state machine of [`super`]'s module docs, with no engine in it. The
//! host calls it on its wake-ups, on arrivals and on acknowledged sends of the job's flows;
//! it answers with [`Action`]s (flows to start, its next wake-up).

use super::JobSpec;
use crate::units::SimTime;

/// What a walker asks its host to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Start flow `flow` at `at`.
    Start {
        /// Flow id.
        flow: u32,
        /// When.
        at: SimTime,
    },
    /// Wake the walker at `at` with `token`.
    Wake {
        /// When.
        at: SimTime,
        /// The token to hand back ([`Walker::wake`]).
        token: u32,
    },
}

/// When one op happened at one rank.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpTimes {
    /// The op began (its compute started).
    pub begin: Option<SimTime>,
    /// Its collective was issued (compute over).
    pub issued: Option<SimTime>,
    /// Its queue started it.
    pub started: Option<SimTime>,
    /// It was done at this rank (before its update time).
    pub done: Option<SimTime>,
}

/// Where the walker is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Waiting for its first wake-up.
    Idle,
    /// Computing op `next`; the wake-up issues it.
    Computing,
    /// Waiting for blocking op `next` to be done.
    Blocked,
    /// Between ops; the wake-up begins op `next`.
    Gap,
    /// Past its last op.
    Walked,
}

/// One rank's walker.
#[derive(Clone, Debug)]
pub struct Walker {
    rank: u32,
    /// The op being run (or next to begin).
    next: u32,
    state: State,
    /// The token of the pending wake-up.
    token: u32,
    /// The op each queue runs.
    running: [Option<u32>; 2],
    /// Ops waiting per queue, oldest first (the newest starts next).
    waiting: [Vec<u32>; 2],
    /// Flows arrived per op.
    received: Vec<u32>,
    /// Flows sent and acknowledged per op.
    sent: Vec<u32>,
    /// Flows that arrived before their op started here.
    early: Vec<u32>,
    /// When each op happened here.
    times: Vec<OpTimes>,
    /// When the last op was over.
    walked: Option<SimTime>,
}

impl Walker {
    /// Rank `rank`'s walker, before its first wake-up (token 0, at time 0).
    pub fn new(job: &JobSpec, rank: u32) -> Walker {
        let n = job.ops.len();
        Walker {
            rank,
            next: 0,
            state: State::Idle,
            token: 0,
            running: [None, None],
            waiting: [Vec::new(), Vec::new()],
            received: vec![0; n],
            sent: vec![0; n],
            early: Vec::new(),
            times: vec![OpTimes::default(); n],
            walked: None,
        }
    }

    /// The rank.
    pub fn rank(&self) -> u32 {
        self.rank
    }

    /// When each op happened at this rank.
    pub fn times(&self) -> &[OpTimes] {
        &self.times
    }

    /// When its last op was over.
    pub fn walked(&self) -> Option<SimTime> {
        self.walked
    }

    /// When the rank finished: its last op over and every collective it issued done plus its
    /// update time; `None` while any is not.
    pub fn finished(&self, job: &JobSpec) -> Option<SimTime> {
        let mut end = self.walked?;
        for (k, (op, t)) in job.ops.iter().zip(&self.times).enumerate() {
            if self.runs_flows(job, k as u32) {
                end = end.max(t.done? + op.update);
            }
        }
        Some(end)
    }

    /// A wake-up with `token` (stale tokens are ignored).
    pub fn wake(&mut self, job: &JobSpec, token: u32, now: SimTime, out: &mut Vec<Action>) {
        if token != self.token {
            return;
        }
        match self.state {
            State::Idle | State::Gap => self.begin(job, now, out),
            State::Computing => self.issue(job, now, out),
            State::Blocked | State::Walked => {}
        }
    }

    /// Flow `flow` of the job arrived here (its receiver has every byte).
    pub fn arrived(&mut self, job: &JobSpec, flow: u32, now: SimTime, out: &mut Vec<Action>) {
        let op = job.op_of(flow);
        self.received[op as usize] += 1;
        let queue = job.ops[op as usize].queue as usize;
        if self.running[queue] == Some(op) {
            if let Some(child) = job.child(flow) {
                out.push(Action::Start {
                    flow: child,
                    at: now + job.send_latency,
                });
            }
            self.check_done(job, op, now, out);
        } else {
            self.early.push(flow);
        }
    }

    /// Flow `flow` of the job, sent from here, is acknowledged in full.
    pub fn sent(&mut self, job: &JobSpec, flow: u32, now: SimTime, out: &mut Vec<Action>) {
        let op = job.op_of(flow);
        self.sent[op as usize] += 1;
        self.check_done(job, op, now, out);
    }

    /// Begins op `next` (or finishes the walk).
    fn begin(&mut self, job: &JobSpec, now: SimTime, out: &mut Vec<Action>) {
        let Some(op) = job.ops.get(self.next as usize) else {
            self.state = State::Walked;
            self.walked = Some(now);
            return;
        };
        self.times[self.next as usize].begin = Some(now);
        if op.compute > SimTime::ZERO {
            self.state = State::Computing;
            self.wake_at(now + op.compute, out);
        } else {
            self.issue(job, now, out);
        }
    }

    /// Op `next`'s compute is over: issues its collective.
    fn issue(&mut self, job: &JobSpec, now: SimTime, out: &mut Vec<Action>) {
        let k = self.next;
        let op = job.ops[k as usize];
        self.times[k as usize].issued = Some(now);
        if !self.runs_flows(job, k) {
            self.next_op(job, now, out);
            return;
        }
        if op.blocking {
            // Set first: the collective may be done as soon as it starts.
            self.state = State::Blocked;
        }
        let queue = op.queue as usize;
        if self.running[queue].is_none() {
            self.start(job, k, now, out);
        } else {
            self.waiting[queue].push(k);
        }
        if !op.blocking {
            self.next_op(job, now, out);
        }
    }

    /// True when op `k` has a collective with flows at this rank.
    fn runs_flows(&self, job: &JobSpec, k: u32) -> bool {
        let part = job.rank_op(self.rank, k);
        job.ops[k as usize].collective && part.sends + part.recvs > 0
    }

    /// Moves to the op after `next`, beginning it after the gap from `from`.
    fn next_op(&mut self, job: &JobSpec, from: SimTime, out: &mut Vec<Action>) {
        let gap = job.ops[self.next as usize].gap;
        self.next += 1;
        self.state = State::Gap;
        self.wake_at(from + gap, out);
    }

    /// Queue of op `k` takes it: its initial flows go, and so do the children of its flows
    /// that arrived early.
    fn start(&mut self, job: &JobSpec, k: u32, now: SimTime, out: &mut Vec<Action>) {
        let queue = job.ops[k as usize].queue as usize;
        self.running[queue] = Some(k);
        self.times[k as usize].started = Some(now);
        let at = now + job.send_latency;
        for &flow in job.initial_flows(self.rank, k) {
            out.push(Action::Start { flow, at });
        }
        let mut i = 0;
        while i < self.early.len() {
            let flow = self.early[i];
            if job.op_of(flow) == k {
                self.early.swap_remove(i);
                if let Some(child) = job.child(flow) {
                    out.push(Action::Start { flow: child, at });
                }
            } else {
                i += 1;
            }
        }
        self.check_done(job, k, now, out);
    }

    /// Op `k` is done here if every flow it receives has arrived and every flow it sends is
    /// acknowledged: its queue takes the newest waiting op, and a walker blocked on it goes
    /// on after its update time.
    fn check_done(&mut self, job: &JobSpec, k: u32, now: SimTime, out: &mut Vec<Action>) {
        let part = job.rank_op(self.rank, k);
        let t = &mut self.times[k as usize];
        if t.started.is_none()
            || t.done.is_some()
            || self.received[k as usize] < part.recvs
            || self.sent[k as usize] < part.sends
        {
            return;
        }
        t.done = Some(now);
        let op = job.ops[k as usize];
        let queue = op.queue as usize;
        self.running[queue] = None;
        let next = if job.newest_first {
            self.waiting[queue].pop()
        } else if self.waiting[queue].is_empty() {
            None
        } else {
            Some(self.waiting[queue].remove(0))
        };
        if let Some(next) = next {
            self.start(job, next, now, out);
        }
        if op.blocking && self.state == State::Blocked && self.next == k {
            self.next_op(job, now + op.update, out);
        }
    }

    /// Schedules the next wake-up.
    fn wake_at(&mut self, at: SimTime, out: &mut Vec<Action>) {
        self.token = self.token.wrapping_add(1);
        out.push(Action::Wake {
            at,
            token: self.token,
        });
    }
}

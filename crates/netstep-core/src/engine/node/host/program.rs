//! A job rank's walker at its host ([`crate::job`]): its wake-ups, and the arrivals and
//! acknowledged sends of the job's flows here, go to it; the flows it releases start here.
//! Everything it does stays at this host (no event to another LP).

use super::HostState;
use crate::engine::event::{EventKind, EventSink, Phase};
use crate::engine::model::Model;
use crate::engine::node::lp::Lp;
use crate::job::{Action, JobSpec, Walker};
use crate::units::SimTime;

/// What a host keeps for the job: its rank's walker and the start of each job flow it sent.
#[derive(Clone, Debug, Default)]
pub struct HostProgram {
    /// The rank's walker (made at its first call).
    pub walker: Option<Box<Walker>>,
    /// Start time of each flow sourced here, by source slot (job flows only; zero until
    /// started).
    pub starts: Vec<SimTime>,
    /// What the walker asked for (reused buffer).
    actions: Vec<Action>,
}

impl HostProgram {
    /// The walker of `node`'s rank, made on first use; `None` if `node` runs no rank.
    fn walker(&mut self, job: &JobSpec, node: u32) -> Option<&mut Walker> {
        if self.walker.is_none() {
            let rank = job.rank_of(node)?;
            self.walker = Some(Box::new(Walker::new(job, rank)));
        }
        self.walker.as_deref_mut()
    }

    /// Schedules what the walker asked for.
    fn apply(&mut self, lp: &mut Lp, now: SimTime, sink: &mut impl EventSink) {
        for action in self.actions.drain(..) {
            match action {
                Action::Start { flow, at } => lp.schedule_local(
                    at,
                    now,
                    Phase::FlowStart,
                    EventKind::FlowStart { flow },
                    sink,
                ),
                Action::Wake { at, token } => {
                    lp.schedule_local(at, now, Phase::Program, EventKind::Program { token }, sink)
                }
            }
        }
    }
}

/// Which walker call an event makes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Call {
    /// A wake-up with its token.
    Wake(u32),
    /// A job flow arrived here.
    Arrived(u32),
    /// A job flow sent from here is acknowledged.
    Sent(u32),
}

impl HostState {
    /// The job's state at this host, allocated on first use.
    fn program_mut(&mut self) -> &mut HostProgram {
        self.program.get_or_insert_with(Box::default)
    }

    /// Hands `call` to this host's walker and schedules what it asks for.
    pub(super) fn program(
        &mut self,
        lp: &mut Lp,
        model: &Model,
        call: Call,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let Some(job) = model.job.as_deref() else {
            return;
        };
        let program = self.program_mut();
        let mut actions = std::mem::take(&mut program.actions);
        if let Some(walker) = program.walker(job, lp.node) {
            match call {
                Call::Wake(token) => walker.wake(job, token, now, &mut actions),
                Call::Arrived(flow) => walker.arrived(job, flow, now, &mut actions),
                Call::Sent(flow) => walker.sent(job, flow, now, &mut actions),
            }
        }
        program.actions = actions;
        program.apply(lp, now, sink);
    }

    /// Records the start of job flow `flow` (source slot `slot`) at `now`.
    pub(super) fn job_flow_started(&mut self, all: u32, slot: u32, now: SimTime) {
        let starts = &mut self.program_mut().starts;
        if starts.len() <= slot as usize {
            starts.resize(all.max(slot + 1) as usize, SimTime::ZERO);
        }
        starts[slot as usize] = now;
    }
}

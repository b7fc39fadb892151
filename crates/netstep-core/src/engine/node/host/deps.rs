//! Flows that wait for other flows ([`crate::flow::Dependencies`]): a host hears of each
//! finished flow its own flows wait for (at once when it is that flow's receiver, else by a
//! `DependencyDone` notice with a 64 B notice's one-way latency), and the last notice
//! schedules the waiting flow's start.

use super::HostState;
use crate::engine::event::{Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase};
use crate::engine::model::Model;
use crate::engine::node::lp::Lp;
use crate::flow::{FlowSpec, FlowTable};
use crate::units::SimTime;

/// A flow waiting for other flows (see [`crate::flow::Dependencies`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// Notices still to come.
    pub left: u32,
    /// When the latest notice came.
    pub last: SimTime,
    /// When the flow starts, once every notice came.
    pub start: Option<SimTime>,
}

impl HostState {
    /// When `flow` (sourced here) started and when the flows it waited for were all known
    /// finished, as far as this host knows.
    pub fn started(
        &self,
        flow: u32,
        spec: &FlowSpec,
        flows: &FlowTable,
        job: Option<&crate::job::JobSpec>,
    ) -> (Option<SimTime>, Option<SimTime>) {
        let slot = flows.src_slot[flow as usize] as usize;
        let sender = self.senders.get(slot).is_some_and(Option::is_some);
        if job.is_some_and(|j| j.owns(flow)) {
            // Released by the rank's walker: when its start event ran.
            let started = sender.then(|| self.program.as_ref().map(|p| p.starts[slot]));
            return (started.flatten(), None);
        }
        if spec.after.is_none() {
            return (sender.then_some(spec.start), None);
        }
        let waiting = self.waiting.get(&flow).filter(|w| w.left == 0);
        (
            waiting.and_then(|w| w.start).filter(|_| sender),
            waiting.map(|w| w.last),
        )
    }

    /// A flow `flow` waits for is known finished here; the last such notice schedules its
    /// start.
    pub(super) fn dependency_done(
        &mut self,
        lp: &mut Lp,
        model: &Model,
        flow: u32,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let spec = &model.flows.flows[flow as usize];
        let Some(deps) = spec.after.as_ref() else {
            return;
        };
        let waiting = self.waiting.entry(flow).or_insert(Waiting {
            left: deps.flows.len() as u32,
            last: SimTime::ZERO,
            start: None,
        });
        waiting.left = waiting.left.saturating_sub(1);
        waiting.last = waiting.last.max(now);
        if waiting.left == 0 {
            let at = spec.start.max(SimTime(now.0.saturating_add(deps.delay.0)));
            waiting.start = Some(at);
            lp.schedule_local(
                at,
                now,
                Phase::FlowStart,
                EventKind::FlowStart { flow },
                sink,
            );
        }
    }

    /// `flow` finished here (its receiver has every byte): tells the flows waiting for it, at
    /// once when they start here, else after a notice's one-way latency to their source.
    #[inline(never)]
    pub(super) fn notify_dependents(
        lp: &mut Lp,
        model: &Model,
        flow: u32,
        now: SimTime,
        sink: &mut impl EventSink,
    ) {
        let here = lp.node;
        for &waiting in model.flows.dependents(flow) {
            let src = model.flows.flows[waiting as usize].src;
            let kind = EventKind::DependencyDone {
                flow: waiting,
                dep: flow,
            };
            if src == here {
                lp.schedule_local(now, now, Phase::Dependency, kind, sink);
                continue;
            }
            // Routes between every waiting pair were checked when the flows were loaded.
            let Some(latency) = crate::flow::notify_latency(&model.net, here, src, waiting) else {
                continue;
            };
            let at = SimTime(now.0.saturating_add(latency.0));
            if at > MAX_EVENT_TIME {
                lp.overflowed(at);
                continue;
            }
            sink.remote(
                src,
                Event {
                    key: EventKey::new(at, Phase::Dependency, now),
                    kind,
                },
            );
        }
    }
}

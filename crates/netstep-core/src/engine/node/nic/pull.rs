//! The pulling NIC's state ([`crate::nic::NicScheduler::Pull`], the HPCC simulator's RDMA NIC): the
//! feedback packets waiting, oldest first, and the queue pairs (the host's RDMA senders) in
//! their turn order, with the earliest wake-up already scheduled. The simulator's
//! `GetNextQindex` is [`HostNic::select_qp`].

use std::collections::VecDeque;

use super::sockets::HostNic;
use crate::nic::QpState;
use crate::packet::Packet;
use crate::units::SimTime;

/// The pulling NIC's state ([`crate::nic::NicScheduler::Pull`]).
#[derive(Clone, Debug, Default)]
pub(super) struct Pull {
    /// Feedback packets (ACK, NACK, CNP) waiting, oldest first.
    pub(super) feedback: VecDeque<Packet>,
    /// Queue pairs (flow ids) in the order they started, finished ones removed lazily.
    pub(super) qps: Vec<u32>,
    /// Index in `qps` of the last queue pair served (not moved when `qps` shrinks, as in
    /// the simulator).
    pub(super) rr_last: usize,
    /// Earliest wake-up already scheduled.
    wake: Option<SimTime>,
}

impl HostNic {
    /// Pull: the RDMA sender of `flow` started; it takes its turns after the queue pairs
    /// already there (the simulator's `AddQp`).
    pub fn add_qp(&mut self, flow: u32) {
        self.pull.qps.push(flow);
    }

    /// Pull: whether a feedback packet waits.
    pub fn has_feedback(&self) -> bool {
        !self.pull.feedback.is_empty()
    }

    /// Pull: the oldest waiting feedback packet, unless its class is paused (`paused`: one
    /// bit per class).
    pub fn pop_feedback(&mut self, paused: u8) -> Option<Packet> {
        let head = self.pull.feedback.front()?;
        if paused & (1 << head.class()) != 0 {
            return None;
        }
        self.pending_packets -= 1;
        self.pull.feedback.pop_front()
    }

    /// Pull: the flow of the queue pair that sends next at `now`, if any may: round
    /// robin from the one after the last served, the first that is `Ready` by `now` in a
    /// class not `paused`. Finished queue pairs met on the way are removed, with every
    /// finished one after the first of them, and the turn index is not adjusted (both as the
    /// simulator's `GetNextQindex` does, so the turn order matches it).
    pub fn select_qp(
        &mut self,
        now: SimTime,
        paused: u8,
        mut state: impl FnMut(u32) -> QpState,
    ) -> Option<u32> {
        let pull = &mut self.pull;
        let count = pull.qps.len();
        let mut chosen = None;
        let mut first_finished = usize::MAX;
        for step in 1..=count {
            let idx = (step + pull.rr_last) % count;
            match state(pull.qps[idx]) {
                QpState::Ready { at, class } if paused & (1 << class) == 0 => {
                    if at <= now {
                        chosen = Some(idx);
                        break;
                    }
                }
                QpState::Finished => first_finished = first_finished.min(idx),
                QpState::Ready { .. } | QpState::Waiting => {}
            }
        }
        if first_finished != usize::MAX {
            let mut next = first_finished;
            for i in first_finished + 1..count {
                if state(pull.qps[i]) != QpState::Finished {
                    if chosen == Some(i) {
                        chosen = Some(next);
                    }
                    pull.qps[next] = pull.qps[i];
                    next += 1;
                }
            }
            pull.qps.truncate(next);
        }
        let idx = chosen?;
        pull.rr_last = idx;
        Some(pull.qps[idx])
    }

    /// Pull: the earliest time after `now` a queue pair in a class not `paused` becomes
    /// ready, if any (a paused class comes back with its RESUME, an ACK that opens a window
    /// with the ACK).
    pub fn next_ready(
        &self,
        now: SimTime,
        paused: u8,
        mut state: impl FnMut(u32) -> QpState,
    ) -> Option<SimTime> {
        self.pull
            .qps
            .iter()
            .filter_map(|&flow| match state(flow) {
                QpState::Ready { at, class } if at > now && paused & (1 << class) == 0 => Some(at),
                QpState::Ready { .. } | QpState::Finished | QpState::Waiting => None,
            })
            .min()
    }

    /// Pull: whether some queue pair of a class not paused may send, now or later (its pacing
    /// allows it at some time).
    pub fn any_ready(&self, paused: u8, mut state: impl FnMut(u32) -> QpState) -> bool {
        self.pull.qps.iter().any(|&flow| {
            matches!(state(flow), QpState::Ready { class, .. } if paused & (1 << class) == 0)
        })
    }

    /// Pull: whether a wake-up at or before `at` is pending.
    pub fn wakes_by(&self, at: SimTime) -> bool {
        self.pull.wake.is_some_and(|w| w <= at)
    }

    /// Pull: records a wake-up wanted at `at`; returns whether it must be scheduled (none is
    /// pending at or before it).
    pub fn want_wake(&mut self, at: SimTime) -> bool {
        if self.wakes_by(at) {
            return false;
        }
        self.pull.wake = Some(at);
        true
    }

    /// Pull: a wake-up fired at `now`.
    pub fn woke(&mut self, now: SimTime) {
        if self.pull.wake.is_some_and(|w| w <= now) {
            self.pull.wake = None;
        }
    }
}

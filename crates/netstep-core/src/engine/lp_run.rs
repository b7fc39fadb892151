//! How an LP runs its window: where the events it makes go (its own queue, the outgoing
//! bucket of the destination's chunk, or, for a link group's member, a fellow member's queue
//! at once), what the chunk collects from it afterwards, and a link group's turns
//! ([`super::groups`]).

use super::Model;
use super::chunk::Outbox;
use super::event::{Event, EventSink};
use super::groups::{ChunkGroups, GroupTurn, MAX_GROUP, next_time, next_turn};
use super::lp_queue::LpQueue;
use super::node::NodeState;
use super::placement::Placement;
use super::trace::HopRecord;
use crate::pfc::PfcEvent;
use crate::telemetry::SideRecord;
use crate::transport::TransportOut;
use crate::units::SimTime;

/// Where an LP's events go while it runs: its own queue, or the bucket of the destination's
/// chunk; for a member of a link group taking its turn ([`super::groups`]), a fellow
/// member's queue at once.
pub(super) struct LpSink<'a, 'g> {
    queue: &'a mut LpQueue,
    out: &'a mut Outbox,
    placement: &'a Placement,
    /// [`EventSink::batch_bound`].
    batch_bound: SimTime,
    /// The group member's turn, if the LP is one.
    group: Option<&'a mut GroupTurn<'g>>,
}

impl EventSink for LpSink<'_, '_> {
    #[inline]
    fn local(&mut self, event: Event) {
        self.queue.push(event);
    }
    #[inline(always)]
    fn remote(&mut self, node: u32, event: Event) {
        let place = self.placement.of(node);
        if let Some(turn) = self.group.as_deref_mut()
            && turn.holds(place)
        {
            turn.push(place.slot, event, self.queue);
            return;
        }
        let out = &mut *self.out;
        out.min_out = out.min_out.min(event.key.time);
        out.buckets[place.chunk as usize].push((place.slot, event));
    }
    #[inline]
    fn side_record(&mut self, node: u32, id: u64, stack: Box<SideRecord>) {
        let place = self.placement.of(node);
        if let Some(turn) = self.group.as_deref_mut()
            && turn.holds(place)
        {
            turn.side.push((place.slot, id, stack));
            return;
        }
        self.out.side[place.chunk as usize].push((place.slot, id, stack));
    }
    #[inline]
    fn batch_bound(&self) -> SimTime {
        self.batch_bound
    }
}

/// Lets the LP with `state` and pending events `queue` handle every event before `bound`;
/// its ports may send departures as a batch up to `batch_bound` ([`EventSink::batch_bound`]).
#[inline]
pub(super) fn run_window(
    state: &mut NodeState,
    queue: &mut LpQueue,
    (bound, batch_bound): (SimTime, SimTime),
    model: &Model,
    (out, scratch): (&mut Outbox, &mut TransportOut),
    placement: &Placement,
) {
    while let Some(event) = queue.pop_before(bound) {
        let mut sink = LpSink {
            queue: &mut *queue,
            out: &mut *out,
            placement,
            batch_bound,
            group: None,
        };
        state.handle(event, model, &mut sink, scratch);
    }
}

/// Where a chunk collects what its LPs produced in a window beside events.
pub(super) struct Gathered<'a> {
    pub(super) last_event: &'a mut SimTime,
    pub(super) overflow: &'a mut bool,
    pub(super) hop_records: &'a mut Vec<HopRecord>,
    pub(super) pfc_rows: &'a mut Vec<PfcEvent>,
    pub(super) tracing: bool,
    pub(super) pfc: bool,
}

impl Gathered<'_> {
    /// Takes what `state` produced in its window.
    #[inline]
    pub(super) fn take(&mut self, state: &mut NodeState) {
        *self.last_event = (*self.last_event).max(state.lp.last_useful);
        *self.overflow |= state.lp.failed();
        if self.tracing
            && let Some(rare) = state.lp.rare.as_mut()
            && !rare.hop_records.is_empty()
        {
            self.hop_records.append(&mut rare.hop_records);
        }
        if self.pfc
            && let Some(switch) = state.switch_mut()
            && !switch.pfc_events.is_empty()
        {
            self.pfc_rows.append(&mut switch.pfc_events);
        }
    }
}

/// The members of group `group` of `g` run their events before `bound`, one turn at a time
/// by time ([`super::groups`]); returns the group's earliest event left (`SimTime::MAX` when
/// none) after handing what the members produced to `gathered`.
#[inline(never)]
pub(super) fn run_group(
    (g, group, slots, queues): (
        &ChunkGroups,
        u32,
        &mut [Option<Box<NodeState>>],
        &mut [LpQueue],
    ),
    (bound, batch_bound): (SimTime, SimTime),
    model: &Model,
    (out, scratch, mut gathered): (&mut Outbox, &mut TransportOut, Gathered<'_>),
    placement: &Placement,
) -> SimTime {
    let members = &g.members[group as usize];
    // Each member's earliest event, kept up to date as the turns go (`GroupTurn::push`).
    let mut heads = [SimTime::MAX; MAX_GROUP];
    let heads = &mut heads[..members.len()];
    for (head, &m) in heads.iter_mut().zip(members.iter()) {
        *head = next_time(&mut queues[m as usize]);
    }
    while let Some((position, threshold)) = next_turn(heads, bound, g.inner) {
        let member = members[position];
        let mut queue = std::mem::take(&mut queues[member as usize]);
        let state = slots[member as usize]
            .as_mut()
            .expect("a group's members are allocated together");
        let mut turn = GroupTurn {
            queues: &mut *queues,
            group_at: &g.group_at,
            position_at: &g.position_at,
            heads: &mut *heads,
            group,
            chunk: g.chunk,
            running: member,
            threshold,
            inner: g.inner,
            side: Vec::new(),
        };
        while let Some(event) = queue.pop_before(turn.threshold) {
            let mut sink = LpSink {
                queue: &mut queue,
                out: &mut *out,
                placement,
                batch_bound,
                group: Some(&mut turn),
            };
            state.handle(event, model, &mut sink, scratch);
        }
        let side = std::mem::take(&mut turn.side);
        heads[position] = next_time(&mut queue);
        queues[member as usize] = queue;
        for (slot, id, stack) in side {
            let state = slots[slot as usize]
                .as_mut()
                .expect("members are allocated");
            state.lp.side_record_in(id, stack);
        }
    }
    for &m in members.iter() {
        let state = slots[m as usize].as_mut().expect("members are allocated");
        gathered.take(state);
    }
    heads.iter().copied().min().unwrap_or(SimTime::MAX)
}

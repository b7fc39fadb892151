//! A chunk of the window engine: the LPs dealt to one worker task, their event queues and
//! active list, and the outgoing and incoming message buckets exchanged at each barrier
//! ([`super::window`] describes the protocol).

use super::Model;
use super::event::Event;
use super::far::{FAR_WINDOWS, Far};
use super::groups::{ChunkGroups, LinkGroups, NO_GROUP, next_time};
use super::lp_queue::LpQueue;
use super::lp_run::{Gathered, run_group, run_window};
use super::node::NodeState;
use super::placement::Placement;
use super::trace::HopRecord;
use crate::pfc::PfcEvent;
use crate::telemetry::SideRecord;
use crate::transport::TransportOut;
use crate::units::SimTime;

/// A cross-LP message: the destination's slot in its chunk, and the event.
pub(super) type Message = (u32, Event);
/// A side record sent with a packet to another LP: the destination's slot in its chunk,
/// packet id, stack.
pub(super) type SideMessage = (u32, u64, Box<SideRecord>);

/// What a chunk's LPs send to other LPs during one window.
pub(super) struct Outbox {
    /// Earliest (raw) time of the messages sent (so the next window can start before
    /// delivery).
    pub(super) min_out: SimTime,
    /// Messages, one bucket per destination chunk.
    pub(super) buckets: Vec<Vec<Message>>,
    /// Side records, one bucket per destination chunk like `buckets`.
    pub(super) side: Vec<Vec<SideMessage>>,
}

/// The LPs of one chunk and their bookkeeping.
pub(super) struct Chunk {
    /// The LP in each slot ([`Placement`] says which node's), allocated on first use.
    pub(super) slots: Vec<Option<Box<NodeState>>>,
    /// The node in each slot.
    nodes: Vec<u32>,
    /// Pending events per slot, apart from the states: delivering a message touches only this
    /// dense array and the queue's buffer, not the LP's state.
    pub(super) queues: Vec<LpQueue>,
    /// Next event time per slot (`SimTime::MAX` when none).
    pub(super) next: Vec<SimTime>,
    /// Slots with pending events, except those waiting in `far` (each once).
    pub(super) active: Vec<u32>,
    /// Slots skipped in a row whose next event is at least [`FAR_WINDOWS`] windows ahead
    /// ([`super::far`]).
    far: Far,
    /// How far past a window's bound an LP's next event must be for it to wait in `far`.
    far_after: SimTime,
    /// Earliest `next` over `active` and `far`.
    pub(super) min_next: SimTime,
    /// What this chunk's LPs sent in its last process phase.
    pub(super) out: Outbox,
    /// Time of the last useful event this chunk handled.
    pub(super) last_event: SimTime,
    /// Some LP of this chunk tried to schedule an event past the latest representable time.
    pub(super) overflow: bool,
    /// Slots whose LP has been allocated, in allocation order (queue sampling visits these).
    pub(super) allocated: Vec<u32>,
    /// Hop records produced in the current window.
    pub(super) hop_records: Vec<HopRecord>,
    /// PAUSE and RESUME frames the chunk's switches sent in the current window (collected
    /// when the model has PFC).
    pub(super) pfc_rows: Vec<PfcEvent>,
    /// FIFO switch ports send a window's departures as a batch
    /// ([`Model::batches_departures`]).
    pub(super) batch: bool,
    /// What a host's transport produced while it handles an event (one buffer for all the
    /// chunk's LPs, empty between events: a host keeps none of its own).
    scratch: TransportOut,
    /// The groups among this chunk's LPs ([`super::groups`]), if any.
    groups: Option<Box<ChunkGroups>>,
}

impl Chunk {
    /// Chunk `index` of `n_chunks`, holding `nodes` (by slot), run in windows of `width`,
    /// with the nodes' link groups `groups` ([`super::groups`]).
    pub(super) fn new(
        (index, n_chunks): (usize, usize),
        nodes: Vec<u32>,
        batch: bool,
        width: SimTime,
        groups: Option<&LinkGroups>,
    ) -> Chunk {
        let n_slots = nodes.len();
        let groups = groups.and_then(|g| ChunkGroups::new(g, index as u32, &nodes));
        Chunk {
            slots: (0..n_slots).map(|_| None).collect(),
            nodes,
            queues: (0..n_slots).map(|_| LpQueue::default()).collect(),
            next: vec![SimTime::MAX; n_slots],
            active: Vec::new(),
            far: Far::new(n_slots),
            far_after: SimTime(width.0.saturating_mul(FAR_WINDOWS)),
            min_next: SimTime::MAX,
            out: Outbox {
                min_out: SimTime::MAX,
                buckets: (0..n_chunks).map(|_| Vec::new()).collect(),
                side: (0..n_chunks).map(|_| Vec::new()).collect(),
            },
            last_event: SimTime::ZERO,
            overflow: false,
            allocated: Vec::new(),
            hop_records: Vec::new(),
            pfc_rows: Vec::new(),
            batch,
            scratch: TransportOut::default(),
            groups,
        }
    }

    /// Runs every LP due before `bound` and keeps the others on the active list, or moves
    /// those skipped long enough with a far-ahead next event to the far heap
    /// ([`super::far`]).
    pub(super) fn process(&mut self, bound: SimTime, model: &Model, placement: &Placement) {
        self.out.min_out = SimTime::MAX;
        if self.min_next >= bound {
            return;
        }
        let mut min_next = SimTime::MAX;
        let batch_bound = if self.batch { bound } else { SimTime::ZERO };
        // An LP skipped in `PARK_AFTER` windows in a row whose next event is this far off
        // waits in `far` ([`super::far`]).
        let far_from = bound.saturating_add(self.far_after);
        let tracing = model.trace.packet_hops.is_some();
        let pfc = model.pfc.is_some();
        let Chunk {
            slots,
            queues,
            next,
            active,
            far,
            out,
            last_event,
            hop_records,
            pfc_rows,
            overflow,
            scratch,
            groups,
            ..
        } = self;
        far.release(bound, next, active);
        // Compacts `active` in place (a plain loop: cheaper than `retain` for this closure).
        let mut kept = 0;
        for read in 0..active.len() {
            let local = active[read] as usize;
            if next[local] >= bound {
                if next[local] >= far_from && far.skipped(local as u32) {
                    far.park(local as u32, next[local]);
                    continue;
                }
                min_next = min_next.min(next[local]);
                active[kept] = local as u32;
                kept += 1;
                continue;
            }
            far.on_list(local as u32);
            let at = if let Some(g) = groups.as_deref()
                && g.group_at[local] != NO_GROUP
            {
                let gathered = Gathered {
                    last_event: &mut *last_event,
                    overflow: &mut *overflow,
                    hop_records: &mut *hop_records,
                    pfc_rows: &mut *pfc_rows,
                    tracing,
                    pfc,
                };
                let turns = (
                    g,
                    g.group_at[local],
                    slots.as_mut_slice(),
                    queues.as_mut_slice(),
                );
                run_group(
                    turns,
                    (bound, batch_bound),
                    model,
                    (out, scratch, gathered),
                    placement,
                )
            } else {
                // What `Gathered::take` does, written out: through the struct the compiler
                // laid this loop out worse in the variants counted (cachegrind, RESULTS.md
                // "Short links grouped").
                let state = slots[local].as_mut().expect("active LP exists");
                let queue = &mut queues[local];
                run_window(
                    state,
                    queue,
                    (bound, batch_bound),
                    model,
                    (out, scratch),
                    placement,
                );
                *last_event = (*last_event).max(state.lp.last_useful);
                *overflow |= state.lp.failed();
                if tracing
                    && let Some(rare) = state.lp.rare.as_mut()
                    && !rare.hop_records.is_empty()
                {
                    hop_records.append(&mut rare.hop_records);
                }
                if pfc
                    && let Some(switch) = state.switch_mut()
                    && !switch.pfc_events.is_empty()
                {
                    pfc_rows.append(&mut switch.pfc_events);
                }
                next_time(&mut *queue)
            };
            next[local] = at;
            if at != SimTime::MAX {
                min_next = min_next.min(at);
                active[kept] = local as u32;
                kept += 1;
            }
        }
        active.truncate(kept);
        self.min_next = min_next.min(far.earliest(next));
    }

    /// Times an LP of this chunk left the active list for the far heap.
    pub(super) fn parked(&self) -> u64 {
        self.far.parked
    }

    /// Frees what only the run needed (the event queues, message buffers, the far heap),
    /// keeping the LPs' states for the output, so the output is built without them (at a
    /// million hosts, several hundred MB of the run's peak).
    pub(super) fn release_run_buffers(&mut self) {
        self.queues = Vec::new();
        self.out.buckets.iter_mut().for_each(|b| *b = Vec::new());
        self.out.side.iter_mut().for_each(|b| *b = Vec::new());
        self.active = Vec::new();
        self.far = Far::new(0);
        self.next = Vec::new();
    }

    /// Pushes `event` into the queue of the LP in slot `local` (allocated on its first
    /// event).
    #[inline]
    pub(super) fn accept(&mut self, local: u32, event: Event, model: &Model) {
        let time = event.key.time;
        if self.slots[local as usize].is_none() {
            self.allocate(local as usize, model);
        }
        self.queues[local as usize].push_remote(event);
        // A group stands on the active list by its leader ([`super::groups`]).
        let local = if self.groups.is_some() {
            self.lead(local) as usize
        } else {
            local as usize
        };
        if self.next[local] == SimTime::MAX {
            // Idle until now: no skips in a row yet.
            self.far.on_list(local as u32);
            self.active.push(local as u32);
        } else if time < self.next[local] && self.far.holds(local as u32) {
            // Due earlier than it waits for: back to the active list.
            self.far.on_list(local as u32);
            self.active.push(local as u32);
        }
        if time < self.next[local] {
            self.next[local] = time;
        }
        self.min_next = self.min_next.min(time);
    }

    /// The slot that stands for slot `local` on the active list (out of line: only chunks
    /// with link groups ask).
    #[inline(never)]
    fn lead(&self, local: u32) -> u32 {
        self.groups.as_ref().map_or(local, |g| g.lead(local))
    }

    /// Allocates the LP of slot `local` (its first event), with every other member of its
    /// group (whose events the members push into each other's queues directly).
    #[cold]
    #[inline(never)]
    fn allocate(&mut self, local: usize, model: &Model) {
        let group = self.groups.as_ref().and_then(|g| {
            let at = g.group_at[local];
            (at != NO_GROUP).then(|| g.members[at as usize].clone())
        });
        for slot in group.as_deref().unwrap_or(&[local as u32]) {
            let slot = *slot as usize;
            if self.slots[slot].is_none() {
                let node = self.nodes[slot];
                self.slots[slot] = Some(Box::new(NodeState::for_node(node, model)));
                self.allocated.push(slot as u32);
            }
        }
    }

    /// Pushes messages addressed to this chunk into their LPs' queues (and side records
    /// into their side tables).
    pub(super) fn deliver(
        &mut self,
        inbox: &mut Inbox,
        model: &Model,
        not_before: Option<SimTime>,
    ) {
        for messages in inbox.events.iter_mut() {
            for (local, mut event) in messages.drain(..) {
                // Quantized: a message due inside the window it was sent in waits for that
                // window's end; a later one keeps its exact time.
                if let Some(at) = not_before {
                    event.key.time = event.key.time.max(at);
                }
                self.accept(local, event, model);
            }
        }
        // Every stack travels with an arrival delivered above, so its LP exists.
        for messages in inbox.side.iter_mut() {
            for (local, id, stack) in messages.drain(..) {
                self.slots[local as usize]
                    .as_mut()
                    .expect("the packet's arrival allocated the LP")
                    .lp
                    .side_record_in(id, stack);
            }
        }
    }
}

/// What waits for one chunk at the start of a window: the messages its LPs were sent in the
/// previous one, indexed by source chunk (buffers reused).
pub(super) struct Inbox {
    /// Events.
    pub(super) events: Vec<Vec<Message>>,
    /// Side records.
    pub(super) side: Vec<Vec<SideMessage>>,
}

impl Inbox {
    pub(super) fn new(n_chunks: usize) -> Inbox {
        Inbox {
            events: (0..n_chunks).map(|_| Vec::new()).collect(),
            side: (0..n_chunks).map(|_| Vec::new()).collect(),
        }
    }
}

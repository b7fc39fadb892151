//! The sequential reference engine: one global event heap, one event at a time, in key order.
//! Test support for the differential tests (the window engine must produce identical output);
//! it shares all element code with the window engine and is deliberately simple.

use std::collections::BinaryHeap;

use super::event::{Event, EventSink};
use super::node::NodeState;
use super::{Model, PfcRows, RunError, RunOutput, RunStats, collect_output, overflow_error};
use crate::telemetry::SideRecord;
use crate::units::SimTime;

/// Heap entry: the event and the LP it is for (ordered by the event alone; keys are unique).
#[derive(PartialEq, Eq)]
struct Entry(Event, u32);

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}
impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

struct GlobalSink<'a> {
    heap: &'a mut BinaryHeap<Entry>,
    current: u32,
    /// Side records sent while the current event was handled (stored in their LPs'
    /// side tables right after it).
    side_records: &'a mut Vec<(u32, u64, Box<SideRecord>)>,
}

impl EventSink for GlobalSink<'_> {
    fn local(&mut self, event: Event) {
        self.heap.push(Entry(event, self.current));
    }
    fn remote(&mut self, node: u32, event: Event) {
        self.heap.push(Entry(event, node));
    }
    fn side_record(&mut self, node: u32, id: u64, stack: Box<SideRecord>) {
        self.side_records.push((node, id, stack));
    }
}

/// Runs `model` sequentially until no event is left or `end` is reached.
pub fn run(model: &Model, end: Option<SimTime>) -> Result<RunOutput, RunError> {
    let mut states: Vec<Option<NodeState>> = vec![None; model.net.n_nodes()];
    let mut heap: BinaryHeap<Entry> = model
        .initial_events()
        .map(|(node, e)| Entry(e, node))
        .collect();
    let mut last = SimTime::ZERO;
    let mut side_records = Vec::new();
    let mut out = crate::transport::TransportOut::default();
    while let Some(Entry(event, node)) = heap.pop() {
        if end.is_some_and(|e| event.key.time >= e) {
            break;
        }
        let state = states[node as usize].get_or_insert_with(|| NodeState::for_node(node, model));
        state.handle(
            event,
            model,
            &mut GlobalSink {
                heap: &mut heap,
                current: node,
                side_records: &mut side_records,
            },
            &mut out,
        );
        // The window engine shares this buffer among a chunk's LPs: nothing may stay in it.
        assert!(
            out.packets.is_empty() && out.timers.is_empty() && out.side.is_empty(),
            "node {node} left transport output behind"
        );
        last = last.max(state.lp.last_useful);
        if state.lp.failed() {
            break;
        }
        for (to, id, stack) in side_records.drain(..) {
            states[to as usize]
                .get_or_insert_with(|| NodeState::for_node(to, model))
                .lp
                .side_record_in(id, stack);
        }
    }
    overflow_error(states.iter().flatten())?;
    let stats = RunStats {
        last_event: last,
        window: SimTime::ZERO,
        ..RunStats::default()
    };
    Ok(collect_output(
        model,
        states.iter().flatten(),
        stats,
        PfcRows::default(),
    ))
}

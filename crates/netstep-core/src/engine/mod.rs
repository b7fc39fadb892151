//! The engines. Both run the same element code ([`node::NodeState::handle`]) over the same
//! [`Model`]; they differ only in how they order work:
//!
//! - [`window`]: the production engine. Time advances in windows `[T, T + W)` where `T` is the
//!   earliest pending event anywhere (idle time is skipped). Every LP with work in the window
//!   processes its events in key order, in parallel (threads kept spinning between windows); cross-LP messages are exchanged at
//!   the barrier. With `W <= lookahead` this is exactly a sequential simulation.
//! - [`mod@reference`]: a plain global event heap, one event at a time. Test support: the
//!   differential tests require identical results from both.

mod chunk;
pub mod event;
mod far;
pub mod groups;
pub mod lp_queue;
mod lp_run;
pub mod model;
pub mod node;
mod output;
mod pace;
mod placement;
pub mod port_outcomes;
pub mod reference;
mod sampling;
mod team;
pub mod trace;
pub mod window;

pub use model::Model;
pub(crate) use output::{PfcRows, collect_output, overflow_error};
pub use output::{PortOutcome, RankOutcome, RunOutput, RunStats};
pub use port_outcomes::PortOutcomes;

use crate::units::SimTime;

/// Makes room in `v` for `needed` elements, doubling its capacity from the first element used
/// rather than from `Vec`'s least of four: in a large run most LPs hold one or two events and
/// a fan-in's host one socket, each for the whole run.
#[inline]
pub(crate) fn reserve_doubling<T>(v: &mut Vec<T>, needed: usize) {
    if needed > v.capacity() {
        let room = needed.max(2 * v.capacity());
        v.reserve_exact(room - v.len());
    }
}

/// Why a run could not complete.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// An event would happen after the latest representable time.
    #[error(
        "node {node} scheduled an event at {at_ps} ps, past the latest representable time ({max} ps, about 13 days); shorten the scenario's times (flow starts, timers, link delays)",
        max = event::MAX_EVENT_TIME.0
    )]
    TimeOverflow {
        /// The node that scheduled it.
        node: u32,
        /// The time it asked for, ps (saturated at `u64::MAX`).
        at_ps: u64,
    },
    /// The run was asked to stop (a signal) before it ended.
    #[error("stopped before the end")]
    Interrupted,
    /// A packet of a telemetry (HPCC) flow crossed more switches than its telemetry stack
    /// holds: a link failure rerouted it while it was in flight.
    #[error(
        "flow {flow}: a packet crossed more than {max} switches at node {node}, more than the per-hop telemetry records HPCC carries (a link failure rerouted it in flight); schedule the failure so that no HPCC path is longer, or shorten the paths",
        max = crate::telemetry::MAX_INT_HOPS
    )]
    TelemetryOverflow {
        /// The flow.
        flow: u32,
        /// Where its packet found the stack full.
        node: u32,
    },
}

/// How wide a window is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WindowMode {
    /// The lookahead: exact.
    Exact,
    /// A fixed width, possibly larger than the lookahead (time quantization: windows aligned
    /// to multiples of the width; a cross-LP arrival due inside the window it was sent in is
    /// delayed to that window's end, any later one keeps its exact time).
    Quantized(SimTime),
}

/// Run parameters of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EngineConfig {
    /// Threads (1 = the calling thread alone, no workers).
    pub threads: usize,
    /// Window width.
    pub window: WindowMode,
    /// Stop before events at or after this time; `None` runs until no event is left.
    pub end: Option<SimTime>,
}

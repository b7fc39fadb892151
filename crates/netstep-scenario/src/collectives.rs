//! The collective jobs of a scenario and the step each of their flows belongs to: what the
//! `collectives.parquet` table and the run summary group flows by. Not model input (the engine
//! does not know about jobs), so it is kept beside the model, not in the setup World.

use netstep_core::units::SimTime;

/// Where a flow of a collective belongs: its job, iteration and step.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CollectiveStep {
    /// Job index (into [`Collectives::jobs`]).
    pub job: u32,
    /// Iteration (0-based).
    pub iteration: u32,
    /// Step within the iteration (0-based).
    pub step: u32,
}

/// One collective job: a `collective` traffic block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CollectiveJob {
    /// The job's name.
    pub name: String,
    /// The algorithm's name (`ring_all_reduce`, ...).
    pub collective: &'static str,
    /// Number of ranks.
    pub ranks: u32,
    /// When its first iteration starts.
    pub start: SimTime,
}

/// The collective jobs of a scenario and their flows' steps.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Collectives {
    /// The jobs, in block order.
    pub jobs: Vec<CollectiveJob>,
    /// `(flow id, step)` of every flow of a collective.
    pub steps: Vec<(u32, CollectiveStep)>,
}

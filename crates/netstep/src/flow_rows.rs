//! The `flows` table's rows, made on demand from the model's flow table and the run's
//! per-flow outcomes (both by flow id), never all held at once: a run of millions of flows
//! writes them a batch at a time, and what the summary needs of them ([`FlowStats`]) is
//! gathered in one pass.

use netstep_core::engine::RunOutput;
use netstep_core::flow::ideal_fct;
use netstep_core::transport::TransportSpec;
use netstep_core::transport::tcp::FctFrom;
use netstep_core::units::SimTime;
use netstep_scenario::Scenario;
use netstep_trace::FlowRow;

use crate::hpcc::export::{FctFormat, standalone_fct_ns};

/// Every flow's row, made when asked for.
pub struct FlowRows<'a> {
    scenario: &'a Scenario,
    output: &'a RunOutput,
    /// Every flow's ideal FCT (by flow id; 8 B each, as a 10 M-flow run holds them all).
    ideals: Vec<SimTime>,
    /// The HPCC simulator's formula of the second ideal (`--format`), if any.
    standalone: Option<FctFormat>,
}

/// What the summary and `run.parquet` need of the flow rows.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    /// Flows.
    pub total: u64,
    /// Flows that delivered every byte.
    pub completed: u64,
    /// Flows given up (retry limit).
    pub failed: u64,
    /// The latest completion, ns.
    pub last_end_ns: Option<u64>,
    /// Every completed flow's slowdown, ascending.
    pub slowdowns: Vec<f64>,
}

/// Every flow's ideal FCT (by flow id), computed on `threads` threads (at most one per core):
/// an open-loop flow's replays each of its packets through its path, which at hundreds of
/// thousands of flows takes seconds on one thread.
fn ideal_fcts(model: &netstep_core::engine::Model, threads: usize) -> Vec<SimTime> {
    let n = model.flows.flows.len();
    let mut ideals = vec![SimTime::ZERO; n];
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let per = n.div_ceil(threads.clamp(1, cores)).max(1);
    std::thread::scope(|scope| {
        for (part, slots) in ideals.chunks_mut(per).enumerate() {
            scope.spawn(move || {
                for (i, slot) in slots.iter_mut().enumerate() {
                    let flow = (part * per + i) as u32;
                    *slot = ideal_fct(&model.net, &model.flows, flow, model.seed)
                        .expect("validated: every flow has a route");
                }
            });
        }
    });
    ideals
}

impl<'a> FlowRows<'a> {
    /// The rows of `output`'s flows; with `standalone`, each row also has the HPCC
    /// simulator's ideal FCT in that format's formula.
    pub fn new(
        scenario: &'a Scenario,
        output: &'a RunOutput,
        standalone: Option<FctFormat>,
    ) -> FlowRows<'a> {
        FlowRows {
            scenario,
            output,
            ideals: ideal_fcts(&scenario.model, scenario.meta.threads),
            standalone,
        }
    }

    /// The scenario the rows are of.
    pub fn scenario(&self) -> &'a Scenario {
        self.scenario
    }

    /// The run the rows are of.
    pub fn output(&self) -> &'a RunOutput {
        self.output
    }

    /// Number of flows.
    pub fn len(&self) -> usize {
        self.output.flows.len()
    }

    /// Whether the run had no flow.
    pub fn is_empty(&self) -> bool {
        self.output.flows.is_empty()
    }

    /// Whether the rows carry the simulator's standalone FCT.
    pub fn has_standalone(&self) -> bool {
        self.standalone.is_some()
    }

    /// The row of flow `id`.
    pub fn row(&self, id: u32) -> FlowRow {
        let model = &self.scenario.model;
        let spec = &model.flows.flows[id as usize];
        let r = self.output.flows.get(id as usize);
        let ideal = self.ideals[id as usize];
        // A flow that waits for others (or for its job's walker) starts when they release
        // it; one that starts on its own reports its start even when the run ended before it.
        let start = if model.starts_alone(id) {
            Some(spec.start)
        } else {
            r.start
        };
        // With a TCP handshake the FCT starts when the first data segment leaves, unless the
        // transport asks for the connection's start.
        let from = match &*spec.transport {
            TransportSpec::Tcp(t) if t.handshake && t.fct_from == FctFrom::FirstData => r.handshake,
            _ => start,
        };
        let fct = r.end.zip(from).map(|(end, from)| end - from);
        FlowRow {
            flow_id: id,
            src: spec.src,
            dst: spec.dst,
            transport: match &*spec.transport {
                TransportSpec::OpenLoop(_) => "open_loop",
                TransportSpec::Tcp(t) => t.cc.transport_name(),
                TransportSpec::Rdma(r) => r.cc.transport_name(),
            },
            size_bytes: spec.size.0,
            start_ns: start.map(|s| s.as_ns()),
            deps_done_ns: r.deps_done.map(|d| d.as_ns()),
            end_ns: r.end.map(|e| e.as_ns()),
            // In whole ns as end_ns - start_ns, so the table is self-consistent; slowdown
            // uses the exact picosecond values.
            fct_ns: r.end.zip(from).map(|(e, s)| e.as_ns() - s.as_ns()),
            handshake_ns: r.handshake.map(|h| h.as_ns()),
            ideal_fct_ns: ideal.as_ns(),
            slowdown: fct.map(|f| f.0 as f64 / ideal.0.max(1) as f64),
            packets_sent: r.packets_sent,
            packets_delivered: r.packets_delivered,
            packets_dropped: r.packets_dropped,
            ecn_marks: r.ecn_marks,
            retransmits: r.retransmits,
            timeouts: r.timeouts,
            fail_reason: r.failure.map(|f| f.name()),
            completed: r.end.is_some(),
            standalone_fct_ns: self
                .standalone
                .and_then(|format| standalone_fct_ns(self.scenario, id, format)),
        }
    }

    /// The statistics of every row, in one pass.
    pub fn stats(&self) -> FlowStats {
        let mut stats = FlowStats {
            total: self.len() as u64,
            ..FlowStats::default()
        };
        for r in &self.output.flows {
            let id = r.flow;
            if r.failure.is_some() {
                stats.failed += 1;
            }
            let Some(end) = r.end else { continue };
            stats.completed += 1;
            stats.last_end_ns = stats.last_end_ns.max(Some(end.as_ns()));
            let model = &self.scenario.model;
            let start = if model.starts_alone(id) {
                Some(model.flows.flows[id as usize].start)
            } else {
                r.start
            };
            if let Some(start) = start {
                let ideal = self.ideals[id as usize];
                stats
                    .slowdowns
                    .push((end - start).0 as f64 / ideal.0.max(1) as f64);
            }
        }
        stats.slowdowns.sort_by(f64::total_cmp);
        stats
    }
}

//! Queue and congestion-control sampling at window barriers: every used port's queue and
//! counters, every running TCP or RDMA flow's congestion control, taken between windows when
//! every event before the sample time is done (windows are cut at sample times), and handed to
//! the [`TraceSink`] sorted by port or flow.

use super::chunk::Chunk;
use super::model::Model;
use super::trace::{CcSample, QueueSample, TraceSink};
use crate::units::SimTime;

/// Samples every port that has carried traffic at time `at`.
pub(super) fn queues(
    chunks: &[Chunk],
    model: &Model,
    at: SimTime,
    rows: &mut Vec<QueueSample>,
    trace: &mut impl TraceSink,
) {
    for chunk in chunks {
        for &local in &chunk.allocated {
            let state = chunk.slots[local as usize].as_ref().expect("allocated");
            for (port_local, port) in state.ports.iter().enumerate() {
                if !port.is_used() {
                    continue;
                }
                let row = QueueSample {
                    time_ps: at.0,
                    port: model.net.port_id(state.node(), port_local as u32),
                    node: state.node(),
                    queue_bytes: port.queue_bytes(),
                    queue_packets: port.queue_len() as u32,
                    tx_bytes: port.tx_bytes(),
                    tx_packets: port.tx_packets(),
                    drops: port.drops() + port.lost(),
                    ecn_marks: port.ecn_marks(),
                };
                rows.push(row);
            }
        }
    }
    rows.sort_unstable_by_key(|r| r.port);
    trace.samples(rows);
}

/// Samples the congestion control of every running TCP or RDMA flow (of the sampled flows) at
/// time `at`.
pub(super) fn cc(
    chunks: &[Chunk],
    model: &Model,
    at: SimTime,
    rows: &mut Vec<CcSample>,
    trace: &mut impl TraceSink,
) {
    let keep = model.trace.cc_flows.as_deref();
    for chunk in chunks {
        for &local in &chunk.allocated {
            let state = chunk.slots[local as usize].as_ref().expect("allocated");
            for sender in state.senders().iter().flatten() {
                let Some(row) = sender.cc_sample(at) else {
                    continue;
                };
                if keep.is_none_or(|k| k.get(row.flow as usize).copied().unwrap_or(false)) {
                    rows.push(row);
                }
            }
        }
    }
    rows.sort_unstable_by_key(|r| r.flow);
    trace.cc_samples(rows);
}

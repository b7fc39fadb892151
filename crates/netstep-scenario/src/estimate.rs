//! Sizes by arithmetic: a scenario too large to build for `netstep validate`, and the row
//! counts of the optional trace tables, checked against the limits before a run.

use std::path::Path;

use netstep_core::engine::{Model, WindowMode};
use netstep_core::units::SimTime;

use crate::config::ScenarioFile;
use crate::error::{FieldPath, Invalid};
use crate::limits::{self, Footprint, Limits};
use crate::{Estimate, config, topology, traffic, transport};

/// The rows the optional `packet_hops` and `cc_samples` tables will have, into `footprint`,
/// checked against their limits.
pub(crate) fn trace_rows(
    model: &Model,
    duration: Option<SimTime>,
    footprint: &mut Footprint,
    limits: &Limits,
) -> Result<(), Invalid> {
    if let Some(filter) = &model.trace.packet_hops {
        footprint.packet_hop_rows = estimate_packet_hops(model, filter);
        // With a duration or a time filter the run writes fewer: no refusal on disk space.
        footprint.packet_hops_bounded =
            duration.is_some() || filter.from > SimTime::ZERO || filter.until < SimTime::MAX;
        limits.check_count(
            footprint.packet_hop_rows,
            limits::MAX_PACKET_HOP_ROWS,
            "packet_hops rows (packets x hops after trace.flows, trace.nodes and trace.sample_one_in)",
            &FieldPath::of(&["trace", "sample_one_in"]),
        )?;
    }
    if let Some(interval) = model.trace.cc_samples {
        footprint.cc_sample_rows = estimate_cc_samples(model, interval, duration);
        limits.check_count(
            footprint.cc_sample_rows,
            limits::MAX_CC_SAMPLE_ROWS,
            "cc_samples rows (every sample_interval in each kept TCP or RDMA flow's lifetime, at least its ideal FCT and its last ACK's way back; a longer trace.sample_interval or a trace.flows filter writes fewer)",
            &FieldPath::of(&["trace", "sample_interval"]),
        )?;
    }
    if !model.flows.is_empty() && model.lookahead() == SimTime::ZERO {
        return Err(Invalid::new(
            FieldPath::of(&["topology"]),
            format!(
                "zero lookahead: a link has propagation delay 0 and the smallest packet is {} bytes, so a packet could cross it in no time; give links a delay or packets a size",
                model.min_packet().0
            ),
        ));
    }
    Ok(())
}

/// [`Validated::Estimated`]: the sizes of a generated topology of `hosts` hosts of line rate
/// `host_rate` (bits per second) and link `classes`, the flows its traffic blocks would generate, the memory
/// estimate (checked against the budget) and the lookahead, all by arithmetic.
pub(crate) fn estimate(
    parsed: &ScenarioFile,
    (hosts, host_rate): (u64, f64),
    classes: &[netstep_core::topology::LinkClass],
    counts: topology::Counts,
    base_dir: Option<&Path>,
    limits: &Limits,
    window: WindowMode,
) -> Result<Estimate, Invalid> {
    let flows = traffic::count_flows(&parsed.traffic, hosts, host_rate, base_dir)?;
    let footprint = Footprint {
        nodes: counts.nodes,
        ports: counts.ports,
        flows,
        ..Default::default()
    };
    limits.check_count(
        flows,
        limits::MAX_FLOWS,
        "flows",
        &FieldPath::of(&["traffic"]),
    )?;
    limits.check_memory(&footprint, &FieldPath::of(&["traffic"]))?;
    // The smallest packet of any block's transport (a flow of one byte), PAUSE frames with PFC.
    let default = match &parsed.transport {
        Some(t) => Some(transport::resolve_transport(
            t,
            FieldPath::of(&["transport"]),
        )?),
        None => None,
    };
    let mut smallest = u64::MAX;
    for (b, block) in parsed.traffic.iter().enumerate() {
        let path = FieldPath::of(&["traffic"]).index(b);
        let template = match block.transport() {
            Some(t) => Some(transport::resolve_transport(t, path.key("transport"))?),
            None => default.clone(),
        };
        let min = match template {
            Some(t) => {
                let (spec, size) = t.for_flow(Some(netstep_core::units::Bytes(1)), None, &path)?;
                spec.min_packet(size).0
            }
            // The default TCP: a 40 B header.
            None => 40,
        };
        smallest = smallest.min(min);
        // A flow file's rows may name the block's other transports.
        if let config::TrafficConfig::FlowFile(file) = block {
            for t in file.named_transports(&path)?.into_values() {
                let (spec, size) = t.for_flow(Some(netstep_core::units::Bytes(1)), None, &path)?;
                smallest = smallest.min(spec.min_packet(size).0);
            }
        }
    }
    if parsed.switch.pfc.is_some() {
        smallest = smallest.min(netstep_core::pfc::FRAME_BYTES as u64);
    }
    let lookahead = classes
        .iter()
        .map(|c| c.delay + c.rate.serialization(netstep_core::units::Bytes(smallest)))
        .min()
        .unwrap_or(SimTime::MAX);
    Ok(Estimate {
        name: parsed.name.clone().unwrap_or_default(),
        hosts,
        footprint,
        lookahead,
        window,
    })
}

/// Expected `packet_hops` rows (see [`Footprint::packet_hop_rows`]): each kept flow's data
/// packets over its route and its ACKs over the way back (TCP: one per segment, or one per two
/// with delayed ACKs; RDMA: one per `ack_every`; open loop: none), counted at the nodes the
/// filter keeps, divided by the 1-in-N sampling.
/// A lower bound on the `cc_samples` rows: each kept TCP or RDMA flow is sampled at every
/// multiple of `interval` from its start while its sender runs, at least its ideal FCT plus the
/// unloaded way back of its last ACK, cut at the run's end.
pub(crate) fn estimate_cc_samples(
    model: &netstep_core::engine::Model,
    interval: SimTime,
    duration: Option<SimTime>,
) -> u64 {
    use netstep_core::transport::TransportSpec;
    let keep = model.trace.cc_flows.as_deref();
    let step = interval.0.max(1);
    let mut rows = 0u64;
    for (id, f) in model.flows.flows.iter().enumerate() {
        // A flow that waits for others (or for its job's walker) may start late or never:
        // counted as none (a lower bound).
        if matches!(&*f.transport, TransportSpec::OpenLoop(_))
            || !model.starts_alone(id as u32)
            || keep.is_some_and(|k| !k.get(id).copied().unwrap_or(false))
        {
            continue;
        }
        let flow = id as u32;
        // The last ACK's way back: propagation and its serialization at every hop.
        let ack = f.transport.min_packet(f.size);
        let back: u64 = netstep_core::flow::flow_route(&model.net, &model.flows, flow, true)
            .unwrap_or_default()
            .into_iter()
            .map(|(node, local)| {
                let class = model.net.class_of(model.net.port_id(node, local));
                class.delay.0 + class.rate.serialization(ack).0
            })
            .sum();
        let life = netstep_core::flow::ideal_fct(&model.net, &model.flows, flow, model.seed)
            .unwrap_or(SimTime::ZERO)
            .0
            .saturating_add(back);
        let start = f.start.0;
        let mut end = start.saturating_add(life);
        if let Some(d) = duration {
            end = end.min(d.0);
        }
        if end <= start {
            continue;
        }
        // Multiples of the interval in (start, end]: a sample at `t` sees the state before
        // the events at `t` (no sender yet at its start; still running when its last ACK is
        // due).
        rows = rows.saturating_add(end / step - start / step);
    }
    rows
}

pub(crate) fn estimate_packet_hops(
    model: &netstep_core::engine::Model,
    filter: &netstep_core::engine::trace::HopFilter,
) -> u64 {
    use netstep_core::transport::TransportSpec;
    let kept = |node: u32| {
        filter
            .nodes
            .as_ref()
            .is_none_or(|n| n.get(node as usize).copied().unwrap_or(false))
    };
    let hops = |flow: u32, reverse: bool| {
        netstep_core::flow::flow_route(&model.net, &model.flows, flow, reverse).map_or(0, |route| {
            route.iter().filter(|(node, _)| kept(*node)).count() as u64
        })
    };
    let mut rows = 0u64;
    for (flow, f) in model.flows.flows.iter().enumerate() {
        if !filter
            .flows
            .as_ref()
            .is_none_or(|k| k.get(flow).copied().unwrap_or(false))
        {
            continue;
        }
        let data = transport::data_packets(&f.transport, f.size);
        let acks = match &*f.transport {
            TransportSpec::OpenLoop(_) => 0,
            TransportSpec::Tcp(t) if t.delayed_ack.is_some() => data.div_ceil(2),
            TransportSpec::Tcp(_) => data,
            TransportSpec::Rdma(r) => data.div_ceil(r.ack_every.max(1) as u64),
        };
        rows = rows
            .saturating_add(data.saturating_mul(hops(flow as u32, false)))
            .saturating_add(acks.saturating_mul(hops(flow as u32, true)));
    }
    rows / filter.one_in.max(1) as u64
}

/// The most flows in flight at once if each lived from its start for its unloaded transfer
/// time (its bytes at its source's line rate) plus 10 us: [`Footprint::live_flows`]. A lower
/// bound (congestion lengthens lifetimes), close where flows arrive spread out, exact where
/// they all start together.
/// A training job's flows (released by its walkers, [`netstep_core::job`]) count as the most
/// any op of each of a GPU's two queues has going at once over all GPUs: its initial flows (a
/// ring's one flow per ring and GPU, an all-to-all's every flow).
pub(crate) fn live_flows(model: &netstep_core::engine::Model) -> u64 {
    let net = &model.net;
    let slack = SimTime::from_us(10);
    let mut edges: Vec<(SimTime, i8)> = Vec::with_capacity(2 * model.flows.flows.len());
    let job = model.job.as_deref();
    let mut job_live = 0u64;
    if let Some(job) = job {
        let mut most = [0u64; 2];
        for (k, op) in job.ops.iter().enumerate() {
            let at_once: u64 = (0..job.ranks())
                .map(|r| u64::from(job.rank_op(r, k as u32).initial))
                .sum();
            let q = op.queue as usize;
            most[q] = most[q].max(at_once);
        }
        job_live = most[0] + most[1];
    }
    for (i, f) in model.flows.flows.iter().enumerate() {
        if job.is_some_and(|j| j.owns(i as u32)) {
            continue;
        }
        let first = netstep_core::flow::first_port(net, &model.flows, i as u32, false);
        let rate = net.class_of(net.port_id(f.src, first)).rate.0.max(1);
        let transfer = SimTime((f.size.0 as u128 * 8_000_000_000_000 / rate as u128) as u64);
        edges.push((f.start, 1));
        edges.push((f.start.saturating_add(transfer).saturating_add(slack), -1));
    }
    // Ends before starts at the same instant.
    edges.sort_unstable();
    let (mut live, mut most) = (0i64, 0i64);
    for (_, step) in edges {
        live += step as i64;
        most = most.max(live);
    }
    most as u64 + job_live
}

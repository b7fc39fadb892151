//! The checks on a compiled model that need the whole of it: every flow routed (and within
//! HPCC's telemetry stack), finish notices that can reach their waiting flows, RDMA rates
//! below the line rate, pulled flows that are RDMA, PFC buffers above their reserve, and
//! telemetry paths under every failure epoch.

use bevy_ecs::world::World;
use netstep_core::engine::Model;
use netstep_core::world;

use crate::error::{FieldPath, Invalid};

/// Every check on a compiled model, in the order errors are reported.
pub(crate) fn check_model(model: &Model, world: &mut World) -> Result<(), Invalid> {
    check_routes(model, world)?;
    check_notices(model, world)?;
    check_min_rates(model)?;
    check_pulled_flows(model, world)?;
    check_pfc_buffer(model, world)?;
    if let Some(failures) = &model.failures {
        check_telemetry_under_failures(model, failures, world)?;
    }
    Ok(())
}

/// Refuses a flow with no route, or whose route crosses more switches than a telemetry
/// (HPCC) stack holds when it carries telemetry.
fn check_routes(model: &Model, world: &mut World) -> Result<(), Invalid> {
    for flow in 0..model.flows.len() as u32 {
        let route = netstep_core::flow::flow_route(&model.net, &model.flows, flow, false);
        let f = &model.flows.flows[flow as usize];
        // Telemetry (HPCC) stacks hold one record per switch egress port on the path.
        let too_long = route.as_ref().is_some_and(|r| {
            f.transport.telemetry()
                && r.len().saturating_sub(1) > netstep_core::telemetry::MAX_INT_HOPS
        });
        if route.is_none() || too_long {
            let mut name =
                |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
            let (src, dst) = (name(f.src), name(f.dst));
            let why = match route {
                None => "has no route: no chain of links connects them".to_string(),
                Some(r) => format!(
                    "crosses {} switches, more than the {} per-hop telemetry records HPCC carries",
                    r.len() - 1,
                    netstep_core::telemetry::MAX_INT_HOPS
                ),
            };
            return Err(Invalid::new(
                FieldPath::of(&["traffic"]),
                format!("flow {flow} from {src:?} to {dst:?} {why}"),
            ));
        }
    }
    Ok(())
}

/// Dynamic PFC thresholds need a buffer larger than what every switch keeps out of the
/// shared pool (its ports' headroom and reserve), else the threshold is 0 and every lossless
/// arrival pauses.
fn check_pfc_buffer(model: &Model, world: &mut World) -> Result<(), Invalid> {
    let Some(dynamic) = model.pfc.as_ref().and_then(|p| p.dynamic()) else {
        return Ok(());
    };
    let net = &model.net;
    for node in 0..net.n_nodes() as u32 {
        if net.node_kind[node as usize] != netstep_core::topology::NodeKind::Switch {
            continue;
        }
        let fixed = dynamic.for_switch(net, node).fixed;
        if fixed >= dynamic.buffer.0 {
            let name = world::node_name(world, node).unwrap_or_else(|| format!("node {node}"));
            return Err(Invalid::new(
                FieldPath::of(&["switch", "pfc", "buffer"]),
                format!(
                    "switch {name:?} keeps {fixed} B out of the shared pool ({} ports x ({} link BDPs of headroom + {} reserve)), not less than the buffer {}: its PAUSE threshold would be 0; give a larger buffer or fewer headroom_bdps",
                    net.degree(node),
                    dynamic.headroom_bdps,
                    dynamic.reserve,
                    dynamic.buffer
                ),
            ));
        }
    }
    Ok(())
}

/// A pulling NIC (`[nic] scheduler = "pull"`) asks RDMA senders for packets; other
/// transports push theirs, so every flow must be RDMA.
fn check_pulled_flows(model: &Model, world: &mut World) -> Result<(), Invalid> {
    if model.nic.scheduler != netstep_core::nic::NicScheduler::Pull {
        return Ok(());
    }
    let Some(flow) = model.flows.flows.iter().position(|f| {
        !matches!(
            *f.transport,
            netstep_core::transport::TransportSpec::Rdma(_)
        )
    }) else {
        return Ok(());
    };
    let f = &model.flows.flows[flow];
    let mut name = |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
    let (src, dst) = (name(f.src), name(f.dst));
    let kind = match *f.transport {
        netstep_core::transport::TransportSpec::Tcp(_) => "tcp",
        _ => "open_loop",
    };
    Err(Invalid::new(
        FieldPath::of(&["nic", "scheduler"]),
        format!(
            "\"pull\" needs every flow to use transport kind = \"rdma\" (the NIC asks RDMA senders for their packets); flow {flow} from {src:?} to {dst:?} is {kind}"
        ),
    ))
}

/// Refuses an RDMA transport whose `min_rate` is above the line rate of a host that sends
/// with it (a sender's rate lies between the two).
fn check_min_rates(model: &netstep_core::engine::Model) -> Result<(), Invalid> {
    use netstep_core::transport::TransportSpec;
    for (id, f) in model.flows.flows.iter().enumerate() {
        if let TransportSpec::Rdma(r) = &*f.transport {
            let first = netstep_core::flow::first_port(&model.net, &model.flows, id as u32, false);
            let line = model.net.class_of(model.net.port_id(f.src, first)).rate.0 as f64;
            let min = r.cc.min_rate_bps();
            if let Some(max) = r.max_rate_bps
                && min > max
            {
                return Err(Invalid::new(
                    FieldPath::of(&["transport", "min_rate"]),
                    format!(
                        "{} is above max_rate ({}); a sender's rate lies between min_rate and max_rate",
                        netstep_core::units::BitsPerSec(min as u64),
                        netstep_core::units::BitsPerSec(max as u64)
                    ),
                ));
            }
            if min > line {
                return Err(Invalid::new(
                    FieldPath::of(&["transport", "min_rate"]),
                    format!(
                        "{} is above the line rate of flow {id}'s sender ({}); a sender's rate lies between min_rate and its line rate",
                        netstep_core::units::BitsPerSec(min as u64),
                        netstep_core::units::BitsPerSec(line as u64)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a flow waiting for a flow whose receiver cannot reach the waiting flow's source
/// (the notice of its finish could not get there).
fn check_notices(model: &netstep_core::engine::Model, world: &mut World) -> Result<(), Invalid> {
    let flows = &model.flows.flows;
    for (id, f) in flows.iter().enumerate() {
        for &dep in f.after.iter().flat_map(|d| d.flows.iter()) {
            let from = flows[dep as usize].dst;
            if from != f.src
                && netstep_core::flow::notify_latency(&model.net, from, f.src, id as u32).is_none()
            {
                let mut name =
                    |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
                let (at, to) = (name(from), name(f.src));
                return Err(Invalid::new(
                    FieldPath::of(&["traffic"]),
                    format!(
                        "flow {id} waits for flow {dep}, which ends at {at:?}, and no chain of links leads from {at:?} to {to:?}, where flow {id} starts"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Refuses a telemetry (HPCC) flow whose path, in some epoch of the failure schedule (the
/// routing over the live links while a link is down), crosses more switches than a telemetry
/// stack holds: the same rule as for its path with every link up. (A packet rerouted between
/// epochs while in flight can still get there; the run then stops with an error.)
fn check_telemetry_under_failures(
    model: &netstep_core::engine::Model,
    failures: &netstep_core::failure::FailureSchedule,
    world: &mut World,
) -> Result<(), Invalid> {
    use netstep_core::telemetry::MAX_INT_HOPS;
    let net = &model.net;
    let mut scratch = Vec::new();
    for at in failures.rerouted_epochs() {
        for (flow, f) in model.flows.flows.iter().enumerate() {
            if !f.transport.telemetry() || f.path.is_some() {
                continue;
            }
            let (mut node, mut switches) = (f.src, 0usize);
            while node != f.dst && switches <= net.n_nodes() {
                let hash = netstep_core::network::ecmp_hash(flow as u32, false, node);
                let Some(local) = failures.route(net, node, f.dst, hash, at, &mut scratch) else {
                    break;
                };
                node = net.port_peer[net.port_id(node, local) as usize];
                if node != f.dst {
                    switches += 1;
                }
            }
            if switches > MAX_INT_HOPS {
                let mut name =
                    |n: u32| world::node_name(world, n).unwrap_or_else(|| format!("node {n}"));
                let (src, dst) = (name(f.src), name(f.dst));
                return Err(Invalid::new(
                    FieldPath::of(&["failures"]),
                    format!(
                        "while links are down from {at}, flow {flow} from {src:?} to {dst:?} crosses {switches} switches, more than the {MAX_INT_HOPS} per-hop telemetry records HPCC carries"
                    ),
                ));
            }
        }
    }
    Ok(())
}

//! The model as a bevy_ecs World: nodes, links and flows are entities; configuration and
//! results are components; setup, injection and flushing are systems run by single-threaded
//! schedules (they run once per run, so a multi-threaded executor's start-up buys nothing;
//! ARCHITECTURE.md, "Data layout").
//!
//! The World is the one home of a run's configuration: nodes ([`NodeId`], [`NodeRole`],
//! [`NodeName`]), links ([`Link`], their classes in [`Fabric`]), flows ([`Flow`]) and link
//! failures ([`LinkDown`]) are entities with their settings as components; the settings the
//! engine applies to every host or every switch alike are resources ([`NicSettings`],
//! [`SwitchSettings`]), as are the seed and what is traced ([`Seed`], [`TraceSettings`]).
//!
//! The per-window hot path does not iterate the World: the setup systems
//! ([`compile_network`], [`inject_flows`], [`compile_elements`]) turn it into the dense,
//! read-only [`Model`] (struct-of-arrays port tables, flow table, element settings) that the
//! engines share, and [`record_outcomes`] writes each flow's result back onto its entity, where
//! the trace writer reads it. ARCHITECTURE.md records the measurements behind this split.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::balance::BalanceSpec;
use crate::engine::trace::TraceConfig;
use crate::engine::{Model, RunOutput};
use crate::failure::{FailureSchedule, LinkFailure};
use crate::flow::{FlowOutcome, FlowSpec, FlowTable};
use crate::network::{Network, NetworkError};
use crate::nic::NicConfig;
use crate::pfc::PfcSpec;
use crate::queue::SharedBuffer;
use crate::topology::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};
use crate::units::SimTime;

/// Node index (= logical process id).
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(pub u32);

/// Host or switch.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeRole(pub NodeKind);

/// Display name of a node.
#[derive(Component, Clone, Debug, PartialEq, Eq)]
pub struct NodeName(pub String);

/// A bidirectional link; `id` orders the ports of each node.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct Link {
    /// Link index (port order).
    pub id: u32,
    /// The link itself.
    pub spec: LinkSpec,
}

/// A flow entity's specification.
#[derive(Component, Clone, Debug, PartialEq)]
pub struct Flow {
    /// Flow id.
    pub id: u32,
    /// What it sends.
    pub spec: FlowSpec,
}

/// Where a flow of a collective belongs: its job, iteration and step.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CollectiveStep {
    /// Job index (into [`CollectiveJobs`]).
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

/// The collective jobs of the scenario, by job index.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct CollectiveJobs(pub Vec<CollectiveJob>);

/// Tags flows `first..` (ids, in order) with their collective steps and stores the jobs.
pub fn spawn_collectives(
    world: &mut World,
    jobs: Vec<CollectiveJob>,
    tags: &[(u32, CollectiveStep)],
) {
    if !tags.is_empty() {
        let by_id: std::collections::HashMap<u32, CollectiveStep> = tags.iter().copied().collect();
        let mut query = world.query::<(Entity, &Flow)>();
        let tagged: Vec<(Entity, CollectiveStep)> = query
            .iter(world)
            .filter_map(|(e, f)| by_id.get(&f.id).map(|t| (e, *t)))
            .collect();
        for (entity, tag) in tagged {
            world.entity_mut(entity).insert(tag);
        }
    }
    world.insert_resource(CollectiveJobs(jobs));
}

/// A link that fails during the run: the one link between nodes `a` and `b` carries nothing
/// from `down` until `up` (for good without one). `id` orders the failures.
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkDown {
    /// Failure index (the order the scenario lists them in).
    pub id: u32,
    /// One end (node index).
    pub a: u32,
    /// The other end (node index).
    pub b: u32,
    /// The link stops carrying packets at this time.
    pub down: SimTime,
    /// It carries packets again from this time (`None`: never).
    pub up: Option<SimTime>,
}

/// The NIC settings every host shares (the engine has one NIC model for all hosts).
#[derive(Resource, Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NicSettings(pub NicConfig);

/// The settings every switch shares: the shared buffer, load balancing, PFC.
#[derive(Resource, Clone, Debug, Default)]
pub struct SwitchSettings {
    /// Shared buffer with dynamic thresholds (`None`: each port has its own buffer).
    pub shared_buffer: Option<SharedBuffer>,
    /// How switches pick among equal-cost next hops.
    pub balance: BalanceSpec,
    /// Priority flow control (`None`: every class is lossy).
    pub pfc: Option<PfcSpec>,
    /// ACKs, NACKs and CNPs go ahead of the queues, outside buffers, AQM and PFC.
    pub ack_priority: bool,
}

/// What a run records beyond the always-written tables.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSettings(pub TraceConfig);

/// A flow entity's outcome, written by [`record_outcomes`].
#[derive(Component, Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlowResult(pub FlowOutcome);

/// Link classes and routing of the fabric.
#[derive(Resource, Clone, Debug)]
pub struct Fabric {
    /// Link classes referenced by [`Link`]s.
    pub classes: Vec<LinkClass>,
    /// Routing choice.
    pub routing: RoutingKind,
}

/// Seed of all random streams.
#[derive(Resource, Clone, Copy, Debug)]
pub struct Seed(pub u64);

/// What the setup systems produced.
#[derive(Resource, Default)]
pub struct Setup {
    network: Option<Result<Network, NetworkError>>,
    model: Option<Result<Model, NetworkError>>,
}

/// The engine's output, inserted before [`record_outcomes`] runs.
#[derive(Resource, Clone, Debug)]
pub struct RunResults(pub RunOutput);

/// Spawns the nodes and links of `spec` and inserts its [`Fabric`].
pub fn spawn_topology(world: &mut World, spec: TopologySpec) {
    let TopologySpec {
        nodes,
        links,
        classes,
        routing,
    } = spec;
    world.spawn_batch(
        nodes
            .into_iter()
            .enumerate()
            .map(|(i, NodeSpec { kind, name })| (NodeId(i as u32), NodeRole(kind), NodeName(name))),
    );
    world.spawn_batch(
        links
            .into_iter()
            .enumerate()
            .map(|(i, spec)| Link { id: i as u32, spec }),
    );
    world.insert_resource(Fabric { classes, routing });
}

/// The name of node `id`, if it exists (a linear scan over the node entities: for messages).
pub fn node_name(world: &mut World, id: u32) -> Option<String> {
    world
        .query::<(&NodeId, &NodeName)>()
        .iter(world)
        .find(|(n, _)| n.0 == id)
        .map(|(_, name)| name.0.clone())
}

/// Spawns one [`LinkDown`] entity per failure `(a, b, down, up)`, in order.
pub fn spawn_failures(world: &mut World, failures: &[(u32, u32, SimTime, Option<SimTime>)]) {
    world.spawn_batch(
        failures
            .iter()
            .enumerate()
            .map(|(i, &(a, b, down, up))| LinkDown {
                id: i as u32,
                a,
                b,
                down,
                up,
            }),
    );
}

/// Spawns one entity per flow (ids in order) and sets the seed.
pub fn spawn_flows(world: &mut World, flows: Vec<FlowSpec>, seed: u64) {
    world.spawn_batch(
        flows
            .into_iter()
            .enumerate()
            .map(|(i, spec)| Flow { id: i as u32, spec }),
    );
    world.insert_resource(Seed(seed));
}

/// Setup system: compiles node and link entities into the dense [`Network`] (read in place:
/// each node's kind and each link, by index; names only for an error message).
pub fn compile_network(
    nodes: Query<(&NodeId, &NodeRole, &NodeName)>,
    links: Query<&Link>,
    fabric: Res<Fabric>,
    mut setup: ResMut<Setup>,
) {
    let mut kinds = vec![NodeKind::Host; nodes.iter().len()];
    for (id, role, _) in &nodes {
        kinds[id.0 as usize] = role.0;
    }
    let mut link_list = vec![
        LinkSpec {
            a: 0,
            b: 0,
            class: 0,
            class_ba: 0,
        };
        links.iter().len()
    ];
    for link in &links {
        link_list[link.id as usize] = link.spec;
    }
    let name = |n: u32| {
        nodes
            .iter()
            .find(|(id, _, _)| id.0 == n)
            .map_or_else(|| format!("node {n}"), |(_, _, name)| name.0.clone())
    };
    setup.network = Some(Network::compile_parts(
        kinds,
        name,
        &link_list,
        &fabric.classes,
        &fabric.routing,
    ));
}

/// Injection system: gathers flow entities into the flow table and assembles the [`Model`].
pub fn inject_flows(flows: Query<&Flow>, seed: Res<Seed>, mut setup: ResMut<Setup>) {
    let Some(network) = setup.network.take() else {
        return;
    };
    let model = network.map(|net| {
        let mut list: Vec<(u32, FlowSpec)> = flows.iter().map(|f| (f.id, f.spec.clone())).collect();
        list.sort_by_key(|(id, _)| *id);
        let table = FlowTable::new(list.into_iter().map(|(_, s)| s).collect(), net.n_nodes());
        Model {
            net,
            flows: table,
            seed: seed.0,
            record_deliveries: false,
            trace: Default::default(),
            nic: Default::default(),
            shared_buffer: None,
            balance: Default::default(),
            failures: None,
            pfc: None,
            ack_priority: false,
        }
    });
    setup.model = Some(model);
}

/// Setup system: the element settings onto the [`Model`] (NICs, switches, tracing), and the
/// link failures compiled against its network (each failure epoch gets its own routing).
pub fn compile_elements(
    failures: Query<&LinkDown>,
    nic: Res<NicSettings>,
    switches: Res<SwitchSettings>,
    trace: Res<TraceSettings>,
    mut setup: ResMut<Setup>,
) {
    let Some(Ok(model)) = setup.model.as_mut() else {
        return;
    };
    model.nic = nic.0;
    model.shared_buffer = switches.shared_buffer;
    model.balance = switches.balance;
    model.pfc = switches.pfc;
    let mut dynamic_pfc = false;
    if let Some(crate::pfc::PfcSpec {
        thresholds: crate::pfc::PfcThresholds::Dynamic(dynamic),
        ..
    }) = model.pfc.as_mut()
    {
        dynamic_pfc = true;
        // The simulator's nic_rate: the first host's link.
        let net = &model.net;
        dynamic.host_rate = (0..net.n_nodes() as u32)
            .find(|&n| net.node_kind[n as usize] == crate::topology::NodeKind::Host)
            .map_or(0, |n| net.class_of(net.port_id(n, 0)).rate.0);
    }
    model
        .net
        .compile_shortcut(model.nic.shaper.is_some(), dynamic_pfc);
    model.ack_priority = switches.ack_priority;
    model.trace = trace.0.clone();
    let mut list: Vec<&LinkDown> = failures.iter().collect();
    if list.is_empty() {
        return;
    }
    list.sort_by_key(|f| f.id);
    let net = &model.net;
    let port = |from: u32, to: u32| {
        net.port_towards(from, to)
            .map(|local| net.port_id(from, local))
            .expect("the scenario checked that a link joins the failure's ends")
    };
    let list = list
        .into_iter()
        .map(|f| LinkFailure {
            port_a: port(f.a, f.b),
            port_b: port(f.b, f.a),
            down: f.down,
            up: f.up,
        })
        .collect();
    model.failures = Some(Box::new(FailureSchedule::new(net, list)));
}

/// Flushing system: writes each flow's outcome onto its entity.
pub fn record_outcomes(
    mut commands: Commands,
    flows: Query<(Entity, &Flow)>,
    results: Res<RunResults>,
) {
    for (entity, flow) in &flows {
        if let Some(&outcome) = results.0.flows.get(flow.id as usize) {
            commands.entity(entity).insert(FlowResult(outcome));
        }
    }
}

fn single_threaded(schedule: &mut Schedule) {
    schedule.set_executor(SingleThreadedExecutor::new());
}

/// Runs the setup schedule ([`compile_network`], [`inject_flows`], [`compile_elements`]) and
/// returns the model. Settings not in the World take their defaults.
pub fn build_model(world: &mut World) -> Result<Model, NetworkError> {
    world.insert_resource(Setup::default());
    world.init_resource::<NicSettings>();
    world.init_resource::<SwitchSettings>();
    world.init_resource::<TraceSettings>();
    let mut schedule = Schedule::default();
    single_threaded(&mut schedule);
    schedule.add_systems((compile_network, inject_flows, compile_elements).chain());
    schedule.run(world);
    world
        .resource_mut::<Setup>()
        .model
        .take()
        .expect("setup schedule ran")
}

/// Runs the flushing schedule: records every flow's outcome of `output` on its entity and
/// hands `output` back (moved through the World, never copied).
pub fn record_run(world: &mut World, output: RunOutput) -> RunOutput {
    world.insert_resource(RunResults(output));
    let mut schedule = Schedule::default();
    single_threaded(&mut schedule);
    schedule.add_systems(record_outcomes);
    schedule.run(world);
    world
        .remove_resource::<RunResults>()
        .expect("inserted above")
        .0
}

#[cfg(test)]
mod tests;

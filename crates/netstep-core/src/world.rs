//! The setup builder: a bevy_ecs World that a scenario is spawned into and the setup systems
//! compile into the dense [`Model`]. It is used once per run, before the engine starts, and
//! is dropped after setup; the engine, the run and the outputs never read it.
//!
//! What is ECS: nodes ([`NodeId`], [`NodeRole`], [`NodeName`]), links ([`Link`], their
//! classes and the routing in the [`Fabric`] resource), flows ([`Flow`]) and link failures
//! ([`LinkDown`]) are entities with their settings as components; the settings the engine
//! applies to every host or every switch alike, the seed and what is traced are resources
//! ([`NicSettings`], [`SwitchSettings`], [`Seed`], [`TraceSettings`]). The setup systems
//! ([`compile_network`], [`inject_flows`], [`compile_elements`]) run in one single-threaded
//! schedule ([`build_model`]; it runs once, so a multi-threaded executor's start-up buys
//! nothing) and [`inject_flows`] moves the flow specifications out of their entities into the
//! model's flow table, so a run never holds its flows twice.
//!
//! What is not ECS: the [`Model`] (struct-of-arrays port tables, routing, flow table, element
//! settings) that the engines share read-only, the engine's per-node state, the run's
//! [`RunOutput`](crate::engine::RunOutput) (per-flow outcomes by flow id, per-port counters),
//! and everything around a run (run settings, collective step tags, node names for outputs:
//! `netstep_scenario::Scenario`). Outputs are built from the model and the `RunOutput`.
//! ARCHITECTURE.md ("Data layout") records the measurements behind this split.

use bevy_ecs::prelude::*;
use bevy_ecs::schedule::SingleThreadedExecutor;

use crate::balance::BalanceSpec;
use crate::engine::Model;
use crate::engine::trace::TraceConfig;
use crate::failure::{FailureSchedule, LinkFailure};
use crate::flow::{FlowSpec, FlowTable};
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
    /// Switch ports admit a packet only while this many more bytes fit their byte buffer
    /// (`[switch] admission_room`).
    pub admission_room: Option<u32>,
}

/// What a run records beyond the always-written tables.
#[derive(Resource, Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceSettings(pub TraceConfig);

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

/// A training job whose walkers start its flows ([`crate::job`]): inserted by whoever
/// spawns the job's flows, moved into the [`Model`] with them.
#[derive(Resource, Clone, Debug)]
pub struct Job(pub std::sync::Arc<crate::job::JobSpec>);

/// Injection system: moves the flow entities' specifications, in id order, into the flow
/// table (the entities are despawned: after setup the flows live in the [`Model`] only) and
/// assembles the [`Model`] with the [`Seed`]. An exclusive system, since it despawns.
pub fn inject_flows(world: &mut World) {
    let Some(network) = world.resource_mut::<Setup>().network.take() else {
        return;
    };
    let seed = world.resource::<Seed>().0;
    let job = world.remove_resource::<Job>().map(|j| j.0);
    let model = network.map(|net| {
        let table = FlowTable::new(take_flows(world), net.n_nodes());
        Model {
            net,
            flows: table,
            seed,
            record_deliveries: false,
            trace: Default::default(),
            nic: Default::default(),
            shared_buffer: None,
            balance: Default::default(),
            failures: None,
            pfc: None,
            ack_priority: false,
            admission_room: None,
            job,
        }
    });
    world.resource_mut::<Setup>().model = Some(model);
}

/// Every flow entity's specification, by id, moved out of the World (the entities despawned).
fn take_flows(world: &mut World) -> Vec<FlowSpec> {
    let mut order: Vec<(u32, Entity)> = world
        .query::<(Entity, &Flow)>()
        .iter(world)
        .map(|(e, f)| (f.id, e))
        .collect();
    order.sort_unstable_by_key(|&(id, _)| id);
    order
        .into_iter()
        .map(|(_, entity)| {
            let mut entity = world.entity_mut(entity);
            let flow = entity.take::<Flow>().expect("queried above");
            entity.despawn();
            flow.spec
        })
        .collect()
}

/// The name of every node, by index (the node entities read once: for outputs and messages
/// after setup, when the World is gone).
pub fn node_names(world: &mut World) -> Vec<String> {
    let mut names = vec![String::new(); world.query::<&NodeId>().iter(world).len()];
    for (id, name) in world.query::<(&NodeId, &NodeName)>().iter(world) {
        names[id.0 as usize] = name.0.clone();
    }
    names
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
        // The simulator's nic_rate: the first host's first link (its device 1).
        let net = &model.net;
        dynamic.host_rate = (0..net.n_nodes() as u32)
            .find(|&n| net.node_kind[n as usize] == crate::topology::NodeKind::Host)
            .map_or(0, |n| net.class_of(net.port_id(n, 0)).rate.0);
    }
    model
        .net
        .compile_shortcut(model.nic.shaper.is_some(), dynamic_pfc, false);
    model.ack_priority = switches.ack_priority;
    model.admission_room = switches.admission_room;
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

#[cfg(test)]
mod tests;

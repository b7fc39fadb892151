//! The setup systems: the whole schedule through the World, and each system alone in bevy's style (a tiny World, the system run once, the World inspected).

use super::*;
use crate::topology::dumbbell;
use crate::transport::{OpenLoopSpec, TransportSpec};
use crate::units::{BitsPerSec, BufferSize, Bytes, SimTime};

#[test]
fn setup_systems_compile_the_world_into_a_model_that_runs() {
    let class = LinkClass::new(
        BitsPerSec(1_000_000_000),
        SimTime::from_us(1),
        BufferSize::Packets(8),
    );
    let mut world = World::new();
    spawn_topology(&mut world, dumbbell(1, 1, class, class));
    let transport = TransportSpec::OpenLoop(OpenLoopSpec {
        packet_size: Bytes(1000),
        n_packets: 3,
        interval: SimTime::from_us(10),
        exponential: false,
        size_distribution: Default::default(),
        ecn: false,
    });
    let flow = FlowSpec {
        src: 0,
        dst: 1,
        start: SimTime::ZERO,
        size: Bytes(3000),
        transport: transport.into(),
        path: None,
        class: 0,
        after: None,
        ports: None,
    };
    spawn_flows(&mut world, vec![flow], 7);
    let model = build_model(&mut world).unwrap();
    assert_eq!(model.net.n_nodes(), 4);
    assert_eq!(model.flows.len(), 1);
    let output = crate::engine::reference::run(&model, None).expect("no overflow");
    assert_eq!(output.flows.len(), 1);
    assert_eq!(output.flows.get(0).packets_delivered, 3);
    assert_eq!(
        world.query::<&Flow>().iter(&world).len(),
        0,
        "the flows moved into the model"
    );
    assert_eq!(world.query::<&NodeId>().iter(&world).len(), 4);
}
/// Every element setting reaches the model through the World: resources for what all
/// hosts or switches share, a component per link failure; nothing is assigned afterwards.
#[test]
fn element_settings_and_failures_compile_from_the_world() {
    let class = LinkClass::new(
        BitsPerSec(1_000_000_000),
        SimTime::from_us(1),
        BufferSize::Packets(8),
    );
    let mut world = World::new();
    spawn_topology(&mut world, dumbbell(1, 1, class, class));
    spawn_flows(&mut world, Vec::new(), 1);
    let nic = NicConfig {
        per_flow: BufferSize::Packets(5),
        ..NicConfig::default()
    };
    world.insert_resource(NicSettings(nic));
    let pfc = PfcSpec {
        lossless: 1 << 3,
        thresholds: crate::pfc::PfcThresholds::Static(crate::pfc::StaticPfc {
            xoff: Bytes(20_000),
            xon: Bytes(10_000),
            headroom: Bytes(30_000),
        }),
    };
    world.insert_resource(SwitchSettings {
        pfc: Some(pfc),
        ..SwitchSettings::default()
    });
    // The dumbbell's two switches are nodes 2 and 3 (hosts first).
    spawn_failures(&mut world, &[(2, 3, SimTime::from_us(5), None)]);
    let model = build_model(&mut world).unwrap();
    assert_eq!(model.nic, nic);
    assert_eq!(model.pfc, Some(pfc));
    let failures = model.failures.as_ref().expect("one failure compiled");
    let (a, b) = (
        model.net.port_id(2, model.net.port_towards(2, 3).unwrap()),
        model.net.port_id(3, model.net.port_towards(3, 2).unwrap()),
    );
    let far = SimTime::from_us(10);
    assert!(failures.lost(a, far, far) && failures.lost(b, far, far));
    assert!(!failures.lost(a, SimTime::ZERO, SimTime::from_us(1)));
}

// Each setup system alone, in bevy's style: a tiny World, the system run once, the World
// inspected.

use bevy_ecs::system::RunSystemOnce;

fn gigabit() -> LinkClass {
    LinkClass::new(
        BitsPerSec(1_000_000_000),
        SimTime::from_us(1),
        BufferSize::Packets(8),
    )
}

/// A dumbbell's compiled network (hosts 0 and 1, switches 2 and 3).
fn dumbbell_network() -> Network {
    Network::compile(&dumbbell(1, 1, gigabit(), gigabit())).unwrap()
}

fn flow(src: u32, dst: u32, n: u32) -> FlowSpec {
    let transport = TransportSpec::OpenLoop(OpenLoopSpec {
        packet_size: Bytes(1000),
        n_packets: n,
        interval: SimTime::from_us(10),
        exponential: false,
        size_distribution: Default::default(),
        ecn: false,
    });
    FlowSpec {
        src,
        dst,
        start: SimTime::ZERO,
        size: Bytes(1000 * n as u64),
        transport: transport.into(),
        path: None,
        class: 0,
        after: None,
        ports: None,
    }
}

#[test]
fn compile_network_reads_nodes_and_links_by_index() {
    let mut world = World::new();
    world.init_resource::<Setup>();
    // Spawned out of order: the system places them by id.
    world.spawn((NodeId(1), NodeRole(NodeKind::Switch), NodeName("s".into())));
    world.spawn((NodeId(0), NodeRole(NodeKind::Host), NodeName("h".into())));
    world.spawn((NodeId(2), NodeRole(NodeKind::Host), NodeName("g".into())));
    let link = |a, b| LinkSpec {
        a,
        b,
        class: 0,
        class_ba: 0,
    };
    world.spawn(Link {
        id: 1,
        spec: link(2, 1),
    });
    world.spawn(Link {
        id: 0,
        spec: link(0, 1),
    });
    world.insert_resource(Fabric {
        classes: vec![gigabit()],
        routing: RoutingKind::ShortestPath,
    });
    world.run_system_once(compile_network).unwrap();
    let setup = world.resource::<Setup>();
    let net = setup.network.as_ref().unwrap().as_ref().unwrap();
    assert_eq!(
        net.node_kind,
        vec![NodeKind::Host, NodeKind::Switch, NodeKind::Host]
    );
    // Link 0 is the switch's port 0 (to host 0), link 1 its port 1 (to host 2).
    assert_eq!(net.port_offset, vec![0, 1, 3, 4]);
    assert_eq!(net.port_peer, vec![1, 0, 2, 1]);
    assert_eq!(net.port_peer_local, vec![0, 0, 0, 1]);
}

#[test]
fn compile_network_names_the_node_in_its_errors() {
    let mut world = World::new();
    world.init_resource::<Setup>();
    world.spawn((
        NodeId(0),
        NodeRole(NodeKind::Switch),
        NodeName("loopy".into()),
    ));
    world.spawn(Link {
        id: 0,
        spec: LinkSpec {
            a: 0,
            b: 0,
            class: 0,
            class_ba: 0,
        },
    });
    world.insert_resource(Fabric {
        classes: vec![gigabit()],
        routing: RoutingKind::ShortestPath,
    });
    world.run_system_once(compile_network).unwrap();
    let setup = world.resource::<Setup>();
    assert_eq!(
        setup.network.as_ref().unwrap().as_ref().unwrap_err(),
        &NetworkError::SelfLoop {
            link: 0,
            node: "loopy".into()
        }
    );
}

#[test]
fn inject_flows_builds_the_flow_table_in_id_order_with_the_seed() {
    let mut world = World::new();
    world.insert_resource(Setup {
        network: Some(Ok(dumbbell_network())),
        model: None,
    });
    world.insert_resource(Seed(42));
    world.spawn(Flow {
        id: 1,
        spec: flow(1, 0, 2),
    });
    world.spawn(Flow {
        id: 0,
        spec: flow(0, 1, 5),
    });
    world.run_system_once(inject_flows).unwrap();
    assert_eq!(
        world.query::<&Flow>().iter(&world).len(),
        0,
        "the flow entities were despawned"
    );
    let setup = world.resource::<Setup>();
    assert!(setup.network.is_none(), "the network moved into the model");
    let model = setup.model.as_ref().unwrap().as_ref().unwrap();
    let ends: Vec<(u32, u32, u64)> = model
        .flows
        .flows
        .iter()
        .map(|f| (f.src, f.dst, f.size.0))
        .collect();
    assert_eq!(ends, vec![(0, 1, 5000), (1, 0, 2000)]);
    assert_eq!(model.seed, 42);
    assert_eq!(model.nic, NicConfig::default(), "elements come later");
}

#[test]
fn inject_flows_passes_a_network_error_on() {
    let mut world = World::new();
    world.insert_resource(Setup {
        network: Some(Err(NetworkError::ZeroRate { class: 3 })),
        model: None,
    });
    world.insert_resource(Seed(1));
    world.run_system_once(inject_flows).unwrap();
    let setup = world.resource::<Setup>();
    assert_eq!(
        setup.model.as_ref().unwrap().as_ref().unwrap_err(),
        &NetworkError::ZeroRate { class: 3 }
    );
}

#[test]
fn compile_elements_applies_the_settings_and_decides_the_shortcut() {
    let mut world = World::new();
    let mut model_world = World::new();
    spawn_topology(&mut model_world, dumbbell(1, 1, gigabit(), gigabit()));
    spawn_flows(&mut model_world, vec![flow(0, 1, 1)], 3);
    let model = build_model(&mut model_world).unwrap();
    assert!(
        model.net.skips_empty_queue(0, true),
        "a plain FIFO host port"
    );
    world.insert_resource(Setup {
        network: None,
        model: Some(Ok(model)),
    });
    let shaper = crate::shaping::TokenBucketSpec {
        rate: BitsPerSec(500_000_000),
        burst: Bytes(3000),
    };
    world.insert_resource(NicSettings(NicConfig {
        shaper: Some(shaper),
        ..NicConfig::default()
    }));
    world.insert_resource(SwitchSettings {
        ack_priority: true,
        ..SwitchSettings::default()
    });
    world.insert_resource(TraceSettings(TraceConfig {
        queue_samples: Some(SimTime::from_us(5)),
        ..TraceConfig::default()
    }));
    world.spawn(LinkDown {
        id: 0,
        a: 2,
        b: 3,
        down: SimTime::from_us(1),
        up: None,
    });
    world.run_system_once(compile_elements).unwrap();
    let setup = world.resource::<Setup>();
    let model = setup.model.as_ref().unwrap().as_ref().unwrap();
    assert_eq!(model.nic.shaper, Some(shaper));
    assert!(model.ack_priority);
    assert_eq!(model.trace.queue_samples, Some(SimTime::from_us(5)));
    // The NIC shaper stands in the way at hosts only.
    let switch_port = model.net.port_id(2, 0);
    assert!(!model.net.skips_empty_queue(model.net.port_id(0, 0), true));
    assert!(model.net.skips_empty_queue(switch_port, false));
    let failures = model.failures.as_ref().expect("the failure compiled");
    let bottleneck = model.net.port_id(2, model.net.port_towards(2, 3).unwrap());
    let later = SimTime::from_us(2);
    assert!(failures.lost(bottleneck, later, later));
}

#[test]
fn compile_elements_with_dynamic_pfc_counts_every_lossless_packet() {
    let mut model_world = World::new();
    spawn_topology(&mut model_world, dumbbell(1, 1, gigabit(), gigabit()));
    spawn_flows(&mut model_world, Vec::new(), 3);
    let model = build_model(&mut model_world).unwrap();
    let mut world = World::new();
    world.insert_resource(Setup {
        network: None,
        model: Some(Ok(model)),
    });
    world.init_resource::<NicSettings>();
    world.init_resource::<TraceSettings>();
    let dynamic = crate::pfc::DynamicPfc::default();
    world.insert_resource(SwitchSettings {
        pfc: Some(PfcSpec {
            lossless: 1 << 3,
            thresholds: crate::pfc::PfcThresholds::Dynamic(dynamic),
        }),
        ..SwitchSettings::default()
    });
    world.run_system_once(compile_elements).unwrap();
    let setup = world.resource::<Setup>();
    let model = setup.model.as_ref().unwrap().as_ref().unwrap();
    let Some(PfcSpec {
        thresholds: crate::pfc::PfcThresholds::Dynamic(compiled),
        ..
    }) = model.pfc
    else {
        panic!("dynamic PFC compiled")
    };
    assert_eq!(compiled.host_rate, 1_000_000_000, "the first host's link");
    // A switch's port skips its empty queue only after counting the packet; a host's port,
    // which counts nothing, as without PFC.
    for port in 0..model.net.n_ports() as u32 {
        assert!(model.net.skips_empty_queue(port, true));
        assert!(!model.net.skips_empty_queue(port, false));
        assert!(model.net.skips_counting(port));
    }
}

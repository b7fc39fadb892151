//! The socket queues, budgets and the pulling NIC's turn order alone.

use super::sockets::{HostNic, Socket};
use crate::nic::{NicConfig, NicScheduler, QpState};
use crate::packet::{Packet, PacketKind};
use crate::units::{BufferSize, Bytes, SimTime};

fn p(flow: u32, n: u32, size: u32) -> Packet {
    Packet::new(PacketKind::Data, flow, n, n, 9, size)
}

/// Admits as many as fit, then releases them all (as if transmitted at once).
fn drain_order(nic: &mut HostNic, config: &NicConfig) -> Vec<(u32, u32)> {
    let mut order = Vec::new();
    loop {
        let mut batch = Vec::new();
        while let Some((s, packet)) = nic.admit(config) {
            batch.push((s, packet));
        }
        if batch.is_empty() {
            return order;
        }
        for (s, packet) in batch {
            order.push((packet.flow, packet.number));
            nic.left(s, &packet, config);
        }
    }
}

#[test]
fn round_robin_alternates_between_backlogged_sockets() {
    let config = NicConfig {
        buffer: BufferSize::Packets(1),
        per_flow: BufferSize::Packets(2),
        scheduler: NicScheduler::RoundRobin,
        shaper: None,
    };
    let mut nic = HostNic::default();
    for n in 0..3 {
        nic.push(Socket::sender(0), p(0, n, 1500), &config);
    }
    for n in 0..2 {
        nic.push(Socket::sender(1), p(1, n, 1500), &config);
    }
    assert_eq!(
        drain_order(&mut nic, &config),
        vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
    );
    assert_eq!(nic.pending_packets, 0);
    assert_eq!(nic.max_pending_packets, 5);
}

#[test]
fn per_flow_limit_holds_packets_back_without_dropping() {
    let config = NicConfig {
        buffer: BufferSize::Bytes(Bytes(1_000_000)),
        per_flow: BufferSize::Packets(2),
        scheduler: NicScheduler::RoundRobin,
        shaper: None,
    };
    let mut nic = HostNic::default();
    for n in 0..10 {
        nic.push(Socket::sender(0), p(0, n, 1500), &config);
    }
    let first = nic.admit(&config).unwrap();
    let second = nic.admit(&config).unwrap();
    assert!(nic.admit(&config).is_none(), "per-flow limit of 2 packets");
    assert_eq!(nic.pending_packets, 8);
    nic.left(first.0, &first.1, &config);
    assert_eq!(nic.admit(&config).unwrap().1.number, 2);
    nic.left(second.0, &second.1, &config);
    assert_eq!(nic.admit(&config).unwrap().1.number, 3);
}

#[test]
fn oversized_packet_goes_out_alone() {
    let config = NicConfig {
        buffer: BufferSize::Bytes(Bytes(1000)),
        per_flow: BufferSize::Bytes(Bytes(1000)),
        scheduler: NicScheduler::RoundRobin,
        shaper: None,
    };
    let mut nic = HostNic::default();
    nic.push(Socket::sender(0), p(0, 0, 9000), &config);
    nic.push(Socket::receiver(0), p(1, 0, 64), &config);
    let (s, big) = nic.admit(&config).unwrap();
    assert_eq!(big.size_bytes, 9000);
    assert!(nic.admit(&config).is_none(), "the NIC is over its budget");
    nic.left(s, &big, &config);
    assert_eq!(nic.admit(&config).unwrap().1.size_bytes, 64);
}

#[test]
fn fifo_keeps_production_order_across_sockets() {
    let config = NicConfig {
        buffer: BufferSize::Packets(1),
        per_flow: BufferSize::Packets(1),
        scheduler: NicScheduler::Fifo,
        shaper: None,
    };
    let mut nic = HostNic::default();
    nic.push(Socket::sender(0), p(0, 0, 100), &config);
    nic.push(Socket::sender(0), p(0, 1, 100), &config);
    nic.push(Socket::sender(1), p(1, 0, 100), &config);
    nic.push(Socket::sender(0), p(0, 2, 100), &config);
    assert_eq!(
        drain_order(&mut nic, &config),
        vec![(0, 0), (0, 1), (1, 0), (0, 2)]
    );
}

fn ready(at: u64) -> QpState {
    QpState::Ready {
        at: SimTime(at),
        class: 0,
    }
}

#[test]
fn pull_takes_turns_from_the_one_after_the_last_served() {
    let mut nic = HostNic::default();
    for flow in [10, 11, 12] {
        nic.add_qp(flow);
    }
    let order: Vec<u32> = (0..6)
        .map(|_| nic.select_qp(SimTime(0), 0, |_| ready(0)).unwrap())
        .collect();
    // The simulator starts its first scan at index 1 (m_rrlast = 0).
    assert_eq!(order, vec![11, 12, 10, 11, 12, 10]);
    // Paced, paused and waiting queue pairs are passed over.
    let state = |flow: u32| match flow {
        10 => ready(50),
        11 => QpState::Ready {
            at: SimTime(0),
            class: 3,
        },
        _ => QpState::Waiting,
    };
    assert_eq!(nic.select_qp(SimTime(10), 1 << 3, state), None);
    // The wake-up: the paced one (the paused one comes back with its RESUME).
    assert_eq!(
        nic.next_ready(SimTime(10), 1 << 3, state),
        Some(SimTime(50))
    );
    assert_eq!(nic.next_ready(SimTime(60), 1 << 3, state), None);
    assert_eq!(nic.select_qp(SimTime(50), 1 << 3, state), Some(10));
    assert_eq!(nic.select_qp(SimTime(50), 0, state), Some(11));
}

#[test]
fn pull_removes_finished_queue_pairs_as_the_simulator_does() {
    let mut nic = HostNic::default();
    for flow in [0, 1, 2, 3] {
        nic.add_qp(flow);
    }
    let served = |nic: &mut HostNic, finished: &[u32]| {
        nic.select_qp(SimTime(0), 0, |f| {
            if finished.contains(&f) {
                QpState::Finished
            } else {
                ready(0)
            }
        })
    };
    assert_eq!(served(&mut nic, &[]), Some(1));
    assert_eq!(served(&mut nic, &[]), Some(2));
    // Last served: index 2. Flows 1 and 3 finished: the scan meets 3 (index 3) first,
    // then picks 0; only finished ones from index 3 on are removed, so 1 stays.
    assert_eq!(served(&mut nic, &[1, 3]), Some(0));
    assert_eq!(nic.pull.qps, vec![0, 1, 2]);
    // Next scan from index 1 meets finished 1, picks 2 (index 2), which moves to index 1
    // as 1 is removed; the turn index follows it.
    assert_eq!(served(&mut nic, &[1, 3]), Some(2));
    assert_eq!(nic.pull.qps, vec![0, 2]);
    assert_eq!(nic.pull.rr_last, 1);
    assert_eq!(served(&mut nic, &[1, 3]), Some(0));
}

#[test]
fn pull_sends_feedback_oldest_first_unless_its_class_is_paused() {
    let config = NicConfig {
        scheduler: NicScheduler::Pull,
        ..NicConfig::default()
    };
    let mut nic = HostNic::default();
    let mut ack = |flow: u32, class: u8| {
        let mut p = Packet::new(PacketKind::Ack, flow, 0, 1, 9, 60);
        p.set_class(class);
        nic.push(Socket::receiver(flow), p, &config);
    };
    ack(0, 3);
    ack(1, 0);
    assert!(
        nic.admit(&config).is_none(),
        "nothing is admitted ahead of time"
    );
    assert_eq!(nic.pop_feedback(1 << 3), None, "its class is paused");
    assert_eq!(nic.pop_feedback(0).unwrap().flow, 0);
    assert_eq!(nic.pop_feedback(0).unwrap().flow, 1);
    assert!(!nic.has_feedback());
    assert_eq!(nic.pending_packets, 0);
}

#[test]
fn pull_wakes_once_per_earliest_time() {
    let mut nic = HostNic::default();
    assert!(nic.want_wake(SimTime(100)));
    assert!(!nic.want_wake(SimTime(150)), "an earlier one is pending");
    assert!(nic.want_wake(SimTime(50)));
    nic.woke(SimTime(50));
    assert!(nic.want_wake(SimTime(150)));
}

// The NIC in front of a host's port, driven through the port with a recording sink.

use super::{Nic, QueuePairs};
use crate::engine::event::{EventKind, TimerSide};
use crate::engine::model::Model;
use crate::engine::node::NodeState;
use crate::engine::node::port::Egress;
use crate::engine::node::testkit::{
    DELAY, ModelBuilder, Recorder, SER_1000, class, open_loop, star,
};
use crate::transport::{Sender, TransportOut};

/// Host 0 of a two-host star, its NIC (apart from the host's own) and what it emitted.
struct Host {
    state: NodeState,
    nic: Nic,
    senders: Vec<Option<Sender>>,
    out: TransportOut,
    rec: Recorder,
}

impl Host {
    fn new(model: &Model) -> Host {
        Host {
            state: NodeState::for_node(0, model),
            nic: Nic::default(),
            senders: Vec::new(),
            out: TransportOut::default(),
            rec: Recorder::default(),
        }
    }
    /// The transport of `flow` produced `packets` at `now` on the flow's `sending` side (else
    /// its receiving side); then the NIC fills, as after any transport call.
    fn send(&mut self, model: &Model, flow: u32, packets: Vec<Packet>, sending: bool, now: u64) {
        let socket = if sending {
            Socket::sender(model.flows.src_slot[flow as usize])
        } else {
            Socket::receiver(model.flows.dst_slot[flow as usize])
        };
        let spec = &model.flows.flows[flow as usize];
        let mut packets = packets;
        let mut eg = Egress::new(&mut self.state.lp, &mut self.state.ports, model);
        let now = SimTime(now);
        self.nic
            .send(&mut eg, 0, socket, spec, &mut packets, now, &mut self.rec);
        self.fill(model, now.0);
    }
    fn fill(&mut self, model: &Model, now: u64) {
        let mut eg = Egress::new(&mut self.state.lp, &mut self.state.ports, model);
        let mut qps = QueuePairs {
            senders: &mut self.senders,
            out: &mut self.out,
        };
        self.nic
            .fill(&mut eg, 0, &mut qps, SimTime(now), &mut self.rec);
    }
    /// Runs the port's wake-ups and the NIC's until none is left, as the host would.
    fn drain(&mut self, model: &Model) {
        while let Some(event) = self.rec.pop_before(SimTime::MAX) {
            let now = event.key.time;
            let mut eg = Egress::new(&mut self.state.lp, &mut self.state.ports, model);
            let mut qps = QueuePairs {
                senders: &mut self.senders,
                out: &mut self.out,
            };
            match event.kind {
                EventKind::PortReady { port, .. } => {
                    eg.ready(&mut self.nic, port, now, &mut self.rec);
                    self.nic.fill(&mut eg, port, &mut qps, now, &mut self.rec);
                }
                EventKind::Timer {
                    side: TimerSide::Nic,
                    ..
                } => self.nic.woke(&mut eg, 0, &mut qps, now, &mut self.rec),
                other => panic!("unexpected event {other:?}"),
            }
        }
    }
    /// (flow, number, when it entered the NIC, when its transmission started).
    fn sent(&self) -> Vec<(u32, u32, u64, u64)> {
        self.rec
            .sent()
            .iter()
            .map(|s| (s.packet.flow, s.packet.number, s.packet.sent_ps, s.created))
            .collect()
    }
}

/// Two flows from host 0 to host 1 (source slots 0 and 1); host links hold `buffer`.
fn two_flows(nic: NicConfig, buffer: BufferSize) -> Model {
    let flows = vec![
        open_loop(0, 1, 4, 1000, SimTime::ZERO),
        open_loop(0, 1, 3, 1000, SimTime::ZERO),
    ];
    ModelBuilder::new(star(2, class(buffer)), flows)
        .nic(nic)
        .build()
}

fn data_packets(flow: u32, n: u32) -> Vec<Packet> {
    (0..n).map(|i| p(flow, i, 1000)).collect()
}

#[test]
fn round_robin_admits_one_packet_per_socket_in_turn_as_packets_leave() {
    let config = NicConfig {
        buffer: BufferSize::Packets(1),
        per_flow: BufferSize::Packets(2),
        scheduler: NicScheduler::RoundRobin,
        shaper: None,
    };
    let model = two_flows(config, BufferSize::Packets(100));
    let mut host = Host::new(&model);
    host.send(&model, 0, data_packets(0, 4), true, 0);
    host.send(&model, 1, data_packets(1, 3), true, 0);
    host.drain(&model);
    // The first packet leaves at once and the second fits the one-packet NIC behind it; then
    // each departure admits the next socket's packet: flow 1's first before flow 0's last.
    // A packet's send time is when it entered the NIC.
    let s = SER_1000;
    assert_eq!(
        host.sent(),
        vec![
            (0, 0, 0, 0),
            (0, 1, 0, s),
            (0, 2, s, 2 * s),
            (1, 0, 2 * s, 3 * s),
            (0, 3, 3 * s, 4 * s),
            (1, 1, 4 * s, 5 * s),
            (1, 2, 5 * s, 6 * s),
        ]
    );
}

#[test]
fn fifo_admits_in_production_order() {
    let config = NicConfig {
        buffer: BufferSize::Packets(1),
        per_flow: BufferSize::Packets(1),
        scheduler: NicScheduler::Fifo,
        shaper: None,
    };
    let model = two_flows(config, BufferSize::Packets(100));
    let mut host = Host::new(&model);
    host.send(&model, 0, data_packets(0, 4), true, 0);
    host.send(&model, 1, data_packets(1, 3), true, 0);
    host.drain(&model);
    let order: Vec<(u32, u32)> = host.sent().iter().map(|s| (s.0, s.1)).collect();
    assert_eq!(
        order,
        vec![(0, 0), (0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]
    );
}

#[test]
fn a_hosts_port_takes_whatever_its_nic_admitted() {
    let config = NicConfig {
        buffer: BufferSize::Packets(100),
        per_flow: BufferSize::Packets(100),
        ..NicConfig::default()
    };
    // The link class's buffer (one packet) does not apply to the host's own port.
    let model = two_flows(config, BufferSize::Packets(1));
    let mut host = Host::new(&model);
    host.send(&model, 0, data_packets(0, 4), true, 0);
    let port = &host.state.ports[0];
    assert_eq!((port.queue_len(), port.drops()), (3, 0));
    host.drain(&model);
    assert_eq!(host.sent().len(), 4);
    assert_eq!(host.state.lp.counters.drops, 0);
}

#[test]
fn the_pulling_nic_sends_feedback_when_the_link_frees_and_wakes_itself_for_more() {
    let config = NicConfig {
        scheduler: NicScheduler::Pull,
        ..NicConfig::default()
    };
    // Flow 0 from host 1 to host 0: host 0 answers it.
    let flows = vec![open_loop(1, 0, 4, 1000, SimTime::ZERO)];
    let model = ModelBuilder::new(star(2, class(BufferSize::Packets(10))), flows)
        .nic(config)
        .build();
    let mut host = Host::new(&model);
    let ack = |n: u32, class: u8| {
        let mut a = Packet::new(PacketKind::Ack, 0, n, n + 1, 1, 64);
        a.set_class(class);
        a
    };
    let ack_ser = model.net.serialization(model.net.port_id(0, 0), 64).0;
    host.send(&model, 0, vec![ack(0, 0), ack(1, 0)], false, 0);
    // The first goes at once; the NIC wakes when the link frees, for the second.
    assert_eq!(host.sent(), vec![(0, 0, 0, 0)]);
    let wakes: Vec<u64> = host
        .rec
        .pending()
        .into_iter()
        .filter(|(_, k)| {
            matches!(
                k,
                EventKind::Timer {
                    side: TimerSide::Nic,
                    ..
                }
            )
        })
        .map(|(t, _)| t)
        .collect();
    assert_eq!(wakes, vec![ack_ser]);
    host.drain(&model);
    assert_eq!(host.sent()[1], (0, 1, 0, ack_ser));
    let arrivals: Vec<u64> = host.rec.sent().iter().map(|s| s.arrives).collect();
    assert_eq!(arrivals, vec![ack_ser + DELAY.0, 2 * ack_ser + DELAY.0]);

    // A paused class waits (no wake-up: its RESUME brings the NIC back). The NIC stamps
    // every packet with its flow's class (0 here), whatever the transport set.
    let mut pause = Packet::new(PacketKind::Pause, u32::MAX, 0, 1, 0, 64);
    pause.set_class(0);
    pause.ingress = 0;
    let now = SimTime(10_000_000);
    let mut eg = Egress::new(&mut host.state.lp, &mut host.state.ports, &model);
    assert!(!eg.frame_arrived(&mut host.nic, &pause, now, &mut host.rec));
    host.send(&model, 0, vec![ack(2, 5)], false, now.0);
    assert_eq!(host.sent().len(), 2);
    assert!(host.rec.local.is_empty());
    pause.seq = 0;
    let later = SimTime(20_000_000);
    let mut eg = Egress::new(&mut host.state.lp, &mut host.state.ports, &model);
    assert!(eg.frame_arrived(&mut host.nic, &pause, later, &mut host.rec));
    host.fill(&model, later.0);
    assert_eq!(
        host.sent()[2],
        (0, 2, 0, later.0),
        "ACKs keep their send time"
    );
}

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

//! The roles through [`NodeState::handle`] with a recording sink: a switch's PFC callbacks
//! (a lossless packet that waits is counted against its ingress, the PAUSE goes upstream, its
//! departure releases the count and the RESUME follows), a host's delivery and misrouting,
//! and a host sending a flow through its NIC and port.

use super::testkit::{DELAY, ModelBuilder, Recorder, SER_1000, class, data, open_loop, star};
use super::{NodeState, Role};
use crate::engine::event::{Event, EventKey, EventKind, Phase};
use crate::packet::{Packet, PacketKind};
use crate::pfc::{PfcSpec, PfcThresholds, StaticPfc};
use crate::units::{BufferSize, Bytes, SimTime};
use crate::world::SwitchSettings;

const D: u64 = DELAY.0;

fn arrival(at: u64, packet: Packet) -> Event {
    Event {
        key: EventKey::new(SimTime(at), Phase::Arrive, SimTime::ZERO),
        kind: EventKind::Arrive(packet),
    }
}

#[test]
fn a_switch_pauses_the_upstream_past_xoff_and_resumes_it_at_xon() {
    let pfc = PfcSpec {
        lossless: 1 << 3,
        thresholds: PfcThresholds::Static(StaticPfc {
            xoff: Bytes(2000),
            xon: Bytes(1000),
            headroom: Bytes(30_000),
        }),
    };
    let model = ModelBuilder::new(star(3, class(BufferSize::Bytes(Bytes(1500)))), vec![])
        .switches(SwitchSettings {
            pfc: Some(pfc),
            ..SwitchSettings::default()
        })
        .build();
    let mut switch = NodeState::for_node(3, &model);
    let mut rec = Recorder::default();
    // Four lossless packets from host 1 (the switch's port 1) to host 0, one ps apart.
    for n in 0..4 {
        let mut packet = data(7, n, 0, 1000, 3);
        packet.ingress = 1;
        switch.handle(
            arrival(n as u64, packet),
            &model,
            &mut rec,
            &mut Default::default(),
        );
    }
    // The first left at once (never counted); the next three wait (beyond the port's
    // 1,500-byte buffer: lossless packets are not dropped), and the last of them pushed the
    // count past xoff: a PAUSE to host 1 at once.
    assert_eq!(switch.ports[0].queue_len(), 3);
    assert_eq!(switch.ports[0].drops(), 0);
    rec.run_until(&mut switch, &model, SimTime::MAX);
    let frame_ser = model
        .net
        .serialization(model.net.port_id(3, 1), crate::pfc::FRAME_BYTES)
        .0;
    let sent = rec.sent();
    let frames: Vec<(u32, u32, u8, u64)> = sent
        .iter()
        .filter(|s| s.packet.kind == PacketKind::Pause)
        .map(|s| (s.to, s.packet.seq, s.packet.class(), s.arrives))
        .collect();
    // The second waiting packet's departure (at 1.6 us) leaves 1,000 bytes counted: xon.
    assert_eq!(
        frames,
        vec![
            (1, 1, 3, 3 + frame_ser + D),
            (1, 0, 3, 2 * SER_1000 + frame_ser + D)
        ]
    );
    let data: Vec<(u32, u64)> = sent
        .iter()
        .filter(|s| s.packet.kind == PacketKind::Data)
        .map(|s| (s.packet.number, s.arrives))
        .collect();
    assert_eq!(
        data,
        (0..4)
            .map(|n| (n, (n as u64 + 1) * SER_1000 + D))
            .collect::<Vec<_>>()
    );
    let Role::Switch(state) = &switch.role else {
        unreachable!("a switch")
    };
    let events: Vec<(u64, bool)> = state
        .pfc_events
        .iter()
        .map(|e| (e.time_ps, e.pause))
        .collect();
    assert_eq!(events, vec![(3, true), (2 * SER_1000, false)]);
    assert_eq!(state.pfc_events[0].port, model.net.port_id(3, 1));
}

#[test]
fn a_host_delivers_its_flows_packets_and_counts_strangers_as_misrouted() {
    let flows = vec![open_loop(1, 0, 2, 1000, SimTime::ZERO)];
    let mut model = ModelBuilder::new(star(2, class(BufferSize::Packets(10))), flows).build();
    model.record_deliveries = true;
    let mut host = NodeState::for_node(0, &model);
    let mut rec = Recorder::default();
    let mut packet = data(0, 0, 0, 1000, 0);
    packet.sent_ps = 5;
    host.handle(
        arrival(2_000_000, packet),
        &model,
        &mut rec,
        &mut Default::default(),
    );
    // Addressed to host 1: not delivered here.
    host.handle(
        arrival(2_100_000, data(0, 1, 1, 1000, 0)),
        &model,
        &mut rec,
        &mut Default::default(),
    );
    host.handle(
        arrival(2_800_000, data(0, 1, 0, 1000, 0)),
        &model,
        &mut rec,
        &mut Default::default(),
    );
    assert_eq!(host.lp.counters.misrouted, 1);
    let delivered: Vec<(u64, u32, u64)> = host
        .lp
        .rare_mut()
        .deliveries
        .iter()
        .map(|d| (d.arrived_ps, d.number, d.sent_ps))
        .collect();
    assert_eq!(delivered, vec![(2_000_000, 0, 5), (2_800_000, 1, 0)]);
    let receiver = host.receivers()[0]
        .as_ref()
        .expect("created by the first packet");
    assert_eq!(receiver.outcome(), (2, Some(SimTime(2_800_000))));
    assert!(
        rec.remote.is_empty(),
        "an open-loop receiver answers nothing"
    );
}

#[test]
fn a_host_sends_a_flow_through_its_nic_and_port() {
    let flows = vec![open_loop(0, 1, 3, 1000, SimTime(500))];
    let model = ModelBuilder::new(star(2, class(BufferSize::Packets(10))), flows).build();
    let mut host = NodeState::for_node(0, &model);
    let mut rec = Recorder::default();
    let (node, start) = model.initial_events().next().expect("one flow");
    assert_eq!(node, 0);
    host.handle(start, &model, &mut rec, &mut Default::default());
    rec.run_until(&mut host, &model, SimTime::MAX);
    // All three enter the NIC at the start (its per-flow budget of two counts only packets
    // waiting behind the wire, and the first left at once), then leave back to back.
    let sent: Vec<(u32, u32, u64, u64)> = rec
        .sent()
        .iter()
        .map(|s| (s.to, s.packet.number, s.packet.sent_ps, s.arrives))
        .collect();
    assert_eq!(
        sent,
        vec![
            (2, 0, 500, 500 + SER_1000 + D),
            (2, 1, 500, 500 + 2 * SER_1000 + D),
            (2, 2, 500, 500 + 3 * SER_1000 + D),
        ]
    );
    assert_eq!(
        host.senders()[0].as_ref().unwrap().counters().packets_sent,
        3
    );
    assert_eq!(host.lp.counters.packet_hops, 3);
}

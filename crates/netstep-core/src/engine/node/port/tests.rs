//! The pipeline's stages at one switch port, driven through [`Egress`] with a recording sink:
//! the empty-queue shortcut, admission with a shared buffer, the shaper's hold and wake, the
//! transmitter's losses and hop records, and PFC's control lane. Times are in ps; a 1,000-byte
//! packet serializes in 800 ns on the 10 Gb/s test links, which have 1 us of delay.

use super::{Egress, control};
use crate::engine::event::EventKind;
use crate::engine::model::Model;
use crate::engine::node::testkit::{DELAY, ModelBuilder, Recorder, SER_1000, class, data, star};
use crate::engine::node::{NodeState, Role};
use crate::engine::trace::DropReason;
use crate::packet::{Packet, PacketKind};
use crate::queue::{SchedulerSpec, SharedBuffer};
use crate::shaping::TokenBucketSpec;
use crate::topology::{LinkClass, dumbbell};
use crate::units::{BitsPerSec, BufferSize, Bytes, SimTime};
use crate::world::SwitchSettings;

const D: u64 = DELAY.0;

/// A switch's state and what it emitted, with the calls the pipeline offers its owner.
struct Switch {
    state: NodeState,
    rec: Recorder,
}

impl Switch {
    fn new(node: u32, model: &Model) -> Switch {
        Switch {
            state: NodeState::for_node(node, model),
            rec: Recorder::default(),
        }
    }
    /// Offers `packet` to local port `local` at `now`.
    fn offer(&mut self, model: &Model, local: u32, packet: Packet, now: u64) -> bool {
        let NodeState { lp, ports, role } = &mut self.state;
        let Role::Switch(switch) = role else {
            unreachable!("a switch")
        };
        Egress::new(lp, ports, model).offer(switch, local, packet, SimTime(now), &mut self.rec)
    }
    /// The transmitter of `local` frees at `now`.
    fn ready(&mut self, model: &Model, local: u32, now: u64) {
        let NodeState { lp, ports, role } = &mut self.state;
        let Role::Switch(switch) = role else {
            unreachable!("a switch")
        };
        Egress::new(lp, ports, model).ready(switch, local, SimTime(now), &mut self.rec);
    }
    /// A PFC frame arrived on local port `local` at `now`; returns whether it resumed.
    fn frame(&mut self, model: &Model, local: u16, class: u8, pause: bool, now: u64) -> bool {
        let mut frame = control::frame(class, pause, self.state.node(), SimTime(now)).packet;
        frame.ingress = local;
        let NodeState { lp, ports, role } = &mut self.state;
        let Role::Switch(switch) = role else {
            unreachable!("a switch")
        };
        Egress::new(lp, ports, model).frame_arrived(switch, &frame, SimTime(now), &mut self.rec)
    }
    /// Sends a PAUSE (`pause`) or RESUME frame for `class` on `local` at `now`.
    fn send_frame(&mut self, model: &Model, local: u32, class: u8, pause: bool, now: u64) {
        let NodeState { lp, ports, .. } = &mut self.state;
        Egress::new(lp, ports, model).send_frame(local, class, pause, SimTime(now), &mut self.rec);
    }
    /// (flow, number, arrival time) of every packet sent.
    fn sent(&self) -> Vec<(u32, u32, u64)> {
        let sent = self.rec.sent();
        sent.iter()
            .map(|s| (s.packet.flow, s.packet.number, s.arrives))
            .collect()
    }
    /// Times of the pending `PortReady` events of `local`.
    fn wakes(&self, local: u32) -> Vec<u64> {
        self.rec
            .pending()
            .into_iter()
            .filter(|(_, k)| matches!(k, EventKind::PortReady { port, .. } if *port == local))
            .map(|(t, _)| t)
            .collect()
    }
}

fn star_model(hosts: u32, class: LinkClass) -> Model {
    ModelBuilder::new(star(hosts, class), Vec::new()).build()
}

#[test]
fn an_idle_port_with_an_empty_fifo_skips_the_queue_and_a_busy_one_queues() {
    let model = star_model(2, class(BufferSize::Packets(10)));
    let mut s = Switch::new(2, &model);
    assert!(s.offer(&model, 0, data(4, 0, 0, 1000, 0), 0));
    // Sent at once: serialization, then the link's delay; the queue was never materialized.
    let sent = s.rec.sent();
    assert_eq!(sent.len(), 1);
    assert_eq!(
        (sent[0].to, sent[0].arrives, sent[0].created),
        (0, SER_1000 + D, 0)
    );
    assert_eq!((sent[0].packet.hop, sent[0].packet.ingress), (1, 0));
    let port = &s.state.ports[0];
    assert!(port.cold.is_none(), "the shortcut does not touch the queue");
    assert_eq!((port.tx_packets(), port.busy_until.0), (1, SER_1000));
    assert!(s.rec.local.is_empty());

    // A second packet finds the transmitter busy: it waits, one wake-up when it frees.
    assert!(s.offer(&model, 0, data(4, 1, 0, 1000, 0), 100_000));
    assert_eq!(s.state.ports[0].queue_len(), 1);
    assert_eq!(s.state.ports[0].max_queue_packets(), 1);
    assert_eq!(s.wakes(0), vec![SER_1000]);
    s.ready(&model, 0, SER_1000);
    assert_eq!(
        s.sent(),
        vec![(4, 0, SER_1000 + D), (4, 1, 2 * SER_1000 + D)]
    );
    assert_eq!(s.state.ports[0].queue_len(), 0);
    assert_eq!(
        s.wakes(0),
        vec![SER_1000],
        "no second wake-up: nothing waits"
    );
}

#[test]
fn a_discipline_that_keeps_state_sees_every_packet_even_at_an_idle_port() {
    let mut wrr = class(BufferSize::Packets(10));
    wrr.scheduler = SchedulerSpec::Wrr { weights: [1; 8] };
    let model = star_model(2, wrr);
    let mut s = Switch::new(2, &model);
    assert!(s.offer(&model, 1, data(0, 0, 1, 1000, 0), 0));
    assert!(s.state.ports[1].cold.is_some(), "WRR was consulted");
    assert_eq!(s.sent(), vec![(0, 0, SER_1000 + D)], "and sent it at once");
}

#[test]
fn an_admission_room_refuses_every_packet_once_a_full_size_one_no_longer_fits() {
    // 3000-byte buffers; the first packet goes out at once, the rest wait.
    let offers = |room: Option<u32>| {
        let model = ModelBuilder::new(star(2, class(BufferSize::Bytes(Bytes(3000)))), vec![])
            .switches(SwitchSettings {
                admission_room: room,
                ..SwitchSettings::default()
            })
            .build();
        let mut s = Switch::new(2, &model);
        let mut got: Vec<bool> = (0..3)
            .map(|n| s.offer(&model, 0, data(1, n, 0, 1000, 0), 0))
            .collect();
        // A 40-byte ACK behind 2000 waiting bytes.
        let mut ack = data(1, 3, 0, 40, 0);
        ack.kind = PacketKind::Ack;
        got.push(s.offer(&model, 0, ack, 0));
        (
            got,
            s.state.ports[0].queue_bytes(),
            s.state.lp.counters.drops,
        )
    };
    // Own size: 2000 + 40 fits.
    assert_eq!(offers(None), (vec![true, true, true, true], 2040, 0));
    // Room for 1500 more: after 1000 waiting bytes 2500 <= 3000 admits; after 2000 no packet,
    // however small, is admitted.
    assert_eq!(offers(Some(1500)), (vec![true, true, true, false], 2000, 1));
    // Room larger than the buffer: only a packet that finds nothing waiting gets in.
    assert_eq!(
        offers(Some(4000)),
        (vec![true, true, false, false], 1000, 2)
    );
}

#[test]
fn the_shared_buffer_lowers_each_ports_limit_by_what_all_ports_hold() {
    let model = ModelBuilder::new(star(3, class(BufferSize::Bytes(Bytes(1_000_000)))), vec![])
        .switches(SwitchSettings {
            shared_buffer: Some(SharedBuffer {
                size: Bytes(3000),
                alpha: 1.0,
            }),
            ..SwitchSettings::default()
        })
        .build();
    let mut s = Switch::new(3, &model);
    // Port 0: the first goes out; then the threshold is 3000 - (bytes queued anywhere).
    let offered: Vec<bool> = (0..4)
        .map(|n| s.offer(&model, 0, data(1, n, 0, 1000, 0), 0))
        .collect();
    assert_eq!(offered, vec![true, true, true, false]);
    // Port 1 sees port 0's 2000 queued bytes: room for one more 1000-byte packet.
    let offered: Vec<bool> = (0..3)
        .map(|n| s.offer(&model, 1, data(2, n, 1, 1000, 0), 0))
        .collect();
    assert_eq!(offered, vec![true, true, false]);
    let ports = &s.state.ports;
    assert_eq!((ports[0].queue_len(), ports[0].drops()), (2, 1));
    assert_eq!((ports[1].queue_len(), ports[1].drops()), (1, 1));
    assert_eq!(s.state.lp.counters.drops, 2);
    let drops: Vec<(u32, u64)> = s
        .state
        .lp
        .rare_mut()
        .flow_drops
        .iter()
        .map(|(&f, &n)| (f, n))
        .collect();
    assert_eq!(drops, vec![(1, 1), (2, 1)]);
}

#[test]
fn the_shaper_holds_a_packet_until_it_conforms_and_wakes_the_port_then() {
    let mut shaped = class(BufferSize::Packets(10));
    // 1 Gb/s of tokens: 1,000 bytes take 8 us to come back.
    shaped.shaper = Some(TokenBucketSpec {
        rate: BitsPerSec(1_000_000_000),
        burst: Bytes(1000),
    });
    let model = star_model(2, shaped);
    let mut s = Switch::new(2, &model);
    s.offer(&model, 0, data(0, 0, 0, 1000, 0), 0);
    s.offer(&model, 0, data(0, 1, 0, 1000, 0), 0);
    assert_eq!(
        s.sent(),
        vec![(0, 0, SER_1000 + D)],
        "the full bucket lets one pass"
    );
    assert_eq!(s.wakes(0), vec![SER_1000]);
    // The transmitter frees at 800 ns, but the bucket holds 100 bytes: held until 8 us.
    s.rec.local.clear();
    s.ready(&model, 0, SER_1000);
    assert!(s.state.ports[0].held());
    assert_eq!(s.state.ports[0].queue_len(), 0);
    assert_eq!(s.wakes(0), vec![8_000_000]);
    assert_eq!(s.sent().len(), 1);
    s.rec.local.clear();
    s.ready(&model, 0, 8_000_000);
    assert!(!s.state.ports[0].held());
    assert_eq!(s.sent()[1], (0, 1, 8_000_000 + SER_1000 + D));
    assert!(s.wakes(0).is_empty());
}

#[test]
fn the_wire_loses_packets_after_serializing_them_and_records_the_hop() {
    let mut lossy = class(BufferSize::Packets(10));
    lossy.loss_ppm = 1_000_000;
    let model = ModelBuilder::new(star(2, lossy), vec![]).traced().build();
    let mut s = Switch::new(2, &model);
    assert!(s.offer(&model, 1, data(5, 3, 1, 1000, 0), 2_000));
    assert!(s.rec.remote.is_empty(), "lost: nothing arrives");
    let port = &s.state.ports[1];
    assert_eq!((port.lost(), port.tx_packets()), (1, 1));
    assert_eq!(port.busy_until.0, 2_000 + SER_1000, "the link was busy");
    assert_eq!(s.state.lp.counters.drops, 1);
    assert_eq!(s.state.lp.rare_mut().flow_drops.get(&5), Some(&1));
    let hop = s.state.lp.rare_mut().hop_records[0];
    assert_eq!((hop.node, hop.port), (2, model.net.port_id(2, 1)));
    assert_eq!((hop.flow, hop.seq, hop.arrive_ps), (5, 3, 2_000));
    assert_eq!(hop.dequeue_ps, Some(2_000));
    assert_eq!(hop.depart_ps, Some(2_000 + SER_1000));
    assert_eq!(hop.drop, Some(DropReason::LinkLoss));
}

#[test]
fn a_link_that_is_down_loses_what_is_sent_onto_it() {
    let link = class(BufferSize::Packets(10));
    // Hosts 0 and 1, switches 2 and 3; switch 2's port 1 leads to switch 3.
    let model = ModelBuilder::new(dumbbell(1, 1, link, link), vec![])
        .traced()
        .failures(&[(2, 3, SimTime(1_000_000), Some(SimTime(5_000_000)))])
        .build();
    let mut s = Switch::new(2, &model);
    // Sent at 0, it would arrive at 1.8 us: the link is down by then.
    s.offer(&model, 1, data(0, 0, 1, 1000, 0), 0);
    // Sent at 5 us, after the link came back.
    s.offer(&model, 1, data(0, 1, 1, 1000, 0), 5_000_000);
    assert_eq!(s.sent(), vec![(0, 1, 5_000_000 + SER_1000 + D)]);
    let drops: Vec<_> = s
        .state
        .lp
        .rare_mut()
        .hop_records
        .iter()
        .map(|h| h.drop)
        .collect();
    assert_eq!(drops, vec![Some(DropReason::LinkDown), None]);
    assert_eq!(s.state.ports[1].lost(), 1);
}

#[test]
fn a_paused_class_waits_and_the_resume_restarts_the_idle_port() {
    let model = star_model(2, class(BufferSize::Packets(10)));
    let mut s = Switch::new(2, &model);
    assert!(!s.frame(&model, 0, 3, true, 0), "a PAUSE resumes nothing");
    assert_eq!(s.state.ports[0].paused(), 1 << 3);
    s.offer(&model, 0, data(0, 0, 0, 1000, 3), 10);
    // A class 0 packet waits behind it (one FIFO: the paused head blocks it).
    s.offer(&model, 0, data(1, 0, 0, 1000, 0), 20);
    assert_eq!(s.wakes(0), vec![10]);
    // The wake-up finds only a paused head: nothing is sent, no new wake-up.
    s.rec.local.clear();
    s.ready(&model, 0, 10);
    assert!(s.rec.local.is_empty());
    assert!(s.sent().is_empty());
    assert_eq!(s.state.ports[0].queue_len(), 2);
    assert!(s.frame(&model, 0, 3, false, 1_000_000));
    assert_eq!(s.state.ports[0].paused(), 0);
    assert_eq!(s.sent(), vec![(0, 0, 1_000_000 + SER_1000 + D)]);
    assert_eq!(s.wakes(0), vec![1_000_000 + SER_1000]);
}

#[test]
fn frames_go_ahead_of_the_queue() {
    let model = star_model(2, class(BufferSize::Packets(10)));
    let mut s = Switch::new(2, &model);
    s.offer(&model, 0, data(0, 0, 0, 1000, 0), 0);
    s.offer(&model, 0, data(0, 1, 0, 1000, 0), 0);
    // A PAUSE for the host's class 2 while the port is busy: it waits in the control lane.
    s.send_frame(&model, 0, 2, true, 100);
    assert!(s.state.ports[0].has_control());
    s.ready(&model, 0, SER_1000);
    let frame_ser = model
        .net
        .serialization(model.net.port_id(2, 0), crate::pfc::FRAME_BYTES);
    s.ready(&model, 0, SER_1000 + frame_ser.0);
    let sent = s.rec.sent();
    let order: Vec<(PacketKind, u64)> = sent.iter().map(|x| (x.packet.kind, x.arrives)).collect();
    assert_eq!(
        order,
        vec![
            (PacketKind::Data, SER_1000 + D),
            (PacketKind::Pause, SER_1000 + frame_ser.0 + D),
            (PacketKind::Data, 2 * SER_1000 + frame_ser.0 + D),
        ]
    );
    let frame = sent[1].packet;
    assert_eq!((frame.class(), frame.seq, frame.dst), (2, 1, 0));
}

//! The transmitter, the last stage of the egress pipeline: serialization onto the link, the
//! wire (random loss, a link that is down), the hop record, HPCC's telemetry stamp, and the
//! packet's arrival at the far end. A transmission emits that arrival (serialization +
//! propagation later) at once, so the lookahead includes the serialization of the smallest
//! packet.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use super::PortRef;
use super::state::PortState;
use crate::engine::event::{Event, EventKey, EventKind, EventSink, MAX_EVENT_TIME, Phase};
use crate::engine::model::Model;
use crate::engine::node::lp::Lp;
use crate::engine::trace::DropReason;
use crate::packet::{Packet, PacketKind};
use crate::queue::Entry;
use crate::rng::{LazyStream, STREAM_LOSS};
use crate::telemetry::IntHop;
use crate::topology::LinkClass;
use crate::units::SimTime;

/// Starts serializing `entry` on port `at` at `now`; the far end receives it once the last
/// bit has propagated, unless the wire loses it. `stamp`: the port belongs to a switch, which
/// stamps HPCC telemetry onto flagged data packets.
#[allow(clippy::too_many_arguments)]
#[inline]
pub(super) fn transmit(
    lp: &mut Lp,
    port: &mut PortState,
    at: &PortRef<'_>,
    entry: Entry,
    stamp: bool,
    now: SimTime,
    model: &Model,
    sink: &mut impl EventSink,
) {
    let (global, class) = (at.global, at.class);
    let serialization = model.net.serialization(global, entry.packet.size_bytes);
    let done = now + serialization;
    port.busy_until = done;
    port.tx_packets += 1;
    port.tx_bytes += entry.packet.size_bytes as u64;
    lp.counters.packet_hops += 1;
    let arrival = done + class.delay;
    let down = model
        .failures
        .as_ref()
        .is_some_and(|f| f.lost(global, now, arrival));
    let lost = down
        || class.loss_ppm > 0
            && lost_on_wire(
                class,
                &mut port.cold_mut(class).loss_rng,
                model.seed,
                global,
            );
    if lost {
        port.cold_mut(class).lost += 1;
        lp.count_drop((entry.packet.kind != PacketKind::Pause).then_some(entry.packet.flow));
        let reason = if down {
            DropReason::LinkDown
        } else {
            DropReason::LinkLoss
        };
        lp.record_hop(&entry, global, Some((now.0, done.0)), Some(reason));
        lp.side_record_take(&entry.packet);
        return;
    }
    lp.record_hop(&entry, global, Some((now.0, done.0)), None);
    let mut packet = entry.packet;
    packet.hop = packet.hop.saturating_add(1);
    packet.ingress = model.net.port_peer_local[global as usize];
    if arrival > MAX_EVENT_TIME {
        lp.overflowed(arrival);
        return;
    }
    let peer = model.net.port_peer[global as usize];
    sink.remote(
        peer,
        Event {
            key: EventKey::new(arrival, Phase::Arrive, now),
            kind: EventKind::Arrive(packet),
        },
    );
    if packet.has(Packet::SIDE_RECORD) {
        hand_off_telemetry(lp, port, at, &packet, stamp, now, peer, sink);
    }
}

/// True when the packet now starting on global port `port` is lost on the wire (`loss`,
/// resolution 1e-6), drawn from the port's keyed stream so losses do not depend on
/// scheduling.
#[inline]
fn lost_on_wire(class: &LinkClass, slot: &mut Option<Box<Pcg64Mcg>>, seed: u64, port: u32) -> bool {
    if class.loss_ppm == 0 {
        return false;
    }
    let mut rng = LazyStream::new(slot, seed, STREAM_LOSS, port as u64);
    rng.get().next_u32() % 1_000_000 < class.loss_ppm
}

/// A telemetry packet started transmission on port `at` at `now` (its arrival at `peer` is
/// scheduled): a switch (`stamp`) stamps a data packet with the port's record (HPCC: time,
/// bytes sent before it, queue left behind, link rate); the stack leaves the side table to
/// travel with the packet. Out of line, so the common path only tests the flag.
#[cold]
#[inline(never)]
#[allow(clippy::too_many_arguments)]
fn hand_off_telemetry(
    lp: &mut Lp,
    port: &PortState,
    at: &PortRef<'_>,
    packet: &Packet,
    stamp: bool,
    now: SimTime,
    peer: u32,
    sink: &mut impl EventSink,
) {
    if stamp && packet.kind == PacketKind::Data {
        let hop = IntHop {
            ts_ps: now.0,
            // The counter already includes this packet.
            tx_bytes: port.tx_bytes - packet.size_bytes as u64,
            qlen_bytes: port.queue_bytes(),
            rate_bps: at.class.rate.0,
        };
        let kept = lp
            .side_records
            .get_or_insert_with(Box::default)
            .entry(packet.id())
            .push(hop);
        if !kept {
            lp.telemetry_overflowed(packet.flow);
        }
    }
    if let Some(stack) = lp.side_record_take(packet) {
        sink.side_record(peer, packet.id(), stack);
    }
}

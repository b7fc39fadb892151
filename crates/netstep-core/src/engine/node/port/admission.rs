//! Admission, the first stage of the egress pipeline: the buffer limit a packet faces (a
//! host's NIC admitted it already, a lossless class is never dropped, a switch's shared
//! buffer lowers the port's own limit by dynamic threshold) and, at switch ports, RFC 2698
//! policing on arrival ([`crate::shaping::TrTcm`]).

use super::state::{PortCold, PortState};
use crate::queue::{Entry, SharedBuffer};
use crate::shaping::{Color, TrTcmSpec};
use crate::topology::LinkClass;
use crate::units::{BufferSize, Bytes, SimTime};

/// The buffer limit of queues that must not tail-drop: a host's egress queue takes whatever
/// the NIC admitted (the NIC enforces `nic.buffer` before offering), and a switch queues
/// every lossless (PFC) packet (PFC pauses the upstream instead).
const UNLIMITED: BufferSize = BufferSize::Bytes(Bytes(u64::MAX));

/// The limit a packet offered to a port of link class `class` faces. `unlimited`: a host's
/// port or a lossless packet. Otherwise the class's buffer, lowered by the switch's shared
/// buffer from the bytes waiting in all of its `ports` (one LP holds them all).
#[inline]
pub(super) fn limit(
    unlimited: bool,
    class: &LinkClass,
    shared: Option<&SharedBuffer>,
    ports: &[PortState],
) -> BufferSize {
    if unlimited {
        return UNLIMITED;
    }
    match shared {
        Some(shared) => shared.limit(class.buffer, ports.iter().map(|p| p.queue_bytes()).sum()),
        None => class.buffer,
    }
}

/// `[switch] admission_room`: whether `entry` may join its queue under `limit`: while `room`
/// more bytes fit a byte limit, whatever the packet's own size (ns-3's device queue, stopped
/// once a packet of the device's MTU no longer fits). A packet that finds nothing waiting
/// always may (the limit's own rule still applies), and so may any packet without a `room`
/// or under a packet-count limit.
#[inline]
pub(super) fn has_room(room: Option<u32>, limit: BufferSize, entry: &Entry) -> bool {
    match (room, limit) {
        (Some(room), BufferSize::Bytes(b)) => {
            entry.ahead_packets == 0 || entry.ahead_bytes.saturating_add(room as u64) <= b.0
        }
        _ => true,
    }
}

/// Meters a packet of `size` bytes on arrival at `now`: `false` when the policer colors it
/// red (it is dropped); a yellow packet is counted and forwarded.
#[inline]
pub(super) fn police(cold: &mut PortCold, spec: &TrTcmSpec, now: SimTime, size: u32) -> bool {
    let meter = cold
        .policer
        .get_or_insert_with(|| crate::shaping::TrTcm::new(spec));
    match meter.meter(spec, now, size) {
        Color::Green => true,
        Color::Yellow => {
            cold.yellow += 1;
            true
        }
        Color::Red => false,
    }
}

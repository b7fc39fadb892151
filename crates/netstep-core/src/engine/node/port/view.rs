//! What a port's owner may ask of its ports, instead of reading their state: whether
//! packets wait in a port, which classes the downstream paused, when its transmitter frees
//! (a host's pulling NIC asks before it pulls), and how long a port takes to drain (a
//! switch's adaptive load balancing, [`PortLoad`]).

use super::Egress;
use crate::balance::PortLoad;
use crate::units::{Bytes, SimTime};

impl Egress<'_> {
    /// Number of egress ports of this node.
    #[inline]
    pub(in crate::engine::node) fn degree(&self) -> u32 {
        self.ports.len() as u32
    }

    /// Whether packets wait in port `local`: in its queue, or one its shaper holds.
    #[inline]
    pub(in crate::engine::node) fn backlogged(&self, local: u32) -> bool {
        let port = &self.ports[local as usize];
        port.queue_len() > 0 || port.held()
    }

    /// The traffic classes the downstream node paused on port `local` (bit `c` for class `c`).
    #[inline]
    pub(in crate::engine::node) fn paused(&self, local: u32) -> u8 {
        self.ports[local as usize].paused
    }

    /// When the transmitter of port `local` frees (its current transmission ends).
    #[inline]
    pub(in crate::engine::node) fn free_at(&self, local: u32) -> SimTime {
        self.ports[local as usize].busy_until
    }
}

impl PortLoad for Egress<'_> {
    /// When port `local` would have sent everything it holds, from `now`: its transmitter
    /// frees, then its queue's bytes serialize at its rate.
    fn drain_time(&self, local: u32, now: SimTime) -> SimTime {
        let port = &self.ports[local as usize];
        let rate = self.port_ref(local).class.rate;
        port.busy_until.max(now) + rate.serialization(Bytes(port.queue_bytes()))
    }
}

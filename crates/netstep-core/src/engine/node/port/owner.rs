//! How a node joins its ports' pipeline: [`Owner`], what differs between a host's port (its
//! NIC is told when its packets leave) and a switch's (PFC accounting), and [`PortRef`], the
//! port a stage works on.

use super::Egress;
use crate::engine::event::EventSink;
use crate::engine::model::Model;
use crate::packet::Packet;
use crate::queue::Entry;
use crate::shaping::TokenBucketSpec;
use crate::topology::LinkClass;
use crate::units::SimTime;

/// The port a stage works on: local index, global id and link class.
pub(in crate::engine::node) struct PortRef<'m> {
    /// Index among the node's ports.
    pub local: u32,
    /// Global port id.
    pub global: u32,
    /// The port's link class.
    pub class: &'m LinkClass,
}

/// What the node owning a port adds to its pipeline.
pub(in crate::engine::node) trait Owner {
    /// The owner is a host: its NIC admitted every packet it offers (no buffer limit, no
    /// policer), and its ports stamp no telemetry.
    const HOST: bool;
    /// Whether `packet` belongs to a lossless (PFC) class here: never dropped for buffer,
    /// counted by the ingress accounting while it waits.
    fn lossless(&self, packet: &Packet, model: &Model) -> bool;
    /// A shaper of the node's own that replaces the link class's (a host's `[nic] shaper`).
    fn own_shaper<'m>(&self, model: &'m Model) -> Option<&'m TokenBucketSpec>;
    /// `entry` left a port's queue: its transmission starts (`sent`) or it was dropped.
    fn left<S: EventSink>(
        &mut self,
        eg: &mut Egress<'_>,
        entry: &Entry,
        sent: bool,
        now: SimTime,
        sink: &mut S,
    );
    /// A lossless `packet` (from its `ingress` port) was queued and waits.
    fn queued_lossless<S: EventSink>(
        &mut self,
        eg: &mut Egress<'_>,
        packet: &Packet,
        now: SimTime,
        sink: &mut S,
    );
}

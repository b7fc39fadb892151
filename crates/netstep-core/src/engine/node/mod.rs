//! One logical process: a host or a switch with its egress ports. [`NodeState::handle`] is the
//! single piece of element code both engines run; it only ever talks to the outside through
//! an [`EventSink`].
//!
//! A node is its bookkeeping ([`lp`]: counters, hop records, telemetry, its own events), its
//! egress ports (`port`: the pipeline admission → queueing → shaper → transmitter, with
//! PFC's control lane) and its role, which owns everything else:
//! - `host`: transports, flows waiting for others, delivery, and in front of its port the
//!   NIC (`nic`: socket queues, admission, stamping, backpressure, the pulling NIC);
//! - `switch`: forwarding (routing, load balancing, explicit paths) and PFC accounting.
//!
//! Each part is borrowed on its own: an event at a host or switch gets the LP bookkeeping and
//! the ports as explicit arguments, and the port pipeline calls back into its owner only
//! through `port::Owner`, so no file reaches into another's state.

mod host;
pub mod lp;
mod nic;
mod port;
mod switch;
#[cfg(test)]
mod testkit;
#[cfg(test)]
mod tests;

pub use host::{HostState, Waiting};
pub use lp::{Delivery, Lp, LpRare, NodeCounters};
pub use nic::Nic;
pub use port::{PortCold, PortState};
pub use switch::SwitchState;

use super::event::{Event, EventSink};
use super::model::Model;
use crate::topology::NodeKind;
use crate::transport::{Receiver, Sender, TransportOut};

/// What a node is, with the state only that kind has.
#[derive(Clone, Debug)]
pub enum Role {
    /// A host: NIC and transports.
    Host(HostState),
    /// A switch: PFC accounting and load balancing.
    Switch(SwitchState),
}

/// State of one logical process.
#[derive(Clone, Debug)]
pub struct NodeState {
    /// Bookkeeping every LP keeps.
    pub lp: Lp,
    /// Egress ports (local index).
    pub ports: Vec<PortState>,
    /// Host or switch.
    pub role: Role,
}

impl NodeState {
    /// Fresh state for `node` of `model`.
    pub fn for_node(node: u32, model: &Model) -> NodeState {
        let host = model.net.node_kind[node as usize] == NodeKind::Host;
        NodeState::new(node, model.net.degree(node), host)
    }

    /// Fresh state for `node` with `degree` idle ports.
    pub fn new(node: u32, degree: u32, host: bool) -> NodeState {
        NodeState {
            lp: Lp::new(node),
            ports: vec![PortState::default(); degree as usize],
            role: if host {
                Role::Host(HostState::default())
            } else {
                Role::Switch(SwitchState::default())
            },
        }
    }

    /// Node index.
    #[inline]
    pub fn node(&self) -> u32 {
        self.lp.node
    }

    /// The host's state, if this is a host.
    pub fn host(&self) -> Option<&HostState> {
        match &self.role {
            Role::Host(h) => Some(h),
            Role::Switch(_) => None,
        }
    }

    /// The switch's state, if this is a switch.
    pub fn switch(&self) -> Option<&SwitchState> {
        match &self.role {
            Role::Host(_) => None,
            Role::Switch(s) => Some(s),
        }
    }

    /// The switch's state, mutably, if this is a switch.
    pub fn switch_mut(&mut self) -> Option<&mut SwitchState> {
        match &mut self.role {
            Role::Host(_) => None,
            Role::Switch(s) => Some(s),
        }
    }

    /// Senders of the flows sourced here (none at a switch).
    pub fn senders(&self) -> &[Option<Sender>] {
        self.host().map_or(&[], |h| &h.senders)
    }

    /// Receivers of the flows sinking here (none at a switch).
    pub fn receivers(&self) -> &[Option<Receiver>] {
        self.host().map_or(&[], |h| &h.receivers)
    }

    /// Handles one event at its time; a host's transports write what they produce into
    /// `out`, a buffer the caller keeps for all its LPs (empty between events).
    pub fn handle(
        &mut self,
        event: Event,
        model: &Model,
        sink: &mut impl EventSink,
        out: &mut TransportOut,
    ) {
        let now = event.key.time;
        let NodeState { lp, ports, role } = self;
        lp.counters.events += 1;
        let useful = match role {
            Role::Host(host) => host.handle(event, lp, ports, model, sink, out),
            Role::Switch(switch) => switch.handle(event, lp, ports, model, sink),
        };
        if useful {
            // A batch of departures may have handled later times already (`port/batch.rs`).
            lp.last_useful = lp.last_useful.max(now);
        }
    }
}

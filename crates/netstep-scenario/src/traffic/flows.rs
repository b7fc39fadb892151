//! `kind = "flows"`: explicitly listed flows, each with its hosts, size, start, optional
//! explicit path (every consecutive pair of nodes linked) and optional name and `after` list.

use std::collections::HashMap;

use netstep_core::flow::{ExplicitPath, FlowSpec};
use netstep_core::topology::{NodeKind, TopologySpec};
use netstep_core::units::SimTime;
use serde::{Deserialize, Serialize};

use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, optional_size, traffic_class};
use crate::transport::{TransportConfig, TransportTemplate};

/// Explicitly listed flows. Example: `kind = "flows"`,
/// `flows = [{ src = "h0", dst = "h5", size = "10KB" }]`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FlowsConfig {
    /// Traffic class (0-7) of every flow in the block unless a flow sets its own.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The flows: a list of
    /// `{ src, dst, size | packets, start?, path?, class?, name?, after?, delay? }`.
    ///
    /// Unit: list of tables · Default: required · Example:
    /// `flows = [{ src = "h0", dst = "h1", size = "1MB" }]`
    pub flows: Vec<ExplicitFlow>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

/// One explicitly listed flow.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { src = \"h0\", dst = \"h5\", size = \"10KB\" }"
)]
pub struct ExplicitFlow {
    /// Traffic class (0-7) of this flow.
    ///
    /// Unit: integer · Default: the block's `class` · Example: `class = 7`
    pub class: Option<u8>,
    /// Sending host's name.
    ///
    /// Unit: name · Default: required · Example: `src = "h0"`
    pub src: String,
    /// Receiving host's name (another host than `src`).
    ///
    /// Unit: name · Default: required · Example: `dst = "h1"`
    pub dst: String,
    /// Payload bytes; give `size` or `packets`, not both.
    ///
    /// Unit: size · Default: — (give this or `packets`) · Example: `size = "1MB"`
    pub size: Option<String>,
    /// Packets instead of `size`: that many packets (open loop), `packets x mss` bytes (TCP) or
    /// `packets x mtu` bytes (RDMA).
    ///
    /// Unit: count · Default: — (give this or `size`) · Example: `packets = 100`
    pub packets: Option<u32>,
    /// Start time; with `after`, the flow starts at `max(start, last notice + delay)`.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "10us"`
    pub start: Option<String>,
    /// Explicit node path from `src` to `dst`, followed whatever the `[routing]` mode: every
    /// consecutive pair must be linked and intermediate nodes must be switches.
    ///
    /// Unit: list of node names · Default: the routed path · Example:
    /// `path = ["h0", "edge0_0", "agg0_1", "edge0_1", "h2"]`
    pub path: Option<Vec<String>>,
    /// A name other flows' `after` can refer to (unique in the scenario, not empty).
    ///
    /// Unit: text · Default: none · Example: `name = "a"`
    pub name: Option<String>,
    /// Names of flows (in any `flows` block) that must finish (their receiver has every byte)
    /// before this one starts; not empty.
    ///
    /// Unit: list of names · Default: none · Example: `after = ["a", "b"]`
    pub after: Option<Vec<String>>,
    /// With `after` only: time between the last of them finishing (its notice reaching this
    /// flow's source) and this flow's start (compute time).
    ///
    /// Unit: duration · Default: `"0s"` · Example: `delay = "5us"`
    pub delay: Option<String>,
}

impl TrafficKind for FlowsConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, _on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        Ok(self.flows.len() as u64)
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let block_class = traffic_class(self.class, &path.key("class"))?;
        let template = b.transport(&self.transport)?;
        b.check_flows(self.flows.len() as u64, &path.key("flows"))?;
        b.names();
        let topology = b.ctx.topology;
        let out = &mut *b.out;
        let names = out.names.as_ref().expect("built above");
        for (i, f) in self.flows.iter().enumerate() {
            let flow_path = path.key("flows").index(i);
            let class = match f.class {
                Some(c) => traffic_class(Some(c), &flow_path.key("class"))?,
                None => block_class,
            };
            out.waits.note(out.flows.len() as u32, f, &flow_path)?;
            out.flows.push(explicit_flow(
                class,
                f,
                &template,
                names,
                topology,
                &mut out.adjacency,
                &flow_path,
            )?);
        }
        Ok(())
    }
}

/// Every node's neighbours in link order (ports are numbered in link order), built in one
/// pass over the links: `peers[offsets[n]..offsets[n + 1]]` are node `n`'s, so a node's
/// local port towards a peer is that peer's position there.
pub(crate) struct Adjacency {
    offsets: Vec<usize>,
    peers: Vec<u32>,
}

impl Adjacency {
    fn new(topology: &TopologySpec) -> Adjacency {
        let n = topology.nodes.len();
        let mut offsets = vec![0usize; n + 1];
        for l in &topology.links {
            offsets[l.a as usize + 1] += 1;
            offsets[l.b as usize + 1] += 1;
        }
        for i in 0..n {
            offsets[i + 1] += offsets[i];
        }
        let mut fill = offsets.clone();
        let mut peers = vec![0u32; offsets[n]];
        for l in &topology.links {
            peers[fill[l.a as usize]] = l.b;
            fill[l.a as usize] += 1;
            peers[fill[l.b as usize]] = l.a;
            fill[l.b as usize] += 1;
        }
        Adjacency { offsets, peers }
    }

    /// The local port index at `node` of its (first) link to `peer`.
    fn local_port(&self, node: u32, peer: u32) -> Option<u32> {
        let (from, to) = (self.offsets[node as usize], self.offsets[node as usize + 1]);
        self.peers[from..to]
            .iter()
            .position(|&p| p == peer)
            .map(|i| i as u32)
    }
}

/// One explicit flow: hosts by name, size, start and optional path.
fn explicit_flow(
    class: u8,
    f: &ExplicitFlow,
    template: &TransportTemplate,
    names: &HashMap<&str, u32>,
    topology: &TopologySpec,
    adjacency: &mut Option<Adjacency>,
    path: &FieldPath,
) -> Result<FlowSpec, Invalid> {
    let host = |name: &str, field: &str| -> Result<u32, Invalid> {
        match names.get(name) {
            Some(&n) if topology.nodes[n as usize].kind == NodeKind::Host => Ok(n),
            Some(_) => Err(Invalid::new(
                path.key(field),
                format!("{name:?} is a switch; flows run between hosts"),
            )),
            None => Err(Invalid::new(
                path.key(field),
                format!("unknown host {name:?}"),
            )),
        }
    };
    let src = host(&f.src, "src")?;
    let dst = host(&f.dst, "dst")?;
    if src == dst {
        return Err(Invalid::new(
            path.key("dst"),
            format!("flow from {:?} to itself", f.src),
        ));
    }
    let start = duration_at(&f.start, path.key("start"), SimTime::ZERO)?;
    let size = optional_size(&f.size, path.key("size"))?;
    let (transport, bytes) = template.for_flow(size, f.packets, path)?;
    let explicit = match &f.path {
        None => None,
        Some(nodes) => Some(Box::new(explicit_path(
            nodes,
            src,
            dst,
            names,
            topology,
            adjacency.get_or_insert_with(|| Adjacency::new(topology)),
            &path.key("path"),
        )?)),
    };
    Ok(FlowSpec {
        src,
        dst,
        start,
        size: bytes,
        transport,
        path: explicit,
        class,
        after: None,
        ports: None,
    })
}

/// The ports of an explicit node path, both ways.
fn explicit_path(
    nodes: &[String],
    src: u32,
    dst: u32,
    names: &HashMap<&str, u32>,
    topology: &TopologySpec,
    adjacency: &Adjacency,
    path: &FieldPath,
) -> Result<ExplicitPath, Invalid> {
    let mut ids = Vec::with_capacity(nodes.len());
    for (i, name) in nodes.iter().enumerate() {
        let id = *names
            .get(name.as_str())
            .ok_or_else(|| Invalid::new(path.index(i), format!("unknown node {name:?}")))?;
        ids.push(id);
    }
    if ids.first() != Some(&src) || ids.last() != Some(&dst) || ids.len() < 2 {
        return Err(Invalid::new(
            path.clone(),
            "must start at the flow's src and end at its dst",
        ));
    }
    for (i, &id) in ids.iter().enumerate().take(ids.len() - 1).skip(1) {
        if topology.nodes[id as usize].kind == NodeKind::Host {
            return Err(Invalid::new(
                path.index(i),
                format!("{:?} is a host; hosts do not forward", nodes[i]),
            ));
        }
    }
    let mut forward = Vec::new();
    let mut reverse = Vec::new();
    for (i, pair) in ids.windows(2).enumerate() {
        let port = adjacency.local_port(pair[0], pair[1]).ok_or_else(|| {
            Invalid::new(
                path.index(i + 1),
                format!(
                    "no link from {:?} to {:?}; the path must follow links",
                    nodes[i],
                    nodes[i + 1]
                ),
            )
        })?;
        forward.push(port);
    }
    for pair in ids.windows(2).rev() {
        reverse.push(
            adjacency
                .local_port(pair[1], pair[0])
                .expect("links are bidirectional"),
        );
    }
    Ok(ExplicitPath {
        forward: forward.into(),
        reverse: reverse.into(),
    })
}

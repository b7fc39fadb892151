//! Turns `[[traffic]]` blocks into the flow list. Each traffic kind lives in one file that
//! owns its config type, its flow count by arithmetic and its generation, behind
//! [`TrafficKind`]; [`TrafficConfig`] registers the kinds, one line each (see ARCHITECTURE.md,
//! "How to add a traffic kind"). Every random draw comes from a stream keyed by (seed, traffic
//! block).

mod common;
pub mod link_load;
pub mod matrix;
mod spatial;
mod waits;

use std::collections::HashMap;
use std::path::Path;

use crate::collectives::{CollectiveJob, CollectiveStep};
use netstep_core::flow::FlowSpec;
use netstep_core::rng::{STREAM_TRAFFIC, stream};
use netstep_core::topology::TopologySpec;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use crate::error::{FieldPath, Invalid};
use crate::limits::{Footprint, Limits, MAX_FLOWS};
use crate::transport::{TransportConfig, TransportTemplate, resolve_transport};

pub use flows::ExplicitFlow;

/// What every traffic kind does: the one interface generation and counting dispatch through.
pub(crate) trait TrafficKind {
    /// The block's own transport, if it sets one.
    fn transport(&self) -> Option<&TransportConfig>;
    /// How many flows the block generates, by arithmetic (an expectation for random
    /// arrivals), without generating them.
    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid>;
    /// Appends the block's flows to `block.out`.
    fn generate<'a>(&'a self, block: &mut Block<'_, 'a>) -> Result<(), Invalid>;
}

/// Declares each kind's module and [`TrafficConfig`] from one registration line per kind:
/// `Variant(module::ConfigType)`, the variant's snake-case name being the `kind` string.
macro_rules! traffic_kinds {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*) => {
        $(pub mod $module;)*

        /// One `[[traffic]]` block: `kind` picks the traffic kind, whose config type holds
        /// the block's other fields.
        #[derive(Clone, Debug, Deserialize, Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum TrafficConfig {
            $($(#[$doc])* $variant($module::$ty),)*
        }

        impl TrafficConfig {
            /// The block's kind behind the interface every kind implements.
            fn kind(&self) -> &dyn TrafficKind {
                match self {
                    $(TrafficConfig::$variant(k) => k,)*
                }
            }
        }
    };
}

traffic_kinds! {
    /// Explicitly listed flows (`flows.rs`).
    Flows(flows::FlowsConfig),
    /// Seeded random host pairs (`random_pairs.rs`).
    RandomPairs(random_pairs::RandomPairsConfig),
    /// Every host to one other (`permutation.rs`).
    Permutation(permutation::PermutationConfig),
    /// Every host to every other (`all_to_all.rs`).
    AllToAll(all_to_all::AllToAllConfig),
    /// Rounds of many senders to one receiver (`incast.rs`).
    Incast(incast::IncastConfig),
    /// A collective over ranks, as flows that wait for each other (`collective.rs`).
    Collective(collective::CollectiveConfig),
    /// Sources alternating on and off periods (`on_off.rs`).
    OnOff(on_off::OnOffConfig),
    /// Closed-loop request/response clients (`request_response.rs`).
    RequestResponse(request_response::RequestResponseConfig),
    /// Flows read from a CSV or Parquet file (`flow_file.rs`).
    FlowFile(flow_file::FlowFileConfig),
    /// Poisson arrivals at a target load, sizes from a CDF (`poisson.rs`).
    Poisson(poisson::PoissonConfig),
    /// The m3 / Parsimon workload: a rack matrix at a load on the busiest link
    /// (`rack_matrix.rs`).
    RackMatrix(rack_matrix::RackMatrixConfig),
    /// An AI training job from an AICB / SimAI workload file (`aicb.rs`).
    Aicb(aicb::AicbConfig),
}

impl TrafficConfig {
    /// The block's own transport, if it sets one.
    pub fn transport(&self) -> Option<&TransportConfig> {
        self.kind().transport()
    }
}

/// Everything traffic generation needs to know about the scenario.
pub struct TrafficContext<'a> {
    /// The topology (for host lists, names, links).
    pub topology: &'a TopologySpec,
    /// Seed.
    pub seed: u64,
    /// The top-level `[transport]`, resolved.
    pub default_transport: TransportTemplate,
    /// Folder of the scenario file (CDF paths are relative to it).
    pub base_dir: Option<&'a Path>,
    /// Limits on flows, packets and memory.
    pub limits: &'a Limits,
    /// Nodes of the topology (for the memory estimate).
    pub nodes: u64,
    /// Egress ports of the topology (for the memory estimate).
    pub ports: u64,
    /// Routing table entries (for the memory estimate).
    pub routing_entries: u64,
}

/// What the traffic blocks generate.
pub struct Generated {
    /// Every flow, in block order.
    pub flows: Vec<FlowSpec>,
    /// The texts of the CDF files read (for the scenario hash).
    pub inputs: Vec<String>,
    /// The collective jobs, in block order.
    pub jobs: Vec<CollectiveJob>,
    /// The collective step of each collective flow (by flow id).
    pub tags: Vec<(u32, CollectiveStep)>,
    /// The AICB job, if a block is one.
    pub aicb: Option<aicb::AicbJob>,
}

/// What the blocks generate so far, and what they share: the flows and the lookups built once
/// for every block that needs them.
pub(crate) struct Output<'a> {
    /// Every flow so far, in block order.
    pub flows: Vec<FlowSpec>,
    /// Texts and hashes of the input files read (for the scenario hash).
    pub inputs: Vec<String>,
    /// Collective jobs so far.
    pub jobs: Vec<CollectiveJob>,
    /// Collective step of each collective flow.
    pub tags: Vec<(u32, CollectiveStep)>,
    /// Names and `after` lists of explicit flows, resolved after the last block.
    pub waits: waits::Waits<'a>,
    /// Node index by name, built by the first block that needs it.
    pub names: Option<HashMap<&'a str, u32>>,
    /// Every node's neighbours, built by the first explicit path.
    pub adjacency: Option<flows::Adjacency>,
    /// The AICB job, once its block is generated.
    pub aicb: Option<aicb::AicbJob>,
}

/// One block being generated: the scenario, the block's place and random stream, and the
/// output it appends to.
pub(crate) struct Block<'g, 'a> {
    /// The scenario.
    pub ctx: &'g TrafficContext<'a>,
    /// Block index in `[[traffic]]`.
    pub index: usize,
    /// `traffic[index]`.
    pub path: FieldPath,
    /// The block's random stream.
    pub rng: Pcg64Mcg,
    /// Host ids in node order.
    pub hosts: &'g [u32],
    /// The output so far.
    pub out: &'g mut Output<'a>,
}

impl<'a> Block<'_, 'a> {
    /// The block's transport: its own table, or the top-level `[transport]`.
    pub fn transport(&self, own: &Option<TransportConfig>) -> Result<TransportTemplate, Invalid> {
        match own {
            Some(t) => resolve_transport(t, self.path.key("transport")),
            None => Ok(self.ctx.default_transport.clone()),
        }
    }

    /// What every flow of a block of alike flows shares (`random_pairs`, `permutation`,
    /// `all_to_all`, `incast`): class, start, transport and size, resolved.
    pub fn alike(
        &self,
        transport: &Option<TransportConfig>,
        class: Option<u8>,
        size: &Option<String>,
        packets: Option<u32>,
        start: &Option<String>,
    ) -> Result<common::SameFlows, Invalid> {
        let template = self.transport(transport)?;
        common::SameFlows::resolve(&template, class, size, packets, start, &self.path)
    }

    /// Checks that `more` flows beyond those generated so far fit the flow limit and the
    /// memory budget before they are generated; `path` is the field to blame.
    pub fn check_flows(&self, more: u64, path: &FieldPath) -> Result<(), Invalid> {
        self.ctx.check_flows(self.out.flows.len(), more, path)
    }

    /// Node index by name (built once for every block).
    pub fn names(&mut self) -> &HashMap<&'a str, u32> {
        let topology = self.ctx.topology;
        self.out
            .names
            .get_or_insert_with(|| common::node_names(topology))
    }
}

impl TrafficContext<'_> {
    /// Checks that `existing + more` flows fit the flow limit and the memory budget before
    /// they are generated; `path` is the field to blame.
    fn check_flows(&self, existing: usize, more: u64, path: &FieldPath) -> Result<(), Invalid> {
        let flows = (existing as u64).saturating_add(more);
        self.limits.check_count(flows, MAX_FLOWS, "flows", path)?;
        self.limits.check_memory(
            &Footprint {
                nodes: self.nodes,
                ports: self.ports,
                routing_entries: self.routing_entries,
                flows,
                // What the flows keep for the whole run, a lower bound: their in-flight
                // state is checked once their starts are known (`build.rs`).
                live_flows: Some(0),
                ..Default::default()
            },
            path,
        )
    }
}

/// Generates every flow of every traffic block, in block order.
pub fn generate<'a>(
    blocks: &'a [TrafficConfig],
    ctx: &TrafficContext<'a>,
) -> Result<Generated, Invalid> {
    let hosts = ctx.topology.hosts();
    let mut out = Output {
        flows: Vec::new(),
        inputs: Vec::new(),
        jobs: Vec::new(),
        tags: Vec::new(),
        waits: waits::Waits::default(),
        names: None,
        adjacency: None,
        aicb: None,
    };
    for (b, block) in blocks.iter().enumerate() {
        let mut state = Block {
            ctx,
            index: b,
            path: FieldPath::of(&["traffic"]).index(b),
            rng: stream(ctx.seed, STREAM_TRAFFIC, b as u64),
            hosts: &hosts,
            out: &mut out,
        };
        block.kind().generate(&mut state)?;
    }
    out.waits.resolve(&mut out.flows)?;
    let jobs = &out.jobs;
    if let Some(name) = jobs
        .iter()
        .map(|j| &j.name)
        .enumerate()
        .find_map(|(i, n)| jobs[..i].iter().any(|j| &j.name == n).then_some(n))
    {
        return Err(Invalid::new(
            FieldPath::of(&["traffic"]),
            format!("two collective blocks are named job = {name:?}; job names must be unique"),
        ));
    }
    Ok(Generated {
        flows: out.flows,
        inputs: out.inputs,
        jobs: out.jobs,
        tags: out.tags,
        aicb: out.aicb,
    })
}

/// The fabric flows are counted on without building it.
pub(crate) struct Counting<'a> {
    /// Hosts.
    pub hosts: u64,
    /// Line rate of a host link, bits per second.
    pub host_rate_bps: f64,
    /// Folder of the scenario file (input files are relative to it).
    pub base_dir: Option<&'a Path>,
}

/// How many flows `blocks` generate on a topology of `hosts` hosts whose host links run at
/// `host_rate_bps`, by arithmetic (Poisson: the expected count), without generating them: the
/// counts `netstep validate` gives for a topology too large to build. The blocks are counted,
/// not checked (host names and the settings whose check needs the topology are checked when
/// a run generates them); a Poisson load outside (0, 1] is refused, since the count follows it.
pub fn count_flows(
    blocks: &[TrafficConfig],
    hosts: u64,
    host_rate_bps: f64,
    base_dir: Option<&Path>,
) -> Result<u64, Invalid> {
    let on = Counting {
        hosts,
        host_rate_bps,
        base_dir,
    };
    let mut total = 0u64;
    for (b, block) in blocks.iter().enumerate() {
        let path = FieldPath::of(&["traffic"]).index(b);
        total = total.saturating_add(block.kind().count(&on, &path)?);
    }
    Ok(total)
}

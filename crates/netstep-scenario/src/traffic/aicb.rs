//! `kind = "aicb"`: an AI training job from an AICB / SimAI workload file, run as SimAI runs
//! it: one walker per GPU (rank) on the job's hosts, collectives decomposed into ring or
//! all-to-all flows that the walkers release (`crate::aicb::schedule`, `netstep_core::job`).
//! One such block per scenario.

use std::sync::Arc;

use netstep_core::flow::FlowSpec;
use netstep_core::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

use super::common::host_list;
use super::{Block, Counting, TrafficKind};
use crate::aicb::schedule::{self, JobFlow, Schedule};
use crate::aicb::{GroupLayout, Workload};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, traffic_class};
use crate::table_file;
use crate::transport::TransportConfig;

/// An AI training job from an AICB / SimAI workload file. Example: `kind = "aicb"`,
/// `workload = "gpt13b_tp8.txt"`, `gpus_per_server = 8`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AicbConfig {
    /// The workload file (AICB's `workload/simAI/` format), relative to the scenario file's
    /// folder, then to the working directory.
    ///
    /// Unit: path · Default: required · Example: `workload = "llama7b_tp2.txt"`
    pub workload: String,
    /// The GPUs, in rank order (host names); their count is SimAI's world size, from which
    /// the groups are formed; the header's `all_gpus`, when given, must equal it.
    ///
    /// Unit: list of names · Default: every host, in host order · Example:
    /// `ranks = ["gpu0", "gpu1"]`
    pub ranks: Option<Vec<String>>,
    /// GPUs per server (SimAI's `gpus_per_server`, line 1 of its topology file): consecutive
    /// ranks share a server; it decides the groups' server counts and so their rings.
    ///
    /// Unit: integer · Default: 8 · Example: `gpus_per_server = 8`
    pub gpus_per_server: Option<u32>,
    /// Delay from a flow's release to its start (SimAI's `AS_SEND_LAT`; SimAI's own default
    /// reads as 6 ms through a unit slip, its documentation says 6 us).
    ///
    /// Unit: duration · Default: `"6us"` · Example: `send_latency = "3us"`
    pub send_latency: Option<String>,
    /// The order in which a GPU's waiting collectives start once its queue frees:
    /// `newest_first` (SimAI's LIFO scheduling, which can leave GPUs waiting on each other
    /// forever when they issued their weight-gradient collectives at different times, as
    /// SimAI then hangs) or `oldest_first` (issue order, the same on every GPU).
    ///
    /// Unit: name · Default: `"newest_first"` · Example: `queue_order = "oldest_first"`
    pub queue_order: Option<QueueOrder>,
    /// Traffic class (0-7) of the job's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// Transport of the job's flows (TCP or RDMA: a walker counts a send done when it is
    /// acknowledged): a table with the fields of `[transport]`.
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "rdma", cc = "dcqcn" }`
    pub transport: Option<TransportConfig>,
}

/// The order of a GPU's waiting collectives.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum QueueOrder {
    /// Newest first (SimAI).
    NewestFirst,
    /// In issue order.
    OldestFirst,
}

/// What a run needs to report an AICB job: the workload, its schedule and groups.
#[derive(Clone, Debug)]
pub struct AicbJob {
    /// The workload as read.
    pub workload: Workload,
    /// The ops in walker order.
    pub schedule: Schedule,
    /// The groups.
    pub layout: GroupLayout,
    /// The engine's job.
    pub job: netstep_core::job::JobSpec,
}

impl AicbConfig {
    /// Reads the workload and forms its groups on `world` ranks.
    fn load(
        &self,
        base_dir: Option<&std::path::Path>,
        world: u32,
        path: &FieldPath,
    ) -> Result<(Workload, GroupLayout, Schedule), Invalid> {
        let file = table_file::resolve(&self.workload, base_dir);
        let workload = crate::aicb::read(&file)
            .map_err(|e| Invalid::new(path.key("workload"), e.to_string()))?;
        if let Some(all) = workload.header.all_gpus
            && all != world
        {
            return Err(Invalid::new(
                path.key("ranks"),
                format!(
                    "the workload's header says all_gpus: {all}, but the job has {world} ranks \
                     (the hosts listed in `ranks`, else every host): give as many ranks as the \
                     workload's GPUs"
                ),
            ));
        }
        let gps = self.gpus_per_server.unwrap_or(8);
        let layout = workload
            .header
            .group_layout(world, gps)
            .map_err(|e| Invalid::new(path.key("gpus_per_server"), e))?;
        let schedule = schedule::plan(&workload, &layout)
            .map_err(|e| Invalid::new(path.key("workload"), e.to_string()))?;
        Ok((workload, layout, schedule))
    }
}

impl TrafficKind for AicbConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid> {
        let world = self.ranks.as_ref().map_or(on.hosts, |r| r.len() as u64);
        let (_, layout, schedule) = self.load(on.base_dir, world as u32, path)?;
        schedule::flow_count(&schedule, &layout).map_err(|e| Invalid::new(path.clone(), e))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        if b.out.aicb.is_some() {
            return Err(Invalid::new(
                path.key("kind"),
                "a scenario runs one AICB job; this is the second `kind = \"aicb\"` block",
            ));
        }
        let template = b.transport(&self.transport)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        let latency = duration_at(
            &self.send_latency,
            path.key("send_latency"),
            SimTime::from_us(6),
        )?;
        let hosts = match &self.ranks {
            None => b.hosts.to_vec(),
            Some(list) => {
                let topology = b.ctx.topology;
                host_list(list, b.names(), topology, &path.key("ranks"))?
            }
        };
        let (workload, layout, schedule) = self.load(b.ctx.base_dir, hosts.len() as u32, &path)?;
        let count = schedule::flow_count(&schedule, &layout)
            .map_err(|e| Invalid::new(path.clone(), e))?;
        b.check_flows(count, &path)?;
        let file = table_file::resolve(&self.workload, b.ctx.base_dir);
        b.out.inputs.push(format!(
            "aicb {} {:016x}",
            self.workload,
            table_file::file_hash(&file).map_err(|e| Invalid::new(path.key("workload"), e))?
        ));
        let first = b.out.flows.len() as u32;
        let out = &mut *b.out;
        out.flows.reserve(count as usize);
        // TCP and RDMA flows of any size share one transport.
        let Some(transport) = template.shared() else {
            return Err(Invalid::new(
                path.key("transport"),
                "an AICB job needs a transport with acknowledgements (`tcp` or `rdma`): its \
                 walkers count a send done when it is acknowledged",
            ));
        };
        let newest_first = self.queue_order != Some(QueueOrder::OldestFirst);
        let timing = (latency, newest_first);
        let job = schedule::expand(&schedule, &layout, hosts.clone(), timing, first, |f| {
            let JobFlow { src, dst, bytes } = f;
            out.flows.push(FlowSpec {
                src: hosts[src as usize],
                dst: hosts[dst as usize],
                start: SimTime::ZERO,
                size: Bytes(bytes),
                transport: Arc::clone(&transport),
                path: None,
                class,
                after: None,
                ports: None,
            });
            Ok(())
        })
        .map_err(|e| Invalid::new(path.clone(), e))?;
        out.aicb = Some(AicbJob {
            workload,
            schedule,
            layout,
            job,
        });
        Ok(())
    }
}

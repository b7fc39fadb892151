//! `kind = "collective"`: a collective operation over a group of hosts (ranks), as NCCL runs
//! it, expanded into flows that wait for each other.
//!
//! An algorithm is a list of steps; a step is a set of sends (rank to rank, bytes). Every send
//! is split into `chunks` flows (pipelining). A flow of step `s` from rank `r` waits for the
//! flows (same chunk) into `r` in the latest earlier step in which `r` received: the data it
//! forwards or reduces. Chunk `c > 0` of a send also waits for chunk `c - 1` of the same send
//! (one chunk of a send on the wire at a time). The first flow of rank `r` in iteration
//! `i > 0` waits for the flows into `r` of its last receiving step of iteration `i - 1` (or,
//! for a rank that receives nothing, its own last sends), plus the compute gap.

use std::sync::Arc;

use crate::collectives::{CollectiveJob, CollectiveStep};
use netstep_core::flow::{Dependencies, FlowSpec};
use netstep_core::transport::TransportSpec;
use netstep_core::units::{Bytes, SimTime};
use rand::seq::SliceRandom;
use serde::{Deserialize, Serialize};

use super::common::host_list;
use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, traffic_class};
use crate::transport::TransportConfig;

/// A collective over a group of hosts (ranks), as flows that wait for each other. Example:
/// `kind = "collective"`, `collective = "ring_all_reduce"`, `size = "64MB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CollectiveConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The algorithm: `ring_all_reduce` (reduce-scatter then all-gather round the ring: 2(n-1)
    /// steps of size/n bytes from each rank to the next), `halving_doubling_all_reduce`
    /// (Rabenseifner: recursive halving, partners n/2 ... 1 apart with size/2 ... size/n bytes,
    /// then recursive doubling back; 2 log2 n steps; n a power of two), `reduce_scatter`,
    /// `all_gather` (ring, n-1 steps of size/n), `all_to_all` (one step: size/n to every other
    /// rank), `broadcast` (ring from rank 0: rank s sends size bytes to rank s+1 in step s).
    ///
    /// Unit: name · Default: required · Example: `collective = "ring_all_reduce"`
    pub collective: Algorithm,
    /// Host names in rank order (distinct hosts).
    ///
    /// Unit: list of names · Default: every host, in host order · Example:
    /// `ranks = ["h0", "h2", "h4", "h6"]`
    pub ranks: Option<Vec<String>>,
    /// Shuffle the rank order with the seed.
    ///
    /// Unit: bool · Default: false · Example: `shuffle = true`
    pub shuffle: Option<bool>,
    /// Buffer bytes per rank (the vector all-reduced; all-to-all sends size/n to each peer,
    /// broadcast sends size); sizes that do not divide are rounded up to whole bytes; at least
    /// one byte per block.
    ///
    /// Unit: size · Default: required · Example: `size = "8MB"`
    pub size: String,
    /// Flows per send (pipelining): each send is split into `chunks` flows of (nearly) equal
    /// size, at least one byte each.
    ///
    /// Unit: integer · Default: 1 · Example: `chunks = 4`
    pub chunks: Option<u32>,
    /// Times the collective runs; at least 1.
    ///
    /// Unit: integer · Default: 1 · Example: `iterations = 2`
    pub iterations: Option<u32>,
    /// Time between a rank's end of one iteration and its start of the next.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `compute = "50us"`
    pub compute: Option<String>,
    /// Start of the first iteration.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`
    pub start: Option<String>,
    /// Name in `collectives.parquet` and the run summary (unique).
    ///
    /// Unit: text · Default: `"job<block index>"` · Example: `job = "allreduce"`
    pub job: Option<String>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

impl TrafficKind for CollectiveConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        let n = self.ranks.as_ref().map_or(on.hosts, |r| r.len() as u64);
        Ok(flow_count(
            send_count(self.collective, n.min(u32::MAX as u64) as u32),
            self.chunks.unwrap_or(1),
            self.iterations.unwrap_or(1),
        ))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let template = b.transport(&self.transport)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        let start = duration_at(&self.start, path.key("start"), SimTime::ZERO)?;
        let compute = duration_at(&self.compute, path.key("compute"), SimTime::ZERO)?;
        let size = netstep_core::units::parse_size(&self.size)
            .map_err(|e| Invalid::unit(path.key("size"), e))?;
        let (chunks, iterations) = (self.chunks.unwrap_or(1), self.iterations.unwrap_or(1));
        let mut members = match &self.ranks {
            None => b.hosts.to_vec(),
            Some(list) => {
                let topology = b.ctx.topology;
                host_list(list, b.names(), topology, &path.key("ranks"))?
            }
        };
        if self.shuffle.unwrap_or(false) {
            members.shuffle(&mut b.rng);
        }
        let sends = send_count(self.collective, members.len() as u32);
        b.check_flows(flow_count(sends, chunks, iterations), &path)?;
        let steps = steps(self.collective, members.len() as u32, size.0)
            .map_err(|e| Invalid::new(path.key("ranks"), e))?;
        check_counts(&steps, chunks, iterations, &path)?;
        let out = &mut *b.out;
        let plan = Plan {
            algorithm: self.collective,
            ranks: &members,
            size: size.0,
            chunks,
            iterations,
            compute,
            start,
            class,
            job: out.jobs.len() as u32,
        };
        let first = out.flows.len() as u32;
        let (more, step_tags) = expand(&plan, &steps, first, &mut |bytes| {
            template.for_flow(Some(bytes), None, &path)
        })?;
        out.tags.extend(
            step_tags
                .into_iter()
                .enumerate()
                .map(|(i, t)| (first + i as u32, t)),
        );
        out.flows.extend(more);
        out.jobs.push(CollectiveJob {
            name: self
                .job
                .clone()
                .unwrap_or_else(|| format!("job{}", b.index)),
            collective: self.collective.name(),
            ranks: members.len() as u32,
            start,
        });
        Ok(())
    }
}

/// The collective algorithms.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Algorithm {
    /// Ring all-reduce: reduce-scatter then all-gather around the ring, 2(n-1) steps of
    /// size/n bytes from each rank to the next.
    RingAllReduce,
    /// Halving-doubling all-reduce (Rabenseifner): recursive-halving reduce-scatter (partners
    /// n/2, n/4, ..., 1 apart; size/2, size/4, ..., size/n bytes) then recursive-doubling
    /// all-gather (the reverse); 2 log2(n) steps; n a power of two.
    HalvingDoublingAllReduce,
    /// Ring reduce-scatter: n-1 steps of size/n bytes.
    ReduceScatter,
    /// Ring all-gather: n-1 steps of size/n bytes (each rank ends with all n blocks of
    /// size/n).
    AllGather,
    /// All-to-all: one step, every rank sends size/n bytes to every other rank.
    AllToAll,
    /// Ring broadcast from rank 0: n-1 steps, rank s sends size bytes to rank s+1 (chunks
    /// pipeline down the ring).
    Broadcast,
}

impl Algorithm {
    /// The name in scenario files and in `collectives.parquet`.
    pub const fn name(self) -> &'static str {
        match self {
            Algorithm::RingAllReduce => "ring_all_reduce",
            Algorithm::HalvingDoublingAllReduce => "halving_doubling_all_reduce",
            Algorithm::ReduceScatter => "reduce_scatter",
            Algorithm::AllGather => "all_gather",
            Algorithm::AllToAll => "all_to_all",
            Algorithm::Broadcast => "broadcast",
        }
    }
}

/// One send of a step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Send {
    /// Sending rank.
    pub from: u32,
    /// Receiving rank.
    pub to: u32,
    /// Bytes (before chunking).
    pub bytes: u64,
}

/// The steps of one iteration of `algorithm` on `n` ranks with a buffer of `size` bytes per
/// rank. Sizes that do not divide evenly are rounded up to whole bytes.
pub fn steps(algorithm: Algorithm, n: u32, size: u64) -> Result<Vec<Vec<Send>>, String> {
    if n < 2 {
        return Err(format!("a collective needs at least 2 ranks, got {n}"));
    }
    let ring = |count: u32, bytes: u64| -> Vec<Vec<Send>> {
        (0..count)
            .map(|_| {
                (0..n)
                    .map(|r| Send {
                        from: r,
                        to: (r + 1) % n,
                        bytes,
                    })
                    .collect()
            })
            .collect()
    };
    let least = if algorithm == Algorithm::Broadcast {
        1
    } else {
        n as u64
    };
    if size < least {
        return Err(format!(
            "{size} bytes over {n} ranks leaves blocks of no bytes; give at least {least} bytes"
        ));
    }
    let block = size.div_ceil(n as u64);
    let steps = match algorithm {
        Algorithm::RingAllReduce => ring(2 * (n - 1), block),
        Algorithm::ReduceScatter | Algorithm::AllGather => ring(n - 1, block),
        Algorithm::AllToAll => vec![
            (0..n)
                .flat_map(|r| {
                    (0..n).filter(move |&q| q != r).map(move |q| Send {
                        from: r,
                        to: q,
                        bytes: block,
                    })
                })
                .collect(),
        ],
        Algorithm::Broadcast => (0..n - 1)
            .map(|s| {
                vec![Send {
                    from: s,
                    to: s + 1,
                    bytes: size,
                }]
            })
            .collect(),
        Algorithm::HalvingDoublingAllReduce => {
            if !n.is_power_of_two() {
                return Err(format!(
                    "halving-doubling needs a power of two ranks, got {n} (use ring_all_reduce)"
                ));
            }
            let levels = n.trailing_zeros();
            let exchange = |distance: u32, bytes: u64| -> Vec<Send> {
                (0..n)
                    .map(|r| Send {
                        from: r,
                        to: r ^ distance,
                        bytes,
                    })
                    .collect()
            };
            let halving = (0..levels).map(|k| exchange(n >> (k + 1), size.div_ceil(1 << (k + 1))));
            let doubling = (0..levels).map(|k| exchange(1 << k, size.div_ceil((n >> k) as u64)));
            halving.chain(doubling).collect()
        }
    };
    Ok(steps)
}

/// What a collective block asks for, resolved.
pub struct Plan<'a> {
    /// The algorithm.
    pub algorithm: Algorithm,
    /// Host (node index) of each rank.
    pub ranks: &'a [u32],
    /// Bytes per rank.
    pub size: u64,
    /// Flows per send.
    pub chunks: u32,
    /// Iterations.
    pub iterations: u32,
    /// Time between an iteration's end at a rank and its next iteration's start there.
    pub compute: SimTime,
    /// Start of the first iteration.
    pub start: SimTime,
    /// Traffic class of every flow.
    pub class: u8,
    /// Job index (for the step tags).
    pub job: u32,
}

/// Sends of one iteration of `algorithm` on `n` ranks, by arithmetic (checked against the
/// flow limit before [`steps`] builds them).
pub fn send_count(algorithm: Algorithm, n: u32) -> u64 {
    let n = n as u64;
    let ring = n.saturating_mul(n.saturating_sub(1));
    match algorithm {
        Algorithm::RingAllReduce => ring.saturating_mul(2),
        Algorithm::ReduceScatter | Algorithm::AllGather | Algorithm::AllToAll => ring,
        Algorithm::Broadcast => n.saturating_sub(1),
        Algorithm::HalvingDoublingAllReduce => n.saturating_mul(2 * n.max(1).ilog2() as u64),
    }
}

/// Number of flows a collective of `sends` sends per iteration expands to.
pub fn flow_count(sends: u64, chunks: u32, iterations: u32) -> u64 {
    sends
        .saturating_mul(chunks as u64)
        .saturating_mul(iterations as u64)
}

/// Expands `plan` into flows with ids from `first` on, each with its step tag; `transport`
/// gives the transport and wire size of a flow of the given payload.
pub fn expand(
    plan: &Plan<'_>,
    steps: &[Vec<Send>],
    first: u32,
    transport: &mut dyn FnMut(Bytes) -> Result<(Arc<TransportSpec>, Bytes), Invalid>,
) -> Result<(Vec<FlowSpec>, Vec<CollectiveStep>), Invalid> {
    let n = plan.ranks.len();
    let chunks = plan.chunks as usize;
    let mut flows = Vec::new();
    let mut tags = Vec::new();
    // into[s][r]: the sends of step s into rank r (so a flow finds its inputs at once).
    let into: Vec<Vec<Vec<usize>>> = steps
        .iter()
        .map(|sends| {
            let mut by_rank = vec![Vec::new(); n];
            for (j, send) in sends.iter().enumerate() {
                by_rank[send.to as usize].push(j);
            }
            by_rank
        })
        .collect();
    // Flow ids of the previous iteration's last inputs of each rank.
    let mut carried: Vec<Vec<u32>> = vec![Vec::new(); n];
    for iteration in 0..plan.iterations {
        // ids[s][j][c]: flow of step s, send j, chunk c.
        let mut ids: Vec<Vec<Vec<u32>>> = Vec::with_capacity(steps.len());
        // Per rank: the latest step it received in, so far this iteration.
        let mut last_in: Vec<Option<usize>> = vec![None; n];
        for (s, sends) in steps.iter().enumerate() {
            let mut step_ids = Vec::with_capacity(sends.len());
            for send in sends {
                let mut chunk_ids = Vec::with_capacity(chunks);
                for c in 0..chunks {
                    let bytes = send.bytes / chunks as u64
                        + u64::from((c as u64) < send.bytes % chunks as u64);
                    let id = first + (flows.len() as u32);
                    let (mut deps, mut delay) = (Vec::new(), SimTime::ZERO);
                    if let Some(prev) = last_in[send.from as usize] {
                        for &j in &into[prev][send.from as usize] {
                            deps.push(ids[prev][j][c]);
                        }
                    } else if iteration > 0 && c == 0 {
                        deps.extend_from_slice(&carried[send.from as usize]);
                        delay = plan.compute;
                    }
                    if c > 0 {
                        deps.push(chunk_ids[c - 1]);
                    }
                    let (spec, size) = transport(Bytes(bytes.max(1)))?;
                    flows.push(FlowSpec {
                        src: plan.ranks[send.from as usize],
                        dst: plan.ranks[send.to as usize],
                        start: plan.start,
                        size,
                        transport: spec,
                        path: None,
                        class: plan.class,
                        after: (!deps.is_empty()).then(|| {
                            Box::new(Dependencies {
                                flows: deps.into_boxed_slice(),
                                delay,
                            })
                        }),
                        ports: None,
                    });
                    tags.push(CollectiveStep {
                        job: plan.job,
                        iteration,
                        step: s as u32,
                    });
                    chunk_ids.push(id);
                }
                step_ids.push(chunk_ids);
            }
            ids.push(step_ids);
            for send in sends {
                last_in[send.to as usize] = Some(s);
            }
        }
        // What each rank's next iteration waits for: its part of this one done, as an NCCL
        // call returns: every flow into it in its last receiving step, and its own sends of
        // its last sending step (known by notice from their receivers).
        for (rank, wait) in carried.iter_mut().enumerate() {
            wait.clear();
            if let Some(s) = last_in[rank] {
                for &j in &into[s][rank] {
                    wait.extend_from_slice(&ids[s][j]);
                }
            }
            let last_send = steps
                .iter()
                .rposition(|s| s.iter().any(|x| x.from as usize == rank));
            if let Some(s) = last_send {
                for (j, send) in steps[s].iter().enumerate() {
                    if send.from as usize == rank {
                        wait.extend_from_slice(&ids[s][j]);
                    }
                }
            }
        }
    }
    Ok((flows, tags))
}

/// Checks the numeric fields of a collective block: at least one chunk of at least one byte
/// per send, at least one iteration.
pub fn check_counts(
    steps: &[Vec<Send>],
    chunks: u32,
    iterations: u32,
    path: &FieldPath,
) -> Result<(), Invalid> {
    let smallest = steps.iter().flatten().map(|s| s.bytes).min().unwrap_or(0);
    if chunks == 0 || smallest < chunks as u64 {
        return Err(Invalid::new(
            path.key("chunks"),
            format!(
                "must be between 1 and {smallest} (the smallest send is {smallest} bytes), got {chunks}"
            ),
        ));
    }
    if iterations == 0 {
        return Err(Invalid::new(path.key("iterations"), "must be at least 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bytes(steps: &[Vec<Send>]) -> u64 {
        steps.iter().flatten().map(|s| s.bytes).sum()
    }

    /// The step counts and bytes of each algorithm are the textbook ones (Thakur, Rabenseifner
    /// and Gropp 2005; NCCL's ring): for n ranks and S bytes per rank, ring all-reduce moves
    /// 2(n-1) S/n per rank, halving-doubling the same in 2 log2 n steps, all-to-all (n-1) S/n.
    #[test]
    fn steps_and_bytes_follow_the_closed_forms() {
        let (n, s) = (8u32, 8_000u64);
        let ring = steps(Algorithm::RingAllReduce, n, s).unwrap();
        assert_eq!(ring.len(), 14);
        assert_eq!(bytes(&ring), 2 * 7 * 1_000 * 8);
        let hd = steps(Algorithm::HalvingDoublingAllReduce, n, s).unwrap();
        assert_eq!(hd.len(), 6);
        assert_eq!(bytes(&hd), bytes(&ring), "both move 2(n-1)/n S per rank");
        let distances: Vec<u32> = hd.iter().map(|st| st[0].from ^ st[0].to).collect();
        assert_eq!(distances, [4, 2, 1, 1, 2, 4]);
        let sizes: Vec<u64> = hd.iter().map(|st| st[0].bytes).collect();
        assert_eq!(sizes, [4_000, 2_000, 1_000, 1_000, 2_000, 4_000]);
        for algorithm in [
            Algorithm::RingAllReduce,
            Algorithm::HalvingDoublingAllReduce,
            Algorithm::ReduceScatter,
            Algorithm::AllGather,
            Algorithm::AllToAll,
            Algorithm::Broadcast,
        ] {
            let count: usize = steps(algorithm, n, s).unwrap().iter().map(Vec::len).sum();
            assert_eq!(count as u64, send_count(algorithm, n), "{algorithm:?}");
        }
        assert_eq!(steps(Algorithm::ReduceScatter, n, s).unwrap().len(), 7);
        assert_eq!(steps(Algorithm::AllGather, n, s).unwrap().len(), 7);
        let a2a = steps(Algorithm::AllToAll, n, s).unwrap();
        assert_eq!((a2a.len(), a2a[0].len()), (1, 56));
        assert_eq!(bytes(&a2a), 56 * 1_000);
        let bcast = steps(Algorithm::Broadcast, n, s).unwrap();
        assert_eq!(bcast.len(), 7);
        assert!(
            bcast
                .iter()
                .enumerate()
                .all(|(i, st)| st[0].from == i as u32)
        );
        assert!(steps(Algorithm::HalvingDoublingAllReduce, 6, s).is_err());
        assert!(steps(Algorithm::RingAllReduce, 1, s).is_err());
        assert!(
            steps(Algorithm::RingAllReduce, 8, 4).is_err(),
            "sends of 0 bytes"
        );
        assert!(steps(Algorithm::RingAllReduce, 8, 8).is_ok());
        assert!(steps(Algorithm::Broadcast, 8, 1).is_ok());
    }

    /// Every flow of a ring all-reduce waits for exactly the flow into its sender in the step
    /// before (same chunk), the previous chunk of its own send, and across iterations for its
    /// sender's last inputs with the compute gap.
    #[test]
    fn ring_dependencies_are_the_previous_step_into_the_sender() {
        let ranks = [10, 11, 12, 13];
        let plan = Plan {
            algorithm: Algorithm::RingAllReduce,
            ranks: &ranks,
            size: 4_000,
            chunks: 2,
            iterations: 2,
            compute: SimTime(5_000),
            start: SimTime(7),
            class: 0,
            job: 3,
        };
        let st = steps(plan.algorithm, 4, plan.size).unwrap();
        let tcp = Arc::new(TransportSpec::Tcp(
            netstep_core::transport::tcp::TcpSpec::new(netstep_core::transport::CcSpec::NewReno),
        ));
        let (flows, tags) = expand(&plan, &st, 100, &mut |b| Ok((tcp.clone(), b))).unwrap();
        assert_eq!(
            flows.len() as u64,
            flow_count(send_count(plan.algorithm, 4), plan.chunks, plan.iterations)
        );
        assert_eq!(flows.len(), 2 * 6 * 4 * 2);
        let id = |it: usize, s: usize, j: usize, c: usize| 100 + (((it * 6 + s) * 4 + j) * 2 + c);
        let deps = |f: usize| -> (Vec<u32>, SimTime) {
            let d = flows[f - 100].after.as_ref();
            (
                d.map_or(vec![], |d| d.flows.to_vec()),
                d.map_or(SimTime::ZERO, |d| d.delay),
            )
        };
        // Iteration 0, step 0: chunk 0 starts at once, chunk 1 after chunk 0.
        assert_eq!(deps(id(0, 0, 1, 0)).0, Vec::<u32>::new());
        assert_eq!(deps(id(0, 0, 1, 1)).0, vec![id(0, 0, 1, 0) as u32]);
        // Step 3, rank 2 -> 3, chunk 1: the flow 1 -> 2 of step 2, chunk 1, and its chunk 0.
        assert_eq!(
            deps(id(0, 3, 2, 1)).0,
            vec![id(0, 2, 1, 1) as u32, id(0, 3, 2, 0) as u32]
        );
        // Iteration 1, step 0, rank 0, chunk 0: both chunks of 3 -> 0 in step 5 and of its own
        // 0 -> 1 in step 5, plus compute.
        assert_eq!(
            deps(id(1, 0, 0, 0)),
            (
                vec![
                    id(0, 5, 3, 0) as u32,
                    id(0, 5, 3, 1) as u32,
                    id(0, 5, 0, 0) as u32,
                    id(0, 5, 0, 1) as u32
                ],
                SimTime(5_000)
            )
        );
        assert_eq!(flows[id(0, 3, 2, 1) - 100].src, 12);
        assert_eq!(flows[id(0, 3, 2, 1) - 100].dst, 13);
        assert_eq!(
            tags[id(1, 4, 0, 0) - 100],
            CollectiveStep {
                job: 3,
                iteration: 1,
                step: 4
            }
        );
        // 1,000 bytes per send in two chunks of 500.
        assert!(flows.iter().all(|f| f.size == Bytes(500)));
        assert!(
            netstep_core::flow::check_dependencies(&{
                // Ids shifted to 0 for the check.
                let mut shifted = flows.clone();
                for f in &mut shifted {
                    if let Some(d) = f.after.as_mut() {
                        d.flows.iter_mut().for_each(|x| *x -= 100);
                    }
                }
                shifted
            })
            .is_ok()
        );
    }
}

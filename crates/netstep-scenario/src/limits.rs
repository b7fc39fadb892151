//! Resource limits, checked before anything large is allocated: the scenario's size (nodes,
//! ports, flows, packets, queue-sample rows) is computed from the parsed file alone, compared
//! with the documented limits below and with a memory budget (the machine's available memory
//! or `--max-memory`), and refused with a clear error naming the field when it does not fit.
//! `netstep validate` prints the same footprint.

use std::fmt;

use netstep_core::units::SimTime;

use crate::error::{FieldPath, Invalid};

/// Most `packet_hops` rows a run may be expected to write (the estimate in [`Footprint`]):
/// 2^34, about 17 billion rows and several hundred GB of Parquet.
pub const MAX_PACKET_HOP_ROWS: u64 = 1 << 34;
/// Most nodes in one scenario (hosts and switches): 16,777,216.
pub const MAX_NODES: u64 = 1 << 24;
/// Most egress ports (two per link): 134,217,728.
pub const MAX_PORTS: u64 = 1 << 27;
/// Most flows: 67,108,864 (flow ids are 32-bit; the packet id keeps the flow in its high half).
pub const MAX_FLOWS: u64 = 1 << 26;
/// Most data packets in one flow: 2^31 - 1 (packet numbers are 31-bit: the top bit marks
/// feedback packets).
pub const MAX_PACKETS_PER_FLOW: u64 = (1 << 31) - 1;
/// Most data packets over all flows: 2^40 (about 10^12).
pub const MAX_PACKETS: u64 = 1 << 40;
/// Most `queue_samples` rows a run may be asked for: 2^32.
pub const MAX_QUEUE_SAMPLE_ROWS: u64 = 1 << 32;
/// Most `cc_samples` rows a run may be expected to write (the lower-bound estimate in
/// [`Footprint`]): 2^32.
pub const MAX_CC_SAMPLE_ROWS: u64 = 1 << 32;
/// Most entries in the shortest-path routing table of a `custom` topology (one 2-byte
/// distance per (attachment switch, node) pair): 2^32, 8 GiB and about a minute of setup.
pub const MAX_ROUTING_ENTRIES: u64 = 1 << 32;
/// Most `[[failures]]` entries (each adds up to two routing epochs).
pub const MAX_FAILURES: u64 = 1024;
/// Latest flow start: 2^59 ps (about 6.7 days), half the representable event time, so a
/// flow's own events (RTOs, the last packets) still fit.
pub const MAX_START: SimTime = SimTime(1 << 59);
/// Widest quantized window: 1,000 s.
pub const MAX_WINDOW: SimTime = SimTime::from_secs(1000);
/// Most worker threads.
pub const MAX_THREADS: usize = 1024;
/// Most segments in a `--set` key path.
pub const MAX_SET_SEGMENTS: usize = 64;

/// Fixed memory of a run: the binary, thread stacks, Parquet writers.
pub const BASE_BYTES: u64 = 64 << 20;
/// Memory per node in a run (World entity, name, per-node engine state), measured.
pub const BYTES_PER_NODE: u64 = 100;
/// Memory per egress port in a run (World link entity, port state, routing), measured.
pub const BYTES_PER_PORT: u64 = 160;
/// Memory every flow takes at the run's peak: its spec in the flow table and, while the
/// scenario is built, its World entity and generated spec (the peak of a run of millions of
/// flows); later its sender and receiver slots and its outcome. Measured (benches/RESULTS.md,
/// "Estimator scale"): 175-250 B per flow from 200 k to 10 M flows of m3's mixes.
pub const BYTES_PER_FLOW: u64 = 230;
/// Memory a flow of a training job (`kind = "aicb"`) takes besides [`BYTES_PER_FLOW`] at the
/// run's peak: its place in the job's program (the op it belongs to, the flow it releases)
/// and the collectives' flow lists while the job is built. Measured (benches/RESULTS.md, "Two
/// threads on the 1,024-GPU run"): 270-275 B per flow in all at the set-up peak of GPT-13B
/// TP8 and Llama-7B TP2 at 1,024 GPUs (19.8 M and 2.66 M flows).
pub const BYTES_PER_JOB_FLOW: u64 = 45;
/// Memory a flow takes besides while it is in flight (its live sender, its packets in queues
/// and events), measured: a million one-packet TCP flows all at once, 1.62 GB.
pub const BYTES_PER_LIVE_FLOW: u64 = 1328;

/// Peak memory of parsing a scenario, per byte of its text (measured: a 62 MB custom topology
/// with 1.5 M hosts peaks at 3.4 GB while parsing, 54 B per byte).
pub const BYTES_PER_TEXT_BYTE: u64 = 64;

/// The size of a scenario, known before it is built.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Hosts and switches.
    pub nodes: u64,
    /// Egress ports (two per link).
    pub ports: u64,
    /// Flows (for Poisson traffic, the expected count).
    pub flows: u64,
    /// Of those, the flows a training job owns ([`BYTES_PER_JOB_FLOW`] each on top).
    pub job_flows: u64,
    /// The most flows expected in flight at once (each alive from its start for its unloaded
    /// transfer time plus 10 us); `None` before the flows are known: every flow counts as
    /// live, an upper bound.
    pub live_flows: Option<u64>,
    /// Data packets over all flows.
    pub packets: u64,
    /// `queue_samples` rows (0 when the table is off; with no `duration`, up to the last flow
    /// start: a lower bound).
    pub queue_sample_rows: u64,
    /// Shortest-path routing table entries (`custom` topologies; 0 for the others, which
    /// route arithmetically).
    pub routing_entries: u64,
    /// Expected `packet_hops` rows (0 when the table is off): every data packet over its
    /// route and every ACK over the way back, after the flow and node filters and 1-in-N
    /// sampling. Exact for a run without losses that runs to its end; retransmissions add
    /// rows, a `duration` or a time filter removes some.
    pub packet_hop_rows: u64,
    /// `packet_hop_rows` is only an upper bound: a `duration` or a `trace.from` / `until`
    /// window may stop the rows early (the disk estimate then leaves them out).
    pub packet_hops_bounded: bool,
    /// Expected `cc_samples` rows (0 when the table is off): every sample time in each kept
    /// TCP or RDMA flow's lifetime, taken as its ideal FCT plus the unloaded way back of its
    /// last ACK, cut at `duration`: a lower bound (congestion lengthens lifetimes).
    pub cc_sample_rows: u64,
}

/// Bytes on disk per row of the optional tables, as written (zstd), measured on the quickstart
/// (benches/RESULTS.md, "Output size estimate"): `packet_hops`, `queue_samples`, `cc_samples`.
pub const DISK_BYTES_PER_ROW: [u64; 3] = [15, 5, 10];

impl Footprint {
    /// Expected bytes of the optional trace tables on disk, with the table that writes the most
    /// (`None` when no table is on).
    pub fn trace_disk_bytes(&self) -> (u64, Option<&'static str>) {
        let sizes = [
            (
                "packet_hops",
                if self.packet_hops_bounded {
                    0
                } else {
                    self.packet_hop_rows.saturating_mul(DISK_BYTES_PER_ROW[0])
                },
            ),
            (
                "queue_samples",
                self.queue_sample_rows.saturating_mul(DISK_BYTES_PER_ROW[1]),
            ),
            (
                "cc_samples",
                self.cc_sample_rows.saturating_mul(DISK_BYTES_PER_ROW[2]),
            ),
        ];
        let total = sizes.iter().map(|s| s.1).fold(0u64, u64::saturating_add);
        let largest = sizes
            .iter()
            .filter(|s| s.1 > 0)
            .max_by_key(|s| s.1)
            .map(|s| s.0);
        (total, largest)
    }
}

impl Footprint {
    /// Expected peak memory of a run, bytes: fixed part plus measured per-entity costs
    /// (benches/RESULTS.md, "Memory estimate"). In-flight packets are bounded by the buffers
    /// and not counted; `--max-memory` guards the run itself.
    pub fn memory_bytes(&self) -> u64 {
        BASE_BYTES
            .saturating_add(self.nodes.saturating_mul(BYTES_PER_NODE))
            .saturating_add(self.ports.saturating_mul(BYTES_PER_PORT))
            .saturating_add(self.flows.saturating_mul(BYTES_PER_FLOW))
            .saturating_add(self.job_flows.saturating_mul(BYTES_PER_JOB_FLOW))
            .saturating_add(
                self.live_flows
                    .unwrap_or(self.flows)
                    .saturating_mul(BYTES_PER_LIVE_FLOW),
            )
            .saturating_add(self.routing_entries.saturating_mul(2))
    }
}

impl fmt::Display for Footprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} nodes, {} ports, {} flows, {} packets",
            self.nodes, self.ports, self.flows, self.packets
        )?;
        if let Some(live) = self.live_flows {
            write!(f, " ({live} flows in flight at once, unloaded)")?;
        }
        if self.queue_sample_rows > 0 {
            write!(f, ", {} queue-sample rows", self.queue_sample_rows)?;
        }
        if self.packet_hop_rows > 0 {
            write!(f, ", about {} packet-hop rows", self.packet_hop_rows)?;
        }
        if self.cc_sample_rows > 0 {
            write!(f, ", at least {} cc-sample rows", self.cc_sample_rows)?;
        }
        let (disk, _) = self.trace_disk_bytes();
        if disk > 0 {
            write!(f, " (about {} on disk)", human_bytes(disk))?;
        }
        write!(f, "; expected memory {}", human_bytes(self.memory_bytes()))
    }
}

/// `1.5 GB`-style sizes (decimal units, as the scenario format uses).
pub fn human_bytes(bytes: u64) -> String {
    let b = bytes as f64;
    if b >= 1e9 {
        format!("{:.1} GB", b / 1e9)
    } else if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else {
        format!("{:.0} KB", b / 1e3)
    }
}

/// Where the memory budget came from, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BudgetSource {
    /// `--max-memory`.
    Flag,
    /// The machine's available memory (`MemAvailable` in /proc/meminfo).
    Available,
}

/// What a scenario may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Memory budget in bytes and where it came from; `None` checks only the fixed limits.
    pub memory: Option<(u64, BudgetSource)>,
}

impl Limits {
    /// The fixed limits and this machine's available memory.
    pub fn machine() -> Limits {
        Limits {
            memory: available_memory().map(|b| (b, BudgetSource::Available)),
        }
    }

    /// The fixed limits and an explicit budget.
    pub fn with_budget(bytes: u64) -> Limits {
        Limits {
            memory: Some((bytes, BudgetSource::Flag)),
        }
    }

    /// Fixed limits only (tests, and callers that manage memory themselves).
    pub const fn unbounded() -> Limits {
        Limits { memory: None }
    }

    /// Checks `count` of `what` against `max`; the error points at `path`.
    pub fn check_count(
        &self,
        count: u64,
        max: u64,
        what: &str,
        path: &FieldPath,
    ) -> Result<(), Invalid> {
        if count > max {
            return Err(Invalid::new(
                path.clone(),
                format!(
                    "the scenario would have {count} {what}; the limit is {max} (scenarios/REFERENCE.md, \"Limits\")"
                ),
            ));
        }
        Ok(())
    }

    /// Checks the footprint's expected memory against the budget; the error points at `path`
    /// (the field that made it grow).
    pub fn check_memory(&self, footprint: &Footprint, path: &FieldPath) -> Result<(), Invalid> {
        let Some((budget, source)) = self.memory else {
            return Ok(());
        };
        let need = footprint.memory_bytes();
        if need > budget {
            let from = match source {
                BudgetSource::Flag => "--max-memory",
                BudgetSource::Available => {
                    "the memory this machine has available; --max-memory sets another budget"
                }
            };
            return Err(Invalid::new(
                path.clone(),
                format!(
                    "the run would need about {} ({}) but the budget is {} ({from})",
                    human_bytes(need),
                    Footprint {
                        queue_sample_rows: 0,
                        ..*footprint
                    }
                    .counts(),
                    human_bytes(budget),
                ),
            ));
        }
        Ok(())
    }
}

impl Footprint {
    fn counts(&self) -> String {
        format!(
            "{} nodes, {} ports, {} flows",
            self.nodes, self.ports, self.flows
        )
    }
}

impl Limits {
    /// Checks that parsing a scenario of `text_bytes` fits the memory budget.
    pub fn check_text(&self, text_bytes: u64) -> Result<(), String> {
        let Some((budget, source)) = self.memory else {
            return Ok(());
        };
        let need = text_bytes.saturating_mul(BYTES_PER_TEXT_BYTE);
        if need > budget {
            let from = match source {
                BudgetSource::Flag => "--max-memory",
                BudgetSource::Available => "the memory this machine has available",
            };
            return Err(format!(
                "a {} scenario file needs about {} to parse, more than the budget of {} ({from})",
                human_bytes(text_bytes),
                human_bytes(need),
                human_bytes(budget)
            ));
        }
        Ok(())
    }
}

/// `MemAvailable` from /proc/meminfo, bytes (None where it cannot be read).
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_grows_with_every_entity_and_saturates() {
        let small = Footprint::default().memory_bytes();
        assert_eq!(small, BASE_BYTES);
        let f = Footprint {
            nodes: 1,
            ports: 1,
            flows: 1,
            ..Default::default()
        };
        assert_eq!(
            f.memory_bytes(),
            BASE_BYTES + BYTES_PER_NODE + BYTES_PER_PORT + BYTES_PER_FLOW + BYTES_PER_LIVE_FLOW
        );
        let streamed = Footprint {
            live_flows: Some(0),
            ..f
        };
        assert_eq!(
            streamed.memory_bytes(),
            BASE_BYTES + BYTES_PER_NODE + BYTES_PER_PORT + BYTES_PER_FLOW
        );
        let job = Footprint { job_flows: 1, ..f };
        assert_eq!(job.memory_bytes(), f.memory_bytes() + BYTES_PER_JOB_FLOW);
        let huge = Footprint {
            flows: u64::MAX,
            ..Default::default()
        };
        assert_eq!(huge.memory_bytes(), u64::MAX);
    }

    #[test]
    fn a_budget_below_the_estimate_is_refused_and_names_the_field() {
        let f = Footprint {
            flows: 1_000_000,
            ..Default::default()
        };
        let path = FieldPath::of(&["traffic"]).index(0).key("count");
        let err = Limits::with_budget(100 << 20)
            .check_memory(&f, &path)
            .unwrap_err();
        assert_eq!(err.path.to_string(), "traffic[0].count");
        assert!(err.message.contains("--max-memory"), "{}", err.message);
        assert!(
            Limits::with_budget(u64::MAX)
                .check_memory(&f, &path)
                .is_ok()
        );
        assert!(Limits::unbounded().check_memory(&f, &path).is_ok());
    }
}

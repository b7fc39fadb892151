//! An AICB training job's reports: per GPU and workload row, `layers.parquet`; rank 0's
//! breakdown and the iteration time in the summary and `run.parquet`; SimAI's
//! `EndToEnd.csv` (rank 0, its layout) for drop-in comparison.
//!
//! Per op at a rank, with `issued` the end of its compute, `done` when its collective was done
//! at the rank and `update` its row's update time: total communication = `done + update -
//! issued` (SimAI: `finish_tick + update_time - creation_tick`); exposed = the total for a
//! blocking op (the rank waited all of it), and for non-blocking ops the rank's wait after its
//! last op, charged to them in the order they finish (SimAI charges that wait to layer 0
//! only, and only when layer 0 has a weight-gradient collective). Algorithm bandwidth =
//! bytes / total, in GiB/s as SimAI prints it; bus bandwidth = algbw x 2(n-1)/n for
//! all-reduce, x (n-1)/n otherwise, with `n` the op's own group size (SimAI's weight-gradient
//! DP size comes from the header's PP, not the forced 1). Exposed time is split by each op's
//! own group (SimAI splits forward and input-gradient time by the forward column's group,
//! and counts `_DP_EP` ones there as TP). The bubble and PP columns are 0: PP is 1 here.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch, StringArray, UInt32Array, UInt64Array};
use netstep_core::engine::RunOutput;
use netstep_scenario::Scenario;
use netstep_scenario::aicb::CollectiveKind;
use netstep_scenario::aicb::schedule::Pass;
use netstep_scenario::traffic::aicb::AicbJob;

/// One pass (fwd, ig or wg) of one row at one GPU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PassCells {
    /// Compute, ns.
    pub compute_ns: u64,
    /// Exposed communication, ns (null: no collective, or not finished).
    pub exposed_ns: Option<u64>,
    /// Total communication, ns.
    pub total_ns: Option<u64>,
    /// Bytes of its collective.
    pub bytes: u64,
    /// Bus-bandwidth factor (2(n-1)/n or (n-1)/n).
    pub bus_factor: f64,
}

impl PassCells {
    /// Algorithm bandwidth, GiB/s.
    pub fn algbw(&self) -> Option<f64> {
        let t = self.total_ns.filter(|&t| t > 0)?;
        Some(self.bytes as f64 / t as f64 * 1e9 / (1u64 << 30) as f64)
    }
    /// Bus bandwidth, GiB/s.
    pub fn busbw(&self) -> Option<f64> {
        self.algbw().map(|a| a * self.bus_factor)
    }
}

/// One `layers.parquet` row.
#[derive(Clone, Debug, PartialEq)]
pub struct LayerRow {
    /// GPU (rank).
    pub gpu: u32,
    /// Row index in the workload file.
    pub row: u32,
    /// The row's name.
    pub name: String,
    /// fwd, ig, wg.
    pub passes: [PassCells; 3],
}

/// Rank 0's breakdown and the job's iteration time, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// When the last rank finished (`None`: some did not).
    pub iteration_ns: Option<u64>,
    /// Rank 0's finish.
    pub end_ns: Option<u64>,
    /// Rank 0's compute.
    pub compute_ns: u64,
    /// Exposed communication by the op's dimension: TP, EP, DP, DP_EP.
    pub exposed_by_dim: [u64; 4],
}

impl Breakdown {
    /// Rank 0's exposed communication: its finish minus its compute (SimAI's definition).
    pub fn exposed_ns(&self) -> Option<u64> {
        self.end_ns.map(|e| e.saturating_sub(self.compute_ns))
    }
    /// The `run.parquet` job columns.
    pub fn columns(&self) -> [Option<u64>; 7] {
        let d = self.exposed_by_dim;
        [
            self.iteration_ns,
            Some(self.compute_ns),
            self.exposed_ns(),
            Some(d[0]),
            Some(d[1]),
            Some(d[2]),
            Some(d[3]),
        ]
    }
}

/// The job's reports.
#[derive(Clone, Debug, PartialEq)]
pub struct Training {
    /// Per GPU and row.
    pub layers: Vec<LayerRow>,
    /// Totals.
    pub breakdown: Breakdown,
    /// For GPUs that did not finish (up to four): what each runs and what waits behind it.
    pub stuck: Vec<String>,
    /// GPUs that did not finish.
    pub unfinished: usize,
}

fn pass_index(p: Pass) -> usize {
    match p {
        Pass::Forward => 0,
        Pass::InputGrad => 1,
        Pass::WeightGrad => 2,
    }
}

fn dim_index(d: netstep_scenario::aicb::Dimension) -> usize {
    use netstep_scenario::aicb::Dimension;
    match d {
        Dimension::Tp => 0,
        Dimension::Ep => 1,
        Dimension::Dp => 2,
        Dimension::DpEp => 3,
    }
}

/// The reports of the scenario's AICB job, if it has one.
pub fn report(scenario: &Scenario, output: &RunOutput) -> Option<Training> {
    let job = scenario.aicb.as_ref()?;
    let ranks = output.job.as_ref()?;
    let spec = &job.job;
    let n_rows = job.workload.rows.len();
    let mut layers = Vec::with_capacity(ranks.len() * n_rows);
    let mut breakdown = Breakdown {
        iteration_ns: ranks
            .iter()
            .map(|r| r.finished.map(|t| t.as_ns()))
            .try_fold(0, |m, t| t.map(|t| t.max(m))),
        ..Breakdown::default()
    };
    for rank in ranks {
        let mut rows: Vec<LayerRow> = job
            .workload
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| LayerRow {
                gpu: rank.rank,
                row: i as u32,
                name: r.name.clone(),
                passes: [PassCells::default(); 3],
            })
            .collect();
        let exposed = exposed_times(job, rank);
        for (k, info) in job.schedule.info.iter().enumerate() {
            let cell = &mut rows[info.row as usize].passes[pass_index(info.pass)];
            cell.compute_ns += info.compute_ns;
            if rank.rank == 0 {
                breakdown.compute_ns += info.compute_ns;
            }
            let Some((kind, dim, bytes, n)) = info.collective else {
                continue;
            };
            let t = rank.ops[k];
            let total = t
                .done
                .zip(t.issued)
                .map(|(d, i)| (d + spec.ops[k].update).as_ns().saturating_sub(i.as_ns()));
            cell.total_ns = total.map(|t| cell.total_ns.unwrap_or(0) + t);
            cell.exposed_ns = exposed[k].map(|e| cell.exposed_ns.unwrap_or(0) + e);
            cell.bytes += bytes;
            let n = f64::from(n);
            cell.bus_factor = match kind {
                CollectiveKind::AllReduce => 2.0 * (n - 1.0) / n,
                _ => (n - 1.0) / n,
            };
            if rank.rank == 0 {
                breakdown.exposed_by_dim[dim_index(dim)] += exposed[k].unwrap_or(0);
            }
        }
        if rank.rank == 0 {
            breakdown.end_ns = rank.finished.map(|t| t.as_ns());
        }
        layers.extend(rows);
    }
    let unfinished: Vec<&netstep_core::engine::RankOutcome> =
        ranks.iter().filter(|r| r.finished.is_none()).collect();
    let stuck = unfinished
        .iter()
        .take(4)
        .map(|r| stuck_at(job, r))
        .collect();
    Some(Training {
        layers,
        breakdown,
        stuck,
        unfinished: unfinished.len(),
    })
}

/// What an unfinished GPU runs and what waits behind it.
fn stuck_at(job: &AicbJob, rank: &netstep_core::engine::RankOutcome) -> String {
    let name = |k: usize| {
        let info = &job.schedule.info[k];
        let dim = info.collective.map_or("-", |c| c.1.name());
        format!(
            "{} {} ({dim})",
            job.workload.rows[info.row as usize].name,
            info.pass.name()
        )
    };
    let mut running = Vec::new();
    let mut waiting = Vec::new();
    for (k, t) in rank.ops.iter().enumerate() {
        match (t.issued, t.started, t.done) {
            (Some(_), Some(_), None) => running.push(name(k)),
            (Some(_), None, _) if job.schedule.info[k].collective.is_some() => {
                waiting.push(name(k))
            }
            _ => {}
        }
    }
    format!(
        "GPU {} runs {}; waiting: {}",
        rank.rank,
        if running.is_empty() {
            "nothing".to_string()
        } else {
            running.join(", ")
        },
        if waiting.is_empty() {
            "none".to_string()
        } else {
            waiting.join(", ")
        }
    )
}

/// Exposed communication of each op at one rank (see the module docs).
fn exposed_times(job: &AicbJob, rank: &netstep_core::engine::RankOutcome) -> Vec<Option<u64>> {
    let spec = &job.job;
    let mut exposed = vec![None; spec.ops.len()];
    let mut finishes = Vec::new();
    for (k, op) in spec.ops.iter().enumerate() {
        if job.schedule.info[k].collective.is_none() {
            continue;
        }
        let t = rank.ops[k];
        let (Some(done), Some(issued)) = (t.done, t.issued) else {
            continue;
        };
        let finish = (done + op.update).as_ns();
        if op.blocking {
            exposed[k] = Some(finish.saturating_sub(issued.as_ns()));
        } else {
            exposed[k] = Some(0);
            finishes.push((finish, k));
        }
    }
    // The wait after the last op is charged to the non-blocking ops finishing in it.
    let walked = rank.walked.map_or(u64::MAX, |t| t.as_ns());
    finishes.sort_unstable();
    let mut covered = walked;
    for (finish, k) in finishes {
        if finish > covered {
            exposed[k] = Some(finish - covered);
            covered = finish;
        }
    }
    exposed
}

/// The summary lines.
pub fn summary(t: &Training) -> String {
    let b = &t.breakdown;
    let ns = |v: Option<u64>| {
        v.map_or("did not finish".to_string(), |v| {
            format!("{:.3} ms", v as f64 / 1e6)
        })
    };
    let d = b.exposed_by_dim;
    let mut stuck = String::new();
    if t.unfinished > 0 {
        stuck = format!(
            "\nwarning        {} GPUs did not finish: their collectives wait on each other (with \
             queue_order = \"newest_first\", SimAI's, GPUs may start waiting collectives in \
             different orders and then wait forever: SimAI's scheduling has the same cycle; \
             \"oldest_first\" keeps issue order)",
            t.unfinished
        );
        for line in &t.stuck {
            stuck.push_str(&format!("\n               {line}"));
        }
    }
    format!(
        "\niteration      {} (last GPU); GPU 0: compute {}, exposed comm {}\n\
         exposed comm   TP {}  EP {}  DP {}  DP_EP {} (GPU 0; layers.parquet, EndToEnd.csv){stuck}",
        ns(b.iteration_ns),
        ns(Some(b.compute_ns)),
        ns(b.exposed_ns()),
        ns(Some(d[0])),
        ns(Some(d[1])),
        ns(Some(d[2])),
        ns(Some(d[3])),
    )
}

/// Writes `layers.parquet` and `EndToEnd.csv` into `dir`.
pub fn write(dir: &Path, t: &Training, kv: &[(String, String)]) -> anyhow::Result<()> {
    netstep_trace::write_table(&dir.join("layers.parquet"), &layers_batch(&t.layers)?, kv)?;
    std::fs::write(dir.join("EndToEnd.csv"), end_to_end(t))?;
    Ok(())
}

/// `layers.parquet`'s batch.
fn layers_batch(rows: &[LayerRow]) -> anyhow::Result<RecordBatch> {
    let mut columns: Vec<(String, ArrayRef)> = vec![
        (
            "gpu".into(),
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.gpu))),
        ),
        (
            "row".into(),
            Arc::new(UInt32Array::from_iter_values(rows.iter().map(|r| r.row))),
        ),
        (
            "layer".into(),
            Arc::new(StringArray::from_iter_values(
                rows.iter().map(|r| r.name.as_str()),
            )),
        ),
    ];
    for (i, pass) in ["fwd", "ig", "wg"].iter().enumerate() {
        let cells = |f: &dyn Fn(&PassCells) -> Option<u64>| -> ArrayRef {
            Arc::new(
                rows.iter()
                    .map(|r| f(&r.passes[i]))
                    .collect::<UInt64Array>(),
            )
        };
        let floats = |f: &dyn Fn(&PassCells) -> Option<f64>| -> ArrayRef {
            Arc::new(
                rows.iter()
                    .map(|r| f(&r.passes[i]))
                    .collect::<Float64Array>(),
            )
        };
        columns.push((format!("{pass}_compute_ns"), cells(&|c| Some(c.compute_ns))));
        columns.push((format!("{pass}_exposed_ns"), cells(&|c| c.exposed_ns)));
        columns.push((format!("{pass}_total_ns"), cells(&|c| c.total_ns)));
        columns.push((format!("{pass}_bytes"), cells(&|c| Some(c.bytes))));
        columns.push((format!("{pass}_algbw_gibps"), floats(&|c| c.algbw())));
        columns.push((format!("{pass}_busbw_gibps"), floats(&|c| c.busbw())));
    }
    Ok(RecordBatch::try_from_iter(columns)?)
}

/// SimAI's `EndToEnd.csv` (`Layer::report`, SimAI `f5efb5a`): GPU 0's rows, in µs with six
/// decimals, and its summary lines first.
fn end_to_end(t: &Training) -> String {
    let us = |ns: u64| format!("{:.6}", ns as f64 / 1e3);
    let opt = |v: Option<f64>| v.map_or("nan".to_string(), |v| format!("{v:.6}"));
    // SimAI prints busbw 0 for a pass without a collective (its algbw is 0/0, nan).
    let bus = |c: &PassCells| {
        if c.bytes == 0 {
            "0.000000".to_string()
        } else {
            opt(c.busbw())
        }
    };
    let b = &t.breakdown;
    let end = b.end_ns.unwrap_or(0);
    let pct = |v: u64| {
        if end > 0 {
            v as f64 * 100.0 / end as f64
        } else {
            0.0
        }
    };
    let d = b.exposed_by_dim;
    let exposed = b.exposed_ns().unwrap_or(0);
    let mut text = String::from(
        "File name, Expose DP comm, Expose DP_EP comm, Expose TP comm, Expose_EP_comm, Expose_PP_comm, bubble time, total comp, total exposed comm, Total time\n",
    );
    let cell = |v: u64| format!("{:.0} ({:.2}%)", v as f64 / 1e3, pct(v));
    let _ = writeln!(
        text,
        "test1, {}, {}, {}, {}, {}, {}, {}, {}, {:.0}",
        cell(d[2]),
        cell(d[3]),
        cell(d[0]),
        cell(d[1]),
        cell(0),
        cell(0),
        cell(b.compute_ns),
        cell(exposed),
        end as f64 / 1e3
    );
    text.push_str("layer_name,test1,fwd compute,wg compute,ig compute,fwd exposed comm,wg exposed comm,ig exposed comm,fwd total comm,algbw,busbw,wg total comm,algbw,busbw,ig total comm,algbw,busbw,workload finished at\n");
    let mut sums = [0u64; 9];
    for r in t.layers.iter().filter(|r| r.gpu == 0) {
        let [f, i, w] = &r.passes;
        let vals = [
            f.compute_ns,
            w.compute_ns,
            i.compute_ns,
            f.exposed_ns.unwrap_or(0),
            w.exposed_ns.unwrap_or(0),
            i.exposed_ns.unwrap_or(0),
            f.total_ns.unwrap_or(0),
            w.total_ns.unwrap_or(0),
            i.total_ns.unwrap_or(0),
        ];
        for (s, v) in sums.iter_mut().zip(vals) {
            *s += v;
        }
        let _ = writeln!(
            text,
            "{},test1,{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            r.name,
            us(vals[0]),
            us(vals[1]),
            us(vals[2]),
            us(vals[3]),
            us(vals[4]),
            us(vals[5]),
            us(vals[6]),
            opt(f.algbw()),
            bus(f),
            us(vals[7]),
            opt(w.algbw()),
            bus(w),
            us(vals[8]),
            opt(i.algbw()),
            bus(i),
            us(end)
        );
    }
    let _ = writeln!(
        text,
        "SUM,test1,{},{},{},{},{},{},{},NONE,NONE,{},NONE,NONE,{},NONE,NONE",
        us(sums[0]),
        us(sums[1]),
        us(sums[2]),
        us(sums[3]),
        us(sums[4]),
        us(sums[5]),
        us(sums[6]),
        us(sums[7]),
        us(sums[8])
    );
    let _ = writeln!(
        text,
        "total exposed comm,{:.6},total comp,{:.6},total time,{:.6}",
        exposed as f64 / 1e3,
        b.compute_ns as f64 / 1e3,
        end as f64 / 1e3
    );
    text
}

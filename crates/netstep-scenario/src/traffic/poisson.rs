//! `kind = "poisson"`: flows arrive as a Poisson process in `[start, start + duration)` at
//! the rate that offers `load` of the total host-link capacity, with sizes from an empirical
//! CDF and pairs uniform over hosts or drawn from a traffic matrix (`matrix.rs`).

use netstep_core::flow::FlowSpec;
use netstep_core::units::{Bytes, SimTime, parse_duration};
use rand::RngExt;
use serde::{Deserialize, Serialize};

use super::common::{host_capacity_bps, random_pair, require_two_hosts, resolve_cdf_path};
use super::{Block, Counting, TrafficKind, matrix};
use crate::cdf::SizeCdf;
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, traffic_class};
use crate::limits::MAX_FLOWS;
use crate::table_file::{self, TableFile};
use crate::transport::TransportConfig;

/// Poisson flow arrivals at a target load of the host links, sizes from an empirical CDF.
/// Example: `kind = "poisson"`, `load = 0.5`, `cdf = "../datasets/websearch.toml"`,
/// `duration = "10ms"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PoissonConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// Offered load as a fraction of the total host-link capacity: arrival rate = load × Σ host
    /// link rates / (8 × mean size).
    ///
    /// Unit: number in (0, 1] · Default: required · Example: `load = 0.5`
    pub load: f64,
    /// Flow-size CDF file (netstep CDF TOML, see "Flow-size CDF files"), relative to the
    /// scenario file's folder, then to the working directory; its mean size must be above 0.
    ///
    /// Unit: path · Default: required · Example: `cdf = "../datasets/websearch.toml"`
    pub cdf: String,
    /// Arrivals happen in `[start, start + duration)`; above zero.
    ///
    /// Unit: duration · Default: required · Example: `duration = "10ms"`
    pub duration: String,
    /// First possible arrival.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`
    pub start: Option<String>,
    /// Stop after this many flows; at least 1.
    ///
    /// Unit: integer · Default: no cap · Example: `max_flows = 1000`
    pub max_flows: Option<u32>,
    /// A traffic matrix (CSV or Parquet with columns `src`, `dst`, `weight`, resolved like
    /// `cdf`) replacing the uniform pairs: each row's pair gets its weight's share of the
    /// arrivals. Names are hosts (host to host) or switches (rack to rack: the source and
    /// destination hosts are drawn uniformly among the hosts attached to each switch, distinct
    /// when a rack sends to itself); a matrix is one or the other; rows of weight 0 are
    /// skipped.
    ///
    /// Unit: path · Default: uniform over host pairs · Example: `matrix = "traffic-matrix.csv"`
    pub matrix: Option<String>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

impl PoissonConfig {
    /// Refuses a load outside (0, 1].
    fn check_load(&self, path: &FieldPath) -> Result<(), Invalid> {
        if !(self.load > 0.0 && self.load <= 1.0) {
            return Err(Invalid::new(
                path.key("load"),
                format!("must be in (0, 1], got {}", self.load),
            ));
        }
        Ok(())
    }

    /// The traffic matrix, if the block names one (its hash joins the inputs).
    fn matrix(&self, b: &mut Block<'_, '_>) -> Result<Option<matrix::Matrix>, Invalid> {
        let Some(file) = &self.matrix else {
            return Ok(None);
        };
        let path = b.path.key("matrix");
        let resolved = table_file::resolve(file, b.ctx.base_dir);
        let table = TableFile::open(&resolved, file).map_err(|e| Invalid::new(path.clone(), e))?;
        b.out.inputs.push(format!(
            "matrix {file} {:016x}",
            table_file::file_hash(&resolved).map_err(|e| Invalid::new(path.clone(), e))?
        ));
        let topology = b.ctx.topology;
        matrix::Matrix::read(&table, b.names(), topology)
            .map(Some)
            .map_err(|e| Invalid::new(path, e))
    }

    /// The size distribution (its text joins the inputs).
    fn sizes(&self, b: &mut Block<'_, '_>) -> Result<SizeCdf, Invalid> {
        let cdf_path = resolve_cdf_path(&self.cdf, b.ctx.base_dir);
        let sizes = SizeCdf::load(&cdf_path).map_err(|e| Invalid::new(b.path.key("cdf"), e))?;
        b.out
            .inputs
            .push(std::fs::read_to_string(&cdf_path).unwrap_or_default());
        require_two_hosts(b.hosts, &b.path)?;
        if sizes.mean() <= 0.0 {
            return Err(Invalid::new(
                b.path.key("cdf"),
                format!(
                    "{}: the mean flow size is 0 bytes (all mass at size 0), so any load needs infinitely many flows; expected sizes of at least one byte",
                    cdf_path.display()
                ),
            ));
        }
        Ok(sizes)
    }
}

impl TrafficKind for PoissonConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid> {
        self.check_load(path)?;
        let span =
            parse_duration(&self.duration).map_err(|e| Invalid::unit(path.key("duration"), e))?;
        let sizes = SizeCdf::load(&resolve_cdf_path(&self.cdf, on.base_dir))
            .map_err(|e| Invalid::new(path.key("cdf"), e))?;
        let per_ps =
            self.load * on.hosts as f64 * on.host_rate_bps / (sizes.mean().max(1.0) * 8.0) / 1e12;
        let expected = (per_ps * span.0 as f64).ceil() as u64;
        Ok(self
            .max_flows
            .map_or(expected, |cap| expected.min(cap as u64)))
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let template = b.transport(&self.transport)?;
        let matrix = self.matrix(b)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        self.check_load(&path)?;
        let start = duration_at(&self.start, path.key("start"), SimTime::ZERO)?;
        let span =
            parse_duration(&self.duration).map_err(|e| Invalid::unit(path.key("duration"), e))?;
        if span == SimTime::ZERO {
            return Err(Invalid::new(
                path.key("duration"),
                "must be positive: arrivals come in [start, start + duration), so 0s gives no flow",
            ));
        }
        let sizes = self.sizes(b)?;
        let capacity_bps = host_capacity_bps(b.ctx.topology);
        let flows_per_ps = self.load * capacity_bps / (sizes.mean() * 8.0) / 1e12;
        if self.max_flows == Some(0) {
            return Err(Invalid::new(
                path.key("max_flows"),
                "must be at least 1 (a cap of 0 flows generates nothing; leave it out for no cap)",
            ));
        }
        let cap = self.max_flows.unwrap_or(u32::MAX);
        let expected = match self.max_flows {
            Some(cap) => (flows_per_ps * span.0 as f64).ceil().min(cap as f64),
            None => (flows_per_ps * span.0 as f64).ceil(),
        };
        let blame = path.key(if self.max_flows.is_some() {
            "max_flows"
        } else {
            "duration"
        });
        b.check_flows(expected as u64, &blame)?;
        let end = start + span;
        let mut t = start.0 as f64;
        let mut generated = 0u32;
        loop {
            let u: f64 = b.rng.random();
            t += -(1.0 - u).ln() / flows_per_ps;
            if t >= end.0 as f64 || generated >= cap {
                break;
            }
            if b.out.flows.len() as u64 >= MAX_FLOWS {
                // The expectation fit; a large draw above it did not.
                b.check_flows(1, &blame)?;
            }
            let (src, dst) = match &matrix {
                Some(m) => m.draw(&mut b.rng),
                None => random_pair(&mut b.rng, b.hosts),
            };
            let u: f64 = b.rng.random();
            let size = Bytes(sizes.sample(1.0 - u));
            let (spec, bytes) = template.for_flow(Some(size), None, &path)?;
            b.out.flows.push(FlowSpec {
                src,
                dst,
                start: SimTime(t as u64),
                size: bytes,
                transport: spec,
                path: None,
                class,
                after: None,
                ports: None,
            });
            generated += 1;
        }
        Ok(())
    }
}

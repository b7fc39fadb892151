//! `kind = "rack_matrix"`: the m3 / Parsimon evaluation workload (github.com/netiken/
//! parsimon-eval, `workload/src/flowgen.rs`): one cluster-wide renewal process with log-normal
//! (or exponential) gaps, each flow's rack pair drawn in proportion to a traffic matrix and a
//! uniform host in each rack (distinct), its size from a CDF; the mean rate is set so that the
//! most loaded directed link, under a route model (`link_load.rs`), carries `max_load` of its
//! capacity in expectation.

use netstep_core::flow::FlowSpec;
use netstep_core::network::Network;
use netstep_core::units::{Bytes, SimTime, parse_duration};
use rand::RngExt;
use rand_distr::{Distribution, StandardNormal};
use serde::{Deserialize, Serialize};

use super::common::{require_two_hosts, resolve_cdf_path};
use super::link_load::{self, LoadModel};
use super::{Block, Counting, TrafficKind, matrix, spatial};
use crate::cdf::SizeCdf;
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, traffic_class};
use crate::limits::MAX_FLOWS;
use crate::table_file::{self, TableFile};
use crate::transport::TransportConfig;

/// Arrivals from a rack (or host) traffic matrix at a target load on the most loaded link, as
/// the m3 and Parsimon evaluations generate them. Example: `kind = "rack_matrix"`,
/// `matrix = "cluster_a_2_16.json"`, `cdf = "../datasets/fb_webserver.toml"`, `sigma = 2.0`,
/// `max_load = 0.5`, `flows = 100000`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RackMatrixConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The traffic matrix, relative to the scenario file's folder, then to the working
    /// directory: a Parsimon spatial file (`.json`: a rack-by-rack matrix with its pods, see
    /// "Parsimon spatial files"), or a CSV or Parquet file with columns `src`, `dst`, `weight`
    /// naming hosts or switches (racks), as `poisson`'s `matrix`. A flow's rack pair is drawn
    /// in proportion to the weights, its hosts uniformly in each rack, redrawn while equal.
    ///
    /// Unit: path · Default: required · Example: `matrix = "cluster_a_2_16.json"`
    pub matrix: String,
    /// Flow-size CDF file, resolved like `matrix`, in `cdf_format`.
    ///
    /// Unit: path · Default: required · Example: `cdf = "../datasets/fb_webserver.toml"`
    pub cdf: String,
    /// Format of `cdf`: `netstep` (netstep CDF TOML) or `parsimon` (Parsimon's two columns,
    /// size in bytes and cumulative percent, linear). Sizes are rounded to whole bytes; a draw
    /// that rounds to 0 bytes (a CDF starting at size 0) is an arrival without a flow, as the
    /// HPCC simulator runs such flows (they send nothing and have no FCT).
    ///
    /// Unit: name · Default: `"netstep"` · Example: `cdf_format = "parsimon"`
    pub cdf_format: Option<CdfFormat>,
    /// Target load of the most loaded directed link: the arrival rate is set so that the link
    /// with the largest expected share of the flows per bit per second (host links included,
    /// under `load_model`) carries `max_load` of its rate in payload bytes: rate =
    /// `max_load` x link rate / (share x 8 x mean size).
    ///
    /// Unit: number in (0, 1] · Default: required · Example: `max_load = 0.5`
    pub max_load: f64,
    /// The route model the most loaded link is found under: `ecmp` (every switch picks among
    /// its equal-cost next hops independently and uniformly: netstep's routing and the HPCC
    /// simulator's) or `parsimon` (one hash per flow picks at every hop, as Parsimon's route
    /// model does; on a cluster with an even number of spines per plane it counts the
    /// fab-spine links twice, which gives the m3 / Parsimon mixes' arrival rates).
    ///
    /// Unit: name · Default: `"ecmp"` · Example: `load_model = "parsimon"`
    pub load_model: Option<LoadModel>,
    /// Gaps between arrivals: `lognormal` (with `sigma`; mu = ln(mean gap) - sigma² / 2) or
    /// `exponential` (Poisson arrivals).
    ///
    /// Unit: name · Default: `"lognormal"` · Example: `arrivals = "exponential"`
    pub arrivals: Option<Arrivals>,
    /// Standard deviation of the log of the gaps (`arrivals = "lognormal"` only); above 0.
    ///
    /// Unit: number · Default: required for lognormal gaps · Example: `sigma = 2.0`
    pub sigma: Option<f64>,
    /// Arrivals to generate (zero-byte draws included); give `flows`, `duration` or both
    /// (whichever ends first).
    ///
    /// Unit: integer · Default: no cap · Example: `flows = 1000000`
    pub flows: Option<u64>,
    /// Arrivals happen in `[start, start + duration)`.
    ///
    /// Unit: duration · Default: no end · Example: `duration = "1s"`
    pub duration: Option<String>,
    /// The first arrival, exactly (then one gap after another).
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1s"`
    pub start: Option<String>,
    /// Transport of the block's flows: a table with the fields of `[transport]`.
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

/// Format of a flow-size CDF file.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CdfFormat {
    /// netstep CDF TOML.
    #[default]
    Netstep,
    /// Parsimon's `size_bytes cumulative_percent` lines.
    Parsimon,
}

/// The law of the gaps between arrivals.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Arrivals {
    /// Log-normal gaps.
    #[default]
    Lognormal,
    /// Exponential gaps.
    Exponential,
}

impl RackMatrixConfig {
    /// Checks the fields that need no file: load, gaps, the end of the arrivals.
    fn check(&self, path: &FieldPath) -> Result<(Option<f64>, Option<SimTime>), Invalid> {
        if !(self.max_load > 0.0 && self.max_load <= 1.0) {
            return Err(Invalid::new(
                path.key("max_load"),
                format!("must be in (0, 1], got {}", self.max_load),
            ));
        }
        let sigma = match (self.arrivals.unwrap_or_default(), self.sigma) {
            (Arrivals::Lognormal, None) => {
                return Err(Invalid::new(
                    path.key("sigma"),
                    "log-normal arrivals need sigma (the standard deviation of the log of the gaps, e.g. sigma = 2.0), or arrivals = \"exponential\"",
                ));
            }
            (Arrivals::Lognormal, Some(s)) if !(s.is_finite() && s > 0.0) => {
                return Err(Invalid::new(path.key("sigma"), format!("must be above 0, got {s}")));
            }
            (Arrivals::Exponential, Some(_)) => {
                return Err(Invalid::new(
                    path.key("sigma"),
                    "only log-normal arrivals have a sigma; leave it out for arrivals = \"exponential\"",
                ));
            }
            (_, s) => s,
        };
        if self.flows == Some(0) {
            return Err(Invalid::new(path.key("flows"), "must be at least 1"));
        }
        let duration = match &self.duration {
            Some(d) => Some(
                parse_duration(d)
                    .map_err(|e| Invalid::unit(path.key("duration"), e))
                    .and_then(|d| match d {
                        SimTime::ZERO => Err(Invalid::new(path.key("duration"), "must be positive")),
                        d => Ok(d),
                    })?,
            ),
            None if self.flows.is_none() => {
                return Err(Invalid::new(
                    path.clone(),
                    "give flows (how many arrivals), duration (how long they come), or both",
                ));
            }
            None => None,
        };
        Ok((sigma, duration))
    }

    /// The size distribution.
    fn sizes(&self, base_dir: Option<&std::path::Path>, path: &FieldPath) -> Result<(SizeCdf, std::path::PathBuf), Invalid> {
        let file = resolve_cdf_path(&self.cdf, base_dir);
        let cdf = match self.cdf_format.unwrap_or_default() {
            CdfFormat::Netstep => SizeCdf::load(&file),
            CdfFormat::Parsimon => SizeCdf::load_parsimon(&file),
        }
        .map_err(|e| Invalid::new(path.key("cdf"), e))?;
        if cdf.mean() <= 0.0 {
            return Err(Invalid::new(path.key("cdf"), "the mean flow size is 0 bytes"));
        }
        Ok((cdf, file))
    }

    /// The matrix (its hash joins the inputs).
    fn matrix(&self, b: &mut Block<'_, '_>) -> Result<matrix::Matrix, Invalid> {
        let path = b.path.key("matrix");
        let resolved = table_file::resolve(&self.matrix, b.ctx.base_dir);
        b.out.inputs.push(format!(
            "matrix {} {:016x}",
            self.matrix,
            table_file::file_hash(&resolved).map_err(|e| Invalid::new(path.clone(), e))?
        ));
        let topology = b.ctx.topology;
        if resolved.extension().is_some_and(|e| e.eq_ignore_ascii_case("json")) {
            return spatial::read(&resolved, &self.matrix, topology).map_err(|e| Invalid::new(path, e));
        }
        let table = TableFile::open(&resolved, &self.matrix).map_err(|e| Invalid::new(path.clone(), e))?;
        matrix::Matrix::read(&table, b.names(), topology).map_err(|e| Invalid::new(path, e))
    }
}

impl TrafficKind for RackMatrixConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    /// `flows`, or (duration only) the most the duration can hold: the busiest link carries
    /// at least one host's share, so the rate is at most `max_load` x every host link.
    fn count(&self, on: &Counting<'_>, path: &FieldPath) -> Result<u64, Invalid> {
        let (_, duration) = self.check(path)?;
        if let Some(flows) = self.flows {
            return Ok(flows);
        }
        let (sizes, _) = self.sizes(on.base_dir, path)?;
        let span = duration.unwrap_or(SimTime::ZERO);
        let per_ps = self.max_load * on.hosts as f64 * on.host_rate_bps / (sizes.mean() * 8.0) / 1e12;
        Ok((per_ps * span.0 as f64).ceil() as u64)
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = b.path.clone();
        let (sigma, duration) = self.check(&path)?;
        let template = b.transport(&self.transport)?;
        let class = traffic_class(self.class, &path.key("class"))?;
        let start = duration_at(&self.start, path.key("start"), SimTime::ZERO)?;
        require_two_hosts(b.hosts, &path)?;
        let (sizes, cdf_file) = self.sizes(b.ctx.base_dir, &path)?;
        b.out.inputs.push(std::fs::read_to_string(&cdf_file).unwrap_or_default());
        let matrix = self.matrix(b)?;
        // The most loaded link under the route model sets the rate.
        let net = Network::compile(b.ctx.topology)
            .map_err(|e| Invalid::new(path.key("matrix"), e.to_string()))?;
        let model = self.load_model.unwrap_or_default();
        let shares = link_load::port_shares(&net, &matrix, model)
            .map_err(|e| Invalid::new(path.key("load_model"), e))?;
        let busiest = link_load::busiest(&net, &shares)
            .ok_or_else(|| Invalid::new(path.key("matrix"), "no flow crosses any link"))?;
        drop(net);
        let bits_per_s = self.max_load * busiest.rate_bps / busiest.share;
        let mean_gap_ps = sizes.mean() * 8.0 / bits_per_s * 1e12;
        b.out.inputs.push(format!(
            "rack_matrix rate {bits_per_s} b/s on port {} share {}",
            busiest.port, busiest.share
        ));
        let end = duration.map(|d| start + d);
        let expected = match (self.flows, end) {
            (Some(n), _) => n,
            (None, end) => ((end.unwrap_or(start) - start).0 as f64 / mean_gap_ps).ceil() as u64,
        };
        let blame = path.key(if self.flows.is_some() { "flows" } else { "duration" });
        b.check_flows(expected, &blame)?;
        let mu = sigma.map(|s| mean_gap_ps.ln() - s * s / 2.0);
        let mut t = start.0 as f64;
        let mut arrivals = 0u64;
        loop {
            if self.flows.is_some_and(|n| arrivals >= n) || end.is_some_and(|e| t >= e.0 as f64) {
                break;
            }
            if b.out.flows.len() as u64 >= MAX_FLOWS {
                b.check_flows(1, &blame)?;
            }
            // Parsimon's order of draws: the pair, the size, the gap.
            let (src, dst) = matrix.draw(&mut b.rng);
            let u: f64 = b.rng.random();
            let size = sizes.sample_rounded(1.0 - u);
            let gap = match (mu, sigma) {
                (Some(mu), Some(s)) => {
                    let z: f64 = StandardNormal.sample(&mut b.rng);
                    (mu + s * z).exp()
                }
                _ => -(1.0 - b.rng.random::<f64>()).ln() * mean_gap_ps,
            };
            if size > 0 {
                let (spec, bytes) = template.for_flow(Some(Bytes(size)), None, &path)?;
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
            }
            arrivals += 1;
            t += gap;
        }
        Ok(())
    }
}

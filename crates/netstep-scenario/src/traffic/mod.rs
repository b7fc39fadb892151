//! Turns `[transport]` and `[[traffic]]` blocks into the flow list: explicit flows, seeded
//! random host pairs, permutations (`permutation.rs`: every host to one other, random or
//! across the bisection), all-to-all exchanges, incasts (`incast.rs`: rounds of distinct
//! senders to one receiver), and Poisson arrivals at a target host-link load with sizes from an
//! empirical CDF. Every random draw comes from a stream keyed by (seed, traffic block).

pub mod collective;
pub mod flow_file;
mod incast;
pub mod matrix;
pub mod on_off;
mod permutation;
pub mod request_response;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use netstep_core::flow::{Dependencies, DependencyError, ExplicitPath, FlowSpec};
use netstep_core::rng::{STREAM_THINK, STREAM_TRAFFIC, stream};
use netstep_core::topology::{NodeKind, TopologySpec};
use netstep_core::transport::tcp::TcpSpec;
use netstep_core::transport::{CcSpec, OpenLoopSpec, SizeDistribution, TransportSpec};
use netstep_core::world::{CollectiveJob, CollectiveStep};

use crate::config::{CcConfig, SizeDistributionConfig};
use netstep_core::units::{Bytes, SimTime, parse_duration, parse_rate, parse_size};
use rand::{Rng, RngExt};
use rand_pcg::Pcg64Mcg;

use crate::cdf::SizeCdf;
use crate::config::{ExplicitFlow, TrafficConfig, TransportConfig};
use crate::error::{FieldPath, Invalid};
use crate::limits::{Footprint, Limits, MAX_FLOWS, MAX_PACKETS_PER_FLOW};

/// A transport with its parameters resolved, before a flow's size is known.
#[derive(Clone, Debug, PartialEq)]
pub enum TransportTemplate {
    /// Open loop: packet size, gap, exponential gaps.
    OpenLoop {
        /// Wire size of every packet.
        packet_size: Bytes,
        /// (Mean) gap.
        interval: SimTime,
        /// Exponential gaps.
        exponential: bool,
        /// Packet size distribution.
        size_distribution: SizeDistribution,
        /// ECN-capable packets.
        ecn: bool,
    },
    /// TCP, and the same as the transport every flow of it shares.
    Tcp(TcpSpec, Arc<TransportSpec>),
    /// RDMA, and the same as the transport every flow of it shares.
    Rdma(netstep_core::transport::rdma::RdmaSpec, Arc<TransportSpec>),
}

fn rate_at(value: &Option<String>, path: FieldPath, default: f64) -> Result<f64, Invalid> {
    match value {
        None => Ok(default),
        Some(v) => {
            let rate = parse_rate(v).map_err(|e| Invalid::unit(path.clone(), e))?;
            if rate.0 == 0 {
                return Err(Invalid::new(
                    path,
                    format!("{v:?} is zero; expected a positive rate"),
                ));
            }
            Ok(rate.0 as f64)
        }
    }
}

fn duration_at(
    value: &Option<String>,
    path: FieldPath,
    default: SimTime,
) -> Result<SimTime, Invalid> {
    match value {
        Some(v) => parse_duration(v).map_err(|e| Invalid::unit(path, e)),
        None => Ok(default),
    }
}

fn size_at(value: &Option<String>, path: FieldPath, default: Bytes) -> Result<Bytes, Invalid> {
    match value {
        Some(v) => parse_size(v).map_err(|e| Invalid::unit(path, e)),
        None => Ok(default),
    }
}

/// Resolves a transport table found at `path`.
pub fn resolve_transport(
    config: &TransportConfig,
    path: FieldPath,
) -> Result<TransportTemplate, Invalid> {
    match config {
        TransportConfig::OpenLoop {
            packet_size,
            interval,
            rate,
            exponential,
            size_distribution,
            ecn,
        } => {
            let packet_size = size_at(
                packet_size,
                path.key("packet_size"),
                OpenLoopSpec::DEFAULT_PACKET_SIZE,
            )?;
            let size_distribution = match size_distribution {
                None | Some(SizeDistributionConfig::Constant) => SizeDistribution::Constant,
                Some(SizeDistributionConfig::Exponential) => SizeDistribution::Exponential,
            };
            if packet_size.0 > u32::MAX as u64 {
                return Err(Invalid::new(
                    path.key("packet_size"),
                    format!("{packet_size} is larger than 4 GB"),
                ));
            }
            if packet_size.0 == 0 {
                return Err(Invalid::new(
                    path.key("packet_size"),
                    "must be positive (a packet of no bytes carries nothing)",
                ));
            }
            let interval = match (interval, rate) {
                (Some(_), Some(_)) => {
                    return Err(Invalid::new(
                        path.clone(),
                        "give either interval or rate, not both",
                    ));
                }
                (None, None) => {
                    return Err(Invalid::new(
                        path.clone(),
                        "open_loop needs an interval (e.g. \"1s\") or a rate (e.g. \"1Gbps\")",
                    ));
                }
                (Some(i), None) => {
                    parse_duration(i).map_err(|e| Invalid::unit(path.key("interval"), e))?
                }
                (None, Some(r)) => {
                    let rate = parse_rate(r).map_err(|e| Invalid::unit(path.key("rate"), e))?;
                    if rate.0 == 0 {
                        return Err(Invalid::new(
                            path.key("rate"),
                            format!("rate {r:?} is zero; expected a positive rate"),
                        ));
                    }
                    rate.serialization(packet_size)
                }
            };
            if interval == SimTime::ZERO {
                return Err(Invalid::new(path.key("interval"), "must be positive"));
            }
            Ok(TransportTemplate::OpenLoop {
                packet_size,
                interval,
                exponential: exponential.unwrap_or(false),
                size_distribution,
                ecn: ecn.unwrap_or(false),
            })
        }
        TransportConfig::Tcp {
            cc,
            sack,
            delayed_ack,
            abc_limit,
            pacing,
            mss,
            header,
            initial_cwnd,
            rto_min,
            rto_initial,
            rto_max,
            max_retries,
            dctcp_g,
        } => {
            let cc = cc.unwrap_or(CcConfig::Newreno);
            if dctcp_g.is_some() && cc != CcConfig::Dctcp {
                return Err(Invalid::new(
                    path.key("dctcp_g"),
                    "applies to cc = \"dctcp\" only",
                ));
            }
            let cc = match cc {
                CcConfig::Newreno => CcSpec::NewReno,
                CcConfig::Cubic => CcSpec::Cubic,
                CcConfig::Generic => CcSpec::Generic,
                CcConfig::Jk => CcSpec::Jk,
                CcConfig::Dec => CcSpec::Dec,
                CcConfig::Bbr => CcSpec::Bbr,
                CcConfig::Dctcp => {
                    let g = dctcp_g.unwrap_or(CcSpec::DCTCP_DEFAULT_G);
                    if !(g > 0.0 && g <= 1.0) {
                        return Err(Invalid::new(
                            path.key("dctcp_g"),
                            format!("must be in (0, 1], got {g}"),
                        ));
                    }
                    CcSpec::Dctcp {
                        g_ppm: ((g * 1e6).round() as u32).max(1),
                    }
                }
            };
            // Every unset field takes its default from the one place they are written.
            let d = TcpSpec::new(cc);
            let mss = size_at(mss, path.key("mss"), Bytes(d.mss_bytes as u64))?;
            if mss.0 == 0 || mss.0 > 65_535 {
                return Err(Invalid::new(
                    path.key("mss"),
                    format!("must be between 1B and 65535B, got {mss}"),
                ));
            }
            let header = size_at(header, path.key("header"), Bytes(d.header_bytes as u64))?;
            if header.0 == 0 || header.0 > 65_535 {
                return Err(Invalid::new(
                    path.key("header"),
                    format!("must be between 1B and 65535B, got {header}"),
                ));
            }
            let delayed_ack = duration_at(
                delayed_ack,
                path.key("delayed_ack"),
                d.delayed_ack.unwrap_or(SimTime::ZERO),
            )?;
            let spec = TcpSpec {
                sack: sack.unwrap_or(d.sack),
                delayed_ack: (delayed_ack > SimTime::ZERO).then_some(delayed_ack),
                abc_limit: abc_limit.unwrap_or(d.abc_limit),
                pacing: pacing.unwrap_or(d.pacing),
                mss_bytes: mss.0 as u32,
                header_bytes: header.0 as u32,
                initial_cwnd: initial_cwnd.unwrap_or(d.initial_cwnd),
                rto_min: duration_at(rto_min, path.key("rto_min"), d.rto_min)?,
                rto_initial: duration_at(rto_initial, path.key("rto_initial"), d.rto_initial)?,
                rto_max: duration_at(rto_max, path.key("rto_max"), d.rto_max)?,
                max_retries: max_retries.unwrap_or(d.max_retries),
                ..d
            };
            if cc.go_back_n_only() && *sack == Some(true) {
                return Err(Invalid::new(
                    path.key("sack"),
                    format!(
                        "cc = \"{}\" (a REAL source) recovers by go-back-N after a timeout; SACK does not apply",
                        cc.name()
                    ),
                ));
            }
            if spec.initial_cwnd == 0 {
                return Err(Invalid::new(path.key("initial_cwnd"), "must be at least 1"));
            }
            if spec.rto_max == SimTime::ZERO {
                return Err(Invalid::new(path.key("rto_max"), "must be positive"));
            }
            if spec.rto_min == SimTime::ZERO || spec.rto_min > spec.rto_max {
                return Err(Invalid::new(
                    path.key("rto_min"),
                    format!(
                        "must be positive and at most rto_max ({}), got {}",
                        spec.rto_max, spec.rto_min
                    ),
                ));
            }
            // The first RTO is used before any RTT sample: it lies between the bounds the
            // estimator keeps every later one in (a zero RTO would fire at once, forever).
            if spec.rto_initial < spec.rto_min || spec.rto_initial > spec.rto_max {
                return Err(Invalid::new(
                    path.key("rto_initial"),
                    format!(
                        "must lie between rto_min ({}) and rto_max ({}), got {}",
                        spec.rto_min, spec.rto_max, spec.rto_initial
                    ),
                ));
            }
            let shared = Arc::new(TransportSpec::Tcp(spec.clone()));
            Ok(TransportTemplate::Tcp(spec, shared))
        }
        TransportConfig::Rdma {
            cc,
            mtu,
            header,
            ack_size,
            rto,
            max_retries,
            nack_interval,
            ack_every,
            g,
            alpha_interval,
            decrease_interval,
            increase_interval,
            fast_recovery_stages,
            rate_ai,
            rate_hai,
            min_rate,
            timely_alpha,
            timely_beta,
            t_low,
            t_high,
            min_rtt,
            recovery,
            eta,
            max_stage,
            base_rtt,
            fast_react,
            max_rate,
            window,
            variable_window,
        } => {
            use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
            use netstep_core::transport::rdma::{RdmaCc, RdmaSpec};
            let d = DcqcnSpec::default();
            let positive = |value: &Option<String>, field: &str, default: SimTime| {
                let t = duration_at(value, path.key(field), default)?;
                if t == SimTime::ZERO {
                    return Err(Invalid::new(path.key(field), "must be positive"));
                }
                Ok(t)
            };
            let g_given = g.is_some();
            let g = g.unwrap_or(d.g);
            if !(g > 0.0 && g <= 1.0) {
                return Err(Invalid::new(
                    path.key("g"),
                    format!("must be in (0, 1], got {g}"),
                ));
            }
            let dcqcn = DcqcnSpec {
                g,
                alpha_interval: positive(alpha_interval, "alpha_interval", d.alpha_interval)?,
                decrease_interval: positive(
                    decrease_interval,
                    "decrease_interval",
                    d.decrease_interval,
                )?,
                increase_interval: positive(
                    increase_interval,
                    "increase_interval",
                    d.increase_interval,
                )?,
                fast_recovery_stages: fast_recovery_stages.unwrap_or(d.fast_recovery_stages),
                rate_ai_bps: rate_at(rate_ai, path.key("rate_ai"), d.rate_ai_bps)?,
                rate_hai_bps: rate_at(rate_hai, path.key("rate_hai"), d.rate_hai_bps)?,
                min_rate_bps: rate_at(min_rate, path.key("min_rate"), d.min_rate_bps)?,
                rate_on_first_cnp: d.rate_on_first_cnp,
            };
            let cc_choice = cc.unwrap_or(crate::config::RdmaCcConfig::Dcqcn);
            let is_timely = cc_choice == crate::config::RdmaCcConfig::Timely;
            let is_dcqcn = cc_choice == crate::config::RdmaCcConfig::Dcqcn;
            let is_hpcc = cc_choice == crate::config::RdmaCcConfig::Hpcc;
            let is_dctcp = cc_choice == crate::config::RdmaCcConfig::Dctcp;
            let only = |given: bool, field: &str, which: &str| {
                if given {
                    Err(Invalid::new(
                        path.key(field),
                        format!("applies to cc = \"{which}\" only"),
                    ))
                } else {
                    Ok(())
                }
            };
            for (given, field) in [
                (timely_alpha.is_some(), "timely_alpha"),
                (timely_beta.is_some(), "timely_beta"),
                (t_low.is_some(), "t_low"),
                (t_high.is_some(), "t_high"),
                (min_rtt.is_some(), "min_rtt"),
            ] {
                if !is_timely {
                    only(given, field, "timely")?;
                }
            }
            if !is_dcqcn && !is_dctcp {
                only(g_given, "g", "dcqcn\" or cc = \"dctcp")?;
            }
            if is_dctcp && rate_hai.is_some() {
                only(true, "rate_hai", "dcqcn\" or cc = \"timely")?;
            }
            for (given, field) in [
                (alpha_interval.is_some(), "alpha_interval"),
                (decrease_interval.is_some(), "decrease_interval"),
                (increase_interval.is_some(), "increase_interval"),
                (fast_recovery_stages.is_some(), "fast_recovery_stages"),
            ] {
                if !is_dcqcn {
                    only(given, field, "dcqcn")?;
                }
            }
            for (given, field) in [
                (eta.is_some(), "eta"),
                (max_stage.is_some(), "max_stage"),
                (base_rtt.is_some(), "base_rtt"),
                (fast_react.is_some(), "fast_react"),
            ] {
                if !is_hpcc {
                    only(given, field, "hpcc")?;
                }
            }
            if is_hpcc && rate_hai.is_some() {
                only(true, "rate_hai", "dcqcn\" or cc = \"timely")?;
            }
            let cc = match cc_choice {
                crate::config::RdmaCcConfig::Dcqcn => RdmaCc::Dcqcn(dcqcn),
                crate::config::RdmaCcConfig::Timely => {
                    use netstep_core::transport::rdma::timely::TimelySpec;
                    let t = TimelySpec::default();
                    let unit = |v: Option<f64>, field: &str, default: f64| {
                        let v = v.unwrap_or(default);
                        if v > 0.0 && v <= 1.0 {
                            Ok(v)
                        } else {
                            Err(Invalid::new(
                                path.key(field),
                                format!("must be in (0, 1], got {v}"),
                            ))
                        }
                    };
                    let spec = TimelySpec {
                        alpha: unit(*timely_alpha, "timely_alpha", t.alpha)?,
                        beta: unit(*timely_beta, "timely_beta", t.beta)?,
                        t_low: duration_at(t_low, path.key("t_low"), t.t_low)?,
                        t_high: positive(t_high, "t_high", t.t_high)?,
                        min_rtt: positive(min_rtt, "min_rtt", t.min_rtt)?,
                        rate_ai_bps: dcqcn.rate_ai_bps,
                        rate_hai_bps: dcqcn.rate_hai_bps,
                        min_rate_bps: dcqcn.min_rate_bps,
                    };
                    if spec.t_low >= spec.t_high {
                        return Err(Invalid::new(path.key("t_low"), "must be below t_high"));
                    }
                    RdmaCc::Timely(spec)
                }
                crate::config::RdmaCcConfig::Dctcp => {
                    use netstep_core::transport::rdma::dctcp::DctcpSpec;
                    let d = DctcpSpec::default();
                    RdmaCc::Dctcp(DctcpSpec {
                        g,
                        rate_ai_bps: rate_at(rate_ai, path.key("rate_ai"), d.rate_ai_bps)?,
                        min_rate_bps: dcqcn.min_rate_bps,
                    })
                }
                crate::config::RdmaCcConfig::Hpcc => {
                    use netstep_core::transport::rdma::hpcc::HpccSpec;
                    let h = HpccSpec::default();
                    let eta = eta.unwrap_or(h.eta);
                    if !(eta > 0.0 && eta <= 1.0) {
                        return Err(Invalid::new(
                            path.key("eta"),
                            format!("must be in (0, 1], got {eta}"),
                        ));
                    }
                    RdmaCc::Hpcc(HpccSpec {
                        eta,
                        max_stage: max_stage.unwrap_or(h.max_stage),
                        rate_ai_bps: match rate_ai {
                            Some(_) => Some(rate_at(rate_ai, path.key("rate_ai"), 0.0)?),
                            None => None,
                        },
                        base_rtt: match base_rtt {
                            Some(_) => Some(positive(base_rtt, "base_rtt", SimTime::ZERO)?),
                            None => None,
                        },
                        min_rate_bps: dcqcn.min_rate_bps,
                        fast_react: fast_react.unwrap_or(h.fast_react),
                    })
                }
            };
            let r = RdmaSpec::new(cc);
            let mtu = size_at(mtu, path.key("mtu"), Bytes(r.mtu_bytes as u64))?;
            if mtu.0 == 0 || mtu.0 > 65_535 {
                return Err(Invalid::new(
                    path.key("mtu"),
                    format!("must be between 1 B and 65535 B, got {mtu}"),
                ));
            }
            let header = size_at(header, path.key("header"), Bytes(r.header_bytes as u64))?;
            if header.0 == 0 || header.0 > 65_535 {
                return Err(Invalid::new(
                    path.key("header"),
                    format!("must be between 1 B and 65535 B, got {header}"),
                ));
            }
            let ack = size_at(ack_size, path.key("ack_size"), header)?;
            if ack.0 == 0 || ack.0 > 65_535 {
                return Err(Invalid::new(
                    path.key("ack_size"),
                    format!("must be between 1 B and 65535 B, got {ack}"),
                ));
            }
            let spec = RdmaSpec {
                mtu_bytes: mtu.0 as u32,
                header_bytes: header.0 as u32,
                ack_bytes: ack.0 as u32,
                rto: positive(rto, "rto", r.rto)?,
                max_retries: max_retries.unwrap_or(r.max_retries),
                nack_interval: positive(nack_interval, "nack_interval", r.nack_interval)?,
                ack_every: match ack_every.unwrap_or(r.ack_every) {
                    0 => {
                        return Err(Invalid::new(path.key("ack_every"), "must be at least 1"));
                    }
                    n => n,
                },
                recovery: match recovery.as_deref() {
                    None => r.recovery,
                    Some("go_back_n") => netstep_core::transport::rdma::Recovery::GoBackN,
                    Some("selective_repeat") => {
                        netstep_core::transport::rdma::Recovery::SelectiveRepeat
                    }
                    Some(other) => {
                        return Err(Invalid::new(
                            path.key("recovery"),
                            format!(
                                "unknown recovery {other:?}; expected \"go_back_n\" or \"selective_repeat\""
                            ),
                        ));
                    }
                },
                max_rate_bps: match max_rate {
                    Some(_) => Some(rate_at(max_rate, path.key("max_rate"), 0.0)?),
                    None => None,
                },
                window: match (window, variable_window) {
                    (None, Some(_)) => {
                        return Err(Invalid::new(
                            path.key("variable_window"),
                            "scales `window`; give `window` too",
                        ));
                    }
                    (None, None) => None,
                    (Some(_), variable) => {
                        let bytes = size_at(window, path.key("window"), Bytes(0))?;
                        if bytes.0 == 0 {
                            return Err(Invalid::new(path.key("window"), "must be positive"));
                        }
                        Some(netstep_core::transport::rdma::RdmaWindow {
                            bytes: bytes.0,
                            variable: variable.unwrap_or(false),
                        })
                    }
                },
                ..r
            };
            let shared = Arc::new(TransportSpec::Rdma(spec.clone()));
            Ok(TransportTemplate::Rdma(spec, shared))
        }
    }
}

impl TransportTemplate {
    /// The flow's transport and payload size from `size` or `packets` (exactly one; below,
    /// `Ok` carries a size and `Err` a packet count).
    pub(crate) fn for_flow(
        &self,
        size: Option<Bytes>,
        packets: Option<u32>,
        path: &FieldPath,
    ) -> Result<(Arc<TransportSpec>, Bytes), Invalid> {
        let amount = match (size, packets) {
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    path.clone(),
                    "give either size or packets, not both",
                ));
            }
            (None, None) => {
                return Err(Invalid::new(
                    path.clone(),
                    "give the flow a size (e.g. \"1MB\") or a packet count",
                ));
            }
            (Some(size), None) => Ok(size),
            (None, Some(n)) => Err(n),
        };
        match self {
            TransportTemplate::OpenLoop {
                packet_size,
                interval,
                exponential,
                size_distribution,
                ecn,
            } => {
                let n_packets = match amount {
                    Ok(s) => u32::try_from(s.0.div_ceil(packet_size.0.max(1))).map_err(|_| {
                        Invalid::new(
                            path.key("size"),
                            format!(
                                "{s} is more than {MAX_PACKETS_PER_FLOW} packets of {packet_size}"
                            ),
                        )
                    })?,
                    Err(n) => n,
                };
                if n_packets == 0 {
                    return Err(Invalid::new(
                        path.clone(),
                        "a flow needs at least one packet",
                    ));
                }
                if n_packets as u64 > MAX_PACKETS_PER_FLOW {
                    let field = if packets.is_some() { "packets" } else { "size" };
                    return Err(Invalid::new(
                        path.key(field),
                        format!(
                            "{n_packets} packets in one flow; the limit is {MAX_PACKETS_PER_FLOW} (packet numbers are 31-bit)"
                        ),
                    ));
                }
                let spec = OpenLoopSpec {
                    packet_size: *packet_size,
                    n_packets,
                    interval: *interval,
                    exponential: *exponential,
                    size_distribution: *size_distribution,
                    ecn: *ecn,
                };
                Ok((
                    Arc::new(TransportSpec::OpenLoop(spec)),
                    Bytes(packet_size.0 * n_packets as u64),
                ))
            }
            TransportTemplate::Tcp(spec, shared) => {
                let size = amount.unwrap_or_else(|n| Bytes(n as u64 * spec.mss_bytes as u64));
                if size.0 == 0 {
                    return Err(Invalid::new(path.clone(), "a flow needs at least one byte"));
                }
                if size.0.div_ceil(spec.mss_bytes as u64) >= (1 << 31) {
                    return Err(Invalid::new(
                        path.key("size"),
                        format!("{size} needs more than 2^31 segments"),
                    ));
                }
                Ok((shared.clone(), size))
            }
            TransportTemplate::Rdma(spec, shared) => {
                let size = amount.unwrap_or_else(|n| Bytes(n as u64 * spec.mtu_bytes as u64));
                if size.0 == 0 {
                    return Err(Invalid::new(path.clone(), "a flow needs at least one byte"));
                }
                if size.0.div_ceil(spec.mtu_bytes as u64) >= (1 << 31) {
                    return Err(Invalid::new(
                        path.key("size"),
                        format!("{size} needs more than 2^31 packets"),
                    ));
                }
                Ok((shared.clone(), size))
            }
        }
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
                ..Default::default()
            },
            path,
        )
    }
}

/// Data packets a flow's source sends (retransmissions aside).
pub fn data_packets(transport: &TransportSpec, size: Bytes) -> u64 {
    match transport {
        TransportSpec::OpenLoop(spec) => spec.n_packets as u64,
        TransportSpec::Tcp(spec) => size.0.div_ceil(spec.mss_bytes.max(1) as u64),
        TransportSpec::Rdma(spec) => spec.n_packets(size) as u64,
    }
}

/// Generates every flow of every traffic block, in block order.
pub fn generate(blocks: &[TrafficConfig], ctx: &TrafficContext<'_>) -> Result<Generated, Invalid> {
    let mut flows = Vec::new();
    let mut inputs = Vec::new();
    let hosts = ctx.topology.hosts();
    let mut names: Option<HashMap<&str, u32>> = None;
    let mut adjacency: Option<Adjacency> = None;
    let mut waits = Waits::default();
    let mut jobs: Vec<CollectiveJob> = Vec::new();
    let mut tags: Vec<(u32, CollectiveStep)> = Vec::new();
    for (b, block) in blocks.iter().enumerate() {
        let path = FieldPath::of(&["traffic"]).index(b);
        let transport_of = |t: &Option<TransportConfig>| match t {
            Some(t) => resolve_transport(t, path.key("transport")),
            None => Ok(ctx.default_transport.clone()),
        };
        let mut rng = stream(ctx.seed, STREAM_TRAFFIC, b as u64);
        match block {
            TrafficConfig::Flows {
                class,
                flows: list,
                transport,
            } => {
                let block_class = traffic_class(*class, &path.key("class"))?;
                let template = transport_of(transport)?;
                ctx.check_flows(flows.len(), list.len() as u64, &path.key("flows"))?;
                let names = names.get_or_insert_with(|| node_names(ctx.topology));
                for (i, f) in list.iter().enumerate() {
                    let flow_path = path.key("flows").index(i);
                    let class = match f.class {
                        Some(c) => traffic_class(Some(c), &flow_path.key("class"))?,
                        None => block_class,
                    };
                    waits.note(flows.len() as u32, f, &flow_path)?;
                    flows.push(explicit_flow(
                        class,
                        f,
                        &template,
                        names,
                        ctx.topology,
                        &mut adjacency,
                        &flow_path,
                    )?);
                }
            }
            TrafficConfig::RandomPairs {
                class,
                count,
                size,
                packets,
                start,
                transport,
            } => {
                let same = SameFlows::resolve(
                    &transport_of(transport)?,
                    *class,
                    size,
                    *packets,
                    start,
                    &path,
                )?;
                require_two_hosts(&hosts, &path)?;
                if *count == 0 {
                    return Err(Invalid::new(
                        path.key("count"),
                        "must be at least 1 (a block of no flows)",
                    ));
                }
                ctx.check_flows(flows.len(), *count as u64, &path.key("count"))?;
                for _ in 0..*count {
                    let (src, dst) = random_pair(&mut rng, &hosts);
                    flows.push(same.flow(src, dst, same.start));
                }
            }
            TrafficConfig::Permutation {
                class,
                size,
                packets,
                start,
                across_bisection,
                transport,
            } => {
                let same = SameFlows::resolve(
                    &transport_of(transport)?,
                    *class,
                    size,
                    *packets,
                    start,
                    &path,
                )?;
                ctx.check_flows(flows.len(), hosts.len() as u64, &path)?;
                let across = across_bisection.unwrap_or(false);
                let dst = permutation::destinations(hosts.len(), across, &mut rng, &path)?;
                for (i, d) in dst.into_iter().enumerate() {
                    flows.push(same.flow(hosts[i], hosts[d], same.start));
                }
            }
            TrafficConfig::AllToAll {
                class,
                size,
                packets,
                start,
                transport,
            } => {
                let same = SameFlows::resolve(
                    &transport_of(transport)?,
                    *class,
                    size,
                    *packets,
                    start,
                    &path,
                )?;
                require_two_hosts(&hosts, &path)?;
                let n = hosts.len() as u64;
                ctx.check_flows(flows.len(), n.saturating_mul(n - 1), &path)?;
                // Source by source, destinations in host order (each host's own flows in one
                // run of ids).
                for &src in &hosts {
                    for &dst in hosts.iter().filter(|&&d| d != src) {
                        flows.push(same.flow(src, dst, same.start));
                    }
                }
            }
            TrafficConfig::Collective {
                class,
                collective,
                ranks,
                shuffle,
                size,
                chunks,
                iterations,
                compute,
                start,
                job,
                transport,
            } => {
                let template = transport_of(transport)?;
                let class = traffic_class(*class, &path.key("class"))?;
                let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
                let compute = duration_at(compute, path.key("compute"), SimTime::ZERO)?;
                let size = parse_size(size).map_err(|e| Invalid::unit(path.key("size"), e))?;
                let (chunks, iterations) = (chunks.unwrap_or(1), iterations.unwrap_or(1));
                let mut members = match ranks {
                    None => hosts.clone(),
                    Some(list) => {
                        let names = names.get_or_insert_with(|| node_names(ctx.topology));
                        host_list(list, names, ctx.topology, &path.key("ranks"))?
                    }
                };
                if shuffle.unwrap_or(false) {
                    use rand::seq::SliceRandom;
                    members.shuffle(&mut rng);
                }
                let sends = collective::send_count(*collective, members.len() as u32);
                ctx.check_flows(
                    flows.len(),
                    collective::flow_count(sends, chunks, iterations),
                    &path,
                )?;
                let steps = collective::steps(*collective, members.len() as u32, size.0)
                    .map_err(|e| Invalid::new(path.key("ranks"), e))?;
                collective::check_counts(&steps, chunks, iterations, &path)?;
                let plan = collective::Plan {
                    algorithm: *collective,
                    ranks: &members,
                    size: size.0,
                    chunks,
                    iterations,
                    compute,
                    start,
                    class,
                    job: jobs.len() as u32,
                };
                let first = flows.len() as u32;
                let (more, step_tags) = collective::expand(&plan, &steps, first, &mut |b| {
                    template.for_flow(Some(b), None, &path)
                })?;
                tags.extend(
                    step_tags
                        .into_iter()
                        .enumerate()
                        .map(|(i, t)| (first + i as u32, t)),
                );
                flows.extend(more);
                jobs.push(CollectiveJob {
                    name: job.clone().unwrap_or_else(|| format!("job{b}")),
                    collective: collective.name(),
                    ranks: members.len() as u32,
                    start,
                });
            }
            TrafficConfig::OnOff {
                class,
                sources,
                rate,
                on,
                off,
                periods,
                shape,
                start,
                duration,
                transport,
            } => {
                let template = transport_of(transport)?;
                let class = traffic_class(*class, &path.key("class"))?;
                let rate = parse_rate(rate).map_err(|e| Invalid::unit(path.key("rate"), e))?;
                if rate.0 == 0 {
                    return Err(Invalid::new(path.key("rate"), "must be positive"));
                }
                let positive = |value: &String, field: &str| -> Result<SimTime, Invalid> {
                    let t = parse_duration(value).map_err(|e| Invalid::unit(path.key(field), e))?;
                    if t == SimTime::ZERO {
                        return Err(Invalid::new(path.key(field), "must be positive"));
                    }
                    Ok(t)
                };
                let (on, off, span) = (
                    positive(on, "on")?,
                    positive(off, "off")?,
                    positive(duration, "duration")?,
                );
                let periods = periods.unwrap_or_default();
                let shape = shape.unwrap_or(1.5);
                if periods == on_off::Periods::Pareto && !(shape > 1.0 && shape.is_finite()) {
                    return Err(Invalid::new(
                        path.key("shape"),
                        format!("a Pareto shape must be above 1 (a finite mean), got {shape}"),
                    ));
                }
                let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
                require_two_hosts(&hosts, &path)?;
                let pairs: Vec<(u32, u32)> = match sources {
                    Some(0) => {
                        return Err(Invalid::new(path.key("sources"), "must be at least 1"));
                    }
                    Some(n) => (0..*n).map(|_| random_pair(&mut rng, &hosts)).collect(),
                    None => hosts
                        .iter()
                        .map(|&src| {
                            loop {
                                let dst = hosts[(rng.next_u64() % hosts.len() as u64) as usize];
                                if dst != src {
                                    break (src, dst);
                                }
                            }
                        })
                        .collect(),
                };
                let cycles = span.0 as f64 / on.0.saturating_add(off.0) as f64 + 1.0;
                ctx.check_flows(
                    flows.len(),
                    (pairs.len() as f64 * cycles).ceil() as u64,
                    &path.key("duration"),
                )?;
                let means = (on.0 as f64, off.0 as f64, shape);
                for (src, dst) in pairs {
                    for (at, length) in
                        on_off::on_periods(periods, means, start, start + span, &mut rng)
                    {
                        let bytes =
                            ((rate.0 as f64 * length.0 as f64 / 8e12).round() as u64).max(1);
                        let (spec, size) = template.for_flow(Some(Bytes(bytes)), None, &path)?;
                        flows.push(FlowSpec {
                            src,
                            dst,
                            start: at,
                            size,
                            transport: spec,
                            path: None,
                            class,
                            after: None,
                            ports: None,
                        });
                    }
                    ctx.check_flows(flows.len(), 0, &path.key("duration"))?;
                }
            }
            TrafficConfig::RequestResponse {
                class,
                server,
                clients,
                exchanges,
                request,
                response,
                cdf,
                think,
                start,
                transport,
            } => {
                let template = transport_of(transport)?;
                let class = traffic_class(*class, &path.key("class"))?;
                if *exchanges == 0 {
                    return Err(Invalid::new(path.key("exchanges"), "must be at least 1"));
                }
                let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
                let think = duration_at(think, path.key("think"), SimTime::ZERO)?;
                let request_size = size_at(request, path.key("request"), Bytes(1_000))?;
                let request = template.for_flow(Some(request_size), None, &path.key("request"))?;
                let names = names.get_or_insert_with(|| node_names(ctx.topology));
                require_two_hosts(&hosts, &path)?;
                let server = match server {
                    Some(name) => host_list(
                        std::slice::from_ref(name),
                        names,
                        ctx.topology,
                        &path.key("server"),
                    )
                    .map_err(|e| Invalid::new(path.key("server"), e.message))?[0],
                    None => hosts[(rng.next_u64() % hosts.len() as u64) as usize],
                };
                let clients = match clients {
                    Some(list) => host_list(list, names, ctx.topology, &path.key("clients"))?,
                    None => hosts.iter().copied().filter(|&h| h != server).collect(),
                };
                if let Some(i) = clients.iter().position(|&c| c == server) {
                    return Err(Invalid::new(
                        path.key("clients").index(i),
                        "is the server; a client sends to another host",
                    ));
                }
                let sizes = match (response, cdf) {
                    (Some(_), Some(_)) => {
                        return Err(Invalid::new(
                            path.key("cdf"),
                            "give response or cdf, not both",
                        ));
                    }
                    (None, None) => {
                        return Err(Invalid::new(
                            path.key("response"),
                            "give the response size (e.g. \"20KB\") or a cdf of sizes",
                        ));
                    }
                    (Some(r), None) => {
                        Err(size_at(&Some(r.clone()), path.key("response"), Bytes(0))?)
                    }
                    (None, Some(cdf)) => {
                        let cdf_path = resolve_cdf_path(cdf, ctx.base_dir);
                        let sizes = SizeCdf::load(&cdf_path)
                            .map_err(|e| Invalid::new(path.key("cdf"), e))?;
                        inputs.push(std::fs::read_to_string(&cdf_path).unwrap_or_default());
                        Ok(sizes)
                    }
                };
                ctx.check_flows(
                    flows.len(),
                    clients.len() as u64 * 2 * *exchanges as u64,
                    &path.key("exchanges"),
                )?;
                let mut failed = None;
                for host in clients {
                    let client = request_response::Client {
                        host,
                        server,
                        start,
                    };
                    let mut response = |_| {
                        let size = match &sizes {
                            Err(fixed) => *fixed,
                            Ok(cdf) => Bytes(cdf.sample(1.0 - rng.random::<f64>()).max(1)),
                        };
                        template
                            .for_flow(Some(size), None, &path.key("response"))
                            .unwrap_or_else(|e| {
                                failed.get_or_insert(e);
                                (request.0.clone(), size)
                            })
                    };
                    let mut think_rng =
                        stream(ctx.seed, STREAM_THINK, ((b as u64) << 32) | host as u64);
                    let mut think_time = |_| {
                        let u = 1.0 - think_rng.random::<f64>();
                        SimTime((-u.ln() * think.0 as f64) as u64)
                    };
                    request_response::exchanges(
                        &client,
                        *exchanges,
                        class,
                        &request,
                        &mut response,
                        &mut think_time,
                        &mut flows,
                    );
                }
                if let Some(e) = failed {
                    return Err(e);
                }
            }
            TrafficConfig::FlowFile {
                class,
                path: file,
                transport,
                transports,
            } => {
                let default = transport_of(transport)?;
                let mut named = std::collections::BTreeMap::new();
                for (name, t) in transports.iter().flatten() {
                    named.insert(
                        name.clone(),
                        resolve_transport(t, path.key("transports").key(name))?,
                    );
                }
                let resolved = crate::table_file::resolve(file, ctx.base_dir);
                let table = crate::table_file::TableFile::open(&resolved, file)
                    .map_err(|e| Invalid::new(path.key("path"), e))?;
                inputs.push(format!(
                    "flow_file {file} {:016x}",
                    crate::table_file::file_hash(&resolved)
                        .map_err(|e| Invalid::new(path.key("path"), e))?
                ));
                let names = names.get_or_insert_with(|| node_names(ctx.topology));
                let reader = flow_file::FlowFile {
                    file: table,
                    default: &default,
                    named: &named,
                    class: traffic_class(*class, &path.key("class"))?,
                    names,
                    topology: ctx.topology,
                };
                let before = flows.len();
                reader.read(&mut flows, &path, &mut |n| {
                    ctx.check_flows(before, (n - before) as u64, &path.key("path"))
                })?;
            }
            TrafficConfig::Incast {
                class,
                receiver,
                senders,
                size,
                packets,
                rounds,
                interval,
                start,
                transport,
            } => {
                let same = SameFlows::resolve(
                    &transport_of(transport)?,
                    *class,
                    size,
                    *packets,
                    start,
                    &path,
                )?;
                let rounds = rounds.unwrap_or(1);
                let interval = match (interval, rounds) {
                    (Some(_), _) => {
                        let gap = duration_at(interval, path.key("interval"), SimTime::ZERO)?;
                        if gap == SimTime::ZERO {
                            return Err(Invalid::new(path.key("interval"), "must be positive"));
                        }
                        gap
                    }
                    (None, 0 | 1) => SimTime::ZERO,
                    (None, _) => {
                        return Err(Invalid::new(
                            path.key("interval"),
                            "more than one round needs an interval between round starts, e.g. interval = \"1ms\"",
                        ));
                    }
                };
                let position = match receiver {
                    Some(name) => {
                        let node = ctx
                            .topology
                            .nodes
                            .iter()
                            .position(|n| n.name == *name)
                            .ok_or_else(|| {
                                Invalid::new(
                                    path.key("receiver"),
                                    format!("no node named {name:?}"),
                                )
                            })?;
                        hosts
                            .iter()
                            .position(|&h| h as usize == node)
                            .ok_or_else(|| {
                                Invalid::new(
                                    path.key("receiver"),
                                    format!("{name:?} is not a host"),
                                )
                            })?
                    }
                    None => (rng.next_u64() % hosts.len().max(1) as u64) as usize,
                };
                let total = (*senders as u64).saturating_mul(rounds as u64);
                ctx.check_flows(flows.len(), total, &path.key("senders"))?;
                let plan =
                    incast::senders(hosts.len(), position, *senders, rounds, &mut rng, &path)?;
                for (r, round) in plan.into_iter().enumerate() {
                    let at = same.start + SimTime(interval.0.saturating_mul(r as u64));
                    for src in round {
                        flows.push(same.flow(hosts[src], hosts[position], at));
                    }
                }
            }
            TrafficConfig::Poisson {
                class,
                load,
                cdf,
                duration,
                start,
                max_flows,
                matrix,
                transport,
            } => {
                let template = transport_of(transport)?;
                let matrix = match matrix {
                    None => None,
                    Some(file) => {
                        let resolved = crate::table_file::resolve(file, ctx.base_dir);
                        let table = crate::table_file::TableFile::open(&resolved, file)
                            .map_err(|e| Invalid::new(path.key("matrix"), e))?;
                        inputs.push(format!(
                            "matrix {file} {:016x}",
                            crate::table_file::file_hash(&resolved)
                                .map_err(|e| Invalid::new(path.key("matrix"), e))?
                        ));
                        let names = names.get_or_insert_with(|| node_names(ctx.topology));
                        Some(
                            matrix::Matrix::read(&table, names, ctx.topology)
                                .map_err(|e| Invalid::new(path.key("matrix"), e))?,
                        )
                    }
                };
                let class = traffic_class(*class, &path.key("class"))?;
                if !(*load > 0.0 && *load <= 1.0) {
                    return Err(Invalid::new(
                        path.key("load"),
                        format!("must be in (0, 1], got {load}"),
                    ));
                }
                let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
                let span =
                    parse_duration(duration).map_err(|e| Invalid::unit(path.key("duration"), e))?;
                if span == SimTime::ZERO {
                    return Err(Invalid::new(
                        path.key("duration"),
                        "must be positive: arrivals come in [start, start + duration), so 0s gives no flow",
                    ));
                }
                let cdf_path = resolve_cdf_path(cdf, ctx.base_dir);
                let sizes =
                    SizeCdf::load(&cdf_path).map_err(|e| Invalid::new(path.key("cdf"), e))?;
                inputs.push(std::fs::read_to_string(&cdf_path).unwrap_or_default());
                require_two_hosts(&hosts, &path)?;
                if sizes.mean() <= 0.0 {
                    return Err(Invalid::new(
                        path.key("cdf"),
                        format!(
                            "{}: the mean flow size is 0 bytes (all mass at size 0), so any load needs infinitely many flows; expected sizes of at least one byte",
                            cdf_path.display()
                        ),
                    ));
                }
                let capacity_bps = host_capacity_bps(ctx.topology);
                let flows_per_ps = load * capacity_bps / (sizes.mean() * 8.0) / 1e12;
                if *max_flows == Some(0) {
                    return Err(Invalid::new(
                        path.key("max_flows"),
                        "must be at least 1 (a cap of 0 flows generates nothing; leave it out for no cap)",
                    ));
                }
                let cap = max_flows.unwrap_or(u32::MAX);
                let expected = match max_flows {
                    Some(cap) => (flows_per_ps * span.0 as f64).ceil().min(*cap as f64),
                    None => (flows_per_ps * span.0 as f64).ceil(),
                };
                let blame = if max_flows.is_some() {
                    "max_flows"
                } else {
                    "duration"
                };
                ctx.check_flows(flows.len(), expected as u64, &path.key(blame))?;
                let end = start + span;
                let mut t = start.0 as f64;
                let mut generated = 0u32;
                loop {
                    let u: f64 = rng.random();
                    t += -(1.0 - u).ln() / flows_per_ps;
                    if t >= end.0 as f64 || generated >= cap {
                        break;
                    }
                    if flows.len() as u64 >= MAX_FLOWS {
                        // The expectation fit; a large draw above it did not.
                        ctx.check_flows(flows.len(), 1, &path.key(blame))?;
                    }
                    let (src, dst) = match &matrix {
                        Some(m) => m.draw(&mut rng),
                        None => random_pair(&mut rng, &hosts),
                    };
                    let u: f64 = rng.random();
                    let size = Bytes(sizes.sample(1.0 - u));
                    let (spec, bytes) = template.for_flow(Some(size), None, &path)?;
                    flows.push(FlowSpec {
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
            }
        }
    }
    waits.resolve(&mut flows)?;
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
        flows,
        inputs,
        jobs,
        tags,
    })
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
}

/// Node index by name.
fn node_names(topology: &TopologySpec) -> HashMap<&str, u32> {
    topology
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect()
}

/// Host ids of `list` (names), distinct, every one a host.
fn host_list(
    list: &[String],
    names: &HashMap<&str, u32>,
    topology: &TopologySpec,
    path: &FieldPath,
) -> Result<Vec<u32>, Invalid> {
    let mut ids = Vec::with_capacity(list.len());
    let mut seen = std::collections::HashSet::with_capacity(list.len());
    for (i, name) in list.iter().enumerate() {
        let id = match names.get(name.as_str()) {
            Some(&n) if topology.nodes[n as usize].kind == NodeKind::Host => n,
            Some(_) => {
                return Err(Invalid::new(
                    path.index(i),
                    format!("{name:?} is a switch; expected a host"),
                ));
            }
            None => {
                return Err(Invalid::new(
                    path.index(i),
                    format!("unknown host {name:?}"),
                ));
            }
        };
        if !seen.insert(id) {
            return Err(Invalid::new(
                path.index(i),
                format!("{name:?} is listed twice; each host appears once"),
            ));
        }
        ids.push(id);
    }
    Ok(ids)
}

/// The names and `after` lists of explicit flows, resolved once every block is generated (a
/// flow may wait for one listed later).
#[derive(Default)]
struct Waits<'a> {
    /// Flow id and field path of every named flow.
    named: HashMap<&'a str, (u32, FieldPath)>,
    /// Waiting flows: id, `after`, `delay`, field path.
    waiting: Vec<(u32, &'a [String], &'a Option<String>, FieldPath)>,
    /// Field path of each waiting or named flow by id (for cycle errors).
    paths: HashMap<u32, FieldPath>,
}

impl<'a> Waits<'a> {
    /// Records flow `id`'s name and dependencies.
    fn note(&mut self, id: u32, f: &'a ExplicitFlow, path: &FieldPath) -> Result<(), Invalid> {
        if let Some(name) = &f.name {
            if name.is_empty() {
                return Err(Invalid::new(path.key("name"), "must not be empty"));
            }
            if let Some((_, first)) = self.named.get(name.as_str()) {
                return Err(Invalid::new(
                    path.key("name"),
                    format!("{name:?} is already the name of {first}; names must be unique"),
                ));
            }
            self.named.insert(name, (id, path.clone()));
            self.paths.insert(id, path.clone());
        }
        match &f.after {
            Some(after) if after.is_empty() => {
                return Err(Invalid::new(
                    path.key("after"),
                    "is empty: list the names of flows to wait for, or leave it out",
                ));
            }
            Some(after) => {
                self.waiting.push((id, after, &f.delay, path.clone()));
                self.paths.insert(id, path.clone());
            }
            None if f.delay.is_some() => {
                return Err(Invalid::new(
                    path.key("delay"),
                    "is the time after the flows in `after` finish; give `after` too, or use `start`",
                ));
            }
            None => {}
        }
        Ok(())
    }

    /// Sets every waiting flow's dependencies; refuses unknown names and cycles.
    fn resolve(self, flows: &mut [FlowSpec]) -> Result<(), Invalid> {
        if self.waiting.is_empty() {
            return Ok(());
        }
        for (id, after, delay, path) in &self.waiting {
            let mut deps = Vec::with_capacity(after.len());
            for (i, name) in after.iter().enumerate() {
                match self.named.get(name.as_str()) {
                    Some(&(dep, _)) if dep == *id => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!("{name:?} is this flow itself; a flow cannot wait for itself"),
                        ));
                    }
                    Some(&(dep, _)) if deps.contains(&dep) => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!("{name:?} is listed twice"),
                        ));
                    }
                    Some(&(dep, _)) => deps.push(dep),
                    None => {
                        return Err(Invalid::new(
                            path.key("after").index(i),
                            format!(
                                "no flow is named {name:?} (give the flow to wait for `name = {name:?}`)"
                            ),
                        ));
                    }
                }
            }
            let delay = duration_at(delay, path.key("delay"), SimTime::ZERO)?;
            flows[*id as usize].after = Some(Box::new(Dependencies {
                flows: deps.into_boxed_slice(),
                delay,
            }));
        }
        match netstep_core::flow::check_dependencies(flows) {
            Ok(()) => Ok(()),
            Err(DependencyError::Cycle { flow, cycle }) => {
                let label = |f: &u32| {
                    let name = flows_name(&self.named, *f);
                    match name {
                        Some(n) => format!("{n:?}"),
                        None => format!("flow {f}"),
                    }
                };
                let chain: Vec<String> = cycle.iter().map(label).collect();
                let path = self
                    .paths
                    .get(&flow)
                    .cloned()
                    .unwrap_or_else(|| FieldPath::of(&["traffic"]));
                Err(Invalid::new(
                    path.key("after"),
                    format!(
                        "waits for itself: {} (each waits for the next); a cycle of flows never starts",
                        chain.join(" -> ")
                    ),
                ))
            }
            Err(e) => Err(Invalid::new(FieldPath::of(&["traffic"]), e.to_string())),
        }
    }
}

/// The name of flow `id`, if it has one.
fn flows_name<'a>(named: &HashMap<&'a str, (u32, FieldPath)>, id: u32) -> Option<&'a str> {
    named
        .iter()
        .find(|(_, (f, _))| *f == id)
        .map(|(name, _)| *name)
}

fn resolve_cdf_path(cdf: &str, base_dir: Option<&Path>) -> std::path::PathBuf {
    let given = Path::new(cdf);
    if given.is_absolute() {
        return given.to_path_buf();
    }
    match base_dir.map(|d| d.join(given)) {
        Some(candidate) if candidate.exists() => candidate,
        _ => given.to_path_buf(),
    }
}

/// What every flow of a generated block shares: class, start, transport and size (the
/// fields `random_pairs`, `permutation`, `all_to_all` and `incast` have in common).
struct SameFlows {
    class: u8,
    start: SimTime,
    spec: Arc<TransportSpec>,
    bytes: Bytes,
}

impl SameFlows {
    /// Resolves the shared fields of block `path` with transport `template`.
    fn resolve(
        template: &TransportTemplate,
        class: Option<u8>,
        size: &Option<String>,
        packets: Option<u32>,
        start: &Option<String>,
        path: &FieldPath,
    ) -> Result<SameFlows, Invalid> {
        let class = traffic_class(class, &path.key("class"))?;
        let start = duration_at(start, path.key("start"), SimTime::ZERO)?;
        let size = size
            .as_ref()
            .map(|s| parse_size(s).map_err(|e| Invalid::unit(path.key("size"), e)))
            .transpose()?;
        let (spec, bytes) = template.for_flow(size, packets, path)?;
        Ok(SameFlows {
            class,
            start,
            spec,
            bytes,
        })
    }

    /// One flow of the block from `src` to `dst` starting at `at`.
    fn flow(&self, src: u32, dst: u32, at: SimTime) -> FlowSpec {
        FlowSpec {
            src,
            dst,
            start: at,
            size: self.bytes,
            transport: self.spec.clone(),
            path: None,
            class: self.class,
            after: None,
            ports: None,
        }
    }
}

fn require_two_hosts(hosts: &[u32], path: &FieldPath) -> Result<(), Invalid> {
    if hosts.len() < 2 {
        return Err(Invalid::new(
            path.clone(),
            format!(
                "random traffic needs at least 2 hosts, the topology has {}",
                hosts.len()
            ),
        ));
    }
    Ok(())
}

fn random_pair(rng: &mut Pcg64Mcg, hosts: &[u32]) -> (u32, u32) {
    let n = hosts.len() as u64;
    let src = rng.next_u64() % n;
    let mut dst = rng.next_u64() % (n - 1);
    if dst >= src {
        dst += 1;
    }
    (hosts[src as usize], hosts[dst as usize])
}

/// Sum of the hosts' line rates, bits per second, in one pass over the links (each host has
/// exactly one link).
fn host_capacity_bps(topology: &TopologySpec) -> f64 {
    let is_host = |n: u32| topology.nodes[n as usize].kind == NodeKind::Host;
    topology
        .links
        .iter()
        .map(|l| {
            // A host's line rate is its own egress direction's.
            let rate = |class: u16| topology.classes[class as usize].rate.0 as f64;
            is_host(l.a) as u32 as f64 * rate(l.class)
                + is_host(l.b) as u32 as f64 * rate(l.class_ba)
        })
        .sum()
}

/// Every node's neighbours in link order (ports are numbered in link order), built in one
/// pass over the links: `peers[offsets[n]..offsets[n + 1]]` are node `n`'s, so a node's
/// local port towards a peer is that peer's position there.
struct Adjacency {
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

/// A traffic class: 0-7, default 0.
fn traffic_class(class: Option<u8>, path: &FieldPath) -> Result<u8, Invalid> {
    match class {
        None => Ok(0),
        Some(c) if (c as usize) < netstep_core::queue::CLASSES => Ok(c),
        Some(c) => Err(Invalid::new(
            path.clone(),
            format!("traffic classes are 0 to 7, got {c}"),
        )),
    }
}

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
    let size = f
        .size
        .as_ref()
        .map(|s| parse_size(s).map_err(|e| Invalid::unit(path.key("size"), e)))
        .transpose()?;
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
    let mut total = 0u64;
    for (b, block) in blocks.iter().enumerate() {
        let path = FieldPath::of(&["traffic"]).index(b);
        let n = match block {
            TrafficConfig::Flows { flows, .. } => flows.len() as u64,
            TrafficConfig::RandomPairs { count, .. } => *count as u64,
            TrafficConfig::Permutation { .. } => hosts,
            TrafficConfig::AllToAll { .. } => hosts.saturating_mul(hosts.saturating_sub(1)),
            TrafficConfig::Incast {
                senders, rounds, ..
            } => *senders as u64 * rounds.unwrap_or(1) as u64,
            TrafficConfig::Collective {
                collective,
                ranks,
                chunks,
                iterations,
                ..
            } => {
                let n = ranks.as_ref().map_or(hosts, |r| r.len() as u64);
                collective::flow_count(
                    collective::send_count(*collective, n.min(u32::MAX as u64) as u32),
                    chunks.unwrap_or(1),
                    iterations.unwrap_or(1),
                )
            }
            TrafficConfig::OnOff {
                sources,
                on,
                off,
                duration,
                ..
            } => {
                let t = |v: &String, field: &str| {
                    parse_duration(v).map_err(|e| Invalid::unit(path.key(field), e))
                };
                let cycle = t(on, "on")?.0.saturating_add(t(off, "off")?.0).max(1);
                let cycles = t(duration, "duration")?.0.div_ceil(cycle) + 1;
                sources.map_or(hosts, u64::from).saturating_mul(cycles)
            }
            TrafficConfig::RequestResponse {
                clients, exchanges, ..
            } => {
                let clients = clients
                    .as_ref()
                    .map_or(hosts.saturating_sub(1), |c| c.len() as u64);
                clients.saturating_mul(2 * *exchanges as u64)
            }
            TrafficConfig::FlowFile { path: file, .. } => {
                let resolved = crate::table_file::resolve(file, base_dir);
                crate::table_file::TableFile::open(&resolved, file)
                    .and_then(|t| t.row_count())
                    .map_err(|e| Invalid::new(path.key("path"), e))?
            }
            TrafficConfig::Poisson {
                load,
                cdf,
                duration,
                max_flows,
                ..
            } => {
                if !(*load > 0.0 && *load <= 1.0) {
                    return Err(Invalid::new(
                        path.key("load"),
                        format!("must be in (0, 1], got {load}"),
                    ));
                }
                let span =
                    parse_duration(duration).map_err(|e| Invalid::unit(path.key("duration"), e))?;
                let sizes = SizeCdf::load(&resolve_cdf_path(cdf, base_dir))
                    .map_err(|e| Invalid::new(path.key("cdf"), e))?;
                let per_ps =
                    load * hosts as f64 * host_rate_bps / (sizes.mean().max(1.0) * 8.0) / 1e12;
                let expected = (per_ps * span.0 as f64).ceil() as u64;
                max_flows.map_or(expected, |cap| expected.min(cap as u64))
            }
        };
        total = total.saturating_add(n);
    }
    Ok(total)
}

//! `kind = "rdma"`: a RoCEv2-style rate-based sender with per-packet ACKs and a rate control
//! (DCQCN, TIMELY, HPCC or DCTCP's alpha).

use std::sync::Arc;

use netstep_core::transport::TransportSpec;
use netstep_core::transport::rdma::dcqcn::DcqcnSpec;
use netstep_core::transport::rdma::dctcp::DctcpSpec;
use netstep_core::transport::rdma::hpcc::HpccSpec;
use netstep_core::transport::rdma::timely::TimelySpec;
use netstep_core::transport::rdma::{RdmaCc, RdmaSpec, RdmaWindow, Recovery};
use netstep_core::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

use super::{TransportTemplate, header_sized};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, positive_duration_at, rate_at, size_at, unit_fraction};

/// RDMA (RoCEv2-style): rate-based sender, per-packet ACKs, go-back-N, with a rate control.
/// An unset field takes its default from `netstep_core::transport::rdma::RdmaSpec::new`
/// and the rate control's `Default` (`DcqcnSpec`, `TimelySpec`, `HpccSpec`).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RdmaConfig {
    /// Rate control: `"dcqcn"` (DCQCN, Zhu et al. 2015, in the HPCC simulator's variant),
    /// `"timely"` (TIMELY, Mittal et al. 2015), `"hpcc"` (HPCC, Li et al. 2019) or `"dctcp"`
    /// (DCTCP's alpha steering a rate, the HPCC simulator's `CC_MODE 8`).
    ///
    /// Unit: `"dcqcn"`, `"timely"`, `"hpcc"` or `"dctcp"` · Default: `"dcqcn"` · Example:
    /// `cc = "hpcc"`
    pub cc: Option<RdmaCcConfig>,
    /// Payload per packet: 1 B to 65535 B.
    ///
    /// Unit: size · Default: `"1000B"` · Example: `mtu = "4000B"`
    pub mtu: Option<String>,
    /// Header bytes per data packet, and the ACK/NACK size unless `ack_size` is given: 1 B to
    /// 65535 B.
    ///
    /// Unit: size · Default: `"48B"` · Example: `header = "58B"`
    pub header: Option<String>,
    /// ACK/NACK size: 1 B to 65535 B.
    ///
    /// Unit: size · Default: the `header` · Example: `ack_size = "60B"`
    pub ack_size: Option<String>,
    /// No progress for this long: go back to the first unacknowledged packet (with
    /// `recovery = "selective_repeat"`, resend it alone); above zero.
    ///
    /// Unit: duration · Default: `"1ms"` · Example: `rto = "4ms"`
    pub rto: Option<String>,
    /// Timeouts in a row without progress before the flow is given up.
    ///
    /// Unit: count · Default: 15 · Example: `max_retries = 5`
    pub max_retries: Option<u32>,
    /// At most one NACK per gap in this interval; above zero.
    ///
    /// Unit: duration · Default: `"500us"` · Example: `nack_interval = "100us"`
    pub nack_interval: Option<String>,
    /// Acknowledge in-order packets once every this many (and the last one): coalesced ACKs; at
    /// least 1. The ECN echo reports a CE mark on any packet since the previous ACK; HPCC's ACK
    /// echoes the telemetry of the packet that triggered it.
    ///
    /// Unit: count · Default: 1 · Example: `ack_every = 4`
    pub ack_every: Option<u32>,
    /// Loss recovery: `"go_back_n"` (the receiver drops out-of-order packets; the sender goes
    /// back to the missing one) or `"selective_repeat"` (the receiver keeps out-of-order
    /// packets; the sender resends only the packets NACKs or timeouts name).
    ///
    /// Unit: `"go_back_n"` or `"selective_repeat"` · Default: `"go_back_n"` · Example:
    /// `recovery = "selective_repeat"`
    pub recovery: Option<String>,
    /// DCQCN and DCTCP only: alpha's EWMA gain.
    ///
    /// Unit: number in (0, 1] · Default: 1/16 · Example: `g = 0.00390625`
    pub g: Option<f64>,
    /// DCQCN only: alpha update period; above zero.
    ///
    /// Unit: duration · Default: `"55us"` · Example: `alpha_interval = "55us"`
    pub alpha_interval: Option<String>,
    /// DCQCN only: rate-decrease check period; above zero.
    ///
    /// Unit: duration · Default: `"4us"` · Example: `decrease_interval = "50us"`
    pub decrease_interval: Option<String>,
    /// DCQCN only: rate-increase timer; above zero.
    ///
    /// Unit: duration · Default: `"1500us"` · Example: `increase_interval = "55us"`
    pub increase_interval: Option<String>,
    /// DCQCN only: fast-recovery stages (increase-timer periods) before additive increase.
    ///
    /// Unit: count · Default: 5 · Example: `fast_recovery_stages = 5`
    pub fast_recovery_stages: Option<u32>,
    /// Additive increase step (every rate control); above zero.
    ///
    /// Unit: rate · Default: `"5Mbps"`; HPCC: line rate / 2500 (the HPCC simulator's: 40 Mb/s
    /// at 100 Gb/s); DCTCP: 1 Gb/s (the simulator's `DCTCP_RATE_AI`) · Example:
    /// `rate_ai = "40Mbps"`
    pub rate_ai: Option<String>,
    /// DCQCN and TIMELY only: hyper increase step; above zero.
    ///
    /// Unit: rate · Default: `"50Mbps"` · Example: `rate_hai = "400Mbps"`
    pub rate_hai: Option<String>,
    /// Lowest rate (every rate control): above zero, at most the sending host's line rate and
    /// at most `max_rate`.
    ///
    /// Unit: rate, > 0 · Default: `"100Mbps"` · Example: `min_rate = "10Mbps"`
    pub min_rate: Option<String>,
    /// TIMELY only: EWMA weight of a new RTT difference.
    ///
    /// Unit: number in (0, 1] · Default: 0.875 · Example: `timely_alpha = 0.3`
    pub timely_alpha: Option<f64>,
    /// TIMELY only: multiplicative decrease factor.
    ///
    /// Unit: number in (0, 1] · Default: 0.8 · Example: `timely_beta = 0.5`
    pub timely_beta: Option<f64>,
    /// TIMELY only: below this RTT the rate always increases; below `t_high`.
    ///
    /// Unit: duration · Default: `"50us"` · Example: `t_low = "20us"`
    pub t_low: Option<String>,
    /// TIMELY only: above this RTT the rate decreases in proportion to the excess; above zero
    /// and above `t_low`.
    ///
    /// Unit: duration · Default: `"500us"` · Example: `t_high = "200us"`
    pub t_high: Option<String>,
    /// TIMELY only: the gradient's normalizing RTT; above zero.
    ///
    /// Unit: duration · Default: `"20us"` · Example: `min_rtt = "10us"`
    pub min_rtt: Option<String>,
    /// HPCC only: target utilisation.
    ///
    /// Unit: number in (0, 1] · Default: 0.95 (the paper's) · Example: `eta = 0.9`
    pub eta: Option<f64>,
    /// HPCC only: additive increases in a row before a multiplicative step.
    ///
    /// Unit: count · Default: 5 (the paper's) · Example: `max_stage = 0`
    pub max_stage: Option<u32>,
    /// HPCC only: the base RTT `T` (the window is `rate x T`); above zero.
    ///
    /// Unit: duration · Default: the flow's unloaded round trip (one full data packet out, an
    /// ACK back) · Example: `base_rtt = "8us"`
    pub base_rtt: Option<String>,
    /// HPCC only: react to every ACK (`false`: once per round trip).
    ///
    /// Unit: bool · Default: true · Example: `fast_react = false`
    pub fast_react: Option<bool>,
    /// The highest rate a flow sends at (the HPCC simulator's `MAX_RATE`): it starts at
    /// `min(line rate, max_rate)` and increases stop there (DCQCN's target stops at the line
    /// rate, as in that simulator; the rate controls' first update starts from the line rate,
    /// as there); above zero.
    ///
    /// Unit: rate · Default: the NIC's line rate · Example: `max_rate = "10Gbps"`
    pub max_rate: Option<String>,
    /// No new packet starts while the payload bytes in flight are at least this (the HPCC
    /// simulator's `FIXED_WIN` with `HAS_WIN 1`), whatever the rate control; above zero. With
    /// HPCC it replaces the `rate x T` window, and HPCC measures queues against it
    /// (`u = qlen x max_rate / (B window) + txRate / B`, as that simulator does).
    ///
    /// Unit: size · Default: none · Example: `window = "22879B"`
    pub window: Option<String>,
    /// The window is `window x rate / max_rate` bytes (rounded down, at least 1; the HPCC
    /// simulator's `VAR_WIN`); needs `window`.
    ///
    /// Unit: bool · Default: false · Example: `variable_window = true`
    pub variable_window: Option<bool>,
}

/// An RDMA rate control.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RdmaCcConfig {
    /// DCQCN (Zhu et al. 2015).
    #[default]
    Dcqcn,
    /// TIMELY (Mittal et al. 2015).
    Timely,
    /// HPCC (Li et al. 2019).
    Hpcc,
    /// DCTCP's alpha steering a rate (the HPCC simulator's `CC_MODE 8`).
    Dctcp,
}

impl RdmaConfig {
    /// Resolves the table found at `path`.
    pub(crate) fn resolve(&self, path: &FieldPath) -> Result<TransportTemplate, Invalid> {
        let dcqcn = self.dcqcn(path)?;
        let choice = self.cc.unwrap_or_default();
        self.check_applies(choice, path)?;
        let cc = match choice {
            RdmaCcConfig::Dcqcn => RdmaCc::Dcqcn(dcqcn),
            RdmaCcConfig::Timely => RdmaCc::Timely(self.timely(&dcqcn, path)?),
            RdmaCcConfig::Dctcp => {
                let d = DctcpSpec::default();
                RdmaCc::Dctcp(DctcpSpec {
                    g: dcqcn.g,
                    rate_ai_bps: rate_at(&self.rate_ai, path.key("rate_ai"), d.rate_ai_bps)?,
                    min_rate_bps: dcqcn.min_rate_bps,
                })
            }
            RdmaCcConfig::Hpcc => RdmaCc::Hpcc(self.hpcc(&dcqcn, path)?),
        };
        let spec = self.spec(cc, path)?;
        let shared = Arc::new(TransportSpec::Rdma(spec.clone()));
        Ok(TransportTemplate::Rdma(spec, shared))
    }

    /// DCQCN's parameters (their rates and gain are the other controls' defaults too).
    fn dcqcn(&self, path: &FieldPath) -> Result<DcqcnSpec, Invalid> {
        let d = DcqcnSpec::default();
        Ok(DcqcnSpec {
            g: unit_fraction(self.g, path.key("g"), d.g)?,
            alpha_interval: positive_duration_at(
                &self.alpha_interval,
                path.key("alpha_interval"),
                d.alpha_interval,
            )?,
            decrease_interval: positive_duration_at(
                &self.decrease_interval,
                path.key("decrease_interval"),
                d.decrease_interval,
            )?,
            increase_interval: positive_duration_at(
                &self.increase_interval,
                path.key("increase_interval"),
                d.increase_interval,
            )?,
            fast_recovery_stages: self.fast_recovery_stages.unwrap_or(d.fast_recovery_stages),
            rate_ai_bps: rate_at(&self.rate_ai, path.key("rate_ai"), d.rate_ai_bps)?,
            rate_hai_bps: rate_at(&self.rate_hai, path.key("rate_hai"), d.rate_hai_bps)?,
            min_rate_bps: rate_at(&self.min_rate, path.key("min_rate"), d.min_rate_bps)?,
            rate_on_first_cnp: d.rate_on_first_cnp,
        })
    }

    /// Refuses a field that belongs to another rate control than `choice`.
    fn check_applies(&self, choice: RdmaCcConfig, path: &FieldPath) -> Result<(), Invalid> {
        use RdmaCcConfig::{Dcqcn, Dctcp, Hpcc, Timely};
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
        if choice != Timely {
            for (given, field) in [
                (self.timely_alpha.is_some(), "timely_alpha"),
                (self.timely_beta.is_some(), "timely_beta"),
                (self.t_low.is_some(), "t_low"),
                (self.t_high.is_some(), "t_high"),
                (self.min_rtt.is_some(), "min_rtt"),
            ] {
                only(given, field, "timely")?;
            }
        }
        if choice != Dcqcn && choice != Dctcp {
            only(self.g.is_some(), "g", "dcqcn\" or cc = \"dctcp")?;
        }
        if choice == Dctcp && self.rate_hai.is_some() {
            only(true, "rate_hai", "dcqcn\" or cc = \"timely")?;
        }
        if choice != Dcqcn {
            for (given, field) in [
                (self.alpha_interval.is_some(), "alpha_interval"),
                (self.decrease_interval.is_some(), "decrease_interval"),
                (self.increase_interval.is_some(), "increase_interval"),
                (self.fast_recovery_stages.is_some(), "fast_recovery_stages"),
            ] {
                only(given, field, "dcqcn")?;
            }
        }
        if choice != Hpcc {
            for (given, field) in [
                (self.eta.is_some(), "eta"),
                (self.max_stage.is_some(), "max_stage"),
                (self.base_rtt.is_some(), "base_rtt"),
                (self.fast_react.is_some(), "fast_react"),
            ] {
                only(given, field, "hpcc")?;
            }
        }
        if choice == Hpcc && self.rate_hai.is_some() {
            only(true, "rate_hai", "dcqcn\" or cc = \"timely")?;
        }
        Ok(())
    }

    /// TIMELY's parameters; its rates are DCQCN's.
    fn timely(&self, dcqcn: &DcqcnSpec, path: &FieldPath) -> Result<TimelySpec, Invalid> {
        let t = TimelySpec::default();
        let spec = TimelySpec {
            alpha: unit_fraction(self.timely_alpha, path.key("timely_alpha"), t.alpha)?,
            beta: unit_fraction(self.timely_beta, path.key("timely_beta"), t.beta)?,
            t_low: duration_at(&self.t_low, path.key("t_low"), t.t_low)?,
            t_high: positive_duration_at(&self.t_high, path.key("t_high"), t.t_high)?,
            min_rtt: positive_duration_at(&self.min_rtt, path.key("min_rtt"), t.min_rtt)?,
            rate_ai_bps: dcqcn.rate_ai_bps,
            rate_hai_bps: dcqcn.rate_hai_bps,
            min_rate_bps: dcqcn.min_rate_bps,
        };
        if spec.t_low >= spec.t_high {
            return Err(Invalid::new(path.key("t_low"), "must be below t_high"));
        }
        Ok(spec)
    }

    /// HPCC's parameters; its lowest rate is DCQCN's.
    fn hpcc(&self, dcqcn: &DcqcnSpec, path: &FieldPath) -> Result<HpccSpec, Invalid> {
        let h = HpccSpec::default();
        Ok(HpccSpec {
            eta: unit_fraction(self.eta, path.key("eta"), h.eta)?,
            max_stage: self.max_stage.unwrap_or(h.max_stage),
            rate_ai_bps: match self.rate_ai {
                Some(_) => Some(rate_at(&self.rate_ai, path.key("rate_ai"), 0.0)?),
                None => None,
            },
            base_rtt: match self.base_rtt {
                Some(_) => Some(positive_duration_at(
                    &self.base_rtt,
                    path.key("base_rtt"),
                    SimTime::ZERO,
                )?),
                None => None,
            },
            min_rate_bps: dcqcn.min_rate_bps,
            fast_react: self.fast_react.unwrap_or(h.fast_react),
        })
    }

    /// The sender's parameters around rate control `cc`.
    fn spec(&self, cc: RdmaCc, path: &FieldPath) -> Result<RdmaSpec, Invalid> {
        let r = RdmaSpec::new(cc);
        let mtu = header_sized(&self.mtu, path.key("mtu"), Bytes(r.mtu_bytes as u64), " ")?;
        let header = header_sized(
            &self.header,
            path.key("header"),
            Bytes(r.header_bytes as u64),
            " ",
        )?;
        let ack = header_sized(&self.ack_size, path.key("ack_size"), header, " ")?;
        Ok(RdmaSpec {
            mtu_bytes: mtu.0 as u32,
            header_bytes: header.0 as u32,
            ack_bytes: ack.0 as u32,
            rto: positive_duration_at(&self.rto, path.key("rto"), r.rto)?,
            max_retries: self.max_retries.unwrap_or(r.max_retries),
            nack_interval: positive_duration_at(
                &self.nack_interval,
                path.key("nack_interval"),
                r.nack_interval,
            )?,
            ack_every: match self.ack_every.unwrap_or(r.ack_every) {
                0 => return Err(Invalid::new(path.key("ack_every"), "must be at least 1")),
                n => n,
            },
            recovery: match self.recovery.as_deref() {
                None => r.recovery,
                Some("go_back_n") => Recovery::GoBackN,
                Some("selective_repeat") => Recovery::SelectiveRepeat,
                Some(other) => {
                    return Err(Invalid::new(
                        path.key("recovery"),
                        format!(
                            "unknown recovery {other:?}; expected \"go_back_n\" or \"selective_repeat\""
                        ),
                    ));
                }
            },
            max_rate_bps: match self.max_rate {
                Some(_) => Some(rate_at(&self.max_rate, path.key("max_rate"), 0.0)?),
                None => None,
            },
            window: self.window(path)?,
            ..r
        })
    }

    /// The fixed (or rate-scaled) window, if any.
    fn window(&self, path: &FieldPath) -> Result<Option<RdmaWindow>, Invalid> {
        match (&self.window, self.variable_window) {
            (None, Some(_)) => Err(Invalid::new(
                path.key("variable_window"),
                "scales `window`; give `window` too",
            )),
            (None, None) => Ok(None),
            (Some(_), variable) => {
                let bytes = size_at(&self.window, path.key("window"), Bytes(0))?;
                if bytes.0 == 0 {
                    return Err(Invalid::new(path.key("window"), "must be positive"));
                }
                Ok(Some(RdmaWindow {
                    bytes: bytes.0,
                    variable: variable.unwrap_or(false),
                }))
            }
        }
    }
}

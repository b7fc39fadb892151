//! `kind = "tcp"`: a reliable sender with SACK recovery and a congestion control.

use std::sync::Arc;

use netstep_core::transport::tcp::TcpSpec;
use netstep_core::transport::{CcSpec, TransportSpec};
use netstep_core::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

use super::{TransportTemplate, header_sized};
use crate::error::{FieldPath, Invalid};
use crate::fields::duration_at;

/// TCP (`kind = "tcp"`, or `"tcp_newreno"` as before): reliable sender with SACK recovery
/// and a congestion control. An unset field takes its default from
/// `netstep_core::transport::tcp::TcpSpec::new`, the one place defaults are written
/// (`scenarios/REFERENCE.md` states them, checked by a test).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control.
    pub cc: Option<CcConfig>,
    /// SACK (RFC 2018) and SACK-based recovery (RFC 6675); false gives NewReno's
    /// cumulative-ACK recovery (RFC 6582).
    pub sack: Option<bool>,
    /// Delayed-ACK timeout (ACK every second segment or after this delay); `"0s"` is
    /// off. Example: `delayed_ack = "200us"`.
    pub delayed_ack: Option<String>,
    /// Slow-start increase per ACK in segments (RFC 3465 `L`); 0 = no limit.
    pub abc_limit: Option<u32>,
    /// Pace segments at 2x / 1.2x cwnd per RTT (Linux `fq` pacing).
    pub pacing: Option<bool>,
    /// Payload per segment.
    pub mss: Option<String>,
    /// Header bytes per segment and ACK size.
    pub header: Option<String>,
    /// Initial window, segments.
    pub initial_cwnd: Option<u32>,
    /// Minimum RTO.
    pub rto_min: Option<String>,
    /// RTO before the first RTT sample.
    pub rto_initial: Option<String>,
    /// Maximum backed-off RTO.
    pub rto_max: Option<String>,
    /// Retransmission timeouts in a row without progress before the flow is given up
    /// (marked failed, `fail_reason = "retry_limit"`).
    pub max_retries: Option<u32>,
    /// DCTCP's EWMA gain `g` in (0, 1] (`cc = "dctcp"` only).
    pub dctcp_g: Option<f64>,
}

/// A TCP congestion control.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum CcConfig {
    /// NewReno (RFC 5681, RFC 6582).
    Newreno,
    /// DCTCP (RFC 8257).
    Dctcp,
    /// CUBIC (RFC 9438).
    Cubic,
    /// REAL's generic source: a fixed window (`initial_cwnd`), no congestion control.
    Generic,
    /// REAL's JK source: Jacobson-Karels slow start and congestion avoidance.
    Jk,
    /// REAL's DEC source: the DECbit window rule.
    Dec,
    /// BBR version 1 (Cardwell et al. 2016).
    Bbr,
}

impl TcpConfig {
    /// The congestion control, with DCTCP's gain checked.
    fn cc(&self, path: &FieldPath) -> Result<CcSpec, Invalid> {
        let cc = self.cc.unwrap_or(CcConfig::Newreno);
        if self.dctcp_g.is_some() && cc != CcConfig::Dctcp {
            return Err(Invalid::new(
                path.key("dctcp_g"),
                "applies to cc = \"dctcp\" only",
            ));
        }
        Ok(match cc {
            CcConfig::Newreno => CcSpec::NewReno,
            CcConfig::Cubic => CcSpec::Cubic,
            CcConfig::Generic => CcSpec::Generic,
            CcConfig::Jk => CcSpec::Jk,
            CcConfig::Dec => CcSpec::Dec,
            CcConfig::Bbr => CcSpec::Bbr,
            CcConfig::Dctcp => {
                let g = self.dctcp_g.unwrap_or(CcSpec::DCTCP_DEFAULT_G);
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
        })
    }

    /// Resolves the table found at `path`.
    pub(crate) fn resolve(&self, path: &FieldPath) -> Result<TransportTemplate, Invalid> {
        let cc = self.cc(path)?;
        // Every unset field takes its default from the one place they are written.
        let d = TcpSpec::new(cc);
        let mss = header_sized(&self.mss, path.key("mss"), Bytes(d.mss_bytes as u64), "")?;
        let header = header_sized(
            &self.header,
            path.key("header"),
            Bytes(d.header_bytes as u64),
            "",
        )?;
        let delayed_ack = duration_at(
            &self.delayed_ack,
            path.key("delayed_ack"),
            d.delayed_ack.unwrap_or(SimTime::ZERO),
        )?;
        let spec = TcpSpec {
            sack: self.sack.unwrap_or(d.sack),
            delayed_ack: (delayed_ack > SimTime::ZERO).then_some(delayed_ack),
            abc_limit: self.abc_limit.unwrap_or(d.abc_limit),
            pacing: self.pacing.unwrap_or(d.pacing),
            mss_bytes: mss.0 as u32,
            header_bytes: header.0 as u32,
            initial_cwnd: self.initial_cwnd.unwrap_or(d.initial_cwnd),
            rto_min: duration_at(&self.rto_min, path.key("rto_min"), d.rto_min)?,
            rto_initial: duration_at(&self.rto_initial, path.key("rto_initial"), d.rto_initial)?,
            rto_max: duration_at(&self.rto_max, path.key("rto_max"), d.rto_max)?,
            max_retries: self.max_retries.unwrap_or(d.max_retries),
            ..d
        };
        check(&spec, cc, self.sack, path)?;
        let shared = Arc::new(TransportSpec::Tcp(spec.clone()));
        Ok(TransportTemplate::Tcp(spec, shared))
    }
}

/// The checks across fields of a resolved TCP spec.
fn check(spec: &TcpSpec, cc: CcSpec, sack: Option<bool>, path: &FieldPath) -> Result<(), Invalid> {
    if cc.go_back_n_only() && sack == Some(true) {
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
    Ok(())
}

//! `kind = "tcp"`: a reliable sender with SACK recovery and a congestion control.

mod profile;

use std::sync::Arc;

use netstep_core::transport::tcp::{
    FctFrom, Recovery, RecoveryExit, RttSampling, SsthreshFrom, TcpSpec,
};
use netstep_core::transport::{CcSpec, TransportSpec};
use netstep_core::units::{Bytes, SimTime};
use serde::{Deserialize, Serialize};

use super::{TransportTemplate, header_sized};
use crate::error::{FieldPath, Invalid};
use crate::fields::{duration_at, size_at};
use profile::ProfileSettings;

/// TCP (`kind = "tcp"`, or `"tcp_newreno"` as before): reliable sender with SACK recovery
/// and a congestion control. An unset field takes its default from
/// `netstep_core::transport::tcp::TcpSpec::new`, the one place defaults are written
/// (`scenarios/REFERENCE.md` states them, checked by a test).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TcpConfig {
    /// Congestion control: `"newreno"` (RFC 5681 slow start / congestion avoidance, RFC 6582
    /// and RFC 6675 window reduction), `"dctcp"` (RFC 8257: ECN-capable data, the receiver
    /// echoes CE as ECE (an immediate ACK when the CE state changes under delayed ACKs),
    /// `alpha` the EWMA of the marked fraction per round trip, starting at 1, the window cut
    /// to `cwnd (1 - alpha/2)` once per round trip with no growth until it is acknowledged;
    /// NewReno growth and loss reaction), `"cubic"` (RFC 9438: C = 0.4, beta = 0.7; the
    /// window grows towards `W(t + RTT)` of `W(t) = C (t - K)^3 + W_max` and never slower
    /// than the Reno-friendly estimate (alpha_cubic, then 1 past the pre-reduction window);
    /// fast convergence; `ssthresh = max(0.7 FlightSize, 2)`; after a timeout one segment and
    /// an avoidance stage with K = 0; RFC 5681 slow start with ABC, no HyStart), `"bbr"` (BBR
    /// version 1: Cardwell et al. 2016, draft-cardwell-iccrg-bbr-congestion-control-00: BtlBw
    /// the max delivery rate over 10 round trips, RTprop the min RTT over 10 s; Startup and
    /// Drain with gain `2 / ln 2`, ProbeBW cycling pacing gains 1.25, 0.75, 1 x 6 with cwnd
    /// `2 x BDP + 3`, ProbeRTT at 4 segments for 200 ms every 10 s; paced at `gain x BtlBw`;
    /// packet conservation in recovery), and REAL's sources (Keshav 1988), which recover by
    /// go-back-N after a timeout only (no fast retransmit; `sack = true` is refused, SACK is
    /// off by default for them): `"generic"` (a fixed window of `initial_cwnd` segments, no
    /// congestion control), `"jk"` (Jacobson and Karels 1988: slow start, avoidance,
    /// `ssthresh = FlightSize / 2` and one segment after a timeout), `"dec"` (Ramakrishnan and
    /// Jain's DECbit rule: the receiver copies the congestion bit into its ACK; every two
    /// round trips the window becomes `0.875 cwnd` if at least half the ACKs of the last
    /// window carried the bit, else `cwnd + 1`; one segment after a timeout; use with
    /// `aqm = { kind = "decbit" }`).
    ///
    /// Unit: name · Default: `"newreno"` · Example: `cc = "dctcp"`
    pub cc: Option<CcConfig>,
    /// SACK blocks (RFC 2018) and SACK-based loss recovery (RFC 6675: scoreboard, `pipe`,
    /// several holes repaired per round trip); false = NewReno's cumulative-ACK recovery
    /// (RFC 6582, one hole per round trip).
    ///
    /// Unit: bool · Default: true · Example: `sack = false`
    pub sack: Option<bool>,
    /// ACK every second in-order segment or after this delay (RFC 1122, RFC 5681 §4.2);
    /// out-of-order segments and gap fills are acknowledged at once; `"0s"` = off.
    ///
    /// Unit: duration · Default: off · Example: `delayed_ack = "200us"`
    pub delayed_ack: Option<String>,
    /// Slow-start increase per ACK at most this many segments (RFC 3465 `L`, RFC 5681 §3.1);
    /// 0 = no limit.
    ///
    /// Unit: segments · Default: 2 · Example: `abc_limit = 1`
    pub abc_limit: Option<u32>,
    /// Segments leave no closer than their size at 2x (slow start) or 1.2x (avoidance) cwnd
    /// per smoothed RTT, as Linux with `fq` (`tcp_pacing_ss_ratio` / `tcp_pacing_ca_ratio`);
    /// no pacing before the first RTT sample.
    ///
    /// Unit: bool · Default: false · Example: `pacing = true`
    pub pacing: Option<bool>,
    /// Payload per segment.
    ///
    /// Unit: size · Default: `"1460B"` · Example: `mss = "9000B"`
    pub mss: Option<String>,
    /// Header bytes per segment (also the ACK size).
    ///
    /// Unit: size · Default: `"40B"` · Example: `header = "64B"`
    pub header: Option<String>,
    /// Initial window.
    ///
    /// Unit: segments · Default: 10 · Example: `initial_cwnd = 4`
    pub initial_cwnd: Option<u32>,
    /// Minimum RTO: above zero, at most `rto_max`.
    ///
    /// Unit: duration · Default: `"1ms"` · Example: `rto_min = "200ms"`
    pub rto_min: Option<String>,
    /// The RTO before the first RTT sample: between `rto_min` and `rto_max`.
    ///
    /// Unit: duration · Default: `"1s"` · Example: `rto_initial = "3ms"`
    pub rto_initial: Option<String>,
    /// Maximum backed-off RTO: above zero.
    ///
    /// Unit: duration · Default: `"60s"` · Example: `rto_max = "1s"`
    pub rto_max: Option<String>,
    /// Timeouts in a row without progress, then the flow is given up (marked failed,
    /// `fail_reason = "retry_limit"`; Linux `tcp_retries2`).
    ///
    /// Unit: count · Default: 15 · Example: `max_retries = 3`
    pub max_retries: Option<u32>,
    /// DCTCP's EWMA gain `g` (`cc = "dctcp"` only).
    ///
    /// Unit: number in (0, 1] · Default: 1/16 · Example: `dctcp_g = 0.0625`
    pub dctcp_g: Option<f64>,
    /// Sets `sack_blocks`, `sack_option_bytes`, `rtt_sampling`, `recovery`, `recovery_exit`,
    /// `ssthresh_from`, `recovery_rto` and `partial_ack_retransmit` together (a field given
    /// explicitly wins): `"ns3"` as ns-3 3.44 with `Timestamp = false` (4 blocks, option
    /// bytes, Karn, PRR, ssthresh, pipe, keep, true), `"linux"` as Linux with timestamps (3
    /// blocks, option bytes, echo, PRR, ssthresh, cwnd, restart, false); `"netstep"` the
    /// defaults. Without SACK a profile sets the RTT sampling, the exit rule, `ssthresh_from`
    /// and `recovery_rto` only. Both profiles open
    /// with a handshake: `"ns3"` with 8 option bytes and a 3 s SYN timeout, `"linux"` with 20
    /// and 1 s; and set `abc_limit`: 1 for `"ns3"` (`TcpNewReno::SlowStart`), 0 for
    /// `"linux"` (`tcp_slow_start`).
    ///
    /// Unit: `"netstep"`, `"ns3"` or `"linux"` · Default: `"netstep"` · Example:
    /// `profile = "ns3"`
    pub profile: Option<TcpProfile>,
    /// SACK blocks per ACK, 1-4 (RFC 2018: the block holding the segment that triggered the
    /// ACK first, then those of the most recently received out-of-order segments); ns-3 sends
    /// up to 4 without timestamps and 3 with them, Linux 3 (timestamps on). Needs `sack`.
    ///
    /// Unit: count · Default: 1 · Example: `sack_blocks = 4`
    pub sack_blocks: Option<u8>,
    /// An ACK carrying SACK blocks grows by the option: 2 bytes plus 8 per block, padded to a
    /// multiple of 4 (12, 20, 28, 36 bytes), as in ns-3 and Linux.
    ///
    /// Unit: bool · Default: false (every ACK is `header` bytes) · Example:
    /// `sack_option_bytes = true`
    pub sack_option_bytes: Option<bool>,
    /// RTT samples: `"echo"` (each ACK echoes a send time, as the timestamp option: Linux, and
    /// ns-3 with `Timestamp = true`) or `"karn"` (no timestamps: the first-sent time of the
    /// oldest outstanding segment once acknowledged, never a retransmitted one, and any ACK of
    /// new data drops the RTO's backoff: ns-3 3.44's `EstimateRtt` and `NewAck`; with a
    /// handshake the SYN-ACK's sample runs from the first SYN, retransmitted or not, as ns-3's
    /// send history keeps it).
    ///
    /// Unit: `"echo"` or `"karn"` · Default: `"echo"` · Example: `rtt_sampling = "karn"`
    pub rtt_sampling: Option<RttSamplingConfig>,
    /// The window during SACK fast recovery: `"classic"` (`ssthresh` at once, sending clocked
    /// by `pipe`: RFC 6675, ns-3's `TcpClassicRecovery`), `"prr"` (Proportional Rate
    /// Reduction, RFC 6937, as Linux) or `"prr_ns3"` (PRR with ns-3 3.44's accounting, its
    /// default `TcpPrrRecovery`: an ACK that SACKs new data counts one segment more, one that
    /// also advances the cumulative point updates twice). Without SACK, recovery is RFC
    /// 6582's window inflation. Both PRRs need `sack`.
    ///
    /// Unit: `"classic"`, `"prr"` or `"prr_ns3"` · Default: `"classic"` · Example:
    /// `recovery = "prr"`
    pub recovery: Option<RecoveryConfig>,
    /// The window when fast recovery ends: `"flight"` (`min(ssthresh, FlightSize + 1)`, RFC
    /// 6582 option 1; CUBIC and BBR keep their own rule) or `"ssthresh"` (then the ending
    /// ACK's ordinary growth: ns-3 3.44, Linux).
    ///
    /// Unit: `"flight"` or `"ssthresh"` · Default: `"flight"` · Example:
    /// `recovery_exit = "ssthresh"`
    pub recovery_exit: Option<RecoveryExitConfig>,
    /// What a loss halves into `ssthresh` (entering fast recovery, a timeout): `"flight"`
    /// (`FlightSize`, RFC 5681 eq. 4), `"pipe"` (RFC 6675's `pipe`: ns-3 3.44's
    /// `BytesInFlight()`) or `"cwnd"` (Linux's `tcp_reno_ssthresh`); with `"pipe"` and
    /// `"cwnd"` a repeated timeout keeps `ssthresh` (RFC 5681 §3.1, ns-3, Linux).
    ///
    /// Unit: `"flight"`, `"pipe"` or `"cwnd"` · Default: `"flight"` · Example:
    /// `ssthresh_from = "pipe"`
    pub ssthresh_from: Option<SsthreshFromConfig>,
    /// The retransmission timer in fast recovery: `"restart"` (the fast retransmit and every
    /// partial ACK restart it: Linux) or `"keep"` (the fast retransmit leaves it running and
    /// only the first partial ACK restarts it: RFC 6298 §5.1, RFC 6582 §4 "Impatient", ns-3
    /// 3.44).
    ///
    /// Unit: `"restart"` or `"keep"` · Default: `"restart"` · Example:
    /// `recovery_rto = "keep"`
    pub recovery_rto: Option<RecoveryRtoConfig>,
    /// A partial ACK in SACK recovery retransmits at once, whatever the window, the first
    /// lost segment not yet retransmitted, else the new head unless already retransmitted
    /// (ns-3 3.44's `ProcessAck`; RFC 6675 and Linux wait until the scoreboard says lost).
    /// Needs `sack`.
    ///
    /// Unit: bool · Default: false · Example: `partial_ack_retransmit = true`
    pub partial_ack_retransmit: Option<bool>,
    /// A three-way handshake before data: a SYN (`header` + `syn_options` bytes), answered by
    /// a SYN-ACK of the same size, then the third segment, a header-only ACK, just ahead of
    /// the initial window (as ns-3 3.44 and Linux send it; the FIN rides on the last data
    /// segment at no cost, as ns-3 and Linux send it after a last write). A flow's row says
    /// when it completed (`handshake_ns`: the SYN-ACK's arrival).
    ///
    /// Unit: bool · Default: false · Example: `handshake = true`
    pub handshake: Option<bool>,
    /// Option bytes a SYN and a SYN-ACK carry beyond `header`: ns-3 3.44 without timestamps
    /// 8 (window scale, SACK permitted, padded), Linux 20 (MSS, SACK permitted, timestamps,
    /// window scale).
    ///
    /// Unit: size · Default: `"0B"` · Example: `syn_options = "8B"`
    pub syn_options: Option<String>,
    /// The first SYN's retransmission timeout, doubled at each retry up to `rto_max`: 1 s in
    /// RFC 6298 and Linux, 3 s in ns-3 (`ConnTimeout`).
    ///
    /// Unit: duration · Default: `"1s"` · Example: `syn_rto = "3s"`
    pub syn_rto: Option<String>,
    /// SYN retransmissions before the flow is given up (`fail_reason = "syn_retries"`): Linux
    /// `tcp_syn_retries` and ns-3 `ConnCount`, both 6.
    ///
    /// Unit: count · Default: 6 · Example: `syn_retries = 2`
    pub syn_retries: Option<u32>,
    /// Where `fct_ns` starts with a handshake: `"first_data"` (the SYN-ACK's arrival, when the
    /// first data segment leaves) or `"connection_start"` (the flow's start, when its SYN
    /// leaves). `ideal_fct_ns` stays the data's either way.
    ///
    /// Unit: `"first_data"` or `"connection_start"` · Default: `"first_data"` · Example:
    /// `fct_from = "connection_start"`
    pub fct_from: Option<FctFromConfig>,
}

/// `fct_from`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum FctFromConfig {
    /// The handshake's completion.
    FirstData,
    /// The flow's start.
    ConnectionStart,
}

/// `profile`: a preset of the loss-recovery details.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TcpProfile {
    /// netstep's defaults.
    Netstep,
    /// ns-3 3.44 with `Timestamp = false`.
    Ns3,
    /// Linux with timestamps.
    Linux,
}

/// `rtt_sampling`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RttSamplingConfig {
    /// Echoed send times.
    Echo,
    /// Karn's rule.
    Karn,
}

/// `recovery`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryConfig {
    /// RFC 6675.
    Classic,
    /// RFC 6937.
    Prr,
    /// RFC 6937 with ns-3 3.44's accounting.
    PrrNs3,
}

/// `recovery_exit`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryExitConfig {
    /// `min(ssthresh, FlightSize + 1)`.
    Flight,
    /// `ssthresh`.
    Ssthresh,
}

/// `ssthresh_from`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum SsthreshFromConfig {
    /// `FlightSize`.
    Flight,
    /// RFC 6675 `pipe`.
    Pipe,
    /// The congestion window.
    Cwnd,
}

/// `recovery_rto`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum RecoveryRtoConfig {
    /// The fast retransmit restarts the timer.
    Restart,
    /// The timer runs on.
    Keep,
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
    /// The handshake's fields over `spec` (the profile's `p` where the field is not set).
    fn connection(
        &self,
        spec: TcpSpec,
        p: &ProfileSettings,
        path: &FieldPath,
    ) -> Result<TcpSpec, Invalid> {
        let (handshake, options, syn_rto) = (p.handshake, p.syn_option_bytes, p.syn_rto);
        let options = size_at(
            &self.syn_options,
            path.key("syn_options"),
            Bytes(options as u64),
        )?;
        if options.0 > 40 {
            return Err(Invalid::new(
                path.key("syn_options"),
                format!("TCP options hold at most 40 B, got {options}"),
            ));
        }
        let syn_rto = duration_at(&self.syn_rto, path.key("syn_rto"), syn_rto)?;
        if syn_rto == SimTime::ZERO {
            return Err(Invalid::new(path.key("syn_rto"), "must be positive"));
        }
        Ok(TcpSpec {
            handshake: self.handshake.unwrap_or(handshake),
            syn_option_bytes: options.0 as u32,
            syn_rto,
            syn_retries: self.syn_retries.unwrap_or(spec.syn_retries),
            fct_from: match self.fct_from {
                None | Some(FctFromConfig::FirstData) => FctFrom::FirstData,
                Some(FctFromConfig::ConnectionStart) => FctFrom::ConnectionStart,
            },
            ..spec
        })
    }

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
        // What the profile sets, each unless given explicitly.
        let sack = self.sack.unwrap_or(d.sack);
        let p = self
            .profile
            .unwrap_or(TcpProfile::Netstep)
            .settings(&d, sack);
        let spec = TcpSpec {
            sack,
            delayed_ack: (delayed_ack > SimTime::ZERO).then_some(delayed_ack),
            // ns-3's NewReno grows one segment per ACK in slow start, Linux by every segment
            // acknowledged.
            abc_limit: self.abc_limit.unwrap_or(p.abc_limit),
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
        let spec = TcpSpec {
            sack_blocks: self.sack_blocks.unwrap_or(p.sack_blocks),
            sack_option_bytes: self.sack_option_bytes.unwrap_or(p.sack_option_bytes),
            rtt_sampling: self.rtt_sampling.map_or(p.rtt_sampling, |r| match r {
                RttSamplingConfig::Echo => RttSampling::Echo,
                RttSamplingConfig::Karn => RttSampling::Karn,
            }),
            recovery: self.recovery.map_or(p.recovery, |r| match r {
                RecoveryConfig::Classic => Recovery::Classic,
                RecoveryConfig::Prr => Recovery::Prr,
                RecoveryConfig::PrrNs3 => Recovery::PrrNs3,
            }),
            recovery_exit: self.recovery_exit.map_or(p.recovery_exit, |r| match r {
                RecoveryExitConfig::Flight => RecoveryExit::Flight,
                RecoveryExitConfig::Ssthresh => RecoveryExit::Ssthresh,
            }),
            ssthresh_from: self.ssthresh_from.map_or(p.ssthresh_from, |r| match r {
                SsthreshFromConfig::Flight => SsthreshFrom::Flight,
                SsthreshFromConfig::Pipe => SsthreshFrom::Pipe,
                SsthreshFromConfig::Cwnd => SsthreshFrom::Cwnd,
            }),
            recovery_restarts_rto: self
                .recovery_rto
                .map_or(p.restart_rto, |r| r == RecoveryRtoConfig::Restart),
            partial_ack_retransmit: self
                .partial_ack_retransmit
                .unwrap_or(p.partial_ack_retransmit),
            ..spec
        };
        let spec = self.connection(spec, &p, path)?;
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
    if !(1..=4).contains(&spec.sack_blocks) {
        return Err(Invalid::new(
            path.key("sack_blocks"),
            format!(
                "must be 1 to 4 (a TCP option holds at most four), got {}",
                spec.sack_blocks
            ),
        ));
    }
    let sack_only = [
        (spec.recovery != Recovery::Classic, "recovery"),
        (spec.sack_blocks > 1, "sack_blocks"),
        (spec.partial_ack_retransmit, "partial_ack_retransmit"),
    ];
    if !spec.sack
        && let Some(&(_, field)) = sack_only.iter().find(|(set, _)| *set)
    {
        return Err(Invalid::new(
            path.key(field),
            "applies to SACK recovery; this transport has sack = false",
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

//! Congestion control, separate from loss recovery: the reliable TCP sender
//! ([`crate::transport::tcp`]) decides *what* to send (new data, which hole to repair) and
//! asks a [`CongestionControl`] *how much* may be in flight. One file per algorithm, each
//! implementing the [`Algorithm`] trait, dispatched through the enum (no `dyn`). The sender keeps delivery-rate samples for algorithms that ask
//! for them ([`CcSpec::needs_rate_samples`], BBR) and passes them in [`AckSample::rate`].
//!
//! The sender reports events in segments:
//! - [`CongestionControl::on_ack`]: new data cumulatively acknowledged outside loss recovery,
//! - [`CongestionControl::on_congestion`]: loss detected (entry into fast recovery),
//! - [`CongestionControl::on_recovery_exit`]: the ACK that ends fast recovery,
//! - [`CongestionControl::on_timeout`]: a retransmission timeout.
//!
//! and reads [`CongestionControl::cwnd`] and the pacing hook
//! [`CongestionControl::pacing_rate`].

mod bbr;
mod cubic;
mod dctcp;
mod dec;
mod generic;
mod jk;
mod newreno;

pub use bbr::Bbr;
pub use cubic::Cubic;
pub use dctcp::Dctcp;
pub use dec::Dec;
pub use generic::Generic;
pub use jk::Jk;
pub use newreno::NewReno;

use crate::units::SimTime;

/// Which congestion control a TCP flow uses, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcSpec {
    /// RFC 5681 slow start and congestion avoidance, RFC 6582 / RFC 6675 reductions.
    NewReno,
    /// CUBIC (RFC 9438).
    Cubic,
    /// DCTCP (RFC 8257): ECN-capable, window cut by `alpha / 2` per marked round trip.
    Dctcp {
        /// EWMA gain of `alpha`, parts per million (RFC 8257 default 1/16 = 62,500).
        g_ppm: u32,
    },
    /// REAL's generic source: a fixed window (the initial window), no congestion control.
    Generic,
    /// REAL's JK source: Jacobson-Karels slow start and congestion avoidance.
    Jk,
    /// REAL's DEC source: the DECbit window rule.
    Dec,
    /// BBR version 1 (Cardwell et al. 2016): paced at the estimated bottleneck bandwidth.
    Bbr,
}

impl CcSpec {
    /// DCTCP's default EWMA gain `g` (RFC 8257: 1/16).
    pub const DCTCP_DEFAULT_G: f64 = 1.0 / 16.0;
    /// The name used in scenarios and in `flows.parquet` (`transport` is `tcp_<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            CcSpec::NewReno => "newreno",
            CcSpec::Dctcp { .. } => "dctcp",
            CcSpec::Cubic => "cubic",
            CcSpec::Generic => "generic",
            CcSpec::Jk => "jk",
            CcSpec::Dec => "dec",
            CcSpec::Bbr => "bbr",
        }
    }
    /// The `transport` value in `flows.parquet`: `tcp_<name>`.
    pub const fn transport_name(self) -> &'static str {
        match self {
            CcSpec::NewReno => "tcp_newreno",
            CcSpec::Dctcp { .. } => "tcp_dctcp",
            CcSpec::Cubic => "tcp_cubic",
            CcSpec::Generic => "tcp_generic",
            CcSpec::Jk => "tcp_jk",
            CcSpec::Dec => "tcp_dec",
            CcSpec::Bbr => "tcp_bbr",
        }
    }
    /// Whether the sender keeps per-segment delivery-rate samples for this algorithm.
    pub const fn needs_rate_samples(self) -> bool {
        matches!(self, CcSpec::Bbr)
    }
    /// REAL's sources (generic, JK, DEC) recover by go-back-N after a timeout only: no fast
    /// retransmit, no SACK.
    pub const fn go_back_n_only(self) -> bool {
        matches!(self, CcSpec::Generic | CcSpec::Jk | CcSpec::Dec)
    }
    /// Whether data segments are sent ECN-capable (ECT(0)).
    pub const fn ecn_capable(self) -> bool {
        matches!(self, CcSpec::Dctcp { .. })
    }
}

/// What an acknowledgment of new data tells the congestion control.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// Segments newly acknowledged cumulatively.
    pub acked: u32,
    /// When the ACK arrived.
    pub now: SimTime,
    /// The RTT it measured.
    pub rtt: SimTime,
    /// Slow-start increase limit per ACK in segments (RFC 3465 `L`; 0 = no limit).
    pub abc_limit: u32,
    /// The ACK echoed congestion experienced (ECE).
    pub ece: bool,
    /// The ACK carries the DECbit congestion bit (copied by the receiver from the data).
    pub congestion: bool,
    /// The cumulative ACK point after this ACK (segments).
    pub una: u32,
    /// One past the highest segment sent so far.
    pub high: u32,
    /// Segments delivered so far (cumulatively acknowledged or SACKed).
    pub delivered: u32,
    /// A delivery-rate sample (for algorithms that ask for them, see
    /// [`CcSpec::needs_rate_samples`]).
    pub rate: Option<RateSample>,
}

impl AckSample {
    /// The slow-start window increase for this ACK in segments: the newly acknowledged
    /// segments, at most `abc_limit` of them when a limit is set (RFC 3465).
    #[inline]
    pub fn slow_start_increase(&self) -> f64 {
        let acked = self.acked as f64;
        if self.abc_limit == 0 {
            acked
        } else {
            acked.min(self.abc_limit as f64)
        }
    }
}

#[cfg(test)]
impl AckSample {
    /// For unit tests: `acked` segments at time zero with a 1 ps RTT, no marks, no limit, no
    /// rate sample; vary the rest by struct update.
    pub(crate) fn test(acked: u32) -> AckSample {
        AckSample {
            acked,
            now: SimTime::ZERO,
            rtt: SimTime(1),
            abc_limit: 0,
            ece: false,
            congestion: false,
            una: 0,
            high: 0,
            delivered: 0,
            rate: None,
        }
    }
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation): the segments
/// delivered between sending the most recently delivered segment and its acknowledgment, over
/// the longer of the send and ACK intervals.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// Delivery rate, segments per second.
    pub rate: f64,
    /// Segments delivered when that segment was sent (round-trip counting).
    pub prior_delivered: u32,
}

/// One congestion-control algorithm: what the reliable sender tells it and asks of it, in
/// segments. Each algorithm implements it in its own file; [`CongestionControl`] dispatches
/// to them by `match` (enum dispatch, no `dyn`).
pub trait Algorithm {
    /// Congestion window in segments.
    fn cwnd(&self) -> f64;
    /// Slow-start threshold in segments (infinite for algorithms without one).
    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }
    /// Puts `ssthresh` back to `ssthresh` (a repeated timeout that must not lower it); a no-op
    /// for algorithms without one.
    fn keep_ssthresh(&mut self, _ssthresh: f64) {}
    /// New data acknowledged outside loss recovery.
    fn on_ack(&mut self, ack: &AckSample);
    /// Loss detected with `flight` segments outstanding: reduce (fast recovery starts).
    fn on_congestion(&mut self, flight: u32);
    /// Fast recovery ended by an ACK that leaves `flight` segments outstanding (`None`: the
    /// window goes to `ssthresh`, `recovery_exit = "ssthresh"`).
    fn on_recovery_exit(&mut self, _flight: Option<u32>) {}
    /// A retransmission timeout with `flight` segments outstanding.
    fn on_timeout(&mut self, flight: u32);
    /// The rate (bits per second) at which the sender spaces its segments, or `None` to send
    /// as the window allows.
    fn pacing_rate(&self) -> Option<f64> {
        None
    }
    /// DCTCP's `alpha` (`None` for algorithms without one).
    fn alpha(&self) -> Option<f64> {
        None
    }
    /// CUBIC's `W_max` (`None` for other algorithms or before it is set).
    fn w_max(&self) -> Option<f64> {
        None
    }
    /// BBR's bottleneck bandwidth estimate in bit/s (`None` for other algorithms or before
    /// a sample).
    fn btl_bw_bps(&self) -> Option<f64> {
        None
    }
}

/// Evaluates `$body` with `$c` bound to the algorithm inside any [`CongestionControl`]
/// variant (the one place that lists them for dispatch).
macro_rules! each_algorithm {
    ($cc:expr, $c:ident => $body:expr) => {
        match $cc {
            CongestionControl::NewReno($c) => $body,
            CongestionControl::Dctcp($c) => $body,
            CongestionControl::Cubic($c) => $body,
            CongestionControl::Generic($c) => $body,
            CongestionControl::Jk($c) => $body,
            CongestionControl::Dec($c) => $body,
            CongestionControl::Bbr($c) => $body,
        }
    };
}

/// The state of one flow's congestion control.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    /// NewReno.
    NewReno(NewReno),
    /// DCTCP.
    Dctcp(Dctcp),
    /// CUBIC.
    Cubic(Cubic),
    /// REAL's generic source.
    Generic(Generic),
    /// REAL's JK source.
    Jk(Jk),
    /// REAL's DEC source.
    Dec(Dec),
    /// BBR.
    Bbr(Box<Bbr>),
}

impl CongestionControl {
    /// A congestion control starting with `initial_cwnd` segments of `segment_bits` each on
    /// the wire.
    pub fn new(spec: CcSpec, initial_cwnd: u32, segment_bits: f64) -> CongestionControl {
        match spec {
            CcSpec::Bbr => CongestionControl::Bbr(Box::new(Bbr::new(initial_cwnd, segment_bits))),
            CcSpec::NewReno => CongestionControl::NewReno(NewReno::new(initial_cwnd)),
            CcSpec::Cubic => CongestionControl::Cubic(Cubic::new(initial_cwnd)),
            CcSpec::Generic => CongestionControl::Generic(Generic::new(initial_cwnd)),
            CcSpec::Jk => CongestionControl::Jk(Jk::new(initial_cwnd)),
            CcSpec::Dec => CongestionControl::Dec(Dec::new(initial_cwnd)),
            CcSpec::Dctcp { g_ppm } => {
                CongestionControl::Dctcp(Dctcp::new(initial_cwnd, g_ppm as f64 / 1e6))
            }
        }
    }
    /// Congestion window in segments.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        each_algorithm!(self, c => c.cwnd())
    }
    /// DCTCP's `alpha` (`None` for algorithms without one).
    pub fn alpha(&self) -> Option<f64> {
        each_algorithm!(self, c => c.alpha())
    }
    /// CUBIC's `W_max` (`None` for other algorithms or before it is set).
    pub fn w_max(&self) -> Option<f64> {
        each_algorithm!(self, c => c.w_max())
    }
    /// Slow-start threshold in segments.
    pub fn ssthresh(&self) -> f64 {
        each_algorithm!(self, c => c.ssthresh())
    }
    /// New data acknowledged outside loss recovery.
    #[inline]
    pub fn on_ack(&mut self, ack: &AckSample) {
        each_algorithm!(self, c => c.on_ack(ack))
    }
    /// Loss detected with `flight` segments outstanding: reduce (fast recovery starts).
    pub fn on_congestion(&mut self, flight: u32) {
        each_algorithm!(self, c => c.on_congestion(flight))
    }
    /// Fast recovery ended by an ACK that leaves `flight` segments outstanding (`None`: the
    /// window goes to `ssthresh`).
    pub fn on_recovery_exit(&mut self, flight: Option<u32>) {
        each_algorithm!(self, c => c.on_recovery_exit(flight))
    }
    /// A retransmission timeout with `flight` segments outstanding.
    pub fn on_timeout(&mut self, flight: u32) {
        each_algorithm!(self, c => c.on_timeout(flight))
    }
    /// Puts `ssthresh` back to `ssthresh` ([`Algorithm::keep_ssthresh`]).
    pub fn keep_ssthresh(&mut self, ssthresh: f64) {
        each_algorithm!(self, c => c.keep_ssthresh(ssthresh))
    }
    /// Pacing hook: the rate (bits per second) at which the sender spaces its segments, or
    /// `None` to send as the window allows. BBR paces at `pacing_gain x BtlBw`; the
    /// window-based algorithms do not pace by themselves (`pacing = true` paces any of them
    /// from cwnd / srtt).
    pub fn pacing_rate(&self) -> Option<f64> {
        each_algorithm!(self, c => c.pacing_rate())
    }
    /// BBR's bottleneck bandwidth estimate in bit/s (`None` for other algorithms or before
    /// a sample).
    pub fn btl_bw_bps(&self) -> Option<f64> {
        each_algorithm!(self, c => c.btl_bw_bps())
    }
}

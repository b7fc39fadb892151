//! Congestion controls of the TCP sender ([`super::tcp`]), one file per algorithm, dispatched
//! through the [`CongestionControl`] enum (no `dyn`).
//!
//! The split: the reliable sender owns the sequence space, the SACK scoreboard, loss detection
//! and recovery, the RTO and the retry limit; it asks the congestion control only *how much*
//! may be outstanding ([`CongestionControl::cwnd`], in segments, compared with the RFC 6675
//! `pipe`) and *how fast* it may leave ([`CongestionControl::pacing_rate`]). It tells the
//! congestion control what happened through four events:
//!
//! - [`CongestionControl::on_ack`] for every acknowledgement that cumulatively acknowledges or
//!   selectively acknowledges new segments, with an [`AckSample`]: segments newly acked and
//!   newly SACKed, the RTT sample (timestamps or Karn-valid), the ECN-echo flag, the pipe, the
//!   running count of delivered segments and whether loss recovery is in progress;
//! - [`CongestionControl::on_congestion_event`] when fast recovery starts (with the flight
//!   size, for RFC 5681 equation 4);
//! - [`CongestionControl::on_recovery_exit`] when a cumulative ACK covers the recovery point;
//! - [`CongestionControl::on_rto`] on a retransmission timeout.
//!
//! Adding an algorithm is one file plus one variant here and one arm in each method:
//!
//! - CUBIC: window growth as a function of the time since the last congestion event
//!   (`AckSample::now`) and `W_max` (saved in `on_congestion_event`); RTT samples for the
//!   TCP-friendly region.
//! - DCTCP: `AckSample::ecn_echo` and `acked` give the per-window fraction of marked bytes
//!   (`alpha`), reduced once per window; [`CongestionControl::ecn_capable`] returns true so
//!   data leaves as ECT(0) and the receiver echoes CE marks (`Packet::ECN_ECHO`).
//! - BBR: `AckSample::delivered` and `now` give delivery-rate samples (with the per-segment
//!   delivered stamps kept by the sender when needed), `rtt` the min-RTT filter; it returns a
//!   pacing rate, which the sender already honours with a pacing timer.
//! - DCQCN / HPCC / TIMELY are rate-based: they return `pacing_rate` and a large `cwnd`;
//!   the feedback packets they need (CNP, INT) reach the sender through `Sender::on_feedback`.

mod newreno;

pub use newreno::NewReno;

use crate::units::{BitsPerSec, SimTime};

/// Congestion-control choice of a TCP flow (scenario key `cc`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum CcSpec {
    /// NewReno window rules (RFC 5681, RFC 6582), with RFC 3465 ABC in slow start.
    #[default]
    NewReno,
}

impl CcSpec {
    /// Name in scenario files and traces (`newreno`).
    pub const fn name(self) -> &'static str {
        match self {
            CcSpec::NewReno => "newreno",
        }
    }
}

/// What one acknowledgement told the sender.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    /// Segments newly acknowledged cumulatively.
    pub acked: u32,
    /// Segments newly selectively acknowledged (SACK).
    pub sacked: u32,
    /// RTT sample, if this ACK gave a valid one.
    pub rtt: Option<SimTime>,
    /// The ACK carried ECN-echo.
    pub ecn_echo: bool,
    /// Segments in flight (RFC 6675 `pipe`; without SACK the flight size) after the ACK.
    pub pipe: u32,
    /// Segments delivered so far (cumulatively acked + SACKed), for delivery-rate samples.
    pub delivered: u64,
    /// Loss recovery is in progress (window growth rules usually pause).
    pub in_recovery: bool,
    /// Arrival time of the ACK.
    pub now: SimTime,
}

/// A congestion control: one variant per algorithm.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    /// NewReno.
    NewReno(NewReno),
}

impl CongestionControl {
    /// A fresh controller: `initial_cwnd` segments, slow start limited to `abc_limit` segments
    /// per ACK (RFC 3465 L; 0 = unlimited).
    pub fn new(spec: CcSpec, initial_cwnd: u32, abc_limit: u32) -> CongestionControl {
        match spec {
            CcSpec::NewReno => CongestionControl::NewReno(NewReno::new(initial_cwnd, abc_limit)),
        }
    }
    /// An acknowledgement with new information arrived.
    #[inline]
    pub fn on_ack(&mut self, sample: &AckSample) {
        match self {
            CongestionControl::NewReno(c) => c.on_ack(sample),
        }
    }
    /// Fast recovery starts with `flight` segments outstanding.
    #[inline]
    pub fn on_congestion_event(&mut self, flight: u32, now: SimTime) {
        match self {
            CongestionControl::NewReno(c) => c.on_congestion_event(flight, now),
        }
    }
    /// Fast recovery ended; `flight` segments are still outstanding.
    #[inline]
    pub fn on_recovery_exit(&mut self, flight: u32, now: SimTime) {
        match self {
            CongestionControl::NewReno(c) => c.on_recovery_exit(flight, now),
        }
    }
    /// The retransmission timer expired with `flight` segments outstanding.
    #[inline]
    pub fn on_rto(&mut self, flight: u32, now: SimTime) {
        match self {
            CongestionControl::NewReno(c) => c.on_rto(flight, now),
        }
    }
    /// Congestion window in segments.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match self {
            CongestionControl::NewReno(c) => c.cwnd(),
        }
    }
    /// Slow-start threshold in segments (infinite before the first congestion event).
    #[inline]
    pub fn ssthresh(&self) -> f64 {
        match self {
            CongestionControl::NewReno(c) => c.ssthresh(),
        }
    }
    /// Pacing rate: `Some` makes the sender space its segments at this rate.
    #[inline]
    pub fn pacing_rate(&self) -> Option<BitsPerSec> {
        match self {
            CongestionControl::NewReno(_) => None,
        }
    }
    /// Data should leave ECN-capable (ECT(0)).
    #[inline]
    pub fn ecn_capable(&self) -> bool {
        match self {
            CongestionControl::NewReno(_) => false,
        }
    }
}

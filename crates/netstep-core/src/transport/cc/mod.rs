//! Congestion control, separate from loss recovery: the reliable TCP sender
//! ([`crate::transport::tcp`]) decides *what* to send (new data, which hole to repair) and
//! asks a [`CongestionControl`] *how much* may be in flight. One file per algorithm, dispatched
//! through the enum (no `dyn`); CUBIC, DCTCP, BBR and the RDMA family join as further variants.
//!
//! The sender reports events in segments:
//! - [`CongestionControl::on_ack`]: new data cumulatively acknowledged outside loss recovery,
//! - [`CongestionControl::on_congestion`]: loss detected (entry into fast recovery),
//! - [`CongestionControl::on_recovery_exit`]: the ACK that ends fast recovery,
//! - [`CongestionControl::on_timeout`]: a retransmission timeout.
//!
//! and reads [`CongestionControl::cwnd`] and the pacing hook
//! [`CongestionControl::pacing_rate`].

mod newreno;

pub use newreno::NewReno;

use crate::units::SimTime;

/// Which congestion control a TCP flow uses, with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcSpec {
    /// RFC 5681 slow start and congestion avoidance, RFC 6582 / RFC 6675 reductions.
    NewReno,
}

impl CcSpec {
    /// The name used in scenarios and in `flows.parquet` (`transport` is `tcp_<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            CcSpec::NewReno => "newreno",
        }
    }
    /// The `transport` value in `flows.parquet`: `tcp_<name>`.
    pub const fn transport_name(self) -> &'static str {
        match self {
            CcSpec::NewReno => "tcp_newreno",
        }
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
}

/// The state of one flow's congestion control.
#[derive(Clone, Debug)]
pub enum CongestionControl {
    /// NewReno.
    NewReno(NewReno),
}

impl CongestionControl {
    /// A congestion control starting with `initial_cwnd` segments.
    pub fn new(spec: CcSpec, initial_cwnd: u32) -> CongestionControl {
        match spec {
            CcSpec::NewReno => CongestionControl::NewReno(NewReno::new(initial_cwnd)),
        }
    }
    /// Congestion window in segments.
    #[inline]
    pub fn cwnd(&self) -> f64 {
        match self {
            CongestionControl::NewReno(c) => c.cwnd,
        }
    }
    /// Slow-start threshold in segments.
    pub fn ssthresh(&self) -> f64 {
        match self {
            CongestionControl::NewReno(c) => c.ssthresh,
        }
    }
    /// New data acknowledged outside loss recovery.
    #[inline]
    pub fn on_ack(&mut self, ack: &AckSample) {
        match self {
            CongestionControl::NewReno(c) => c.on_ack(ack),
        }
    }
    /// Loss detected with `flight` segments outstanding: reduce (fast recovery starts).
    pub fn on_congestion(&mut self, flight: u32) {
        match self {
            CongestionControl::NewReno(c) => c.on_congestion(flight),
        }
    }
    /// Fast recovery ended by an ACK that leaves `flight` segments outstanding.
    pub fn on_recovery_exit(&mut self, flight: u32) {
        match self {
            CongestionControl::NewReno(c) => c.on_recovery_exit(flight),
        }
    }
    /// A retransmission timeout with `flight` segments outstanding.
    pub fn on_timeout(&mut self, flight: u32) {
        match self {
            CongestionControl::NewReno(c) => c.on_timeout(flight),
        }
    }
    /// Pacing hook: the rate (bits per second) at which the sender spaces its segments, or
    /// `None` to send as the window allows. NewReno does not pace.
    pub fn pacing_rate(&self) -> Option<f64> {
        match self {
            CongestionControl::NewReno(_) => None,
        }
    }
}

//! RDMA (RoCEv2-style) transport: a rate-based sender with go-back-N loss recovery and a
//! receiver that acknowledges every packet, as in the HPCC simulator (Li et al. 2019, the
//! ns-3 RDMA model the m3, Parsimon and HPCC papers use). The rate control is a
//! [`RdmaCc`] variant, one file each: DCQCN, TIMELY, HPCC (which also bounds the bytes in
//! flight by its window and reads the per-hop telemetry its ACKs echo) and DCTCP.
//!
//! - The sender starts at its NIC's line rate and spaces packets at the current rate
//!   (`size x 8 / rate` between packet starts). Data packets are ECN-capable.
//! - The receiver accepts packets in order only (go-back-N): an in-order packet is
//!   acknowledged with the next expected sequence number, the ACK carrying the ECN echo when
//!   the packet arrived CE-marked (DCQCN's CNP, as the HPCC simulator sends it: a flag on the
//!   ACK); an out-of-order packet is dropped and answered with a NACK naming the expected
//!   packet, at most once per `nack_interval` for the same gap. With `ack_every = n` (the
//!   HPCC simulator's ACK interval) in-order packets are acknowledged once every `n` packets
//!   and at the last one; the ECN echo then reports a CE mark on any packet since the last
//!   ACK.
//! - A NACK sends the sender back to the named packet; a retransmission timeout (no progress
//!   for `rto`) back to the first unacknowledged one; `max_retries` timeouts in a row without
//!   progress give the flow up.
//! - With selective repeat instead, the receiver keeps packets that arrive out of order and
//!   the sender resends only the packet a NACK (or a timeout) names, then goes on with new
//!   data.

pub mod dcqcn;
pub mod dctcp;
pub mod hpcc;
mod receiver;
mod sender;
pub mod timely;

pub use receiver::RdmaReceiver;
pub use sender::{RdmaRate, RdmaSender};

use crate::units::{Bytes, SimTime};
use dcqcn::DcqcnSpec;
use dctcp::DctcpSpec;
use hpcc::HpccSpec;
use timely::TimelySpec;

/// Which rate control an RDMA flow uses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RdmaCc {
    /// DCQCN (Zhu et al. 2015), in the HPCC simulator's Mellanox variant.
    Dcqcn(DcqcnSpec),
    /// TIMELY (Mittal et al. 2015): RTT-gradient rate control.
    Timely(TimelySpec),
    /// HPCC (Li et al. 2019): rate and window from per-hop telemetry.
    Hpcc(HpccSpec),
    /// DCTCP's alpha steering a rate (the HPCC simulator's `CC_MODE 8`).
    Dctcp(DctcpSpec),
}

impl RdmaCc {
    /// The rate the sender never goes below, bits/s.
    pub fn min_rate_bps(&self) -> f64 {
        match self {
            RdmaCc::Dcqcn(d) => d.min_rate_bps,
            RdmaCc::Timely(t) => t.min_rate_bps,
            RdmaCc::Hpcc(h) => h.min_rate_bps,
            RdmaCc::Dctcp(d) => d.min_rate_bps,
        }
    }

    /// The `transport` value in `flows.parquet`.
    pub const fn transport_name(&self) -> &'static str {
        match self {
            RdmaCc::Dcqcn(_) => "rdma_dcqcn",
            RdmaCc::Timely(_) => "rdma_timely",
            RdmaCc::Hpcc(_) => "rdma_hpcc",
            RdmaCc::Dctcp(_) => "rdma_dctcp",
        }
    }
    /// True when the flow's data packets carry per-hop telemetry (HPCC).
    pub const fn telemetry(&self) -> bool {
        matches!(self, RdmaCc::Hpcc(_))
    }
}

/// How an RDMA flow recovers losses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The receiver drops out-of-order packets; the sender goes back to the missing one.
    GoBackN,
    /// The receiver keeps out-of-order packets; the sender resends only the missing one.
    SelectiveRepeat,
}

/// RDMA parameters of a flow.
#[derive(Clone, Debug, PartialEq)]
pub struct RdmaSpec {
    /// Payload bytes per packet.
    pub mtu_bytes: u32,
    /// Header bytes on every data packet.
    pub header_bytes: u32,
    /// Size of an ACK or NACK (the HPCC simulator's are 60 B, 88 B with HPCC's telemetry).
    pub ack_bytes: u32,
    /// Retransmission timeout (no progress for this long: go back to the first
    /// unacknowledged packet).
    pub rto: SimTime,
    /// Timeouts in a row without progress after which the flow is given up.
    pub max_retries: u32,
    /// The receiver sends at most one NACK per gap in this interval.
    pub nack_interval: SimTime,
    /// The receiver acknowledges in-order packets once every this many (1: every packet).
    pub ack_every: u32,
    /// Loss recovery.
    pub recovery: Recovery,
    /// Rate control.
    pub cc: RdmaCc,
    /// The highest rate the flow sends at, bit/s (the HPCC simulator's `MAX_RATE`): the
    /// sender starts at `min(line rate, max_rate)` and its rate control's increases stop
    /// there (DCQCN's target, as in that simulator, stops at the line rate); `None`: the NIC's
    /// line rate.
    pub max_rate_bps: Option<f64>,
    /// A bound on the payload bytes in flight for every rate control (the HPCC simulator's
    /// `HAS_WIN` / `FIXED_WIN` / `VAR_WIN`); `None`: none, except HPCC's own `rate x T`.
    pub window: Option<RdmaWindow>,
}

/// An RDMA sender's window: no new packet starts while the payload bytes in flight are at
/// least the window (the HPCC simulator's `IsWinBound`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdmaWindow {
    /// The window, bytes (`FIXED_WIN`).
    pub bytes: u64,
    /// Scale it by the current rate over the highest (`VAR_WIN`): `bytes x rate / max rate`,
    /// rounded down, at least 1 byte.
    pub variable: bool,
}

impl RdmaWindow {
    /// The window at `rate` with highest rate `max_rate` (bit/s), bytes.
    pub fn at(&self, rate: f64, max_rate: f64) -> u64 {
        if self.variable {
            ((self.bytes as f64 * rate / max_rate) as u64).max(1)
        } else {
            self.bytes
        }
    }
}

impl RdmaSpec {
    /// The defaults of every RDMA field with rate control `cc` (the HPCC simulator's, except
    /// the ACK: 48 B like the header, where the simulator pads ACKs to 60 B), the one place
    /// they are written: 1000 B payload, 48 B headers and ACKs, RTO 1 ms, 15 retries, a NACK
    /// per gap per 500 us, an ACK per packet, go-back-N.
    pub fn new(cc: RdmaCc) -> RdmaSpec {
        RdmaSpec {
            mtu_bytes: 1000,
            header_bytes: 48,
            ack_bytes: 48,
            rto: SimTime::from_ms(1),
            max_retries: 15,
            nack_interval: SimTime::from_us(500),
            ack_every: 1,
            recovery: Recovery::GoBackN,
            cc,
            max_rate_bps: None,
            window: None,
        }
    }
    /// Data packets of a flow of `size` payload bytes (at least one).
    pub fn n_packets(&self, size: Bytes) -> u32 {
        size.0.div_ceil(self.mtu_bytes as u64).max(1) as u32
    }
    /// Payload bytes before packet `index` of a flow of `size` payload bytes.
    pub fn bytes_before(&self, size: Bytes, index: u32) -> u64 {
        (index as u64 * self.mtu_bytes as u64).min(size.0)
    }
    /// Wire size of packet `index` of a flow of `size` payload bytes.
    pub fn packet_wire_bytes(&self, size: Bytes, index: u32) -> u32 {
        let n = self.n_packets(size);
        let payload = if index + 1 < n {
            self.mtu_bytes as u64
        } else {
            size.0 - (n as u64 - 1) * self.mtu_bytes as u64
        };
        payload.max(1) as u32 + self.header_bytes
    }
}

/// First timer kind the rate control owns.
pub const CC_TIMER: u32 = 2;

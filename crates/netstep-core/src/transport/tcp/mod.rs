//! TCP, segment-granular (segments are numbered from 0; no handshake, no FIN): a reliable
//! sender and a receiver, with the window rules delegated to a [`CongestionControl`]
//! (`super::cc`, one file per algorithm).
//!
//! Sender ([`TcpSender`]):
//! - sequence space `snd_una` / `snd_nxt` / `high_sent`; a [`Scoreboard`] of SACKed ranges and
//!   per-segment state (RFC 2018, RFC 6675);
//! - with SACK (`sack = true`, the default): RFC 6675 loss recovery: a duplicate ACK is one
//!   that SACKs new data; recovery starts after `DupThresh` of them or when `IsLost(snd_una)`;
//!   `pipe` limits transmissions against cwnd; `NextSeg` picks lost segments first, then new
//!   data, then (rule 3) any un-SACKed segment below the highest SACKed one; recovery ends when
//!   the cumulative ACK reaches the recovery point. After a timeout the scoreboard is kept
//!   (receivers here never renege) and every un-SACKed outstanding segment counts as lost, so
//!   the sender retransmits only the holes, in slow start;
//! - without SACK: NewReno fast retransmit / fast recovery with partial ACKs (RFC 6582, window
//!   inflation), go-back-N after a timeout: exactly the behaviour of netstep's first TCP;
//! - RTO per RFC 6298 ([`RtoEstimator`]): SRTT/RTTVAR, `rto_min` / `rto_max`, doubling on every
//!   expiry. RTT samples: ACKs echo the send time of the data segment that triggered them
//!   (`Packet::sent_ps`, like the RFC 7323 timestamp option), so with `timestamps = true` (the
//!   default) every ACK advancing `snd_una` gives a sample, retransmissions included; with
//!   `timestamps = false` Karn's rule applies: no sample from an ACK covering a segment that was
//!   ever retransmitted, so a backed-off RTO stays until a clean sample;
//! - retry limit: after `max_retries` consecutive timeouts without progress the next expiry
//!   marks the flow failed ([`FailureReason::RetryLimit`](super::FailureReason)); the sender
//!   then ignores feedback and sets no more timers;
//! - pacing hook: when the congestion control returns a pacing rate, segments are spaced at
//!   that rate with a pacing timer (NewReno returns none).
//!
//! Receiver ([`TcpReceiver`]): cumulative ACK plus one SACK block (`sack_start`/`sack_len`) per
//! ACK: the block holding the segment just received (RFC 2018 section 4's first block), when
//! that segment is above the cumulative point. Optional delayed ACK (RFC 1122, RFC 5681 4.2):
//! an ACK for every second in-order segment or when the delayed-ACK timer expires, at once for
//! out-of-order, duplicate and gap-filling segments and for the segment that completes the
//! flow (which carries FIN in a real stack). A delayed ACK echoes the send time of the earliest
//! segment it acknowledges (RFC 7323 4.3). CE-marked data is echoed with `Packet::ECN_ECHO`.

mod receiver;
mod rto;
mod scoreboard;
mod sender;

#[cfg(test)]
mod legacy;
#[cfg(test)]
mod tests;

pub use receiver::TcpReceiver;
pub use rto::RtoEstimator;
pub use scoreboard::Scoreboard;
pub use sender::TcpSender;

use super::cc::CcSpec;
use crate::units::{Bytes, SimTime};

/// TCP parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct TcpSpec {
    /// Maximum payload bytes per segment.
    pub mss_bytes: u32,
    /// Header bytes added to every segment; also the size of an ACK.
    pub header_bytes: u32,
    /// Initial congestion window in segments.
    pub initial_cwnd: u32,
    /// Lower bound of the retransmission timeout.
    pub rto_min: SimTime,
    /// Retransmission timeout before the first RTT sample.
    pub rto_initial: SimTime,
    /// Upper bound of the (backed-off) retransmission timeout.
    pub rto_max: SimTime,
    /// Duplicate ACKs that trigger fast retransmit (RFC 5681 / RFC 6675 `DupThresh`).
    pub dupack_threshold: u32,
    /// Congestion control.
    pub cc: CcSpec,
    /// Selective acknowledgements (RFC 2018) and RFC 6675 loss recovery; false gives NewReno
    /// recovery (RFC 6582) on cumulative ACKs only.
    pub sack: bool,
    /// Delayed-ACK timeout; `None` acknowledges every segment at once.
    pub delayed_ack: Option<SimTime>,
    /// Consecutive retransmission timeouts without progress after which the next expiry fails
    /// the flow.
    pub max_retries: u32,
    /// Slow-start growth limit per ACK in segments (RFC 3465 L); 0 = unlimited.
    pub abc_limit: u32,
    /// RTT samples from echoed send times of every ACK (timestamps); false applies Karn's rule.
    pub timestamps: bool,
}

impl Default for TcpSpec {
    /// The scenario defaults: 1460 B MSS, 40 B header, IW 10, RTO 1 ms / 1 s / 60 s, NewReno,
    /// SACK, no delayed ACK, 15 retries, ABC L = 2, timestamps.
    fn default() -> TcpSpec {
        TcpSpec {
            mss_bytes: 1460,
            header_bytes: 40,
            initial_cwnd: 10,
            rto_min: SimTime::from_ms(1),
            rto_initial: SimTime::from_secs(1),
            rto_max: SimTime::from_secs(60),
            dupack_threshold: 3,
            cc: CcSpec::NewReno,
            sack: true,
            delayed_ack: None,
            max_retries: 15,
            abc_limit: 2,
            timestamps: true,
        }
    }
}

impl TcpSpec {
    /// Segments needed for `size` payload bytes (at least one).
    pub fn n_segments(&self, size: Bytes) -> u32 {
        (size.0.div_ceil(self.mss_bytes as u64)).max(1) as u32
    }
    /// Wire bytes of segment `index` of a `size`-byte flow.
    pub fn segment_wire_bytes(&self, size: Bytes, index: u32) -> u32 {
        let n = self.n_segments(size);
        let payload = if index + 1 < n {
            self.mss_bytes as u64
        } else {
            size.0 - (n as u64 - 1) * self.mss_bytes as u64
        };
        self.header_bytes + payload as u32
    }
    /// Transport name in traces: `tcp_` and the congestion control (`tcp_newreno`).
    pub const fn name(&self) -> &'static str {
        match self.cc {
            CcSpec::NewReno => "tcp_newreno",
        }
    }
}

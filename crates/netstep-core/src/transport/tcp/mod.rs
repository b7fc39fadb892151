//! TCP: a reliable sender and receiver shared by every window-based congestion control.
//!
//! - `sender`: sequence space, retransmission timer and retry limit, loss recovery with a
//!   SACK scoreboard (RFC 6675) or NewReno's cumulative ACKs (RFC 6582, `sack = false`);
//! - `scoreboard`: the SACK scoreboard (`IsLost`, `pipe`, `NextSeg`);
//! - [`rto`]: RFC 6298 retransmission timeout estimation;
//! - `receiver`: reassembly, cumulative ACK with a SACK block, optional delayed ACK;
//! - the congestion control itself is a [`CcSpec`] / [`crate::transport::cc`] variant.
//!
//! Segment-granular: segment `i` carries payload bytes `[i·mss, (i+1)·mss)`; no handshake,
//! no receive-window limit (the receiver buffers everything).

mod receiver;
pub mod rto;
mod scoreboard;
mod sender;

pub use receiver::TcpReceiver;
pub use rto::RtoEstimator;
pub use scoreboard::Scoreboard;
pub use sender::TcpSender;

use crate::transport::cc::CcSpec;
use crate::units::{Bytes, SimTime};

/// TCP parameters of a flow.
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
    /// Duplicate ACKs (or SACKed segments above a hole) that signal a loss.
    pub dupack_threshold: u32,
    /// Retransmission timeouts in a row without progress after which the flow is given up
    /// (the next expiry fails it): Linux `tcp_retries2`, default 15.
    pub max_retries: u32,
    /// Selective acknowledgments (RFC 2018) and SACK-based loss recovery (RFC 6675); false
    /// gives NewReno's cumulative-ACK recovery (RFC 6582).
    pub sack: bool,
    /// Delayed ACK timeout (RFC 1122; ACK at least every second segment); `None` acknowledges
    /// every segment at once.
    pub delayed_ack: Option<SimTime>,
    /// Slow-start increase per ACK, in segments (RFC 3465 `L`, RFC 5681 §3.1); 0 = no limit.
    pub abc_limit: u32,
    /// Pace segments at 2x (slow start) or 1.2x (avoidance) cwnd per smoothed RTT, as Linux
    /// does with `fq` (`tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio`); a congestion control
    /// with its own pacing rate is paced regardless.
    pub pacing: bool,
    /// Congestion control.
    pub cc: CcSpec,
}

impl TcpSpec {
    /// The defaults of every TCP field, the one place they are written (the scenario format
    /// takes each unset field from here; `scenarios/REFERENCE.md` states them, checked by
    /// `netstep-scenario`'s `reference_states_the_transport_defaults`): MSS 1460 B, 40 B
    /// headers, initial window 10, RTO 1 ms min / 1 s initial / 60 s max, DupThresh 3, 15
    /// retries (Linux `tcp_retries2`), no delayed ACK, ABC limit 2, no pacing; SACK on except
    /// for REAL's sources, which recover by go-back-N after a timeout only (no SACK, no fast
    /// retransmit).
    pub fn new(cc: CcSpec) -> TcpSpec {
        let go_back_n = cc.go_back_n_only();
        TcpSpec {
            mss_bytes: 1460,
            header_bytes: 40,
            initial_cwnd: 10,
            rto_min: SimTime::from_ms(1),
            rto_initial: SimTime::from_secs(1),
            rto_max: SimTime::from_secs(60),
            dupack_threshold: if go_back_n { u32::MAX } else { 3 },
            max_retries: 15,
            sack: !go_back_n,
            delayed_ack: None,
            abc_limit: 2,
            pacing: false,
            cc,
        }
    }
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
}

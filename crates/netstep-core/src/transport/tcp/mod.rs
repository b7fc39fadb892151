//! TCP: a reliable sender and receiver shared by every window-based congestion control.
//!
//! - `sender`: sequence space, retransmission timer and retry limit, loss recovery with a
//!   SACK scoreboard (RFC 6675) or NewReno's cumulative ACKs (RFC 6582, `sack = false`);
//! - `scoreboard`: the SACK scoreboard (`IsLost`, `pipe`, `NextSeg`);
//! - [`rto`]: RFC 6298 retransmission timeout estimation;
//! - `receiver`: reassembly, cumulative ACK with a SACK block, optional delayed ACK;
//! - the congestion control itself is a [`CcSpec`] / [`crate::transport::cc`] variant.
//!
//! Segment-granular: segment `i` carries payload bytes `[i·mss, (i+1)·mss)`; no receive-window
//! limit (the receiver buffers everything). With `handshake` the sender opens with a SYN and
//! sends data once the SYN-ACK is back; the FIN rides on the last data segment at no cost, as
//! ns-3's `BulkSendApplication` and Linux send it when the application closes after its last
//! write, so it is not modelled further.

mod lazy_board;
mod receiver;
pub mod rto;
mod scoreboard;
mod sender;

pub use receiver::TcpReceiver;
pub use rto::RtoEstimator;
pub use scoreboard::Scoreboard;
pub use sender::TcpSender;
mod handshake;
mod prr;
mod rate;

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
    /// SACK blocks an ACK carries, 1-4 (RFC 2018: the block holding the segment that
    /// triggered the ACK first, then the others most recently changed first).
    pub sack_blocks: u8,
    /// ACKs grow by the SACK option's bytes (kind and length, 8 per block, padded to 4
    /// bytes: 12, 20, 28, 36), as in ns-3 and Linux; false keeps every ACK at `header_bytes`.
    pub sack_option_bytes: bool,
    /// Where RTT samples come from.
    pub rtt_sampling: RttSampling,
    /// How fast recovery sets the window while it lasts (SACK recovery).
    pub recovery: Recovery,
    /// The window when fast recovery ends.
    pub recovery_exit: RecoveryExit,
    /// What a loss halves into `ssthresh` (fast recovery and retransmission timeouts).
    pub ssthresh_from: SsthreshFrom,
    /// The fast retransmit and every partial ACK restart the retransmission timer (Linux
    /// re-arms it as it retransmits the head, `tcp_xmit_retransmit_queue`, and on every ACK
    /// of new data); false: the fast retransmit leaves a running timer alone and only the
    /// first partial ACK of a recovery restarts it (RFC 6298 §5.1, RFC 6582 §4's "Impatient"
    /// variant; ns-3 3.44's `SendDataPacket` and `NewAck(ack, m_isFirstPartialAck)`).
    pub recovery_restarts_rto: bool,
    /// A partial ACK in SACK recovery retransmits at once, whatever the window, the first
    /// lost segment not yet retransmitted, else the new head unless it was retransmitted
    /// (ns-3 3.44's `ProcessAck`: `DoRetransmit`, "assume the next seq is lost"; RFC 6675
    /// and Linux wait for the scoreboard to say lost).
    pub partial_ack_retransmit: bool,
    /// A three-way handshake before data: a SYN, answered by a SYN-ACK, after which the third
    /// segment (a header-only ACK) and the initial window leave, as in ns-3 and Linux.
    pub handshake: bool,
    /// Bytes a SYN and a SYN-ACK carry beyond `header_bytes` (their options).
    pub syn_option_bytes: u32,
    /// The SYN's first retransmission timeout, doubled at each retry up to `rto_max`.
    pub syn_rto: SimTime,
    /// SYN retransmissions before the flow is given up (`fail_reason = "syn_retries"`).
    pub syn_retries: u32,
    /// Where the flow's FCT starts with a handshake.
    pub fct_from: FctFrom,
    /// Congestion control.
    pub cc: CcSpec,
}

/// Where a flow's FCT starts when it opens with a handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FctFrom {
    /// When the first data segment leaves (the handshake done): data first byte to last byte.
    FirstData,
    /// The flow's start, when its SYN leaves (what an application timing `connect()` sees).
    ConnectionStart,
}

/// Where RTT samples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttSampling {
    /// Every ACK that advances the cumulative point echoes the send time of the segment that
    /// triggered it (the timestamp option, RFC 7323), retransmissions included (Linux with
    /// timestamps, netstep's default).
    Echo,
    /// Karn's rule without timestamps, as ns-3 3.44 (`TcpSocketBase::EstimateRtt` over
    /// `m_history`): an ACK that advances the cumulative point samples the first-sent time of
    /// the oldest outstanding segment, unless it was retransmitted; any ACK of new data
    /// recomputes the RTO from SRTT and RTTVAR, dropping the backoff.
    Karn,
}

/// How fast recovery sets the window while it lasts (SACK recovery; RFC 6582 window
/// inflation without SACK in either case).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    /// The window drops to `ssthresh` at once and `pipe` clocks the sending (RFC 6675; ns-3's
    /// `TcpClassicRecovery`).
    Classic,
    /// Proportional Rate Reduction (RFC 6937 and its bis draft, as ns-3 3.44's
    /// `TcpPrrRecovery` and Linux's `tcp_cwnd_reduction`).
    Prr,
    /// PRR with ns-3 3.44's accounting: an ACK that SACKs new data counts one segment more,
    /// and one that also advances the cumulative point updates twice (fixed after 3.44).
    PrrNs3,
}

/// What a loss reduces into `ssthresh` (the congestion control's rule applied to it: half
/// for NewReno, x 0.7 for CUBIC), on entering fast recovery and on a retransmission timeout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsthreshFrom {
    /// `FlightSize`, the data sent and not cumulatively acknowledged (RFC 5681 eq. 4), on
    /// every timeout.
    Flight,
    /// RFC 6675's `pipe` (ns-3 3.44's `BytesInFlight()` in `EnterRecovery` and before the
    /// timeout in `ReTxTimeout`; without SACK, `FlightSize`); a timeout while the segment
    /// it retransmits was already retransmitted by one keeps `ssthresh` (RFC 5681 §3.1).
    Pipe,
    /// The congestion window (Linux's `tcp_reno_ssthresh`, `tcp_enter_loss`); a repeated
    /// timeout keeps `ssthresh` as with `Pipe`.
    Cwnd,
}

/// The window when fast recovery ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecoveryExit {
    /// `min(ssthresh, FlightSize + 1)` (RFC 6582 §3.2 step 3, option 1), the congestion
    /// control's own rule for CUBIC and BBR; the ACK that ends recovery grows nothing.
    Flight,
    /// `ssthresh`, then that ACK's ordinary growth (ns-3 3.44's `ProcessAck`; Linux's
    /// `tcp_end_cwnd_reduction`).
    Ssthresh,
}

impl TcpSpec {
    /// Bytes of an ACK that carries `blocks` SACK blocks.
    pub fn ack_bytes(&self, blocks: u32) -> u32 {
        if self.sack_option_bytes && blocks > 0 {
            self.header_bytes + (2 + 8 * blocks).div_ceil(4) * 4
        } else {
            self.header_bytes
        }
    }
}

impl TcpSpec {
    /// The defaults of every TCP field, the one place they are written (the scenario format
    /// takes each unset field from here; `scenarios/REFERENCE.md` states them, checked by
    /// `netstep-scenario`'s `reference_states_the_transport_defaults`): MSS 1460 B, 40 B
    /// headers, initial window 10, RTO 1 ms min / 1 s initial / 60 s max, DupThresh 3, 15
    /// retries (Linux `tcp_retries2`), no delayed ACK, ABC limit 2, no pacing; SACK on except
    /// for REAL's sources, which recover by go-back-N after a timeout only (no SACK, no fast
    /// retransmit); one SACK block per ACK, ACKs of `header_bytes`, echoed RTT samples,
    /// classic recovery, `min(ssthresh, FlightSize + 1)` when it ends; no handshake (with one:
    /// no SYN options, a 1 s SYN timeout (RFC 6298), 6 SYN retries (Linux
    /// `tcp_syn_retries`, ns-3 `ConnCount`), the FCT from the first data segment).
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
            sack_blocks: 1,
            sack_option_bytes: false,
            rtt_sampling: RttSampling::Echo,
            recovery: Recovery::Classic,
            recovery_exit: RecoveryExit::Flight,
            ssthresh_from: SsthreshFrom::Flight,
            recovery_restarts_rto: true,
            partial_ack_retransmit: false,
            handshake: false,
            syn_option_bytes: 0,
            syn_rto: SimTime::from_secs(1),
            syn_retries: 6,
            fct_from: FctFrom::FirstData,
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

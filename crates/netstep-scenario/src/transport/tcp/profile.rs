//! The `profile` presets of the TCP transport: what `"ns3"` and `"linux"` set, written once.

use netstep_core::transport::tcp::{Recovery, RecoveryExit, RttSampling, SsthreshFrom, TcpSpec};
use netstep_core::units::SimTime;

use super::TcpProfile;

/// Everything a `profile` sets, each unless its own field is given: the one place the
/// presets are written.
pub(super) struct ProfileSettings {
    pub(super) sack_blocks: u8,
    pub(super) sack_option_bytes: bool,
    pub(super) rtt_sampling: RttSampling,
    pub(super) recovery: Recovery,
    pub(super) recovery_exit: RecoveryExit,
    pub(super) ssthresh_from: SsthreshFrom,
    pub(super) restart_rto: bool,
    pub(super) partial_ack_retransmit: bool,
    pub(super) abc_limit: u32,
    pub(super) handshake: bool,
    pub(super) syn_option_bytes: u32,
    pub(super) syn_rto: SimTime,
}

impl TcpProfile {
    /// The profile's settings over the defaults `d`, for a transport with `sack` or without
    /// (which keeps one block and the default recovery: they only matter with SACK).
    pub(super) fn settings(self, d: &TcpSpec, sack: bool) -> ProfileSettings {
        let defaults = ProfileSettings {
            sack_blocks: d.sack_blocks,
            sack_option_bytes: d.sack_option_bytes,
            rtt_sampling: d.rtt_sampling,
            recovery: d.recovery,
            recovery_exit: d.recovery_exit,
            ssthresh_from: d.ssthresh_from,
            restart_rto: d.recovery_restarts_rto,
            partial_ack_retransmit: d.partial_ack_retransmit,
            abc_limit: d.abc_limit,
            handshake: d.handshake,
            syn_option_bytes: d.syn_option_bytes,
            syn_rto: d.syn_rto,
        };
        match self {
            TcpProfile::Netstep => defaults,
            // ns-3 3.44 with `Timestamp = false`: 4 blocks, Karn, its PRR, ssthresh on exit,
            // one segment per ACK in slow start (`TcpNewReno::SlowStart`), a handshake with
            // window scale and SACK-permitted (8 B) and a 3 s `ConnTimeout`.
            TcpProfile::Ns3 => ProfileSettings {
                sack_blocks: if sack { 4 } else { 1 },
                sack_option_bytes: true,
                rtt_sampling: RttSampling::Karn,
                recovery: if sack { Recovery::PrrNs3 } else { d.recovery },
                recovery_exit: RecoveryExit::Ssthresh,
                ssthresh_from: SsthreshFrom::Pipe,
                restart_rto: false,
                partial_ack_retransmit: sack,
                abc_limit: 1,
                handshake: true,
                syn_option_bytes: 8,
                syn_rto: SimTime::from_secs(3),
            },
            // Linux with timestamps: 3 blocks, echoed samples, PRR, ssthresh on exit, growth by
            // every segment acknowledged (`tcp_slow_start`), a 20 B SYN option set and 1 s.
            TcpProfile::Linux => ProfileSettings {
                sack_blocks: if sack { 3 } else { 1 },
                sack_option_bytes: true,
                rtt_sampling: RttSampling::Echo,
                recovery: if sack { Recovery::Prr } else { d.recovery },
                recovery_exit: RecoveryExit::Ssthresh,
                ssthresh_from: SsthreshFrom::Cwnd,
                restart_rto: true,
                partial_ack_retransmit: false,
                abc_limit: 0,
                handshake: true,
                syn_option_bytes: 20,
                syn_rto: SimTime::from_secs(1),
            },
        }
    }
}

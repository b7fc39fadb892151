//! Proportional Rate Reduction (RFC 6937; draft-ietf-tcpm-prr-rfc6937bis), in segments, as
//! ns-3 3.44's `TcpPrrRecovery::DoRecovery` shapes it: `RecoverFS` is `pipe` when recovery
//! starts; while `pipe > ssthresh` the sending follows `prr_delivered x ssthresh / RecoverFS`,
//! below it the conservative bound (PRR-CRB), one segment more on an ACK that cumulatively
//! acknowledges a retransmitted segment (the bis draft's "safe ACK", ns-3's
//! `m_isRetransDataAcked`: PRR-SSRB there); the fast retransmit always goes; the window is
//! `pipe + sndcnt`.
//!
//! Not reproduced from ns-3 3.44 (its later fixes, issues 1282 and 1350, remove them): the
//! extra segment it adds to `DeliveredData` on every duplicate ACK with SACK on, the second
//! update on an ACK that both SACKs and advances the cumulative point, and the 32-bit
//! wrap-around of `prr_delivered x ssthresh` in bytes.

/// PRR's state during one fast recovery, in segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Prr {
    /// `pipe` when recovery started.
    recover_fs: u32,
    /// Segments delivered (cumulatively acknowledged or SACKed) since then.
    delivered: u32,
    /// Segments sent since then.
    out: u32,
}

impl Prr {
    /// Recovery starts with `pipe` segments presumed in the network.
    pub(super) fn enter(pipe: u32) -> Prr {
        Prr {
            recover_fs: pipe.max(1),
            delivered: 0,
            out: 0,
        }
    }

    /// A segment left during recovery.
    pub(super) fn sent(&mut self) {
        self.out += 1;
    }

    /// An ACK delivered `delivered` segments with `pipe` now in the network; `safe`: it
    /// cumulatively acknowledged a retransmitted segment. Returns the window for this ACK:
    /// `pipe + sndcnt`.
    pub(super) fn on_ack(&mut self, delivered: u32, pipe: u32, ssthresh: f64, safe: bool) -> f64 {
        self.delivered += delivered;
        let ssthresh = ssthresh.floor().max(1.0) as i64;
        let (delivered_total, out, pipe_i) = (self.delivered as i64, self.out as i64, pipe as i64);
        let sndcnt = if pipe_i > ssthresh {
            // ceil(prr_delivered * ssthresh / RecoverFS) - prr_out
            // Non-negative operands: unsigned ceiling division.
            ((delivered_total * ssthresh) as u64).div_ceil(self.recover_fs as u64) as i64 - out
        } else {
            let limit = (delivered_total - out).max(delivered as i64) + safe as i64;
            limit.min(ssthresh - pipe_i)
        };
        let floor = if self.out > 0 { 0 } else { 1 };
        (pipe_i + sndcnt.max(floor)) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proportional_while_pipe_exceeds_ssthresh_then_conservative() {
        // RFC 6937 appendix-style: 20 in flight, ssthresh 10: one segment out per two
        // delivered while pipe > ssthresh.
        let mut p = Prr::enter(20);
        // The first ACK: the fast retransmit goes whatever the arithmetic says.
        assert_eq!(p.on_ack(1, 18, 10.0, false), 19.0);
        p.sent();
        // Two delivered in all: ceil(2 * 10 / 20) - 1 = 0 more.
        assert_eq!(p.on_ack(1, 17, 10.0, false), 17.0);
        // Four delivered: ceil(40 / 20) - 1 = 1.
        assert_eq!(p.on_ack(2, 15, 10.0, false), 16.0);
        p.sent();
        // Below ssthresh: at most what was delivered beyond what was sent, and up to ssthresh.
        let mut q = Prr::enter(20);
        q.sent();
        assert_eq!(
            q.on_ack(3, 6, 10.0, false),
            9.0,
            "max(3 - 1, 3) = 3 < ssthresh - pipe = 4"
        );
        assert_eq!(q.on_ack(1, 9, 10.0, true), 10.0, "capped at ssthresh");
        assert_eq!(q.on_ack(0, 5, 10.0, false), 8.0, "max(4 - 1, 0) = 3");
        assert_eq!(q.on_ack(0, 5, 10.0, true), 9.0, "a safe ACK sends one more");
    }
}

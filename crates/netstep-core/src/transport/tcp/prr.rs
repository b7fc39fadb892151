//! Proportional Rate Reduction (RFC 6937; draft-ietf-tcpm-prr-rfc6937bis), in segments, as
//! ns-3 3.44's `TcpPrrRecovery::DoRecovery` shapes it: `RecoverFS` is `pipe` when recovery
//! starts (`m_recoveryFlightSize`, "bytesInFlight at the start of recovery"); while
//! `pipe > ssthresh` the sending follows `prr_delivered x ssthresh / RecoverFS`, below it the
//! conservative bound (PRR-CRB), one segment more on an ACK that cumulatively acknowledges a
//! retransmitted segment (the bis draft's "safe ACK", ns-3's
//! `m_isRetransDataAcked`: PRR-SSRB there); the fast retransmit always goes; the window is
//! `pipe + sndcnt`.
//!
//! [`Prr::on_ack_ns3`] computes as ns-3 3.44 does (its later fixes, issues 1282 and 1350,
//! change it): the extra segment it adds to `DeliveredData` on an ACK that SACKs new data,
//! the second update on an ACK that both SACKs and advances the cumulative point, the 32-bit
//! wrap-around of `prr_delivered x ssthresh` in bytes and the unsigned `prr_delivered -
//! prr_out`.

/// PRR's state during one fast recovery, in segments.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Prr {
    /// `pipe` when recovery started.
    recover_fs: u32,
    /// Segments delivered (cumulatively acknowledged or SACKed) since then.
    delivered: u32,
    /// Segments sent since then.
    out: u32,
    /// The window the last ACK set: `pipe + sndcnt`.
    window: f64,
}

/// What one ACK tells PRR.
#[derive(Clone, Copy, Debug)]
pub(super) struct AckFacts {
    /// Segments it delivered (cumulatively acknowledged or SACKed).
    pub delivered: u32,
    /// It SACKed new data.
    pub sacked_new: bool,
    /// It advanced the cumulative point.
    pub advanced: bool,
    /// Segments presumed in the network after it.
    pub pipe: u32,
    /// The congestion control's `ssthresh`, segments.
    pub ssthresh: f64,
    /// It cumulatively acknowledged a retransmitted segment.
    pub safe: bool,
    /// Payload bytes per segment (ns-3's byte arithmetic).
    pub mss: u32,
}

impl Prr {
    /// Recovery starts with `pipe` segments presumed in the network.
    pub(super) fn enter(pipe: u32) -> Prr {
        Prr {
            recover_fs: pipe.max(1),
            delivered: 0,
            out: 0,
            window: pipe as f64,
        }
    }

    /// The window to send by.
    pub(super) fn window(&self) -> f64 {
        self.window
    }

    /// Takes ACK `a` into account: [`Prr::on_ack_ns3`] with `ns3` (an ACK that delivered
    /// nothing keeps the window), else [`Prr::on_ack`].
    pub(super) fn update(&mut self, ns3: bool, a: &AckFacts) {
        if ns3 {
            let (d, s, adv, p, t) = (a.delivered, a.sacked_new, a.advanced, a.pipe, a.ssthresh);
            if let Some(window) = self.on_ack_ns3(d, s, adv, p, t, a.safe, a.mss) {
                self.window = window;
            }
        } else {
            self.window = self.on_ack(a.delivered, a.pipe, a.ssthresh, a.safe);
        }
    }

    /// A segment left during recovery.
    pub(super) fn sent(&mut self) {
        self.out += 1;
    }

    /// An ACK delivered `delivered` segments with `pipe` now in the network; `safe`: it
    /// cumulatively acknowledged a retransmitted segment. Returns the window for this ACK:
    /// `pipe + sndcnt`.
    fn on_ack(&mut self, delivered: u32, pipe: u32, ssthresh: f64, safe: bool) -> f64 {
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

impl Prr {
    /// [`Prr::on_ack`] as ns-3 3.44's `TcpPrrRecovery::DoRecovery` computes it
    /// (`recovery = "prr_ns3"`), in bytes of `mss` per segment: an ACK that SACKs new data
    /// (`sacked_new`) counts one segment more while `prr_delivered < RecoverFS`, and one that
    /// also advances the cumulative point (`advanced`) updates twice (`ProcessAck` calls
    /// `DoRecovery` as a duplicate and as a partial ACK); `prr_delivered x ssthresh` is a
    /// 32-bit product that wraps, and `max(prr_delivered - prr_out, DeliveredData)` an
    /// unsigned difference that makes the limit negative once more went out than was
    /// delivered. An ACK that delivered nothing keeps the window (`None`).
    #[allow(clippy::too_many_arguments)]
    fn on_ack_ns3(
        &mut self,
        delivered: u32,
        sacked_new: bool,
        advanced: bool,
        pipe: u32,
        ssthresh: f64,
        safe: bool,
        mss: u32,
    ) -> Option<f64> {
        let mut window = None;
        if sacked_new {
            let extra = (self.delivered < self.recover_fs) as u32;
            window = self.step_ns3(delivered + extra, pipe, ssthresh, safe, mss);
        }
        if advanced && delivered > 0 {
            window = self.step_ns3(delivered, pipe, ssthresh, safe, mss);
        }
        window
    }

    /// One `DoRecovery` call in ns-3 3.44's integer types.
    fn step_ns3(
        &mut self,
        delivered: u32,
        pipe: u32,
        ssthresh: f64,
        safe: bool,
        mss: u32,
    ) -> Option<f64> {
        if delivered == 0 {
            return None;
        }
        self.delivered += delivered;
        let bytes = |segments: u32| segments.wrapping_mul(mss);
        // ns-3 keeps ssthresh in bytes (`bytesInFlight / 2`): half a segment counts.
        let ssthresh = (ssthresh.max(1.0) * mss as f64) as u32;
        let (total, out, in_flight) = (bytes(self.delivered), bytes(self.out), bytes(pipe));
        let sndcnt: i64 = if in_flight > ssthresh {
            let product = total.wrapping_mul(ssthresh) as f64;
            (product / bytes(self.recover_fs) as f64).ceil() as i64 - out as i64
        } else {
            let limit = total.wrapping_sub(out).max(bytes(delivered)) as i32 as i64;
            let limit = limit + if safe { mss as i64 } else { 0 };
            limit.min(ssthresh as i64 - in_flight as i64)
        };
        let floor = if self.out > 0 { 0 } else { mss as i64 };
        // The sender sends whole segments while the window has room for one.
        Some(pipe as f64 + (sndcnt.max(floor) / mss as i64) as f64)
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

    #[test]
    fn ns3_counts_a_sacking_ack_one_segment_more_and_twice_when_it_also_advances() {
        let mut p = Prr::enter(20);
        p.sent();
        // A duplicate ACK SACKing one segment counts two: ceil(2 * 10 / 20) - 1 = 0.
        assert_eq!(
            p.on_ack_ns3(1, true, false, 18, 10.0, false, 1000),
            Some(18.0)
        );
        assert_eq!(p.delivered, 2);
        // SACKs one and advances by one: 2 + 1, then 2 again: delivered 7; in bytes
        // ceil(7,000 x 10,000 / 20,000) - 1,000 = 2,500 B: two whole segments.
        assert_eq!(
            p.on_ack_ns3(2, true, true, 16, 10.0, false, 1000),
            Some(18.0)
        );
        assert_eq!(p.delivered, 7);
        // Nothing delivered: the window stays.
        assert_eq!(p.on_ack_ns3(0, false, false, 16, 10.0, false, 1000), None);
    }

    #[test]
    fn ns3_wraps_its_32_bit_product_and_its_unsigned_difference() {
        // 100 segments delivered x ssthresh 50 of 1,460 B: 1.07e10 bytes^2, past 2^32.
        let mut p = Prr::enter(100);
        for _ in 0..30 {
            p.sent();
        }
        let mut rfc = p;
        assert_eq!(
            rfc.on_ack(100, 80, 50.0, false),
            100.0,
            "100 x 50 / 100 - 30 = 20"
        );
        let wrapped = ((100u32 * 1460).wrapping_mul(50 * 1460)) as f64;
        assert!(wrapped < 2.1e9);
        // ceil(2.07e9 / 146,000) - 43,800 < 0: nothing more.
        assert_eq!(
            p.on_ack_ns3(100, false, true, 80, 50.0, false, 1460),
            Some(80.0)
        );
        // Below ssthresh with more sent than delivered: the limit is negative, nothing more.
        let mut q = Prr::enter(20);
        for _ in 0..5 {
            q.sent();
        }
        assert_eq!(
            q.on_ack_ns3(2, false, true, 4, 10.0, false, 1000),
            Some(4.0)
        );
    }
}

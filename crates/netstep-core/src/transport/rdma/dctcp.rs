//! DCTCP as an RDMA rate control (the HPCC simulator's `CC_MODE 8`, its `HandleAckDctcp`):
//! DCTCP's alpha (Alizadeh et al. 2010, RFC 8257) steering a rate instead of a window. On
//! every ACK or NACK, with sequence numbers in payload bytes:
//!
//! - the CE echoes are counted; when an ACK acknowledges data sent after the last update (a
//!   round trip), `alpha = (1 - g) alpha + g min(1, marked / batch)` with `batch` the packets
//!   in flight at the last update (the first such ACK only starts the count);
//! - a CE echo outside congestion-window-reduced state cuts the rate to
//!   `max(min_rate, rate (1 - alpha / 2))` and enters that state until an ACK passes what was
//!   sent at the cut;
//! - once per round trip outside that state the rate grows by `rate_ai`, up to the highest
//!   rate.
//!
//! alpha starts at 1; there is no slow start: the flow starts at its highest rate.

/// DCTCP rate-control parameters (defaults: the HPCC simulator's).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DctcpSpec {
    /// EWMA gain of alpha (default 1/16).
    pub g: f64,
    /// Additive increase per round trip, bit/s (default 1 Gb/s, the simulator's
    /// `DCTCP_RATE_AI`).
    pub rate_ai_bps: f64,
    /// Lowest rate, bit/s (default 100 Mb/s).
    pub min_rate_bps: f64,
}

impl Default for DctcpSpec {
    fn default() -> DctcpSpec {
        DctcpSpec {
            g: 1.0 / 16.0,
            rate_ai_bps: 1e9,
            min_rate_bps: 100e6,
        }
    }
}

/// DCTCP rate-control state of one flow.
#[derive(Clone, Debug)]
pub struct Dctcp {
    spec: DctcpSpec,
    /// Current rate, bit/s.
    pub rate: f64,
    /// Congestion estimate.
    pub alpha: f64,
    max_rate: f64,
    mtu: u64,
    ecn_count: u64,
    batch: u64,
    last_update_seq: u64,
    reduced: bool,
    high_seq: u64,
}

impl Dctcp {
    /// Starts at `max_rate` (the line rate or a lower cap) with alpha 1; `mtu` is the payload
    /// per packet.
    pub fn new(spec: DctcpSpec, max_rate: f64, mtu: u32) -> Dctcp {
        Dctcp {
            spec,
            rate: max_rate,
            alpha: 1.0,
            max_rate,
            mtu: mtu.max(1) as u64,
            ecn_count: 0,
            batch: 1,
            last_update_seq: 0,
            reduced: false,
            high_seq: 0,
        }
    }

    /// An ACK (or NACK) acknowledging `ack_bytes` of payload arrived, echoing a CE mark when
    /// `ce`; `sent_bytes` is the payload sent so far (`snd_nxt`).
    pub fn on_ack(&mut self, ack_bytes: u64, ce: bool, sent_bytes: u64) {
        self.ecn_count += u64::from(ce);
        let mut new_batch = false;
        if ack_bytes > self.last_update_seq {
            new_batch = true;
            if self.last_update_seq == 0 {
                self.batch = sent_bytes / self.mtu + 1;
            } else {
                let fraction = (self.ecn_count as f64 / self.batch as f64).min(1.0);
                self.alpha = (1.0 - self.spec.g) * self.alpha + self.spec.g * fraction;
                self.ecn_count = 0;
                self.batch = sent_bytes.saturating_sub(ack_bytes) / self.mtu + 1;
            }
            self.last_update_seq = sent_bytes;
        }
        if self.reduced && ack_bytes > self.high_seq {
            self.reduced = false;
        }
        if ce && !self.reduced {
            self.rate = (self.rate * (1.0 - self.alpha / 2.0)).max(self.spec.min_rate_bps);
            self.reduced = true;
            self.high_seq = sent_bytes;
        }
        if !self.reduced && new_batch {
            self.rate = (self.rate + self.spec.rate_ai_bps).min(self.max_rate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINE: f64 = 10e9;

    #[test]
    fn a_mark_cuts_by_half_alpha_once_per_round_trip_then_growth_resumes() {
        let mut d = Dctcp::new(DctcpSpec::default(), LINE, 1000);
        // First ACK: starts the count (10 packets out), no mark: the rate stays at the cap.
        d.on_ack(1000, false, 10_000);
        assert_eq!(d.rate, LINE);
        assert_eq!(d.alpha, 1.0);
        // A marked ACK inside the same round trip: alpha is still 1, the cut halves the rate.
        d.on_ack(2000, true, 11_000);
        assert_eq!(d.rate, LINE / 2.0);
        // A second mark before the ACK passes 11,000 B: no second cut.
        d.on_ack(3000, true, 12_000);
        assert_eq!(d.rate, LINE / 2.0);
        // The ACK that ends the round trip (past 10,000 B): alpha = 15/16 + 1/16 x 2/11, and
        // the window-reduced state ends (past 11,000 B): one additive step.
        d.on_ack(11_500, false, 20_000);
        let alpha = 15.0 / 16.0 + (2.0 / 11.0) / 16.0;
        assert!((d.alpha - alpha).abs() < 1e-12, "{}", d.alpha);
        assert_eq!(d.rate, LINE / 2.0 + 1e9);
        // The next mark cuts by alpha / 2.
        d.on_ack(12_000, true, 21_000);
        assert!((d.rate - (LINE / 2.0 + 1e9) * (1.0 - alpha / 2.0)).abs() < 1.0);
    }

    #[test]
    fn the_rate_never_passes_the_cap_or_falls_below_the_minimum() {
        let mut d = Dctcp::new(DctcpSpec::default(), LINE, 1000);
        for i in 1..100u64 {
            d.on_ack(i * 10_000, false, i * 10_000 + 5_000);
            assert!(d.rate <= LINE);
        }
        let mut low = Dctcp::new(DctcpSpec::default(), LINE, 1000);
        for i in 1..200u64 {
            // A mark on the first ACK of every round trip.
            low.on_ack(i * 10_000, true, i * 10_000 + 5_000);
            assert!(low.rate >= 100e6);
        }
        assert_eq!(low.rate, 100e6);
    }
}

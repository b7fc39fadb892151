//! HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), Algorithm 1 in
//! the rate form the HPCC simulator runs (its `UpdateRateHp`, single rate, fast react on):
//! every ACK echoes the per-hop telemetry of the data packet it answers
//! ([`crate::telemetry`]: time, bytes sent, queue length and rate of each switch egress port);
//! the sender keeps the previous records `L` and, on each ACK,
//!
//! - per hop `i`: `txRate = (ack.L[i].txBytes - L[i].txBytes) / (ack.L[i].ts - L[i].ts)`,
//!   `u_i = min(ack.L[i].qlen, L[i].qlen) / (B_i T) + txRate / B_i`; `u` is the largest `u_i`
//!   and `tau` its time delta;
//! - `U = (1 - tau'/T) U + (tau'/T) u` with `tau' = min(tau, T)`;
//! - if `U >= eta` or `incStage >= maxStage`: `R = Rc / (U / eta) + R_AI` (multiplicative,
//!   `incStage = 0`), else `R = Rc + R_AI` (additive, `incStage + 1`), within
//!   `[min_rate, max rate]` (the line rate or a lower `max_rate`);
//! - the reference rate `Rc` and `incStage` are updated only once per round trip (an ACK of
//!   data sent after the last update); the ACKs in between react from the same `Rc` (fast
//!   react, the paper's `updateWc = false`).
//!
//! The rate is the paper's window over the base RTT (`R = W / T`, `R_AI = W_AI / T`), and the
//! sender is also bounded by that window: at most `R x T` bytes in flight. With a sender
//! `window` (the HPCC simulator's `FIXED_WIN`) that window bounds the bytes in flight instead
//! and queues are measured against it: `qlen x max_rate / (B W)`, the simulator's form.

use crate::telemetry::SideRecord;
use crate::units::SimTime;

/// HPCC parameters (defaults: the paper's eta and maxStage, the HPCC simulator's R_AI and
/// minimum rate).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HpccSpec {
    /// Target utilisation eta (default 0.95).
    pub eta: f64,
    /// Additive increases in a row before a multiplicative step (default 5).
    pub max_stage: u32,
    /// Additive increase per update, bit/s (`W_AI / T`); `None`: the HPCC simulator's
    /// `line rate / 2500` (40 Mb/s at 100 Gb/s).
    pub rate_ai_bps: Option<f64>,
    /// The base RTT `T`; `None`: the flow's own unloaded round trip (one full data packet out,
    /// its ACK back).
    pub base_rtt: Option<SimTime>,
    /// Lowest rate, bit/s (default 100 Mb/s).
    pub min_rate_bps: f64,
    /// React to every ACK from the last reference rate (default true), not only once per
    /// round trip.
    pub fast_react: bool,
}

impl Default for HpccSpec {
    fn default() -> HpccSpec {
        HpccSpec {
            eta: 0.95,
            max_stage: 5,
            rate_ai_bps: None,
            base_rtt: None,
            min_rate_bps: 100e6,
            fast_react: true,
        }
    }
}

/// HPCC state of one flow.
#[derive(Clone, Debug)]
pub struct Hpcc {
    spec: HpccSpec,
    /// Current rate R, bit/s.
    pub rate: f64,
    /// Reference rate Rc (the paper's `W_c / T`), bit/s.
    pub reference: f64,
    /// Smoothed normalized inflight U (1 at the start, as in the HPCC simulator).
    pub u: f64,
    /// The highest rate: the line rate or a lower `max_rate`.
    max_rate: f64,
    rate_ai: f64,
    /// Base RTT, seconds.
    base_rtt: f64,
    /// The time a queue is measured against, seconds: `T`, or with a window `W` (the HPCC
    /// simulator's `FIXED_WIN`) `W / max rate`, as in its `u = qlen x max_rate / (B W)`.
    queue_time: f64,
    inc_stage: u32,
    last_update_seq: u32,
    /// The records of the last ACK (`L`), once one arrived (boxed: a stack is 264 bytes).
    last: Option<Box<SideRecord>>,
}

impl Hpcc {
    /// Starts at `min(line_rate, max_rate)` (a window of one bandwidth-delay product) with the
    /// reference rate at the line rate (the HPCC simulator's), base RTT `base_rtt` (the
    /// spec's, or the flow's own when the spec leaves it open), and queues measured against
    /// `window` bytes when the sender has one.
    pub fn new(
        spec: HpccSpec,
        line_rate: f64,
        max_rate: f64,
        base_rtt: SimTime,
        window: Option<u64>,
    ) -> Hpcc {
        let max_rate = line_rate.min(max_rate);
        let base_rtt = spec.base_rtt.unwrap_or(base_rtt).as_secs_f64();
        Hpcc {
            spec,
            rate: max_rate,
            reference: line_rate,
            u: 1.0,
            max_rate,
            rate_ai: spec.rate_ai_bps.unwrap_or(line_rate / 2500.0),
            base_rtt,
            queue_time: window.map_or(base_rtt, |w| w as f64 * 8.0 / max_rate),
            inc_stage: 0,
            last_update_seq: 0,
            last: None,
        }
    }

    /// The window, bytes: `R x T`.
    pub fn window_bytes(&self) -> f64 {
        self.rate * self.base_rtt / 8.0
    }

    /// An ACK (or NACK) acknowledging up to packet `ack_seq` echoed `int`; `snd_nxt` is the
    /// next packet to send.
    pub fn on_ack(&mut self, ack_seq: u32, int: &SideRecord, snd_nxt: u32) {
        let Some(last) = self.last.as_mut() else {
            // First feedback: the baseline records.
            self.last = Some(Box::new(*int));
            self.last_update_seq = snd_nxt;
            return;
        };
        let full = ack_seq > self.last_update_seq;
        if !full && !self.spec.fast_react {
            return;
        }
        if last.len() != int.len() {
            // A different path (re-routing): start over from these records.
            **last = *int;
            return;
        }
        let t = self.base_rtt;
        let (mut u_max, mut tau_max, mut updated) = (0.0f64, 0.0f64, false);
        for (hop, prev) in int.hops().iter().zip(last.hops()) {
            let tau = hop.ts_delta(prev).as_secs_f64();
            if tau <= 0.0 {
                continue;
            }
            let b = hop.rate_bps as f64;
            let tx_rate = hop.tx_bytes.saturating_sub(prev.tx_bytes) as f64 * 8.0 / tau;
            let qlen = hop.qlen_bytes.min(prev.qlen_bytes) as f64 * 8.0;
            let u = qlen / (b * self.queue_time) + tx_rate / b;
            updated = true;
            if u > u_max {
                u_max = u;
                tau_max = tau;
            }
        }
        **last = *int;
        if updated {
            let dt = tau_max.min(t);
            self.u = (self.u * (t - dt) + u_max * dt) / t;
            let max_c = self.u / self.spec.eta;
            let (rate, stage) = if max_c >= 1.0 || self.inc_stage >= self.spec.max_stage {
                (self.reference / max_c + self.rate_ai, 0)
            } else {
                (self.reference + self.rate_ai, self.inc_stage + 1)
            };
            self.rate = rate.clamp(self.spec.min_rate_bps, self.max_rate);
            if full {
                self.reference = self.rate;
                self.inc_stage = stage;
            }
        }
        if full && snd_nxt > self.last_update_seq {
            self.last_update_seq = snd_nxt;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::telemetry::IntHop;

    const B: u64 = 100_000_000_000;

    /// One hop's records at `t_us`, the port having sent `bytes` and holding `qlen`.
    fn stack(t_us: u64, bytes: u64, qlen: u64) -> SideRecord {
        let mut s = SideRecord::default();
        s.push(IntHop {
            ts_ps: t_us * 1_000_000,
            tx_bytes: bytes,
            qlen_bytes: qlen,
            rate_bps: B,
        });
        s
    }

    #[test]
    fn an_overloaded_hop_scales_the_rate_by_eta_over_u() {
        // T = 10 us, 100 Gb/s. Over one T the hop sent at line rate (125,000 B in 10 us)
        // and kept a queue of half a BDP (62,500 B): u = 1 + 0.5 = 1.5; tau = T, so U = u.
        let t = SimTime::from_us(10);
        let mut h = Hpcc::new(HpccSpec::default(), B as f64, B as f64, t, None);
        h.on_ack(1, &stack(0, 0, 62_500), 10);
        h.on_ack(11, &stack(10, 125_000, 62_500), 20);
        assert!((h.u - 1.5).abs() < 1e-9, "U {}", h.u);
        let expected = B as f64 / (1.5 / 0.95) + B as f64 / 2500.0;
        assert!((h.rate - expected).abs() < 1.0, "{} vs {expected}", h.rate);
        assert_eq!(h.reference, h.rate);
        // The window follows the rate: R x T.
        assert!((h.window_bytes() - h.rate * 10e-6 / 8.0).abs() < 1e-6);
    }

    #[test]
    fn below_eta_the_rate_grows_additively_for_max_stage_updates_then_multiplicatively() {
        let t = SimTime::from_us(10);
        let mut h = Hpcc::new(HpccSpec::default(), B as f64, B as f64, t, None);
        h.on_ack(1, &stack(0, 0, 0), 1);
        // Bring the rate down first: a hop at 1.5 x eta.
        h.on_ack(2, &stack(10, 125_000, 62_500), 2);
        let start = h.rate;
        let ai = B as f64 / 2500.0;
        let mut bytes = 125_000;
        // Then half load, empty queue (u = 0.5 each T; U converges towards 0.5).
        for k in 1..=5u64 {
            bytes += 62_500;
            h.on_ack(2 + k as u32, &stack(10 + 10 * k, bytes, 0), 2 + k as u32);
            assert!(
                (h.rate - (start + k as f64 * ai)).abs() < 1.0,
                "update {k}: {} vs {}",
                h.rate,
                start + k as f64 * ai
            );
        }
        // The sixth update is multiplicative: Rc / (U / eta) + R_AI with U = 0.5.
        bytes += 62_500;
        let rc = h.reference;
        h.on_ack(8, &stack(70, bytes, 0), 8);
        let expected = (rc / (0.5 / 0.95) + ai).min(B as f64);
        assert!((h.u - 0.5).abs() < 1e-9);
        assert!((h.rate - expected).abs() < 1.0, "{} vs {expected}", h.rate);
    }

    #[test]
    fn fast_reaction_keeps_the_reference_rate_until_a_round_trip_ends() {
        let t = SimTime::from_us(10);
        let mut h = Hpcc::new(HpccSpec::default(), B as f64, B as f64, t, None);
        h.on_ack(1, &stack(0, 0, 125_000), 100);
        // ACKs of packets sent before the last update (seq <= 100): fast react only (u = 2
        // over half a T, from U = 1 at the start: U = (1 x 5 + 2 x 5) / 10 = 1.5).
        h.on_ack(50, &stack(5, 62_500, 125_000), 120);
        assert!((h.u - 1.5).abs() < 1e-9, "U {}", h.u);
        assert!(h.rate < B as f64);
        assert_eq!(
            h.reference, B as f64,
            "the reference moves once per round trip"
        );
        h.on_ack(101, &stack(10, 125_000, 125_000), 130);
        assert_eq!(h.reference, h.rate);
        let without = Hpcc::new(
            HpccSpec {
                fast_react: false,
                ..HpccSpec::default()
            },
            B as f64,
            B as f64,
            t,
            None,
        );
        let mut w = without;
        w.on_ack(1, &stack(0, 0, 125_000), 100);
        w.on_ack(50, &stack(5, 62_500, 125_000), 120);
        assert_eq!(w.rate, B as f64, "no reaction inside the round trip");
    }
}

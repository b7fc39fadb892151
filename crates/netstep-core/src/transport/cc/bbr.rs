//! BBR version 1 (Cardwell et al., "BBR: Congestion-Based Congestion Control", ACM Queue 2016;
//! draft-cardwell-iccrg-bbr-congestion-control-00). The sender estimates the bottleneck
//! bandwidth `BtlBw` (the maximum delivery rate over the last 10 round trips) and the round-trip
//! propagation time `RTprop` (the minimum RTT over the last 10 s), paces at `pacing_gain x
//! BtlBw` and caps the data in flight at `cwnd_gain x BtlBw x RTprop`:
//!
//! - Startup: both gains `2 / ln 2` until `BtlBw` grows by less than 25 % in three rounds;
//! - Drain: pacing gain `ln 2 / 2` until the data in flight is at most one BDP;
//! - ProbeBW: cwnd gain 2, pacing gains cycling `[1.25, 0.75, 1, 1, 1, 1, 1, 1]`, one phase
//!   per `RTprop` (the cycle starts at the third phase, a cruising one);
//! - ProbeRTT: when `RTprop` has not been refreshed for 10 s, at most 4 segments in flight for
//!   200 ms and one round trip, then back to ProbeBW (or Startup).
//!
//! Loss: packet conservation in recovery (the window drops to the data in flight and is
//! restored when recovery ends); a timeout leaves one segment, and the window grows back by
//! the data acknowledged. Delivery rates come from the sender's per-segment rate samples
//! (draft-cheng-iccrg-delivery-rate-estimation), in segments per second.

use super::{AckSample, Algorithm};
use crate::units::SimTime;

/// Startup's pacing and cwnd gain, `2 / ln 2`.
pub const HIGH_GAIN: f64 = 2.885_390_081_777_927;
/// ProbeBW's pacing gain cycle.
pub const CYCLE: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// Rounds in the `BtlBw` max filter.
pub const BW_WINDOW_ROUNDS: u64 = 10;
/// How long an `RTprop` sample stays valid.
pub const RTPROP_WINDOW: SimTime = SimTime::from_secs(10);
/// Time ProbeRTT holds the window at its minimum.
pub const PROBE_RTT_TIME: SimTime = SimTime::from_ms(200);
/// The smallest window, in segments.
pub const MIN_CWND: f64 = 4.0;

/// The state machine's states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Exponential search for the bottleneck bandwidth.
    Startup,
    /// Draining the queue Startup built.
    Drain,
    /// Steady state: probing for more bandwidth once per cycle.
    ProbeBw,
    /// Draining the path to measure the propagation delay.
    ProbeRtt,
}

/// BBR state, windows in segments and rates in segments per second.
#[derive(Clone, Debug)]
pub struct Bbr {
    /// Congestion window.
    pub cwnd: f64,
    /// Current state.
    pub mode: Mode,
    /// Bottleneck bandwidth estimate (max filter), segments per second.
    pub btl_bw: f64,
    /// Round-trip propagation time estimate (min filter), seconds (`None` before a sample).
    pub rt_prop: Option<f64>,
    /// Pacing rate, segments per second (`None` before the first RTT sample).
    pub pacing_rate: Option<f64>,
    rt_prop_stamp: SimTime,
    /// Max delivery rate per round, the last `BW_WINDOW_ROUNDS` rounds: `(round, rate)`.
    bw_samples: Vec<(u64, f64)>,
    round: u64,
    next_round_delivered: u32,
    full_bw: f64,
    full_bw_rounds: u32,
    filled_pipe: bool,
    pacing_gain: f64,
    cwnd_gain: f64,
    cycle_index: usize,
    cycle_stamp: SimTime,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    prior_cwnd: f64,
    initial_cwnd: f64,
    /// Bits of one segment on the wire (rates in segments per second to bit/s).
    segment_bits: f64,
}

impl Bbr {
    /// Starts in Startup with `initial_cwnd` segments of `segment_bits` each on the wire.
    pub fn new(initial_cwnd: u32, segment_bits: f64) -> Bbr {
        let initial = (initial_cwnd as f64).max(MIN_CWND);
        Bbr {
            cwnd: initial,
            mode: Mode::Startup,
            btl_bw: 0.0,
            rt_prop: None,
            pacing_rate: None,
            rt_prop_stamp: SimTime::ZERO,
            bw_samples: Vec::new(),
            round: 0,
            next_round_delivered: 0,
            full_bw: 0.0,
            full_bw_rounds: 0,
            filled_pipe: false,
            pacing_gain: HIGH_GAIN,
            cwnd_gain: HIGH_GAIN,
            cycle_index: 0,
            cycle_stamp: SimTime::ZERO,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            prior_cwnd: 0.0,
            initial_cwnd: initial,
            segment_bits,
        }
    }

    /// The estimated bandwidth-delay product, segments.
    pub fn bdp(&self) -> Option<f64> {
        self.rt_prop.map(|rtt| self.btl_bw * rtt)
    }

    fn update_btl_bw(&mut self, rate: f64) {
        match self.bw_samples.last_mut() {
            Some((round, best)) if *round == self.round => *best = best.max(rate),
            _ => self.bw_samples.push((self.round, rate)),
        }
        let oldest = self.round.saturating_sub(BW_WINDOW_ROUNDS - 1);
        self.bw_samples.retain(|(round, _)| *round >= oldest);
        self.btl_bw = self.bw_samples.iter().map(|(_, r)| *r).fold(0.0, f64::max);
    }

    /// Returns whether the estimate had expired (ProbeRTT is due), as the draft's
    /// `BBRUpdateRTprop` records it before taking the new sample.
    fn update_rt_prop(&mut self, rtt: SimTime, now: SimTime) -> bool {
        let expired = now > self.rt_prop_stamp.saturating_add(RTPROP_WINDOW);
        if rtt == SimTime::ZERO {
            return expired;
        }
        let sample = rtt.as_secs_f64();
        if self.rt_prop.is_none_or(|min| sample <= min) || expired {
            self.rt_prop = Some(sample);
            self.rt_prop_stamp = now;
        }
        expired
    }

    fn enter_probe_bw(&mut self, now: SimTime) {
        self.mode = Mode::ProbeBw;
        self.cwnd_gain = 2.0;
        self.cycle_index = 2;
        self.pacing_gain = CYCLE[self.cycle_index];
        self.cycle_stamp = now;
    }

    fn advance_cycle(&mut self, now: SimTime, inflight: f64) {
        let Some(rt_prop) = self.rt_prop else { return };
        let bdp = self.btl_bw * rt_prop;
        let elapsed = now.0.saturating_sub(self.cycle_stamp.0) as f64 * 1e-12 > rt_prop;
        let advance = match self.pacing_gain {
            // Probing: stay until the extra data is in flight.
            g if g > 1.0 => elapsed && inflight >= g * bdp,
            // Draining: leave early once the queue is gone.
            g if g < 1.0 => elapsed || inflight <= bdp,
            _ => elapsed,
        };
        if advance {
            self.cycle_index = (self.cycle_index + 1) % CYCLE.len();
            self.pacing_gain = CYCLE[self.cycle_index];
            self.cycle_stamp = now;
        }
    }

    fn check_probe_rtt(
        &mut self,
        ack: &AckSample,
        inflight: f64,
        round_start: bool,
        expired: bool,
    ) {
        if self.mode != Mode::ProbeRtt && expired && self.rt_prop.is_some() {
            self.mode = Mode::ProbeRtt;
            self.pacing_gain = 1.0;
            self.cwnd_gain = 1.0;
            self.prior_cwnd = self.cwnd;
            self.probe_rtt_done = None;
            self.probe_rtt_round_done = false;
        }
        if self.mode != Mode::ProbeRtt {
            return;
        }
        match self.probe_rtt_done {
            None if inflight <= MIN_CWND => {
                self.probe_rtt_done = Some(ack.now + PROBE_RTT_TIME);
                self.probe_rtt_round_done = false;
                self.next_round_delivered = ack.delivered;
            }
            Some(done) => {
                if round_start {
                    self.probe_rtt_round_done = true;
                }
                if self.probe_rtt_round_done && ack.now >= done {
                    self.rt_prop_stamp = ack.now;
                    self.cwnd = self.cwnd.max(self.prior_cwnd);
                    if self.filled_pipe {
                        self.enter_probe_bw(ack.now);
                    } else {
                        self.mode = Mode::Startup;
                        self.pacing_gain = HIGH_GAIN;
                        self.cwnd_gain = HIGH_GAIN;
                    }
                }
            }
            None => {}
        }
    }
}

impl Algorithm for Bbr {
    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    /// An ACK of new data (cumulative or selective) outside recovery, or inside it.
    fn on_ack(&mut self, ack: &AckSample) {
        let inflight = ack.high.saturating_sub(ack.una) as f64;
        // A new round trip starts when a segment sent after the last round's start is
        // delivered.
        let mut round_start = false;
        if let Some(sample) = ack.rate {
            if sample.prior_delivered >= self.next_round_delivered {
                self.next_round_delivered = ack.delivered;
                self.round += 1;
                round_start = true;
            }
            self.update_btl_bw(sample.rate);
        }
        let rt_prop_expired = self.update_rt_prop(ack.rtt, ack.now);
        if self.mode == Mode::ProbeBw {
            self.advance_cycle(ack.now, inflight);
        }
        if round_start && !self.filled_pipe {
            if self.btl_bw >= self.full_bw * 1.25 {
                self.full_bw = self.btl_bw;
                self.full_bw_rounds = 0;
            } else {
                self.full_bw_rounds += 1;
                if self.full_bw_rounds >= 3 {
                    self.filled_pipe = true;
                }
            }
        }
        if self.mode == Mode::Startup && self.filled_pipe {
            self.mode = Mode::Drain;
            self.pacing_gain = 1.0 / HIGH_GAIN;
            self.cwnd_gain = HIGH_GAIN;
        }
        if self.mode == Mode::Drain && self.bdp().is_some_and(|bdp| inflight <= bdp) {
            self.enter_probe_bw(ack.now);
        }
        self.check_probe_rtt(ack, inflight, round_start, rt_prop_expired);
        // Pacing rate: gain x BtlBw (never lowered during Startup).
        if self.btl_bw > 0.0 {
            let rate = self.pacing_gain * self.btl_bw;
            if self.filled_pipe || self.pacing_rate.is_none_or(|r| rate > r) {
                self.pacing_rate = Some(rate);
            }
        } else if let (None, Some(rtt)) = (self.pacing_rate, self.rt_prop) {
            self.pacing_rate = Some(HIGH_GAIN * self.cwnd / rtt.max(1e-9));
        }
        // Window: grow by the data acknowledged towards cwnd_gain x BDP.
        let acked = ack.acked as f64;
        match self.bdp() {
            Some(bdp) if self.btl_bw > 0.0 => {
                let target = (self.cwnd_gain * bdp + 3.0).max(MIN_CWND);
                if self.filled_pipe {
                    self.cwnd = (self.cwnd + acked).min(target);
                } else if self.cwnd < target || (ack.delivered as f64) < self.initial_cwnd {
                    self.cwnd += acked;
                }
            }
            _ => self.cwnd += acked,
        }
        self.cwnd = self.cwnd.max(MIN_CWND);
        if self.mode == Mode::ProbeRtt {
            self.cwnd = self.cwnd.min(MIN_CWND);
        }
    }

    /// Loss recovery starts: packet conservation (the window is what is in flight).
    fn on_congestion(&mut self, flight: u32) {
        self.prior_cwnd = self.cwnd;
        self.cwnd = (flight as f64).max(MIN_CWND);
    }

    /// Recovery ended: the window before it comes back.
    fn on_recovery_exit(&mut self, _flight: Option<u32>) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// A timeout: one segment; the window grows back by the data acknowledged.
    fn on_timeout(&mut self, _flight: u32) {
        self.prior_cwnd = self.cwnd;
        self.cwnd = 1.0;
    }

    /// Pacing rate in bit/s: `pacing_gain x BtlBw`.
    fn pacing_rate(&self) -> Option<f64> {
        self.pacing_rate.map(|r| r * self.segment_bits)
    }

    fn btl_bw_bps(&self) -> Option<f64> {
        (self.btl_bw > 0.0).then_some(self.btl_bw * self.segment_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::RateSample;

    /// A steady path: `rate` segments per second, `rtt` seconds; ACKs one segment apart.
    /// The sender keeps the window full, as far as pacing lets it: at most
    /// `max(pacing_gain, 1) x rate x rtt` in flight.
    fn drive(b: &mut Bbr, now: &mut SimTime, delivered: &mut u32, acks: u32, rate: f64, rtt: f64) {
        for _ in 0..acks {
            *now = *now + SimTime((1e12 / rate) as u64);
            *delivered += 1;
            let inflight = b.cwnd.min(b.pacing_gain.max(1.0) * rate * rtt) as u32;
            b.on_ack(&AckSample {
                now: *now,
                rtt: SimTime((rtt * 1e12) as u64),
                una: *delivered,
                high: *delivered + inflight,
                delivered: *delivered,
                rate: Some(RateSample {
                    rate,
                    prior_delivered: delivered.saturating_sub(inflight),
                }),
                ..AckSample::test(1)
            });
        }
    }

    #[test]
    fn startup_ends_on_a_bandwidth_plateau_and_probe_bw_caps_the_window_at_two_bdp() {
        let mut b = Bbr::new(10, 12_000.0);
        let (mut now, mut delivered) = (SimTime::ZERO, 0);
        // 10,000 segments/s and 10 ms: a BDP of 100 segments.
        drive(&mut b, &mut now, &mut delivered, 2_000, 10_000.0, 0.01);
        assert!(b.filled_pipe, "three rounds without 25 % growth");
        assert_eq!(b.btl_bw, 10_000.0);
        assert_eq!(b.rt_prop, Some(0.01));
        assert_eq!(b.mode, Mode::ProbeBw, "drained: in flight <= BDP");
        assert!((b.cwnd - (2.0 * 100.0 + 3.0)).abs() < 1e-6, "{}", b.cwnd);
        // Pacing at gain x BtlBw.
        let gain = b.pacing_gain;
        assert!((b.pacing_rate.unwrap() - gain * 10_000.0).abs() < 1e-6);
    }

    #[test]
    fn the_cycle_probes_then_drains_and_probe_rtt_comes_every_ten_seconds() {
        let mut b = Bbr::new(10, 12_000.0);
        let (mut now, mut delivered) = (SimTime::ZERO, 0);
        drive(&mut b, &mut now, &mut delivered, 2_000, 10_000.0, 0.01);
        let mut gains = Vec::new();
        for _ in 0..2_000 {
            drive(&mut b, &mut now, &mut delivered, 1, 10_000.0, 0.01);
            if gains.last() != Some(&b.pacing_gain) {
                gains.push(b.pacing_gain);
            }
        }
        assert!(gains.contains(&0.75), "{gains:?}");
        // ProbeRTT after 10 s without a smaller RTT sample.
        let mut entered = false;
        for _ in 0..600 {
            drive(&mut b, &mut now, &mut delivered, 200, 10_000.0, 0.0101);
            entered |= b.mode == Mode::ProbeRtt;
        }
        assert!(entered);
    }
}

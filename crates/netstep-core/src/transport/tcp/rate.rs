//! Delivery-rate estimation for the congestion controls that ask for it (BBR):
//! draft-cheng-iccrg-delivery-rate-estimation, in segments.

use crate::packet::Packet;
use crate::transport::cc::RateSample;
use crate::units::SimTime;

/// Delivery-rate estimation (draft-cheng-iccrg-delivery-rate-estimation), in segments.
#[derive(Clone, Debug, Default)]
pub(super) struct RateState {
    /// Segments delivered (cumulatively acknowledged or SACKed).
    pub(super) delivered: u32,
    /// When `delivered` last grew.
    pub(super) delivered_time: SimTime,
    /// Send time of the segment whose delivery last produced a sample.
    pub(super) first_sent_time: SimTime,
    /// Per segment, at its last transmission: (delivered, delivered_time, first_sent_time,
    /// sent_time).
    pub(super) segments: Vec<(u32, SimTime, SimTime, SimTime)>,
}

impl RateState {
    /// `delivered` segments are now delivered, after `ack` at `now`: the count to report and
    /// a rate sample from the most recently sent segment the ACK newly delivered.
    pub(super) fn sample(
        &mut self,
        delivered: u32,
        ack: &Packet,
        now: SimTime,
    ) -> (u32, Option<RateSample>) {
        let r = self;
        if delivered <= r.delivered {
            return (r.delivered, None);
        }
        r.delivered = delivered;
        r.delivered_time = now;
        // The newest segment the ACK covers: the last one acknowledged cumulatively or the
        // last one of its SACK block, whichever was sent later.
        let sacked = (ack.sack_len > 0).then(|| ack.sack_start + ack.sack_len as u32 - 1);
        let newest = [Some(ack.seq - 1), sacked]
            .into_iter()
            .flatten()
            .filter_map(|s| r.segments.get(s as usize).copied())
            .max_by_key(|p| p.3);
        let Some((prior_delivered, prior_time, first_sent, sent)) = newest else {
            return (delivered, None);
        };
        r.first_sent_time = sent;
        let send_elapsed = sent.0.saturating_sub(first_sent.0);
        let ack_elapsed = now.0.saturating_sub(prior_time.0);
        let interval = send_elapsed.max(ack_elapsed);
        let sample = (interval > 0).then(|| RateSample {
            rate: (delivered - prior_delivered.min(delivered)) as f64 / (interval as f64 * 1e-12),
            prior_delivered,
        });
        (delivered, sample)
    }
}

//! The connection's opening (`handshake = true`): the sender's SYN, retransmitted on its own
//! timer (`syn_rto`, doubled at each retry up to `rto_max`, `syn_retries` times: RFC 6298
//! §5.7 / Linux `tcp_syn_retries`; ns-3's `ConnTimeout` and `ConnCount`), and the receiver's
//! SYN-ACK, sent for every SYN it gets (a lost SYN-ACK is answered again when the SYN is
//! retransmitted). Both are `header_bytes + syn_option_bytes` on the wire and carry
//! [`Packet::SYN`]; the SYN is a data-kind packet of sequence 0 that no receiver counts as data.
//! The SYN-ACK echoes the SYN's send time, the connection's first RTT sample. The sender
//! answers the SYN-ACK with the third segment, a header-only ACK ([`third_ack`]), just ahead
//! of its first data segment, as ns-3 3.44 (`ProcessSynSent`: `SendEmptyPacket(ACK)`, then
//! `SendPendingData`) and Linux (`tcp_send_ack` from `tcp_rcv_synsent_state_process`) do.

use super::TcpSpec;
use crate::packet::{ACK_NUMBER_BIT, Packet, PacketKind};
use crate::transport::timer::TimerToken;
use crate::transport::{FailureReason, FlowEnds, TransportOut};
use crate::units::SimTime;

/// The SYN timer's kind ([`TimerToken`]), beside the sender's retransmission and pacing timers.
pub(super) const SYN_TIMER: u32 = 2;

/// A SYN waiting for its SYN-ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Opening {
    /// SYNs sent so far.
    tries: u32,
    /// The timeout of the SYN in flight.
    rto: SimTime,
    /// When the first SYN left: without timestamps (Karn's rule) the SYN-ACK's RTT sample is
    /// taken from it even after retransmissions, as ns-3 3.44 does (its send history logs the
    /// first SYN only and never marks it retransmitted).
    pub(super) first_sent: SimTime,
}

impl Opening {
    /// Sends the first SYN at `now`; `number` is the sender's packet counter.
    pub(super) fn start(
        spec: &TcpSpec,
        ends: &FlowEnds,
        number: &mut u32,
        now: SimTime,
        out: &mut TransportOut,
    ) -> Opening {
        let mut opening = Opening {
            tries: 0,
            rto: spec.syn_rto,
            first_sent: now,
        };
        opening.send(spec, ends, number, now, out);
        opening
    }

    fn send(
        &mut self,
        spec: &TcpSpec,
        ends: &FlowEnds,
        number: &mut u32,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        let size = spec.header_bytes + spec.syn_option_bytes;
        out.packets.push(sender_segment(ends, number, 0, size, now));
        self.tries += 1;
        let token = TimerToken::new(SYN_TIMER, self.tries).encode();
        out.timers.push((now + self.rto, token));
    }

    /// The SYN timer `token` fired at `now`: the SYN again (with the timeout doubled), or
    /// the flow given up after `syn_retries` retransmissions. Stale tokens do nothing
    /// (`Ok(false)`).
    pub(super) fn on_timer(
        &mut self,
        spec: &TcpSpec,
        ends: &FlowEnds,
        token: TimerToken,
        number: &mut u32,
        now: SimTime,
        out: &mut TransportOut,
    ) -> Result<bool, FailureReason> {
        if !token.is_current(self.tries) {
            return Ok(false);
        }
        if self.tries > spec.syn_retries {
            return Err(FailureReason::SynRetries);
        }
        self.rto = SimTime(self.rto.0.saturating_mul(2).min(spec.rto_max.0));
        self.send(spec, ends, number, now, out);
        Ok(true)
    }
}

/// Sequence number that marks the handshake's third segment ([`third_ack`]) among the
/// data-kind packets that carry [`Packet::SYN`].
pub(super) const THIRD_ACK_SEQ: u32 = u32::MAX;

/// The handshake's third segment: a header-only packet from the sender to the receiver, which
/// ignores it (a data-kind packet with [`Packet::SYN`] and sequence [`THIRD_ACK_SEQ`]).
pub(super) fn third_ack(spec: &TcpSpec, ends: &FlowEnds, number: &mut u32, now: SimTime) -> Packet {
    sender_segment(ends, number, THIRD_ACK_SEQ, spec.header_bytes, now)
}

/// A handshake segment from the sender (a data-kind packet carrying [`Packet::SYN`]) of
/// `size` bytes and sequence `seq`, numbered from the sender's packet counter `number`.
fn sender_segment(ends: &FlowEnds, number: &mut u32, seq: u32, size: u32, now: SimTime) -> Packet {
    let mut segment = Packet::new(PacketKind::Data, ends.flow, *number, seq, ends.dst, size);
    segment.sent_ps = now.0;
    segment.set(Packet::SYN, true);
    *number = (*number + 1) & !ACK_NUMBER_BIT;
    segment
}

/// The receiver's answer to `syn`: a SYN-ACK of sequence 0 echoing the SYN's send time.
pub(super) fn syn_ack(spec: &TcpSpec, syn: &Packet, number: u32, src: u32) -> Packet {
    let mut ack = Packet::new(
        PacketKind::Ack,
        syn.flow,
        ACK_NUMBER_BIT | number,
        0,
        src,
        spec.header_bytes + spec.syn_option_bytes,
    );
    ack.sent_ps = syn.sent_ps;
    ack.set(Packet::SYN, true);
    ack
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::CcSpec;
    use crate::units::Bytes;

    /// Flow `flow` from node 0 to node 1, 10,000 bytes.
    fn ends(flow: u32) -> FlowEnds {
        FlowEnds {
            flow,
            src: 0,
            dst: 1,
            size: Bytes(10_000),
            seed: 1,
            line_rate_bps: 0.0,
            base_rtt: SimTime::ZERO,
            nic_pulls: false,
        }
    }

    #[test]
    fn a_syn_is_retried_with_a_doubling_timeout_then_given_up() {
        let spec = TcpSpec {
            handshake: true,
            syn_option_bytes: 8,
            syn_rto: SimTime(1_000),
            syn_retries: 2,
            ..TcpSpec::new(CcSpec::NewReno)
        };
        let ends = ends(3);
        let mut out = TransportOut::default();
        let mut number = 0;
        let mut o = Opening::start(&spec, &ends, &mut number, SimTime(0), &mut out);
        let syn = out.packets[0];
        assert!(syn.has(Packet::SYN) && syn.kind == PacketKind::Data);
        assert_eq!((syn.size_bytes, syn.dst, syn.seq), (48, 1, 0));
        let fire = |o: &mut Opening, out: &mut TransportOut, number: &mut u32| {
            let (at, token) = *out.timers.last().unwrap();
            (
                at,
                o.on_timer(&spec, &ends, TimerToken::decode(token), number, at, out),
            )
        };
        assert_eq!(
            fire(&mut o, &mut out, &mut number),
            (SimTime(1_000), Ok(true))
        );
        assert_eq!(
            fire(&mut o, &mut out, &mut number),
            (SimTime(3_000), Ok(true))
        );
        assert_eq!(
            fire(&mut o, &mut out, &mut number),
            (SimTime(7_000), Err(FailureReason::SynRetries)),
            "two retries, then given up"
        );
        assert_eq!(out.packets.len(), 3);
        let stale = TimerToken::new(SYN_TIMER, 1);
        assert_eq!(
            o.on_timer(&spec, &ends, stale, &mut number, SimTime(9), &mut out),
            Ok(false)
        );
        let answer = syn_ack(&spec, &out.packets[2], 0, 0);
        assert!(answer.has(Packet::SYN) && answer.kind == PacketKind::Ack);
        assert_eq!((answer.sent_ps, answer.size_bytes), (3_000, 48));
    }

    /// The first SYN is lost, the second (at 1,000 ps) answered at 3,500 ps: the first RTT
    /// sample is the echo's 2,500 ps with timestamps, and 3,500 ps from the first SYN without
    /// (ns-3 3.44's send history).
    #[test]
    fn the_syn_ack_sample_runs_from_the_echo_or_under_karn_from_the_first_syn() {
        use super::super::RttSampling;
        use super::super::sender::TcpSender;
        for (sampling, srtt) in [(RttSampling::Echo, 2_500), (RttSampling::Karn, 3_500)] {
            let spec = TcpSpec {
                handshake: true,
                syn_rto: SimTime(1_000),
                rtt_sampling: sampling,
                ..TcpSpec::new(CcSpec::NewReno)
            };
            let ends = ends(0);
            let mut out = TransportOut::default();
            let mut sender = TcpSender::start(&spec, ends, SimTime(0), &mut out);
            let (at, token) = *out.timers.last().unwrap();
            assert_eq!(at, SimTime(1_000));
            sender.on_timer(&spec, token, at, &mut out);
            let second = *out.packets.last().unwrap();
            assert_eq!((second.has(Packet::SYN), second.sent_ps), (true, 1_000));
            let answer = syn_ack(&spec, &second, 0, 0);
            sender.on_ack(&spec, &answer, None, SimTime(3_500), &mut out);
            let sample = sender.cc_sample(SimTime(3_500));
            assert_eq!(sample.srtt_ps, Some(srtt), "{sampling:?}");
        }
    }
}

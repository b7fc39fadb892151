//! The RDMA receiver: in-order delivery (or selective repeat), an ACK per packet or per
//! `ack_every`, a NACK per gap ([`super`] describes the protocol).

use super::{RdmaSpec, Recovery};
use crate::packet::{ACK_NUMBER_BIT, Ecn, Packet, PacketKind};
use crate::transport::{FlowEnds, TransportOut};
use crate::units::{MaybeTime, SimTime};

/// Receiver state of one RDMA flow: in-order delivery, ACK per packet, NACK per gap.
#[derive(Clone, Debug)]
pub struct RdmaReceiver {
    src: u32,
    flow: u32,
    n_packets: u32,
    expected: u32,
    acks_sent: u32,
    /// The next in-order position that triggers an ACK (coalesced ACKs).
    ack_at: u32,
    /// The position the last NACK asked for, sent at `nack_at`.
    nack_seq: u32,
    /// Distinct packets delivered.
    delivered: u32,
    /// Selective repeat: packets above `expected` already received (allocated on the first;
    /// boxed, 8 B instead of an empty set's 24, as every flow keeps its receiver).
    #[allow(clippy::box_collection)]
    held: Option<Box<std::collections::BTreeSet<u32>>>,
    /// When the last NACK was sent, if one was (one word: a finished flow's receiver stays for
    /// the rest of the run, to answer late retransmissions, so it is kept small).
    nack_at: MaybeTime,
    /// When the last packet arrived, once all have.
    completed: MaybeTime,
    /// A packet since the last ACK arrived CE-marked.
    ce_pending: bool,
}

impl RdmaReceiver {
    /// A receiver for a flow.
    pub fn new(spec: &RdmaSpec, ends: FlowEnds) -> RdmaReceiver {
        RdmaReceiver {
            src: ends.src,
            flow: ends.flow,
            n_packets: spec.n_packets(ends.size),
            expected: 0,
            acks_sent: 0,
            ack_at: spec.ack_every.max(1),
            nack_seq: 0,
            delivered: 0,
            held: None,
            nack_at: MaybeTime::NONE,
            completed: MaybeTime::NONE,
            ce_pending: false,
        }
    }

    /// Distinct packets delivered.
    pub fn delivered(&self) -> u64 {
        self.delivered as u64
    }

    /// When the last packet arrived, once all have.
    pub fn completed(&self) -> Option<SimTime> {
        self.completed.get()
    }

    /// A data packet arrived.
    pub fn on_data(
        &mut self,
        spec: &RdmaSpec,
        data: &Packet,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        self.ce_pending |= data.ecn == Ecn::Ce;
        let kind = if data.seq == self.expected {
            self.expected += 1;
            self.delivered += 1;
            if let Some(held) = self.held.as_mut() {
                while held.remove(&self.expected) {
                    self.expected += 1;
                }
                if held.is_empty() {
                    // Freed again: a finished flow's receiver stays for the whole run.
                    self.held = None;
                }
            }
            if self.expected == self.n_packets && self.completed.is_none() {
                self.completed = MaybeTime::at(now);
            }
            if self.expected < self.ack_at && self.expected < self.n_packets {
                // Coalesced: this one is acknowledged by a later ACK.
                return;
            }
            let every = spec.ack_every.max(1);
            self.ack_at = (self.expected / every + 1) * every;
            PacketKind::Ack
        } else if data.seq > self.expected {
            if spec.recovery == Recovery::SelectiveRepeat
                && self.held.get_or_insert_default().insert(data.seq)
            {
                self.delivered += 1;
            }
            let again = self.nack_seq == self.expected
                && self
                    .nack_at
                    .get()
                    .is_some_and(|at| now < at + spec.nack_interval);
            if again {
                return;
            }
            (self.nack_seq, self.nack_at) = (self.expected, MaybeTime::at(now));
            PacketKind::Nack
        } else {
            // A duplicate: acknowledge where we are.
            PacketKind::Ack
        };
        let mut ack = Packet::new(
            kind,
            self.flow,
            ACK_NUMBER_BIT | self.acks_sent,
            self.expected,
            self.src,
            spec.ack_bytes,
        );
        ack.sent_ps = data.sent_ps;
        ack.set(Packet::ECN_ECHO, self.ce_pending);
        self.ce_pending = false;
        out.packets.push(ack);
        self.acks_sent = (self.acks_sent + 1) & !ACK_NUMBER_BIT;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::rdma::{RdmaCc, dcqcn::DcqcnSpec};
    use crate::units::Bytes;

    #[test]
    fn coalesced_acks_echo_a_mark_on_any_packet_since_the_last_ack() {
        let spec = RdmaSpec {
            mtu_bytes: 1000,
            header_bytes: 48,
            ack_bytes: 48,
            rto: SimTime::from_ms(1),
            max_retries: 15,
            nack_interval: SimTime::from_us(500),
            ack_every: 4,
            recovery: Recovery::GoBackN,
            cc: RdmaCc::Dcqcn(DcqcnSpec::default()),
            max_rate_bps: None,
            window: None,
        };
        let ends = FlowEnds {
            flow: 0,
            src: 0,
            dst: 1,
            size: Bytes(6000),
            seed: 1,
            line_rate_bps: 10e9,
            base_rtt: SimTime::ZERO,
            nic_pulls: false,
        };
        let mut r = RdmaReceiver::new(&spec, ends);
        let mut out = TransportOut::default();
        for seq in 0..6 {
            let mut data = Packet::new(PacketKind::Data, 0, seq, seq, 1, 1048);
            data.ecn = if seq == 1 { Ecn::Ce } else { Ecn::Ect0 };
            r.on_data(&spec, &data, SimTime::from_us(seq as u64), &mut out);
        }
        // Packets 0-3: one ACK (next expected 4) echoing packet 1's mark; packets 4-5: the
        // last packet is acknowledged at once, unmarked.
        let acks: Vec<(u32, bool)> = out
            .packets
            .iter()
            .map(|p| (p.seq, p.has(Packet::ECN_ECHO)))
            .collect();
        assert_eq!(acks, vec![(4, true), (6, false)]);
    }
}

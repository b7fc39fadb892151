//! The TCP receiver: reassembly, cumulative ACKs with SACK blocks (RFC 2018), optional
//! delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
//!
//! Out-of-order segments are kept as disjoint ranges. Each ACK carries the cumulative point
//! and, when data is missing, one SACK block: the range holding the segment that triggered the
//! ACK, or, when that segment advanced the cumulative point, the lowest range still held
//! (RFC 2018 §4 asks for that block first; netstep's packet has room for one). With
//! `sack_blocks` > 1 the ACK carries up to three more in its side record
//! ([`crate::telemetry::SideRecord`]): the ranges of the most recently received out-of-order
//! segments, most recent first; otherwise a sender learns them from the ACKs of the segments
//! that made them.
//!
//! With `delayed_ack`, an in-order segment is acknowledged together with the next one or when
//! the delay expires, whichever comes first; a segment out of order, a duplicate, or one that
//! fills (part of) a gap is acknowledged at once. An ACK echoes the send time of the oldest
//! segment it acknowledges first (RFC 7323 §4.3), so delayed ACKs show in the sender's RTT.

use std::collections::{BTreeMap, VecDeque};

use super::TcpSpec;
use crate::packet::{ACK_NUMBER_BIT, Packet, PacketKind};
use crate::telemetry::{MAX_EXTRA_SACK_BLOCKS, SideRecord};
use crate::transport::{FlowEnds, TransportOut};
use crate::units::SimTime;

/// Receiver state of one TCP flow.
#[derive(Clone, Debug)]
pub struct TcpReceiver {
    flow: u32,
    src: u32,
    n_segments: u32,
    expected: u32,
    /// Out-of-order ranges `start -> end` (exclusive), disjoint and not adjacent.
    ranges: BTreeMap<u32, u32>,
    acks_sent: u32,
    /// In-order segments received and not yet acknowledged (delayed ACK).
    pending: u32,
    /// Send time echoed by the next ACK.
    echo_ps: u64,
    /// Whether the last data segment arrived CE-marked (echoed as ECE, RFC 8257 §3.2).
    ce: bool,
    /// A segment since the last ACK arrived with the DECbit congestion bit.
    congestion: bool,
    timer_token: u32,
    /// Out-of-order segments most recently received first (`sack_blocks` > 1 only): the
    /// order of the further SACK blocks.
    recent: VecDeque<u32>,
    /// Distinct segments received.
    pub delivered: u64,
    /// When the last missing segment arrived.
    pub completed: Option<SimTime>,
}

impl TcpReceiver {
    /// A receiver for a flow.
    pub fn new(spec: &TcpSpec, ends: FlowEnds) -> TcpReceiver {
        TcpReceiver {
            flow: ends.flow,
            src: ends.src,
            n_segments: spec.n_segments(ends.size),
            expected: 0,
            ranges: BTreeMap::new(),
            acks_sent: 0,
            pending: 0,
            echo_ps: 0,
            ce: false,
            congestion: false,
            timer_token: 0,
            recent: VecDeque::new(),
            delivered: 0,
            completed: None,
        }
    }

    /// Stores `seq` if new; returns `(new, in order)`.
    fn store(&mut self, seq: u32) -> (bool, bool) {
        if seq < self.expected {
            return (false, false);
        }
        if seq == self.expected {
            self.expected += 1;
            if let Some((&start, &end)) = self.ranges.first_key_value()
                && start == self.expected
            {
                self.ranges.remove(&start);
                self.expected = end;
            }
            return (true, true);
        }
        // Out of order: merge into the ranges.
        let before = self.ranges.range(..=seq).next_back().map(|(&s, &e)| (s, e));
        if let Some((_, end)) = before
            && seq < end
        {
            return (false, false);
        }
        let mut start = seq;
        let mut end = seq + 1;
        if let Some((s, e)) = before
            && e == seq
        {
            self.ranges.remove(&s);
            start = s;
        }
        if let Some(e) = self.ranges.remove(&end) {
            end = e;
        }
        self.ranges.insert(start, end);
        (true, false)
    }

    /// The SACK block to report: the range holding `seq`, else the lowest one.
    fn sack_block(&self, seq: u32) -> Option<(u32, u32)> {
        let (start, end) = self
            .ranges
            .range(..=seq)
            .next_back()
            .filter(|&(_, &e)| seq < e)
            .or_else(|| self.ranges.first_key_value())
            .map(|(&s, &e)| (s, e))?;
        // The packet's length field holds 65,535 segments; keep the part nearest `seq`.
        let max = u16::MAX as u32;
        let start = if end - start > max {
            seq.clamp(start, end - 1).saturating_sub(max - 1).max(start)
        } else {
            start
        };
        Some((start, (end - start).min(max)))
    }

    /// Up to `n` SACK blocks besides the one starting at `first`: the ranges holding the
    /// most recently received out-of-order segments, most recent first (RFC 2018 §4).
    fn further_blocks(&self, first: u32, n: usize) -> Vec<(u32, u32)> {
        let mut blocks: Vec<(u32, u32)> = Vec::with_capacity(n);
        for &seq in &self.recent {
            if blocks.len() == n {
                break;
            }
            let Some((&start, &end)) = self.ranges.range(..=seq).next_back() else {
                continue;
            };
            let held = seq < end && start != first && !blocks.iter().any(|b| b.0 == start);
            if held {
                blocks.push((start, end - start));
            }
        }
        blocks
    }

    /// Accepts a segment; acknowledges it now or arms the delayed-ACK timer.
    pub fn on_data(&mut self, spec: &TcpSpec, data: &Packet, now: SimTime, out: &mut TransportOut) {
        if data.has(Packet::SYN) {
            if data.seq == super::handshake::THIRD_ACK_SEQ {
                return;
            }
            out.packets.push(super::handshake::syn_ack(
                spec,
                data,
                self.acks_sent,
                self.src,
            ));
            self.acks_sent = (self.acks_sent + 1) & !ACK_NUMBER_BIT;
            return;
        }
        let seq = data.seq;
        let ce = data.ecn == crate::packet::Ecn::Ce;
        if ce != self.ce && self.pending > 0 {
            // RFC 8257 §3.2: the CE state changes while an ACK is delayed: acknowledge what
            // came before at once, with the old state.
            self.send_ack(spec, self.expected, out);
        }
        self.ce = ce;
        // DECbit: the next ACK carries the bit if any segment it answers had it.
        self.congestion |= data.has(Packet::CONGESTION);
        let had_gap = !self.ranges.is_empty();
        let (new, in_order) = self.store(seq);
        if new {
            self.delivered += 1;
            if !in_order && spec.sack_blocks > 1 {
                self.recent.retain(|&s| s != seq);
                self.recent.push_front(seq);
                self.recent.truncate(2 * MAX_EXTRA_SACK_BLOCKS + 2);
            }
        }
        if self.expected == self.n_segments && self.completed.is_none() {
            self.completed = Some(now);
        }
        if self.pending == 0 {
            self.echo_ps = data.sent_ps;
        }
        let delay = match spec.delayed_ack {
            Some(delay) if new && in_order && !had_gap && self.pending == 0 => delay,
            _ => {
                self.send_ack(spec, seq, out);
                return;
            }
        };
        self.pending = 1;
        self.timer_token = self.timer_token.wrapping_add(1);
        out.timers.push((now + delay, self.timer_token));
    }

    /// The delayed-ACK timer fired; true when it sent an ACK.
    pub fn on_timer(&mut self, spec: &TcpSpec, token: u32, out: &mut TransportOut) -> bool {
        if token != self.timer_token || self.pending == 0 {
            return false;
        }
        self.send_ack(spec, self.expected, out);
        true
    }

    fn send_ack(&mut self, spec: &TcpSpec, seq: u32, out: &mut TransportOut) {
        let mut ack = Packet::new(
            PacketKind::Ack,
            self.flow,
            ACK_NUMBER_BIT | self.acks_sent,
            self.expected,
            self.src,
            spec.header_bytes,
        );
        ack.sent_ps = self.echo_ps;
        ack.set(Packet::ECN_ECHO, self.ce);
        ack.set(Packet::CONGESTION, self.congestion);
        self.congestion = false;
        let mut blocks = 0;
        if let Some((start, len)) = self.sack_block(seq) {
            ack.sack_start = start;
            ack.sack_len = len as u16;
            blocks = 1;
            if spec.sack_blocks > 1 {
                let extra = self.further_blocks(start, spec.sack_blocks as usize - 1);
                blocks += extra.len() as u32;
                if !extra.is_empty() {
                    let record = Box::new(SideRecord::with_sack_blocks(&extra));
                    out.side.push((out.packets.len(), record));
                }
            }
        }
        ack.size_bytes = spec.ack_bytes(blocks);
        out.packets.push(ack);
        self.acks_sent = (self.acks_sent + 1) & !ACK_NUMBER_BIT;
        self.pending = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::cc::CcSpec;
    use crate::units::Bytes;

    fn spec(delayed_ack: Option<SimTime>) -> TcpSpec {
        TcpSpec {
            delayed_ack,
            ..TcpSpec::new(CcSpec::NewReno)
        }
    }

    fn receiver(spec: &TcpSpec) -> TcpReceiver {
        let ends = FlowEnds {
            flow: 0,
            src: 0,
            dst: 1,
            size: Bytes(1460 * 20),
            seed: 1,
            line_rate_bps: 0.0,
            base_rtt: SimTime::ZERO,
            nic_pulls: false,
        };
        TcpReceiver::new(spec, ends)
    }

    fn data(seq: u32, sent_ps: u64) -> Packet {
        let mut p = Packet::new(PacketKind::Data, 0, seq, seq, 1, 1500);
        p.sent_ps = sent_ps;
        p
    }

    #[test]
    fn sack_block_holds_the_segment_that_triggered_the_ack() {
        let spec = spec(None);
        let mut r = receiver(&spec);
        let mut out = TransportOut::default();
        for seq in [0, 2, 3, 6, 4] {
            r.on_data(&spec, &data(seq, 0), SimTime(1), &mut out);
        }
        let blocks: Vec<(u32, u32, u16)> = out
            .packets
            .iter()
            .map(|a| (a.seq, a.sack_start, a.sack_len))
            .collect();
        assert_eq!(
            blocks,
            vec![(1, 0, 0), (1, 2, 1), (1, 2, 2), (1, 6, 1), (1, 2, 3)]
        );
        out.packets.clear();
        r.on_data(&spec, &data(1, 0), SimTime(2), &mut out);
        // The hole at 1 filled: cumulative point 5, the lowest remaining range reported.
        assert_eq!((out.packets[0].seq, out.packets[0].sack_start), (5, 6));
        assert_eq!(r.delivered, 6);
    }

    #[test]
    fn further_sack_blocks_follow_the_most_recent_segments_and_cost_option_bytes() {
        let spec = TcpSpec {
            sack_blocks: 4,
            sack_option_bytes: true,
            ..spec(None)
        };
        let mut r = receiver(&spec);
        let mut out = TransportOut::default();
        for seq in [0, 2, 4, 6] {
            r.on_data(&spec, &data(seq, 0), SimTime(1), &mut out);
        }
        let last = out.packets.last().unwrap();
        assert_eq!((last.sack_start, last.sack_len), (6, 1));
        // 40 B + 2 + 3 x 8 = 26 -> 28 option bytes.
        assert_eq!(last.size_bytes, 68);
        let (index, record) = out.side.last().unwrap();
        assert_eq!(*index, out.packets.len() - 1);
        assert_eq!(record.sack_blocks(), &[(4, 1), (2, 1)]);
        assert_eq!(out.packets[0].size_bytes, 40, "no block, no option");
        // Segment 3 joins 2 and 4: its block first, then 6's; the merged range once.
        out = TransportOut::default();
        r.on_data(&spec, &data(3, 0), SimTime(2), &mut out);
        assert_eq!((out.packets[0].sack_start, out.packets[0].sack_len), (2, 3));
        assert_eq!(out.side[0].1.sack_blocks(), &[(6, 1)]);
        assert_eq!(out.packets[0].size_bytes, 60);
    }

    #[test]
    fn delayed_ack_covers_two_segments_or_fires_on_its_timer() {
        let spec = spec(Some(SimTime(500)));
        let mut r = receiver(&spec);
        let mut out = TransportOut::default();
        r.on_data(&spec, &data(0, 10), SimTime(100), &mut out);
        assert!(out.packets.is_empty());
        assert_eq!(out.timers, vec![(SimTime(600), 1)]);
        r.on_data(&spec, &data(1, 20), SimTime(110), &mut out);
        assert_eq!(out.packets.len(), 1, "every second segment is acknowledged");
        assert_eq!(
            (out.packets[0].seq, out.packets[0].sent_ps),
            (2, 10),
            "echoes the oldest segment it acknowledges"
        );
        assert!(!r.on_timer(&spec, 1, &mut out), "the timer was overtaken");
        r.on_data(&spec, &data(2, 30), SimTime(120), &mut out);
        let token = out.timers.last().unwrap().1;
        assert!(r.on_timer(&spec, token, &mut out));
        assert_eq!(out.packets.last().unwrap().seq, 3);
        // Out of order: acknowledged at once.
        let n = out.packets.len();
        r.on_data(&spec, &data(5, 40), SimTime(130), &mut out);
        assert_eq!(out.packets.len(), n + 1);
    }
}

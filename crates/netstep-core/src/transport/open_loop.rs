//! Open-loop source: sends a fixed number of equal-size packets, one every `interval` (or with
//! exponentially distributed gaps of that mean, i.e. a Poisson packet process), and never
//! listens for feedback. The source of the Days / ns.py baselines and of the M/M/1 and M/D/1
//! queueing scenarios. The receiver only counts.

use rand_distr::{Distribution, Exp};
use rand_pcg::Pcg64Mcg;

use super::{FlowEnds, TransportOut};
use crate::packet::{Packet, PacketKind};
use crate::units::{Bytes, SimTime};

/// Parameters of an open-loop source.
#[derive(Clone, Debug, PartialEq)]
pub struct OpenLoopSpec {
    /// Wire size of every packet.
    pub packet_size: Bytes,
    /// Packets to send.
    pub n_packets: u32,
    /// Gap between packet starts (the mean gap when `exponential`).
    pub interval: SimTime,
    /// Draw gaps from an exponential distribution instead of a constant.
    pub exponential: bool,
    /// Packet sizes: all `packet_size`, or exponential with that mean (M/M/1 service).
    pub size_distribution: SizeDistribution,
    /// Send every packet ECN-capable (ECT(0)), so marking queues mark instead of dropping.
    pub ecn: bool,
}

impl OpenLoopSpec {
    /// The default wire size of every packet.
    pub const DEFAULT_PACKET_SIZE: Bytes = Bytes(1000);
}

/// How an open-loop source sizes its packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SizeDistribution {
    /// Every packet has the configured size.
    #[default]
    Constant,
    /// Exponentially distributed sizes with the configured mean, rounded to whole bytes
    /// (at least 1): with a single bottleneck this gives exponential service times.
    Exponential,
}

/// Sender state.
#[derive(Clone, Debug)]
pub struct OpenLoopSender {
    ends: FlowEnds,
    /// Packets sent so far.
    pub sent: u32,
    rng: Option<Pcg64Mcg>,
}

impl OpenLoopSender {
    /// Starts the source: the first packet leaves at `now`.
    pub fn start(
        spec: &OpenLoopSpec,
        ends: FlowEnds,
        now: SimTime,
        out: &mut TransportOut,
    ) -> OpenLoopSender {
        let random = spec.exponential || spec.size_distribution == SizeDistribution::Exponential;
        let rng = random
            .then(|| crate::rng::stream(ends.seed, crate::rng::STREAM_OPEN_LOOP, ends.flow as u64));
        let mut sender = OpenLoopSender { ends, sent: 0, rng };
        if spec.n_packets > 0 {
            sender.send_next(spec, now, out);
        }
        sender
    }

    /// The timer for packet `token` fired.
    pub fn on_timer(
        &mut self,
        spec: &OpenLoopSpec,
        token: u32,
        now: SimTime,
        out: &mut TransportOut,
    ) {
        if token == self.sent && self.sent < spec.n_packets {
            self.send_next(spec, now, out);
        }
    }

    fn send_next(&mut self, spec: &OpenLoopSpec, now: SimTime, out: &mut TransportOut) {
        let size_bytes = match (&mut self.rng, spec.size_distribution) {
            (Some(rng), SizeDistribution::Exponential) => {
                let exp = Exp::new(1.0 / spec.packet_size.0 as f64)
                    .expect("packet size validated positive");
                (exp.sample(rng).round() as u64).clamp(1, u32::MAX as u64) as u32
            }
            _ => spec.packet_size.0 as u32,
        };
        let mut packet = Packet::new(
            PacketKind::Data,
            self.ends.flow,
            self.sent,
            self.sent,
            self.ends.dst,
            size_bytes,
        );
        packet.sent_ps = now.0;
        if spec.ecn {
            packet.ecn = crate::packet::Ecn::Ect0;
        }
        out.packets.push(packet);
        self.sent += 1;
        if self.sent < spec.n_packets {
            let gap = match &mut self.rng {
                Some(rng) if spec.exponential => {
                    let exp = Exp::new(1.0 / spec.interval.0 as f64)
                        .expect("interval validated positive");
                    SimTime(exp.sample(rng).round() as u64)
                }
                _ => spec.interval,
            };
            out.timers.push((now + gap, self.sent));
        }
    }
}

/// Receiver state: counts packets.
#[derive(Clone, Debug)]
pub struct OpenLoopReceiver {
    expected: u32,
    /// Packets received.
    pub delivered: u32,
    /// When the last packet arrived, once all have.
    pub completed: Option<SimTime>,
}

impl OpenLoopReceiver {
    /// A receiver expecting `spec.n_packets` packets.
    pub fn new(spec: &OpenLoopSpec) -> OpenLoopReceiver {
        OpenLoopReceiver {
            expected: spec.n_packets,
            delivered: 0,
            completed: None,
        }
    }
    /// Counts one packet.
    pub fn on_data(&mut self, _data: &Packet, now: SimTime) {
        self.delivered += 1;
        if self.delivered == self.expected {
            self.completed = Some(now);
        }
    }
}

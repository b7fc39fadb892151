//! The packet: a small value type (40 bytes) that moves by value through queues and between
//! logical processes. It carries its own identity (flow + per-flow number) and the fields the
//! transports and switch elements need; everything else about its flow lives in the read-only
//! flow table.
//!
//! Layout (40 bytes, checked by a test): identity and routing (`flow`, `number`, `dst`, `hop`),
//! transport (`seq`, `sent_ps`, the one SACK block `sack_start`/`sack_len`), switch elements
//! (`ingress` port, `ecn` codepoint, traffic class and flag bits in `flags`). Per-hop telemetry
//! (HPCC-style INT) does not travel in the packet: a packet with [`Packet::SIDE_RECORD`] set has
//! its records in a side table of the LP that holds it, so the common path stays 40 bytes.

/// What a packet is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// Payload from a sender to a receiver.
    Data = 0,
    /// An acknowledgement from a receiver back to its sender (cumulative, with one SACK block).
    Ack = 1,
    /// A negative acknowledgement (RDMA go-back-N / selective repeat): `seq` is the first
    /// missing segment.
    Nack = 2,
    /// A congestion notification packet (DCQCN) from a receiver to its sender.
    Cnp = 3,
    /// A link-level PAUSE / RESUME frame (IEEE 802.1Qbb) to the upstream port.
    Pause = 4,
    /// A control notification from a switch or receiver to a sender (e.g. a rate hint).
    Notify = 5,
}

impl PacketKind {
    /// The name used in traces.
    pub const fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
            PacketKind::Nack => "nack",
            PacketKind::Cnp => "cnp",
            PacketKind::Pause => "pause",
            PacketKind::Notify => "notify",
        }
    }
    /// Every kind, in code order.
    pub const ALL: [PacketKind; 6] = [
        PacketKind::Data,
        PacketKind::Ack,
        PacketKind::Nack,
        PacketKind::Cnp,
        PacketKind::Pause,
        PacketKind::Notify,
    ];
    /// ACK, NACK and CNP: a transport's feedback (what `[switch] ack_priority` serves first).
    #[inline]
    pub const fn is_acknowledgement(self) -> bool {
        matches!(self, PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp)
    }

    /// True for packets that travel from the receiver back to the sender of their flow
    /// (routed on the reverse path).
    #[inline]
    pub const fn is_feedback(self) -> bool {
        matches!(
            self,
            PacketKind::Ack | PacketKind::Nack | PacketKind::Cnp | PacketKind::Notify
        )
    }
}

/// The ECN field of the IP header (RFC 3168).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport.
    #[default]
    NotEct = 0,
    /// ECN-capable transport, ECT(1).
    Ect1 = 1,
    /// ECN-capable transport, ECT(0).
    Ect0 = 2,
    /// Congestion experienced (set by a marking queue).
    Ce = 3,
}

impl Ecn {
    /// The two-bit codepoint.
    pub const fn bits(self) -> u8 {
        self as u8
    }
}

/// A packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow in the flow table.
    pub flow: u32,
    /// Per-flow emission counter (data and feedback count separately in the high bit); with
    /// `flow` it identifies the packet: see [`Packet::id`].
    pub number: u32,
    /// Data: segment index. Ack: cumulative acknowledgement (next segment expected). Nack: the
    /// first missing segment.
    pub seq: u32,
    /// Destination node index.
    pub dst: u32,
    /// Time the data segment was handed to its sender's NIC (echoed by ACKs for RTT samples),
    /// in ps.
    pub sent_ps: u64,
    /// Size on the wire in bytes (headers included).
    pub size_bytes: u32,
    /// Ack: first segment of the SACK block that holds the segment this ACK answers (RFC 2018
    /// section 4: the first block reports the most recently received segment). Data: 0.
    pub sack_start: u32,
    /// Ack: length of that SACK block in segments (0 = no block; blocks longer than 65,535
    /// segments are reported truncated, which only under-reports). Data: 0.
    pub sack_len: u16,
    /// Local port at which the packet entered the node that holds it
    /// ([`Packet::NO_INGRESS`] at its source host).
    pub ingress: u16,
    /// Data, ACK or a control kind.
    pub kind: PacketKind,
    /// Number of egress ports this packet has been transmitted from so far.
    pub hop: u8,
    /// ECN codepoint.
    pub ecn: Ecn,
    /// Flag bits ([`Packet::EXPLICIT_PATH`], [`Packet::ECN_ECHO`], [`Packet::SIDE_RECORD`]) and
    /// the traffic class in the top three bits.
    pub flags: u8,
}

impl Packet {
    /// `ingress` of a packet still at its source.
    pub const NO_INGRESS: u16 = u16::MAX;
    /// Flag: the flow follows an explicit path (look it up in the flow table) instead of ECMP.
    pub const EXPLICIT_PATH: u8 = 1 << 0;
    /// Flag: ECN-echo (ECE) on a feedback packet: the data it answers arrived with CE.
    pub const ECN_ECHO: u8 = 1 << 1;
    /// Flag: a side record travels with this packet (HPCC's per-hop telemetry, a TCP ACK's
    /// further SACK blocks), kept in the holding LP's side table.
    pub const SIDE_RECORD: u8 = 1 << 2;
    /// Flag: DECbit congestion indication, set by a router whose average queue is at least one
    /// packet ([`crate::queue::DecBit`]).
    pub const CONGESTION: u8 = 1 << 3;
    /// Flag: a TCP handshake segment (a SYN on a data packet, a SYN-ACK on an ACK), sent
    /// with `handshake = true`.
    pub const SYN: u8 = 1 << 4;
    const CLASS_SHIFT: u32 = 5;

    /// A packet with every optional field at its neutral value.
    #[inline]
    pub const fn new(
        kind: PacketKind,
        flow: u32,
        number: u32,
        seq: u32,
        dst: u32,
        size_bytes: u32,
    ) -> Packet {
        Packet {
            flow,
            number,
            seq,
            dst,
            sent_ps: 0,
            size_bytes,
            sack_start: 0,
            sack_len: 0,
            ingress: Packet::NO_INGRESS,
            kind,
            hop: 0,
            ecn: Ecn::NotEct,
            flags: 0,
        }
    }

    /// A globally unique, deterministic packet id: flow index in the high 32 bits, the
    /// per-flow number in the low 32 bits.
    #[inline]
    pub const fn id(&self) -> u64 {
        ((self.flow as u64) << 32) | self.number as u64
    }
    /// Traffic class, 0-7.
    #[inline]
    pub const fn class(&self) -> u8 {
        self.flags >> Self::CLASS_SHIFT
    }
    /// Sets the traffic class (only the low three bits of `class` are kept).
    #[inline]
    pub fn set_class(&mut self, class: u8) {
        self.flags =
            (self.flags & !(0b111 << Self::CLASS_SHIFT)) | ((class & 0b111) << Self::CLASS_SHIFT);
    }
    /// True when flag bit(s) `flag` are set.
    #[inline]
    pub const fn has(&self, flag: u8) -> bool {
        self.flags & flag == flag
    }
    /// Sets or clears flag bit(s) `flag`.
    #[inline]
    pub fn set(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }
    /// True when the packet follows its flow's explicit path.
    #[inline]
    pub const fn explicit_path(&self) -> bool {
        self.has(Packet::EXPLICIT_PATH)
    }
}

/// High bit of [`Packet::number`] set for feedback packets so data and feedback ids never
/// collide.
pub const ACK_NUMBER_BIT: u32 = 1 << 31;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{Event, EventKind};

    #[test]
    fn packet_and_event_sizes_are_as_documented() {
        // ARCHITECTURE.md: 40 B per in-flight packet; the event (16 B stored key + payload)
        // 56 B, the event kind using a niche of `Packet::kind` for its own tag.
        assert_eq!(std::mem::size_of::<Packet>(), 40);
        assert_eq!(std::mem::size_of::<EventKind>(), 40);
        assert_eq!(std::mem::size_of::<crate::engine::event::EventKey>(), 16);
        assert_eq!(std::mem::size_of::<Event>(), 56);
    }

    #[test]
    fn class_and_flags_do_not_interfere() {
        let mut p = Packet::new(PacketKind::Data, 1, 2, 3, 4, 100);
        for class in 0..8 {
            p.set(Packet::EXPLICIT_PATH, true);
            p.set_class(class);
            p.set(Packet::ECN_ECHO, class % 2 == 0);
            assert_eq!(p.class(), class);
            assert!(p.explicit_path());
            assert_eq!(p.has(Packet::ECN_ECHO), class % 2 == 0);
            assert!(!p.has(Packet::SIDE_RECORD));
        }
    }
}

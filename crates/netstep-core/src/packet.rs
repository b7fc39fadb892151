//! The packet: a small value type (32 bytes) that moves by value through queues and between
//! logical processes. It carries its own identity (flow + per-flow number) and the fields the
//! transports need; everything else about its flow lives in the read-only flow table.

/// What a packet is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum PacketKind {
    /// Payload from a sender to a receiver.
    Data = 0,
    /// A cumulative acknowledgement from a receiver back to its sender.
    Ack = 1,
}

impl PacketKind {
    /// The name used in traces.
    pub const fn name(self) -> &'static str {
        match self {
            PacketKind::Data => "data",
            PacketKind::Ack => "ack",
        }
    }
}

/// A packet in flight.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Index of the flow in the flow table.
    pub flow: u32,
    /// Per-flow emission counter (data and ACKs count separately in the high bit); with `flow`
    /// it identifies the packet: see [`Packet::id`].
    pub number: u32,
    /// Data: segment index. Ack: cumulative acknowledgement (next segment expected).
    pub seq: u32,
    /// Destination node index.
    pub dst: u32,
    /// Time the original data segment left its sender (echoed by ACKs for RTT samples), in ps.
    pub sent_ps: u64,
    /// Size on the wire in bytes (headers included).
    pub size_bytes: u32,
    /// Data or ACK.
    pub kind: PacketKind,
    /// Number of egress ports this packet has been transmitted from so far.
    pub hop: u8,
    /// ECN codepoint (0 = not ECN-capable; reserved for the ECN elements).
    pub ecn: u8,
    /// The flow follows an explicit path (look it up in the flow table) instead of ECMP.
    pub explicit_path: bool,
}

impl Packet {
    /// A globally unique, deterministic packet id: flow index in the high 32 bits, the
    /// per-flow number in the low 32 bits.
    pub const fn id(&self) -> u64 {
        ((self.flow as u64) << 32) | self.number as u64
    }
}

/// High bit of [`Packet::number`] set for ACKs so data and ACK ids never collide.
pub const ACK_NUMBER_BIT: u32 = 1 << 31;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_stays_within_the_memory_budget() {
        // DESIGN.md budget: <= 32 B per in-flight packet.
        assert!(
            std::mem::size_of::<Packet>() <= 32,
            "{}",
            std::mem::size_of::<Packet>()
        );
    }
}

//! Packets' side records: what travels with a packet beyond its 40 bytes. First, in-band
//! network telemetry (INT) for HPCC (Li et al., "HPCC: High Precision Congestion
//! Control", SIGCOMM 2019): every switch egress port a telemetry-carrying data packet leaves
//! from pushes one record (time, bytes sent so far, queue length, link rate); the receiver
//! copies the stack onto the packet's acknowledgement and the sender reads it.
//!
//! The records do not travel inside [`Packet`](crate::packet::Packet) (40 bytes for every
//! packet): a packet with [`Packet::SIDE_RECORD`](crate::packet::Packet::SIDE_RECORD) set has its
//! stack in a side table of the logical process that holds it, keyed by the packet id, and a
//! transmission hands the stack to the next LP together with the arrival
//! ([`crate::engine::event::EventSink::side_record`]). Packets without the flag never touch the
//! table. A TCP ACK with more SACK blocks than its packet holds (`sack_blocks` > 1) carries
//! the others in the same side record; switches stamp data packets only.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::units::SimTime;

/// The most records one stack holds (a FatTree's longest path has five switch egress ports; a
/// scenario whose telemetry flows may cross more switches is refused when it is loaded).
pub const MAX_INT_HOPS: usize = 8;

/// What one switch egress port stamps on a data packet as the packet starts transmission
/// (the HPCC simulator's `IntHop`, at full precision).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntHop {
    /// When the packet started transmission, ps.
    pub ts_ps: u64,
    /// Bytes the port had transmitted before this packet.
    pub tx_bytes: u64,
    /// Bytes waiting in the port's queue as the packet left it.
    pub qlen_bytes: u64,
    /// The port's link rate, bit/s.
    pub rate_bps: u64,
}

impl IntHop {
    /// Time since `earlier` (a record of the same port), ps.
    pub fn ts_delta(&self, earlier: &IntHop) -> SimTime {
        SimTime(self.ts_ps.saturating_sub(earlier.ts_ps))
    }
}

/// SACK blocks a TCP ACK carries beyond the first (which the packet itself holds).
pub const MAX_EXTRA_SACK_BLOCKS: usize = 3;

/// The side record of one packet: HPCC's per-hop records, in path order, or the further SACK
/// blocks of a TCP ACK (`sack_blocks` > 1), which travel the same way.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SideRecord {
    n: u8,
    hops: [IntHop; MAX_INT_HOPS],
    n_sack: u8,
    sack: [(u32, u32); MAX_EXTRA_SACK_BLOCKS],
}

impl SideRecord {
    /// Appends a record; `false` (nothing kept) when the stack already holds
    /// [`MAX_INT_HOPS`]: scenario loading refuses a telemetry flow whose path is that long in
    /// any routing epoch, and a packet that still gets there (rerouted between epochs while
    /// in flight) stops the run with an error.
    pub fn push(&mut self, hop: IntHop) -> bool {
        if (self.n as usize) < MAX_INT_HOPS {
            self.hops[self.n as usize] = hop;
            self.n += 1;
            return true;
        }
        false
    }
    /// The records, first hop first.
    pub fn hops(&self) -> &[IntHop] {
        &self.hops[..self.n as usize]
    }
    /// Number of records.
    pub fn len(&self) -> usize {
        self.n as usize
    }
    /// True when no switch has stamped the packet.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
    /// A side record holding SACK blocks `(start, length)` in segments (at most
    /// [`MAX_EXTRA_SACK_BLOCKS`]; more are left out).
    pub fn with_sack_blocks(blocks: &[(u32, u32)]) -> SideRecord {
        let mut s = SideRecord::default();
        for &b in blocks.iter().take(MAX_EXTRA_SACK_BLOCKS) {
            s.sack[s.n_sack as usize] = b;
            s.n_sack += 1;
        }
        s
    }
    /// The SACK blocks `(start, length)` this record carries, in the order the receiver
    /// wrote them.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..self.n_sack as usize]
    }
}

/// Hashes a packet id (already unique) with the SplitMix64 finalizer: one multiply-xor chain
/// instead of SipHash on every hop of a telemetry packet. Lookups only: the table is never
/// iterated, so its order cannot reach any output.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        crate::rng::mix64(self.0)
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, id: u64) {
        self.0 = id;
    }
}

/// The side records of the packets an LP holds, by packet id (allocated on first use, so
/// runs without side records carry one empty pointer per LP). A stack is boxed once, at
/// the first switch, and only its pointer moves from there to the sender.
#[derive(Clone, Debug, Default)]
pub struct SideTable {
    stacks: HashMap<u64, Box<SideRecord>, BuildHasherDefault<IdHasher>>,
}

impl SideTable {
    /// Stores the stack of packet `id` (replacing any older one).
    pub fn insert(&mut self, id: u64, stack: Box<SideRecord>) {
        self.stacks.insert(id, stack);
    }
    /// Takes the stack of packet `id` out of the table.
    pub fn take(&mut self, id: u64) -> Option<Box<SideRecord>> {
        self.stacks.remove(&id)
    }
    /// The stack of packet `id`, created empty if absent.
    pub fn entry(&mut self, id: u64) -> &mut SideRecord {
        self.stacks.entry(id).or_default()
    }
    /// Stacks held.
    pub fn len(&self) -> usize {
        self.stacks.len()
    }
    /// True when no stack is held.
    pub fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stack_keeps_its_records_in_order_up_to_its_capacity() {
        let mut s = SideRecord::default();
        assert!(s.is_empty());
        for i in 0..MAX_INT_HOPS as u64 + 2 {
            s.push(IntHop {
                ts_ps: i,
                ..IntHop::default()
            });
        }
        assert_eq!(s.len(), MAX_INT_HOPS);
        let ts: Vec<u64> = s.hops().iter().map(|h| h.ts_ps).collect();
        assert_eq!(ts, (0..MAX_INT_HOPS as u64).collect::<Vec<_>>());
    }

    #[test]
    fn the_table_moves_stacks_by_packet_id() {
        let mut t = SideTable::default();
        t.entry(7).push(IntHop {
            ts_ps: 5,
            ..IntHop::default()
        });
        assert_eq!(t.len(), 1);
        let s = t.take(7).expect("stored");
        assert_eq!(s.hops()[0].ts_ps, 5);
        assert!(t.take(7).is_none());
        assert!(t.is_empty());
    }
}

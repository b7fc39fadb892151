//! The NIC's socket queues and budgets (`RoundRobin` and `Fifo` admission, see
//! [`crate::nic`]): what each socket has pending and in the NIC, the NIC's total, and which
//! socket is admitted next.

use std::collections::VecDeque;

use super::pull::Pull;
use crate::nic::{NicConfig, NicScheduler};
use crate::packet::Packet;

/// Identifies a socket at one host: a flow's sending side (by source slot) or receiving side
/// (by destination slot).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Socket(u32);

impl Socket {
    /// The sending side of the flow in source slot `slot`.
    pub const fn sender(slot: u32) -> Socket {
        Socket(slot << 1)
    }
    /// The receiving side of the flow in destination slot `slot`.
    pub const fn receiver(slot: u32) -> Socket {
        Socket((slot << 1) | 1)
    }
    /// Which side (0 sending, 1 receiving), and the slot.
    fn at(self) -> (usize, usize) {
        ((self.0 & 1) as usize, (self.0 >> 1) as usize)
    }
}

#[derive(Clone, Debug, Default)]
struct SocketState {
    pending: VecDeque<Packet>,
    in_nic_packets: u32,
    in_nic_bytes: u64,
    in_ring: bool,
}

/// Socket queues, the scheduler and the budgets of one host.
#[derive(Clone, Debug, Default)]
pub struct HostNic {
    /// The sending sockets by source slot, and the receiving ones by destination slot.
    sockets: [Vec<SocketState>; 2],
    /// Whose turn is next, by the NIC's one scheduler. Round robin: the sockets that have
    /// pending packets and room, in turn order. FIFO: sockets in the order their pending
    /// packets were produced (one entry per packet).
    turns: VecDeque<Socket>,
    in_nic_packets: u32,
    in_nic_bytes: u64,
    /// The pulling NIC's queue pairs and feedback queue.
    pub(super) pull: Pull,
    /// Packets waiting in socket queues (not yet admitted).
    pub pending_packets: u64,
    /// Largest number of packets ever waiting in socket queues.
    pub max_pending_packets: u64,
}

impl HostNic {
    /// Socket `s`, made on first use (the vectors double from the first slot used:
    /// [`crate::engine::reserve_doubling`]).
    #[inline]
    fn socket(&mut self, s: Socket) -> &mut SocketState {
        let (side, slot) = s.at();
        if self.sockets[side].len() <= slot {
            Self::make_room(&mut self.sockets[side], slot);
        }
        &mut self.sockets[side][slot]
    }

    /// Makes sockets up to `slot`.
    #[cold]
    #[inline(never)]
    fn make_room(sockets: &mut Vec<SocketState>, slot: usize) {
        crate::engine::reserve_doubling(sockets, slot + 1);
        sockets.resize_with(slot + 1, SocketState::default);
    }

    /// Socket `s`, which exists.
    #[inline]
    fn get(&mut self, s: Socket) -> &mut SocketState {
        let (side, slot) = s.at();
        &mut self.sockets[side][slot]
    }

    /// A transport hands `packet` to socket `s`.
    pub fn push(&mut self, s: Socket, packet: Packet, config: &NicConfig) {
        self.pending_packets += 1;
        self.max_pending_packets = self.max_pending_packets.max(self.pending_packets);
        if config.scheduler == NicScheduler::Pull {
            // Only feedback is pushed: RDMA senders are asked for their packets when the
            // link frees.
            self.pull.feedback.push_back(packet);
            return;
        }
        let state = self.socket(s);
        state.pending.push_back(packet);
        match config.scheduler {
            NicScheduler::RoundRobin => {
                if !state.in_ring && Self::socket_has_room(state, &packet, config) {
                    state.in_ring = true;
                    self.turns.push_back(s);
                }
            }
            NicScheduler::Fifo => self.turns.push_back(s),
            NicScheduler::Pull => unreachable!("handled above"),
        }
    }

    fn socket_has_room(state: &SocketState, packet: &Packet, config: &NicConfig) -> bool {
        state.in_nic_packets == 0
            || config.per_flow.fits(
                state.in_nic_packets as usize,
                state.in_nic_bytes,
                packet.size_bytes as u64,
            )
    }

    fn nic_has_room(&self, packet: &Packet, config: &NicConfig) -> bool {
        self.in_nic_packets == 0
            || config.buffer.fits(
                self.in_nic_packets as usize,
                self.in_nic_bytes,
                packet.size_bytes as u64,
            )
    }

    /// Admits `packet` of socket `s` at once, charging the budgets, when nothing of the host
    /// waits in any socket (so no other socket is passed over) and it fits; otherwise the
    /// caller pushes it.
    #[inline]
    pub fn try_admit_now(&mut self, s: Socket, packet: &Packet, config: &NicConfig) -> bool {
        if config.scheduler == NicScheduler::Pull
            || self.pending_packets != 0
            || !self.nic_has_room(packet, config)
        {
            return false;
        }
        let state = self.socket(s);
        if config.scheduler == NicScheduler::RoundRobin
            && !Self::socket_has_room(state, packet, config)
        {
            return false;
        }
        self.pending_packets += 1;
        self.charge(s, *packet);
        true
    }

    /// The next packet the NIC admits into its egress queue, if any fits; its budgets are
    /// charged. The caller must offer it to the egress queue and call [`HostNic::left`] when it
    /// leaves that queue.
    pub fn admit(&mut self, config: &NicConfig) -> Option<(Socket, Packet)> {
        match config.scheduler {
            // Nothing is admitted ahead of time: see [`HostNic::pop_feedback`] and
            // [`HostNic::select_qp`].
            NicScheduler::Pull => None,
            NicScheduler::Fifo => {
                let &s = self.turns.front()?;
                let packet = *self.get(s).pending.front().expect("queued");
                if !self.nic_has_room(&packet, config) {
                    return None;
                }
                self.turns.pop_front();
                self.get(s).pending.pop_front();
                Some(self.charge(s, packet))
            }
            NicScheduler::RoundRobin => loop {
                let &s = self.turns.front()?;
                let state = self.get(s);
                let Some(&packet) = state.pending.front() else {
                    self.turns.pop_front();
                    self.get(s).in_ring = false;
                    continue;
                };
                if !Self::socket_has_room(state, &packet, config) {
                    // Blocked until one of its packets leaves the NIC.
                    self.turns.pop_front();
                    self.get(s).in_ring = false;
                    continue;
                }
                if !self.nic_has_room(&packet, config) {
                    return None;
                }
                self.turns.pop_front();
                let state = self.get(s);
                state.pending.pop_front();
                if state.pending.is_empty() {
                    state.in_ring = false;
                } else {
                    self.turns.push_back(s);
                }
                return Some(self.charge(s, packet));
            },
        }
    }

    fn charge(&mut self, s: Socket, packet: Packet) -> (Socket, Packet) {
        let size = packet.size_bytes as u64;
        self.pending_packets -= 1;
        self.in_nic_packets += 1;
        self.in_nic_bytes += size;
        let state = self.get(s);
        state.in_nic_packets += 1;
        state.in_nic_bytes += size;
        (s, packet)
    }

    /// A packet of socket `s` left the egress queue (its transmission started, or a queue
    /// discipline dropped it): its budgets are released.
    pub fn left(&mut self, s: Socket, packet: &Packet, config: &NicConfig) {
        if config.scheduler == NicScheduler::Pull {
            // Pulled packets go straight to the transmitter: no budgets were charged.
            return;
        }
        let size = packet.size_bytes as u64;
        self.in_nic_packets -= 1;
        self.in_nic_bytes -= size;
        let state = self.get(s);
        state.in_nic_packets -= 1;
        state.in_nic_bytes -= size;
        if config.scheduler == NicScheduler::RoundRobin
            && !state.in_ring
            && let Some(next) = state.pending.front()
            && Self::socket_has_room(state, next, config)
        {
            state.in_ring = true;
            self.turns.push_back(s);
        }
    }
}

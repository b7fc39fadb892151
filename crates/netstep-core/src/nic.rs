//! The host NIC: what stands between a host's transports and its egress port.
//!
//! Real hosts do not tail-drop their own packets: the socket layer holds what the NIC cannot
//! take yet (Linux TCP Small Queues, qdisc backpressure). Here every packet a transport emits
//! goes into its socket's pending queue first; the NIC admits packets from the sockets into its
//! egress queue only while they fit two budgets:
//!
//! - the NIC buffer (`nic.buffer`, bytes or packets waiting in the egress queue), and
//! - the per-socket limit (`nic.per_flow`, TSQ-like: bytes or packets of one flow side waiting
//!   in the egress queue).
//!
//! A packet leaves both budgets when its transmission starts. An empty NIC (or a socket with
//! nothing in the NIC) always admits one packet, so a packet larger than a budget still goes
//! out. The scheduler picks which socket is admitted next: `RoundRobin` takes one packet per
//! socket with data in turn (flows with data share the NIC equally), `Fifo` admits packets in
//! the order the transports produced them (one FIFO of bursts; the per-flow limit does not
//! apply). `Pull` is the HPCC simulator's RDMA NIC, which keeps no FIFO at all: when the link
//! frees it sends the oldest waiting ACK, NACK or CNP, else it asks its queue pairs (the RDMA
//! senders, in the order they started) round robin for one packet from the first that may
//! send now ([`HostNic::select_qp`]); the sender builds that packet then, with its state at
//! that moment, and its pacing counts from it. Nothing is ever dropped here: the pending queues grow instead, and a transport's own
//! window (or an open-loop source's packet count) bounds them.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::units::{BufferSize, Bytes, SimTime};

/// How a NIC picks the next socket to admit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum NicScheduler {
    /// One packet per socket with data in turn.
    #[default]
    RoundRobin,
    /// Packets in the order the host's transports produced them.
    Fifo,
    /// No egress FIFO: when the link frees, feedback packets first, then one packet pulled
    /// from the next RDMA sender that may send (the HPCC simulator's NIC).
    Pull,
}

impl NicScheduler {
    /// The name used in scenario files and `run.parquet`.
    pub const fn name(self) -> &'static str {
        match self {
            NicScheduler::RoundRobin => "round_robin",
            NicScheduler::Fifo => "fifo",
            NicScheduler::Pull => "pull",
        }
    }
}

/// NIC settings of every host (the NIC's rate is its link's rate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NicConfig {
    /// Bytes or packets that may wait in the NIC's egress queue.
    pub buffer: BufferSize,
    /// Bytes or packets one socket (a flow's sending or receiving side) may have waiting in the
    /// egress queue.
    pub per_flow: BufferSize,
    /// Socket scheduler.
    pub scheduler: NicScheduler,
    /// Token-bucket shaper on the host's egress (packets wait in the NIC queue, so the
    /// sockets feel the backpressure); `None`: line rate.
    pub shaper: Option<crate::shaping::TokenBucketSpec>,
}

impl Default for NicConfig {
    /// 1 MB of NIC buffer, 2 packets per socket (the TSQ floor of two packets), round robin.
    fn default() -> Self {
        NicConfig {
            buffer: BufferSize::Bytes(Bytes(1_000_000)),
            per_flow: BufferSize::Packets(2),
            scheduler: NicScheduler::RoundRobin,
            shaper: None,
        }
    }
}

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
    fn index(self) -> usize {
        self.0 as usize
    }
}

/// What a queue pair (an RDMA sender) can do when a pulling NIC looks for a packet
/// (`GetNextQindex` in the HPCC simulator's `qbb-net-device.cc`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QpState {
    /// Every byte acknowledged (or the flow given up): removed from the turn order.
    Finished,
    /// Nothing it may send: all sent and waiting for ACKs, or its window is full.
    Waiting,
    /// It has a packet to send once `at` (its pacing) has come, in traffic class `class`.
    Ready {
        /// Earliest start of its next packet.
        at: SimTime,
        /// The flow's traffic class (a paused class is passed over).
        class: u8,
    },
}

/// The pulling NIC's state ([`NicScheduler::Pull`]).
#[derive(Clone, Debug, Default)]
struct Pull {
    /// Feedback packets (ACK, NACK, CNP) waiting, oldest first.
    feedback: VecDeque<Packet>,
    /// Queue pairs (flow ids) in the order they started, finished ones removed lazily.
    qps: Vec<u32>,
    /// Index in `qps` of the last queue pair served (not moved when `qps` shrinks, as in
    /// the simulator).
    rr_last: usize,
    /// Earliest wake-up already scheduled.
    wake: Option<SimTime>,
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
    sockets: Vec<SocketState>,
    /// Round robin: sockets that have pending packets and room, in turn order.
    ring: VecDeque<Socket>,
    /// FIFO: sockets in the order their pending packets were produced (one entry per packet).
    fifo: VecDeque<Socket>,
    in_nic_packets: u32,
    in_nic_bytes: u64,
    /// The pulling NIC's queue pairs and feedback queue.
    pull: Pull,
    /// Packets waiting in socket queues (not yet admitted).
    pub pending_packets: u64,
    /// Largest number of packets ever waiting in socket queues.
    pub max_pending_packets: u64,
}

impl HostNic {
    fn socket(&mut self, s: Socket) -> &mut SocketState {
        if self.sockets.len() <= s.index() {
            self.sockets
                .resize_with(s.index() + 1, SocketState::default);
        }
        &mut self.sockets[s.index()]
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
                    self.ring.push_back(s);
                }
            }
            NicScheduler::Fifo => self.fifo.push_back(s),
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
                let &s = self.fifo.front()?;
                let packet = *self.sockets[s.index()].pending.front().expect("queued");
                if !self.nic_has_room(&packet, config) {
                    return None;
                }
                self.fifo.pop_front();
                self.sockets[s.index()].pending.pop_front();
                Some(self.charge(s, packet))
            }
            NicScheduler::RoundRobin => loop {
                let &s = self.ring.front()?;
                let state = &self.sockets[s.index()];
                let Some(&packet) = state.pending.front() else {
                    self.ring.pop_front();
                    self.sockets[s.index()].in_ring = false;
                    continue;
                };
                if !Self::socket_has_room(state, &packet, config) {
                    // Blocked until one of its packets leaves the NIC.
                    self.ring.pop_front();
                    self.sockets[s.index()].in_ring = false;
                    continue;
                }
                if !self.nic_has_room(&packet, config) {
                    return None;
                }
                self.ring.pop_front();
                let state = &mut self.sockets[s.index()];
                state.pending.pop_front();
                if state.pending.is_empty() {
                    state.in_ring = false;
                } else {
                    self.ring.push_back(s);
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
        let state = &mut self.sockets[s.index()];
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
        let state = &mut self.sockets[s.index()];
        state.in_nic_packets -= 1;
        state.in_nic_bytes -= size;
        if config.scheduler == NicScheduler::RoundRobin
            && !state.in_ring
            && let Some(next) = state.pending.front()
            && Self::socket_has_room(state, next, config)
        {
            state.in_ring = true;
            self.ring.push_back(s);
        }
    }

    /// Packets admitted and still waiting in the egress queue.
    pub fn in_nic_packets(&self) -> u32 {
        self.in_nic_packets
    }

    /// Pull: the RDMA sender of `flow` started; it takes its turns after the queue pairs
    /// already there (the simulator's `AddQp`).
    pub fn add_qp(&mut self, flow: u32) {
        self.pull.qps.push(flow);
    }

    /// Pull: whether a feedback packet waits.
    pub fn has_feedback(&self) -> bool {
        !self.pull.feedback.is_empty()
    }

    /// Pull: the oldest waiting feedback packet, unless its class is paused (`paused`: one
    /// bit per class).
    pub fn pop_feedback(&mut self, paused: u8) -> Option<Packet> {
        let head = self.pull.feedback.front()?;
        if paused & (1 << head.class()) != 0 {
            return None;
        }
        self.pending_packets -= 1;
        self.pull.feedback.pop_front()
    }

    /// Pull: the flow of the queue pair that sends next at `now`, if any may: round
    /// robin from the one after the last served, the first that is `Ready` by `now` in a
    /// class not `paused`. Finished queue pairs met on the way are removed, with every
    /// finished one after the first of them, and the turn index is not adjusted (both as the
    /// simulator's `GetNextQindex` does, so the turn order matches it).
    pub fn select_qp(
        &mut self,
        now: SimTime,
        paused: u8,
        mut state: impl FnMut(u32) -> QpState,
    ) -> Option<u32> {
        let pull = &mut self.pull;
        let count = pull.qps.len();
        let mut chosen = None;
        let mut first_finished = usize::MAX;
        for step in 1..=count {
            let idx = (step + pull.rr_last) % count;
            match state(pull.qps[idx]) {
                QpState::Ready { at, class } if paused & (1 << class) == 0 => {
                    if at <= now {
                        chosen = Some(idx);
                        break;
                    }
                }
                QpState::Finished => first_finished = first_finished.min(idx),
                QpState::Ready { .. } | QpState::Waiting => {}
            }
        }
        if first_finished != usize::MAX {
            let mut next = first_finished;
            for i in first_finished + 1..count {
                if state(pull.qps[i]) != QpState::Finished {
                    if chosen == Some(i) {
                        chosen = Some(next);
                    }
                    pull.qps[next] = pull.qps[i];
                    next += 1;
                }
            }
            pull.qps.truncate(next);
        }
        let idx = chosen?;
        pull.rr_last = idx;
        Some(pull.qps[idx])
    }

    /// Pull: the earliest time after `now` a queue pair in a class not `paused` becomes
    /// ready, if any (a paused class comes back with its RESUME, an ACK that opens a window
    /// with the ACK).
    pub fn next_ready(
        &self,
        now: SimTime,
        paused: u8,
        mut state: impl FnMut(u32) -> QpState,
    ) -> Option<SimTime> {
        self.pull
            .qps
            .iter()
            .filter_map(|&flow| match state(flow) {
                QpState::Ready { at, class } if at > now && paused & (1 << class) == 0 => Some(at),
                QpState::Ready { .. } | QpState::Finished | QpState::Waiting => None,
            })
            .min()
    }

    /// Pull: whether some queue pair of a class not paused may send, now or later (its pacing
    /// allows it at some time).
    pub fn any_ready(&self, paused: u8, mut state: impl FnMut(u32) -> QpState) -> bool {
        self.pull.qps.iter().any(|&flow| {
            matches!(state(flow), QpState::Ready { class, .. } if paused & (1 << class) == 0)
        })
    }

    /// Pull: whether a wake-up at or before `at` is pending.
    pub fn wakes_by(&self, at: SimTime) -> bool {
        self.pull.wake.is_some_and(|w| w <= at)
    }

    /// Pull: records a wake-up wanted at `at`; returns whether it must be scheduled (none is
    /// pending at or before it).
    pub fn want_wake(&mut self, at: SimTime) -> bool {
        if self.wakes_by(at) {
            return false;
        }
        self.pull.wake = Some(at);
        true
    }

    /// Pull: a wake-up fired at `now`.
    pub fn woke(&mut self, now: SimTime) {
        if self.pull.wake.is_some_and(|w| w <= now) {
            self.pull.wake = None;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::PacketKind;

    fn p(flow: u32, n: u32, size: u32) -> Packet {
        Packet::new(PacketKind::Data, flow, n, n, 9, size)
    }

    /// Admits as many as fit, then releases them all (as if transmitted at once).
    fn drain_order(nic: &mut HostNic, config: &NicConfig) -> Vec<(u32, u32)> {
        let mut order = Vec::new();
        loop {
            let mut batch = Vec::new();
            while let Some((s, packet)) = nic.admit(config) {
                batch.push((s, packet));
            }
            if batch.is_empty() {
                return order;
            }
            for (s, packet) in batch {
                order.push((packet.flow, packet.number));
                nic.left(s, &packet, config);
            }
        }
    }

    #[test]
    fn round_robin_alternates_between_backlogged_sockets() {
        let config = NicConfig {
            buffer: BufferSize::Packets(1),
            per_flow: BufferSize::Packets(2),
            scheduler: NicScheduler::RoundRobin,
            shaper: None,
        };
        let mut nic = HostNic::default();
        for n in 0..3 {
            nic.push(Socket::sender(0), p(0, n, 1500), &config);
        }
        for n in 0..2 {
            nic.push(Socket::sender(1), p(1, n, 1500), &config);
        }
        assert_eq!(
            drain_order(&mut nic, &config),
            vec![(0, 0), (1, 0), (0, 1), (1, 1), (0, 2)]
        );
        assert_eq!(nic.pending_packets, 0);
        assert_eq!(nic.max_pending_packets, 5);
    }

    #[test]
    fn per_flow_limit_holds_packets_back_without_dropping() {
        let config = NicConfig {
            buffer: BufferSize::Bytes(Bytes(1_000_000)),
            per_flow: BufferSize::Packets(2),
            scheduler: NicScheduler::RoundRobin,
            shaper: None,
        };
        let mut nic = HostNic::default();
        for n in 0..10 {
            nic.push(Socket::sender(0), p(0, n, 1500), &config);
        }
        let first = nic.admit(&config).unwrap();
        let second = nic.admit(&config).unwrap();
        assert!(nic.admit(&config).is_none(), "per-flow limit of 2 packets");
        assert_eq!(nic.pending_packets, 8);
        nic.left(first.0, &first.1, &config);
        assert_eq!(nic.admit(&config).unwrap().1.number, 2);
        nic.left(second.0, &second.1, &config);
        assert_eq!(nic.admit(&config).unwrap().1.number, 3);
    }

    #[test]
    fn oversized_packet_goes_out_alone() {
        let config = NicConfig {
            buffer: BufferSize::Bytes(Bytes(1000)),
            per_flow: BufferSize::Bytes(Bytes(1000)),
            scheduler: NicScheduler::RoundRobin,
            shaper: None,
        };
        let mut nic = HostNic::default();
        nic.push(Socket::sender(0), p(0, 0, 9000), &config);
        nic.push(Socket::receiver(0), p(1, 0, 64), &config);
        let (s, big) = nic.admit(&config).unwrap();
        assert_eq!(big.size_bytes, 9000);
        assert!(nic.admit(&config).is_none(), "the NIC is over its budget");
        nic.left(s, &big, &config);
        assert_eq!(nic.admit(&config).unwrap().1.size_bytes, 64);
    }

    #[test]
    fn fifo_keeps_production_order_across_sockets() {
        let config = NicConfig {
            buffer: BufferSize::Packets(1),
            per_flow: BufferSize::Packets(1),
            scheduler: NicScheduler::Fifo,
            shaper: None,
        };
        let mut nic = HostNic::default();
        nic.push(Socket::sender(0), p(0, 0, 100), &config);
        nic.push(Socket::sender(0), p(0, 1, 100), &config);
        nic.push(Socket::sender(1), p(1, 0, 100), &config);
        nic.push(Socket::sender(0), p(0, 2, 100), &config);
        assert_eq!(
            drain_order(&mut nic, &config),
            vec![(0, 0), (0, 1), (1, 0), (0, 2)]
        );
    }

    fn ready(at: u64) -> QpState {
        QpState::Ready {
            at: SimTime(at),
            class: 0,
        }
    }

    #[test]
    fn pull_takes_turns_from_the_one_after_the_last_served() {
        let mut nic = HostNic::default();
        for flow in [10, 11, 12] {
            nic.add_qp(flow);
        }
        let order: Vec<u32> = (0..6)
            .map(|_| nic.select_qp(SimTime(0), 0, |_| ready(0)).unwrap())
            .collect();
        // The simulator starts its first scan at index 1 (m_rrlast = 0).
        assert_eq!(order, vec![11, 12, 10, 11, 12, 10]);
        // Paced, paused and waiting queue pairs are passed over.
        let state = |flow: u32| match flow {
            10 => ready(50),
            11 => QpState::Ready {
                at: SimTime(0),
                class: 3,
            },
            _ => QpState::Waiting,
        };
        assert_eq!(nic.select_qp(SimTime(10), 1 << 3, state), None);
        // The wake-up: the paced one (the paused one comes back with its RESUME).
        assert_eq!(
            nic.next_ready(SimTime(10), 1 << 3, state),
            Some(SimTime(50))
        );
        assert_eq!(nic.next_ready(SimTime(60), 1 << 3, state), None);
        assert_eq!(nic.select_qp(SimTime(50), 1 << 3, state), Some(10));
        assert_eq!(nic.select_qp(SimTime(50), 0, state), Some(11));
    }

    #[test]
    fn pull_removes_finished_queue_pairs_as_the_simulator_does() {
        let mut nic = HostNic::default();
        for flow in [0, 1, 2, 3] {
            nic.add_qp(flow);
        }
        let served = |nic: &mut HostNic, finished: &[u32]| {
            nic.select_qp(SimTime(0), 0, |f| {
                if finished.contains(&f) {
                    QpState::Finished
                } else {
                    ready(0)
                }
            })
        };
        assert_eq!(served(&mut nic, &[]), Some(1));
        assert_eq!(served(&mut nic, &[]), Some(2));
        // Last served: index 2. Flows 1 and 3 finished: the scan meets 3 (index 3) first,
        // then picks 0; only finished ones from index 3 on are removed, so 1 stays.
        assert_eq!(served(&mut nic, &[1, 3]), Some(0));
        assert_eq!(nic.pull.qps, vec![0, 1, 2]);
        // Next scan from index 1 meets finished 1, picks 2 (index 2), which moves to index 1
        // as 1 is removed; the turn index follows it.
        assert_eq!(served(&mut nic, &[1, 3]), Some(2));
        assert_eq!(nic.pull.qps, vec![0, 2]);
        assert_eq!(nic.pull.rr_last, 1);
        assert_eq!(served(&mut nic, &[1, 3]), Some(0));
    }

    #[test]
    fn pull_sends_feedback_oldest_first_unless_its_class_is_paused() {
        let config = NicConfig {
            scheduler: NicScheduler::Pull,
            ..NicConfig::default()
        };
        let mut nic = HostNic::default();
        let mut ack = |flow: u32, class: u8| {
            let mut p = Packet::new(PacketKind::Ack, flow, 0, 1, 9, 60);
            p.set_class(class);
            nic.push(Socket::receiver(flow), p, &config);
        };
        ack(0, 3);
        ack(1, 0);
        assert!(
            nic.admit(&config).is_none(),
            "nothing is admitted ahead of time"
        );
        assert_eq!(nic.pop_feedback(1 << 3), None, "its class is paused");
        assert_eq!(nic.pop_feedback(0).unwrap().flow, 0);
        assert_eq!(nic.pop_feedback(0).unwrap().flow, 1);
        assert!(!nic.has_feedback());
        assert_eq!(nic.pending_packets, 0);
    }

    #[test]
    fn pull_wakes_once_per_earliest_time() {
        let mut nic = HostNic::default();
        assert!(nic.want_wake(SimTime(100)));
        assert!(!nic.want_wake(SimTime(150)), "an earlier one is pending");
        assert!(nic.want_wake(SimTime(50)));
        nic.woke(SimTime(50));
        assert!(nic.want_wake(SimTime(150)));
    }
}

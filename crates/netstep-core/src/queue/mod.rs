//! Egress queues as elements. One queueing discipline per file behind the [`Queue`] enum, an
//! enum over the concrete disciplines as smoltcp keeps its congestion controllers in
//! `AnyController`, but matched directly (one `match` per operation, written once by the
//! `each_discipline!` macro) where smoltcp hands out a `&mut dyn Controller`. Schedulers (SP,
//! DRR, WRR, WFQ, Virtual Clock, fair queueing) and AQMs on a FIFO (RED, step marking,
//! DECbit, which expose their FIFO's length and bytes through `Deref`) are variants with the
//! same operations.
//!
//! A queue is always consulted: every packet a port sends goes through [`Queue::enqueue`] and
//! [`Queue::dequeue`], even when the transmitter is idle, so a scheduler's or AQM's accounting
//! sees every packet. Each call gets a [`QueueCtx`]: the current time and the port's keyed
//! random stream (created on first use, so deterministic disciplines pay nothing). Entries
//! carry their own metadata ([`Entry`]): arrival time, the trace facts and, through the
//! packet, class and ECN codepoint.

mod classes;
mod decbit;
mod drr;
mod dynamic_threshold;
mod ecn_step;
mod fair;
mod fair_queueing;
mod fifo;
pub mod gps;
mod red;
mod strict_priority;
mod virtual_clock;
mod wfq;
mod wrr;

pub use classes::{CLASSES, ClassQueues};
pub use decbit::DecBit;
pub use drr::Drr;
pub use dynamic_threshold::SharedBuffer;
pub use ecn_step::EcnStep;
pub use fair_queueing::FairQueueing;
pub use fifo::FifoQueue;
pub use red::{Red, RedSpec, RedVerdict};
pub use strict_priority::StrictPriority;
pub use virtual_clock::VirtualClock;
pub use wfq::Wfq;
pub use wrr::Wrr;

use crate::packet::Packet;
use crate::rng::LazyStream;
use crate::units::{BitsPerSec, BufferSize, SimTime};

/// Why a queue refused (or evicted) a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer was full (tail drop).
    BufferFull,
    /// An AQM dropped it before the buffer was full (RED).
    Early,
    /// A policer colored it red (trTCM).
    Policed,
}

/// A packet waiting in a queue, with the facts recorded when it arrived.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The packet.
    pub packet: Packet,
    /// Arrival time at the queue, ps.
    pub arrived_ps: u64,
    /// Bytes waiting ahead of it when it arrived.
    pub ahead_bytes: u64,
    /// Packets waiting ahead of it when it arrived.
    pub ahead_packets: u32,
    /// Whether its hop is recorded in the packet trace.
    pub traced: bool,
    /// Whether the switch's PFC ingress accounting counts it (released when it is sent).
    pub pfc: bool,
    /// Marked CE by the queue as it left (marking at dequeue); the port counts the mark
    /// when the packet departs.
    pub marked: bool,
}

impl Entry {
    /// The entry of `packet` arriving at `now` with nothing waiting ahead of it (a packet that
    /// skips an empty queue, a PFC frame); `traced` and `pfc` as for any entry.
    #[inline]
    pub const fn with_nothing_ahead(
        packet: Packet,
        now: SimTime,
        traced: bool,
        pfc: bool,
    ) -> Entry {
        Entry {
            packet,
            arrived_ps: now.0,
            ahead_bytes: 0,
            ahead_packets: 0,
            traced,
            pfc,
            marked: false,
        }
    }
    /// Marks an ECN-capable (ECT) packet CE as it leaves the queue, flagging the mark for the
    /// port to count; a packet that is not ECN-capable leaves unmarked.
    pub fn mark_on_departure(&mut self) {
        if matches!(
            self.packet.ecn,
            crate::packet::Ecn::Ect0 | crate::packet::Ecn::Ect1
        ) {
            self.packet.ecn = crate::packet::Ecn::Ce;
            self.marked = true;
        }
    }
}

/// What a queue did with an offered entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Queued.
    Accepted,
    /// Queued, marked CE by the queue (ECN).
    AcceptedMarked,
    /// Refused: the offered entry is handed back with the reason.
    Dropped(Entry, DropReason),
    /// Queued, but another waiting entry was evicted to make room (push-out disciplines).
    AcceptedDroppedOther(Entry, DropReason),
}

/// What a queue may use besides its own state.
pub struct QueueCtx<'a> {
    /// The current time.
    pub now: SimTime,
    /// The buffer limit of this port.
    pub limit: BufferSize,
    /// The port's line rate (for disciplines that emulate a fluid system).
    pub rate: BitsPerSec,
    /// This port's random stream ([`crate::rng::STREAM_QUEUE`], keyed by global port id).
    pub rng: LazyStream<'a>,
}

/// Which discipline a port runs (a link parameter: `scheduler` in the scenario).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SchedulerSpec {
    /// One FIFO for all classes, tail drop.
    #[default]
    Fifo,
    /// Per-class FIFOs, highest class first ([`StrictPriority`]).
    StrictPriority,
    /// Deficit round robin over the classes ([`Drr`]): base quantum in bytes and per-class
    /// weights.
    Drr {
        /// Bytes per turn for weight 1.
        quantum: u32,
        /// Per-class weights.
        weights: [u16; CLASSES],
    },
    /// Weighted round robin over the classes ([`Wrr`]): packets per visit.
    Wrr {
        /// Per-class weights.
        weights: [u16; CLASSES],
    },
    /// Weighted fair queueing over the classes ([`Wfq`]): GPS finish tags.
    Wfq {
        /// Per-class weights.
        weights: [u16; CLASSES],
    },
    /// Virtual Clock over the classes ([`VirtualClock`]): reserved rates in weight shares.
    VirtualClock {
        /// Per-class weights.
        weights: [u16; CLASSES],
    },
    /// Per-flow fair queueing ([`FairQueueing`]): one queue per flow, equal shares,
    /// push-out from the longest flow.
    FairQueueing,
}

impl SchedulerSpec {
    /// The scenario name of the discipline.
    pub const fn name(&self) -> &'static str {
        match self {
            SchedulerSpec::Fifo => "fifo",
            SchedulerSpec::StrictPriority => "strict_priority",
            SchedulerSpec::Drr { .. } => "drr",
            SchedulerSpec::Wrr { .. } => "wrr",
            SchedulerSpec::Wfq { .. } => "wfq",
            SchedulerSpec::VirtualClock { .. } => "virtual_clock",
            SchedulerSpec::FairQueueing => "fair_queueing",
        }
    }
}

/// Active queue management on a FIFO port (a link parameter: `aqm` in the scenario).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum AqmSpec {
    /// Tail drop only.
    #[default]
    None,
    /// Random early detection, dropping or marking ([`Red`]).
    Red(RedSpec),
    /// DCTCP step marking above `k_bytes` waiting ([`EcnStep`]).
    Step {
        /// Threshold, bytes waiting.
        k_bytes: u64,
        /// Mark as packets leave, on the bytes behind them.
        at_dequeue: bool,
    },
    /// DECbit congestion indication ([`DecBit`]).
    DecBit,
}

/// Evaluates `$body` with `$q` bound to the discipline inside any [`Queue`] variant (the one
/// place that lists them for dispatch).
macro_rules! each_discipline {
    ($queue:expr, $q:ident => $body:expr) => {
        match $queue {
            Queue::Fifo($q) => $body,
            Queue::StrictPriority($q) => $body,
            Queue::Drr($q) => $body,
            Queue::Wrr($q) => $body,
            Queue::Wfq($q) => $body,
            Queue::VirtualClock($q) => $body,
            Queue::FairQueueing($q) => $body,
            Queue::Red($q) => $body,
            Queue::EcnStep($q) => $body,
            Queue::DecBit($q) => $body,
        }
    };
}

/// An egress queue of any discipline.
#[derive(Clone, Debug)]
pub enum Queue {
    /// First come, first served with tail drop.
    Fifo(FifoQueue),
    /// Strict priority over per-class FIFOs.
    StrictPriority(Box<StrictPriority>),
    /// Deficit round robin over per-class FIFOs.
    Drr(Box<Drr>),
    /// Weighted round robin over per-class FIFOs.
    Wrr(Box<Wrr>),
    /// Weighted fair queueing over the classes.
    Wfq(Box<Wfq>),
    /// Virtual Clock over the classes.
    VirtualClock(Box<VirtualClock>),
    /// Per-flow fair queueing.
    FairQueueing(Box<FairQueueing>),
    /// A FIFO with RED.
    Red(Box<Red>),
    /// A FIFO with step marking.
    EcnStep(Box<EcnStep>),
    /// A FIFO setting the DECbit.
    DecBit(Box<DecBit>),
}

impl Default for Queue {
    fn default() -> Self {
        Queue::Fifo(FifoQueue::default())
    }
}

impl Queue {
    /// The queue of a port: `aqm` on a FIFO when set (scenarios refuse an AQM with another
    /// scheduler), else the scheduler.
    pub fn for_port(scheduler: &SchedulerSpec, aqm: &AqmSpec) -> Queue {
        match *aqm {
            AqmSpec::None => Queue::new(scheduler),
            AqmSpec::Red(spec) => Queue::Red(Box::new(Red::new(spec))),
            AqmSpec::Step {
                k_bytes,
                at_dequeue,
            } => Queue::EcnStep(Box::new(EcnStep::new(k_bytes, at_dequeue))),
            AqmSpec::DecBit => Queue::DecBit(Box::default()),
        }
    }
    /// An empty queue of the discipline `spec` names.
    pub fn new(spec: &SchedulerSpec) -> Queue {
        match *spec {
            SchedulerSpec::Fifo => Queue::Fifo(FifoQueue::default()),
            SchedulerSpec::StrictPriority => {
                Queue::StrictPriority(Box::<StrictPriority>::default())
            }
            SchedulerSpec::Drr { quantum, weights } => {
                Queue::Drr(Box::new(Drr::new(quantum, weights)))
            }
            SchedulerSpec::Wrr { weights } => Queue::Wrr(Box::new(Wrr::new(weights))),
            SchedulerSpec::Wfq { weights } => Queue::Wfq(Box::new(Wfq::new(weights))),
            SchedulerSpec::VirtualClock { weights } => {
                Queue::VirtualClock(Box::new(VirtualClock::new(weights)))
            }
            SchedulerSpec::FairQueueing => Queue::FairQueueing(Box::default()),
        }
    }
    /// Offers an entry.
    #[inline]
    pub fn enqueue(&mut self, entry: Entry, ctx: &mut QueueCtx<'_>) -> Admission {
        each_discipline!(self, q => q.enqueue(entry, ctx))
    }
    /// True when this queue, empty, hands a packet offered to an idle transmitter straight
    /// back and is left exactly as it was: no drop, no mark, no state kept. The one home of
    /// the empty-queue rule: FIFO; strict priority, which keeps no state; DRR, whose empty
    /// state is its initial state (deficits of emptied classes reset to 0); step marking,
    /// which marks only while more than K bytes wait; RED that marks at dequeue on the
    /// instantaneous queue above a positive `min` ([`Red::passes_when_empty`]). WRR remembers
    /// the class it visits, the fair-queueing disciplines keep virtual time, RED otherwise its
    /// average and DECbit its cycle, so they are always consulted. The port skips the queue
    /// for such packets ([`crate::network::Network::skips_empty_queue`]); property test
    /// `skipping_an_empty_queue_equals_queueing`.
    #[inline]
    pub const fn passes_when_empty(&self) -> bool {
        match self {
            Queue::Fifo(_) | Queue::StrictPriority(_) | Queue::Drr(_) | Queue::EcnStep(_) => true,
            Queue::Red(red) => red.passes_when_empty(),
            _ => false,
        }
    }
    /// Offers an entry to an idle transmitter's queue and takes the entry to send now, in one
    /// step: the same decisions as [`Queue::enqueue`] then [`Queue::dequeue`], except that a
    /// queue that is empty and [`Queue::passes_when_empty`] hands the entry straight back
    /// (the limit counts waiting packets, and this one never waits).
    #[inline]
    pub fn enqueue_for_idle(
        &mut self,
        entry: Entry,
        ctx: &mut QueueCtx<'_>,
    ) -> (Admission, Option<Entry>) {
        if self.passes_when_empty() && self.is_empty() {
            return (Admission::Accepted, Some(entry));
        }
        let admission = self.enqueue(entry, ctx);
        (admission, self.dequeue(ctx))
    }
    /// Takes the next entry whose class is not in `paused` (PFC): a single-queue discipline
    /// blocks while its head's class is paused (as one hardware queue does), strict priority
    /// skips paused classes; the other disciplines are refused with PFC when a scenario is
    /// loaded and send nothing while any class is paused.
    pub fn dequeue_unpaused(&mut self, ctx: &mut QueueCtx<'_>, paused: u8) -> Option<Entry> {
        if paused == 0 {
            return self.dequeue(ctx);
        }
        let blocked = |class: Option<u8>| class.is_some_and(|c| paused & (1 << c) != 0);
        match self {
            Queue::Fifo(q) if !blocked(q.head_class()) => q.dequeue(ctx),
            Queue::Red(q) if !blocked(q.head_class()) => q.dequeue(ctx),
            Queue::EcnStep(q) if !blocked(q.head_class()) => q.dequeue(ctx),
            Queue::DecBit(q) if !blocked(q.head_class()) => q.dequeue(ctx),
            Queue::StrictPriority(q) => q.dequeue_skipping(paused),
            _ => None,
        }
    }
    /// Whether PFC can pause classes of this discipline.
    pub const fn supports_pfc(spec: &SchedulerSpec) -> bool {
        matches!(spec, SchedulerSpec::Fifo | SchedulerSpec::StrictPriority)
    }
    /// Takes the next entry to transmit.
    #[inline]
    pub fn dequeue(&mut self, ctx: &mut QueueCtx<'_>) -> Option<Entry> {
        each_discipline!(self, q => q.dequeue(ctx))
    }
    /// Packets waiting.
    #[inline]
    pub fn len(&self) -> usize {
        each_discipline!(self, q => q.len())
    }
    /// True when nothing waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Bytes waiting.
    #[inline]
    pub fn bytes(&self) -> u64 {
        each_discipline!(self, q => q.bytes())
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::packet::{Packet, PacketKind};
    use crate::units::SimTime;

    /// A data entry numbered `n` of `size` bytes in traffic class `class`.
    pub(crate) fn entry(n: u32, size: u32, class: u8) -> Entry {
        let mut packet = Packet::new(PacketKind::Data, 0, n, n, 0, size);
        packet.set_class(class);
        Entry {
            packet,
            arrived_ps: n as u64,
            ahead_bytes: 0,
            ahead_packets: 0,
            traced: false,
            pfc: false,
            marked: false,
        }
    }

    /// Runs `f` with a context of buffer `limit` at time 0.
    pub(crate) fn with_ctx<R>(limit: BufferSize, f: impl FnOnce(&mut QueueCtx<'_>) -> R) -> R {
        let mut slot = None;
        let mut ctx = QueueCtx {
            now: SimTime::ZERO,
            limit,
            rate: BitsPerSec(1_000_000_000),
            rng: LazyStream::new(&mut slot, 1, 0, 0),
        };
        f(&mut ctx)
    }

    #[test]
    fn per_class_buffers_drop_only_the_full_class() {
        let mut q = Queue::new(&SchedulerSpec::StrictPriority);
        with_ctx(BufferSize::Packets(2), |ctx| {
            assert_eq!(q.enqueue(entry(0, 100, 1), ctx), Admission::Accepted);
            assert_eq!(q.enqueue(entry(1, 100, 1), ctx), Admission::Accepted);
            assert!(matches!(
                q.enqueue(entry(2, 100, 1), ctx),
                Admission::Dropped(_, DropReason::BufferFull)
            ));
            assert_eq!(q.enqueue(entry(3, 100, 2), ctx), Admission::Accepted);
        });
        assert_eq!((q.len(), q.bytes()), (3, 300));
    }
    /// Every discipline a port can run, with weights and thresholds that make classes and
    /// marking matter.
    fn every_discipline() -> Vec<Queue> {
        let weights = [1, 2, 3, 1, 2, 3, 1, 4];
        let schedulers = [
            SchedulerSpec::Fifo,
            SchedulerSpec::StrictPriority,
            SchedulerSpec::Drr {
                quantum: 700,
                weights,
            },
            SchedulerSpec::Wrr { weights },
            SchedulerSpec::Wfq { weights },
            SchedulerSpec::VirtualClock { weights },
            SchedulerSpec::FairQueueing,
        ];
        let red = RedSpec {
            min_bytes: 1_000,
            max_bytes: 4_000,
            max_p_ppm: 500_000,
            weight_ppm: 500_000,
            ecn: true,
            spread: true,
            at_dequeue: false,
        };
        let mut queues: Vec<Queue> = schedulers
            .iter()
            .map(|s| Queue::for_port(s, &AqmSpec::None))
            .collect();
        // RED marking at dequeue on the instantaneous queue (DCQCN's Kmin, Kmax, Pmax as the
        // HPCC simulator marks): it passes when empty with a positive `min`, not with 0 (a
        // packet leaving nothing behind would still draw).
        let instantaneous = RedSpec {
            weight_ppm: 1_000_000,
            spread: false,
            at_dequeue: true,
            ..red
        };
        for aqm in [
            AqmSpec::Red(red),
            AqmSpec::Red(RedSpec {
                spread: false,
                at_dequeue: true,
                ..red
            }),
            AqmSpec::Red(instantaneous),
            AqmSpec::Red(RedSpec {
                spread: true,
                ..instantaneous
            }),
            AqmSpec::Red(RedSpec {
                min_bytes: 0,
                ..instantaneous
            }),
            AqmSpec::Step {
                k_bytes: 0,
                at_dequeue: false,
            },
            AqmSpec::Step {
                k_bytes: 1_500,
                at_dequeue: false,
            },
            AqmSpec::Step {
                k_bytes: 1_500,
                at_dequeue: true,
            },
            AqmSpec::DecBit,
        ] {
            queues.push(Queue::for_port(&SchedulerSpec::Fifo, &aqm));
        }
        queues
    }

    #[derive(Clone, Copy, Debug)]
    enum Op {
        Enqueue(Entry),
        Dequeue,
        /// Offered while the transmitter is idle.
        OfferIdle(Entry),
    }

    fn op() -> impl Strategy<Value = Op> {
        let entry = (0u32..1000, 64u32..1600, 0u8..4, any::<bool>(), 0u32..4).prop_map(
            |(n, size, class, ect, flow)| {
                let mut e = entry(n, size, class);
                e.packet.flow = flow;
                if ect {
                    e.packet.ecn = crate::packet::Ecn::Ect0;
                }
                e
            },
        );
        prop_oneof![
            entry.clone().prop_map(Op::Enqueue),
            Just(Op::Dequeue),
            entry.prop_map(Op::OfferIdle),
        ]
    }

    use proptest::prelude::*;

    proptest! {
        /// The port's empty-queue shortcut: for every discipline that
        /// [`Queue::passes_when_empty`], handing a packet offered to an empty queue with an idle
        /// transmitter straight to the transmitter (the queue untouched) gives the same packets,
        /// admissions and marks, then and afterwards, as enqueueing it and dequeueing at once.
        #[test]
        fn skipping_an_empty_queue_equals_queueing(
            limit_packets in prop::option::of(1u32..6),
            ops in prop::collection::vec(op(), 1..80),
        ) {
            let limit = match limit_packets {
                Some(n) => BufferSize::Packets(n),
                None => BufferSize::Bytes(crate::units::Bytes(6_000)),
            };
            for fresh in every_discipline().into_iter().filter(Queue::passes_when_empty) {
            let (mut skipping, mut queueing) = (fresh.clone(), fresh);
            let (mut rng_a, mut rng_b) = (None, None);
            for (t, &op) in ops.iter().enumerate() {
                let ctx = |slot| QueueCtx {
                    now: SimTime(t as u64 * 1_000_000),
                    limit,
                    rate: BitsPerSec(10_000_000_000),
                    rng: LazyStream::new(slot, 7, 0, 0),
                };
                let (mut a, mut b) = (ctx(&mut rng_a), ctx(&mut rng_b));
                match op {
                    Op::Enqueue(e) => {
                        prop_assert_eq!(skipping.enqueue(e, &mut a), queueing.enqueue(e, &mut b));
                    }
                    Op::Dequeue => {
                        prop_assert_eq!(skipping.dequeue(&mut a), queueing.dequeue(&mut b));
                    }
                    // The port only skips an empty queue.
                    Op::OfferIdle(e) if queueing.is_empty() => {
                        prop_assert!(skipping.is_empty());
                        let admission = queueing.enqueue(e, &mut b);
                        prop_assert_eq!(admission, Admission::Accepted);
                        prop_assert_eq!(queueing.dequeue(&mut b), Some(e));
                    }
                    Op::OfferIdle(_) => {}
                }
                prop_assert_eq!(
                    (skipping.len(), skipping.bytes()),
                    (queueing.len(), queueing.bytes())
                );
            }
            loop {
                // Each queue with its own stream, as above (RED at dequeue draws as it drains).
                let ctx = |slot| QueueCtx {
                    now: SimTime(u64::MAX / 2),
                    limit,
                    rate: BitsPerSec(10_000_000_000),
                    rng: LazyStream::new(slot, 7, 0, 0),
                };
                let (mut ca, mut cb) = (ctx(&mut rng_a), ctx(&mut rng_b));
                let (a, b) = (skipping.dequeue(&mut ca), queueing.dequeue(&mut cb));
                prop_assert_eq!(a, b);
                if a.is_none() {
                    break;
                }
            }
            }
        }
    }
}

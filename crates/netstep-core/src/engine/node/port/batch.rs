//! Departures as a batch: a window's worth of a FIFO port's departures in one pass.
//!
//! Within a window `[T, bound)` nothing that arrives at a switch port can change when the
//! packets already waiting in its plain FIFO leave: each starts when the one before it ends
//! (no PFC pause, no shaper, no scheduler, no AQM that decides at dequeue). So when the
//! transmitter frees and takes its next packet, such a port goes on to send every following
//! packet whose start falls before `bound`, at that start ([`Egress::send_ahead`]), instead of
//! keeping one `PortReady` event per packet. Each is exactly what the per-event path does at
//! that time (the same transmission start, downstream arrival event, hop record, counters,
//! wire-loss draw), only handled earlier in the window; messages are exchanged at the window's
//! barrier either way, and every start is before `bound`, so each leaves in the window it
//! leaves in one event at a time.
//!
//! The packets sent ahead of their start are remembered (`PortCold::started`: start and
//! size) until that start, because a packet arriving at the port before it must still find
//! them waiting: its admission, its queue facts and the queue's peak count them ([`waiting`];
//! a transmitter that frees at `t` takes its next packet before arrivals at `t`, so a packet
//! starting at `t` has left for them). Only the window engine gives a bound
//! ([`crate::engine::event::EventSink::batch_bound`]), and only when the model has nothing a
//! port's departure could depend on beyond its own FIFO ([`crate::engine::Model::batches_departures`]);
//! the reference engine handles one event at a time, so the differential tests compare the two.
//!
//! Identical results, not identical internals: when a batch empties the queue and a later
//! arrival queues behind the packets sent ahead, the arrival schedules the next `PortReady`
//! (at the same time, with its own creation time and tie, where the per-event path's came
//! from the last departure). Only the order of one switch's simultaneous `PortReady` events
//! could tell them apart, and with the exclusions above no port's handling reads another's.

use super::state::PortState;
use super::{Egress, Owner, PortRef, queueing};
use crate::engine::event::EventSink;
use crate::queue::Queue;
use crate::units::{BufferSize, SimTime};

/// The packets of `port` sent ahead that still wait at `now` (packets, bytes); forgets those
/// that started by `now`.
#[inline]
pub(super) fn waiting(port: &mut PortState, now: SimTime) -> (u32, u64) {
    let Some(cold) = port.cold.as_mut() else {
        return (0, 0);
    };
    while let Some(&(start, bytes)) = cold.started.front() {
        if start > now.0 {
            break;
        }
        cold.started.pop_front();
        cold.started_bytes -= bytes as u64;
    }
    (cold.started.len() as u32, cold.started_bytes)
}

/// `limit` less the packets sent ahead that still wait (`waiting`), for the queue element,
/// which holds only the others.
#[inline]
pub(super) fn narrow(limit: BufferSize, (packets, bytes): (u32, u64)) -> BufferSize {
    match limit {
        BufferSize::Packets(n) => BufferSize::Packets(n.saturating_sub(packets)),
        BufferSize::Bytes(b) => BufferSize::Bytes(crate::units::Bytes(b.0.saturating_sub(bytes))),
    }
}

impl<'a> Egress<'a> {
    /// The transmitter of switch port `at` just took its next packet: sends every following
    /// packet of its FIFO that starts before the sink's batch bound, each at its start, as the
    /// `PortReady` events of the per-event path would (see the module docs). Returns the start
    /// of the last packet sent (`now` when none was).
    pub(super) fn send_ahead<O: Owner>(
        &mut self,
        owner: &mut O,
        at: &PortRef<'a>,
        now: SimTime,
        sink: &mut impl EventSink,
    ) -> SimTime {
        let bound = sink.batch_bound();
        let mut last = now;
        if O::HOST || at.class.shaper.is_some() || self.ports[at.local as usize].busy_until >= bound
        {
            return last;
        }
        loop {
            let port = &mut self.ports[at.local as usize];
            let start = port.busy_until;
            let Some(cold) = port.cold.as_mut() else {
                return last;
            };
            if start >= bound
                || port.paused != 0
                || !cold.control.is_empty()
                || !matches!(cold.queue, Queue::Fifo(_))
            {
                return last;
            }
            let Some(next) = queueing::next(cold, at, 0, start, self.model.seed) else {
                return last;
            };
            cold.started.push_back((start.0, next.packet.size_bytes));
            cold.started_bytes += next.packet.size_bytes as u64;
            // The `PortReady` event the per-event path handles at `start`.
            self.lp.counters.events += 1;
            self.lp.counters.batched += 1;
            self.lp.last_useful = self.lp.last_useful.max(start);
            self.depart(owner, at, next, start, sink);
            last = start;
        }
    }
}

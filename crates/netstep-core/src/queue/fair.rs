//! The tagged queue behind WFQ, Virtual Clock and per-flow fair queueing: per-key FIFOs
//! (a key is a traffic class or a flow) whose head packets compete by tag, smallest first
//! (ties: earlier arrival). Buffers are per key (tail drop per class) or shared with
//! push-out from the longest key (fair queueing's rule, Demers, Keshav and Shenker 1989).

use std::collections::{BTreeSet, HashMap, VecDeque};

use super::gps::Tag;
use super::{Admission, DropReason, Entry, QueueCtx};

/// Per-key FIFOs served by smallest head tag.
#[derive(Clone, Debug, Default)]
pub struct TaggedQueues {
    queues: HashMap<u64, KeyQueue>,
    /// (head tag, arrival sequence, key) of every non-empty key.
    heads: BTreeSet<(Tag, u64, u64)>,
    seq: u64,
    len: usize,
    bytes: u64,
}

#[derive(Clone, Debug, Default)]
struct KeyQueue {
    entries: VecDeque<(Tag, u64, Entry)>,
    bytes: u64,
}

/// How a full buffer is handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BufferRule {
    /// Each key has the port's whole buffer; an entry that does not fit is dropped.
    PerKey,
    /// One buffer for all keys; when it is full the longest key (in bytes) loses its last
    /// packet, which may be the arriving one.
    SharedPushOut,
}

impl TaggedQueues {
    /// True when an entry of `bytes` for `key` fits under `rule`.
    pub fn fits(&self, key: u64, bytes: u64, rule: BufferRule, ctx: &QueueCtx<'_>) -> bool {
        match rule {
            BufferRule::PerKey => {
                let q = self.queues.get(&key);
                ctx.limit.fits(
                    q.map_or(0, |q| q.entries.len()),
                    q.map_or(0, |q| q.bytes),
                    bytes,
                )
            }
            BufferRule::SharedPushOut => ctx.limit.fits(self.len, self.bytes, bytes),
        }
    }

    /// Adds an entry with its tag (the caller checked the buffer or made room).
    pub fn push(&mut self, key: u64, tag: Tag, entry: Entry) {
        self.seq += 1;
        let size = entry.packet.size_bytes as u64;
        let q = self.queues.entry(key).or_default();
        if q.entries.is_empty() {
            self.heads.insert((tag, self.seq, key));
        }
        q.entries.push_back((tag, self.seq, entry));
        q.bytes += size;
        self.len += 1;
        self.bytes += size;
    }

    /// Takes the entry with the smallest head tag.
    pub fn pop(&mut self) -> Option<Entry> {
        let (_, _, key) = self.heads.pop_first()?;
        let q = self.queues.get_mut(&key).expect("heads name live keys");
        let (_, _, entry) = q.entries.pop_front().expect("heads name non-empty keys");
        let size = entry.packet.size_bytes as u64;
        q.bytes -= size;
        self.len -= 1;
        self.bytes -= size;
        match q.entries.front() {
            Some(&(tag, seq, _)) => {
                self.heads.insert((tag, seq, key));
            }
            None => {
                self.queues.remove(&key);
            }
        }
        Some(entry)
    }

    /// The key holding the most bytes (ties: the larger key), with its byte count.
    pub fn longest(&self) -> Option<(u64, u64)> {
        self.queues
            .iter()
            .map(|(&k, q)| (q.bytes, k))
            .max()
            .map(|(b, k)| (k, b))
    }

    /// Removes the last entry of `key`.
    pub fn pop_back(&mut self, key: u64) -> Option<Entry> {
        let q = self.queues.get_mut(&key)?;
        let (tag, seq, entry) = q.entries.pop_back()?;
        let size = entry.packet.size_bytes as u64;
        q.bytes -= size;
        self.len -= 1;
        self.bytes -= size;
        if q.entries.is_empty() {
            self.heads.remove(&(tag, seq, key));
            self.queues.remove(&key);
        }
        Some(entry)
    }

    /// Offers an entry under `rule` (tagging it with `tag_of` only if it is kept).
    pub fn offer(
        &mut self,
        key: u64,
        entry: Entry,
        rule: BufferRule,
        ctx: &QueueCtx<'_>,
        tag_of: impl FnOnce() -> Tag,
    ) -> Admission {
        let size = entry.packet.size_bytes as u64;
        if self.fits(key, size, rule, ctx) {
            self.push(key, tag_of(), entry);
            return Admission::Accepted;
        }
        match rule {
            BufferRule::PerKey => Admission::Dropped(entry, DropReason::BufferFull),
            BufferRule::SharedPushOut => {
                // The arriving packet counts towards its key's length.
                let own = self.queues.get(&key).map_or(0, |q| q.bytes) + size;
                match self.longest() {
                    Some((longest, bytes)) if longest != key && bytes > own => {
                        let victim_size = self.queues[&longest]
                            .entries
                            .back()
                            .map_or(0, |(_, _, e)| e.packet.size_bytes as u64);
                        if !ctx.limit.fits(self.len - 1, self.bytes - victim_size, size) {
                            // Even without that packet it would not fit (a larger arrival).
                            return Admission::Dropped(entry, DropReason::BufferFull);
                        }
                        let victim = self
                            .pop_back(longest)
                            .expect("the longest key holds packets");
                        self.push(key, tag_of(), entry);
                        Admission::AcceptedDroppedOther(victim, DropReason::BufferFull)
                    }
                    _ => Admission::Dropped(entry, DropReason::BufferFull),
                }
            }
        }
    }

    /// Packets waiting.
    pub fn len(&self) -> usize {
        self.len
    }
    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

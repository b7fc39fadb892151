//! A large batch of delivered events sorted by a radix sort on time.
//!
//! A switch's batch of one window's arrivals spans about one lookahead (about a million
//! picoseconds) and holds hundreds of events, many at the same time (hosts sending in step at
//! line rate). A comparison sort of such a batch (by 40-byte keys, ties computed once) was
//! about a fifth of the instructions of an open-loop permutation (`benches/hop-cost`). Here
//! each event becomes one 64-bit word, its time relative to the batch's earliest in the high
//! half and its place in the batch in the low half; a least-significant-digit radix sort by
//! the bytes of the relative time that differ orders the words by time (stable, so by place
//! within a time); then the events of each time that more than one holds are put in the
//! order of the rest of their key ([`super::super::event::EventKey::order`] and the tie),
//! compared as numbers (a large group created in one phase at one time, hosts in step, by a
//! counting pass on the top byte of the ties first). The result is the [`Event`] order exactly (keys are unique); a batch
//! spanning more than `u32::MAX` ps is left to the comparison sort.

use crate::engine::event::Event;

/// Radix digit width, bits.
const DIGIT: u32 = 8;
/// Buckets per digit.
const BUCKETS: usize = 1 << DIGIT;
/// Digits of a relative time (32 bits).
const DIGITS: usize = 4;

/// Buffers a radix sort reuses between batches.
#[derive(Clone, Debug, Default)]
pub(super) struct RadixBuffers {
    words: Vec<u64>,
    spare: Vec<u64>,
    /// The events of one time, with the rest of their key (order, then tie, as one number)
    /// and their place in the batch.
    same_time: Vec<(u128, u32)>,
    /// A second buffer like `same_time`.
    same_time_spare: Vec<(u128, u32)>,
}

/// An equal-time group at least this large, all created in one phase at one time (hosts
/// sending in step), is ordered by the top byte of its ties first ([`by_tie`]).
const BY_TIE: usize = 32;

/// Sorts `staged` latest first (ascending in `Event`'s reversed `Ord`), through `sorted` (a
/// buffer kept between batches). Returns `false`, leaving `staged` as it was, when the batch
/// spans more than `u32::MAX` ps or holds more than `u32::MAX` events.
pub(super) fn sort_latest_first(
    staged: &mut Vec<Event>,
    sorted: &mut Vec<Event>,
    buffers: &mut RadixBuffers,
) -> bool {
    let Some(first) = staged.first() else {
        return true;
    };
    let (mut earliest, mut latest) = (first.key.time.0, first.key.time.0);
    for e in staged.iter() {
        earliest = earliest.min(e.key.time.0);
        latest = latest.max(e.key.time.0);
    }
    if latest - earliest > u32::MAX as u64 || staged.len() > u32::MAX as usize {
        return false;
    }
    let RadixBuffers {
        words,
        spare,
        same_time,
        same_time_spare,
    } = buffers;
    words.clear();
    words.extend(
        staged
            .iter()
            .enumerate()
            .map(|(i, e)| ((e.key.time.0 - earliest) << 32) | i as u64),
    );
    // Only the bytes of the span can differ.
    let digits = (u64::BITS - (latest - earliest).leading_zeros()).div_ceil(DIGIT) as usize;
    radix_sort(words, spare, digits);
    // Earliest first in `words`: walk it backwards, one time at a time.
    sorted.clear();
    let mut end = words.len();
    while end > 0 {
        let time = words[end - 1] >> 32;
        let mut start = end - 1;
        while start > 0 && words[start - 1] >> 32 == time {
            start -= 1;
        }
        if end - start == 1 {
            sorted.push(staged[(words[start] & u32::MAX as u64) as usize]);
        } else {
            same_time.clear();
            same_time.extend(words[start..end].iter().map(|w| {
                let place = (w & u32::MAX as u64) as u32;
                let e = &staged[place as usize];
                (((e.key.order as u128) << 64) | e.kind.tie() as u128, place)
            }));
            // Later first: the larger (order, tie).
            let order = same_time[0].0 >> 64;
            if same_time.len() >= BY_TIE && same_time.iter().all(|k| k.0 >> 64 == order) {
                by_tie(same_time, same_time_spare);
            } else {
                same_time.sort_unstable_by_key(|k| std::cmp::Reverse(k.0));
            }
            sorted.extend(same_time.iter().map(|&(_, p)| staged[p as usize]));
        }
        end = start;
    }
    std::mem::swap(staged, sorted);
    true
}

/// Sorts `keys` descending by their first field, which differ only in their low 64 bits (the
/// ties: mixed packet ids, so spread evenly): a counting pass by the top byte, then an
/// insertion sort that has only each byte's few keys to order. `spare` is a buffer.
fn by_tie(keys: &mut Vec<(u128, u32)>, spare: &mut Vec<(u128, u32)>) {
    let top = |k: &(u128, u32)| BUCKETS - 1 - (k.0 as u64 >> 56) as usize;
    let mut counts = [0u32; BUCKETS];
    for k in keys.iter() {
        counts[top(k)] += 1;
    }
    scatter(keys, spare, &mut counts, top);
    for i in 1..keys.len() {
        let k = keys[i];
        let mut j = i;
        while j > 0 && keys[j - 1].0 < k.0 {
            keys[j] = keys[j - 1];
            j -= 1;
        }
        keys[j] = k;
    }
}

/// Sorts `words` ascending by their high 32 bits, of which only the lowest `digits` bytes may
/// differ, stable (so by the low 32 bits within equal high halves when those start
/// ascending); `spare` is a buffer. Digits in which every word agrees are skipped.
fn radix_sort(words: &mut Vec<u64>, spare: &mut Vec<u64>, digits: usize) {
    let mut counts = [[0u32; BUCKETS]; DIGITS];
    let counts = &mut counts[..digits.min(DIGITS)];
    for &w in words.iter() {
        for (d, c) in counts.iter_mut().enumerate() {
            c[digit(w, d)] += 1;
        }
    }
    let n = words.len() as u32;
    for (d, c) in counts.iter_mut().enumerate() {
        if c.contains(&n) {
            continue;
        }
        scatter(words, spare, c, |&w| digit(w, d));
    }
}

/// One stable counting pass: `items` in ascending order of `bucket`, given each bucket's
/// count in `counts` (turned into positions); the result is left in `items`, `spare` is a
/// buffer.
#[inline]
fn scatter<T: Copy + Default>(
    items: &mut Vec<T>,
    spare: &mut Vec<T>,
    counts: &mut [u32; BUCKETS],
    bucket: impl Fn(&T) -> usize,
) {
    let mut at = 0;
    for slot in counts.iter_mut() {
        let count = *slot;
        *slot = at;
        at += count;
    }
    // Every slot is written below: only a longer batch than the last needs new ones.
    spare.resize(items.len(), T::default());
    for item in items.iter() {
        let slot = &mut counts[bucket(item)];
        spare[*slot as usize] = *item;
        *slot += 1;
    }
    std::mem::swap(items, spare);
}

/// Digit `d` (least significant first) of the high half of `w`.
#[inline]
fn digit(w: u64, d: usize) -> usize {
    ((w >> (32 + DIGIT as usize * d)) & (BUCKETS as u64 - 1)) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::event::{EventKey, EventKind, Phase};
    use crate::packet::{Packet, PacketKind};
    use crate::units::SimTime;
    use rand::{RngExt, SeedableRng};
    use rand_pcg::Pcg64Mcg;

    /// A batch of `n` events at times `base + [0, spread)`: when `mixed`, arrivals and port
    /// wake-ups created at a few distinct times (equal times and equal stored keys are
    /// frequent), else arrivals all created at time 0 (hosts sending in step).
    fn batch(n: usize, base: u64, spread: u64, seed: u64, mixed: bool) -> Vec<Event> {
        let mut rng = Pcg64Mcg::seed_from_u64(seed);
        (0..n)
            .map(|i| {
                let time = SimTime(base + rng.random_range(0..spread));
                let created = SimTime(if mixed { rng.random_range(0..3) } else { 0 });
                if !mixed || rng.random_bool(0.8) {
                    let packet = Packet::new(PacketKind::Data, i as u32 % 5, i as u32, 0, 1, 1000);
                    Event {
                        key: EventKey::new(time, Phase::Arrive, created),
                        kind: EventKind::Arrive(packet),
                    }
                } else {
                    Event {
                        key: EventKey::new(time, Phase::PortReady, created),
                        kind: EventKind::PortReady {
                            port: 0,
                            seq: i as u64,
                        },
                    }
                }
            })
            .collect()
    }

    /// The radix sort gives exactly the comparison sort's order: few distinct times (long
    /// runs of equal time), one time and one creation (ordered by ties), a spread over several
    /// digits, one event, and a batch spanning more than 32 bits of picoseconds (refused, left
    /// as it was).
    #[test]
    fn orders_a_batch_exactly_as_the_comparison_sort() {
        let mut buffers = RadixBuffers::default();
        let mut sorted = Vec::new();
        for (n, base, spread, seed, mixed) in [
            (500, 7_000_000, 4, 1, true),
            (2000, 9, 1, 6, false),
            (600, 9, 3, 7, false),
            (700, 1 << 40, 3_000_000, 2, true),
            (300, 0, u32::MAX as u64 + 1, 3, true),
            (1, 5, 1, 4, true),
        ] {
            let mut staged = batch(n, base, spread, seed, mixed);
            let mut expected = staged.clone();
            expected.sort_unstable();
            assert!(sort_latest_first(&mut staged, &mut sorted, &mut buffers));
            assert_eq!(staged, expected, "n {n} spread {spread}");
        }
        let mut wide = batch(200, 0, 1 << 40, 5, true);
        let before = wide.clone();
        assert!(!sort_latest_first(&mut wide, &mut sorted, &mut buffers));
        assert_eq!(wide, before);
    }
}

//! Keyed random streams: every consumer of randomness (a traffic block, a flow's source) gets
//! its own generator seeded from (simulation seed, stream kind, entity), so no draw depends on
//! scheduling, thread count or the order in which other entities draw.

use rand::SeedableRng;
use rand_pcg::Pcg64Mcg;

/// Stream kind of open-loop sources' exponential gaps (entity = flow id).
pub const STREAM_OPEN_LOOP: u64 = 1;
/// Stream kind of traffic generation (entity = traffic block index).
pub const STREAM_TRAFFIC: u64 = 2;
/// Stream kind of random link loss (entity = global port id).
pub const STREAM_LOSS: u64 = 3;

/// Stream kind of queue disciplines' draws (RED, spraying; entity = global port id).
pub const STREAM_QUEUE: u64 = 4;

/// Stream kind of a request/response client's think times (entity = traffic block index
/// << 32 | client host).
pub const STREAM_THINK: u64 = 5;

/// The SplitMix64 finalizer (Steele, Lea and Flood 2014): a bijective mix of a 64-bit word,
/// the one hash behind stream seeds, ECMP, packet sampling, arrival ties and load balancing.
#[inline]
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// A keyed stream created on first use: elements that may draw (a lossy link, a random
/// queue discipline) hold only the empty slot until they do.
pub struct LazyStream<'a> {
    slot: &'a mut Option<Box<Pcg64Mcg>>,
    seed: u64,
    kind: u64,
    entity: u64,
}

impl<'a> LazyStream<'a> {
    /// The stream (`kind`, `entity`) under `seed`, kept in `slot`.
    pub fn new(slot: &'a mut Option<Box<Pcg64Mcg>>, seed: u64, kind: u64, entity: u64) -> Self {
        LazyStream {
            slot,
            seed,
            kind,
            entity,
        }
    }
    /// The generator, created on the first call.
    pub fn get(&mut self) -> &mut Pcg64Mcg {
        let (seed, kind, entity) = (self.seed, self.kind, self.entity);
        self.slot
            .get_or_insert_with(|| Box::new(stream(seed, kind, entity)))
    }
}

/// The seed of stream (`kind`, `entity`) under simulation seed `seed` (splitmix64 mixing).
pub fn stream_seed(seed: u64, kind: u64, entity: u64) -> u64 {
    let mut z = seed;
    for word in [kind, entity] {
        z = z
            .wrapping_add(0x9e37_79b9_7f4a_7c15)
            .wrapping_add(word.wrapping_mul(0xd1b5_4a32_d192_ed03));
        z = mix64(z);
    }
    z
}

/// The generator of stream (`kind`, `entity`). PCG-64 (MCG): a fixed, documented algorithm, so
/// streams do not change when the `rand` crate changes its default generators.
pub fn stream(seed: u64, kind: u64, entity: u64) -> Pcg64Mcg {
    Pcg64Mcg::seed_from_u64(stream_seed(seed, kind, entity))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_differ_by_key_and_repeat_by_seed() {
        assert_ne!(stream_seed(1, 1, 0), stream_seed(1, 1, 1));
        assert_ne!(stream_seed(1, 1, 0), stream_seed(1, 2, 0));
        assert_ne!(stream_seed(1, 1, 0), stream_seed(2, 1, 0));
        assert_eq!(stream_seed(7, 1, 3), stream_seed(7, 1, 3));
    }
}

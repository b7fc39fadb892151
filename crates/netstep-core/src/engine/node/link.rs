//! The wire: random per-packet loss on a link (`loss`, resolution 1e-6), drawn from the
//! egress port's keyed stream so losses do not depend on scheduling.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::rng::{LazyStream, STREAM_LOSS};
use crate::topology::LinkClass;

/// True when the packet now starting on global port `port` is lost on the wire.
#[inline]
pub(super) fn lost_on_wire(
    class: &LinkClass,
    slot: &mut Option<Box<Pcg64Mcg>>,
    seed: u64,
    port: u32,
) -> bool {
    if class.loss_ppm == 0 {
        return false;
    }
    let mut rng = LazyStream::new(slot, seed, STREAM_LOSS, port as u64);
    rng.get().next_u32() % 1_000_000 < class.loss_ppm
}

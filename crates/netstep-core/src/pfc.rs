//! Priority flow control (IEEE 802.1Qbb): lossless traffic classes.
//!
//! Every switch counts, per ingress port and lossless class, the bytes that came in through
//! that port and still wait in the switch (accepted into an egress queue, not yet sent). When
//! a count exceeds `xoff` the switch sends a PAUSE frame for that class back over the ingress
//! link; when it falls to `xon` or below, a RESUME. The upstream node (switch or host NIC)
//! stops starting packets of a paused class on that port (a FIFO port blocks at a paused
//! head, as hardware with one queue does; strict priority skips the paused classes). Frames
//! are 64-byte MAC control frames sent ahead of the port's queue (after the packet being
//! serialized), so a pause takes effect one frame serialization plus the link delay later;
//! the lookahead counts them. Lossless packets are never dropped at a switch buffer: what
//! arrives after XOFF lands in the headroom, and arrivals beyond `xoff + headroom` are
//! counted (`headroom_exceeded`: the headroom was too small for the link's round trip).
//!
//! A cyclic pause (a deadlock) leaves ports paused with packets waiting and no event to run:
//! the run ends and [`find_deadlock`] reports the cycle of nodes instead of hanging.

use crate::units::Bytes;

/// Size of a PAUSE / RESUME frame on the wire.
pub const FRAME_BYTES: u32 = 64;

/// PFC settings of every switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PfcSpec {
    /// Lossless classes (bit `c` for class `c`).
    pub lossless: u8,
    /// Ingress bytes of one class above which the upstream is paused.
    pub xoff: Bytes,
    /// Ingress bytes at or below which it is resumed (`<= xoff`).
    pub xon: Bytes,
    /// Bytes per ingress port and class the switch can take beyond `xoff`.
    pub headroom: Bytes,
}

impl PfcSpec {
    /// The default headroom above `xoff` before lossless arrivals are reported as exceeding
    /// it: 30 KB, about one round trip of a 100 Gb/s link of a few hundred metres.
    pub const DEFAULT_HEADROOM: Bytes = Bytes(30_000);
}

impl PfcSpec {
    /// Whether class `class` is lossless.
    #[inline]
    pub const fn is_lossless(&self, class: u8) -> bool {
        self.lossless & (1 << class) != 0
    }
}

/// One PAUSE or RESUME frame a node sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct PfcEvent {
    /// When the frame was issued, ps.
    pub time_ps: u64,
    /// The node that sent it (the congested switch).
    pub node: u32,
    /// The global port it leaves on (towards the paused node).
    pub port: u32,
    /// Traffic class.
    pub class: u8,
    /// PAUSE (true) or RESUME (false).
    pub pause: bool,
}

/// Ingress accounting of one switch.
#[derive(Clone, Debug, Default)]
pub struct PfcIngress {
    /// Bytes waiting in the switch per local ingress port and class.
    bytes: Vec<[u64; 8]>,
    /// Per local ingress port: classes for which a PAUSE is in force upstream.
    paused_upstream: Vec<u8>,
    /// Arrivals that found their ingress count beyond `xoff + headroom`.
    pub headroom_exceeded: u64,
}

/// What the ingress accounting asks the switch to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameRequest {
    /// Send PAUSE for the class on the ingress port.
    Pause,
    /// Send RESUME for the class on the ingress port.
    Resume,
}

impl PfcIngress {
    /// Accounting for a switch with `degree` ports.
    pub fn new(degree: u32) -> PfcIngress {
        PfcIngress {
            bytes: vec![[0; 8]; degree as usize],
            paused_upstream: vec![0; degree as usize],
            headroom_exceeded: 0,
        }
    }

    /// A lossless packet of `size` bytes from local ingress port `port` was accepted.
    pub fn arrived(
        &mut self,
        spec: &PfcSpec,
        port: u16,
        class: u8,
        size: u32,
    ) -> Option<FrameRequest> {
        let (p, c) = (port as usize, class as usize);
        self.bytes[p][c] += size as u64;
        let held = self.bytes[p][c];
        if held > spec.xoff.0.saturating_add(spec.headroom.0) {
            self.headroom_exceeded += 1;
        }
        if held > spec.xoff.0 && self.paused_upstream[p] & (1 << c) == 0 {
            self.paused_upstream[p] |= 1 << c;
            return Some(FrameRequest::Pause);
        }
        None
    }

    /// A lossless packet of `size` bytes from local ingress port `port` left the switch.
    pub fn left(
        &mut self,
        spec: &PfcSpec,
        port: u16,
        class: u8,
        size: u32,
    ) -> Option<FrameRequest> {
        let (p, c) = (port as usize, class as usize);
        self.bytes[p][c] -= size as u64;
        if self.bytes[p][c] <= spec.xon.0 && self.paused_upstream[p] & (1 << c) != 0 {
            self.paused_upstream[p] &= !(1 << c);
            return Some(FrameRequest::Resume);
        }
        None
    }
}

/// A cycle of nodes each waiting on the next (its port towards the next is paused with
/// packets queued), if any: `edges` are (node, peer) pairs of such ports.
pub fn find_deadlock(edges: &[(u32, u32)]) -> Option<Vec<u32>> {
    use std::collections::BTreeMap;
    let mut next: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
    for &(a, b) in edges {
        next.entry(a).or_default().push(b);
    }
    // Iterative DFS with colors: 0 unseen, 1 on the stack, 2 done.
    let mut color: BTreeMap<u32, u8> = BTreeMap::new();
    for &start in next.keys() {
        if color.get(&start).copied().unwrap_or(0) != 0 {
            continue;
        }
        let mut stack: Vec<(u32, usize)> = vec![(start, 0)];
        color.insert(start, 1);
        while let Some(&mut (node, ref mut i)) = stack.last_mut() {
            let succ = next.get(&node).map_or(&[][..], |v| &v[..]);
            if *i < succ.len() {
                let s = succ[*i];
                *i += 1;
                match color.get(&s).copied().unwrap_or(0) {
                    0 => {
                        color.insert(s, 1);
                        stack.push((s, 0));
                    }
                    1 => {
                        let from = stack.iter().position(|&(n, _)| n == s).expect("on stack");
                        return Some(stack[from..].iter().map(|&(n, _)| n).collect());
                    }
                    _ => {}
                }
            } else {
                color.insert(node, 2);
                stack.pop();
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoff_pauses_once_and_xon_resumes_once() {
        let spec = PfcSpec {
            lossless: 0b1000,
            xoff: Bytes(3000),
            xon: Bytes(1500),
            headroom: Bytes(3000),
        };
        let mut ing = PfcIngress::new(2);
        assert_eq!(ing.arrived(&spec, 1, 3, 1500), None);
        assert_eq!(ing.arrived(&spec, 1, 3, 1500), None);
        assert_eq!(ing.arrived(&spec, 1, 3, 1500), Some(FrameRequest::Pause));
        assert_eq!(ing.arrived(&spec, 1, 3, 1500), None);
        // Other ports and classes are counted apart.
        assert_eq!(ing.arrived(&spec, 0, 3, 1500), None);
        // 6000 held: RESUME once it is down to XON (1500), not before, and only once.
        assert_eq!(ing.left(&spec, 1, 3, 1500), None);
        assert_eq!(ing.left(&spec, 1, 3, 1500), None);
        assert_eq!(ing.left(&spec, 1, 3, 1500), Some(FrameRequest::Resume));
        assert_eq!(ing.left(&spec, 1, 3, 1500), None);
        assert_eq!(ing.headroom_exceeded, 0);
        for _ in 0..5 {
            ing.arrived(&spec, 0, 3, 1500);
        }
        assert_eq!(ing.headroom_exceeded, 2);
    }

    #[test]
    fn cycles_are_found_chains_are_not() {
        assert_eq!(find_deadlock(&[(1, 2), (2, 3)]), None);
        let cycle = find_deadlock(&[(5, 1), (1, 2), (2, 3), (3, 1)]).unwrap();
        assert_eq!(cycle, [1, 2, 3]);
    }
}

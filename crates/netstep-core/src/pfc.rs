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
//! With [`DynamicPfc`] the thresholds move with the switch's free buffer instead (the HPCC
//! simulator's `SwitchMmu`, a Broadcom-style MMU): per ingress port and class the first
//! `reserve` bytes are private, what is above comes out of a shared pool, and the PAUSE
//! threshold of a port is `(buffer - every port's headroom and reserve - shared bytes in use)
//! / 2^shift`, with `shift` one less per doubling of the port's rate over the host link's.
//! Arrivals above the threshold go to the port's headroom; PAUSE once anything is in the
//! headroom or the shared bytes reach the threshold, RESUME (checked as that port's packets
//! leave) once the headroom is empty and the shared bytes are 0 or `resume_offset` below it.
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
    /// When to pause and resume.
    pub thresholds: PfcThresholds,
}

/// When a switch pauses and resumes a lossless class of an ingress port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PfcThresholds {
    /// Fixed byte counts per ingress port and class.
    Static(StaticPfc),
    /// Thresholds that move with the switch's free buffer.
    Dynamic(DynamicPfc),
}

/// Fixed PFC thresholds (see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StaticPfc {
    /// Ingress bytes of one class above which the upstream is paused.
    pub xoff: Bytes,
    /// Ingress bytes at or below which it is resumed (`<= xoff`).
    pub xon: Bytes,
    /// Bytes per ingress port and class the switch can take beyond `xoff`.
    pub headroom: Bytes,
}

/// Dynamic PFC thresholds (the HPCC simulator's switch MMU; see the module docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DynamicPfc {
    /// The switch's buffer, shared by all its ports.
    pub buffer: Bytes,
    /// Private bytes per ingress port and class.
    pub reserve: Bytes,
    /// RESUME once the shared bytes are this far below the threshold.
    pub resume_offset: Bytes,
    /// Headroom per port, in link bandwidth-delay products (`rate x delay`, whole bytes).
    pub headroom_bdps: u32,
    /// Threshold shift at ports of the host link rate (3: one eighth of the free buffer).
    pub shift: u8,
    /// The host link rate, bit/s: the first host's (the simulator's `get_nic_rate`); set
    /// when the model is built.
    pub host_rate: u64,
}

impl Default for DynamicPfc {
    /// The simulator's settings: 12 MiB of buffer (`SwitchMmu`'s own default), 4 KiB reserve,
    /// 3 KiB resume offset, three link BDPs of headroom, shift 3; the host rate unset.
    fn default() -> Self {
        DynamicPfc {
            buffer: Bytes(12 * 1024 * 1024),
            reserve: Self::DEFAULT_RESERVE,
            resume_offset: Self::DEFAULT_RESUME_OFFSET,
            headroom_bdps: Self::DEFAULT_HEADROOM_BDPS,
            shift: Self::DEFAULT_SHIFT,
            host_rate: 0,
        }
    }
}

impl DynamicPfc {
    /// The simulator's reserve per port and class (4 KiB).
    pub const DEFAULT_RESERVE: Bytes = Bytes(4096);
    /// The simulator's resume offset (3 KiB).
    pub const DEFAULT_RESUME_OFFSET: Bytes = Bytes(3072);
    /// The simulator's headroom: three link bandwidth-delay products per port.
    pub const DEFAULT_HEADROOM_BDPS: u32 = 3;
    /// The simulator's shift at the host link rate (alpha = 1/8).
    pub const DEFAULT_SHIFT: u8 = 3;

    /// The per-port settings of switch `node` of `net`.
    pub fn for_switch(&self, net: &crate::network::Network, node: u32) -> DynamicPorts {
        let links: Vec<(u64, u64)> = (0..net.degree(node))
            .map(|local| {
                let class = net.class_of(net.port_id(node, local));
                (class.rate.0, class.delay.0)
            })
            .collect();
        self.ports(&links)
    }

    /// The per-port settings of a switch whose ports have `(rate bit/s, delay ps)` links.
    pub fn ports(&self, links: &[(u64, u64)]) -> DynamicPorts {
        let host_rate = self.host_rate;
        let headroom: Vec<u64> = links
            .iter()
            .map(|&(rate, delay_ps)| {
                let bdp = rate as u128 * (delay_ps / 1000) as u128 / 8 / 1_000_000_000;
                let bytes = bdp.saturating_mul(self.headroom_bdps as u128);
                u64::try_from(bytes).unwrap_or(u64::MAX)
            })
            .collect();
        let shift = links
            .iter()
            .map(|&(rate, _)| {
                // third.cc: one less per doubling above the host rate, down to 0.
                let (mut rate, mut shift) = (rate, self.shift);
                while rate > host_rate && shift > 0 {
                    shift -= 1;
                    rate /= 2;
                }
                shift
            })
            .collect();
        // Saturating: a sum past u64 is refused as larger than any buffer.
        let fixed = headroom
            .iter()
            .fold(0u64, |sum, &h| sum.saturating_add(h))
            .saturating_add(self.reserve.0.saturating_mul(links.len() as u64));
        DynamicPorts {
            headroom,
            shift,
            fixed,
        }
    }
}

/// [`DynamicPfc`] resolved for one switch's ports.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DynamicPorts {
    /// Headroom per local port, bytes.
    pub headroom: Vec<u64>,
    /// Threshold shift per local port.
    pub shift: Vec<u8>,
    /// Every port's headroom and reserve together (kept out of the shared pool).
    pub fixed: u64,
}

impl StaticPfc {
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

    /// The dynamic thresholds, if these are dynamic.
    pub const fn dynamic(&self) -> Option<&DynamicPfc> {
        match &self.thresholds {
            PfcThresholds::Dynamic(dynamic) => Some(dynamic),
            PfcThresholds::Static(_) => None,
        }
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

/// The accounting of one ingress port of a switch: one record, so that a packet's arrival or
/// departure reads and writes one place (one bounds check, neighbouring lines).
#[derive(Clone, Copy, Debug, Default)]
struct IngressPort {
    /// Bytes per class waiting in the switch (dynamic: those not in the headroom).
    bytes: [u64; 8],
    /// Dynamic: bytes per class in the headroom.
    headroom: [u64; 8],
    /// Dynamic: the port's headroom, bytes.
    headroom_limit: u64,
    /// Dynamic: the port's threshold shift.
    shift: u8,
    /// Classes for which a PAUSE is in force upstream.
    paused_upstream: u8,
}

/// Ingress accounting of one switch.
#[derive(Clone, Debug, Default)]
pub struct PfcIngress {
    /// Per local ingress port.
    ports: Vec<IngressPort>,
    /// Dynamic: shared bytes in use at the switch.
    shared_used: u64,
    /// Dynamic: every port's headroom and reserve together (kept out of the shared pool).
    fixed: u64,
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
            ports: vec![IngressPort::default(); degree as usize],
            shared_used: 0,
            fixed: 0,
            headroom_exceeded: 0,
        }
    }

    /// Accounting with dynamic thresholds for a switch whose ports are `ports`.
    pub fn dynamic(ports: DynamicPorts) -> PfcIngress {
        PfcIngress {
            ports: ports
                .headroom
                .iter()
                .zip(&ports.shift)
                .map(|(&headroom_limit, &shift)| IngressPort {
                    headroom_limit,
                    shift,
                    ..IngressPort::default()
                })
                .collect(),
            fixed: ports.fixed,
            ..PfcIngress::new(0)
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
        let c = (class & 7) as usize;
        let size = size as u64;
        let at = &mut self.ports[port as usize];
        let wanted = match &spec.thresholds {
            PfcThresholds::Dynamic(dynamic) => {
                let pool = Pool {
                    spec: dynamic,
                    fixed: self.fixed,
                    used: &mut self.shared_used,
                };
                pool.arrived(at, c, size, &mut self.headroom_exceeded)
            }
            PfcThresholds::Static(fixed) => {
                at.bytes[c] += size;
                let held = at.bytes[c];
                if held > fixed.xoff.0.saturating_add(fixed.headroom.0) {
                    self.headroom_exceeded += 1;
                }
                held > fixed.xoff.0
            }
        };
        request(at, c, FrameRequest::Pause, wanted)
    }

    /// A lossless packet of `size` bytes from local ingress port `port` left the switch.
    pub fn left(
        &mut self,
        spec: &PfcSpec,
        port: u16,
        class: u8,
        size: u32,
    ) -> Option<FrameRequest> {
        let c = (class & 7) as usize;
        let size = size as u64;
        let at = &mut self.ports[port as usize];
        let wanted = match &spec.thresholds {
            PfcThresholds::Dynamic(dynamic) => {
                let pool = Pool {
                    spec: dynamic,
                    fixed: self.fixed,
                    used: &mut self.shared_used,
                };
                pool.left(at, c, size)
            }
            PfcThresholds::Static(fixed) => {
                at.bytes[c] -= size;
                at.bytes[c] <= fixed.xon.0
            }
        };
        request(at, c, FrameRequest::Resume, wanted)
    }
}

/// `frame` for class `c` upstream of `port` when the accounting `wanted` it and it changes
/// the pause state there (one PAUSE, then one RESUME, in turn).
#[inline]
fn request(
    port: &mut IngressPort,
    c: usize,
    frame: FrameRequest,
    wanted: bool,
) -> Option<FrameRequest> {
    let bit = 1 << c;
    let paused = port.paused_upstream & bit != 0;
    if !wanted || paused == (frame == FrameRequest::Pause) {
        return None;
    }
    port.paused_upstream ^= bit;
    Some(frame)
}

/// Dynamic thresholds: a switch's shared pool while one port's packet is counted.
struct Pool<'a> {
    spec: &'a DynamicPfc,
    /// Every port's headroom and reserve.
    fixed: u64,
    /// Shared bytes in use.
    used: &'a mut u64,
}

impl Pool<'_> {
    /// The PAUSE threshold of `port` (the simulator's `GetPfcThreshold`).
    #[inline]
    fn threshold(&self, port: &IngressPort) -> u64 {
        let free = self
            .spec
            .buffer
            .0
            .saturating_sub(self.fixed)
            .saturating_sub(*self.used);
        free >> port.shift
    }

    /// The shared bytes of `port`, class `c` (above its reserve).
    #[inline]
    fn shared(&self, port: &IngressPort, c: usize) -> u64 {
        port.bytes[c].saturating_sub(self.spec.reserve.0)
    }

    /// [`PfcIngress::arrived`]'s accounting (`UpdateIngressAdmission`); returns whether to
    /// pause (`CheckShouldPause`).
    fn arrived(self, at: &mut IngressPort, c: usize, size: u64, exceeded: &mut u64) -> bool {
        let reserve = self.spec.reserve.0;
        let threshold = self.threshold(at);
        if size + at.headroom[c] > at.headroom_limit && size + self.shared(at, c) > threshold {
            // The simulator drops it; netstep keeps lossless packets and reports it.
            *exceeded += 1;
        }
        let new = at.bytes[c] + size;
        if new <= reserve {
            at.bytes[c] = new;
        } else if new - reserve > threshold {
            at.headroom[c] += size;
        } else {
            at.bytes[c] = new;
            *self.used += size.min(new - reserve);
        }
        at.headroom[c] > 0 || self.shared(at, c) >= self.threshold(at)
    }

    /// [`PfcIngress::left`]'s accounting (`RemoveFromIngressAdmission`); returns whether to
    /// resume (`CheckShouldResume`).
    fn left(self, at: &mut IngressPort, c: usize, size: u64) -> bool {
        let from_headroom = at.headroom[c].min(size);
        let from_shared = (size - from_headroom).min(self.shared(at, c));
        at.headroom[c] -= from_headroom;
        at.bytes[c] -= size - from_headroom;
        *self.used -= from_shared;
        let shared = self.shared(at, c);
        at.headroom[c] == 0
            && (shared == 0 || shared + self.spec.resume_offset.0 <= self.threshold(at))
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
            thresholds: PfcThresholds::Static(StaticPfc {
                xoff: Bytes(3000),
                xon: Bytes(1500),
                headroom: Bytes(3000),
            }),
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

    /// The HPCC simulator's `SwitchMmu` worked by hand: two 10 Gb/s ports with 1 us links
    /// (BDP 1,250 B, headroom 3,750 B each), reserve 4,096 B, buffer 100,000 B: 15,692 B
    /// kept out of the pool, threshold (84,308 - shared) >> 3.
    #[test]
    fn dynamic_thresholds_follow_the_simulators_mmu() {
        let dynamic = DynamicPfc {
            buffer: Bytes(100_000),
            reserve: DynamicPfc::DEFAULT_RESERVE,
            resume_offset: DynamicPfc::DEFAULT_RESUME_OFFSET,
            headroom_bdps: 3,
            shift: 3,
            host_rate: 10_000_000_000,
        };
        let ports = dynamic.ports(&[(10_000_000_000, 1_000_000); 2]);
        assert_eq!(ports.headroom, vec![3750, 3750]);
        assert_eq!(ports.fixed, 15_692);
        let fast = dynamic.ports(&[(40_000_000_000, 1_000_000), (10_000_000_000, 1_000_000)]);
        assert_eq!(
            fast.shift,
            vec![1, 3],
            "one less per doubling over the host rate"
        );
        let spec = PfcSpec {
            lossless: 1 << 3,
            thresholds: PfcThresholds::Dynamic(dynamic),
        };
        let mut ing = PfcIngress::dynamic(ports);
        // 13 packets: 4,096 B private, then shared up to 8,904 B < threshold 9,425 B.
        for _ in 0..13 {
            assert_eq!(ing.arrived(&spec, 1, 3, 1000), None);
        }
        assert_eq!(ing.shared_used, 8904);
        // The 14th would take the shared bytes to 9,904 > 9,425: it goes to the headroom,
        // which pauses.
        assert_eq!(ing.arrived(&spec, 1, 3, 1000), Some(FrameRequest::Pause));
        assert_eq!((ing.ports[1].headroom[3], ing.shared_used), (1000, 8904));
        // Headroom 3,750 B: the 17th arrival finds it full (and the threshold passed).
        for n in 15..=17 {
            assert_eq!(ing.arrived(&spec, 1, 3, 1000), None);
            assert_eq!(ing.headroom_exceeded, (n == 17) as u64, "arrival {n}");
        }
        for _ in 0..4 {
            assert_eq!(ing.left(&spec, 1, 3, 1000), None, "headroom drains first");
        }
        // Shared 8,904 -> 7,904 -> 6,904 -> 5,904: RESUME once shared + 3,072 <= threshold
        // ((84,308 - 5,904) >> 3 = 9,800).
        assert_eq!(ing.left(&spec, 1, 3, 1000), None);
        assert_eq!(ing.left(&spec, 1, 3, 1000), None);
        assert_eq!(ing.left(&spec, 1, 3, 1000), Some(FrameRequest::Resume));
        assert_eq!(ing.shared_used, 5904);
        // Down to nothing: the pool is whole again.
        for _ in 0..10 {
            ing.left(&spec, 1, 3, 1000);
        }
        assert_eq!((ing.shared_used, ing.ports[1].bytes[3]), (0, 0));
    }

    #[test]
    fn cycles_are_found_chains_are_not() {
        assert_eq!(find_deadlock(&[(1, 2), (2, 3)]), None);
        let cycle = find_deadlock(&[(5, 1), (1, 2), (2, 3), (3, 1)]).unwrap();
        assert_eq!(cycle, [1, 2, 3]);
    }
}

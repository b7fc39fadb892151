//! The switches: the buffer and the MMU (`BUFFER_SIZE`, `ENABLE_PFC`) as `[switch]` settings,
//! and ECN marking (`ENABLE_QCN`, `KMIN_MAP`, `KMAX_MAP`, `PMAX_MAP`) as each switch egress
//! port's AQM.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use netstep_core::pfc::DynamicPfc;
use netstep_core::units::{BitsPerSec, Bytes};

use super::{Log, Variant};
use crate::hpcc::files::{Config, Topology};

/// `BUFFER_SIZE` in bytes, in the variant's unit (12 MB when absent).
fn buffer_bytes(config: &Config, variant: Variant) -> anyhow::Result<u64> {
    Ok(match config.unsigned("BUFFER_SIZE")? {
        None => 12 * 1024 * 1024,
        Some(v) => {
            let unit = match variant {
                Variant::Upstream | Variant::Parsimon => 1024 * 1024,
                Variant::M3Fork | Variant::Fork => 1024,
            };
            v.checked_mul(unit).ok_or_else(|| {
                let e = config.get("BUFFER_SIZE").expect("present");
                config.error(e, "too large")
            })?
        }
    })
}

/// Per switch, in id order: whether the simulator's PFC threshold wraps (its ports' headroom
/// and reserve exceed the buffer), and whether a pool is left (they are less than it).
fn wraps_and_pools(topology: &Topology, mmu: &DynamicPfc, buffer: u64) -> (Vec<bool>, Vec<bool>) {
    let (mut wraps, mut pools) = (Vec::new(), Vec::new());
    for s in 0..topology.nodes {
        if !topology.is_switch[s as usize] {
            continue;
        }
        let links: Vec<(u64, u64)> = topology
            .links
            .iter()
            .filter(|l| l.a == s || l.b == s)
            .map(|l| (l.rate.0, l.delay.0))
            .collect();
        let reserved = mmu.ports(&links).fixed;
        wraps.push(reserved > buffer);
        // Equal: the threshold is 0 without wrapping (every arrival pauses), which netstep
        // refuses; such a switch leaves no pool.
        pools.push(reserved < buffer);
    }
    (wraps, pools)
}

/// The switch buffer and the MMU: the `[switch]` lines (`pfc` or `shared_buffer`), or none
/// where the simulator's threshold wraps at every switch (it never pauses or drops).
pub(super) fn buffer_and_mmu(
    variant: Variant,
    topology: &Topology,
    lossless: &BTreeSet<u8>,
    log: &mut Log,
) -> anyhow::Result<String> {
    let config = log.config;
    let buffer_bytes = buffer_bytes(config, variant)?;
    // third.cc: headroom = rate x delay / 8 x 3 / bfsz_factor per port and a reserve of
    // 4,096 / bfsz_factor B per port. The fork at commit 5d3beeb, the one m3's fig 8 ran, has
    // bfsz_factor 1 (three link BDPs, 4,096 B) and thresholds free / 4 at the host rate
    // (shift 2); the upstream simulator and the earlier forks free / 8 (shift 3). Per switch
    // the sum of its ports' headroom and reserve is kept out of the pool, as netstep's dynamic
    // PFC does; the simulator's uint32 threshold `buffer - headroom - reserve - used` wraps
    // when they exceed the buffer.
    let shift = match variant {
        Variant::M3Fork => 2,
        _ => DynamicPfc::DEFAULT_SHIFT,
    };
    let mmu = DynamicPfc {
        buffer: Bytes(buffer_bytes),
        reserve: Bytes(4096),
        headroom_bdps: 3,
        shift,
        ..DynamicPfc::default()
    };
    let reserve = mmu.reserve.0;
    let (wraps, pools) = wraps_and_pools(topology, &mmu, buffer_bytes);
    let all_wrap = !wraps.is_empty() && wraps.iter().all(|&w| w);
    let any_wrap = wraps.iter().any(|&w| w);
    let mut switch_section = String::new();
    let enable_pfc = config.flag("ENABLE_PFC")?.unwrap_or(true);
    if all_wrap {
        log.mapped(format!(
            "BUFFER_SIZE {} -> switch ports' buffer 1000MB: the simulator's headroom and reserve ({}) exceed the buffer at every switch, so its uint32 PFC threshold wraps and it never pauses or drops; 1000 MB is its egress queues' own limit",
            config.get("BUFFER_SIZE").map(|e| e.values.join(" ")).unwrap_or_default(),
            "three link BDPs and 4,096 B per port",
        ));
        if config.has("ENABLE_PFC") {
            log.mapped("ENABLE_PFC -> no [switch] pfc: no PAUSE can happen (see BUFFER_SIZE)");
        }
    } else if pools.iter().all(|&p| p) && !lossless.is_empty() && enable_pfc {
        // The MMU: dynamic PFC thresholds over the buffer, for the classes the flows use
        // (queue 0 bypasses the MMU). Its egress admission always passes: no egress limit.
        let classes: Vec<String> = lossless.iter().map(|c| c.to_string()).collect();
        writeln!(
            switch_section,
            "pfc = {{ classes = [{}], threshold = \"dynamic\", buffer = \"{buffer_bytes}B\", reserve = \"{reserve}B\", headroom_bdps = {}, shift = {} }}",
            classes.join(", "),
            mmu.headroom_bdps,
            mmu.shift
        )?;
        log.mapped(format!(
            "BUFFER_SIZE, ENABLE_PFC, USE_DYNAMIC_PFC_THRESHOLD -> [switch] pfc threshold = \"dynamic\": the MMU's {buffer_bytes} B buffer, {reserve} B reserve and {} link BDP(s) of headroom per port, thresholds free / {} at the host rate; switch ports' buffer 1000MB (its egress admission always passes)",
            mmu.headroom_bdps,
            1u32 << mmu.shift,
        ));
    } else {
        writeln!(switch_section, "shared_buffer = \"{buffer_bytes}B\"")?;
        log.note(
            "BUFFER_SIZE",
            &format!(
                "the switch MMU's ingress admission (drops once a port's headroom is full past its threshold) is not modeled{}; netstep shares {buffer_bytes} B among each switch's egress queues with dynamic thresholds (alpha 1)",
                if any_wrap {
                    " (its threshold wraps at some switches and not at others, which one run of netstep cannot mix)"
                } else if pools.iter().any(|&p| !p) {
                    " (headroom and reserve take the whole buffer at some switch: a threshold of 0)"
                } else {
                    " (without PFC, or only pg 0, which bypasses it)"
                }
            ),
        );
        if enable_pfc {
            log.note(
                "ENABLE_PFC",
                "the simulator's MMU cannot be expressed here (see BUFFER_SIZE); no [switch] pfc is set",
            );
        }
    }
    Ok(switch_section)
}

/// The simulator's per-rate ECN thresholds (`KMIN_MAP` etc.: `N rate value ...`).
fn rate_map(config: &Config, key: &str) -> anyhow::Result<BTreeMap<u64, f64>> {
    let Some(e) = config.get(key) else {
        return Ok(BTreeMap::new());
    };
    let bad = |m: &str| config.error(e, m);
    let n: usize = e
        .values
        .first()
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| bad("expected the entry count first"))?;
    if Some(e.values.len()) != n.checked_mul(2).and_then(|m| m.checked_add(1)) {
        return Err(bad(&format!(
            "expected {n} pairs `rate value` after the count, got {} values",
            e.values.len() - 1
        )));
    }
    let mut map = BTreeMap::new();
    for pair in e.values[1..].chunks(2) {
        let rate: u64 = pair[0]
            .parse()
            .map_err(|_| bad(&format!("expected a rate in bit/s, got {:?}", pair[0])))?;
        let value: f64 = pair[1]
            .parse()
            .map_err(|_| bad(&format!("expected a number, got {:?}", pair[1])))?;
        map.insert(rate, value);
    }
    Ok(map)
}

/// ECN marking at switch egress ports, by the port's rate.
pub(super) struct Ecn {
    /// Whether switches mark at all.
    pub(super) on: bool,
    variant: Variant,
    kmin: BTreeMap<u64, f64>,
    kmax: BTreeMap<u64, f64>,
    pmax: BTreeMap<u64, f64>,
}

impl Ecn {
    /// Reads whether switches mark and the per-rate thresholds.
    pub(super) fn read(variant: Variant, log: &mut Log) -> anyhow::Result<Ecn> {
        let config = log.config;
        let on = match variant {
            Variant::M3Fork => true,
            Variant::Parsimon => config.flag("ENABLE_QCN")?.unwrap_or(true),
            _ => config.flag("ENABLE_QCN")?.unwrap_or(true),
        };
        let (kmin, kmax, pmax) = (
            rate_map(config, "KMIN_MAP")?,
            rate_map(config, "KMAX_MAP")?,
            rate_map(config, "PMAX_MAP")?,
        );
        if on {
            log.mapped("KMIN_MAP, KMAX_MAP, PMAX_MAP -> aqm on each switch egress port by its link rate, marking at dequeue on the bytes left behind (RED on the instantaneous queue, weight 1, each packet with p independently; step marking where kmin = kmax)");
        }
        Ok(Ecn {
            on,
            variant,
            kmin,
            kmax,
            pmax,
        })
    }

    /// The AQM of a switch egress port at rate `r`, as a scenario inline table.
    pub(super) fn aqm(&self, r: BitsPerSec) -> String {
        // A rate missing from a map reads 0 in the simulator (std::map operator[]); the
        // Parsimon-era fork fixes kmin = kmax = rate x 3 / 10^9 KB in its code.
        let (kmin_b, kmax_b) = match self.variant {
            Variant::Parsimon => {
                let k = (r.0 as u128 * 3 / 1_000_000_000 * 1000).min(u64::MAX as u128) as u64;
                (k, k)
            }
            _ => (
                (self.kmin.get(&r.0).copied().unwrap_or(0.0).max(0.0) * 1000.0) as u64,
                (self.kmax.get(&r.0).copied().unwrap_or(0.0).max(0.0) * 1000.0) as u64,
            ),
        };
        let p = self.pmax.get(&r.0).copied().unwrap_or(0.0).min(1.0);
        if kmax_b <= kmin_b || p <= 0.0 {
            // Marked above kmax, never below (or with probability 0 between): step marking
            // at kmax (more than k bytes waiting; every packet is at least 1 B, so k = 0 is
            // the same test as k = 1 B).
            format!(
                "{{ kind = \"step\", k = \"{}B\", mark_at = \"dequeue\" }}",
                kmax_b.max(1)
            )
        } else {
            format!(
                "{{ kind = \"red\", min = \"{kmin_b}B\", max = \"{kmax_b}B\", max_p = {p}, weight = 1, ecn = true, spread = false, mark_at = \"dequeue\" }}"
            )
        }
    }
}

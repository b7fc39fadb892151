//! From the simulator's config to a netstep scenario: every key netstep models becomes a
//! scenario field, every key it does not is listed with the reason (in the scenario's header
//! comment and on stderr).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::bail;
use netstep_core::units::{BitsPerSec, SimTime};

use super::files::{
    Config, Flow, FlowFormat, SourcePorts, Topology, read_flows, read_trace, seconds_to_ns,
};

/// Which reading of the config: the versions differ in units and in the switch MMU.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// The m3-era fork (kwzhao/High-Precision-Congestion-Control, `third.cc` that reads
    /// `ENABLE_PFC` and `TIMELY_*`): `BUFFER_SIZE` in KB, headroom one link BDP, reserve
    /// 1,365 B, switch ECN always on.
    M3Fork,
    /// An earlier fork version with `MAX_RATE`: `BUFFER_SIZE` in KB, headroom three link
    /// BDPs, reserve 4,096 B, ECN on with `ENABLE_QCN`.
    Fork,
    /// The Parsimon-era fork (`FIXED_WIN` / `BASE_RTT`, no `MAX_RATE`): `BUFFER_SIZE` in MB,
    /// headroom three link BDPs, reserve 4,096 B, ECN on with `ENABLE_QCN` at a threshold
    /// fixed in its code: `kmin = kmax = rate x 3 / 10^9` KB (30 KB at 10 Gb/s).
    Parsimon,
    /// The upstream simulator (alibaba-edu): `BUFFER_SIZE` in MB, headroom three link BDPs,
    /// reserve 4,096 B, ECN on with `ENABLE_QCN`.
    Upstream,
}

impl Variant {
    /// Tells the version by the keys the config has.
    pub fn detect(config: &Config) -> Variant {
        if ["ENABLE_PFC", "TIMELY_T_HIGH", "TIMELY_T_LOW", "TIMELY_BETA"]
            .iter()
            .any(|k| config.has(k))
        {
            Variant::M3Fork
        } else if config.has("MAX_RATE") {
            Variant::Fork
        } else if config.has("FIXED_WIN") || config.has("BASE_RTT") {
            Variant::Parsimon
        } else {
            Variant::Upstream
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Variant::M3Fork => "the m3/Parsimon fork (m3-era third.cc: BUFFER_SIZE in KB)",
            Variant::Fork => "the m3/Parsimon fork (earlier third.cc: BUFFER_SIZE in KB)",
            Variant::Parsimon => {
                "the Parsimon-era fork (BUFFER_SIZE in MB, ECN threshold rate x 3 / 10^9 KB)"
            }
            Variant::Upstream => "the upstream HPCC simulator (BUFFER_SIZE in MB)",
        }
    }
}

/// An imported run: the scenario text, its flow rows, and what was not modeled.
pub struct Imported {
    /// The scenario (TOML), naming `flows.parquet` beside it.
    pub toml: String,
    /// The flows, in file order.
    pub flows: Vec<Flow>,
    /// Source ports the simulator assigns (per flow).
    pub sports: Vec<u16>,
    /// `KEY value: reason` for each key netstep does not model.
    pub not_modeled: Vec<String>,
    /// The config's reading.
    pub variant: Variant,
    /// The flow file's form.
    pub format: FlowFormat,
}

/// The keys the simulator reads that only name its own outputs or have no effect, with what
/// netstep does instead.
const NO_EFFECT: &[(&str, &str)] = &[
    (
        "FCT_OUTPUT_FILE",
        "netstep run --format hpcc writes fct.txt in the run folder",
    ),
    (
        "PFC_OUTPUT_FILE",
        "netstep run --format hpcc writes pfc.txt in the run folder",
    ),
    ("TRACE_OUTPUT_FILE", "traced hops go to packet_hops.parquet"),
    ("FLOW_ON_PATH_FILE", "not used by the simulator"),
    (
        "FLOW_PATH_MAP_FILE",
        "an output of the fork (flows per link direction), not written",
    ),
    (
        "QLEN_MON_FILE",
        "queue-length histograms are not written; queue_samples.parquet has the queues",
    ),
    ("QLEN_MON_START", "see QLEN_MON_FILE"),
    ("QLEN_MON_END", "see QLEN_MON_FILE"),
    (
        "DATA_RATE",
        "not used by the simulator (rates come from the topology)",
    ),
    ("LINK_DELAY", "not used by the simulator"),
    (
        "PAUSE_TIME",
        "fills the PAUSE frame's field only; pauses last until resumed",
    ),
    (
        "USE_DYNAMIC_PFC_THRESHOLD",
        "not used by the simulator (its MMU is always dynamic)",
    ),
];

/// Keys read into the mapping below (anything else the config has is listed as unknown).
const MAPPED: &[&str] = &[
    "TOPOLOGY_FILE",
    "FLOW_FILE",
    "TRACE_FILE",
    "ENABLE_TRACE",
    "SIMULATOR_STOP_TIME",
    "CC_MODE",
    "PACKET_PAYLOAD_SIZE",
    "ALPHA_RESUME_INTERVAL",
    "RATE_DECREASE_INTERVAL",
    "RP_TIMER",
    "EWMA_GAIN",
    "FAST_RECOVERY_TIMES",
    "CLAMP_TARGET_RATE",
    "RATE_AI",
    "RATE_HAI",
    "MIN_RATE",
    "MAX_RATE",
    "DCTCP_RATE_AI",
    "TIMELY_T_HIGH",
    "TIMELY_T_LOW",
    "TIMELY_BETA",
    "U_TARGET",
    "MI_THRESH",
    "FAST_REACT",
    "BASE_RTT",
    "FIXED_WIN",
    "HAS_WIN",
    "VAR_WIN",
    "GLOBAL_T",
    "INT_MULTI",
    "MULTI_RATE",
    "SAMPLE_FEEDBACK",
    "PINT_LOG_BASE",
    "PINT_PROB",
    "RATE_BOUND",
    "ACK_HIGH_PRIO",
    "L2_ACK_INTERVAL",
    "L2_CHUNK_SIZE",
    "L2_BACK_TO_ZERO",
    "ERROR_RATE_PER_LINK",
    "ENABLE_QCN",
    "ENABLE_PFC",
    "BUFFER_SIZE",
    "KMAX_MAP",
    "KMIN_MAP",
    "PMAX_MAP",
    "LINK_DOWN",
];

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

/// Durations in the config are clamped here (10^12 us, 11.6 days) before they become
/// picoseconds, so no absurd value overflows netstep's clock; the scenario then states them.
const MAX_CONFIG_US: u64 = 1_000_000_000_000;

/// A scenario duration, exactly.
fn duration(t: SimTime) -> String {
    format!("\"{t}\"")
}

/// A scenario rate, exactly.
fn rate(r: BitsPerSec) -> String {
    format!("\"{r}\"")
}

/// Reads `config_path` and the files it names; returns the scenario and its flows.
pub fn import(config_path: &Path) -> anyhow::Result<Imported> {
    let config = Config::read(config_path)?;
    let variant = Variant::detect(&config);
    let mut not_modeled: Vec<String> = Vec::new();
    let mut note = |key: &str, reason: &str| {
        let value = config
            .get(key)
            .map(|e| e.values.join(" "))
            .unwrap_or_default();
        not_modeled.push(format!("{key} {value}: {reason}"));
    };
    let mut mapped: Vec<String> = Vec::new();

    // Inputs.
    let required = |key: &str| -> anyhow::Result<std::path::PathBuf> {
        config.path(key)?.ok_or_else(|| {
            anyhow::anyhow!(
                "{}: {key} is missing (the simulator needs it)",
                config_path.display()
            )
        })
    };
    let topology_path = required("TOPOLOGY_FILE")?;
    let flow_path = required("FLOW_FILE")?;
    let topology = Topology::read(&topology_path)?;
    let (format, flows) = read_flows(&flow_path)?;
    for (i, f) in flows.iter().enumerate() {
        for (what, id) in [("src", f.src), ("dst", f.dst)] {
            if id >= topology.nodes || topology.is_switch[id as usize] {
                bail!(
                    "{}:{}: flow {i}: {what} {id} is not a host of {}",
                    flow_path.display(),
                    f.line,
                    topology_path.display()
                );
            }
        }
        if f.src == f.dst {
            bail!(
                "{}:{}: flow {i}: src and dst are both {}",
                flow_path.display(),
                f.line,
                f.src
            );
        }
    }
    let pg_zero = flows.iter().any(|f| f.pg == 0).then(|| {
        format!(
            "pg 0 in {}: the simulator's queue 0 is strict priority without buffer accounting or ECN marking; netstep's class 0 is an ordinary class",
            flow_path.display()
        )
    });
    // Source ports: the fork counts per (src, dst) pair from 10000, upstream per source.
    let mut ports = SourcePorts::new(variant != Variant::Upstream);
    let sports = flows.iter().map(|f| ports.next(f.src, f.dst)).collect();

    let name = config_path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "hpcc".to_string());

    // [simulation]
    let mut sim = String::new();
    if let Some((e, stop)) = config.one("SIMULATOR_STOP_TIME")? {
        // Seconds(double), as the simulator reads it.
        let ns = seconds_to_ns(stop).ok_or_else(|| config.error(e, "expected seconds >= 0"))?;
        let ps = ns.checked_mul(1000).ok_or_else(|| {
            config.error(
                e,
                "too long for netstep's picosecond clock (at most about 213 days)",
            )
        })?;
        writeln!(sim, "duration = {}", duration(SimTime(ps)))?;
        mapped.push(format!("SIMULATOR_STOP_TIME {stop} -> simulation.duration"));
    }

    // Switch buffer and the MMU.
    let buffer_bytes = match config.unsigned("BUFFER_SIZE")? {
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
    };
    // third.cc: headroom = rate x delay / 8 x 3 / bfsz_factor per port (bfsz_factor 3 in the
    // m3-era fork, so one link BDP), a reserve per port. Per switch the sum of its ports'
    // headroom and reserve is kept out of the pool, as netstep's dynamic PFC does; the
    // simulator's uint32 threshold `buffer - headroom - reserve - used` wraps when they exceed
    // the buffer.
    let (headroom_bdps, reserve) = match variant {
        Variant::M3Fork => (1, 4 * 1024 / 3),
        _ => (3, 4096),
    };
    let mmu = netstep_core::pfc::DynamicPfc {
        buffer: netstep_core::units::Bytes(buffer_bytes),
        reserve: netstep_core::units::Bytes(reserve),
        headroom_bdps,
        ..netstep_core::pfc::DynamicPfc::default()
    };
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
        wraps.push(reserved > buffer_bytes);
        // Equal: the threshold is 0 without wrapping (every arrival pauses), which netstep
        // refuses; such a switch leaves no pool.
        pools.push(reserved < buffer_bytes);
    }
    let all_wrap = !wraps.is_empty() && wraps.iter().all(|&w| w);
    let any_wrap = wraps.iter().any(|&w| w);
    let switch_buffer = "\"1000MB\"";
    let mut switch_section = String::new();
    // The classes the MMU accounts: the flows' priority groups but 0 (the simulator's queue
    // 0 bypasses it).
    let lossless: std::collections::BTreeSet<u8> =
        flows.iter().map(|f| f.pg).filter(|&c| c != 0).collect();
    let enable_pfc = config.flag("ENABLE_PFC")?.unwrap_or(true);
    if all_wrap {
        mapped.push(format!(
            "BUFFER_SIZE {} -> switch ports' buffer 1000MB: the simulator's headroom and reserve ({}) exceed the buffer at every switch, so its uint32 PFC threshold wraps and it never pauses or drops; 1000 MB is its egress queues' own limit",
            config.get("BUFFER_SIZE").map(|e| e.values.join(" ")).unwrap_or_default(),
            if headroom_bdps == 1 { "one link BDP per port" } else { "three link BDPs per port" },
        ));
        if config.has("ENABLE_PFC") {
            mapped.push(
                "ENABLE_PFC -> no [switch] pfc: no PAUSE can happen (see BUFFER_SIZE)".to_string(),
            );
        }
    } else if pools.iter().all(|&p| p) && !lossless.is_empty() && enable_pfc {
        // The MMU: dynamic PFC thresholds over the buffer, for the classes the flows use
        // (queue 0 bypasses the MMU). Its egress admission always passes: no egress limit.
        let classes: Vec<String> = lossless.iter().map(|c| c.to_string()).collect();
        writeln!(
            switch_section,
            "pfc = {{ classes = [{}], threshold = \"dynamic\", buffer = \"{buffer_bytes}B\", reserve = \"{reserve}B\", headroom_bdps = {} }}",
            classes.join(", "),
            mmu.headroom_bdps
        )?;
        mapped.push(format!(
            "BUFFER_SIZE, ENABLE_PFC, USE_DYNAMIC_PFC_THRESHOLD -> [switch] pfc threshold = \"dynamic\": the MMU's {buffer_bytes} B buffer, {reserve} B reserve and {} link BDP(s) of headroom per port, thresholds free / {} at the host rate; switch ports' buffer 1000MB (its egress admission always passes)",
            mmu.headroom_bdps,
            1u32 << netstep_core::pfc::DynamicPfc::DEFAULT_SHIFT,
        ));
    } else {
        writeln!(switch_section, "shared_buffer = \"{buffer_bytes}B\"")?;
        note(
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
            note(
                "ENABLE_PFC",
                "the simulator's MMU cannot be expressed here (see BUFFER_SIZE); no [switch] pfc is set",
            );
        }
    }

    // ECN marking at switch egress ports, by the port's rate.
    let ecn_on = match variant {
        Variant::M3Fork => true,
        Variant::Parsimon => config.flag("ENABLE_QCN")?.unwrap_or(true),
        _ => config.flag("ENABLE_QCN")?.unwrap_or(true),
    };
    let (kmin, kmax, pmax) = (
        rate_map(&config, "KMIN_MAP")?,
        rate_map(&config, "KMAX_MAP")?,
        rate_map(&config, "PMAX_MAP")?,
    );
    let aqm_for = |r: BitsPerSec| -> String {
        // A rate missing from a map reads 0 in the simulator (std::map operator[]); the
        // Parsimon-era fork fixes kmin = kmax = rate x 3 / 10^9 KB in its code.
        let (kmin_b, kmax_b) = match variant {
            Variant::Parsimon => {
                let k = (r.0 as u128 * 3 / 1_000_000_000 * 1000).min(u64::MAX as u128) as u64;
                (k, k)
            }
            _ => (
                (kmin.get(&r.0).copied().unwrap_or(0.0).max(0.0) * 1000.0) as u64,
                (kmax.get(&r.0).copied().unwrap_or(0.0).max(0.0) * 1000.0) as u64,
            ),
        };
        let p = pmax.get(&r.0).copied().unwrap_or(0.0).min(1.0);
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
    };
    if ecn_on {
        mapped.push("KMIN_MAP, KMAX_MAP, PMAX_MAP -> aqm on each switch egress port by its link rate, marking at dequeue on the bytes left behind (RED on the instantaneous queue, weight 1, each packet with p independently; step marking where kmin = kmax)".to_string());
    }

    // Links.
    let error_default = config.number("ERROR_RATE_PER_LINK")?.unwrap_or(0.0);
    let mut hosts = Vec::new();
    let mut switches = Vec::new();
    for id in 0..topology.nodes {
        if topology.is_switch[id as usize] {
            switches.push(format!("\"{id}\""));
        } else {
            hosts.push(format!("\"{id}\""));
        }
    }
    let mut links = String::new();
    for l in &topology.links {
        let loss = if l.error_rate > 0.0 {
            l.error_rate
        } else {
            error_default
        };
        let mut fields = format!(
            "a = \"{}\", b = \"{}\", rate = {}, delay = {}, buffer = {switch_buffer}",
            l.a,
            l.b,
            rate(l.rate),
            duration(l.delay)
        );
        if loss > 0.0 {
            write!(fields, ", loss = {loss}")?;
        }
        if ecn_on {
            // The egress port at a switch end marks: a_to_b leaves a, b_to_a leaves b.
            if topology.is_switch[l.a as usize] {
                write!(fields, ", a_to_b = {{ aqm = {} }}", aqm_for(l.rate))?;
            }
            if topology.is_switch[l.b as usize] {
                write!(fields, ", b_to_a = {{ aqm = {} }}", aqm_for(l.rate))?;
            }
        }
        writeln!(links, "  {{ {fields} }},")?;
    }
    mapped.push(format!(
        "TOPOLOGY_FILE -> topology (custom; node names are the simulator's ids), ERROR_RATE_PER_LINK {error_default} -> loss of links without their own"
    ));

    // Transport.
    let cc_mode = config.unsigned("CC_MODE")?.unwrap_or(1);
    let mut transport = String::from("kind = \"rdma\"\n");
    let cc = match cc_mode {
        1 => "dcqcn",
        3 => "hpcc",
        7 => "timely",
        8 => "dctcp",
        10 => bail!(
            "{}: CC_MODE 10 (HPCC-PINT) is not modeled by netstep",
            config_path.display()
        ),
        other => bail!(
            "{}: CC_MODE {other}: expected 1 (DCQCN), 3 (HPCC), 7 (TIMELY), 8 (DCTCP) or 10 (HPCC-PINT)",
            config_path.display()
        ),
    };
    writeln!(transport, "cc = \"{cc}\"")?;
    mapped.push(format!("CC_MODE {cc_mode} -> transport.cc = \"{cc}\""));
    let mtu = config.unsigned("PACKET_PAYLOAD_SIZE")?.unwrap_or(1000);
    if mtu == 0 || mtu > 65_535 {
        let e = config
            .get("PACKET_PAYLOAD_SIZE")
            .expect("present when not 1000");
        return Err(config.error(e, "expected a payload of 1 to 65535 bytes"));
    }
    writeln!(transport, "mtu = \"{mtu}B\"")?;
    // The simulator's headers: 48 B, plus HPCC's INT header (5 hops x 8 B + 2 B) or TIMELY's
    // 8 B timestamp; ACKs and NACKs padded to 60 B, HPCC's 88 B with the INT header.
    let (header, ack) = match cc {
        "hpcc" => (90, 88),
        "timely" => (56, 60),
        _ => (48, 60),
    };
    writeln!(transport, "header = \"{header}B\"\nack_size = \"{ack}B\"")?;
    mapped.push(format!(
        "PACKET_PAYLOAD_SIZE -> transport.mtu; the simulator's data header ({header} B) and ACK ({ack} B) -> transport.header, transport.ack_size"
    ));
    if matches!(cc, "dcqcn" | "dctcp") {
        // alpha's gain, DCQCN's and DCTCP's alike.
        match config.number("EWMA_GAIN")? {
            Some(g) => {
                writeln!(transport, "g = {g}")?;
                mapped.push("EWMA_GAIN -> transport.g".to_string());
            }
            None => bail!(
                "{}: EWMA_GAIN is missing: the simulator's default is 0 (alpha never moves), which netstep refuses; give it",
                config_path.display()
            ),
        }
    }
    let mut rate_field = |key: &str, field: &str, t: &mut String| -> anyhow::Result<()> {
        if let Some(r) = config.rate(key)? {
            writeln!(t, "{field} = {}", rate(r))?;
            mapped.push(format!("{key} -> transport.{field}"));
        }
        Ok(())
    };
    rate_field("MIN_RATE", "min_rate", &mut transport)?;
    if cc == "dctcp" {
        rate_field("DCTCP_RATE_AI", "rate_ai", &mut transport)?;
    } else {
        rate_field("RATE_AI", "rate_ai", &mut transport)?;
    }
    let micros = |key: &str| -> anyhow::Result<Option<SimTime>> {
        // MicroSeconds(uint64): whole microseconds.
        Ok(config
            .number(key)?
            .map(|v| SimTime::from_us((v.max(0.0).trunc() as u64).min(MAX_CONFIG_US))))
    };
    match cc {
        "dcqcn" => {
            rate_field("RATE_HAI", "rate_hai", &mut transport)?;
            for (key, field) in [
                ("ALPHA_RESUME_INTERVAL", "alpha_interval"),
                ("RATE_DECREASE_INTERVAL", "decrease_interval"),
                ("RP_TIMER", "increase_interval"),
            ] {
                if let Some(t) = micros(key)? {
                    writeln!(transport, "{field} = {}", duration(t))?;
                    mapped.push(format!("{key} -> transport.{field} (whole us)"));
                }
            }
            if let Some(n) = config.unsigned("FAST_RECOVERY_TIMES")? {
                writeln!(transport, "fast_recovery_stages = {n}")?;
                mapped.push("FAST_RECOVERY_TIMES -> transport.fast_recovery_stages".to_string());
            }
            if config.flag("CLAMP_TARGET_RATE")? == Some(true) {
                note(
                    "CLAMP_TARGET_RATE",
                    "netstep's DCQCN keeps the target unless the rate rose since the last cut (CLAMP_TARGET_RATE 0)",
                );
            }
        }
        "dctcp" => {}
        "timely" => {
            rate_field("RATE_HAI", "rate_hai", &mut transport)?;
            for (key, field, default) in [
                ("TIMELY_T_LOW", "t_low", 50_000),
                ("TIMELY_T_HIGH", "t_high", 500_000),
            ] {
                let ns = config.unsigned(key)?.unwrap_or(default);
                writeln!(
                    transport,
                    "{field} = {}",
                    duration(SimTime::from_ns(ns.min(MAX_CONFIG_US * 1000)))
                )?;
                mapped.push(format!("{key} -> transport.{field} (ns)"));
            }
            let beta = config.number("TIMELY_BETA")?.unwrap_or(0.8);
            writeln!(transport, "timely_beta = {beta}")?;
            mapped.push("TIMELY_BETA -> transport.timely_beta; the simulator's alpha 0.875 and min RTT 20 us are netstep's defaults".to_string());
        }
        _ => {
            if let Some(u) = config.number("U_TARGET")? {
                writeln!(transport, "eta = {u}")?;
                mapped.push("U_TARGET -> transport.eta".to_string());
            }
            if let Some(m) = config.unsigned("MI_THRESH")? {
                writeln!(transport, "max_stage = {m}")?;
                mapped.push("MI_THRESH -> transport.max_stage".to_string());
            }
            if let Some(f) = config.flag("FAST_REACT")? {
                writeln!(transport, "fast_react = {f}")?;
                mapped.push("FAST_REACT -> transport.fast_react".to_string());
            }
            if variant != Variant::Upstream {
                if let Some(t) = config.unsigned("BASE_RTT")? {
                    writeln!(
                        transport,
                        "base_rtt = {}",
                        duration(SimTime::from_ns(t.min(MAX_CONFIG_US * 1000)))
                    )?;
                    mapped.push("BASE_RTT -> transport.base_rtt (HPCC's T)".to_string());
                }
            } else {
                note(
                    "GLOBAL_T",
                    "upstream HPCC's T is the largest (or the pair's) base RTT; netstep uses each flow's own unloaded round trip",
                );
            }
            if config.unsigned("INT_MULTI")?.is_some() {
                note(
                    "INT_MULTI",
                    "netstep's telemetry is exact (the simulator counts bytes in units of 128 x INT_MULTI and queues in 80 x INT_MULTI)",
                );
            }
            if config.flag("MULTI_RATE")? == Some(true) {
                note("MULTI_RATE", "netstep's HPCC keeps one rate (MULTI_RATE 0)");
            }
            if config.flag("SAMPLE_FEEDBACK")? == Some(true) {
                note(
                    "SAMPLE_FEEDBACK",
                    "netstep's HPCC reads every hop (SAMPLE_FEEDBACK 0)",
                );
            }
        }
    }
    // Rate cap and window.
    match config.rate("MAX_RATE")? {
        Some(r) => {
            writeln!(transport, "max_rate = {}", rate(r))?;
            mapped.push("MAX_RATE -> transport.max_rate".to_string());
        }
        None if matches!(variant, Variant::M3Fork | Variant::Fork) => {
            // The fork's third.cc defaults MAX_RATE to 10000 Mb/s.
            writeln!(transport, "max_rate = \"10Gbps\"")?;
            mapped.push(
                "MAX_RATE absent -> transport.max_rate = 10 Gb/s (the fork's default)".to_string(),
            );
        }
        None => {}
    }
    if config.flag("HAS_WIN")? == Some(true) {
        let win = match config.unsigned("FIXED_WIN")? {
            Some(w) if variant != Variant::Upstream => w,
            _ => {
                note(
                    "HAS_WIN",
                    "upstream's window is the largest (or the pair's) BDP; give FIXED_WIN (the fork's) to import a window",
                );
                0
            }
        };
        if win > 0 {
            writeln!(transport, "window = \"{win}B\"")?;
            let var = config.flag("VAR_WIN")?.unwrap_or(false);
            writeln!(transport, "variable_window = {var}")?;
            mapped.push(
                "HAS_WIN, FIXED_WIN, VAR_WIN -> transport.window, transport.variable_window"
                    .to_string(),
            );
        }
    }
    if config.flag("RATE_BOUND")? == Some(false) {
        note(
            "RATE_BOUND",
            "netstep always paces at the current rate (RATE_BOUND 1)",
        );
    }
    mapped.push(
        "the NIC (no FIFO: ACKs first, then the queue pairs round robin, each packet built when pulled) -> [nic] scheduler = \"pull\"".to_string(),
    );
    if config.flag("ACK_HIGH_PRIO")? == Some(true) {
        if variant == Variant::Upstream {
            // Upstream sets only the NIC's ACK queue index; its switches keep ACKs in pg 3.
            mapped.push(
                "ACK_HIGH_PRIO 1 -> no switch priority (upstream's switches queue ACKs with the data)"
                    .to_string(),
            );
        } else {
            writeln!(switch_section, "ack_priority = true")?;
            mapped.push("ACK_HIGH_PRIO 1 -> [switch] ack_priority = true".to_string());
        }
    }
    match config.unsigned("L2_ACK_INTERVAL")? {
        Some(i) if i <= mtu => mapped.push("L2_ACK_INTERVAL -> an ACK per packet".to_string()),
        Some(i) if i % mtu == 0 => {
            writeln!(transport, "ack_every = {}", i / mtu)?;
            mapped.push("L2_ACK_INTERVAL -> transport.ack_every".to_string());
            note(
                "L2_CHUNK_SIZE",
                "the simulator also acknowledges at every chunk boundary; netstep every ack_every packets",
            );
        }
        Some(_) => note(
            "L2_ACK_INTERVAL",
            "not a multiple of the payload size: netstep acknowledges every packet",
        ),
        None => {}
    }
    if config.flag("L2_BACK_TO_ZERO")? == Some(true) {
        note(
            "L2_BACK_TO_ZERO",
            "netstep goes back to the first unacknowledged packet (L2_BACK_TO_ZERO 0)",
        );
    }

    // Failures.
    let mut failures = String::new();
    if let Some(e) = config.get("LINK_DOWN") {
        let v: Vec<u64> = e
            .values
            .iter()
            .map(|v| v.parse())
            .collect::<Result<_, _>>()
            .map_err(|_| config.error(e, "expected `time_us nodeA nodeB`"))?;
        if v.len() != 3 {
            return Err(config.error(e, "expected `time_us nodeA nodeB`"));
        }
        if v[0] > 0 {
            let at = SimTime::from_secs(2) + SimTime::from_us(v[0].min(MAX_CONFIG_US));
            writeln!(
                failures,
                "[[failures]]\nlink = [\"{}\", \"{}\"]\ndown = {}",
                v[1],
                v[2],
                duration(at)
            )?;
            mapped.push("LINK_DOWN -> [[failures]] at 2 s + time".to_string());
        }
    }

    // Tracing.
    let mut trace = String::new();
    if config.flag("ENABLE_TRACE")? == Some(true)
        && let Some(path) = config.path("TRACE_FILE")?
    {
        let nodes = read_trace(&path, topology.nodes)?;
        writeln!(
            trace,
            "[trace]\ntables = [\"packet_hops\"]\nnodes = [{}]",
            nodes
                .iter()
                .map(|n| format!("\"{n}\""))
                .collect::<Vec<_>>()
                .join(", ")
        )?;
        mapped.push(
            "ENABLE_TRACE, TRACE_FILE -> [trace] packet_hops at the traced nodes".to_string(),
        );
    }

    // Keys with no effect, and unknown ones.
    for (key, reason) in NO_EFFECT {
        if config.has(key) {
            note(key, reason);
        }
    }
    if variant == Variant::M3Fork && config.has("GLOBAL_T") {
        mapped.push(
            "GLOBAL_T: no effect in the fork (every flow has FIXED_WIN and BASE_RTT)".to_string(),
        );
    }
    for key in ["PINT_LOG_BASE", "PINT_PROB"] {
        if config.has(key) {
            mapped.push(format!("{key}: HPCC-PINT only (CC_MODE 10)"));
        }
    }
    if cc != "dcqcn" {
        for key in [
            "ALPHA_RESUME_INTERVAL",
            "RATE_DECREASE_INTERVAL",
            "RP_TIMER",
            "FAST_RECOVERY_TIMES",
            "CLAMP_TARGET_RATE",
        ] {
            if config.has(key) {
                mapped.push(format!("{key}: DCQCN only"));
            }
        }
    }
    if cc != "dcqcn" && cc != "dctcp" && config.has("EWMA_GAIN") {
        mapped.push("EWMA_GAIN: DCQCN and DCTCP only".to_string());
    }
    if cc != "dctcp" && config.has("DCTCP_RATE_AI") {
        mapped.push("DCTCP_RATE_AI: DCTCP only (CC_MODE 8)".to_string());
    }
    if cc == "dctcp" && config.has("RATE_AI") {
        mapped.push("RATE_AI: not used by DCTCP (DCTCP_RATE_AI is)".to_string());
    }
    if !matches!(cc, "dcqcn" | "timely") && config.has("RATE_HAI") {
        mapped.push("RATE_HAI: DCQCN and TIMELY only".to_string());
    }
    let known: std::collections::HashSet<&str> = MAPPED
        .iter()
        .copied()
        .chain(NO_EFFECT.iter().map(|(k, _)| *k))
        .collect();
    not_modeled.extend(pg_zero);
    let mut seen = std::collections::HashSet::new();
    for e in &config.entries {
        if !known.contains(e.key.as_str()) && seen.insert(e.key.clone()) {
            not_modeled.push(format!(
                "{} {}: not a key the simulator reads (ignored by it too)",
                e.key,
                e.values.join(" ")
            ));
        }
    }

    // The scenario text.
    let mut toml = String::new();
    writeln!(
        toml,
        "# Imported by `netstep import hpcc` from {} ({}).",
        config_path.display(),
        variant.describe()
    )?;
    writeln!(
        toml,
        "# Flows: {} ({} flows) -> flows.parquet.",
        flow_path.display(),
        flows.len()
    )?;
    writeln!(toml, "#\n# Mapped:")?;
    for m in &mapped {
        writeln!(toml, "#   {m}")?;
    }
    writeln!(toml, "#\n# Not modeled (netstep runs without them):")?;
    for m in &not_modeled {
        writeln!(toml, "#   {m}")?;
    }
    writeln!(toml, "\nname = \"{name}\"\n")?;
    if !sim.is_empty() {
        writeln!(toml, "[simulation]\n{sim}")?;
    }
    writeln!(toml, "[nic]\nscheduler = \"pull\"\n")?;
    if !switch_section.is_empty() {
        writeln!(toml, "[switch]\n{switch_section}")?;
    }
    writeln!(
        toml,
        "[topology]\nkind = \"custom\"\nhosts = [{}]\nswitches = [{}]\nlinks = [\n{links}]\n",
        hosts.join(", "),
        switches.join(", ")
    )?;
    writeln!(toml, "[transport]\n{transport}")?;
    writeln!(
        toml,
        "[[traffic]]\nkind = \"flow_file\"\npath = \"flows.parquet\"\n"
    )?;
    if !failures.is_empty() {
        writeln!(toml, "{failures}")?;
    }
    if !trace.is_empty() {
        writeln!(toml, "{trace}")?;
    }
    Ok(Imported {
        toml,
        flows,
        sports,
        not_modeled,
        variant,
        format,
    })
}

//! The transport: the congestion control (`CC_MODE`) and its keys, the packet sizes, the rate
//! cap and the window; then the NIC and the acknowledgements (`ACK_HIGH_PRIO`, `L2_*`).

use std::fmt::Write as _;
use std::path::Path;

use anyhow::bail;
use netstep_core::units::SimTime;

use super::{Log, MAX_CONFIG_US, Variant, duration, rate};
use crate::hpcc::files::Config;

/// `[transport]`: returns its lines, the congestion control's name and the payload size.
pub(super) fn transport(
    config_path: &Path,
    variant: Variant,
    log: &mut Log,
) -> anyhow::Result<(String, &'static str, u64)> {
    let mut transport = String::from("kind = \"rdma\"\n");
    let cc = congestion_control(config_path, &mut transport, log)?;
    let mtu = packets(cc, &mut transport, log)?;
    if matches!(cc, "dcqcn" | "dctcp") {
        // alpha's gain, DCQCN's and DCTCP's alike.
        match log.config.number("EWMA_GAIN")? {
            Some(g) => {
                writeln!(transport, "g = {g}")?;
                log.mapped("EWMA_GAIN -> transport.g");
            }
            None => bail!(
                "{}: EWMA_GAIN is missing: the simulator's default is 0 (alpha never moves), which netstep refuses; give it",
                config_path.display()
            ),
        }
    }
    rate_field("MIN_RATE", "min_rate", &mut transport, log)?;
    if cc == "dctcp" {
        rate_field("DCTCP_RATE_AI", "rate_ai", &mut transport, log)?;
    } else {
        rate_field("RATE_AI", "rate_ai", &mut transport, log)?;
    }
    match cc {
        "dcqcn" => dcqcn(&mut transport, log)?,
        "dctcp" => {}
        "timely" => timely(&mut transport, log)?,
        _ => hpcc(variant, &mut transport, log)?,
    }
    rate_cap_and_window(variant, &mut transport, log)?;
    Ok((transport, cc, mtu))
}

/// `CC_MODE` as `transport.cc`.
fn congestion_control(
    config_path: &Path,
    transport: &mut String,
    log: &mut Log,
) -> anyhow::Result<&'static str> {
    let cc_mode = log.config.unsigned("CC_MODE")?.unwrap_or(1);
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
    log.mapped(format!("CC_MODE {cc_mode} -> transport.cc = \"{cc}\""));
    Ok(cc)
}

/// `PACKET_PAYLOAD_SIZE` and the simulator's header and ACK sizes; returns the payload size.
fn packets(cc: &str, transport: &mut String, log: &mut Log) -> anyhow::Result<u64> {
    let config = log.config;
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
    log.mapped(format!(
        "PACKET_PAYLOAD_SIZE -> transport.mtu; the simulator's data header ({header} B) and ACK ({ack} B) -> transport.header, transport.ack_size"
    ));
    Ok(mtu)
}

/// A rate-valued key as a transport field, when given.
fn rate_field(key: &str, field: &str, t: &mut String, log: &mut Log) -> anyhow::Result<()> {
    if let Some(r) = log.config.rate(key)? {
        writeln!(t, "{field} = {}", rate(r))?;
        log.mapped(format!("{key} -> transport.{field}"));
    }
    Ok(())
}

/// A duration key in whole microseconds (`MicroSeconds(uint64)`), clamped.
fn micros(config: &Config, key: &str) -> anyhow::Result<Option<SimTime>> {
    Ok(config
        .number(key)?
        .map(|v| SimTime::from_us((v.max(0.0).trunc() as u64).min(MAX_CONFIG_US))))
}

/// DCQCN's keys (`CC_MODE 1`).
fn dcqcn(transport: &mut String, log: &mut Log) -> anyhow::Result<()> {
    let config = log.config;
    rate_field("RATE_HAI", "rate_hai", transport, log)?;
    for (key, field) in [
        ("ALPHA_RESUME_INTERVAL", "alpha_interval"),
        ("RATE_DECREASE_INTERVAL", "decrease_interval"),
        ("RP_TIMER", "increase_interval"),
    ] {
        if let Some(t) = micros(config, key)? {
            writeln!(transport, "{field} = {}", duration(t))?;
            log.mapped(format!("{key} -> transport.{field} (whole us)"));
        }
    }
    if let Some(n) = config.unsigned("FAST_RECOVERY_TIMES")? {
        writeln!(transport, "fast_recovery_stages = {n}")?;
        log.mapped("FAST_RECOVERY_TIMES -> transport.fast_recovery_stages");
    }
    if config.flag("CLAMP_TARGET_RATE")? == Some(true) {
        log.note(
            "CLAMP_TARGET_RATE",
            "netstep's DCQCN keeps the target unless the rate rose since the last cut (CLAMP_TARGET_RATE 0)",
        );
    }
    Ok(())
}

/// TIMELY's keys (`CC_MODE 7`).
fn timely(transport: &mut String, log: &mut Log) -> anyhow::Result<()> {
    let config = log.config;
    rate_field("RATE_HAI", "rate_hai", transport, log)?;
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
        log.mapped(format!("{key} -> transport.{field} (ns)"));
    }
    let beta = config.number("TIMELY_BETA")?.unwrap_or(0.8);
    writeln!(transport, "timely_beta = {beta}")?;
    log.mapped("TIMELY_BETA -> transport.timely_beta; the simulator's alpha 0.875 and min RTT 20 us are netstep's defaults");
    Ok(())
}

/// HPCC's keys (`CC_MODE 3`).
fn hpcc(variant: Variant, transport: &mut String, log: &mut Log) -> anyhow::Result<()> {
    let config = log.config;
    if let Some(u) = config.number("U_TARGET")? {
        writeln!(transport, "eta = {u}")?;
        log.mapped("U_TARGET -> transport.eta");
    }
    if let Some(m) = config.unsigned("MI_THRESH")? {
        writeln!(transport, "max_stage = {m}")?;
        log.mapped("MI_THRESH -> transport.max_stage");
    }
    if let Some(f) = config.flag("FAST_REACT")? {
        writeln!(transport, "fast_react = {f}")?;
        log.mapped("FAST_REACT -> transport.fast_react");
    }
    if variant != Variant::Upstream {
        if let Some(t) = config.unsigned("BASE_RTT")? {
            writeln!(
                transport,
                "base_rtt = {}",
                duration(SimTime::from_ns(t.min(MAX_CONFIG_US * 1000)))
            )?;
            log.mapped("BASE_RTT -> transport.base_rtt (HPCC's T)");
        }
    } else {
        log.note(
            "GLOBAL_T",
            "upstream HPCC's T is the largest (or the pair's) base RTT; netstep uses each flow's own unloaded round trip",
        );
    }
    if config.unsigned("INT_MULTI")?.is_some() {
        log.note(
            "INT_MULTI",
            "netstep's telemetry is exact (the simulator counts bytes in units of 128 x INT_MULTI and queues in 80 x INT_MULTI)",
        );
    }
    if config.flag("MULTI_RATE")? == Some(true) {
        log.note("MULTI_RATE", "netstep's HPCC keeps one rate (MULTI_RATE 0)");
    }
    if config.flag("SAMPLE_FEEDBACK")? == Some(true) {
        log.note(
            "SAMPLE_FEEDBACK",
            "netstep's HPCC reads every hop (SAMPLE_FEEDBACK 0)",
        );
    }
    Ok(())
}

/// The rate cap (`MAX_RATE`), the window (`HAS_WIN`, `FIXED_WIN`, `VAR_WIN`) and pacing
/// (`RATE_BOUND`).
fn rate_cap_and_window(
    variant: Variant,
    transport: &mut String,
    log: &mut Log,
) -> anyhow::Result<()> {
    let config = log.config;
    match config.rate("MAX_RATE")? {
        Some(r) => {
            writeln!(transport, "max_rate = {}", rate(r))?;
            log.mapped("MAX_RATE -> transport.max_rate");
        }
        None if matches!(variant, Variant::M3Fork | Variant::Fork) => {
            // The fork's third.cc defaults MAX_RATE to 10000 Mb/s.
            writeln!(transport, "max_rate = \"10Gbps\"")?;
            log.mapped("MAX_RATE absent -> transport.max_rate = 10 Gb/s (the fork's default)");
        }
        None => {}
    }
    if config.flag("HAS_WIN")? == Some(true) {
        let win = match config.unsigned("FIXED_WIN")? {
            Some(w) if variant != Variant::Upstream => w,
            _ => {
                log.note(
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
            log.mapped(
                "HAS_WIN, FIXED_WIN, VAR_WIN -> transport.window, transport.variable_window",
            );
        }
    }
    if config.flag("RATE_BOUND")? == Some(false) {
        log.note(
            "RATE_BOUND",
            "netstep always paces at the current rate (RATE_BOUND 1)",
        );
    }
    Ok(())
}

/// The NIC's scheduler, ACK priority at the switches (`ACK_HIGH_PRIO`, a `[switch]` line) and
/// how often the receiver acknowledges (`L2_ACK_INTERVAL`, `L2_BACK_TO_ZERO`).
pub(super) fn nic_and_acks(
    variant: Variant,
    mtu: u64,
    transport: &mut String,
    switch_section: &mut String,
    log: &mut Log,
) -> anyhow::Result<()> {
    let config = log.config;
    log.mapped(
        "the NIC (no FIFO: ACKs first, then the queue pairs round robin, each packet built when pulled) -> [nic] scheduler = \"pull\"",
    );
    if config.flag("ACK_HIGH_PRIO")? == Some(true) {
        if variant == Variant::Upstream {
            // Upstream sets only the NIC's ACK queue index; its switches keep ACKs in pg 3.
            log.mapped(
                "ACK_HIGH_PRIO 1 -> no switch priority (upstream's switches queue ACKs with the data)",
            );
        } else {
            writeln!(switch_section, "ack_priority = true")?;
            log.mapped("ACK_HIGH_PRIO 1 -> [switch] ack_priority = true");
        }
    }
    match config.unsigned("L2_ACK_INTERVAL")? {
        Some(i) if i <= mtu => log.mapped("L2_ACK_INTERVAL -> an ACK per packet"),
        Some(i) if i % mtu == 0 => {
            writeln!(transport, "ack_every = {}", i / mtu)?;
            log.mapped("L2_ACK_INTERVAL -> transport.ack_every");
            log.note(
                "L2_CHUNK_SIZE",
                "the simulator also acknowledges at every chunk boundary; netstep every ack_every packets",
            );
        }
        Some(_) => log.note(
            "L2_ACK_INTERVAL",
            "not a multiple of the payload size: netstep acknowledges every packet",
        ),
        None => {}
    }
    if config.flag("L2_BACK_TO_ZERO")? == Some(true) {
        log.note(
            "L2_BACK_TO_ZERO",
            "netstep goes back to the first unacknowledged packet (L2_BACK_TO_ZERO 0)",
        );
    }
    Ok(())
}

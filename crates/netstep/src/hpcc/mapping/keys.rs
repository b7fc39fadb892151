//! The keys no step maps: those with no effect, those of another congestion control, and
//! those the simulator does not read.

use std::collections::HashSet;

use super::{Log, Variant};

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

/// Keys read into the mapping (anything else the config has is listed as unknown).
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

/// Notes the keys with no effect, says which keys belong to another congestion control
/// (`cc`, the one imported), adds `pg_zero` (the flows' priority-group note) and lists the
/// keys the simulator does not read.
pub(super) fn other_keys(variant: Variant, cc: &str, pg_zero: Option<String>, log: &mut Log) {
    let config = log.config;
    for (key, reason) in NO_EFFECT {
        if config.has(key) {
            log.note(key, reason);
        }
    }
    if variant == Variant::M3Fork && config.has("GLOBAL_T") {
        log.mapped("GLOBAL_T: no effect in the fork (every flow has FIXED_WIN and BASE_RTT)");
    }
    for key in ["PINT_LOG_BASE", "PINT_PROB"] {
        if config.has(key) {
            log.mapped(format!("{key}: HPCC-PINT only (CC_MODE 10)"));
        }
    }
    other_congestion_controls(cc, log);
    let known: HashSet<&str> = MAPPED
        .iter()
        .copied()
        .chain(NO_EFFECT.iter().map(|(k, _)| *k))
        .collect();
    log.not_modeled.extend(pg_zero);
    let mut seen = HashSet::new();
    for e in &config.entries {
        if !known.contains(e.key.as_str()) && seen.insert(e.key.clone()) {
            log.not_modeled.push(format!(
                "{} {}: not a key the simulator reads (ignored by it too)",
                e.key,
                e.values.join(" ")
            ));
        }
    }
}

/// The keys of congestion controls other than `cc`, said to be theirs.
fn other_congestion_controls(cc: &str, log: &mut Log) {
    let config = log.config;
    if cc != "dcqcn" {
        for key in [
            "ALPHA_RESUME_INTERVAL",
            "RATE_DECREASE_INTERVAL",
            "RP_TIMER",
            "FAST_RECOVERY_TIMES",
            "CLAMP_TARGET_RATE",
        ] {
            if config.has(key) {
                log.mapped(format!("{key}: DCQCN only"));
            }
        }
    }
    if cc != "dcqcn" && cc != "dctcp" && config.has("EWMA_GAIN") {
        log.mapped("EWMA_GAIN: DCQCN and DCTCP only");
    }
    if cc != "dctcp" && config.has("DCTCP_RATE_AI") {
        log.mapped("DCTCP_RATE_AI: DCTCP only (CC_MODE 8)");
    }
    if cc == "dctcp" && config.has("RATE_AI") {
        log.mapped("RATE_AI: not used by DCTCP (DCTCP_RATE_AI is)");
    }
    if !matches!(cc, "dcqcn" | "timely") && config.has("RATE_HAI") {
        log.mapped("RATE_HAI: DCQCN and TIMELY only");
    }
}

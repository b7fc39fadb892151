//! `[trace]`: which optional tables a run writes and their filters, resolved against the
//! topology's node names and the flow count.

use std::collections::HashMap;

use netstep_core::units::{SimTime, parse_duration};

use crate::config;
use crate::error::{FieldPath, Invalid};

/// Tables `[trace] tables` may name.
pub const TRACE_TABLES: [&str; 4] = ["flows", "packet_hops", "queue_samples", "cc_samples"];

pub(crate) fn trace_tables(config: &config::TraceTablesConfig) -> Result<Vec<String>, Invalid> {
    let mut tables = Vec::new();
    for (i, table) in config.tables.iter().flatten().enumerate() {
        if !TRACE_TABLES.contains(&table.as_str()) {
            return Err(Invalid::new(
                FieldPath::of(&["trace", "tables"]).index(i),
                format!(
                    "unknown table {table:?}; expected one of {}",
                    TRACE_TABLES.join(", ")
                ),
            ));
        }
        if table != "flows" && !tables.contains(table) {
            tables.push(table.clone());
        }
    }
    tables.sort();
    Ok(tables)
}

pub(crate) fn trace_config(
    config: &config::TraceTablesConfig,
    tables: &[String],
    names: &HashMap<&str, u32>,
    n_nodes: usize,
    n_flows: usize,
) -> Result<netstep_core::engine::trace::TraceConfig, Invalid> {
    use netstep_core::engine::trace::{HopFilter, TraceConfig};
    let path = FieldPath::of(&["trace"]);
    let duration =
        |value: &Option<String>, field: &str, default: SimTime| -> Result<SimTime, Invalid> {
            value.as_ref().map_or(Ok(default), |v| {
                parse_duration(v).map_err(|e| Invalid::unit(path.key(field), e))
            })
        };
    // Every setting is checked whether or not its table is on, so a typo never waits for
    // the day the table is switched on.
    let mut trace = TraceConfig::default();
    let interval = duration(
        &config.sample_interval,
        "sample_interval",
        config::TraceTablesConfig::DEFAULT_SAMPLE_INTERVAL,
    )?;
    if interval == SimTime::ZERO {
        return Err(Invalid::new(
            path.key("sample_interval"),
            "must be positive",
        ));
    }
    if tables.iter().any(|t| t == "queue_samples") {
        trace.queue_samples = Some(interval);
    }
    if tables.iter().any(|t| t == "cc_samples") {
        trace.cc_samples = Some(interval);
    }
    let mut filter = HopFilter::all();
    if let Some(flows) = &config.flows {
        let mut keep = vec![false; n_flows];
        for (i, &flow) in flows.iter().enumerate() {
            *keep.get_mut(flow as usize).ok_or_else(|| {
                Invalid::new(path.key("flows").index(i), format!("flow {flow} does not exist; the scenario has {n_flows} flows (ids 0..{n_flows})"))
            })? = true;
        }
        if trace.cc_samples.is_some() {
            trace.cc_flows = Some(keep.clone());
        }
        filter.flows = Some(keep);
    }
    if let Some(nodes) = &config.nodes {
        let mut keep = vec![false; n_nodes];
        for (i, name) in nodes.iter().enumerate() {
            let node = names.get(name.as_str()).ok_or_else(|| {
                Invalid::new(path.key("nodes").index(i), format!("unknown node {name:?}"))
            })?;
            keep[*node as usize] = true;
        }
        filter.nodes = Some(keep);
    }
    filter.from = duration(&config.from, "from", SimTime::ZERO)?;
    filter.until = duration(&config.until, "until", SimTime::MAX)?;
    if filter.until <= filter.from {
        return Err(Invalid::new(
            path.key("until"),
            "must be later than trace.from",
        ));
    }
    filter.one_in = config
        .sample_one_in
        .unwrap_or(config::TraceTablesConfig::DEFAULT_SAMPLE_ONE_IN);
    if filter.one_in == 0 {
        return Err(Invalid::new(
            path.key("sample_one_in"),
            "must be at least 1",
        ));
    }
    if tables.iter().any(|t| t == "packet_hops") {
        trace.packet_hops = Some(filter);
    }
    Ok(trace)
}

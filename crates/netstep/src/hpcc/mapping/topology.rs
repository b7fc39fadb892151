//! The topology file as a custom topology: node names are the simulator's ids, links keep
//! their rate, delay and error rate, and switch egress ports get their ECN marking.

use std::fmt::Write as _;

use super::switch::Ecn;
use super::{Log, duration, rate};
use crate::hpcc::files::Topology;

/// Every link's buffer: the simulator's egress queues' own limit (its MMU, if any, is the
/// `[switch]` setting).
const SWITCH_BUFFER: &str = "\"1000MB\"";

/// The `[topology]` lists, as text.
pub(super) struct TopologyText {
    /// Host names, quoted.
    pub(super) hosts: Vec<String>,
    /// Switch names, quoted.
    pub(super) switches: Vec<String>,
    /// One inline table a line.
    pub(super) links: String,
    /// Routing rules (`no_transit`, `prefer` lines), or empty.
    pub(super) rules: String,
}

/// The nodes and links (`ERROR_RATE_PER_LINK` is the loss of links without their own); the
/// egress ports of the nodes `marks` accepts mark ECN.
pub(super) fn topology(
    topology: &Topology,
    ecn: &Ecn,
    marks: &dyn Fn(u32) -> bool,
    log: &mut Log,
) -> anyhow::Result<TopologyText> {
    let error_default = log.config.number("ERROR_RATE_PER_LINK")?.unwrap_or(0.0);
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
            "a = \"{}\", b = \"{}\", rate = {}, delay = {}, buffer = {SWITCH_BUFFER}",
            l.a,
            l.b,
            rate(l.rate),
            duration(l.delay)
        );
        if loss > 0.0 {
            write!(fields, ", loss = {loss}")?;
        }
        if ecn.on {
            // The egress port at a switch end marks: a_to_b leaves a, b_to_a leaves b.
            if marks(l.a) {
                write!(fields, ", a_to_b = {{ aqm = {} }}", ecn.aqm(l.rate))?;
            }
            if marks(l.b) {
                write!(fields, ", b_to_a = {{ aqm = {} }}", ecn.aqm(l.rate))?;
            }
        }
        writeln!(links, "  {{ {fields} }},")?;
    }
    log.mapped(format!(
        "TOPOLOGY_FILE -> topology (custom; node names are the simulator's ids), ERROR_RATE_PER_LINK {error_default} -> loss of links without their own"
    ));
    Ok(TopologyText {
        hosts,
        switches,
        links,
        rules: String::new(),
    })
}

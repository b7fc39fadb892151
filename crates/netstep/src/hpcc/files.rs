//! The HPCC simulator's input files: the config (`KEY value...` lines), the topology, the flow
//! list and the trace-node list, read exactly as its `third.cc` reads them. Errors name the
//! file, the line and what was expected.

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use netstep_core::units::{BitsPerSec, SimTime, parse_duration, parse_rate};

/// One config entry: its key, its value tokens and its line (from 1).
#[derive(Clone, Debug)]
pub struct Entry {
    /// The key, e.g. `CC_MODE`.
    pub key: String,
    /// The value tokens (a map key such as `KMAX_MAP` has several).
    pub values: Vec<String>,
    /// Line number in the config file.
    pub line: usize,
}

/// The simulator's config file, parsed into entries in file order.
#[derive(Clone, Debug)]
pub struct Config {
    /// The file as given.
    pub path: PathBuf,
    /// Entries in file order (a repeated key keeps every occurrence; the last one is the
    /// simulator's value, as its reading loop overwrites).
    pub entries: Vec<Entry>,
}

impl Config {
    /// Reads `path`: each non-empty line is a key and its whitespace-separated values.
    pub fn read(path: &Path) -> anyhow::Result<Config> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the config file", path.display()))?;
        let entries = text
            .lines()
            .enumerate()
            .filter_map(|(i, line)| {
                let mut tokens = line.split_whitespace();
                let key = tokens.next()?;
                Some(Entry {
                    key: key.to_string(),
                    values: tokens.map(str::to_string).collect(),
                    line: i + 1,
                })
            })
            .collect();
        Ok(Config {
            path: path.to_path_buf(),
            entries,
        })
    }

    /// The last entry of `key`, if any.
    pub fn get(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|e| e.key == key)
    }

    /// True when the config has `key`.
    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// `"config.txt:12: KEY: message"`.
    pub fn error(&self, entry: &Entry, message: &str) -> anyhow::Error {
        anyhow::anyhow!(
            "{}:{}: {}: {message}",
            self.path.display(),
            entry.line,
            entry.key
        )
    }

    /// The single value of `key` (`None` when absent); more or fewer tokens are an error.
    pub fn one(&self, key: &str) -> anyhow::Result<Option<(&Entry, &str)>> {
        match self.get(key) {
            None => Ok(None),
            Some(e) if e.values.len() == 1 => Ok(Some((e, e.values[0].as_str()))),
            Some(e) => Err(self.error(e, &format!("expected one value, got {}", e.values.len()))),
        }
    }

    /// `key` as a number (`None` when absent).
    pub fn number(&self, key: &str) -> anyhow::Result<Option<f64>> {
        self.one(key)?
            .map(|(e, v)| {
                v.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| self.error(e, &format!("expected a number, got {v:?}")))
            })
            .transpose()
    }

    /// `key` as the simulator's integer reading (`>>` into an unsigned integer stops at a
    /// `.`, so `6804.0` reads 6804).
    pub fn unsigned(&self, key: &str) -> anyhow::Result<Option<u64>> {
        self.one(key)?
            .map(|(e, v)| {
                let digits = v.split('.').next().unwrap_or("");
                digits.parse::<u64>().map_err(|_| {
                    self.error(e, &format!("expected a non-negative integer, got {v:?}"))
                })
            })
            .transpose()
    }

    /// `key` as a flag (an integer, non-zero = on); `None` when absent.
    pub fn flag(&self, key: &str) -> anyhow::Result<Option<bool>> {
        Ok(self.unsigned(key)?.map(|v| v != 0))
    }

    /// `key` as an ns-3 `DataRate` string (`"10.0Mb/s"`, `"10Gbps"`).
    pub fn rate(&self, key: &str) -> anyhow::Result<Option<BitsPerSec>> {
        self.one(key)?
            .map(|(e, v)| ns3_rate(v).map_err(|m| self.error(e, &m)))
            .transpose()
    }

    /// A path-valued key resolved as the simulator's users need: as written when it exists,
    /// else relative to the config's folder, else the file of the same name in the config's
    /// folder or its parent (the configs carry the authors' machine paths).
    pub fn path(&self, key: &str) -> anyhow::Result<Option<PathBuf>> {
        let Some((e, v)) = self.one(key)? else {
            return Ok(None);
        };
        let written = Path::new(v);
        let dir = self.path.parent().unwrap_or(Path::new("."));
        let mut tried = vec![written.to_path_buf()];
        if written.is_relative() {
            tried.push(dir.join(written));
        }
        if let Some(name) = written.file_name() {
            tried.push(dir.join(name));
            if let Some(parent) = dir.parent() {
                tried.push(parent.join(name));
            }
        }
        match tried.iter().find(|p| p.is_file()) {
            Some(found) => Ok(Some(found.clone())),
            None => Err(self.error(
                e,
                &format!(
                    "no such file; tried {}",
                    tried
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            )),
        }
    }
}

/// Parses an ns-3 `DataRate` string: a number and a unit in bits (`bps`, `b/s`, `kbps`,
/// `Kb/s`, `Mbps`, `Mb/s`, `Gbps`, `Gb/s`, `Tbps`); byte rates are refused (say bits).
pub fn ns3_rate(text: &str) -> Result<BitsPerSec, String> {
    let unit_at = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_at);
    let unit = match unit {
        "bps" | "b/s" => "bps",
        "kbps" | "Kbps" | "kb/s" | "Kb/s" => "kbps",
        "Mbps" | "Mb/s" => "Mbps",
        "Gbps" | "Gb/s" => "Gbps",
        "Tbps" | "Tb/s" => "Tbps",
        _ => {
            return Err(format!(
                "expected a rate in bits such as \"10Gbps\" or \"10.0Mb/s\", got {text:?}"
            ));
        }
    };
    parse_rate(&format!("{number}{unit}")).map_err(|e| e.to_string())
}

/// Parses an ns-3 `Time` string with a unit (`"1000ns"`, `"1us"`, `"0.001ms"`, `"1s"`).
pub fn ns3_time(text: &str) -> Result<SimTime, String> {
    parse_duration(text).map_err(|e| e.to_string())
}

/// One link of the topology file.
#[derive(Clone, Debug)]
pub struct Link {
    /// One end (node id).
    pub a: u32,
    /// The other end.
    pub b: u32,
    /// Line rate.
    pub rate: BitsPerSec,
    /// Propagation delay.
    pub delay: SimTime,
    /// Packet error rate (the simulator's per-link `error_rate`; <= 0: the config's
    /// `ERROR_RATE_PER_LINK` applies).
    pub error_rate: f64,
}

impl Link {
    /// Reads one `a b rate delay error_rate` link of a topology file of `nodes` nodes (the
    /// HPCC simulator's and SimAI's alike).
    pub(crate) fn read(t: &mut Tokens, nodes: u32) -> anyhow::Result<Link> {
        let a: u32 = t.parse("a link's first node id")?;
        let b: u32 = t.parse("a link's second node id")?;
        for id in [a, b] {
            if id >= nodes {
                return Err(t.error(&format!("node id {id} is not below the node count {nodes}")));
            }
        }
        if a == b {
            return Err(t.error(&format!("link from node {a} to itself")));
        }
        let rate = ns3_rate(&t.next("a link rate")?).map_err(|m| t.error(&m))?;
        let delay = ns3_time(&t.next("a link delay")?).map_err(|m| t.error(&m))?;
        let error_rate: f64 = t.parse("a link error rate")?;
        Ok(Link {
            a,
            b,
            rate,
            delay,
            error_rate,
        })
    }
}

/// The topology file: `nodes switches links`, the switch ids, then `a b rate delay error`.
#[derive(Clone, Debug)]
pub struct Topology {
    /// Number of nodes (ids 0 to n - 1).
    pub nodes: u32,
    /// `is_switch[id]`.
    pub is_switch: Vec<bool>,
    /// Links in file order.
    pub links: Vec<Link>,
}

/// Splits a whitespace-separated file into tokens with their line numbers.
fn tokens(path: &Path, what: &str) -> anyhow::Result<Vec<(usize, String)>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the {what}", path.display()))?;
    Ok(text
        .lines()
        .enumerate()
        .flat_map(|(i, line)| line.split_whitespace().map(move |t| (i + 1, t.to_string())))
        .collect())
}

/// A cursor over a file's tokens whose errors name the file and line.
pub(crate) struct Tokens {
    path: PathBuf,
    tokens: std::vec::IntoIter<(usize, String)>,
    line: usize,
}

impl Tokens {
    pub(crate) fn open(path: &Path, what: &str) -> anyhow::Result<Tokens> {
        Ok(Tokens {
            path: path.to_path_buf(),
            tokens: tokens(path, what)?.into_iter(),
            line: 1,
        })
    }
    pub(crate) fn next(&mut self, what: &str) -> anyhow::Result<String> {
        match self.tokens.next() {
            Some((line, t)) => {
                self.line = line;
                Ok(t)
            }
            None => bail!(
                "{}:{}: the file ends where {what} was expected",
                self.path.display(),
                self.line
            ),
        }
    }
    pub(crate) fn parse<T: std::str::FromStr>(&mut self, what: &str) -> anyhow::Result<T> {
        let t = self.next(what)?;
        t.parse()
            .map_err(|_| self.error(&format!("expected {what}, got {t:?}")))
    }
    pub(crate) fn error(&self, message: &str) -> anyhow::Error {
        anyhow::anyhow!("{}:{}: {message}", self.path.display(), self.line)
    }
    pub(crate) fn rest(&mut self) -> Option<(usize, String)> {
        self.tokens.next()
    }
}

impl Topology {
    /// Reads a topology file.
    pub fn read(path: &Path) -> anyhow::Result<Topology> {
        let mut t = Tokens::open(path, "topology file")?;
        let nodes: u32 = t.parse("the node count")?;
        let switches: u32 = t.parse("the switch count")?;
        let links: u32 = t.parse("the link count")?;
        if nodes as u64 > netstep_scenario::limits::MAX_NODES {
            return Err(t.error(&format!(
                "{nodes} nodes: more than netstep's limit of {}",
                netstep_scenario::limits::MAX_NODES
            )));
        }
        let mut is_switch = vec![false; nodes as usize];
        for _ in 0..switches {
            let id: u32 = t.parse("a switch id")?;
            if id >= nodes {
                return Err(t.error(&format!(
                    "switch id {id} is not below the node count {nodes}"
                )));
            }
            is_switch[id as usize] = true;
        }
        let mut list = Vec::with_capacity((links as usize).min(1 << 20));
        for _ in 0..links {
            list.push(Link::read(&mut t, nodes)?);
        }
        if let Some((line, extra)) = t.rest() {
            bail!(
                "{}:{line}: {extra:?} after the {links} links the first line announces",
                path.display()
            );
        }
        Ok(Topology {
            nodes,
            is_switch,
            links: list,
        })
    }
}

/// One flow of the flow file.
#[derive(Clone, Debug)]
pub struct Flow {
    /// The fork's flow id (`None` in the upstream format).
    pub id: Option<u32>,
    /// Source node id.
    pub src: u32,
    /// Destination node id.
    pub dst: u32,
    /// Priority group (the switch queue and PFC class).
    pub pg: u8,
    /// Destination port.
    pub dport: u16,
    /// Payload bytes.
    pub size: u64,
    /// Start, in ns, as the simulator computes it from the seconds written.
    pub start_ns: u64,
    /// Line in the flow file (from 1), for errors.
    pub line: usize,
}

/// Which flow-file form: the upstream simulator's `src dst pg dport size start_s` or the
/// m3/Parsimon fork's `id src dst pg dport size start_s`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlowFormat {
    /// Six columns.
    Upstream,
    /// Seven columns (an id first).
    WithId,
}

/// Reads a flow file (the count on the first line, then one flow per line); the form is told
/// by the number of columns on the first flow line.
pub fn read_flows(path: &Path) -> anyhow::Result<(FlowFormat, Vec<Flow>)> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the flow file", path.display()))?;
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let err = |line: usize, m: String| anyhow::anyhow!("{}:{}: {m}", path.display(), line + 1);
    let (first, count) = lines
        .next()
        .ok_or_else(|| anyhow::anyhow!("{}: empty flow file", path.display()))?;
    let count: usize = count.trim().parse().map_err(|_| {
        err(
            first,
            format!("expected the flow count, got {:?}", count.trim()),
        )
    })?;
    let mut flows = Vec::with_capacity(count.min(1 << 20));
    let mut format = None;
    let mut previous_start = 0;
    for (i, line) in lines {
        let cols: Vec<&str> = line.split_whitespace().collect();
        let f = *format.get_or_insert(match cols.len() {
            6 => FlowFormat::Upstream,
            7 => FlowFormat::WithId,
            n => {
                return Err(err(
                    i,
                    format!(
                        "expected `src dst pg dport size start_s` (6 columns) or `id src dst pg dport size start_s` (7), got {n} columns"
                    ),
                ));
            }
        });
        let want = if f == FlowFormat::WithId { 7 } else { 6 };
        if cols.len() != want {
            return Err(err(
                i,
                format!(
                    "expected {want} columns like the first flow line, got {}",
                    cols.len()
                ),
            ));
        }
        let (id, rest) = match f {
            FlowFormat::WithId => (Some(&cols[0]), &cols[1..]),
            FlowFormat::Upstream => (None, &cols[..]),
        };
        let int = |name: &str, v: &str| -> anyhow::Result<u64> {
            v.parse::<u64>().map_err(|_| {
                err(
                    i,
                    format!("{name}: expected a non-negative integer, got {v:?}"),
                )
            })
        };
        let id32 = |name: &str, v: &str| -> anyhow::Result<u32> {
            v.parse::<u32>().map_err(|_| {
                err(
                    i,
                    format!("{name}: expected a node id (an integer below 2^32), got {v:?}"),
                )
            })
        };
        let id = id.map(|v| id32("id", v)).transpose()?;
        if let Some(id) = id
            && id as usize != flows.len()
        {
            return Err(err(
                i,
                format!(
                    "id: expected {} (netstep numbers flows by their line, so the ids must count from 0), got {id}",
                    flows.len()
                ),
            ));
        }
        let pg = int("pg", rest[2])?;
        if pg > 7 {
            return Err(err(i, format!("pg: priority groups are 0 to 7, got {pg}")));
        }
        let dport = int("dport", rest[3])?;
        let dport = u16::try_from(dport).map_err(|_| {
            err(
                i,
                format!("dport: port numbers are 0 to 65535, got {dport}"),
            )
        })?;
        let start_ns = seconds_to_ns(rest[5]).ok_or_else(|| {
            err(
                i,
                format!("start: expected seconds (a number >= 0), got {:?}", rest[5]),
            )
        })?;
        if start_ns < previous_start {
            return Err(err(
                i,
                "start: the simulator needs flows in start order (an earlier start here would be scheduled in the past)".to_string(),
            ));
        }
        previous_start = start_ns;
        flows.push(Flow {
            id,
            src: id32("src", rest[0])?,
            dst: id32("dst", rest[1])?,
            pg: pg as u8,
            dport,
            size: int("size", rest[4])?,
            start_ns,
            line: i + 1,
        });
    }
    if flows.len() != count {
        bail!(
            "{}: the first line announces {count} flows, the file has {}",
            path.display(),
            flows.len()
        );
    }
    Ok((format.unwrap_or(FlowFormat::WithId), flows))
}

/// The simulator's source ports: a counter from 10000 per source and destination pair (the
/// m3/Parsimon fork) or per source (upstream), in flow order.
#[derive(Debug, Default)]
pub struct SourcePorts {
    per_pair: bool,
    next: std::collections::HashMap<(u32, u32), u16>,
}

impl SourcePorts {
    /// Counters per pair (`per_pair`, the fork's) or per source (upstream's).
    pub fn new(per_pair: bool) -> SourcePorts {
        SourcePorts {
            per_pair,
            next: std::collections::HashMap::new(),
        }
    }
    /// The source port of the next flow from `src` to `dst`.
    pub fn next(&mut self, src: u32, dst: u32) -> u16 {
        let key = (src, if self.per_pair { dst } else { u32::MAX });
        let c = self.next.entry(key).or_insert(10_000);
        let port = *c;
        *c = c.wrapping_add(1);
        port
    }
}

/// A start time written in seconds, as the simulator's `Seconds(double)` makes it: the
/// nearest double, times 10^9 exactly, truncated to whole ns (`1.000077097` is stored just
/// below and becomes 1,000,077,096 ns).
pub fn seconds_to_ns(text: &str) -> Option<u64> {
    let x: f64 = text.parse().ok()?;
    if !x.is_finite() || x < 0.0 {
        return None;
    }
    if x == 0.0 {
        return Some(0);
    }
    let bits = x.to_bits();
    let exponent = ((bits >> 52) & 0x7ff) as i32;
    let (mantissa, exponent) = if exponent == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exponent - 1075)
    };
    if exponent >= 64 {
        return None;
    }
    let scaled = (mantissa as u128).checked_mul(1_000_000_000)?;
    let ns = if exponent >= 0 {
        // mantissa < 2^53, x 10^9 < 2^83, shifted by < 64: below 2^147 would overflow u128;
        // the result must fit u64 anyway.
        if scaled.leading_zeros() <= exponent as u32 {
            return None;
        }
        scaled << exponent as u32
    } else if exponent <= -128 {
        0
    } else {
        scaled >> (-exponent) as u32
    };
    u64::try_from(ns).ok()
}

/// Reads a trace file: the count, then the node ids to trace (ids at or above `nodes` are
/// skipped, as the simulator does).
pub fn read_trace(path: &Path, nodes: u32) -> anyhow::Result<Vec<u32>> {
    let mut t = Tokens::open(path, "trace file")?;
    let count: usize = t.parse("the traced node count")?;
    let mut ids = Vec::with_capacity(count.min(1 << 20));
    for _ in 0..count {
        let id: u32 = t.parse("a node id")?;
        if id < nodes {
            ids.push(id);
        }
    }
    Ok(ids)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_truncate_like_ns3() {
        // The double nearest 1.000077097 is below it: ns-3 truncates to ...096.
        assert_eq!(seconds_to_ns("1.000077097"), Some(1_000_077_096));
        assert_eq!(seconds_to_ns("1"), Some(1_000_000_000));
        assert_eq!(seconds_to_ns("0.5"), Some(500_000_000));
        assert_eq!(seconds_to_ns("0"), Some(0));
        assert_eq!(seconds_to_ns("-1"), None);
        // Checked against exact decimal arithmetic for a spread of values.
        for ns in [1u64, 999, 1_000_000_001, 2_123_456_789, 3_999_999_999] {
            let text = format!("{}.{:09}", ns / 1_000_000_000, ns % 1_000_000_000);
            let got = seconds_to_ns(&text).unwrap();
            assert!(got == ns || got + 1 == ns, "{text}: {got}");
        }
    }

    #[test]
    fn ns3_rates_in_bits() {
        assert_eq!(ns3_rate("10.0Mb/s"), Ok(BitsPerSec(10_000_000)));
        assert_eq!(ns3_rate("100000Gbps"), Ok(BitsPerSec(100_000_000_000_000)));
        assert_eq!(ns3_rate("10000000000bps"), Ok(BitsPerSec(10_000_000_000)));
        assert!(ns3_rate("10MB/s").is_err());
    }
}

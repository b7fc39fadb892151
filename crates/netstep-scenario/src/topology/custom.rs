//! `kind = "custom"`: any graph of named hosts and switches, listed in the scenario or read
//! from node and link files (CSV or Parquet), routed by shortest paths.

use std::collections::HashMap;

use netstep_core::topology::{LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::resolve_class;
use super::{Counts, TopologyKind};
use crate::config::{AqmConfig, LinkConfig, PolicerConfig, SchedulerConfig, ShaperConfig};
use crate::error::{FieldPath, Invalid};

/// Any graph of named hosts and switches. Example: `kind = "custom"`,
/// `hosts = ["a", "b"]`, `switches = ["s1"]`,
/// `links = [{ a = "a", b = "s1" }, { a = "b", b = "s1" }]`.
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct CustomConfig {
    /// Host names (unique among all nodes, not empty).
    ///
    /// Unit: list of names · Default: none · Example: `hosts = ["a", "b"]`
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Switch names.
    ///
    /// Unit: list of names · Default: none · Example: `switches = ["s1"]`
    #[serde(default)]
    pub switches: Vec<String>,
    /// Links between named nodes, each
    /// `{ a, b, rate?, delay?, buffer?, loss?, scheduler?, aqm?, shaper?, policer?, a_to_b?, b_to_a? }`;
    /// every host has at least one link (a host of several, such as a GPU with an NVLink and a
    /// NIC link, sends each flow by the port its shortest route starts with).
    ///
    /// Unit: list of tables · Default: none · Example:
    /// `links = [{ a = "a", b = "s1" }, { a = "b", b = "s1" }]`
    #[serde(default)]
    pub links: Vec<CustomLink>,
    /// Link parameters under every link's own (a link table), for `links` and `links_file`
    /// alike.
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `defaults = { rate = "10Gbps", delay = "1us" }`
    pub defaults: Option<LinkConfig>,
    /// More nodes from a CSV or Parquet file (by extension), added after `hosts` and
    /// `switches`: columns `name` and `kind` (`host` or `switch`). Relative to the scenario
    /// file's folder, then the working directory.
    ///
    /// Unit: path · Default: none · Example: `nodes_file = "links-file-nodes.csv"`
    pub nodes_file: Option<String>,
    /// More links from a CSV or Parquet file (by extension), added after `links`: columns `a`,
    /// `b` (node names) and optionally `rate` (text with a unit) or `rate_bps`, `delay` or
    /// `delay_ns` / `delay_ps`, `buffer` or `buffer_bytes` / `buffer_packets`, and `loss`, with
    /// `defaults` under each row's values (the same in both directions; per-link schedulers and
    /// AQMs need the TOML form). Relative to the scenario file's folder, then the working
    /// directory.
    ///
    /// Unit: path · Default: none · Example: `links_file = "links-file-links.csv"`
    pub links_file: Option<String>,
    /// Switches no route passes through: each carries only the traffic of the hosts attached
    /// to it (a GPU's NIC holding its NVLink and network links, as `netstep import simai`
    /// writes them).
    ///
    /// Unit: list of names · Default: none · Example: `no_transit = ["nic0", "nic1"]`
    pub no_transit: Option<Vec<String>>,
    /// Switches preferred among equal-cost next hops: where one of a switch's next hops
    /// towards a destination is one of them, only those are used (SimAI prefers the NVSwitch).
    ///
    /// Unit: list of names · Default: none · Example: `prefer = ["nvs0"]`
    pub prefer: Option<Vec<String>>,
    /// Rows of `links_file` (counted when the scenario is loaded).
    #[serde(skip)]
    pub file_links: u64,
}

/// One link of a custom topology.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table such as { a = \"s1\", b = \"s2\" }"
)]
pub struct CustomLink {
    /// Queue discipline at both ends (a link table's `scheduler`).
    ///
    /// Unit: table · Default: `defaults`, else the link parameters' defaults · Example:
    /// `scheduler = { kind = "strict_priority" }`
    pub scheduler: Option<SchedulerConfig>,
    /// Active queue management at both ends (a link table's `aqm`).
    ///
    /// Unit: table · Default: `defaults`, else the link parameters' defaults · Example:
    /// `aqm = { kind = "step", k = "30KB" }`
    pub aqm: Option<AqmConfig>,
    /// Token-bucket shaper at both ends (a link table's `shaper`).
    ///
    /// Unit: table · Default: `defaults`, else the link parameters' defaults · Example:
    /// `shaper = { rate = "1Gbps", burst = "15KB" }`
    pub shaper: Option<ShaperConfig>,
    /// trTCM policer at both switch ends (a link table's `policer`).
    ///
    /// Unit: table · Default: `defaults`, else the link parameters' defaults · Example:
    /// `policer = { kind = "trtcm", cir = "1Gbps", cbs = "15KB", pir = "2Gbps", pbs = "15KB" }`
    pub policer: Option<PolicerConfig>,
    /// One end (node name).
    ///
    /// Unit: name · Default: required · Example: `a = "s1"`
    pub a: String,
    /// The other end (node name), not `a`.
    ///
    /// Unit: name · Default: required · Example: `b = "s2"`
    pub b: String,
    /// Line rate; above zero.
    ///
    /// Unit: rate · Default: `defaults`, else the link parameters' defaults · Example:
    /// `rate = "1Gbps"`
    pub rate: Option<String>,
    /// Propagation delay.
    ///
    /// Unit: duration · Default: `defaults`, else the link parameters' defaults · Example:
    /// `delay = "5us"`
    pub delay: Option<String>,
    /// Egress buffer at each end.
    ///
    /// Unit: size or packets · Default: `defaults`, else the link parameters' defaults ·
    /// Example: `buffer = "100pkts"`
    pub buffer: Option<String>,
    /// Probability that a packet is lost on the wire.
    ///
    /// Unit: probability in [0, 1] · Default: `defaults`, else the link parameters' defaults ·
    /// Example: `loss = 0.01`
    pub loss: Option<f64>,
    /// Overrides for the `a -> b` direction only (`a`'s egress port): a link table.
    ///
    /// Unit: table · Default: none · Example: `a_to_b = { rate = "1Gbps", buffer = "20KB" }`
    pub a_to_b: Option<LinkConfig>,
    /// Overrides for the `b -> a` direction only (`b`'s egress port): a link table.
    ///
    /// Unit: table · Default: none · Example: `b_to_a = { delay = "10us" }`
    pub b_to_a: Option<LinkConfig>,
}

impl TopologyKind for CustomConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let mut spec = custom(
            &self.hosts,
            &self.switches,
            &self.links,
            &self.defaults,
            self.links_file.as_deref(),
        )?;
        if self.no_transit.is_some() || self.prefer.is_some() {
            let switches: HashMap<&str, u32> = spec
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.kind == NodeKind::Switch)
                .map(|(i, n)| (n.name.as_str(), i as u32))
                .collect();
            let ids = |list: &Option<Vec<String>>, field: &str| -> Result<Vec<u32>, Invalid> {
                let path = FieldPath::of(&["topology", field]);
                list.iter()
                    .flatten()
                    .enumerate()
                    .map(|(i, name)| {
                        switches.get(name.as_str()).copied().ok_or_else(|| {
                            Invalid::new(path.clone().index(i), format!("{name:?} is not a switch"))
                        })
                    })
                    .collect()
            };
            let rules = netstep_core::topology::PathRules {
                no_transit: ids(&self.no_transit, "no_transit")?,
                prefer: ids(&self.prefer, "prefer")?,
            };
            spec.routing = RoutingKind::ShortestPathRules(Box::new(rules));
        }
        Ok(spec)
    }

    fn counts(&self) -> Counts {
        Counts {
            nodes: (self.hosts.len() + self.switches.len()) as u64,
            ports: (self.links.len() as u64).saturating_add(self.file_links) * 2,
            // Checked per node when the network is compiled (in linear time).
            degree: 0,
            field: "links",
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        Ok(None)
    }
}

/// The index of `class` among the distinct link classes (added when new).
fn intern_class(
    classes: &mut Vec<LinkClass>,
    index_of: &mut HashMap<LinkClass, usize>,
    class: LinkClass,
    path: &FieldPath,
) -> Result<u16, Invalid> {
    let index = *index_of.entry(class).or_insert_with(|| {
        classes.push(class);
        classes.len() - 1
    });
    u16::try_from(index)
        .map_err(|_| Invalid::new(path.clone(), "more than 65535 distinct link parameter sets"))
}

/// Builds a custom topology from its lists and links file.
fn custom(
    hosts: &[String],
    switches: &[String],
    links: &[CustomLink],
    defaults: &Option<LinkConfig>,
    links_file: Option<&str>,
) -> Result<TopologySpec, Invalid> {
    let top = FieldPath::of(&["topology"]);
    let mut nodes = Vec::new();
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    for (list, kind, field) in [
        (hosts, NodeKind::Host, "hosts"),
        (switches, NodeKind::Switch, "switches"),
    ] {
        for (i, name) in list.iter().enumerate() {
            if name.is_empty() {
                return Err(Invalid::new(
                    top.key(field).index(i),
                    "node names must not be empty",
                ));
            }
            if by_name.insert(name.as_str(), nodes.len() as u32).is_some() {
                return Err(Invalid::new(
                    top.key(field).index(i),
                    format!("node name {name:?} is used twice"),
                ));
            }
            nodes.push(NodeSpec {
                kind,
                name: name.clone(),
            });
        }
    }
    let mut classes: Vec<LinkClass> = Vec::new();
    let mut class_index_of: HashMap<LinkClass, usize> = HashMap::new();
    let mut degree = vec![0u32; nodes.len()];
    let mut link_specs = Vec::with_capacity(links.len());
    for (i, link) in links.iter().enumerate() {
        let path = top.key("links").index(i);
        let end = |name: &str, field: &str| {
            by_name.get(name).copied().ok_or_else(|| Invalid::new(path.key(field), format!("unknown node {name:?}; expected one of the names in topology.hosts or topology.switches")))
        };
        let (a, b) = (end(&link.a, "a")?, end(&link.b, "b")?);
        if a == b {
            return Err(Invalid::new(
                path.clone(),
                format!("link from {:?} to itself", link.a),
            ));
        }
        let own = LinkConfig {
            scheduler: link.scheduler.clone(),
            aqm: link.aqm.clone(),
            shaper: link.shaper.clone(),
            policer: link.policer.clone(),
            rate: link.rate.clone(),
            delay: link.delay.clone(),
            buffer: link.buffer.clone(),
            loss: link.loss,
        };
        let mut direction = |way: &Option<LinkConfig>, field: &str| -> Result<u16, Invalid> {
            let class = resolve_class(&[
                (defaults.as_ref(), top.key("defaults")),
                (Some(&own), path.clone()),
                (way.as_ref(), path.key(field)),
            ])?;
            intern_class(&mut classes, &mut class_index_of, class, &path)
        };
        let class = direction(&link.a_to_b, "a_to_b")?;
        let class_ba = direction(&link.b_to_a, "b_to_a")?;
        degree[a as usize] += 1;
        degree[b as usize] += 1;
        link_specs.push(LinkSpec {
            a,
            b,
            class,
            class_ba,
        });
    }
    if let Some(file) = links_file {
        let mut intern = |config: &LinkConfig, path: &FieldPath| -> Result<u16, Invalid> {
            let class = resolve_class(&[
                (defaults.as_ref(), top.key("defaults")),
                (Some(config), path.clone()),
            ])?;
            intern_class(&mut classes, &mut class_index_of, class, path)
        };
        let more = read_links(file, &by_name, &mut intern)?;
        link_specs.reserve(more.len());
        for link in more {
            degree[link.a as usize] += 1;
            degree[link.b as usize] += 1;
            link_specs.push(link);
        }
    }
    for (node, &degree) in nodes.iter().zip(&degree) {
        if node.kind == NodeKind::Host && degree == 0 {
            return Err(Invalid::new(
                top.key("links"),
                format!(
                    "host {:?} has no link; a host needs at least one",
                    node.name
                ),
            ));
        }
    }
    if classes.is_empty() {
        classes.push(resolve_class(&[(defaults.as_ref(), top.key("defaults"))])?);
    }
    Ok(TopologySpec {
        nodes,
        links: link_specs,
        classes,
        routing: RoutingKind::ShortestPath,
    })
}

/// Reads a custom topology's `nodes_file` into its `hosts` and `switches` (after those the
/// file lists) and counts the rows of its `links_file` (read when the topology is built), so
/// that errors name the file, row and column. Paths become those found (relative to the
/// scenario's folder first). Returns a line per file for the scenario hash.
pub(crate) fn read_files(
    config: &mut CustomConfig,
    base_dir: Option<&std::path::Path>,
) -> Result<Vec<String>, Invalid> {
    use crate::table_file::{TableFile, file_hash, resolve};
    let CustomConfig {
        hosts,
        switches,
        nodes_file,
        links_file,
        file_links,
        ..
    } = config;
    let mut inputs = Vec::new();
    let open = |name: &mut String, field: &str| -> Result<(TableFile, String), Invalid> {
        let path = FieldPath::of(&["topology", field]);
        let resolved = resolve(name, base_dir);
        let file = TableFile::open(&resolved, name).map_err(|e| Invalid::new(path.clone(), e))?;
        let hash = file_hash(&resolved).map_err(|e| Invalid::new(path, e))?;
        let line = format!("{field} {name} {hash:016x}");
        *name = resolved.display().to_string();
        Ok((file, line))
    };
    if let Some(name) = nodes_file.as_mut() {
        let (file, input) = open(name, "nodes_file")?;
        inputs.push(input);
        let path = FieldPath::of(&["topology", "nodes_file"]);
        file.for_each_row(&["name", "kind"], &["name", "kind"], |at, cells| {
            let name = match cells[0].text().map_err(|m| file.error(at, "name", &m))? {
                Some(n) if !n.is_empty() => n.into_owned(),
                _ => return Err(file.error(at, "name", "missing")),
            };
            if (hosts.len() + switches.len()) as u64 >= crate::limits::MAX_NODES {
                return Err(file.error(
                    at,
                    "name",
                    &format!("more than {} nodes (the limit)", crate::limits::MAX_NODES),
                ));
            }
            match cells[1]
                .text()
                .map_err(|m| file.error(at, "kind", &m))?
                .as_deref()
            {
                Some("host") => hosts.push(name),
                Some("switch") => switches.push(name),
                other => {
                    return Err(file.error(
                        at,
                        "kind",
                        &format!("expected \"host\" or \"switch\", got {other:?}"),
                    ));
                }
            }
            Ok(())
        })
        .map_err(|e| Invalid::new(path, e))?;
    }
    if let Some(name) = links_file.as_mut() {
        let (file, input) = open(name, "links_file")?;
        inputs.push(input);
        *file_links = file
            .row_count()
            .map_err(|e| Invalid::new(FieldPath::of(&["topology", "links_file"]), e))?;
    }
    Ok(inputs)
}

/// A links-file row's rate, delay, buffer (text with units) and loss (bits of the f64).
type LinkParams = (Option<String>, Option<String>, Option<String>, Option<u64>);

/// The columns of a links file.
const LINK_COLUMNS: [&str; 11] = [
    "a",
    "b",
    "rate",
    "rate_bps",
    "delay",
    "delay_ns",
    "delay_ps",
    "buffer",
    "buffer_bytes",
    "buffer_packets",
    "loss",
];

/// The links of a links file (its path as resolved by [`read_files`]); `class` gives the link
/// class index of a row's parameters.
fn read_links(
    file: &str,
    by_name: &HashMap<&str, u32>,
    class: &mut dyn FnMut(&LinkConfig, &FieldPath) -> Result<u16, Invalid>,
) -> Result<Vec<LinkSpec>, Invalid> {
    use crate::table_file::{Cell, TableFile};
    let path = FieldPath::of(&["topology", "links_file"]);
    let table = TableFile::open(std::path::Path::new(file), file)
        .map_err(|e| Invalid::new(path.clone(), e))?;
    let mut links = Vec::with_capacity(table.known_rows().unwrap_or(0) as usize);
    // Distinct parameter sets (usually a handful) and their class.
    let mut seen: HashMap<LinkParams, u16> = HashMap::new();
    // `topology.defaults` alone first, so its own errors name it, not a row of the file.
    class(&LinkConfig::default(), &path)?;
    table
        .for_each_row(&LINK_COLUMNS, &LINK_COLUMNS, |at, cells| {
            let err = |column: &str, message: &str| table.error(at, column, message);
            let end = |i: usize| -> Result<u32, String> {
                let column = LINK_COLUMNS[i];
                match cells[i].text().map_err(|m| err(column, &m))? {
                    Some(n) => by_name.get(n.as_ref()).copied().ok_or_else(|| {
                        err(column, &format!("unknown node {n:?}; expected a name from topology.hosts, topology.switches or nodes_file"))
                    }),
                    None => Err(err(column, "missing")),
                }
            };
            let (a, b) = (end(0)?, end(1)?);
            if a == b {
                return Err(err("b", "a link from a node to itself"));
            }
            // One value per quantity: text with its unit, or an integer in the column's unit.
            let pick = |text: usize, ints: &[(usize, &str)]| -> Result<Option<(&str, String)>, String> {
                let mut found: Option<(&str, String)> = None;
                if let Some(t) = cells[text].text().map_err(|m| err(LINK_COLUMNS[text], &m))? {
                    found = Some((LINK_COLUMNS[text], t.into_owned()));
                }
                for &(i, unit) in ints {
                    if let Some(v) = cells[i].unsigned().map_err(|m| err(LINK_COLUMNS[i], &m))? {
                        if let Some((first, _)) = found {
                            return Err(err(LINK_COLUMNS[i], &format!("also given as {first:?}; give one")));
                        }
                        found = Some((LINK_COLUMNS[i], format!("{v}{unit}")));
                    }
                }
                Ok(found)
            };
            let rate = pick(2, &[(3, "bps")])?;
            let delay = pick(4, &[(5, "ns"), (6, "ps")])?;
            let buffer = pick(7, &[(8, "B"), (9, "pkts")])?;
            // The column each quantity came from, for errors.
            let used = |quantity: &str| -> &str {
                let given = match quantity {
                    "rate" => &rate,
                    "delay" => &delay,
                    "buffer" => &buffer,
                    _ => &None,
                };
                given.as_ref().map_or("loss", |(column, _)| column)
            };
            let loss = match &cells[10] {
                Cell::Null => None,
                cell => cell.number().map_err(|m| err("loss", &m))?,
            };
            let value = |q: &Option<(&str, String)>| q.as_ref().map(|(_, v)| v.clone());
            let key = (value(&rate), value(&delay), value(&buffer), loss.map(f64::to_bits));
            let index = match seen.get(&key) {
                Some(&i) => i,
                None => {
                    let config = LinkConfig {
                        rate: key.0.clone(),
                        delay: key.1.clone(),
                        buffer: key.2.clone(),
                        loss,
                        scheduler: None,
                        aqm: None,
                        shaper: None,
                        policer: None,
                    };
                    let i = class(&config, &FieldPath::of(&["link"])).map_err(|e| {
                        let field = e.path.to_string();
                        err(used(field.rsplit('.').next().unwrap_or("loss")), &e.message)
                    })?;
                    seen.insert(key, i);
                    i
                }
            };
            links.push(LinkSpec {
                a,
                b,
                class: index,
                class_ba: index,
            });
            Ok(())
        })
        .map_err(|e| Invalid::new(path, e))?;
    Ok(links)
}

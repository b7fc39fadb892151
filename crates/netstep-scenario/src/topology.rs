//! Builds the [`TopologySpec`] a scenario's `[topology]` describes, with link classes resolved
//! from defaults, the all-links table and the per-tier (or per-link) overrides.

use std::collections::HashMap;

use netstep_core::topology::{
    self, FatTree, LinkClass, LinkSpec, NodeKind, NodeSpec, RoutingKind, TopologySpec, Torus,
};
use netstep_core::units::{
    BitsPerSec, BufferSize, Bytes, SimTime, parse_buffer, parse_duration, parse_rate,
};

use crate::config::{LinkConfig, TopologyConfig};
use crate::error::{FieldPath, Invalid};

/// Defaults when no link table sets a value.
pub const DEFAULT_RATE: BitsPerSec = BitsPerSec(100_000_000_000);
/// Default propagation delay.
pub const DEFAULT_DELAY: SimTime = SimTime::from_us(1);
/// Default egress buffer.
pub const DEFAULT_BUFFER: BufferSize = BufferSize::Bytes(Bytes(1_000_000));

/// Largest FatTree radix accepted (FatTree-256: 4 M hosts, 25 M ports).
pub const MAX_K: u32 = 256;

/// Resolves one link class: `layers` from most general to most specific, each with its path.
fn resolve_class(layers: &[(Option<&LinkConfig>, FieldPath)]) -> Result<LinkClass, Invalid> {
    let mut class = LinkClass::new(DEFAULT_RATE, DEFAULT_DELAY, DEFAULT_BUFFER);
    for (layer, path) in layers {
        let Some(layer) = layer else { continue };
        if let Some(rate) = &layer.rate {
            class.rate = parse_rate(rate).map_err(|e| Invalid::unit(path.key("rate"), e))?;
            if class.rate.0 == 0 {
                return Err(Invalid::new(
                    path.key("rate"),
                    format!("rate {rate:?} is zero; expected a positive rate such as \"100Gbps\""),
                ));
            }
        }
        if let Some(delay) = &layer.delay {
            class.delay = parse_duration(delay).map_err(|e| Invalid::unit(path.key("delay"), e))?;
        }
        if let Some(buffer) = &layer.buffer {
            class.buffer =
                parse_buffer(buffer).map_err(|e| Invalid::unit(path.key("buffer"), e))?;
        }
        if let Some(scheduler) = &layer.scheduler {
            class.scheduler = scheduler_spec(scheduler, &path.key("scheduler"))?;
        }
        if let Some(aqm) = &layer.aqm {
            class.aqm = aqm_spec(aqm, &path.key("aqm"))?;
        }
        if let Some(shaper) = &layer.shaper {
            class.shaper = Some(shaper_spec(shaper, &path.key("shaper"))?);
        }
        if let Some(policer) = &layer.policer {
            class.policer = Some(policer_spec(policer, &path.key("policer"))?);
        }
        if class.aqm != netstep_core::queue::AqmSpec::None
            && class.scheduler != netstep_core::queue::SchedulerSpec::Fifo
            && (layer.aqm.is_some() || layer.scheduler.is_some())
        {
            return Err(Invalid::new(
                path.key("aqm"),
                format!(
                    "an aqm runs on a FIFO port; this link's scheduler is {:?}",
                    class.scheduler.name()
                ),
            ));
        }
        if let Some(loss) = layer.loss {
            if !(0.0..=1.0).contains(&loss) {
                return Err(Invalid::new(
                    path.key("loss"),
                    format!("must be a probability in [0, 1], got {loss}"),
                ));
            }
            class.loss_ppm = (loss * 1e6).round() as u32;
        }
    }
    Ok(class)
}

fn tiers(
    links: &Option<LinkConfig>,
    host: &Option<LinkConfig>,
    fabric: &Option<LinkConfig>,
) -> Result<(LinkClass, LinkClass), Invalid> {
    let top = FieldPath::of(&["topology"]);
    let host_class = resolve_class(&[
        (links.as_ref(), top.key("links")),
        (host.as_ref(), top.key("host_links")),
    ])?;
    let fabric_class = resolve_class(&[
        (links.as_ref(), top.key("links")),
        (fabric.as_ref(), top.key("fabric_links")),
    ])?;
    Ok((host_class, fabric_class))
}

/// A FatTree's `k`: even, between 2 and [`MAX_K`].
fn fat_tree_k(k: u32) -> Result<u32, Invalid> {
    if !k.is_multiple_of(2) || !(2..=MAX_K).contains(&k) {
        return Err(Invalid::new(
            FieldPath::of(&["topology", "k"]),
            format!("must be an even number between 2 and {MAX_K}, got {k}"),
        ));
    }
    Ok(k)
}

fn at_least_one(value: u32, field: &str) -> Result<u32, Invalid> {
    if value == 0 {
        return Err(Invalid::new(
            FieldPath::of(&["topology", field]),
            "must be at least 1, got 0",
        ));
    }
    Ok(value)
}

/// Checks a torus's `dims` and `hosts_per_switch` (sizes are bounded by the node limit,
/// checked before this from [`counts`]).
fn torus_shape(dims: &[u32], hosts_per_switch: Option<u32>) -> Result<Torus, Invalid> {
    if !(2..=3).contains(&dims.len()) {
        return Err(Invalid::new(
            FieldPath::of(&["topology", "dims"]),
            format!(
                "a torus has 2 or 3 dimensions (e.g. [4, 4] or [4, 4, 4]), got {}",
                dims.len()
            ),
        ));
    }
    if let Some(&n) = dims.iter().find(|&&n| n < 2) {
        return Err(Invalid::new(
            FieldPath::of(&["topology", "dims"]),
            format!("every ring has at least 2 switches, got {n}"),
        ));
    }
    Ok(Torus {
        dims: dims.to_vec(),
        hosts_per_switch: at_least_one(hosts_per_switch.unwrap_or(1), "hosts_per_switch")?,
    })
}

/// Builds the topology.
pub fn build(config: &TopologyConfig) -> Result<TopologySpec, Invalid> {
    match config {
        TopologyConfig::FatTree {
            k,
            hosts_per_edge,
            links,
            host_links,
            fabric_links,
        } => {
            let k = fat_tree_k(*k)?;
            let hosts_per_edge = at_least_one(hosts_per_edge.unwrap_or(k / 2), "hosts_per_edge")?;
            let shape = FatTree { k, hosts_per_edge };
            if (shape.n_edge() as u64) * hosts_per_edge as u64 > u32::MAX as u64 / 2 {
                return Err(Invalid::new(
                    FieldPath::of(&["topology", "hosts_per_edge"]),
                    format!("{hosts_per_edge} hosts per edge is too many for k = {k}"),
                ));
            }
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            Ok(topology::fat_tree(shape, host, fabric))
        }
        TopologyConfig::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            links,
            host_links,
            fabric_links,
        } => {
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            Ok(topology::leaf_spine(
                at_least_one(*leaves, "leaves")?,
                at_least_one(*spines, "spines")?,
                at_least_one(*hosts_per_leaf, "hosts_per_leaf")?,
                host,
                fabric,
            ))
        }
        TopologyConfig::RailOptimized {
            servers,
            gpus,
            spines,
            pxn,
            links,
            host_links,
            nvlink_links,
            rail_links,
            fabric_links,
        } => {
            let top = FieldPath::of(&["topology"]);
            let class = |tier: &Option<Box<LinkConfig>>, field: &str| {
                resolve_class(&[
                    (links.as_deref(), top.key("links")),
                    (tier.as_deref(), top.key(field)),
                ])
            };
            let pxn = pxn.unwrap_or(false);
            if *spines == 0 && !pxn && *gpus > 1 {
                return Err(Invalid::new(
                    top.key("spines"),
                    "with no spines the rails are not connected: give spines, or pxn = true to cross rails over NVLink",
                ));
            }
            Ok(topology::rail(
                topology::Rail {
                    servers: at_least_one(*servers, "servers")?,
                    gpus: at_least_one(*gpus, "gpus")?,
                    spines: *spines,
                    pxn,
                },
                topology::RailLinks {
                    host: class(host_links, "host_links")?,
                    nvlink: class(nvlink_links, "nvlink_links")?,
                    rail: class(rail_links, "rail_links")?,
                    fabric: class(fabric_links, "fabric_links")?,
                },
            ))
        }
        TopologyConfig::Torus {
            dims,
            hosts_per_switch,
            links,
            host_links,
            fabric_links,
        } => {
            let shape = torus_shape(dims, *hosts_per_switch)?;
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            Ok(topology::torus(shape, host, fabric))
        }
        TopologyConfig::Dumbbell {
            left,
            right,
            links,
            host_links,
            fabric_links,
        } => {
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            Ok(topology::dumbbell(
                at_least_one(*left, "left")?,
                at_least_one(*right, "right")?,
                host,
                fabric,
            ))
        }
        TopologyConfig::Custom {
            hosts,
            switches,
            links,
            defaults,
            links_file,
            ..
        } => custom(hosts, switches, links, defaults, links_file.as_deref()),
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

fn custom(
    hosts: &[String],
    switches: &[String],
    links: &[crate::config::CustomLink],
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
        if node.kind == NodeKind::Host && degree != 1 {
            return Err(Invalid::new(
                top.key("links"),
                format!(
                    "host {:?} has {degree} links; a host must have exactly one link",
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

/// Nodes, ports and the largest node degree of the topology `config` describes, computed from
/// the file alone (nothing is built), with the field to blame when one is too large.
pub fn counts(config: &TopologyConfig) -> Counts {
    let s = |a: u64, b: u64| a.saturating_mul(b);
    match config {
        TopologyConfig::FatTree {
            k, hosts_per_edge, ..
        } => {
            let k = *k as u64;
            let hpe = hosts_per_edge.map_or(k / 2, u64::from);
            let edges = s(k, k) / 2;
            let hosts = s(edges, hpe);
            let switches = edges * 2 + s(k, k) / 4;
            let fabric = s(s(k, k), k) / 2;
            Counts {
                nodes: hosts.saturating_add(switches),
                ports: s(hosts.saturating_add(fabric), 2),
                degree: (hpe.saturating_add(k / 2)).max(k),
                field: if hosts_per_edge.is_some() {
                    "hosts_per_edge"
                } else {
                    "k"
                },
            }
        }
        TopologyConfig::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            ..
        } => {
            let (l, sp, h) = (*leaves as u64, *spines as u64, *hosts_per_leaf as u64);
            let biggest = if l >= sp && l >= h {
                "leaves"
            } else if sp >= h {
                "spines"
            } else {
                "hosts_per_leaf"
            };
            Counts {
                nodes: s(l, h).saturating_add(l).saturating_add(sp),
                ports: s(s(l, h).saturating_add(s(l, sp)), 2),
                degree: h.saturating_add(sp).max(l),
                field: biggest,
            }
        }
        TopologyConfig::Torus {
            dims,
            hosts_per_switch,
            ..
        } => {
            let switches = dims.iter().fold(1u64, |acc, &n| s(acc, n as u64));
            let h = hosts_per_switch.map_or(1, u64::from);
            let fabric: u64 = dims
                .iter()
                .map(|&n| if n >= 3 { switches } else { switches / 2 })
                .fold(0u64, u64::saturating_add);
            Counts {
                nodes: s(switches, h).saturating_add(switches),
                ports: s(s(switches, h).saturating_add(fabric), 2),
                degree: h.saturating_add(2 * dims.len() as u64),
                field: if h > switches {
                    "hosts_per_switch"
                } else {
                    "dims"
                },
            }
        }
        TopologyConfig::RailOptimized {
            servers,
            gpus,
            spines,
            ..
        } => {
            let (sv, g, p) = (*servers as u64, *gpus as u64, *spines as u64);
            let h = s(sv, g);
            Counts {
                nodes: s(h, 2)
                    .saturating_add(sv)
                    .saturating_add(g)
                    .saturating_add(p),
                ports: s(s(h, 3).saturating_add(s(g, p)), 2),
                degree: sv.saturating_add(p).max(g).max(3),
                field: if sv >= g { "servers" } else { "gpus" },
            }
        }
        TopologyConfig::Dumbbell { left, right, .. } => {
            let (l, r) = (*left as u64, *right as u64);
            Counts {
                nodes: l + r + 2,
                ports: (l + r + 1) * 2,
                degree: l.max(r) + 1,
                field: if l >= r { "left" } else { "right" },
            }
        }
        TopologyConfig::Custom {
            hosts,
            switches,
            links,
            file_links,
            ..
        } => Counts {
            nodes: (hosts.len() + switches.len()) as u64,
            ports: (links.len() as u64).saturating_add(*file_links) * 2,
            // Checked per node when the network is compiled (in linear time).
            degree: 0,
            field: "links",
        },
    }
}

/// What [`counts`] finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts {
    /// Hosts and switches.
    pub nodes: u64,
    /// Egress ports.
    pub ports: u64,
    /// Largest number of links at one node.
    pub degree: u64,
    /// The `[topology]` key that drives the size.
    pub field: &'static str,
}

/// Refuses a topology whose size exceeds the limits or the memory budget before it is built.
pub fn check_size(
    config: &TopologyConfig,
    limits: &crate::limits::Limits,
) -> Result<Counts, Invalid> {
    use crate::limits::{Footprint, MAX_NODES, MAX_PORTS};
    let c = counts(config);
    let path = FieldPath::of(&["topology", c.field]);
    limits.check_count(c.nodes, MAX_NODES, "nodes", &path)?;
    limits.check_count(c.ports, MAX_PORTS, "egress ports", &path)?;
    let max_degree = netstep_core::network::MAX_PORTS_PER_NODE as u64;
    if c.degree > max_degree {
        return Err(Invalid::new(
            path,
            format!(
                "a node would have {} links; a node may have at most {max_degree}",
                c.degree
            ),
        ));
    }
    limits.check_memory(
        &Footprint {
            nodes: c.nodes,
            ports: c.ports,
            ..Default::default()
        },
        &path,
    )?;
    Ok(c)
}

/// Entries of the shortest-path routing table the engine will build for `spec` (attachment
/// nodes x nodes; 0 for topologies routed arithmetically), in one pass over the links.
pub fn routing_entries(spec: &TopologySpec) -> u64 {
    if spec.routing != RoutingKind::ShortestPath {
        return 0;
    }
    shortest_path_entries(spec)
}

/// Entries of one shortest-path routing table over `spec` (what each failure epoch builds,
/// whatever the topology's own routing).
pub fn shortest_path_entries(spec: &TopologySpec) -> u64 {
    let is_host = |n: u32| spec.nodes[n as usize].kind == NodeKind::Host;
    let mut attach = vec![false; spec.nodes.len()];
    for l in &spec.links {
        if is_host(l.a) {
            attach[l.b as usize] = true;
        }
        if is_host(l.b) {
            attach[l.a as usize] = true;
        }
    }
    let attachments = attach.iter().filter(|&&a| a).count() as u64;
    attachments.saturating_mul(spec.nodes.len() as u64)
}

/// Resolves a `scheduler` table.
fn scheduler_spec(
    config: &crate::config::SchedulerConfig,
    path: &FieldPath,
) -> Result<netstep_core::queue::SchedulerSpec, Invalid> {
    use crate::config::SchedulerKind;
    use netstep_core::queue::{CLASSES, SchedulerSpec};
    let weights = || -> Result<[u16; CLASSES], Invalid> {
        let mut out = [1u16; CLASSES];
        if let Some(list) = &config.weights {
            if list.len() > CLASSES {
                return Err(Invalid::new(
                    path.key("weights"),
                    format!("{} weights for {CLASSES} traffic classes", list.len()),
                ));
            }
            for (i, &w) in list.iter().enumerate() {
                if w == 0 {
                    return Err(Invalid::new(
                        path.key("weights").index(i),
                        "weights must be at least 1",
                    ));
                }
                out[i] = w;
            }
        }
        Ok(out)
    };
    let only = |field: &str, present: bool, kinds: &str| only_for(path, field, present, kinds);
    Ok(match config.kind {
        SchedulerKind::Fifo | SchedulerKind::StrictPriority | SchedulerKind::FairQueueing => {
            only(
                "weights",
                config.weights.is_some(),
                "drr, wrr, wfq and virtual_clock",
            )?;
            only("quantum", config.quantum.is_some(), "drr")?;
            match config.kind {
                SchedulerKind::Fifo => SchedulerSpec::Fifo,
                SchedulerKind::StrictPriority => SchedulerSpec::StrictPriority,
                _ => SchedulerSpec::FairQueueing,
            }
        }
        SchedulerKind::Wfq => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::Wfq {
                weights: weights()?,
            }
        }
        SchedulerKind::VirtualClock => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::VirtualClock {
                weights: weights()?,
            }
        }
        SchedulerKind::Drr => {
            let quantum = match &config.quantum {
                None => 1500,
                Some(q) => {
                    let bytes = netstep_core::units::parse_size(q)
                        .map_err(|e| Invalid::unit(path.key("quantum"), e))?;
                    if bytes.0 == 0 || bytes.0 > u32::MAX as u64 {
                        return Err(Invalid::new(
                            path.key("quantum"),
                            format!("must be between 1 B and 4 GB, got {q:?}"),
                        ));
                    }
                    bytes.0 as u32
                }
            };
            SchedulerSpec::Drr {
                quantum,
                weights: weights()?,
            }
        }
        SchedulerKind::Wrr => {
            only("quantum", config.quantum.is_some(), "drr")?;
            SchedulerSpec::Wrr {
                weights: weights()?,
            }
        }
    })
}

/// Resolves a `shaper` table (a positive rate and burst).
pub fn shaper_spec(
    config: &crate::config::ShaperConfig,
    path: &FieldPath,
) -> Result<netstep_core::shaping::TokenBucketSpec, Invalid> {
    Ok(netstep_core::shaping::TokenBucketSpec {
        rate: positive_rate(&config.rate, &path.key("rate"))?,
        burst: positive_size(&config.burst, &path.key("burst"))?,
    })
}

/// Resolves a `policer` table (positive rates and sizes, `pir >= cir`).
fn policer_spec(
    config: &crate::config::PolicerConfig,
    path: &FieldPath,
) -> Result<netstep_core::shaping::TrTcmSpec, Invalid> {
    let spec = netstep_core::shaping::TrTcmSpec {
        cir: positive_rate(&config.cir, &path.key("cir"))?,
        cbs: positive_size(&config.cbs, &path.key("cbs"))?,
        pir: positive_rate(&config.pir, &path.key("pir"))?,
        pbs: positive_size(&config.pbs, &path.key("pbs"))?,
    };
    if spec.pir < spec.cir {
        return Err(Invalid::new(
            path.key("pir"),
            format!(
                "the peak rate must be at least the committed rate (RFC 2698): pir {} < cir {}",
                spec.pir, spec.cir
            ),
        ));
    }
    Ok(spec)
}

fn positive_rate(text: &str, path: &FieldPath) -> Result<BitsPerSec, Invalid> {
    let rate = parse_rate(text).map_err(|e| Invalid::unit(path.clone(), e))?;
    if rate.0 == 0 {
        return Err(Invalid::new(
            path.clone(),
            format!("must be positive, got {text:?}"),
        ));
    }
    Ok(rate)
}

fn positive_size(text: &str, path: &FieldPath) -> Result<Bytes, Invalid> {
    let size = netstep_core::units::parse_size(text).map_err(|e| Invalid::unit(path.clone(), e))?;
    if size.0 == 0 {
        return Err(Invalid::new(
            path.clone(),
            format!("must be positive, got {text:?}"),
        ));
    }
    Ok(size)
}

/// An error when `field` is `present` but applies only to other `kinds` of the table.
fn only_for(path: &FieldPath, field: &str, present: bool, kinds: &str) -> Result<(), Invalid> {
    if present {
        return Err(Invalid::new(
            path.key(field),
            format!("applies only to {kinds}"),
        ));
    }
    Ok(())
}

/// Resolves an `aqm` table.
fn aqm_spec(
    config: &crate::config::AqmConfig,
    path: &FieldPath,
) -> Result<netstep_core::queue::AqmSpec, Invalid> {
    use crate::config::AqmKind;
    use netstep_core::queue::{AqmSpec, RedSpec};
    let size = |value: &Option<String>, field: &str| -> Result<Option<u64>, Invalid> {
        value
            .as_ref()
            .map(|v| {
                netstep_core::units::parse_size(v)
                    .map(|b| b.0)
                    .map_err(|e| Invalid::unit(path.key(field), e))
            })
            .transpose()
    };
    let refuse = |field: &str, present: bool, kind: &str| only_for(path, field, present, kind);
    let at_dequeue = config.mark_at == Some(crate::config::MarkAt::Dequeue);
    match config.kind {
        AqmKind::Decbit => {
            if config.mark_at.is_some() {
                return Err(Invalid::new(
                    path.key("mark_at"),
                    "is for red and step (DECbit sets its bit as packets arrive)",
                ));
            }
            refuse("spread", config.spread.is_some(), "red")?;
            // DECbit takes no parameters (its threshold is an average of one packet).
            for (field, present) in [
                ("min", config.min.is_some()),
                ("max", config.max.is_some()),
                ("max_p", config.max_p.is_some()),
                ("weight", config.weight.is_some()),
                ("ecn", config.ecn.is_some()),
            ] {
                refuse(field, present, "red")?;
            }
            refuse("k", config.k.is_some(), "step")?;
            Ok(AqmSpec::DecBit)
        }
        AqmKind::Step => {
            for (field, present) in [
                ("min", config.min.is_some()),
                ("max", config.max.is_some()),
                ("max_p", config.max_p.is_some()),
                ("weight", config.weight.is_some()),
                ("ecn", config.ecn.is_some()),
            ] {
                refuse(field, present, "red")?;
            }
            refuse("spread", config.spread.is_some(), "red")?;
            let k_bytes = size(&config.k, "k")?.ok_or_else(|| {
                Invalid::new(path.clone(), "step marking needs k, e.g. k = \"30KB\"")
            })?;
            Ok(AqmSpec::Step {
                k_bytes,
                at_dequeue,
            })
        }
        AqmKind::Red => {
            refuse("k", config.k.is_some(), "step")?;
            let need = |v: Option<u64>, field: &str| {
                v.ok_or_else(|| Invalid::new(path.clone(), format!("red needs {field}")))
            };
            let min_bytes = need(size(&config.min, "min")?, "min")?;
            let max_bytes = need(size(&config.max, "max")?, "max")?;
            if max_bytes <= min_bytes {
                return Err(Invalid::new(path.key("max"), "must be larger than min"));
            }
            let max_p = config.max_p.unwrap_or(0.1);
            if !(max_p > 0.0 && max_p <= 1.0) {
                return Err(Invalid::new(
                    path.key("max_p"),
                    format!("must be in (0, 1], got {max_p}"),
                ));
            }
            let weight = config.weight.unwrap_or(0.002);
            if !(1e-6..=1.0).contains(&weight) {
                return Err(Invalid::new(
                    path.key("weight"),
                    format!("must be in [0.000001, 1], got {weight}"),
                ));
            }
            let ecn = config.ecn.unwrap_or(false);
            if at_dequeue && !ecn {
                return Err(Invalid::new(
                    path.key("mark_at"),
                    "\"dequeue\" only marks: it needs ecn = true",
                ));
            }
            Ok(AqmSpec::Red(RedSpec {
                min_bytes,
                max_bytes,
                max_p_ppm: (max_p * 1e6).round() as u32,
                weight_ppm: (weight * 1e6).round() as u32,
                ecn,
                spread: config.spread.unwrap_or(true),
                at_dequeue,
            }))
        }
    }
}

/// Reads a custom topology's `nodes_file` into its `hosts` and `switches` (after those the
/// file lists) and counts the rows of its `links_file` (read when the topology is built), so
/// that errors name the file, row and column. Paths become those found (relative to the
/// scenario's folder first). Returns a line per file for the scenario hash.
pub fn read_files(
    config: &mut TopologyConfig,
    base_dir: Option<&std::path::Path>,
) -> Result<Vec<String>, Invalid> {
    use crate::table_file::{TableFile, file_hash, resolve};
    let TopologyConfig::Custom {
        hosts,
        switches,
        nodes_file,
        links_file,
        file_links,
        ..
    } = config
    else {
        return Ok(Vec::new());
    };
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

/// What a generated topology is, by arithmetic (nothing built): its hosts, its link classes
/// (every link table resolved, so their errors are reported) and the class of host links.
/// `None` for a custom topology (its lists are the topology).
pub fn arithmetic(config: &TopologyConfig) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
    let found = match config {
        TopologyConfig::Custom { .. } => return Ok(None),
        TopologyConfig::FatTree {
            k,
            hosts_per_edge,
            links,
            host_links,
            fabric_links,
        } => {
            fat_tree_k(*k)?;
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            let edges = (*k as u64) * (*k as u64) / 2;
            let per_edge = at_least_one(hosts_per_edge.unwrap_or(*k / 2), "hosts_per_edge")? as u64;
            (edges * per_edge, vec![host, fabric])
        }
        TopologyConfig::LeafSpine {
            leaves,
            spines,
            hosts_per_leaf,
            links,
            host_links,
            fabric_links,
        } => {
            at_least_one(*leaves, "leaves")?;
            at_least_one(*spines, "spines")?;
            at_least_one(*hosts_per_leaf, "hosts_per_leaf")?;
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            (*leaves as u64 * *hosts_per_leaf as u64, vec![host, fabric])
        }
        TopologyConfig::Torus {
            dims,
            hosts_per_switch,
            links,
            host_links,
            fabric_links,
        } => {
            let shape = torus_shape(dims, *hosts_per_switch)?;
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            let switches = shape.dims.iter().map(|&n| n as u64).product::<u64>();
            (switches * shape.hosts_per_switch as u64, vec![host, fabric])
        }
        TopologyConfig::Dumbbell {
            left,
            right,
            links,
            host_links,
            fabric_links,
        } => {
            let (host, fabric) = tiers(links, host_links, fabric_links)?;
            let hosts = at_least_one(*left, "left")? as u64 + at_least_one(*right, "right")? as u64;
            (hosts, vec![host, fabric])
        }
        TopologyConfig::RailOptimized { servers, gpus, .. } => {
            // Its classes come from the same code that builds it (a few nodes suffice).
            let mut small = config.clone();
            if let TopologyConfig::RailOptimized { servers, .. } = &mut small {
                *servers = 1;
            }
            let spec = build(&small)?;
            at_least_one(*servers, "servers")?;
            (*servers as u64 * *gpus as u64, spec.classes)
        }
    };
    Ok(Some(found))
}

//! Builds the [`TopologySpec`] a scenario's `[topology]` describes. Each topology kind lives in
//! one file that owns its config type, its build, its size by arithmetic (nothing built) and
//! its hosts and link classes by arithmetic, behind `TopologyKind`; [`TopologyConfig`]
//! registers the kinds, one line each (see ARCHITECTURE.md, "How to add a topology"). The size
//! checks every kind shares (limits, memory, node degree) live here, once.

pub mod links;

use netstep_core::topology::{LinkClass, NodeKind, RoutingKind, TopologySpec};
use netstep_core::units::{BitsPerSec, BufferSize, Bytes, SimTime};
use serde::{Deserialize, Serialize};

use crate::error::{FieldPath, Invalid};

pub use custom::CustomLink;
pub use links::shaper_spec;

/// Defaults when no link table sets a value.
pub const DEFAULT_RATE: BitsPerSec = BitsPerSec(100_000_000_000);
/// Default propagation delay.
pub const DEFAULT_DELAY: SimTime = SimTime::from_us(1);
/// Default egress buffer.
pub const DEFAULT_BUFFER: BufferSize = BufferSize::Bytes(Bytes(1_000_000));

/// Largest FatTree radix accepted (FatTree-256: 4 M hosts, 25 M ports).
pub const MAX_K: u32 = 256;

/// What every topology kind does: the one interface building and sizing dispatch through.
pub(crate) trait TopologyKind {
    /// Builds the topology.
    fn build(&self) -> Result<TopologySpec, Invalid>;
    /// Nodes, ports and the largest node degree, from the file alone (nothing built).
    fn counts(&self) -> Counts;
    /// Hosts and link classes by arithmetic (every link table resolved); `None` for a
    /// topology whose lists are the topology.
    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid>;
    /// A host's line rate, bits per second (what a traffic `load` is a fraction of: the sum
    /// of its ports' rates), given the classes [`TopologyKind::arithmetic`] gave: the first
    /// class's (host links first), for kinds whose hosts have one port.
    fn host_rate_bps(&self, classes: &[LinkClass]) -> f64 {
        classes.first().map_or(0.0, |c| c.rate.0 as f64)
    }
}

/// Declares each kind's module and [`TopologyConfig`] from one registration line per kind:
/// `Variant(module::ConfigType)`, the variant's snake-case name being the `kind` string.
macro_rules! topology_kinds {
    ($($(#[$doc:meta])* $variant:ident($module:ident::$ty:ident),)*) => {
        $(pub mod $module;)*

        /// `[topology]`: `kind` picks one of the built-in shapes or a custom graph, whose
        /// config type holds the table's other fields.
        #[derive(Clone, Debug, Deserialize, Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        pub enum TopologyConfig {
            $($(#[$doc])* $variant($module::$ty),)*
        }

        impl TopologyConfig {
            /// The topology's kind behind the interface every kind implements.
            fn kind(&self) -> &dyn TopologyKind {
                match self {
                    $(TopologyConfig::$variant(k) => k,)*
                }
            }
        }
    };
}

topology_kinds! {
    /// k-ary FatTree (`fat_tree.rs`).
    FatTree(fat_tree::FatTreeConfig),
    /// Leaf-spine (`leaf_spine.rs`).
    LeafSpine(leaf_spine::LeafSpineConfig),
    /// Rail-optimized AI-cluster fabric (`rail.rs`).
    RailOptimized(rail::RailConfig),
    /// Pods, racks, fabs and planes of spines (`cluster.rs`).
    Cluster(cluster::ClusterConfig),
    /// AI clusters of SimAI's generator's shapes (`gpu_cluster.rs`).
    GpuCluster(gpu_cluster::GpuClusterConfig),
    /// 2D or 3D torus (`torus.rs`).
    Torus(torus::TorusConfig),
    /// Dumbbell (`dumbbell.rs`).
    Dumbbell(dumbbell::DumbbellConfig),
    /// Any graph of named hosts and switches (`custom.rs`).
    Custom(custom::CustomConfig),
}

/// Builds the topology.
pub fn build(config: &TopologyConfig) -> Result<TopologySpec, Invalid> {
    config.kind().build()
}

/// Nodes, ports and the largest node degree of the topology `config` describes, computed from
/// the file alone (nothing is built), with the field to blame when one is too large.
pub fn counts(config: &TopologyConfig) -> Counts {
    config.kind().counts()
}

/// What a generated topology is, by arithmetic (nothing built): its hosts, its link classes
/// (every link table resolved, so their errors are reported) and the class of host links.
/// `None` for a custom topology (its lists are the topology).
pub fn arithmetic(config: &TopologyConfig) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
    config.kind().arithmetic()
}

/// A host's line rate, bits per second, given the classes [`arithmetic`] gave: the sum of its
/// ports' rates, as `load`s take it.
pub fn host_rate_bps(config: &TopologyConfig, classes: &[LinkClass]) -> f64 {
    config.kind().host_rate_bps(classes)
}

/// Reads a custom topology's `nodes_file` into its `hosts` and `switches` and counts the rows
/// of its `links_file` (`custom::read_files`); nothing for the other kinds. Returns a line per
/// file for the scenario hash.
pub fn read_files(
    config: &mut TopologyConfig,
    base_dir: Option<&std::path::Path>,
) -> Result<Vec<String>, Invalid> {
    match config {
        TopologyConfig::Custom(custom) => custom::read_files(custom, base_dir),
        _ => Ok(Vec::new()),
    }
}

/// A count field that must be at least one (`topology.<field>`).
pub(crate) fn at_least_one(value: u32, field: &str) -> Result<u32, Invalid> {
    if value == 0 {
        return Err(Invalid::new(
            FieldPath::of(&["topology", field]),
            "must be at least 1, got 0",
        ));
    }
    Ok(value)
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
    if !matches!(
        spec.routing,
        RoutingKind::ShortestPath | RoutingKind::ShortestPathRules(_)
    ) {
        return 0;
    }
    shortest_path_entries(spec)
}

/// Entries of one shortest-path routing table over `spec` (what each failure epoch builds,
/// whatever the topology's own routing).
pub fn shortest_path_entries(spec: &TopologySpec) -> u64 {
    let is_host = |n: u32| spec.nodes[n as usize].kind == NodeKind::Host;
    let mut degree = vec![0u32; spec.nodes.len()];
    for l in &spec.links {
        degree[l.a as usize] += 1;
        degree[l.b as usize] += 1;
    }
    // One table per node a host of one port hangs off, one per host of several ports.
    let mut root = vec![false; spec.nodes.len()];
    for l in &spec.links {
        for (host, peer) in [(l.a, l.b), (l.b, l.a)] {
            if is_host(host) {
                let own = degree[host as usize] > 1;
                root[if own { host } else { peer } as usize] = true;
            }
        }
    }
    let tables = root.iter().filter(|&&r| r).count() as u64;
    tables.saturating_mul(spec.nodes.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every generated kind's sizes by arithmetic (what the limits and `netstep validate`
    /// use) equal the sizes of the topology it builds, and its hosts by arithmetic the built
    /// hosts.
    #[test]
    fn counts_by_arithmetic_equal_the_built_topology() {
        let kinds = [
            "kind = \"fat_tree\"\nk = 4",
            "kind = \"fat_tree\"\nk = 6\nhosts_per_edge = 5",
            "kind = \"leaf_spine\"\nleaves = 3\nspines = 2\nhosts_per_leaf = 5",
            "kind = \"rail_optimized\"\nservers = 3\ngpus = 4\nspines = 2",
            "kind = \"torus\"\ndims = [3, 4]\nhosts_per_switch = 2",
            "kind = \"torus\"\ndims = [2, 3, 4]",
            "kind = \"dumbbell\"\nleft = 3\nright = 5",
            "kind = \"cluster\"\npods = 2\nracks_per_pod = 3\nhosts_per_rack = 2\nfabs_per_pod = 2\nspines_per_plane = 3",
            "kind = \"cluster\"\npods = 3\nracks_per_pod = 4\nhosts_per_rack = 2\noversubscription = 2\nlinks = { rate = \"40Gbps\" }",
        ];
        for text in kinds {
            let config: TopologyConfig = toml::from_str(text).unwrap();
            let spec = build(&config).unwrap();
            let c = counts(&config);
            assert_eq!(c.nodes, spec.nodes.len() as u64, "{text}");
            assert_eq!(c.ports, 2 * spec.links.len() as u64, "{text}");
            let mut degree = vec![0u64; spec.nodes.len()];
            for l in &spec.links {
                degree[l.a as usize] += 1;
                degree[l.b as usize] += 1;
            }
            let max = degree.iter().copied().max().unwrap();
            assert!(c.degree >= max, "{text}: degree {} < built {max}", c.degree);
            let (hosts, classes) = arithmetic(&config).unwrap().unwrap();
            assert_eq!(hosts, spec.hosts().len() as u64, "{text}");
            assert_eq!(classes, spec.classes, "{text}");
        }
    }
}

//! `kind = "cluster"`: pods of racks under fabric switches and planes of spines, as Meta's
//! data-center fabric and the Parsimon / m3 evaluations build it, routed by arithmetic.

use netstep_core::topology::{self, Cluster, ClusterLinks, LinkClass, TopologySpec};
use serde::{Deserialize, Serialize};

use super::links::tier_class;
use super::{Counts, TopologyKind, at_least_one};
use crate::config::LinkConfig;
use crate::error::{FieldPath, Invalid};

/// A three-tier cluster: `pods` x `racks_per_pod` racks of `hosts_per_rack` hosts, each rack's
/// ToR linked to every fab of its pod, fab `f` of every pod linked to every spine of plane `f`.
/// Example (m3's fig-8 cluster, 2:1): `kind = "cluster"`, `pods = 2`, `racks_per_pod = 16`,
/// `hosts_per_rack = 8`, `fabs_per_pod = 2`, `oversubscription = 2`,
/// `host_links = { rate = "10Gbps" }`, `links = { rate = "40Gbps", delay = "1us" }`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterConfig {
    /// Pods; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `pods = 2`
    pub pods: u32,
    /// Racks (ToR switches) per pod; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `racks_per_pod = 16`
    pub racks_per_pod: u32,
    /// Hosts per rack; at least 1.
    ///
    /// Unit: integer · Default: required · Example: `hosts_per_rack = 8`
    pub hosts_per_rack: u32,
    /// Fabric switches per pod, which is also the number of spine planes (fab `f` of every
    /// pod links to every spine of plane `f`); at least 1.
    ///
    /// Unit: integer · Default: 4 · Example: `fabs_per_pod = 2`
    pub fabs_per_pod: Option<u32>,
    /// Spines per plane; at least 1. Give this or `oversubscription`, not both.
    ///
    /// Unit: integer · Default: from `oversubscription` · Example: `spines_per_plane = 16`
    pub spines_per_plane: Option<u32>,
    /// Oversubscription at the fabs: a fab's downlink capacity (`racks_per_pod` ToR-fab links)
    /// over its uplink capacity (`spines_per_plane` fab-spine links), which sets
    /// `spines_per_plane` = `racks_per_pod` x ToR-fab rate / (`oversubscription` x fab-spine
    /// rate); that must come out a whole number of at least 1. Give this or
    /// `spines_per_plane`, not both.
    ///
    /// Unit: number, at least 1 · Default: 1 (when `spines_per_plane` is not given) ·
    /// Example: `oversubscription = 2`
    pub oversubscription: Option<f64>,
    /// Link parameters of every link (a link table).
    ///
    /// Unit: table · Default: none (the link parameters' defaults) · Example:
    /// `links = { rate = "40Gbps", delay = "1us" }`
    pub links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for host-to-ToR links, field by field.
    ///
    /// Unit: table · Default: none · Example: `host_links = { rate = "10Gbps" }`
    pub host_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for ToR-to-fab links, field by field.
    ///
    /// Unit: table · Default: none · Example: `tor_fab_links = { buffer = "400KB" }`
    pub tor_fab_links: Option<Box<LinkConfig>>,
    /// Overrides of `links` for fab-to-spine links, field by field.
    ///
    /// Unit: table · Default: none · Example: `fab_spine_links = { rate = "100Gbps" }`
    pub fab_spine_links: Option<Box<LinkConfig>>,
}

/// Default fabs per pod (Meta's fabric has four planes).
const DEFAULT_FABS: u32 = 4;

impl ClusterConfig {
    /// The three tiers' link classes.
    fn classes(&self) -> Result<ClusterLinks, Invalid> {
        let class = |tier: &Option<Box<LinkConfig>>, field: &str| tier_class(&self.links, tier, field);
        Ok(ClusterLinks {
            host: class(&self.host_links, "host_links")?,
            tor_fab: class(&self.tor_fab_links, "tor_fab_links")?,
            fab_spine: class(&self.fab_spine_links, "fab_spine_links")?,
        })
    }

    /// The shape, with `spines_per_plane` from `oversubscription` when it is given.
    fn shape(&self, links: &ClusterLinks) -> Result<Cluster, Invalid> {
        let top = FieldPath::of(&["topology"]);
        let racks_per_pod = at_least_one(self.racks_per_pod, "racks_per_pod")?;
        let spines_per_plane = match (self.spines_per_plane, self.oversubscription) {
            (Some(_), Some(_)) => {
                return Err(Invalid::new(
                    top.key("oversubscription"),
                    "give spines_per_plane or oversubscription, not both (one sets the other)",
                ));
            }
            (Some(s), None) => at_least_one(s, "spines_per_plane")?,
            (None, ratio) => {
                let ratio = ratio.unwrap_or(1.0);
                let path = top.key("oversubscription");
                if !(ratio.is_finite() && ratio >= 1.0) {
                    return Err(Invalid::new(path, format!("must be at least 1, got {ratio}")));
                }
                let down = racks_per_pod as f64 * links.tor_fab.rate.0 as f64;
                let spines = down / (ratio * links.fab_spine.rate.0 as f64);
                let whole = spines.round();
                if whole < 1.0 || (spines - whole).abs() > 1e-9 * spines.max(1.0) {
                    return Err(Invalid::new(
                        path,
                        format!(
                            "{ratio}:1 needs {spines} spines per plane ({racks_per_pod} ToR-fab links of {} over {ratio} x {}); choose an oversubscription that gives a whole number of at least 1, or give spines_per_plane",
                            links.tor_fab.rate, links.fab_spine.rate
                        ),
                    ));
                }
                whole as u32
            }
        };
        Ok(Cluster {
            pods: at_least_one(self.pods, "pods")?,
            racks_per_pod,
            hosts_per_rack: at_least_one(self.hosts_per_rack, "hosts_per_rack")?,
            fabs_per_pod: at_least_one(self.fabs_per_pod.unwrap_or(DEFAULT_FABS), "fabs_per_pod")?,
            spines_per_plane,
        })
    }
}

impl TopologyKind for ClusterConfig {
    fn build(&self) -> Result<TopologySpec, Invalid> {
        let links = self.classes()?;
        let shape = self.shape(&links)?;
        let nodes = [
            shape.pods as u64 * shape.racks_per_pod as u64 * shape.hosts_per_rack as u64,
            shape.pods as u64 * shape.racks_per_pod as u64,
            shape.pods as u64 * shape.fabs_per_pod as u64,
            shape.fabs_per_pod as u64 * shape.spines_per_plane as u64,
        ];
        if nodes.iter().sum::<u64>() > u32::MAX as u64 / 2 {
            return Err(Invalid::new(
                FieldPath::of(&["topology", "pods"]),
                format!("{} nodes are too many", nodes.iter().sum::<u64>()),
            ));
        }
        Ok(topology::cluster(shape, links))
    }

    fn counts(&self) -> Counts {
        let s = |a: u64, b: u64| a.saturating_mul(b);
        let (p, r, h) = (
            self.pods as u64,
            self.racks_per_pod as u64,
            self.hosts_per_rack as u64,
        );
        let f = self.fabs_per_pod.unwrap_or(DEFAULT_FABS) as u64;
        // Without building the classes: the spines the shape gets, or a bound of racks per
        // pod (an oversubscription of at least 1 over equal rates).
        let sp = match self.classes().and_then(|l| self.shape(&l)) {
            Ok(shape) => shape.spines_per_plane as u64,
            Err(_) => self.spines_per_plane.map_or(r, u64::from),
        };
        let hosts = s(s(p, r), h);
        let links = hosts
            .saturating_add(s(s(p, r), f))
            .saturating_add(s(s(p, f), sp));
        Counts {
            nodes: hosts
                .saturating_add(s(p, r))
                .saturating_add(s(p, f))
                .saturating_add(s(f, sp)),
            ports: s(links, 2),
            degree: h.saturating_add(f).max(r.saturating_add(sp)).max(p),
            field: if p >= r { "pods" } else { "racks_per_pod" },
        }
    }

    fn arithmetic(&self) -> Result<Option<(u64, Vec<LinkClass>)>, Invalid> {
        let links = self.classes()?;
        let shape = self.shape(&links)?;
        let hosts = shape.pods as u64 * shape.racks_per_pod as u64 * shape.hosts_per_rack as u64;
        Ok(Some((hosts, vec![links.host, links.tor_fab, links.fab_spine])))
    }
}

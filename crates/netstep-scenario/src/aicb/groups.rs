//! SimAI's communication groups and ring channels: which ranks a rank talks to in each
//! parallelism dimension, and the rings SimAI's NCCL model runs over them.
//!
//! This follows SimAI's `MockNcclGroup` (`astra-sim/system/MockNcclGroup.cc`, SimAI `f5efb5a`:
//! the constructor at lines 26-160 forms the groups, `gen_local_ring` and `genringchannels` at
//! lines 197-279 form the rings), as SimAI calls it from `Sys::mock_nccl_grobal_group_init`
//! (`Sys.cc:1355-1370`). With `W` GPUs (SimAI takes the topology file's GPU count, not the
//! workload header's `all_gpus`), `T` = TP, `E` = EP, `DP = W / T` and `DP_EP = DP / E`:
//!
//! - **TP**: `W / T` groups of `T` consecutive ranks; group `i` is `{i·T + j | j < T}`.
//! - **DP**: `T` groups at stride `T`; group `i` is `{i + j·T | j < DP}`.
//! - **EP**: within each window of `E·T` ranks (`E` consecutive TP groups), one group per slot
//!   `k < T` of a TP group, at stride `T`: `{(b·E + m)·T + k | m < E}`.
//! - **DP_EP**: slot `k` of TP groups `i, i+E, i+2E, ...`, i.e. stride `E·T`:
//!   `{(i + m·E)·T + k | m < DP_EP}`, for `i < E`.
//! - **PP is forced to 1**: SimAI sets `PP_size = 1` whatever the header says (`Sys.cc:1363`)
//!   and forms no pipeline groups, so neither does this module.
//!
//! Groups are listed per dimension in SimAI's creation order, each once: SimAI creates every
//! EP group `E` times and every DP_EP group `DP_EP` times (a redundant loop; `GroupIndex`
//! points at the last copy), which changes nothing but group numbering.
//!
//! Where netstep differs: SimAI forms no group for a dimension of size 1 (no collective runs
//! there), and with `T = 1` it forms no EP or DP_EP groups at all (it builds them from the TP
//! groups, of which there are none), so an EP collective then has no group. Here every
//! dimension partitions the ranks: a dimension of size 1 has one-rank groups, and EP and DP_EP
//! follow the formulas above for any `T`; a one-rank group has no rings.
//!
//! Rings (NCCL channels): a group on `N` servers has `L = ranks / N` *local ranks*, the first
//! `L` of its sorted ranks, and one ring per local rank. Ring `c` uses the local ranks rotated
//! by `c`, `local_c = [local[c], local[c+1], ..., local[c-1]]`, and visits on server `i` the
//! ranks `local_c[j] + i·delta` (`delta` = the group's rank `L` minus its rank 0), then moves to
//! server `i+1`, wrapping from the last server back to the first. For a group on one server
//! every ring is the same cycle from a different start; across servers the hop from one server
//! to the next changes rail for `c > 0` (e.g. `0 → 10` in a DP group of stride 2 on 8-GPU
//! servers), which is SimAI's behaviour, not NCCL's rail-aligned rings.
//!
//! `N` is SimAI's `nNodes`: for TP it is `ceil(T / gpus_per_server)` (not a count of the
//! servers the group touches); for the others the number of distinct servers
//! (`rank / gpus_per_server`) of the group's ranks. SimAI's construction assumes every server
//! holds the same number of the group's ranks at the same offsets; where that fails (e.g. a TP
//! that neither divides nor is a multiple of the GPUs per server) its rings skip or repeat
//! ranks, and [`Group::rings`] refuses the group instead. SimAI also records, per rank and
//! ring, the ring's entry and exit rank on each server (for PXN, off by default); they are not
//! kept here.

use std::fmt;

/// A parallelism dimension: SimAI's `GroupType` without PP (forced to 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Dimension {
    /// Tensor parallelism: consecutive ranks.
    Tp,
    /// Data parallelism: stride TP.
    Dp,
    /// Expert parallelism: stride TP within a window of EP·TP ranks.
    Ep,
    /// Data parallelism across expert-parallel groups: stride EP·TP.
    DpEp,
}

impl Dimension {
    /// Every dimension, in the order SimAI creates its groups.
    pub const ALL: [Dimension; 4] = [Dimension::Tp, Dimension::Dp, Dimension::Ep, Dimension::DpEp];

    /// The name SimAI uses (`TP`, `DP`, `EP`, `DP_EP`).
    pub fn name(self) -> &'static str {
        match self {
            Dimension::Tp => "TP",
            Dimension::Dp => "DP",
            Dimension::Ep => "EP",
            Dimension::DpEp => "DP_EP",
        }
    }
}

impl fmt::Display for Dimension {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The sizes that decide every group: the GPU count, GPUs per server, TP and EP. Checked as
/// SimAI's `MockNcclGroup` checks them (`MockNcclGroup.cc:30-45`), with PP = 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupLayout {
    world: u32,
    gpus_per_server: u32,
    tp: u32,
    ep: u32,
}

impl GroupLayout {
    /// A layout of `world` GPUs on servers of `gpus_per_server`, with tensor parallelism `tp`
    /// and expert parallelism `ep`. Refused (as SimAI forms no groups then) unless the world is
    /// a whole number of servers, `tp` divides the world and `ep` divides `DP = world / tp`.
    pub fn new(world: u32, gpus_per_server: u32, tp: u32, ep: u32) -> Result<GroupLayout, String> {
        if world == 0 || gpus_per_server == 0 || tp == 0 || ep == 0 {
            return Err(format!(
                "GPUs {world}, GPUs per server {gpus_per_server}, TP {tp} and EP {ep} must all \
                 be at least 1"
            ));
        }
        if !world.is_multiple_of(gpus_per_server) {
            return Err(format!(
                "{world} GPUs are not a whole number of servers of {gpus_per_server} GPUs"
            ));
        }
        if !world.is_multiple_of(tp) {
            return Err(format!("TP {tp} does not divide the {world} GPUs"));
        }
        let dp = world / tp;
        if !dp.is_multiple_of(ep) {
            return Err(format!(
                "EP {ep} does not divide DP = {world} GPUs / TP {tp} = {dp}"
            ));
        }
        Ok(GroupLayout {
            world,
            gpus_per_server,
            tp,
            ep,
        })
    }

    /// The number of GPUs (ranks `0..world`).
    pub fn world(&self) -> u32 {
        self.world
    }

    /// GPUs per server.
    pub fn gpus_per_server(&self) -> u32 {
        self.gpus_per_server
    }

    /// The ranks in one group of `dimension`: TP, `DP = world / TP`, EP, `DP_EP = DP / EP`.
    pub fn size(&self, dimension: Dimension) -> u32 {
        let dp = self.world / self.tp;
        match dimension {
            Dimension::Tp => self.tp,
            Dimension::Dp => dp,
            Dimension::Ep => self.ep,
            Dimension::DpEp => dp / self.ep,
        }
    }

    /// The number of groups of `dimension` (`world / size`).
    pub fn group_count(&self, dimension: Dimension) -> u32 {
        self.world / self.size(dimension)
    }

    /// The index (in SimAI's creation order) of the group of `dimension` holding `rank`;
    /// `None` for a rank outside the world.
    pub fn group_index(&self, rank: u32, dimension: Dimension) -> Option<u32> {
        if rank >= self.world {
            return None;
        }
        let (tp, ep) = (self.tp, self.ep);
        let (tp_group, slot) = (rank / tp, rank % tp);
        Some(match dimension {
            Dimension::Tp => tp_group,
            Dimension::Dp => slot,
            Dimension::Ep => (tp_group / ep) * tp + slot,
            Dimension::DpEp => (tp_group % ep) * tp + slot,
        })
    }

    /// The ring channels of every group of `dimension`, in group order (SimAI forms them per
    /// group, one per rank the group has on a server, so they are counted per group).
    pub fn channel_counts(&self, dimension: Dimension) -> Result<Vec<u64>, String> {
        (0..self.group_count(dimension))
            .map(|i| {
                let group = self.group(dimension, i).expect("an index below the count");
                Ok(group.rings()?.len() as u64)
            })
            .collect()
    }

    /// Group `index` of `dimension` (SimAI's creation order); `None` past the last group.
    pub fn group(&self, dimension: Dimension, index: u32) -> Option<Group> {
        if index >= self.group_count(dimension) {
            return None;
        }
        let (tp, ep) = (self.tp, self.ep);
        let size = self.size(dimension);
        let ranks: Vec<u32> = match dimension {
            Dimension::Tp => (0..size).map(|j| index * tp + j).collect(),
            Dimension::Dp => (0..size).map(|j| index + j * tp).collect(),
            Dimension::Ep => {
                let (window, slot) = (index / tp, index % tp);
                (0..size).map(|m| (window * ep + m) * tp + slot).collect()
            }
            Dimension::DpEp => {
                let (first, slot) = (index / tp, index % tp);
                (0..size).map(|m| (first + m * ep) * tp + slot).collect()
            }
        };
        let servers = match dimension {
            Dimension::Tp => tp.div_ceil(self.gpus_per_server),
            _ => {
                let mut servers: Vec<u32> =
                    ranks.iter().map(|r| r / self.gpus_per_server).collect();
                servers.dedup();
                servers.len() as u32
            }
        };
        Some(Group {
            dimension,
            index,
            ranks,
            servers,
        })
    }

    /// The group of `dimension` holding `rank`; `None` for a rank outside the world.
    pub fn group_of(&self, rank: u32, dimension: Dimension) -> Option<Group> {
        self.group(dimension, self.group_index(rank, dimension)?)
    }

    /// Every group of `dimension`, in SimAI's creation order.
    pub fn groups(&self, dimension: Dimension) -> Vec<Group> {
        (0..self.group_count(dimension))
            .filter_map(|index| self.group(dimension, index))
            .collect()
    }
}

/// One communication group: its ranks in SimAI's order (ascending) and its server count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    /// The dimension it belongs to.
    pub dimension: Dimension,
    /// Its index within the dimension, in SimAI's creation order.
    pub index: u32,
    /// Its ranks, ascending (the order SimAI creates them in).
    pub ranks: Vec<u32>,
    /// SimAI's `nNodes`: `ceil(TP / gpus_per_server)` for TP, else the distinct servers of
    /// the ranks.
    pub servers: u32,
}

impl Group {
    /// The group's ring channels as SimAI forms them (see the module docs): one per local
    /// rank, none for a one-rank group. Refused where SimAI's construction would not visit
    /// each of the group's ranks exactly once.
    pub fn rings(&self) -> Result<Vec<Ring>, String> {
        let n = self.ranks.len();
        if n < 2 {
            return Ok(Vec::new());
        }
        let servers = (self.servers as usize).max(1);
        let local_count = n / servers;
        let mut sorted = self.ranks.clone();
        sorted.sort_unstable();
        let local = &sorted[..local_count];
        let delta = if servers > 1 {
            u64::from(self.ranks[local_count]) - u64::from(self.ranks[0])
        } else {
            0
        };
        let mut rings = Vec::with_capacity(local_count);
        for channel in 0..local_count {
            let mut order = Vec::with_capacity(local_count * servers);
            for server in 0..servers as u64 {
                for j in 0..local_count {
                    order.push(u64::from(local[(channel + j) % local_count]) + server * delta);
                }
            }
            let mut visited = order.clone();
            visited.sort_unstable();
            if !visited
                .iter()
                .copied()
                .eq(sorted.iter().map(|&r| u64::from(r)))
            {
                return Err(format!(
                    "{} group {} (ranks {}) is spread unevenly over its {} servers: SimAI's \
                     ring channel {channel} would visit {} instead of each of its ranks once",
                    self.dimension,
                    self.index,
                    list(&self.ranks),
                    self.servers,
                    list(&order),
                ));
            }
            rings.push(Ring {
                order: order.into_iter().map(|r| r as u32).collect(),
            });
        }
        Ok(rings)
    }
}

/// Up to 8 values of a list, for messages.
fn list<T: fmt::Display>(values: &[T]) -> String {
    let mut shown: Vec<String> = values.iter().take(8).map(T::to_string).collect();
    if values.len() > 8 {
        shown.push(format!("... ({} in all)", values.len()));
    }
    shown.join(" ")
}

/// One ring channel: the group's ranks in the order data flows, starting at the ring's first
/// local rank; the last rank sends to the first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ring {
    order: Vec<u32>,
}

impl Ring {
    /// The ranks in ring order.
    pub fn ranks(&self) -> &[u32] {
        &self.order
    }

    /// The rank `rank` sends to; `None` if it is not on the ring. Linear in the ring's length.
    pub fn next(&self, rank: u32) -> Option<u32> {
        let at = self.order.iter().position(|&r| r == rank)?;
        Some(self.order[(at + 1) % self.order.len()])
    }

    /// The rank `rank` receives from; `None` if it is not on the ring. Linear in the ring's
    /// length.
    pub fn prev(&self, rank: u32) -> Option<u32> {
        let at = self.order.iter().position(|&r| r == rank)?;
        Some(self.order[(at + self.order.len() - 1) % self.order.len()])
    }
}

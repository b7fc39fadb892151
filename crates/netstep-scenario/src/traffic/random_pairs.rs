//! `kind = "random_pairs"`: `count` flows between seeded uniformly random host pairs
//! (src != dst), all alike.

use serde::{Deserialize, Serialize};

use super::common::{random_pair, require_two_hosts};
use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::transport::TransportConfig;

/// `count` flows between seeded uniformly random host pairs (src != dst). Example:
/// `kind = "random_pairs"`, `count = 100`, `size = "1MB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RandomPairsConfig {
    /// Traffic class (0-7) of the block's flows. Default 0.
    pub class: Option<u8>,
    /// Number of flows.
    pub count: u32,
    /// Payload per flow (or give `packets`).
    pub size: Option<String>,
    /// Packets per flow (open loop) (or give `size`).
    pub packets: Option<u32>,
    /// Start time of every flow. Default `"0s"`.
    pub start: Option<String>,
    /// Transport (default: the top-level `[transport]`).
    pub transport: Option<TransportConfig>,
}

impl TrafficKind for RandomPairsConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, _on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        Ok(self.count as u64)
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let same = b.alike(
            &self.transport,
            self.class,
            &self.size,
            self.packets,
            &self.start,
        )?;
        require_two_hosts(b.hosts, &b.path)?;
        if self.count == 0 {
            return Err(Invalid::new(
                b.path.key("count"),
                "must be at least 1 (a block of no flows)",
            ));
        }
        b.check_flows(self.count as u64, &b.path.key("count"))?;
        for _ in 0..self.count {
            let (src, dst) = random_pair(&mut b.rng, b.hosts);
            b.out.flows.push(same.flow(src, dst, same.start));
        }
        Ok(())
    }
}

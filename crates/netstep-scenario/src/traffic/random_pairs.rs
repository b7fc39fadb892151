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
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// Number of flows, each between a uniformly random host pair (src != dst, seeded); at
    /// least 1.
    ///
    /// Unit: integer · Default: required · Example: `count = 64`
    pub count: u32,
    /// Payload per flow; give `size` or `packets`, not both.
    ///
    /// Unit: size · Default: — (give this or `packets`) · Example: `size = "1MB"`
    pub size: Option<String>,
    /// Packets per flow instead of `size`: that many packets (open loop), `packets x mss` bytes
    /// (TCP) or `packets x mtu` bytes (RDMA).
    ///
    /// Unit: count · Default: — (give this or `size`) · Example: `packets = 100`
    pub packets: Option<u32>,
    /// Start time of every flow.
    ///
    /// Unit: duration · Default: `"0s"` · Example: `start = "1ms"`
    pub start: Option<String>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
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

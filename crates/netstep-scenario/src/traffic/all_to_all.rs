//! `kind = "all_to_all"`: every host sends one flow to every other host, all at `start`.

use serde::{Deserialize, Serialize};

use super::common::require_two_hosts;
use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::transport::TransportConfig;

/// Every host sends one flow to every other host, all at `start`. Example:
/// `kind = "all_to_all"`, `size = "100KB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AllToAllConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
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

impl TrafficKind for AllToAllConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        Ok(on.hosts.saturating_mul(on.hosts.saturating_sub(1)))
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
        let n = b.hosts.len() as u64;
        b.check_flows(n.saturating_mul(n - 1), &b.path)?;
        // Source by source, destinations in host order (each host's own flows in one run of
        // ids).
        for &src in b.hosts {
            for &dst in b.hosts.iter().filter(|&&d| d != src) {
                b.out.flows.push(same.flow(src, dst, same.start));
            }
        }
        Ok(())
    }
}

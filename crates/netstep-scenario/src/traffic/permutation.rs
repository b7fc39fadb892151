//! `kind = "permutation"`: every host sends one flow to one other host and receives one, a
//! derangement of the hosts: seeded and uniformly random, or across the bisection (host `i`
//! of `n`, in node order, to host `(i + n/2) mod n`: NSX's benchmark, "each NIC sending at full
//! line rate to another NIC crossing the entire network hierarchy", since the generated
//! topologies number hosts pod by pod and leaf by leaf).

use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::transport::TransportConfig;

/// Every host sends one flow to one other host and receives one (a derangement). Example:
/// `kind = "permutation"`, `size = "1MB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PermutationConfig {
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
    /// Host `i` of `n` (in node order) sends to host `(i + n/2) mod n` instead of along a
    /// uniformly random derangement (seeded); needs an even number of hosts.
    ///
    /// Unit: bool · Default: false · Example: `across_bisection = true`
    pub across_bisection: Option<bool>,
    /// Transport of the block's flows: a table with the fields of `[transport]` (`kind` and
    /// that kind's fields).
    ///
    /// Unit: table · Default: the top-level `[transport]` · Example:
    /// `transport = { kind = "tcp", cc = "dctcp" }`
    pub transport: Option<TransportConfig>,
}

impl TrafficKind for PermutationConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        Ok(on.hosts)
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let same = b.alike(
            &self.transport,
            self.class,
            &self.size,
            self.packets,
            &self.start,
        )?;
        b.check_flows(b.hosts.len() as u64, &b.path)?;
        let across = self.across_bisection.unwrap_or(false);
        let dst = destinations(b.hosts.len(), across, &mut b.rng, &b.path)?;
        for (i, d) in dst.into_iter().enumerate() {
            b.out
                .flows
                .push(same.flow(b.hosts[i], b.hosts[d], same.start));
        }
        Ok(())
    }
}

/// The destination of each host (by position in `hosts`): `dst[i]` for host `i`, never `i`.
pub fn destinations(
    n: usize,
    across_bisection: bool,
    rng: &mut Pcg64Mcg,
    path: &FieldPath,
) -> Result<Vec<usize>, Invalid> {
    if n < 2 {
        return Err(Invalid::new(
            path.clone(),
            format!("a permutation needs at least 2 hosts, the topology has {n}"),
        ));
    }
    if across_bisection {
        if n % 2 == 1 {
            return Err(Invalid::new(
                path.key("across_bisection"),
                format!(
                    "needs an even number of hosts to pair the two halves, the topology has {n}"
                ),
            ));
        }
        return Ok((0..n).map(|i| (i + n / 2) % n).collect());
    }
    // A uniformly random derangement: Fisher-Yates shuffles until one has no fixed point
    // (about e tries on average, each linear).
    let mut dst: Vec<usize> = (0..n).collect();
    loop {
        for i in (1..n).rev() {
            let j = (rng.next_u64() % (i as u64 + 1)) as usize;
            dst.swap(i, j);
        }
        if dst.iter().enumerate().all(|(i, &d)| i != d) {
            return Ok(dst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn every_host_sends_once_and_receives_once_never_to_itself() {
        let path = FieldPath::of(&["traffic"]);
        let mut rng = Pcg64Mcg::seed_from_u64(3);
        for n in [2, 3, 10, 101] {
            for across in [false, true] {
                if across && n % 2 == 1 {
                    assert!(destinations(n, across, &mut rng, &path).is_err());
                    continue;
                }
                let dst = destinations(n, across, &mut rng, &path).unwrap();
                let mut seen = vec![false; n];
                for (i, &d) in dst.iter().enumerate() {
                    assert_ne!(i, d, "a host sends to itself");
                    assert!(!seen[d], "a host receives twice");
                    seen[d] = true;
                }
            }
        }
        assert_eq!(
            destinations(4, true, &mut rng, &path).unwrap(),
            vec![2, 3, 0, 1]
        );
        assert!(destinations(1, false, &mut rng, &path).is_err());
    }

    #[test]
    fn random_derangements_are_uniform() {
        // n = 3 has two derangements, each with probability 1/2: 20,000 draws, a binomial
        // standard deviation of 71, so 4 sigma is 283.
        let path = FieldPath::of(&["traffic"]);
        let mut rng = Pcg64Mcg::seed_from_u64(9);
        let first = (0..20_000)
            .filter(|_| destinations(3, false, &mut rng, &path).unwrap() == vec![1, 2, 0])
            .count() as i64;
        assert!((first - 10_000).abs() < 283, "{first}");
    }
}

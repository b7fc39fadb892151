//! `kind = "incast"`: partition-aggregate. In each of `rounds` rounds, `interval` apart,
//! `senders` distinct hosts (drawn from the seed, a new draw each round) send one flow each to
//! one receiver at the same moment: the many-to-one burst that fills a shallow switch buffer.

use netstep_core::units::SimTime;
use rand::Rng;
use rand_pcg::Pcg64Mcg;
use serde::{Deserialize, Serialize};

use super::{Block, Counting, TrafficKind};
use crate::error::{FieldPath, Invalid};
use crate::fields::duration_at;
use crate::transport::TransportConfig;

/// Incast (partition-aggregate): `senders` hosts send to one `receiver` at once, in
/// `rounds` rounds `interval` apart. Example: `kind = "incast"`, `senders = 16`,
/// `size = "64KB"`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct IncastConfig {
    /// Traffic class (0-7) of the block's flows.
    ///
    /// Unit: integer · Default: 0 · Example: `class = 3`
    pub class: Option<u8>,
    /// The receiving host's name.
    ///
    /// Unit: name · Default: a host drawn from the seed · Example: `receiver = "h0"`
    pub receiver: Option<String>,
    /// Senders per round, distinct hosts other than the receiver, drawn from the seed anew each
    /// round: between 1 and the number of other hosts.
    ///
    /// Unit: integer · Default: required · Example: `senders = 8`
    pub senders: u32,
    /// Payload each sender sends per round; give `size` or `packets`, not both.
    ///
    /// Unit: size · Default: — (give this or `packets`) · Example: `size = "1MB"`
    pub size: Option<String>,
    /// Packets each sender sends per round instead of `size`: that many packets (open loop),
    /// `packets x mss` bytes (TCP) or `packets x mtu` bytes (RDMA).
    ///
    /// Unit: count · Default: — (give this or `size`) · Example: `packets = 100`
    pub packets: Option<u32>,
    /// Rounds; at least 1.
    ///
    /// Unit: integer · Default: 1 · Example: `rounds = 3`
    pub rounds: Option<u32>,
    /// Time between the starts of two rounds; above zero.
    ///
    /// Unit: duration · Default: — (required with more than one round) · Example:
    /// `interval = "2ms"`
    pub interval: Option<String>,
    /// Start of the first round.
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

impl TrafficKind for IncastConfig {
    fn transport(&self) -> Option<&TransportConfig> {
        self.transport.as_ref()
    }

    fn count(&self, _on: &Counting<'_>, _path: &FieldPath) -> Result<u64, Invalid> {
        Ok(self.senders as u64 * self.rounds.unwrap_or(1) as u64)
    }

    fn generate<'a>(&'a self, b: &mut Block<'_, 'a>) -> Result<(), Invalid> {
        let path = &b.path;
        let same = b.alike(
            &self.transport,
            self.class,
            &self.size,
            self.packets,
            &self.start,
        )?;
        let rounds = self.rounds.unwrap_or(1);
        let interval = match (&self.interval, rounds) {
            (Some(_), _) => {
                let gap = duration_at(&self.interval, path.key("interval"), SimTime::ZERO)?;
                if gap == SimTime::ZERO {
                    return Err(Invalid::new(path.key("interval"), "must be positive"));
                }
                gap
            }
            (None, 0 | 1) => SimTime::ZERO,
            (None, _) => {
                return Err(Invalid::new(
                    path.key("interval"),
                    "more than one round needs an interval between round starts, e.g. interval = \"1ms\"",
                ));
            }
        };
        let position = self.receiver(b)?;
        let total = (self.senders as u64).saturating_mul(rounds as u64);
        b.check_flows(total, &b.path.key("senders"))?;
        let plan = senders(
            b.hosts.len(),
            position,
            self.senders,
            rounds,
            &mut b.rng,
            &b.path,
        )?;
        for (r, round) in plan.into_iter().enumerate() {
            let at = same.start + SimTime(interval.0.saturating_mul(r as u64));
            for src in round {
                b.out
                    .flows
                    .push(same.flow(b.hosts[src], b.hosts[position], at));
            }
        }
        Ok(())
    }
}

impl IncastConfig {
    /// The receiver's position in the host list: named, or drawn from the block's stream.
    fn receiver(&self, b: &mut Block<'_, '_>) -> Result<usize, Invalid> {
        let path = &b.path;
        match &self.receiver {
            Some(name) => {
                let node = b
                    .ctx
                    .topology
                    .nodes
                    .iter()
                    .position(|n| n.name == *name)
                    .ok_or_else(|| {
                        Invalid::new(path.key("receiver"), format!("no node named {name:?}"))
                    })?;
                b.hosts
                    .iter()
                    .position(|&h| h as usize == node)
                    .ok_or_else(|| {
                        Invalid::new(path.key("receiver"), format!("{name:?} is not a host"))
                    })
            }
            None => Ok((b.rng.next_u64() % b.hosts.len().max(1) as u64) as usize),
        }
    }
}

/// The senders of each round (positions in `hosts`, never `receiver`): `rounds` lists of
/// `senders` distinct hosts, a partial Fisher-Yates shuffle per round.
pub fn senders(
    n_hosts: usize,
    receiver: usize,
    senders: u32,
    rounds: u32,
    rng: &mut Pcg64Mcg,
    path: &FieldPath,
) -> Result<Vec<Vec<usize>>, Invalid> {
    let others = n_hosts.saturating_sub(1);
    if senders == 0 || senders as usize > others {
        return Err(Invalid::new(
            path.key("senders"),
            format!(
                "must be between 1 and {others} (the hosts other than the receiver), got {senders}"
            ),
        ));
    }
    if rounds == 0 {
        return Err(Invalid::new(path.key("rounds"), "must be at least 1"));
    }
    let mut pool: Vec<usize> = (0..n_hosts).filter(|&h| h != receiver).collect();
    Ok((0..rounds)
        .map(|_| {
            for i in 0..senders as usize {
                let j = i + (rng.next_u64() % (pool.len() - i) as u64) as usize;
                pool.swap(i, j);
            }
            pool[..senders as usize].to_vec()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn each_round_has_distinct_senders_other_than_the_receiver() {
        let path = FieldPath::of(&["traffic"]);
        let mut rng = Pcg64Mcg::seed_from_u64(5);
        let rounds = senders(16, 3, 15, 4, &mut rng, &path).unwrap();
        assert_eq!(rounds.len(), 4);
        for round in &rounds {
            let mut seen = round.clone();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len(), 15);
            assert!(!round.contains(&3));
        }
        assert!(senders(16, 3, 16, 1, &mut rng, &path).is_err());
        assert!(senders(16, 3, 0, 1, &mut rng, &path).is_err());
        assert!(senders(16, 3, 4, 0, &mut rng, &path).is_err());
    }
}

//! `kind = "incast"`: partition-aggregate. In each of `rounds` rounds, `interval` apart,
//! `senders` distinct hosts (drawn from the seed, a new draw each round) send one flow each to
//! one receiver at the same moment: the many-to-one burst that fills a shallow switch buffer.

use rand::Rng;
use rand_pcg::Pcg64Mcg;

use crate::error::{FieldPath, Invalid};

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

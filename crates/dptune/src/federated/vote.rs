//! DP-HYPE voting (DPHYPE.md §2): each client votes for its k best candidates and adds its
//! Skellam noise share; secure aggregation reveals only the noisy sum; the server releases the
//! argmax (ties broken uniformly at random) and, optionally, the noisy counts — both
//! post-processing of the one private release, whose client-level guarantee is
//! [`NoisePlan::guarantee`] for the clients that actually contributed.

use serde::Serialize;

use super::accounting::NoisePlan;
use super::noise_share::SkellamShare;
use super::secagg::local::{run_round, DropAt, Timing};
use super::secagg::{decode_signed, encode_signed, overflow_probability, SecAggParams};
use crate::error::{check_delta, check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Release};

/// Largest accepted probability that some coordinate of the noisy sum wraps around ℤ_{2^32}.
pub const MAX_OVERFLOW_PROBABILITY: f64 = 1.0 / (1u64 << 40) as f64;

/// The vote of one client: ones at its k best scores (higher is better; among equal scores the
/// lower index wins, deterministically). A NaN score counts as −∞ (the worst), so every score
/// vector gives a valid k-hot vote: whether a client takes part never depends on its data (a
/// refused vote would be a dropout, and dropouts are released through the survivor count).
/// Only k outside 1..=p (a public parameter) is refused.
pub fn top_k_vote(scores: &[f64], k: usize) -> Result<Vec<u8>> {
    let p = scores.len();
    if k == 0 || k > p {
        return Err(Error::invalid(
            "k",
            k,
            format!("must lie in 1..={p} (the number of candidates)"),
        ));
    }
    let worst_if_nan = |s: f64| if s.is_nan() { f64::NEG_INFINITY } else { s };
    let mut idx: Vec<usize> = (0..p).collect();
    idx.sort_by(|&a, &b| {
        worst_if_nan(scores[b])
            .total_cmp(&worst_if_nan(scores[a]))
            .then(a.cmp(&b))
    });
    let mut vote = vec![0u8; p];
    for &i in &idx[..k] {
        vote[i] = 1;
    }
    Ok(vote)
}

/// A client's submission: its vote plus one Sk(μ_c) draw per coordinate. The vote must have
/// length `p`, entries in {0, 1} and exactly `k` ones.
pub fn noisy_vote(
    vote: &[u8],
    p: usize,
    k: usize,
    share: &SkellamShare,
    rng: &mut SecureRng,
) -> Result<Vec<i64>> {
    if vote.len() != p {
        return Err(Error::invalid(
            "vote",
            format!("a vector of length {}", vote.len()),
            format!("must have length {p}"),
        ));
    }
    if let Some(v) = vote.iter().find(|&&v| v > 1) {
        return Err(Error::invalid("vote", v, "entries must be 0 or 1"));
    }
    let ones = vote.iter().filter(|&&v| v == 1).count();
    if ones != k {
        return Err(Error::invalid(
            "vote",
            ones,
            format!("must have exactly k = {k} ones"),
        ));
    }
    Ok(vote.iter().map(|&v| v as i64 + share.sample(rng)).collect())
}

/// The index of the largest count, ties broken uniformly at random.
pub fn select_argmax(counts: &[i64], rng: &mut SecureRng) -> Result<usize> {
    let max = counts
        .iter()
        .max()
        .ok_or_else(|| Error::invalid("counts", 0, "need at least one candidate"))?;
    let ties: Vec<usize> = (0..counts.len()).filter(|&i| counts[i] == *max).collect();
    Ok(ties[rng.below_u64(ties.len() as u64) as usize])
}

/// Public parameters of one DP-HYPE round.
#[derive(Debug, Clone)]
pub struct VoteRound {
    /// Number of candidates p.
    pub candidates: usize,
    /// Votes per client.
    pub k: usize,
    /// The noise and its accounting (carries t and the neighbour relation).
    pub plan: NoisePlan,
    /// δ of the released (ε, δ).
    pub delta: f64,
    /// Release the noisy counts too (post-processing; costs nothing extra).
    pub release_counts: bool,
    /// SecAgg+ neighbour degree and Shamir threshold; `None` for the complete graph (threshold
    /// T = max(t, ⌊n/2⌋ + 1), exact recovery with up to n − T dropouts). Either way the round
    /// refuses `colluders` unless 2·threshold > neighbourhood + colluders
    /// ([`SecAggParams::check_colluders`]).
    pub sparse: Option<(usize, usize)>,
}

/// What the server releases.
#[derive(Debug, Clone, Serialize)]
pub struct VoteOutcome {
    /// The selected candidate.
    pub selected: usize,
    /// The noisy vote counts, if requested.
    pub noisy_counts: Option<Vec<i64>>,
    /// Number of clients whose vote is in the sum.
    pub survivors: usize,
    /// Noise variance protecting an honest client: (survivors − c)·μ/(t − c).
    pub noise_variance: f64,
    /// ε of the release at `delta`, against at most `colluders` colluding survivors.
    pub epsilon: f64,
    /// δ.
    pub delta: f64,
    /// The number of colluding survivors the guarantee assumes at most (a public parameter).
    pub colluders: usize,
}

impl VoteRound {
    fn check(&self, clients: usize) -> Result<()> {
        check_positive("delta", self.delta)?;
        check_delta("delta", self.delta)?;
        if self.k == 0 || self.k > self.candidates {
            return Err(Error::invalid(
                "k",
                self.k,
                format!(
                    "must lie in 1..={} (the number of candidates)",
                    self.candidates
                ),
            ));
        }
        let t = self.plan.min_survivors();
        if t > clients {
            return Err(Error::invalid(
                "min_survivors",
                t,
                format!("cannot exceed the number of clients ({clients})"),
            ));
        }
        // Upper estimate of the largest possible noise variance (all n clients contribute).
        let variance = clients as f64 * self.plan.share_variance() * (1.0 + 1e-9);
        let worst = overflow_probability(clients as u64, variance, self.candidates);
        if worst > MAX_OVERFLOW_PROBABILITY {
            return Err(Error::invalid(
                "clients",
                clients,
                format!("the noisy sum could wrap around 2^32 (probability bound {worst:e})"),
            ));
        }
        Ok(())
    }

    /// Runs the whole protocol in-process through serialised messages: clients vote on their
    /// `scores` (one vector of p scores each), add noise, and take part in secure aggregation
    /// with the scripted `drops`; the server selects. `round` is the public round id.
    pub fn run(
        &self,
        round: u64,
        scores: &[Vec<f64>],
        drops: &[Option<DropAt>],
        rng: &mut SecureRng,
    ) -> Result<(Release<VoteOutcome>, Timing)> {
        let n = scores.len();
        self.check(n)?;
        let t = self.plan.min_survivors();
        let params = match self.sparse {
            None => SecAggParams::complete(round, n, self.candidates, t)?,
            Some((degree, threshold)) => SecAggParams::sparse(
                round,
                n,
                self.candidates,
                t,
                degree,
                threshold,
                rng.next_u64(),
            )?,
        };
        params.check_colluders(self.plan.colluders())?;
        // Validated before any noise is drawn; after this nothing fails on the scores.
        if let Some((i, s)) = scores
            .iter()
            .enumerate()
            .find(|(_, s)| s.len() != self.candidates)
        {
            return Err(Error::invalid(
                "scores",
                format!("client {i}: {} scores", s.len()),
                format!("every client must score all {} candidates", self.candidates),
            ));
        }
        let share = self.plan.share()?;
        let streams = rng.streams();
        let inputs = scores
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let vote = top_k_vote(s, self.k)?;
                let noisy = noisy_vote(
                    &vote,
                    self.candidates,
                    self.k,
                    &share,
                    &mut streams.get(i as u64),
                )?;
                encode_signed("noisy vote", &noisy)
            })
            .collect::<Result<Vec<_>>>()?;
        let (agg, timing) = run_round(&params, inputs, drops, rng)?;
        let survivors = agg.survivors.len();
        let (guarantee, epsilon): (Guarantee, f64) = self.plan.guarantee(survivors, self.delta)?;
        let counts = decode_signed(&agg.sum);
        let selected = select_argmax(&counts, rng)?;
        let outcome = VoteOutcome {
            selected,
            noisy_counts: self.release_counts.then_some(counts),
            survivors,
            noise_variance: self.plan.variance_with(survivors),
            epsilon,
            delta: self.delta,
            colluders: self.plan.colluders(),
        };
        Ok((
            Release {
                value: outcome,
                spent: guarantee,
            },
            timing,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::federated::accounting::Survivors;
    use crate::privacy::Neighbours;

    #[test]
    fn votes_and_bad_input() {
        assert_eq!(
            top_k_vote(&[0.1, 0.9, 0.5, 0.9], 2).unwrap(),
            vec![0, 1, 0, 1]
        );
        assert_eq!(top_k_vote(&[0.5; 4], 1).unwrap(), vec![1, 0, 0, 0]);
        assert!(top_k_vote(&[0.5; 4], 5).is_err());
        assert!(top_k_vote(&[0.5; 4], 0).is_err());
        // NaN is the worst score (e99dd64 refused the vote, turning bad data into a dropout).
        assert_eq!(top_k_vote(&[f64::NAN, 0.0], 1).unwrap(), vec![0, 1]);
        assert_eq!(
            top_k_vote(&[f64::NAN, f64::NEG_INFINITY, 0.3, f64::NAN], 2).unwrap(),
            vec![1, 0, 1, 0]
        );
        // All NaN (a failed evaluation): still exactly k ones.
        assert_eq!(top_k_vote(&[f64::NAN; 4], 3).unwrap(), vec![1, 1, 1, 0]);
        let share = SkellamShare::new(1, 1).unwrap();
        let mut rng = SecureRng::seeded(1);
        assert!(noisy_vote(&[1, 0, 0], 4, 1, &share, &mut rng).is_err());
        assert!(noisy_vote(&[2, 0, 0, 0], 4, 1, &share, &mut rng).is_err());
        assert!(noisy_vote(&[1, 1, 0, 0], 4, 1, &share, &mut rng).is_err());
        assert_eq!(
            noisy_vote(&[1, 0, 0, 0], 4, 1, &share, &mut rng)
                .unwrap()
                .len(),
            4
        );
    }

    #[test]
    fn ties_are_broken_uniformly() {
        // 3 tied maxima, 30 000 draws: each count is within 5 SE (SE = 81.6) of 10 000; a false
        // failure has probability < 2e-6 (fixed seed).
        let mut rng = SecureRng::seeded(2);
        let mut c = [0f64; 4];
        for _ in 0..30_000 {
            c[select_argmax(&[5, 1, 5, 5], &mut rng).unwrap()] += 1.0;
        }
        assert_eq!(c[1], 0.0);
        for i in [0, 2, 3] {
            assert!((c[i] - 10_000.0).abs() < 408.0, "{c:?}");
        }
    }

    fn round(t: usize, candidates: usize) -> VoteRound {
        VoteRound {
            candidates,
            k: 2,
            plan: NoisePlan::calibrate(
                2,
                Survivors::new(t, 0).unwrap(),
                &Guarantee::approx(1.0, 1e-5, Neighbours::Replace).unwrap(),
            )
            .unwrap(),
            delta: 1e-5,
            release_counts: true,
            sparse: None,
        }
    }

    #[test]
    fn protocol_selects_the_consensus_and_accounts_for_survivors() {
        // 12 clients all prefer candidates 3 and 5; the noise (σ ≈ 7) rarely beats a margin of 12.
        let mut rng = SecureRng::seeded(3);
        let scores: Vec<Vec<f64>> = (0..12)
            .map(|i| {
                let mut s = vec![0.0; 8];
                s[3] = 1.0;
                s[5] = 0.9;
                s[i % 8] += 0.01;
                s
            })
            .collect();
        let r = round(8, 8);
        let mut drops = vec![None; 12];
        drops[0] = Some(DropAt::Masked);
        drops[4] = Some(DropAt::Keys);
        let (rel, _) = r.run(1, &scores, &drops, &mut rng).unwrap();
        assert_eq!(rel.value.survivors, 10);
        assert!([3, 5].contains(&rel.value.selected));
        let counts = rel.value.noisy_counts.as_ref().unwrap();
        assert_eq!(counts.len(), 8);
        // Released ε is for 10 survivors: smaller than the target 1, never below the truth.
        let (_, e10) = r.plan.guarantee(10, 1e-5).unwrap();
        assert_eq!(rel.value.epsilon, e10);
        assert!(e10 < 1.0);
        // Too many dropouts: nothing is released.
        let drops: Vec<Option<DropAt>> =
            (0..12).map(|i| (i < 5).then_some(DropAt::Masked)).collect();
        assert!(matches!(
            r.run(2, &scores, &drops, &mut rng),
            Err(Error::NoRelease { .. })
        ));
        // Bad input: t > n, wrong score length.
        assert!(round(13, 8).run(3, &scores, &[], &mut rng).is_err());
        let mut bad = scores.clone();
        bad[2].pop();
        assert!(matches!(
            r.run(4, &bad, &[], &mut rng),
            Err(Error::InvalidParameter { name: "scores", .. })
        ));
    }

    #[test]
    fn nan_scores_still_vote_and_survive() {
        // Client 2's evaluation failed (all NaN), client 5 has one NaN: both still submit a
        // k-hot vote, so the survivor count (released) is the same as with clean scores.
        let mut rng = SecureRng::seeded(4);
        let mut scores: Vec<Vec<f64>> = (0..8).map(|i| vec![0.1 * i as f64; 6]).collect();
        scores[2] = vec![f64::NAN; 6];
        scores[5][1] = f64::NAN;
        let r = round(6, 6);
        let (rel, _) = r.run(5, &scores, &[], &mut rng).unwrap();
        assert_eq!(rel.value.survivors, 8);
        assert_eq!(rel.value.colluders, 0);
        let (_, e8) = r.plan.guarantee(8, 1e-5).unwrap();
        assert_eq!(rel.value.epsilon, e8);
    }
}

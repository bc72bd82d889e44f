//! The reports of `dptune select`: what a selection releases, or (NOT PRIVATE, on request) the
//! selection probabilities, as serialisable types the CLI renders (text or `--json`).
//!
//! Each field is labelled in its doc comment (DESIGN.md, `Report`): **public input** (the
//! mechanism, the number of repetitions), **public, computed** (what was spent: a function of
//! the public inputs, charged before the draws), **charged release** (the selected index or
//! indices, or the counts of repeated selections, covered by `spent`), or **NOT PRIVATE
//! diagnostic** (the probabilities, a function of the raw scores, in an object labelled
//! `"not_private": true`).

use std::collections::BTreeMap;

use serde::Serialize;

use super::build::{Prepared, Selection};
use super::Mechanism;
use crate::error::Result;
use crate::noise::SecureRng;
use crate::privacy::{Bound, Guarantee, Neighbours};

/// What a selection spent: ε (and δ) and ρ where the guarantee states them.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SpentReport {
    /// Public, computed: the pure ε if the guarantee has one, else the ε of its (ε, δ) bound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// Public, computed: δ of the (ε, δ) bound, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Public, computed: ρ of the zCDP bound, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rho: Option<f64>,
    /// Public input: the relation.
    pub neighbours: Neighbours,
}

impl SpentReport {
    /// The bounds of `g` that a person reads (an RDP curve is left out).
    pub fn new(g: &Guarantee) -> Self {
        let (mut pure, mut approx_eps) = (None, None);
        let (mut delta, mut rho) = (None, None);
        for b in g.bounds() {
            match b {
                Bound::Pure { eps } => pure = Some(*eps),
                // The first (ε, δ) bound, as a pair: ε of one bound beside δ of another is a
                // claim neither makes.
                Bound::Approx { eps, delta: d } if delta.is_none() => {
                    approx_eps = Some(*eps);
                    delta = Some(*d);
                }
                Bound::Approx { .. } => {}
                Bound::Zcdp { rho: r } => rho = Some(*r),
                Bound::Rdp(_) => {}
            }
        }
        Self {
            epsilon: pure.or(approx_eps),
            delta,
            rho,
            neighbours: g.neighbours(),
        }
    }
}

/// What `dptune select` releases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelectReport {
    /// Public input: the mechanism.
    pub mechanism: String,
    /// The released selection(s), at the top level.
    #[serde(flatten)]
    pub released: Released,
    /// Public, computed: what all the draws spent together.
    pub spent: SpentReport,
    /// Public input: whether the draws came from a caller's seed (`--seed`) instead of the
    /// operating system. A seeded selection is a reproducible research run and NOT PRIVATE
    /// ([`crate::noise::SEEDED_NOTE`]): anyone who knows the seed can predict the noise.
    pub seeded: bool,
}

/// The released selection(s).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Released {
    /// One selection of a single-index mechanism.
    One {
        /// Charged release (`spent`): the selected candidate.
        index: usize,
    },
    /// One top-k selection.
    Many {
        /// Charged release (`spent`): the selected candidates, best first.
        indices: Vec<usize>,
    },
    /// Independent repeated selections.
    Repeated {
        /// Public input: the number of selections.
        repeat: usize,
        /// Charged release (`spent`, all the selections composed): how often each outcome
        /// came out.
        counts: Counts,
    },
}

/// How often each outcome of repeated selections came out.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Counts {
    /// A single-index mechanism: one count per candidate.
    PerCandidate(Vec<u64>),
    /// Top-k: one count per selected tuple (indices best first, comma-separated).
    PerTuple(BTreeMap<String, u64>),
}

impl SelectReport {
    /// Draws from `prepared` (over `candidates` candidates) once, or `repeat` times
    /// independently, and reports the outcome with `spent`, what all the draws cost together,
    /// and `seeded`, whether `rng` came from a caller's seed. The caller charges `spent` before
    /// calling: the draws are the release.
    pub fn draw(
        mechanism: Mechanism,
        prepared: &Prepared,
        candidates: usize,
        repeat: Option<usize>,
        spent: &Guarantee,
        rng: &mut SecureRng,
        seeded: bool,
    ) -> Self {
        let released = match repeat {
            None => match prepared.draw(rng) {
                Selection::One(index) => Released::One { index },
                Selection::Many(indices) => Released::Many { indices },
            },
            Some(repeat) => {
                let mut per_candidate = vec![0u64; candidates];
                let mut per_tuple: BTreeMap<String, u64> = BTreeMap::new();
                for _ in 0..repeat {
                    match prepared.draw(rng) {
                        Selection::One(i) => per_candidate[i] += 1,
                        Selection::Many(v) => {
                            let key = v
                                .iter()
                                .map(|i| i.to_string())
                                .collect::<Vec<_>>()
                                .join(",");
                            *per_tuple.entry(key).or_default() += 1;
                        }
                    }
                }
                let counts = match prepared {
                    Prepared::TopK(_) => Counts::PerTuple(per_tuple),
                    _ => Counts::PerCandidate(per_candidate),
                };
                Released::Repeated { repeat, counts }
            }
        };
        Self {
            mechanism: mechanism.to_string(),
            released,
            spent: SpentReport::new(spent),
            seeded,
        }
    }
}

/// `dptune select --probabilities`: NOT PRIVATE, for public or synthetic scores only.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbabilitiesReport {
    /// Public input: the mechanism.
    pub mechanism: String,
    /// Public: always true, the label of this object.
    pub not_private: bool,
    /// NOT PRIVATE diagnostic (`--probabilities`): each candidate's selection probability, a
    /// function of the raw scores ([`Prepared::probabilities`]).
    pub probabilities: Vec<f64>,
}

impl ProbabilitiesReport {
    /// The selection probabilities of `prepared`, the `mechanism` built on the scores.
    pub fn new(mechanism: Mechanism, prepared: &Prepared) -> Result<Self> {
        Ok(Self {
            mechanism: mechanism.to_string(),
            not_private: true,
            probabilities: prepared.probabilities()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spent_states_the_pure_epsilon_first_and_omits_what_the_guarantee_lacks() {
        let n = Neighbours::AddRemove;
        let approx = Guarantee::approx(1.0, 1e-6, n).unwrap();
        let with_rho = approx
            .clone()
            .and(Guarantee::zcdp(0.02, n).unwrap())
            .unwrap();
        let v = serde_json::to_value(SpentReport::new(&with_rho)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"epsilon": 1.0, "delta": 1e-6, "rho": 0.02, "neighbours": "add_remove"})
        );
        let both = approx.and(Guarantee::pure(2.0, n).unwrap()).unwrap();
        let s = SpentReport::new(&both);
        assert_eq!((s.epsilon, s.delta, s.rho), (Some(2.0), Some(1e-6), None));
        let v = serde_json::to_value(&s).unwrap();
        assert!(
            v.get("rho").is_none(),
            "an absent bound is left out, not null"
        );
    }
}

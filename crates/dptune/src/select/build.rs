//! One name-to-mechanism dispatch for every front end: the CLI's `select` and the Python
//! bindings build their mechanism here from the same [`Spec`], so a default (GEM's
//! sensitivities, the Gaussian L2 calibration, which probabilities exist) is decided once.

use super::{
    ExponentialMechanism, GaussianArgmax, GeneralizedExponential, Goal, GumbelMax, L2Sensitivity,
    LaplaceNoisyMax, Mechanism, NoisyTopK, PermuteAndFlip, Scores, Selector, Sensitivity,
    TopKMethod,
};
use crate::error::{check_open_unit, check_positive, Error, Result};
use crate::noise::SecureRng;
use crate::privacy::{Guarantee, Neighbours};

/// The most candidates for which permute-and-flip's exact probabilities are computed: the
/// computation is quadratic in their number.
pub const PF_PROBABILITIES_MAX: usize = 10_000;

/// Everything about one selection except the scores. Fields a mechanism does not read are
/// ignored here; front ends refuse them before building (a silently dropped flag is a bug).
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// What one selection may spend (for top-k, all k rounds together), with the neighbour
    /// relation the sensitivities refer to: one pure-ε bound, or one (ε, δ) bound for the Gaussian argmax
    /// ([`Mechanism::allowance`] builds it from a front end's ε and δ).
    pub allowance: Guarantee,
    /// Higher or lower scores are better.
    pub goal: Goal,
    /// Per-candidate sensitivity Δ (every mechanism; GEM's default per-candidate value).
    pub sensitivity: f64,
    /// Scores move in one direction between neighbours (range Δ instead of 2Δ; not GEM).
    pub monotonic: bool,
    /// How the Gaussian argmax is calibrated to the whole score vector.
    pub l2: L2Sensitivity,
    /// GEM's per-candidate sensitivities; `None` gives every candidate Δ.
    pub sensitivities: Option<Vec<f64>>,
    /// GEM's failure probability β.
    pub beta: f64,
    /// How many candidates top-k releases (top-k, which requires it).
    pub k: Option<usize>,
    /// Top-k's method.
    pub top_k: TopKMethod,
}

impl Spec {
    /// A spec with an allowance and Δ and the defaults of every other field: maximise, not
    /// monotone, the general L2 calibration, GEM β = 0.1 with Δ for every candidate, top-k by
    /// permute-and-flip with no k.
    pub fn new(allowance: Guarantee, sensitivity: f64) -> Self {
        Self {
            allowance,
            goal: Goal::Maximize,
            sensitivity,
            monotonic: false,
            l2: L2Sensitivity::General,
            sensitivities: None,
            beta: 0.1,
            k: None,
            top_k: TopKMethod::PermuteAndFlip,
        }
    }
}

/// A mechanism built on its scores.
#[derive(Debug, Clone)]
pub enum Prepared {
    /// [`ExponentialMechanism`].
    Exponential(ExponentialMechanism),
    /// [`GumbelMax`].
    Gumbel(GumbelMax),
    /// [`LaplaceNoisyMax`].
    Laplace(LaplaceNoisyMax),
    /// [`PermuteAndFlip`].
    PermuteAndFlip(PermuteAndFlip),
    /// [`GaussianArgmax`].
    Gaussian(GaussianArgmax),
    /// [`GeneralizedExponential`].
    Gem(GeneralizedExponential),
    /// [`NoisyTopK`].
    TopK(NoisyTopK),
}

/// What one draw released.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Selection {
    /// The index of a single-index mechanism.
    One(usize),
    /// Top-k's indices, best first.
    Many(Vec<usize>),
}

impl Mechanism {
    /// The allowance a front end states for this mechanism with its `epsilon` and `delta`
    /// arguments (for top-k, the total over its k rounds): (ε, δ) for the Gaussian argmax, which requires δ in
    /// (0, 1), else pure ε, for which a δ is refused rather than dropped. Errors name `epsilon`
    /// or `delta`, the arguments the user typed.
    pub fn allowance(
        self,
        epsilon: f64,
        delta: Option<f64>,
        neighbours: Neighbours,
    ) -> Result<Guarantee> {
        check_positive("epsilon", epsilon)?;
        match (self, delta) {
            (Mechanism::Gaussian, None) => Err(Error::invalid(
                "delta",
                "none",
                "Gaussian argmax is (epsilon, delta)-DP and needs delta in (0, 1)",
            )),
            (Mechanism::Gaussian, Some(d)) => {
                Guarantee::approx(epsilon, check_open_unit("delta", d)?, neighbours)
            }
            (_, None) => Guarantee::pure(epsilon, neighbours),
            (_, Some(d)) => Err(Error::invalid(
                "delta",
                d,
                format!("{self} is pure epsilon-DP and reads no delta (only gaussian does)"),
            )),
        }
    }

    /// Validates the inputs (errors name the parameter) and builds the mechanism on `scores`.
    /// The sparse vector technique is refused (as by [`Mechanism::as_selection`]).
    pub fn build(self, scores: &[f64], spec: &Spec) -> Result<Prepared> {
        let a = &spec.allowance;
        let scored = || {
            let sensitivity = Sensitivity::new(spec.sensitivity, spec.monotonic)?;
            Scores::new(scores, spec.goal, sensitivity)
        };
        Ok(match self {
            Mechanism::Exponential => {
                Prepared::Exponential(ExponentialMechanism::new(&scored()?, a)?)
            }
            Mechanism::Gumbel => Prepared::Gumbel(GumbelMax::new(&scored()?, a)?),
            Mechanism::Laplace => Prepared::Laplace(LaplaceNoisyMax::new(&scored()?, a)?),
            Mechanism::PermuteAndFlip => {
                Prepared::PermuteAndFlip(PermuteAndFlip::new(&scored()?, a)?)
            }
            Mechanism::Gaussian => Prepared::Gaussian(GaussianArgmax::new(&scored()?, spec.l2, a)?),
            Mechanism::Gem => {
                let uniform;
                let s = match &spec.sensitivities {
                    Some(s) => s.as_slice(),
                    None => {
                        uniform = vec![spec.sensitivity; scores.len()];
                        &uniform
                    }
                };
                Prepared::Gem(GeneralizedExponential::new(
                    scores, spec.goal, s, a, spec.beta,
                )?)
            }
            Mechanism::TopK => {
                let k = spec
                    .k
                    .ok_or_else(|| Error::invalid("k", "none", "top-k needs k"))?;
                Prepared::TopK(NoisyTopK::new(&scored()?, a, k, spec.top_k)?)
            }
            Mechanism::SparseVector => return Err(super::not_a_selection()),
        })
    }

    /// Whether [`Prepared::probabilities`] is exact for this mechanism (the exponential
    /// family and permute-and-flip) rather than a numerical integral (Laplace, Gaussian).
    pub fn has_exact_probabilities(self) -> bool {
        matches!(
            self,
            Mechanism::Exponential | Mechanism::Gumbel | Mechanism::Gem | Mechanism::PermuteAndFlip
        )
    }
}

impl Prepared {
    /// What one selection spends (a function of the public inputs only).
    pub fn guarantee(&self) -> &Guarantee {
        match self {
            Prepared::Exponential(m) => m.guarantee(),
            Prepared::Gumbel(m) => m.guarantee(),
            Prepared::Laplace(m) => m.guarantee(),
            Prepared::PermuteAndFlip(m) => m.guarantee(),
            Prepared::Gaussian(m) => m.guarantee(),
            Prepared::Gem(m) => m.guarantee(),
            Prepared::TopK(m) => m.guarantee(),
        }
    }

    /// One draw, with no accounting (the caller charges [`Prepared::guarantee`] first).
    pub fn draw(&self, rng: &mut SecureRng) -> Selection {
        match self {
            Prepared::Exponential(m) => Selection::One(m.draw(rng)),
            Prepared::Gumbel(m) => Selection::One(m.draw(rng)),
            Prepared::Laplace(m) => Selection::One(m.draw(rng)),
            Prepared::PermuteAndFlip(m) => Selection::One(m.draw(rng)),
            Prepared::Gaussian(m) => Selection::One(m.draw(rng)),
            Prepared::Gem(m) => Selection::One(m.draw(rng)),
            Prepared::TopK(m) => Selection::Many(m.draw(rng)),
        }
    }

    /// NOT PRIVATE (a function of the raw scores): the selection probabilities of the
    /// implemented mechanism, exact or numerical as [`Mechanism::has_exact_probabilities`]
    /// says. Refused for top-k (a law over ordered tuples: see
    /// [`NoisyTopK::tuple_probability`]) and for permute-and-flip above
    /// [`PF_PROBABILITIES_MAX`] candidates.
    pub fn probabilities(&self) -> Result<Vec<f64>> {
        match self {
            Prepared::Exponential(m) => Ok(m.probabilities()),
            Prepared::Gumbel(m) => Ok(m.probabilities()),
            Prepared::Laplace(m) => m.probabilities(),
            Prepared::PermuteAndFlip(m) => {
                let n = m.candidates();
                if n > PF_PROBABILITIES_MAX {
                    return Err(Error::invalid(
                        "scores",
                        format!("{n} candidates"),
                        format!(
                            "permute-and-flip probabilities are computed for at most \
                             {PF_PROBABILITIES_MAX} candidates"
                        ),
                    ));
                }
                Ok(m.probabilities())
            }
            Prepared::Gaussian(m) => m.probabilities(),
            Prepared::Gem(m) => Ok(m.probabilities()),
            Prepared::TopK(_) => Err(Error::invalid(
                "mechanism",
                "top-k",
                "top-k releases an ordered tuple; use the tuple probabilities",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_dispatch_builds_every_selection_mechanism() {
        let scores = [1.0, 3.0, 2.0];
        let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
        let mut spec = Spec::new(pure.clone(), 1.0);
        spec.k = Some(2);
        let mut rng = SecureRng::seeded(7);
        for name in Mechanism::NAMES.iter().filter(|n| **n != "sparse-vector") {
            let m: Mechanism = name.parse().unwrap();
            let delta = (m == Mechanism::Gaussian).then_some(1e-5);
            spec.allowance = m.allowance(1.0, delta, Neighbours::AddRemove).unwrap();
            let p = m.build(&scores, &spec).unwrap();
            match p.draw(&mut rng) {
                Selection::One(i) => assert!(i < 3, "{name}"),
                Selection::Many(v) => assert_eq!(v.len(), 2, "{name}"),
            }
            if m != Mechanism::TopK {
                let probs = p.probabilities().unwrap();
                assert!((probs.iter().sum::<f64>() - 1.0).abs() < 1e-6, "{name}");
            }
        }
        // Worked number: EM at ε = 1, Δ = 1 (range 2): P ∝ exp(u/2) on (1, 3, 2):
        // e^{1.5}/(e^{0.5} + e^{1.5} + e^{1}) = 0.506480...
        spec.allowance = pure;
        let em = Mechanism::Exponential.build(&scores, &spec).unwrap();
        let p = em.probabilities().unwrap();
        let want = 1.5f64.exp() / (0.5f64.exp() + 1.5f64.exp() + 1f64.exp());
        assert!((p[1] - want).abs() < 1e-9, "{} vs {want}", p[1]);
        // GEM without per-candidate sensitivities gives every candidate Δ; with a wrong length
        // it is refused, naming the parameter.
        assert!(Mechanism::Gem.build(&scores, &spec).is_ok());
        spec.sensitivities = Some(vec![1.0]);
        let e = Mechanism::Gem
            .build(&scores, &spec)
            .unwrap_err()
            .to_string();
        assert!(e.contains("sensitivities"), "{e}");
        // The sparse vector technique is not a selection; top-k without k is refused.
        assert!(Mechanism::SparseVector.build(&scores, &spec).is_err());
        spec.k = None;
        assert!(Mechanism::TopK.build(&scores, &spec).is_err());
    }

    /// The allowance carries the currency and the relation: a pure mechanism refuses an
    /// (ε, δ) allowance and the Gaussian argmax a pure one, naming `allowance`; the front-end
    /// constructor names the argument the user typed.
    #[test]
    fn allowances_in_the_wrong_currency_are_refused() {
        let scores = [1.0, 3.0, 2.0];
        let nb = Neighbours::Replace;
        let approx = Guarantee::approx(1.0, 1e-5, nb).unwrap();
        let pure = Guarantee::pure(1.0, nb).unwrap();
        let mut spec = Spec::new(approx, 1.0);
        spec.k = Some(2);
        for name in Mechanism::NAMES.iter().filter(|n| **n != "sparse-vector") {
            let m: Mechanism = name.parse().unwrap();
            if m == Mechanism::Gaussian {
                spec.allowance = pure.clone();
            }
            let e = m.build(&scores, &spec).unwrap_err().to_string();
            assert!(e.contains("`allowance`"), "{name}: {e}");
            spec.allowance = Guarantee::approx(1.0, 1e-5, nb).unwrap();
        }
        let zcdp = Guarantee::zcdp(0.1, nb).unwrap();
        let e = Mechanism::Exponential
            .build(&scores, &Spec::new(zcdp, 1.0))
            .unwrap_err()
            .to_string();
        assert!(e.contains("pure-epsilon allowance"), "{e}");
        // The spent guarantee keeps the allowance's relation.
        let pf = Mechanism::PermuteAndFlip
            .build(&scores, &Spec::new(pure, 1.0))
            .unwrap();
        assert_eq!(pf.guarantee().neighbours(), nb);
        let g = Mechanism::Gaussian;
        let named = |r: Result<Guarantee>| match r {
            Err(Error::InvalidParameter { name, .. }) => name,
            other => panic!("{other:?}"),
        };
        assert_eq!(named(g.allowance(0.0, Some(1e-5), nb)), "epsilon");
        assert_eq!(named(g.allowance(1.0, None, nb)), "delta");
        assert_eq!(named(g.allowance(1.0, Some(0.0), nb)), "delta");
        assert_eq!(
            named(Mechanism::Laplace.allowance(1.0, Some(1e-5), nb)),
            "delta"
        );
        assert_eq!(
            Mechanism::TopK.allowance(0.5, None, nb).unwrap().pure_eps(),
            Some(0.5)
        );
    }
}

//! Report-noisy-max with Gumbel noise, which *is* the exponential mechanism.

use super::ExponentialMechanism;

/// argmax_i (u_i + G_i), G_i i.i.d. Gumbel(R/ε).
///
/// * **Theorem.** The Gumbel-max trick: this has exactly the distribution of the exponential
///   mechanism P(i) ∝ exp(ε u_i / R) (THEORY.md §1.3; Durfee & Rogers, arXiv 1905.04273), so
///   the privacy is EM's: ε-DP (McSherry–Talwar 2007) and ε²/8-zCDP (Cesar–Rogers, arXiv
///   2004.07223, Lemma 3.2).
/// * **Preconditions.** As [`ExponentialMechanism`].
/// * **Charged.** ε pure and ε²/8 zCDP.
/// * **Sampling.** A floating-point Gumbel sampler is attackable (THEORY.md §14.1), so the
///   draw is made by the exact EM rejection sampler, which has the same distribution (tested
///   by a chi-square comparison in `tests/golden_selection.rs`).
///
/// Being the exponential mechanism in distribution, privacy and sampling, it is that type: the
/// same constructor (inputs, validation), probabilities and charge, written once.
pub type GumbelMax = ExponentialMechanism;

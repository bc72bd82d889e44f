//! DP-SGD on dptune's **lattice** noise, accounted by privacy loss distribution.
//!
//! dptune's DP-SGD ([`crate::learn::DpSgd`]) does not add continuous Gaussian noise: every
//! step sums the clipped gradients exactly in integer units of a power-of-two grid r and adds
//! y = s + N, N ~ N_ℤ(0, n)^P (P coordinates, the exact discrete Gaussian with
//! P[N_j = k] ∝ e^{−k²/(2n)}; Canonne, Kamath & Steinke 2020, arXiv 2004.00010), with
//! n ≥ 2^58 ([`crate::noise::GridGaussian`]). The PLDs of [`super::mechanisms`] are proved for
//! continuous Gaussian noise only. This module proves, and charges, that the lattice mechanism is
//! dominated by the continuous one with a slightly smaller noise variance plus a negligible
//! mass on the infinite-loss atom.
//!
//! # Theorem
//!
//! Let n₂ = [`ROUNDING_VARIANCE`] ≥ 1, n > n₂, n₁ = n − n₂, and let z ≤ r√n/(C + r√P) be the
//! effective noise multiplier that dptune's accountant already uses (`learn::dpsgd`: the
//! grid-rounding charge r√P is kept although the exact sum leaves it unused). Let
//! z₁ ≤ z·√(n₁/n) and M ≥ 1 − ((1 − β_{n₂})/(1 + β_n))^{P·T}, where
//! β_m = 2Σ_{k≥1} e^{−2π²mk²}. Then T adaptive lattice DP-SGD steps at Poisson rate q are
//! dominated, in both add/remove directions, by the pair
//!
//! ((1 − M)·P_c + M·1_a, (1 − M)·Q_c + M·1_b),
//!
//! where (P_c, Q_c) is the T-fold product of the continuous Poisson-subsampled Gaussian pair at
//! noise multiplier z₁ (the pair [`super::dpsgd_pld`] discretises) and 1_a, 1_b are point masses on
//! two new outcomes a ≠ b. Its PLD, in each direction, is the continuous one with mass M moved
//! to the +∞ atom.
//!
//! # Proof
//!
//! *One step, fixed batch.* Write s ∈ ℤ^P for the exact integer sum of the step (any fixed
//! batch, model and history), φ_m for the density of N(0, m·I_P) and
//! θ_m(c) = Σ_{k∈ℤ} e^{−(k−c)²/(2m)}. Poisson summation (the Fourier transform of
//! e^{−x²/(2m)} is √(2πm)·e^{−2π²mξ²}) gives θ_m(c) = √(2πm)·Σ_{k∈ℤ} e^{−2π²mk²}·cos(2πkc), so
//!
//! √(2πm)·(1 − β_m) ≤ θ_m(c) ≤ √(2πm)·(1 + β_m), with equality on the right at c = 0.
//!
//! The real mechanism has pmf p(y) = e^{−‖y−s‖²/(2n)}/θ_n(0)^P on ℤ^P (the normaliser does not
//! depend on s because s is a lattice point), i.e. p(y) = φ_n(y − s)/(1 + β_n)^P. Consider the
//! hypothetical mechanism that releases x = s + g, g ~ N(0, n₁·I_P) (continuous), followed by
//! the data-independent kernel K(y | x) = e^{−‖y−x‖²/(2n₂)}/Π_j θ_{n₂}(x_j) on ℤ^P (a discrete
//! Gaussian centred at x: a randomized rounding). Its pmf is
//!
//! p̃(y) = ∫ φ_{n₁}(x − s)·e^{−‖y−x‖²/(2n₂)}/Π_j θ_{n₂}(x_j) dx
//!      ≤ (1 − β_{n₂})^{−P}·∫ φ_{n₁}(x − s)·φ_{n₂}(y − x) dx = (1 − β_{n₂})^{−P}·φ_n(y − s),
//!
//! using the lower bound on θ_{n₂} and φ_{n₁} * φ_{n₂} = φ_{n₁+n₂}. Hence, pointwise in y,
//! p(y) ≥ λ·p̃(y) with λ = ((1 − β_{n₂})/(1 + β_n))^P. (Only this direction is needed. The
//! general form is Peikert 2010, "An efficient and parallel Gaussian sampler for lattices",
//! CRYPTO, Thm. 3.1, with the smoothing parameter of Micciancio & Regev 2004/2007, Lemma 4.4;
//! for ℤ^P the product form above is elementary.)
//!
//! *Poisson batches, T adaptive steps.* Step t's kernel, given the history y_{<t}, is the
//! mixture over Poisson batches of the kernels above (the model, hence every per-example
//! gradient, is a function of y_{<t}); the inequality survives mixing with the same weights. A
//! transcript's pmf is the product of its T step kernels, so p_D(τ) ≥ Λ·p̃_D(τ) for every
//! transcript τ and every dataset D, with Λ = λ^T. (The released model is a function of the
//! transcript: post-processing.)
//!
//! *Domination.* Write p_D = Λ·p̃_D + (1 − Λ)·R_D with R_D a probability distribution (the
//! remainder is non-negative by the bound and has mass 1 − Λ). The hockey-stick divergence
//! H_α(P‖Q) = Σ_τ (P(τ) − αQ(τ))₊ is jointly convex, and H_α ≤ 1 for every α ≥ 0. So for
//! neighbours D, D′ and every α ≥ 0,
//!
//! H_α(p_D ‖ p_{D′}) ≤ Λ·H_α(p̃_D ‖ p̃_{D′}) + (1 − Λ) ≤ Λ·H_α(P_c ‖ Q_c) + (1 − Λ),
//!
//! where the second step holds because p̃ is the adaptive composition of T post-processed
//! (by K) Poisson-subsampled Gaussian steps with noise variance n₁ on sums that differ by one
//! record's clipped contribution v, ‖v‖ ≤ C/r ≤ (C + r√P)/r grid units (`numeric::GridSum`), i.e.
//! noise multiplier √n₁/‖v‖ ≥ z₁: each step is dominated by the subsampled-Gaussian pair at z₁
//! (Zhu, Dong & Wang 2022, arXiv 2106.08567, Prop. 30 for Poisson subsampling in both
//! directions; post-processing cannot increase H_α; a smaller ‖v‖ is a post-processing of the
//! larger one by scaling and adding independent Gaussian noise), and dominating pairs compose
//! adaptively (ibid., Thm. 10). The right-hand side is exactly H_α of the mixture pair of the
//! theorem, since H_α(1_a ‖ 1_b) = 1; with M ≥ 1 − Λ it only grows. The same holds with D and
//! D′ exchanged, which is the other direction. ∎
//!
//! # What is computed, and rounding
//!
//! * z₁ = z·(1 − n₂/n), which is ≤ z·√(n₁/n), computed with every rounding downward.
//! * M = min(1, 2β_{n₂}·P·T) rounded up: 1 − Λ ≤ P·T·(1 − (1 − β_{n₂})/(1 + β_n))
//!   ≤ P·T·(β_n + β_{n₂}) by Bernoulli's inequality, and β_n ≤ β_{n₂} as n ≥ n₂. β_m is bounded
//!   by 2e^{−a}/(1 − e^{−3a}), a = 2π²m (as k² ≥ 1 + 3(k − 1)), with a margin for the `exp`.
//!   With n₂ = 8, β_8 ≤ 8.1e-69: M is below 1e-29 for any P·T up to 2^128, and it is charged.
//! * The continuous T-fold PLD at z₁ is [`super::dpsgd_pld`] (connect-the-dots, both
//!   directions; every rounding pessimistic), and M is added to the +∞ atom of each direction
//!   without scaling the finite part by 1 − M: a pointwise larger measure only raises δ(ε), here
//!   and after any later composition (δ is a sum of non-negative weights over the product of the
//!   parts' masses).
//!
//! The cost of the split is the factor √(1 − n₂/n) on z: with n ≥ 2^58 a relative 2^-55, far
//! below the calibration's precision. The RDP route for the same mechanism is
//! [`crate::privacy::dpsgd::dpsgd_discrete_curve`]; the two are simultaneous bounds and the
//! [`crate::privacy::Ledger`] uses whichever is tighter.

use std::sync::Arc;

use super::grid_limit::GridTooLarge;
use super::{dpsgd_pld, Pld, PldConfig};
use crate::error::{Error, Result};
use crate::numeric::{add_up, mul_up};

/// n₂: the variance (in grid units²) of the randomized rounding of the proof (module doc).
pub const ROUNDING_VARIANCE: u64 = 8;

/// An upper bound on β_m = 2Σ_{k≥1} e^{−2π²mk²}: 2e^{−a}/(1 − e^{−3a}) with a = 2π²m, a rounded
/// down by a relative 1e-15 and the result raised by a relative 1e-12 (`exp` and the
/// arithmetic err by a few ulps).
fn beta_up(m: f64) -> f64 {
    let a = 2.0 * std::f64::consts::PI * std::f64::consts::PI * m * (1.0 - 1e-15);
    2.0 * (-a).exp() / (1.0 - (-3.0 * a).exp()) * (1.0 + 1e-12)
}

/// M ≥ 1 − ((1 − β_{n₂})/(1 + β_n))^{P·T} (module doc), rounded up, at most 1.
fn infinite_mass(dim: usize, steps: u64, n2: u64) -> f64 {
    let per = 2.0 * beta_up(n2 as f64);
    // P and T as f64 are within a relative 2^-53 of the integers; the margin covers it.
    mul_up(mul_up(per, dim as f64), steps as f64 * (1.0 + 1e-12)).min(1.0)
}

/// z·(1 − n₂/n) rounded down, which is at most z·√(n₁/n).
fn continuous_multiplier(z: f64, n: u64, n2: u64) -> f64 {
    // n₂/n rounded up: each of the conversion and the division errs by a relative 2^-53.
    let ratio = (n2 as f64 / n as f64) * (1.0 + 1e-15);
    let keep = (1.0 - ratio).next_down();
    (z * keep).next_down()
}

/// `pld` with mass `m` added to the +∞ atom of each direction (module doc).
fn with_infinite_mass(pld: Pld, m: f64) -> Pld {
    let raise = |p: &Arc<super::pmf::LossPmf>| {
        let mut p = (**p).clone();
        p.inf = add_up(p.inf, m).min(1.0);
        Arc::new(p)
    };
    Pld {
        forward: raise(&pld.forward),
        backward: pld.backward.as_ref().map(raise),
        ..pld
    }
}

/// The PLD of `steps` steps of dptune's lattice DP-SGD (module doc): Poisson rate `q`,
/// effective noise multiplier `z` (at most r√n/(C + r√P), as `learn::dpsgd` computes it),
/// `dim` = P coordinates per step, grid variance `grid_variance` = n (in grid units², the
/// [`crate::noise::GridGaussian`]'s), add/remove-one, both directions.
///
/// Preconditions (checked, errors name the parameter): `dim` ≥ 1, `grid_variance` >
/// [`ROUNDING_VARIANCE`], `steps` ≥ 1, and those of [`Pld::subsampled_gaussian`].
pub fn dpsgd_lattice_pld(
    q: f64,
    z: f64,
    steps: u64,
    dim: usize,
    grid_variance: u64,
    config: PldConfig,
) -> Result<Pld> {
    lattice_pld_split(q, z, steps, dim, grid_variance, ROUNDING_VARIANCE, config)
}

/// [`dpsgd_lattice_pld`] with the split n = n₁ + `n2` as a parameter (the tests use coarse
/// lattices, where n₂ = 8 would not fit).
fn lattice_pld_split(
    q: f64,
    z: f64,
    steps: u64,
    dim: usize,
    n: u64,
    n2: u64,
    config: PldConfig,
) -> Result<Pld> {
    if dim == 0 {
        return Err(Error::invalid("dim", dim, "must be >= 1"));
    }
    if n <= n2 {
        return Err(Error::invalid(
            "grid_variance",
            n,
            format!("must exceed the rounding variance {n2}"),
        ));
    }
    crate::error::check_positive("noise_multiplier", z)?;
    let z1 = continuous_multiplier(z, n, n2);
    let pld = dpsgd_pld(q, z1, steps, config)?;
    Ok(with_infinite_mass(pld, infinite_mass(dim, steps, n2)))
}

/// True when `e` is a PLD's refusal of a grid larger than it may hold (a mechanism with very
/// little noise): the PLD route is then unavailable, and other routes still apply.
pub fn is_grid_refusal(e: &Error) -> bool {
    GridTooLarge::is_refusal(e)
}

#[cfg(test)]
mod tests {
    use super::super::tests::golden_dpsgd;
    use super::*;
    use crate::privacy::convert::rdp_epsilon;
    use crate::privacy::dpsgd::dpsgd_discrete_curve;

    fn cfg() -> PldConfig {
        PldConfig::default()
    }

    /// The exact profile of `steps` (1 or 2) non-adaptive steps of the real lattice mechanism
    /// in one dimension: P = (1−q)·N_ℤ(0, n) + q·N_ℤ(v, n) against Q = N_ℤ(0, n) (remove), and
    /// the reverse (add), summed over every output in ±(14√n + v) (the mass beyond is below
    /// 1e-40). Returns (remove, add) at `eps`.
    fn exact_lattice_delta(n: f64, v: i64, q: f64, steps: u32, eps: f64) -> (f64, f64) {
        let k = (14.0 * n.sqrt()) as i64 + v;
        let weights = |c: i64| -> Vec<f64> {
            let w: Vec<f64> = (-k..=k)
                .map(|x| (-((x - c) as f64).powi(2) / (2.0 * n)).exp())
                .collect();
            let z: f64 = (-4 * k..=4 * k)
                .map(|x| (-((x - c) as f64).powi(2) / (2.0 * n)).exp())
                .sum();
            w.into_iter().map(|x| x / z).collect()
        };
        let (w0, wv) = (weights(0), weights(v));
        let p: Vec<f64> = w0
            .iter()
            .zip(&wv)
            .map(|(a, b)| (1.0 - q) * a + q * b)
            .collect();
        let e = eps.exp();
        let hockey = |a: &[f64], b: &[f64]| -> f64 {
            match steps {
                1 => a.iter().zip(b).map(|(x, y)| (x - e * y).max(0.0)).sum(),
                _ => a
                    .iter()
                    .zip(b)
                    .map(|(x1, y1)| {
                        a.iter()
                            .zip(b)
                            .map(|(x2, y2)| (x1 * x2 - e * y1 * y2).max(0.0))
                            .sum::<f64>()
                    })
                    .sum(),
            }
        };
        (hockey(&p, &w0), hockey(&w0, &p))
    }

    #[test]
    fn worked_numbers() {
        // β_m = 2Σ_{k≥1} e^{−2π²mk²}: β_1 = 5.350575982148479e-9, β_2 = 1.4314331670372283e-17,
        // β_8 = 5.248005920154435e-69 (30-digit arithmetic); the bound is above and close.
        for (m, exact) in [
            (1.0, 5.350_575_982_148_479e-9),
            (2.0, 1.431_433_167_037_228_3e-17),
            (8.0, 5.248_005_920_154_435e-69),
        ] {
            let b = beta_up(m);
            assert!(
                b >= exact && b <= exact * (1.0 + 1e-9),
                "{m}: {b} vs {exact}"
            );
        }
        // M = 2β₈·P·T: 124 parameters and 1000 steps charge 1.3015e-63.
        let m = infinite_mass(124, 1000, 8);
        assert!((2.0 * 5.248_005_920_154_435e-69 * 124.0 * 1000.0..1.302e-63).contains(&m));
        assert_eq!(infinite_mass(usize::MAX, u64::MAX, 1), 1.0);
        // z₁ = z(1 − n₂/n): at n = 2^58 a few ulps below z; at n = 16, n₂ = 8, z/2 below.
        let z1 = continuous_multiplier(1.0, 1 << 58, ROUNDING_VARIANCE);
        assert!(z1 < 1.0 && z1 > 1.0 - 1e-15, "{z1}");
        let z1 = continuous_multiplier(4.0, 16, 8);
        assert!(z1 < 2.0 && z1 > 2.0 - 1e-14, "{z1}");
        assert!(z1 <= 4.0 * (8.0f64 / 16.0).sqrt());
    }

    #[test]
    fn the_infinite_mass_is_charged_and_an_uncharged_variant_is_rejected() {
        // With n₂ = 1 (β₁ = 5.35e-9), 1000 coordinates and 1000 steps the charge is
        // M = 2β₁·10⁶ = 0.0107: visible in δ(ε), which must be the continuous PLD's at z₁ plus M.
        let (q, z, steps, n) = (0.01, 1.0, 1000, 1u64 << 40);
        let lattice = lattice_pld_split(q, z, steps, 1000, n, 1, cfg()).unwrap();
        let uncharged = dpsgd_pld(q, continuous_multiplier(z, n, 1), steps, cfg()).unwrap();
        let m = 2.0 * 5.350_575_982_148_479e-9 * 1e6;
        for eps in [0.5, 1.0, 2.0] {
            let (l, u) = (lattice.delta(eps).unwrap(), uncharged.delta(eps).unwrap());
            assert!(
                l >= u + m && l <= u + m * (1.0 + 1e-6),
                "{eps}: {l} vs {u} + {m}"
            );
            // The check has teeth: the uncharged PLD is below it.
            assert!(u < u + m);
        }
    }

    #[test]
    fn bounds_the_exact_lattice_mechanism_where_the_continuous_pld_does_not() {
        // Coarse lattices (n = 4 and 16 grid units², sensitivity 1), where the discrete
        // Gaussian's profile exceeds the continuous one's at the same σ (at ε = 0 by 2.1e-3 for
        // n = 4, q = 1): the lattice PLD (n₂ = 1 at n = 4, n₂ = 8 at n = 16) must bound the
        // exact profile at every ε, in both directions, for one and two steps; the deliberately
        // wrong variant n₂ = 0 (the continuous PLD at z = √n, nothing charged) must fall below
        // it somewhere. Exact sums in f64 err by < 1e-14.
        let mut rejected = 0;
        for (n, n2) in [(4u64, 1u64), (16, 8)] {
            let z = (n as f64).sqrt();
            for q in [1.0, 0.5, 0.1] {
                for steps in [1u32, 2] {
                    let right = lattice_pld_split(q, z, steps as u64, 1, n, n2, cfg()).unwrap();
                    let wrong = dpsgd_pld(q, z, steps as u64, cfg()).unwrap();
                    let mut caught = false;
                    for i in 0..=60 {
                        let eps = i as f64 * 0.05;
                        let (rem, add) = exact_lattice_delta(n as f64, 1, q, steps, eps);
                        let truth = rem.max(add);
                        let d = right.delta(eps).unwrap();
                        assert!(
                            d >= truth - 1e-14,
                            "n {n} q {q} T {steps} eps {eps}: {d} < {truth}"
                        );
                        caught |= wrong.delta(eps).unwrap() < truth - 1e-9;
                    }
                    rejected += usize::from(caught);
                }
            }
        }
        // Caught on every case with q = 1 and q = 0.5 at n = 4 at least.
        assert!(
            rejected >= 4,
            "the uncharged variant was caught {rejected} times"
        );
    }

    #[test]
    fn lies_between_the_continuous_pld_and_the_lattice_rdp_on_the_issue_cases() {
        // DP-SGD as dptune runs it: 10,000 coordinates, n = 2^58. The lattice PLD's ε is at
        // least the continuous PLD's at the same z (it proves less) and at most the lattice RDP
        // ε (else it would be useless). The golden lower bounds are for the continuous
        // mechanism at z; they apply to the lattice one up to a relative 2^-55 in z (the module
        // doc's smoothing argument run the other way: the lattice output plus N(0, 8) is within
        // e^{±1e-60} of the continuous mechanism at variance n + 8), far below the margins here.
        // Keeping one direction only must fall below them on some case (a dropped direction is
        // rejected).
        let cases = golden_dpsgd();
        assert_eq!(cases.len(), 3);
        let mut dropped = 0;
        for (q, z, steps, delta, lower) in cases {
            let lattice = dpsgd_lattice_pld(q, z, steps, 10_000, 1 << 58, cfg()).unwrap();
            let e = lattice.epsilon(delta).unwrap();
            let cont = dpsgd_pld(q, z, steps, cfg())
                .unwrap()
                .epsilon(delta)
                .unwrap();
            let rdp = rdp_epsilon(&dpsgd_discrete_curve(q, z, steps).unwrap(), delta)
                .unwrap()
                .eps;
            // Both are computed upper bounds on a grid: z₁ is below z by a relative 2^-52,
            // which moves the discretisation (and the Chernoff window of the 10,000-fold power)
            // by far less than its resolution, and the computed ε can move either way by a
            // relative 1e-9 (seen: 5e-10 below on the 10,000-step case). The true ε is monotone.
            assert!(
                e >= cont * (1.0 - 1e-8) && e >= lower && e <= rdp,
                "{e}: {cont} {lower} {rdp}"
            );
            assert!(
                e <= cont * (1.0 + 1e-8),
                "the split costs nothing visible: {e} {cont}"
            );
            let remove_only = Pld {
                backward: None,
                ..lattice.clone()
            };
            let add_only = Pld {
                forward: lattice.backward.clone().unwrap(),
                backward: None,
                ..lattice
            };
            let one = remove_only
                .epsilon(delta)
                .unwrap()
                .min(add_only.epsilon(delta).unwrap());
            dropped += usize::from(one < lower);
        }
        assert!(dropped >= 1, "a dropped direction must be caught somewhere");
    }

    #[test]
    fn preconditions_are_checked() {
        let bad = [
            dpsgd_lattice_pld(0.01, 1.0, 10, 0, 1 << 58, cfg()),
            dpsgd_lattice_pld(0.01, 1.0, 10, 5, ROUNDING_VARIANCE, cfg()),
            dpsgd_lattice_pld(0.01, 0.0, 10, 5, 1 << 58, cfg()),
            dpsgd_lattice_pld(0.01, 1.0, 0, 5, 1 << 58, cfg()),
            dpsgd_lattice_pld(0.0, 1.0, 10, 5, 1 << 58, cfg()),
        ];
        for (b, name) in
            bad.into_iter()
                .zip(["dim", "grid_variance", "noise_multiplier", "steps", "q"])
        {
            match b {
                Err(Error::InvalidParameter { name: n, .. }) => assert_eq!(n, name),
                other => panic!("{name}: {other:?}"),
            }
        }
    }
}

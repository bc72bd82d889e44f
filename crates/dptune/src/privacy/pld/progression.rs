//! Exact self-composition of a loss law on an arithmetic progression, before discretising.
//!
//! A mechanism with integer outputs whose privacy loss is affine in the output has all its
//! losses on a progression: the discrete Gaussian's L(o) = Δ(2o − Δ)/(2σ²) takes the values
//! (a + 2Δ·j)·c with integers a, j and c = 1/(2σ²). Losses of independent applications add
//! (Koskela, Jälkö & Honkela 2020, arXiv 1906.03049, Thm. 1), so the loss of T applications lies
//! on (T·a + 2Δ·j)·c, and its law is the T-fold convolution of the index law. That convolution is
//! computed here directly, by repeated squaring, and only the result is discretised onto the
//! loss grid by connect-the-dots ([`Builder`]; Doroshenko et al. 2022, arXiv 2207.04380). The
//! discretisation of the exact composed law dominates the composition (Zhu, Dong & Wang 2022,
//! arXiv 2106.08567, Def. 7) and is tighter than composing T discretised laws; the work is a few
//! convolutions of a few hundred indices instead of FFTs over the whole grid window, which has
//! about 1/(2Δ·c·h) grid points between neighbouring indices, nearly all of them empty.
//!
//! Errors, all charged:
//!
//! * **Tails.** After every convolution at most `tail` of mass is cut from each end: the bottom
//!   is moved up to the lowest kept index, the top goes to the +∞ atom (both only raise losses;
//!   pmf module docs).
//! * **Floating point.** The constructor states a relative error ρ₀ of every single-application
//!   mass against the exact law (its special functions included). Every term is non-negative,
//!   so every computed entry of a composition stays within a factor (1 ± ρ) of the exact one: a
//!   sum of m non-negative products errs by at most γ_m of its value (Higham 2002, *Accuracy and
//!   Stability of Numerical Algorithms*, eq. (3.5)), relative errors of the operands multiply
//!   (so ρ grows about like T·ρ₀), and a product that underflows loses at most 2⁻¹⁰⁷⁴, charged
//!   in absolute terms. The L1
//!   error of the result is at most ρ/(1 − ρ) times its computed mass plus the underflow
//!   allowance, added to `err` of the discretised law.

use super::discretise::Builder;
use super::grid_limit::GridTooLarge;
use super::pmf::LossPmf;
use crate::numeric::{gamma, inflate, MIN_SUBNORMAL};

/// The most products one convolution may take before the caller falls back to the FFT route
/// (about a millisecond of work).
const MAX_PRODUCTS: usize = 1 << 21;

/// Masses on the losses (num0 + (first + j)·step)/den, j = 0..probs.len(), plus an atom at +∞.
#[derive(Debug, Clone)]
pub(super) struct Progression {
    /// Numerator of the loss of index 0 (integer, exact).
    num0: i128,
    /// Numerator step between neighbouring indices.
    step: i128,
    /// Index of `probs[0]`.
    first: i128,
    /// The common denominator of every loss.
    den: f64,
    probs: Vec<f64>,
    inf: f64,
    /// Every entry of `probs` is within a factor (1 ± rho) of the exact value.
    rho: f64,
    /// Absolute L1 allowance for products that underflowed.
    underflow: f64,
}

impl Progression {
    /// A law with masses `probs` on losses (num0 + j·step)/den and `inf` at +∞, each mass
    /// within a factor (1 ± rho) of the dominating law it stands for.
    pub(super) fn new(
        num0: i128,
        step: i128,
        den: f64,
        probs: Vec<f64>,
        inf: f64,
        rho: f64,
    ) -> Self {
        Self {
            num0,
            step,
            first: 0,
            den,
            probs,
            inf,
            rho,
            underflow: 0.0,
        }
    }

    /// The loss of index j: the numerator is an exact integer; its conversion and the quotient
    /// round once each (within the upward nudge of [`Builder::atom`]).
    fn loss(&self, j: usize) -> f64 {
        (self.num0 + (self.first + j as i128) * self.step) as f64 / self.den
    }

    /// Computed finite mass, rounded up for its summation.
    fn mass(&self) -> f64 {
        inflate(self.probs.iter().sum(), 2.0 * gamma(self.probs.len()))
    }

    /// An upper bound on the exact finite mass.
    fn mass_up(&self) -> f64 {
        inflate(self.mass(), 2.0 * self.rho) + self.underflow
    }

    /// The law of the sum of independent losses from `self` and `other` (same step and den),
    /// tails cut by `tail`; `None` when it would take more than [`MAX_PRODUCTS`] products.
    fn convolve(&self, other: &Progression, tail: f64) -> Option<Progression> {
        let (a, b) = (&self.probs, &other.probs);
        if a.len().checked_mul(b.len())? > MAX_PRODUCTS {
            return None;
        }
        let mut probs = vec![0.0; a.len() + b.len() - 1];
        for (i, &x) in a.iter().enumerate() {
            for (p, &y) in probs[i..].iter_mut().zip(b) {
                *p += x * y;
            }
        }
        let terms = a.len().min(b.len());
        let rho = inflate(
            (1.0 + self.rho) * (1.0 + other.rho) * (1.0 + gamma(terms)) - 1.0,
            4.0 * f64::EPSILON,
        );
        // P[∞ in the sum] ≤ inf_a·(total_b) + total_a·inf_b with totals bounded above.
        let inf = inflate(
            self.inf * (other.mass_up() + other.inf) + self.mass_up() * other.inf,
            4.0 * f64::EPSILON,
        );
        let underflow = inflate(
            self.underflow * (other.mass_up() + other.inf)
                + other.underflow * (self.mass_up() + self.inf)
                + (a.len() * b.len()) as f64 * MIN_SUBNORMAL,
            4.0 * f64::EPSILON,
        );
        let mut out = Progression {
            num0: self.num0 + other.num0,
            step: self.step,
            first: self.first + other.first,
            den: self.den,
            probs,
            inf: inf.min(1.0),
            rho,
            underflow,
        };
        out.truncate(tail);
        Some(out)
    }

    /// Cuts at most `tail` of (computed) mass from each end: the bottom moves up to the lowest
    /// kept index (its sum errs by γ_n more), the top goes to +∞ with its relative error.
    fn truncate(&mut self, tail: f64) {
        let n = self.probs.len();
        let (mut lo, mut below) = (0, 0.0);
        while lo + 1 < n && below + self.probs[lo] <= tail {
            below += self.probs[lo];
            lo += 1;
        }
        let (mut hi, mut above) = (n, 0.0);
        while hi > lo + 1 && above + self.probs[hi - 1] <= tail {
            above += self.probs[hi - 1];
            hi -= 1;
        }
        let sum_error = gamma(n);
        self.probs[lo] += below;
        // The exact mass cut is at most the computed one over (1 − ρ)(1 − γ).
        self.inf = inflate(
            self.inf + above * (1.0 + 2.0 * (self.rho + sum_error)),
            4.0 * f64::EPSILON,
        )
        .min(1.0);
        self.rho = inflate(
            (1.0 + self.rho) * (1.0 + sum_error) - 1.0,
            4.0 * f64::EPSILON,
        );
        self.probs.truncate(hi);
        self.probs.drain(..lo);
        self.first += lo as i128;
    }

    /// The law of `t` independent copies by repeated squaring; `None` when a convolution would
    /// be too large (the caller then composes on the grid by FFT).
    pub(super) fn power(&self, t: u64, tail: f64) -> Option<Progression> {
        let mut acc: Option<Progression> = None;
        let mut base = self.clone();
        let mut t = t;
        loop {
            if t & 1 == 1 {
                acc = Some(match acc {
                    None => base.clone(),
                    Some(a) => a.convolve(&base, tail)?,
                });
            }
            t >>= 1;
            if t == 0 {
                return acc;
            }
            base = base.convolve(&base, tail)?;
        }
    }

    /// Connect-the-dots onto the grid of width `h`, with the floating-point error of the masses
    /// added to the law's `err`.
    pub(super) fn discretise(&self, h: f64) -> Result<LossPmf, GridTooLarge> {
        let last = self.probs.len() - 1;
        let mut b = Builder::new(h, self.loss(0), self.loss(last))?;
        for (j, &p) in self.probs.iter().enumerate() {
            b.atom(p, self.loss(j));
        }
        b.atom(self.inf, f64::INFINITY);
        let mut pmf = b.finish();
        let rel = self.rho / (1.0 - self.rho);
        pmf.err = inflate(
            pmf.err + self.mass() * rel + self.underflow,
            4.0 * f64::EPSILON,
        );
        Ok(pmf)
    }
}

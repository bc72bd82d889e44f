//! Shared numerics: floating-point error bounds (below), and the crate's one
//! bisection loop (`bisect`) and one Gauss–Legendre rule (`quadrature`).
//!
//! Floating-point error bounds are proven, because privacy arithmetic rounds up (DESIGN
//! rule 2).
//!
//! A sensitivity is usually derived for exact arithmetic; the computer evaluates the query in
//! `f64`. Two tools close that gap, and every private sum in the crate uses one of them:
//!
//! * **Exact accumulation on a power-of-two grid** ([`GridSum`]): each record's term is clipped
//!   *on the grid* (integer coordinates whose L2 norm is checked exactly in integer arithmetic)
//!   and the terms are added exactly in `i128`. The sensitivity is then exactly the stated
//!   radius, whatever the floating-point errors inside a term and however many terms there
//!   are; no bound on the (possibly private) record count is needed. Used where the noise lives
//!   on a grid anyway: DP-SGD's clipped gradient sums, ridge's XᵀX and Xᵀy, the clipped-loss
//!   scorer.
//! * **Forward-error bounds charged to the sensitivity** ([`gamma`], [`abs_sum_up`],
//!   [`norm_up`]): for a query computed in floating point, |computed − exact| ≤ E with E a
//!   function of public values only, so neighbouring computed values differ by at most Δ + 2E.
//!   Used by the GP releases and scores, whose linear maps are public matrices.
//!
//! Model (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., SIAM 2002, §2.2):
//! IEEE binary64 round-to-nearest, fl(a ∘ b) = (a ∘ b)(1 + θ), |θ| ≤ u = 2⁻⁵³, for + − × ÷ √
//! when no overflow occurs; a product that underflows is off by at most 2⁻¹⁰⁷⁵ in absolute terms,
//! while sums and differences are exact in the subnormal range. Bounds below that rely on the
//! model say so.

use crate::error::{check_positive, Error, Result};
use crate::resources::try_filled;

pub(crate) mod bisect;
pub(crate) mod quadrature;
mod round;

pub use round::{add_up, mul_up, round_up};

/// The unit roundoff u = 2⁻⁵³ of binary64 round-to-nearest.
pub const UNIT_ROUNDOFF: f64 = 1.1102230246251565e-16;

/// 2⁻¹⁰⁷⁴, the smallest positive subnormal (twice the largest underflow error of a product).
pub const MIN_SUBNORMAL: f64 = f64::from_bits(1);

/// The largest clipping radius in accumulation steps (so that every integer coordinate is exact
/// in `f64`); a finer noise grid is accumulated on a coarser power of two and scaled exactly.
const MAX_GRID_STEPS: f64 = 4_503_599_627_370_496.0; // 2^52

/// The largest factor 2^shift between the accumulation grid and the noise grid.
const MAX_SHIFT: u32 = 64;

/// x rounded up by `steps` units in the last place (for a non-negative result of `steps` or
/// fewer correctly rounded operations: one ulp is at least u times the value).
pub(crate) fn up(x: f64, steps: u32) -> f64 {
    (0..steps).fold(x, |y, _| y.next_up())
}

/// γ_n = n·u/(1 − n·u) (Higham 2002, Lemma 3.1), rounded up; +∞ once n·u ≥ 1/2.
///
/// Recursive summation of n + 1 terms in **any order** (any summation tree, with or without
/// fused multiply-adds) errs by at most γ_n·Σ|xᵢ| (Higham eq. (4.4)), and a dot product of
/// length n by at most γ_n·Σ|xᵢyᵢ| (Higham eq. (3.5)), barring underflow in the products.
/// Worked number: γ_1000 = 1000u/(1 − 1000u) = 1.11022302462528e-13.
pub fn gamma(n: usize) -> f64 {
    // n·u is exact (n < 2^53 times a power of two); 1 − n·u and the quotient round once each.
    let nu = n as f64 * UNIT_ROUNDOFF;
    if n == 0 {
        return 0.0;
    }
    if nu >= 0.5 {
        return f64::INFINITY;
    }
    up(nu / (1.0 - nu), 3)
}

/// x·(1 + rel) rounded up, for x, rel ≥ 0 (computed as x + x·rel so that a tiny rel is not lost
/// in 1 + rel; two roundings, each covered by one ulp).
pub fn inflate(x: f64, rel: f64) -> f64 {
    up(x + x * rel, 2)
}

/// An upper bound on Σ|xᵢ| ([`sum_up`] of the float sum of the |xᵢ|). +∞ on overflow.
pub fn abs_sum_up(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (n, s) = xs
        .into_iter()
        .fold((0usize, 0.0), |(n, s), x| (n + 1, s + x.abs()));
    sum_up(s, n)
}

/// An upper bound on the exact sum of `n` non-negative terms whose float sum (in any order) is
/// `s`: the float sum errs by at most γ_{n−1} of the exact one, so the exact sum is at most
/// fl/(1 − γ) ≤ fl·(1 + 2γ) while γ ≤ 1/2, i.e. below about 3·10^15 terms (+∞ beyond).
pub fn sum_up(s: f64, n: usize) -> f64 {
    let g = gamma(n.saturating_sub(1));
    if g <= 0.5 {
        inflate(s, 2.0 * g)
    } else {
        f64::INFINITY
    }
}

/// An upper bound on ‖x‖₂, rigorous including underflow.
///
/// The float sum of squares q of n terms satisfies Σxᵢ² ≤ (q + n·2⁻¹⁰⁷⁴)·(1 + 2γ_{n+1}): each
/// square is within a factor (1 ± u) of xᵢ², or within 2⁻¹⁰⁷⁵ when it underflows, and the sum
/// adds γ_{n−1}. The square root is correctly rounded, so one ulp up covers it.
/// Worked number: ‖(3, 4)‖ ≤ 5.000000000000002 (two ulps above 5).
pub fn norm_up(xs: impl IntoIterator<Item = f64>) -> f64 {
    let (n, q) = xs
        .into_iter()
        .fold((0usize, 0.0), |(n, q), x| (n + 1, q + x * x));
    // n·2^-1074 is exact for n < 2^52 (a subnormal multiple), and the addition is rounded once.
    let q = up(q + n as f64 * MIN_SUBNORMAL, 1);
    up(inflate(q, 2.0 * gamma(n + 1)).sqrt(), 1)
}

/// Exact sums of clipped vectors on the grid r·ℤ (r a power of two): the private sums of the
/// learners.
///
/// [`GridSum::add`] maps a term v to integer coordinates T (units of the accumulation grid
/// a = r·2^s, the smallest such power of two with R/a ≤ 2⁵²; usually a = r) with
/// **‖T‖₂ ≤ K = ⌊R/a⌋ checked exactly** in integer arithmetic, where R is the public radius:
/// 1. the textbook float clip, in grid units, to K·(1 − 2⁻³²) ≤ R/a (a term with a NaN or
///    infinite entry becomes zero);
/// 2. each coordinate truncated toward zero into [−K, K];
/// 3. the check Σ Tᵢ² ≤ K²: first by a rigorous float upper bound on the sum of the integer
///    squares (which settles it unless the float clip was off by more than 2⁻³² relative), else
///    exactly in `u128`; while it fails, every coordinate is scaled by a factor below 1 − 2⁻²⁰
///    and truncated again (each pass lowers every non-zero |Tᵢ| by at least 1, so this ends).
///
/// The terms are added exactly in `i128` (no overflow for fewer than 2⁷⁵ terms).
///
/// **What this proves.** Whatever the rounding in step 1, each record contributes a vector of
/// norm at most K·a ≤ R, and the sum of the contributions is exact. So two datasets that differ
/// by one record (add/remove) give sums within L2 distance K·a ≤ R, i.e. R/r noise-grid steps,
/// and two that differ in one record (replace) within 2R: the sensitivity is exactly R (or 2R) with no
/// floating-point slack and no bound on the number of terms. [`GridSum::release`] adds exact
/// integer noise to these integer coordinates, so the grid mechanisms' own rounding charge
/// (Δ + r√dim for `GridGaussian`, Δ + r for `GridLaplace`) is never used up: there is nothing
/// left to round. Step 2 moves each coordinate toward zero by less than one step a (utility
/// only, not privacy).
#[derive(Debug, Clone)]
pub struct GridSum {
    resolution: f64,
    /// The accumulation grid a = resolution·2^shift.
    shift: u32,
    /// 2γ_{dim}: relative slack of a float sum of `dim` squares.
    sq_slack: f64,
    limit: i64,
    units: Vec<i128>,
    term: Vec<i64>,
}

/// Enforces Σ tᵢ² ≤ limit² exactly (in `u128`): while it fails, scales every coordinate by a
/// factor below 1 − 2⁻²⁰ and truncates toward zero. For |tᵢ| ≤ 2⁵² each pass lowers every non-zero
/// |tᵢ| by at least 1 (the float product is exact input, strictly smaller result), so it ends.
fn shrink_to(term: &mut [i64], limit: i64) {
    let k2 = (limit as u128) * (limit as u128);
    loop {
        let sq = term.iter().fold(0u128, |a, &t| {
            a.saturating_add((t as i128 * t as i128) as u128)
        });
        if sq <= k2 {
            return;
        }
        let shrink = (limit as f64 / (sq as f64).sqrt()).min(1.0) * (1.0 - 2f64.powi(-20));
        for t in term.iter_mut() {
            *t = (*t as f64 * shrink).trunc() as i64;
        }
    }
}

impl GridSum {
    /// An empty sum of `dim`-dimensional terms of L2 norm at most `radius` (named `name` in
    /// errors) for noise on the grid `resolution`·ℤ. Needs a normal power-of-two resolution, and
    /// a radius of at least one and at most 2¹¹⁶ grid steps.
    pub fn new(resolution: f64, radius: f64, name: &'static str, dim: usize) -> Result<Self> {
        let power_of_two = resolution.is_normal()
            && resolution > 0.0
            && resolution.to_bits() & ((1u64 << 52) - 1) == 0;
        if !power_of_two {
            return Err(Error::invalid(
                "resolution",
                resolution,
                "must be a positive normal power of two",
            ));
        }
        check_positive(name, radius)?;
        let mut shift = 0;
        while radius / resolution > MAX_GRID_STEPS * 2f64.powi(shift as i32) && shift < MAX_SHIFT {
            shift += 1;
        }
        let steps = (radius / (resolution * 2f64.powi(shift as i32))).floor();
        if !(1.0..=MAX_GRID_STEPS).contains(&steps) {
            return Err(Error::invalid(
                name,
                radius,
                format!(
                    "is {:e} steps of the noise grid {resolution:e}; the exact sum needs 1 to \
                     2^116 steps (is the noise too small or too large for it?)",
                    radius / resolution
                ),
            ));
        }
        if dim == 0 {
            return Err(Error::invalid("dim", dim, "must be >= 1"));
        }
        Ok(Self {
            resolution,
            shift,
            sq_slack: 2.0 * gamma(dim + 1),
            limit: steps as i64,
            units: try_filled(dim, 0, "dim", dim)?,
            term: try_filled(dim, 0, "dim", dim)?,
        })
    }

    /// The grid spacing r.
    pub fn resolution(&self) -> f64 {
        self.resolution
    }

    /// The exact sum in units of the accumulation grid (the noise grid times 2^[`Self::shift`]).
    pub fn units(&self) -> &[i128] {
        &self.units
    }

    /// log₂ of the accumulation grid over the noise grid (0 unless the radius exceeds 2⁵² noise
    /// grid steps).
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// Resets the sum to zero.
    pub fn clear(&mut self) {
        self.units.iter_mut().for_each(|u| *u = 0);
    }

    /// Clips `v` on the grid (see the type) and adds it exactly. Refuses a slice of another
    /// length; never fails on its values (non-finite or huge values are clipped like any other).
    pub fn add(&mut self, v: &[f64]) -> Result<()> {
        if v.len() != self.units.len() {
            return Err(Error::invalid(
                "values",
                format!("{} coordinates", v.len()),
                format!("must have dim = {} coordinates", self.units.len()),
            ));
        }
        let mut norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        if norm.is_infinite() {
            // Finite entries whose squares overflow: the norm of the rescaled vector.
            let top = v.iter().fold(0.0, |m: f64, x| m.max(x.abs()));
            norm = top * v.iter().map(|x| (x / top).powi(2)).sum::<f64>().sqrt();
        }
        let k = self.limit as f64;
        let step = self.resolution * 2f64.powi(self.shift as i32);
        // In grid units, clip to K·(1 − 2⁻³²): the float clip's few-ulp overshoot then stays
        // below K and the exact check below is settled by the fast float bound.
        let inner = k * (1.0 - 2f64.powi(-32));
        let scale = if !norm.is_finite() {
            0.0
        } else if norm / step > inner {
            inner / (norm / step) / step
        } else {
            1.0 / step
        };
        let mut sq = 0.0;
        for (t, &x) in self.term.iter_mut().zip(v) {
            let y = x * scale;
            let y = if y.is_finite() {
                y.trunc().clamp(-k, k)
            } else {
                0.0
            };
            sq += y * y;
            *t = y as i64;
        }
        // Fast path: the float sum of the integer squares, rounded up to a bound (γ, no
        // underflow for integers), is at most K² (fl(K·K) moved down one ulp is ≤ K²).
        if inflate(sq, self.sq_slack) <= (k * k).next_down() {
            self.accumulate();
            return Ok(());
        }
        shrink_to(&mut self.term, self.limit);
        self.accumulate();
        Ok(())
    }

    /// Adds the checked term to the exact sum.
    fn accumulate(&mut self) {
        for (u, &t) in self.units.iter_mut().zip(&self.term) {
            *u = u.saturating_add(t as i128);
        }
    }

    /// The sum plus exact integer noise, `(Sᵢ + noise())·r` for each coordinate i in order, as
    /// the nearest `f64` (post-processing of the private integer vector). `noise` must draw
    /// from the grid mechanism whose resolution this sum was built with.
    pub fn release(&self, mut noise: impl FnMut() -> i64) -> Vec<f64> {
        let scale = 1i128 << self.shift;
        self.units
            .iter()
            .map(|&u| {
                let exact = u.saturating_mul(scale);
                exact.saturating_add(noise() as i128) as f64 * self.resolution
            })
            .collect()
    }

    /// The sum itself, `Sᵢ·r` (**not private**: for tests and non-private baselines).
    pub fn value(&self) -> Vec<f64> {
        self.release(|| 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::SecureRng;
    use num_rational::BigRational;
    use num_traits::{Signed, Zero};

    fn exact(x: f64) -> BigRational {
        BigRational::from_float(x).unwrap()
    }

    fn exact_sum(xs: &[f64]) -> BigRational {
        xs.iter().fold(BigRational::zero(), |a, &x| a + exact(x))
    }

    #[test]
    fn worked_numbers() {
        // γ_1000 = 1000·2^-53/(1 − 1000·2^-53) = 1.110223024625279...e-13, rounded up.
        let g = gamma(1000);
        assert!(
            g > 1.110223024625279e-13 && g < 1.110223024625282e-13,
            "{g:e}"
        );
        assert_eq!(gamma(0), 0.0);
        assert_eq!(gamma(1usize << 52), f64::INFINITY);
        // ‖(3, 4)‖: fl gives exactly 5; the bound is a few ulps above.
        let n = norm_up([3.0, 4.0]);
        assert!(n > 5.0 && n < 5.0 + 1e-14, "{n}");
        // Σ|x| of (1, −2, 3) = 6, bound just above.
        let s = abs_sum_up([1.0, -2.0, 3.0]);
        assert!((6.0..6.0 + 1e-14).contains(&s), "{s}");
        // The bound fl·(1 + 2γ) on fl/(1 − γ) needs γ ≤ 1/2: at n − 1 = 2^51 − 1 terms
        // (γ ≈ 1/3) it holds; at 3·2^50 (γ ≈ 0.6, fl/(1 − γ) = 2.5 for fl = 1, but
        // 1 + 2γ = 2.2) it would not, and the bound is +∞.
        let g = gamma((1 << 51) - 2);
        assert!(sum_up(1.0, (1 << 51) - 1) >= 1.0 / (1.0 - g) && g < 0.34);
        assert!(1.0 + 2.0 * gamma(3 << 50) < 1.0 / (1.0 - gamma(3 << 50)));
        assert_eq!(sum_up(1.0, (3 << 50) + 1), f64::INFINITY);
        assert!(inflate(1.0, 1e-30) > 1.0);
        // Underflow: the squares of 1e-200 vanish in f64, the bound does not.
        assert!(norm_up([1e-200; 4]) >= 2e-200);
    }

    /// Catastrophic cancellation: the float sum of (2^53, 1, 1, −2^53) is 0 (each 1 is lost), the
    /// exact sum 2. The γ bound covers the observed error; "no slack" (trusting the float sum)
    /// is refuted.
    #[test]
    fn summation_bound_covers_catastrophic_cancellation() {
        let xs = [2f64.powi(53), 1.0, 1.0, -(2f64.powi(53))];
        let fl: f64 = xs.iter().sum();
        assert_eq!(fl, 0.0);
        let err = (exact(fl) - exact_sum(&xs)).abs();
        assert_eq!(err, exact(2.0));
        let bound = gamma(xs.len() - 1) * abs_sum_up(xs);
        // γ_3·(2^54 + 2) ≈ 6.0: the observed error 2 is covered, zero slack is not.
        assert!((5.9..6.1).contains(&bound), "{bound}");
        assert!(exact(bound) >= err);
        assert!(exact(0.0) < err, "the no-slack variant must be refuted");
    }

    /// The textbook float clip followed by a float sum does not respect the radius exactly:
    /// among random vectors the exact norm of fl(v·R/‖v‖) exceeds R for some. [`GridSum`] keeps
    /// every contribution (hence every neighbouring difference of sums) within R exactly.
    #[test]
    fn grid_clip_is_exact_where_the_float_clip_overshoots() {
        let mut rng = SecureRng::seeded(11);
        let (radius, dim) = (1.0, 64);
        let r = 2f64.powi(-40);
        let mut overshoots = 0;
        for _ in 0..200 {
            let v: Vec<f64> = (0..dim).map(|_| rng.unit_f64() * 8.0 - 4.0).collect();
            // The wrong variant: float clip, exact norm checked in rationals.
            let norm = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            let clipped: Vec<f64> = v.iter().map(|x| x * (radius / norm)).collect();
            let sq = clipped
                .iter()
                .fold(BigRational::zero(), |a, &x| a + exact(x) * exact(x));
            if sq > exact(radius * radius) {
                overshoots += 1;
            }
            // The grid sum of this one term (= a neighbouring difference under add/remove).
            let mut s = GridSum::new(r, radius, "radius", dim).unwrap();
            s.add(&v).unwrap();
            let sq_units: i128 = s.units().iter().map(|u| u * u).sum();
            assert!(sq_units <= 1i128 << 80, "K² = 2^80 exceeded: {sq_units}");
            // And it is the clipped vector to within one grid step per coordinate, plus the
            // 2⁻³² relative inner margin of the clip.
            for (u, c) in s.value().iter().zip(&clipped) {
                assert!((u - c).abs() <= r + c.abs() * 2f64.powi(-31), "{u} vs {c}");
            }
        }
        // Half or so of random directions round outward; the check must be able to fail.
        assert!(
            overshoots > 20,
            "float clip overshoot seen only {overshoots} times"
        );
    }

    /// Adversarial sums: large cancelling terms, exact regardless of order, where the float sum
    /// loses a whole unit. Neighbouring sums differ by exactly the removed term's grid vector.
    #[test]
    fn grid_sum_is_exact_under_cancellation() {
        let r = 2f64.powi(-10);
        let mut s = GridSum::new(r, 2f64.powi(40), "radius", 1).unwrap();
        let terms = [2f64.powi(40), 1.0, 1.0, -(2f64.powi(40)), 0.5];
        for t in terms {
            s.add(&[t]).unwrap();
        }
        assert_eq!(s.value(), vec![2.5]);
        let mut neighbour = GridSum::new(r, 2f64.powi(40), "radius", 1).unwrap();
        for t in &terms[..4] {
            neighbour.add(&[*t]).unwrap();
        }
        assert_eq!(s.units()[0] - neighbour.units()[0], 512); // 0.5 / 2^-10
                                                              // Non-finite and oversized terms are clipped, never an error.
        let mut t = GridSum::new(0.25, 1.0, "radius", 2).unwrap();
        t.add(&[f64::NAN, 1.0]).unwrap();
        t.add(&[f64::INFINITY, 0.0]).unwrap();
        assert_eq!(t.units(), &[0, 0]);
        t.add(&[1e300, 1e300]).unwrap();
        assert_eq!(t.units(), &[2, 2]); // ⌊(1/√2)/0.25⌋ = 2 in each coordinate
        assert!(t.add(&[1.0]).is_err());
        // Release adds the integer noise in grid units.
        assert_eq!(t.release(|| 3), vec![1.25, 1.25]);
        t.clear();
        assert_eq!(t.value(), vec![0.0, 0.0]);
    }

    /// The exact fallback: (3, 4) has norm 5 > 4; one pass scales by 0.8·(1 − 2⁻²⁰) and
    /// truncates to (2, 3), norm² 13 ≤ 16. A term already inside is left alone.
    #[test]
    fn exact_check_shrinks_an_overshooting_term() {
        let mut t = [3, -4];
        shrink_to(&mut t, 4);
        assert_eq!(t, [2, -3]);
        let mut inside = [4, 0];
        shrink_to(&mut inside, 4);
        assert_eq!(inside, [4, 0]);
        let mut big = [1i64 << 52, 1i64 << 52];
        shrink_to(&mut big, 1i64 << 52);
        let sq: u128 = big.iter().map(|&v| (v as i128 * v as i128) as u128).sum();
        assert!(sq <= 1u128 << 104);
    }

    #[test]
    fn bad_grids_are_named() {
        let e = GridSum::new(0.3, 1.0, "clip_norm", 1).unwrap_err();
        assert!(e.to_string().contains("`resolution`"), "{e}");
        let e = GridSum::new(1.0, 0.5, "clip_norm", 1).unwrap_err();
        assert!(e.to_string().contains("`clip_norm`"), "{e}");
        let e = GridSum::new(2f64.powi(-120), 1.0, "cap", 1).unwrap_err();
        assert!(e.to_string().contains("`cap`"), "{e}");
        // 2^60 noise-grid steps: accumulated on a grid 2^8 coarser, scaled back exactly.
        let mut fine = GridSum::new(2f64.powi(-60), 1.0, "cap", 1).unwrap();
        assert_eq!(fine.shift(), 8);
        fine.add(&[0.75]).unwrap();
        assert_eq!(fine.units(), &[3i128 << 50]);
        assert_eq!(fine.release(|| 1024), vec![0.75 + 2f64.powi(-50)]);
        assert!(GridSum::new(1.0, 4.0, "cap", 0).is_err());
        assert!(GridSum::new(1.0, f64::NAN, "cap", 1).is_err());
    }
}

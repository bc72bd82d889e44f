//! A certified minimiser of L2-regularised logistic regression: a point θ together with a
//! proven bound on its distance to the exact minimiser θ*, which holds for every dataset
//! (nothing here fails or refuses on data). [`super::OutputPerturbation`] charges for that
//! distance.
//!
//! The objective, over the scaled records xᵢ (‖xᵢ‖ ≤ 1) with labels yᵢ ∈ {−1, +1}, is
//!
//! F(θ) = (1/N) Σᵢ ℓ(yᵢ θᵀxᵢ) + (Λ/2)‖θ‖²,  ℓ(t) = ln(1 + e^{−t}),  N = max(n, m),
//!
//! with n the public size and m the record count. F is Λ-strongly convex, so its gradient is
//! strongly monotone, ⟨∇F(θ) − ∇F(θ*), θ − θ*⟩ ≥ Λ‖θ − θ*‖² (Nesterov, *Lectures on Convex
//! Optimization*, 2018, §2.1.3), and with ∇F(θ*) = 0 and Cauchy–Schwarz, for every θ:
//!
//! ‖θ − θ*‖ ≤ ‖∇F(θ)‖ / Λ.
//!
//! **Solver.** A fixed number of safeguarded Newton steps (the full step when it decreases F,
//! else the damped step 1/(1 + λ/(2√Λ)) of self-concordant analysis: F is self-concordant
//! with constant 1/√Λ because |ℓ‴| ≤ ℓ″ and ‖xᵢ‖ ≤ 1, Bach 2010, arXiv 0910.4627; this only
//! affects speed, privacy rests on the certificate). Then the certificate: an upper bound
//! on ‖∇F(θ)‖ that includes every floating-point error of computing the gradient
//! ([`Problem::certified_gradient`]). If it is at most the public tolerance τ, θ is within
//! τ/Λ of θ*.
//!
//! **If the certificate fails** (it never did in our tests, but nothing proves Newton
//! converges in a fixed number of steps), the solver does not refuse: it runs projected
//! gradient descent onto the public ball ‖θ‖ ≤ 1/(2Λ) (which contains θ*, since
//! ‖θ*‖ ≤ ‖∇F(0)‖/Λ ≤ 1/(2Λ); projecting onto it never moves a point away from θ*) for a
//! public number K of steps. With η = 1/(Λ + 1/4) the map θ ↦ θ − η∇F(θ) is a contraction
//! toward θ* with factor q = 1 − ηΛ (its Jacobian I − η∇²F has eigenvalues in [0, q], as
//! ΛI ⪯ ∇²F ⪯ (Λ + 1/4)I), so K steps reduce the initial distance ≤ 2R (R: the ball's radius
//! with rounding) to τ/(2Λ), and the floating-point error of each step (a public bound E,
//! using ‖θ‖ ≤ R) adds at most E/(1 − q) ≤ τ/(2Λ). The latter is checked from public parameters
//! before any data are touched ([`Problem::check_precision`]). Either way the returned θ is
//! within τ/Λ of θ*.
//!
//! Floating-point bounds follow Higham, *Accuracy and Stability of Numerical Algorithms*
//! (2nd ed., 2002): a dot product of k terms has error ≤ γ_k Σ|aᵢbᵢ| (Eq. 3.5); a sum in
//! which every term passes through at most k additions has error ≤ γ_k Σ|aᵢ| (§4.2, Eq.
//! 4.3 and the pairwise case), γ_k = ku/(1 − ku), u = 2⁻⁵³. The gradient sum over records is
//! pairwise (blocks of [`BLOCK`] records, then a binary tree), so every term passes through
//! fewer than [`SUM_DEPTH`] additions whatever m is: the bound is public. One assumption on
//! the platform: `f64::exp` is within 4 ulp (glibc's and musl's are within 1).

use nalgebra::{DMatrix, DVector};

use crate::data::{Dataset, Records};
use crate::error::{Error, Result};

use super::model::sigmoid;

/// Unit roundoff of `f64`.
const U: f64 = f64::EPSILON / 2.0;
/// Records summed sequentially before pairwise combination.
const BLOCK: usize = 32;
/// Every term of the pairwise gradient sum passes through fewer additions than this: at most
/// BLOCK − 1 in its block, at most 64 carries of the binary counter and at most 64 additions
/// in the final collapse.
const SUM_DEPTH: usize = BLOCK + 128;
/// Relative error bound of `sigmoid` (an `exp` within 4 ulp, one addition, one division).
const SIGMOID_ERROR: f64 = 16.0 * U;

/// γ_k = ku/(1 − ku), rounded up.
fn gamma(k: usize) -> f64 {
    let ku = k as f64 * U;
    (ku / (1.0 - ku)).next_up().next_up()
}

/// x rounded up by a relative 2⁻⁴⁰ (covers the roundings of the bound's own arithmetic).
fn up(x: f64) -> f64 {
    (x * (1.0 + 2f64.powi(-40))).next_up()
}

/// Absolute slack for underflow: a square below the normal range (entries < 2⁻⁵¹¹ ≈ 1.5e-154)
/// or a product below it loses at most 2⁻¹⁰⁷⁴; summed over any realistic number of entries
/// and records this stays far below 1e-100 (and 1e-100 is far below any tolerance).
const UNDERFLOW: f64 = 1e-100;

/// An upper bound on the exact norm ‖v‖, from the computed one.
fn norm_up(v: &[f64]) -> f64 {
    let n = v.iter().map(|a| a * a).sum::<f64>().sqrt();
    up(n * (1.0 + gamma(v.len() + 2)) + UNDERFLOW)
}

/// The regularised logistic-regression objective on one dataset.
pub(crate) struct Problem<'a> {
    data: &'a Dataset,
    /// The public feature scale a; xᵢ = (a·rowᵢ, a).
    scale: f64,
    /// Λ.
    lambda: f64,
    /// N = max(n, m), an exact integer in `f64`.
    normaliser: f64,
    /// The gradient tolerance τ (public).
    tolerance: f64,
    /// Newton steps before the certificate.
    newton_steps: usize,
    /// The fallback's public step count.
    fallback_steps: usize,
}

/// A point and a proven bound on its distance to the exact minimiser.
#[derive(Debug, Clone)]
pub(crate) struct Solution {
    /// θ (features then the bias coordinate, in the scaled space).
    pub theta: Vec<f64>,
    /// An upper bound on ‖θ − θ*‖, at most τ/Λ (rounded up).
    pub distance: f64,
}

impl<'a> Problem<'a> {
    /// The problem with public size `public_size` (N = max(n, m)), regularisation `lambda`
    /// and gradient tolerance `tolerance`. The feature scale is a = (1 − 2⁻³⁰)/√(max_norm² + 1),
    /// so every scaled record (computed in floating point) has norm < 1 given the dataset's
    /// check ‖row‖ ≤ max_norm·(1 + 10⁻¹²). Fails only on public parameters
    /// ([`Problem::check_precision`]).
    pub(crate) fn new(
        data: &'a Dataset,
        public_size: u64,
        lambda: f64,
        tolerance: f64,
        newton_steps: usize,
    ) -> Result<Self> {
        let fallback_steps = Self::check_precision(data.dim() + 1, lambda, tolerance)?;
        let mn = data.max_norm();
        Ok(Self {
            data,
            scale: (1.0 - 2f64.powi(-30)) / (mn * mn + 1.0).sqrt(),
            lambda,
            normaliser: public_size.max(data.len() as u64).max(1) as f64,
            tolerance,
            newton_steps,
            fallback_steps,
        })
    }

    /// The public feature scale a.
    pub(crate) fn scale(&self) -> f64 {
        self.scale
    }

    fn dim(&self) -> usize {
        self.data.dim() + 1
    }

    /// Record i's scaled features (zeros included) into `x`, with yᵢ ∈ {−1, +1}.
    fn record(&self, i: usize, x: &mut [f64]) -> f64 {
        let row = self.data.row(i);
        for (v, r) in x.iter_mut().zip(row) {
            *v = self.scale * r;
        }
        x[row.len()] = self.scale;
        if self.data.class(i) == 1 {
            1.0
        } else {
            -1.0
        }
    }

    /// The radius R₀ = 1/(2Λ) of the public ball that contains θ* (‖∇F(0)‖ ≤ m/(2N) ≤ 1/2).
    fn radius(lambda: f64) -> f64 {
        up(0.5 / lambda)
    }

    /// A public bound on ‖ĝ − ∇F(θ)‖ for the computed gradient ĝ at any θ with ‖θ‖ ≤ r:
    /// margins θᵀxᵢ err by ≤ γ_d·r, so ℓ′ (1/4-Lipschitz) by ≤ γ_d·r/4, plus the sigmoid's
    /// own error; each product cᵢxᵢⱼ adds u; the pairwise sum γ_{SUM_DEPTH}; and
    /// Σᵢ‖xᵢ‖/N ≤ m/N ≤ 1 turns the per-record errors into a norm. The division by N, the
    /// product Λθⱼ and the final addition each add u of their (bounded) magnitudes.
    fn gradient_error(d: usize, lambda: f64, r: f64) -> f64 {
        let dc = up(gamma(d) * r / 4.0 + SIGMOID_ERROR);
        let xi = up(dc + (1.0 + dc) * gamma(SUM_DEPTH + 1));
        up(xi + 3.0 * U * (1.0 + xi + lambda * r) + UNDERFLOW)
    }

    /// The public per-step error of the fallback and the step count K; refuses (naming
    /// `regularization`) when double precision cannot reach the tolerance. Depends only on
    /// the dimension, Λ and τ.
    pub(crate) fn check_precision(d: usize, lambda: f64, tolerance: f64) -> Result<usize> {
        let r0 = Self::radius(lambda);
        let r = up(r0 * (1.0 + gamma(d + 4)));
        let eta = 1.0 / (lambda + 0.25);
        // 1 − q = ηΛ, rounded down (η may exceed 1/(Λ + 1/4) by one rounding).
        let one_minus_q = (eta * lambda * (1.0 - 4.0 * U)).next_down();
        let g = Self::gradient_error(d, lambda, r);
        let step = up(eta * g + 2.0 * U * (r + 2.0 * eta * (1.0 + lambda * r + g)));
        let per_step = up(step + gamma(d + 4) * r);
        let target = tolerance / lambda / 2.0 * (1.0 - 1e-9);
        let floor = per_step / one_minus_q;
        if floor.is_nan() || floor > target {
            return Err(Error::invalid(
                "regularization",
                lambda,
                format!(
                    "too small for the gradient tolerance {tolerance:e} in double precision \
                     (dimension {d})"
                ),
            ));
        }
        // q^K · 2R ≤ target: K ≥ ln(2R/target)/(−ln q); −ln(1 − x) ≥ x.
        let k = ((2.0 * r / target).ln() / one_minus_q * (1.0 + 1e-9)).ceil();
        if k.is_nan() || k >= 1e15 {
            return Err(Error::invalid(
                "regularization",
                lambda,
                "too small: the fallback's step count overflows",
            ));
        }
        Ok(k as usize + 1)
    }

    /// The computed gradient ∇F(θ), summed pairwise over records.
    fn gradient(&self, theta: &[f64]) -> Vec<f64> {
        let d = self.dim();
        let mut x = vec![0.0; d];
        // Binary counter of partial sums: stack[k] holds a sum of 2^level blocks.
        let mut stack: Vec<(u32, Vec<f64>)> = Vec::new();
        let m = self.data.len();
        let mut start = 0;
        while start < m {
            let end = (start + BLOCK).min(m);
            let mut block = vec![0.0; d];
            for i in start..end {
                let y = self.record(i, &mut x);
                let t: f64 = x.iter().zip(theta).map(|(a, b)| a * b).sum();
                let c = -y * sigmoid(-y * t);
                for (b, v) in block.iter_mut().zip(&x) {
                    if *v != 0.0 {
                        *b += c * v;
                    }
                }
            }
            let mut level = 0;
            while stack.last().is_some_and(|(l, _)| *l == level) {
                let (_, top) = stack.pop().expect("checked");
                for (b, t) in block.iter_mut().zip(top) {
                    *b += t;
                }
                level += 1;
            }
            stack.push((level, block));
            start = end;
        }
        let mut sum = vec![0.0; d];
        while let Some((_, top)) = stack.pop() {
            for (s, t) in sum.iter_mut().zip(top) {
                *s += t;
            }
        }
        sum.iter()
            .zip(theta)
            .map(|(s, th)| self.lambda * th + s / self.normaliser)
            .collect()
    }

    /// An upper bound on the exact ‖∇F(θ)‖ (+∞ if θ is not finite).
    pub(crate) fn certified_gradient(&self, theta: &[f64]) -> f64 {
        if !theta.iter().all(|v| v.is_finite()) {
            return f64::INFINITY;
        }
        let g = norm_up(&self.gradient(theta));
        let r = norm_up(theta);
        let bound = up(g + Self::gradient_error(self.dim(), self.lambda, r));
        if bound.is_nan() {
            f64::INFINITY
        } else {
            bound
        }
    }

    /// F(θ), for the Newton step's descent test only (no rigour needed).
    fn objective(&self, theta: &DVector<f64>) -> f64 {
        let mut x = vec![0.0; self.dim()];
        let loss: f64 = (0..self.data.len())
            .map(|i| {
                let y = self.record(i, &mut x);
                let t = y * x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum::<f64>();
                if t > 0.0 {
                    (-t).exp().ln_1p()
                } else {
                    -t + t.exp().ln_1p()
                }
            })
            .sum();
        loss / self.normaliser + 0.5 * self.lambda * theta.norm_squared()
    }

    /// ∇²F(θ) (lower triangle accumulated over each record's non-zero coordinates).
    fn hessian(&self, theta: &DVector<f64>) -> DMatrix<f64> {
        let d = self.dim();
        let mut h = DMatrix::<f64>::identity(d, d) * self.lambda;
        let mut x = vec![0.0; d];
        let mut nz = Vec::with_capacity(d);
        for i in 0..self.data.len() {
            self.record(i, &mut x);
            let t: f64 = x.iter().zip(theta.iter()).map(|(a, b)| a * b).sum();
            let s = sigmoid(t);
            let w = s * (1.0 - s) / self.normaliser;
            nz.clear();
            nz.extend((0..d).filter(|&j| x[j] != 0.0));
            for (p, &j) in nz.iter().enumerate() {
                let hj = w * x[j];
                for &k in &nz[..=p] {
                    h[(j, k)] += hj * x[k];
                }
            }
        }
        for j in 0..d {
            for k in 0..j {
                h[(k, j)] = h[(j, k)];
            }
        }
        h
    }

    /// `newton_steps` safeguarded Newton steps from 0. Stops early (keeping its point) only
    /// if the Hessian cannot be factorised in floating point; the certificate decides what
    /// the point is worth.
    fn newton(&self) -> Vec<f64> {
        let d = self.dim();
        let mut theta = DVector::<f64>::zeros(d);
        for _ in 0..self.newton_steps {
            let g = DVector::from_vec(self.gradient(theta.as_slice()));
            let Some(chol) = self.hessian(&theta).cholesky() else {
                break;
            };
            let step = chol.solve(&g);
            let decrement = g.dot(&step).max(0.0).sqrt();
            let full = &theta - &step;
            let f0 = self.objective(&theta);
            theta = if self.objective(&full) <= f0 - 0.25 * decrement * decrement {
                full
            } else {
                &theta - step / (1.0 + decrement / (2.0 * self.lambda.sqrt()))
            };
            if !theta.iter().all(|v| v.is_finite()) {
                theta = DVector::zeros(d);
                break;
            }
        }
        theta.as_slice().to_vec()
    }

    /// Projected gradient descent onto ‖θ‖ ≤ R₀ for the public step count `steps`, from
    /// `start` projected (or 0 if not finite). See the module documentation for the proof
    /// that the result is within τ/Λ of θ*.
    fn fallback(&self, start: &[f64], steps: usize) -> Vec<f64> {
        let r0 = Self::radius(self.lambda);
        let eta = 1.0 / (self.lambda + 0.25);
        let project = |v: &mut Vec<f64>| {
            let n = v.iter().map(|a| a * a).sum::<f64>().sqrt();
            if n > r0 {
                let f = r0 / n;
                v.iter_mut().for_each(|a| *a *= f);
            }
        };
        let mut theta = if start.iter().all(|v| v.is_finite()) {
            start.to_vec()
        } else {
            vec![0.0; start.len()]
        };
        project(&mut theta);
        for _ in 0..steps {
            let g = self.gradient(&theta);
            for (t, gi) in theta.iter_mut().zip(g) {
                *t -= eta * gi;
            }
            project(&mut theta);
        }
        theta
    }

    /// The certified solution: Newton, then the certificate, then (only if it fails) the
    /// fallback, whose public step count comes from [`Problem::check_precision`].
    pub(crate) fn solve(&self) -> Solution {
        let limit = up(self.tolerance / self.lambda);
        let theta = self.newton();
        let certified = self.certified_gradient(&theta);
        if certified <= self.tolerance {
            // ‖θ − θ*‖ ≤ ‖∇F(θ)‖/Λ ≤ τ/Λ (the reported distance is rounded up).
            let distance = up(certified / self.lambda).min(limit);
            return Solution { theta, distance };
        }
        let theta = self.fallback(&theta, self.fallback_steps);
        let certified = up(self.certified_gradient(&theta) / self.lambda);
        Solution {
            theta,
            distance: certified.min(limit),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::testdata::toy;

    fn dist(a: &[f64], b: &[f64]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q).powi(2))
            .sum::<f64>()
            .sqrt()
    }

    #[test]
    fn newton_is_certified_and_the_certificate_bounds_the_distance() {
        let data = toy(500, 0.1, 3);
        let (lambda, tau) = (1e-2, 1e-9);
        let newton = Problem::new(&data, 500, lambda, tau, 40).unwrap();
        assert!(newton.certified_gradient(&newton.newton()) <= tau);
        let exact = newton.solve();
        assert!(exact.distance <= tau / lambda, "{}", exact.distance);
        // One Newton step from 0 is far from θ*: its certified bound ‖ĝ‖/Λ must still cover
        // the true distance (θ* is known to within `exact.distance`) ...
        for steps in 0..4 {
            let p = Problem::new(&data, 500, lambda, tau, steps).unwrap();
            let theta = p.newton();
            let bound = p.certified_gradient(&theta) / lambda;
            let truth = dist(&theta, &exact.theta);
            assert!(
                truth <= bound + exact.distance,
                "{steps}: {truth} > {bound}"
            );
            // ... and the deliberately wrong bound ‖ĝ‖/(Λ + 1/4) (the smoothness constant
            // instead of the strong convexity one) must fail this check at some step count.
            if steps == 1 {
                let wrong = p.certified_gradient(&theta) / (lambda + 0.25);
                assert!(truth > wrong + exact.distance, "{truth} <= {wrong}");
            }
        }
    }

    #[test]
    fn the_fallback_reaches_the_tolerance_from_anywhere() {
        // Zero Newton steps: the certificate at 0 fails and the fallback runs for its public
        // step count; its result must lie within τ/Λ of the (certified) Newton solution.
        let data = toy(300, 0.2, 4);
        let (lambda, tau) = (0.05, 1e-6);
        let exact = Problem::new(&data, 300, lambda, tau, 40).unwrap().solve();
        let p = Problem::new(&data, 300, lambda, tau, 0).unwrap();
        assert!(p.certified_gradient(&p.newton()) > tau);
        let s = p.solve();
        assert!(s.distance <= tau / lambda);
        let truth = dist(&s.theta, &exact.theta);
        assert!(truth <= tau / lambda + exact.distance, "{truth}");
        // From a wild (non-finite or far) start it still converges.
        let steps = p.fallback_steps;
        for start in [vec![f64::NAN, 0.0, 1.0], vec![1e300, -1e300, 5.0]] {
            let theta = p.fallback(&start, steps);
            assert!(dist(&theta, &exact.theta) <= tau / lambda + exact.distance);
        }
        // Too few steps (a tenth of the public count) would not reach it: the count matters.
        let theta = p.fallback(&[1e300, -1e300, 5.0], steps / 10);
        assert!(dist(&theta, &exact.theta) > tau / lambda + exact.distance);
    }

    #[test]
    fn empty_and_degenerate_data_never_fail() {
        let empty = toy(0, 0.0, 5);
        let s = Problem::new(&empty, 100, 1e-3, 1e-8, 40).unwrap().solve();
        assert!(s.theta.iter().all(|&t| t == 0.0) && s.distance <= 1e-8 / 1e-3);
        // One class only, separable, tiny Λ: θ* is large but certified or reached.
        let mut one = toy(200, 0.0, 6);
        one = one.select(&(0..200).filter(|&i| one.class(i) == 1).collect::<Vec<_>>());
        let s = Problem::new(&one, 100, 1e-4, 1e-7, 40).unwrap().solve();
        assert!(s.distance <= 1e-7 / 1e-4 && s.theta.iter().all(|t| t.is_finite()));
    }

    #[test]
    fn precision_check_refuses_only_impossible_parameters() {
        assert!(Problem::check_precision(100, 1e-4, 1e-8).is_ok());
        let e = Problem::check_precision(100, 1e-12, 1e-12).unwrap_err();
        assert!(e.to_string().contains("`regularization`"), "{e}");
    }

    #[test]
    fn the_gradient_matches_a_compensated_reference() {
        // The pairwise gradient against a Neumaier-compensated one on 5000 records: they
        // differ by far less than the public error bound (which is what the certificate adds).
        let data = toy(5000, 0.1, 7);
        let p = Problem::new(&data, 5000, 1e-3, 1e-8, 0).unwrap();
        let theta = [3.0, -2.5, 0.7];
        let g = p.gradient(&theta);
        let mut x = [0.0; 3];
        let mut reference = [0.0; 3];
        for (j, r) in reference.iter_mut().enumerate() {
            let (mut s, mut comp) = (0.0f64, 0.0f64);
            for i in 0..data.len() {
                let y = p.record(i, &mut x);
                let t: f64 = x.iter().zip(&theta).map(|(a, b)| a * b).sum();
                let term = -y * sigmoid(-y * t) * x[j];
                let u = s + term;
                comp += if s.abs() >= term.abs() {
                    (s - u) + term
                } else {
                    (term - u) + s
                };
                s = u;
            }
            *r = 1e-3 * theta[j] + (s + comp) / 5000.0;
        }
        let bound = Problem::gradient_error(3, 1e-3, 5.0);
        assert!(dist(&g, &reference) <= bound, "{}", dist(&g, &reference));
        assert!(bound < 1e-12, "{bound}");
    }

    #[test]
    fn newton_certifies_on_adult_at_every_default_regularization() {
        // The fallback is for safety only: on Adult (d = 100 + bias) the 40 Newton steps reach
        // the tolerance τ = 2⁻¹⁰/n across the default search space (its ends and middle).
        let adult = crate::data::bundled("adult").unwrap().train();
        let n = adult.len() as u64;
        for lambda in [1e-4, 1e-3, 1e-1] {
            let p = Problem::new(&adult, n, lambda, 1.0 / 1024.0 / n as f64, 40).unwrap();
            let g = p.certified_gradient(&p.newton());
            assert!(g <= p.tolerance, "Λ = {lambda}: {g:e} > {:e}", p.tolerance);
        }
    }
}

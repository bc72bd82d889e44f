//! One direction of a privacy loss distribution on a uniform grid, and the arithmetic on it:
//! composition by FFT, self-composition, tail truncation and the hockey-stick queries.
//!
//! Every number a query returns is an upper bound on the truth. Three errors are charged:
//!
//! * **Tails.** Mass cut from the top of the grid goes to the +∞ atom; mass cut from the bottom is
//!   moved up to the lowest kept point. Both only raise losses, so δ(ε) can only grow
//!   (THEORY.md §16a: δ(ε) = E[(1 − e^{ε−L})₊] + P[L = ∞] is increasing in every loss value).
//! * **Floating point.** `err` is an L1 bound on the distance between the stored vector and the
//!   one exact arithmetic would give. An L2 bound over the m points of a result is an L1 bound
//!   after a factor √m, and since every weight (1 − e^{ε−l})₊ lies in [0, 1], δ moves by at most
//!   `err`; the queries add it. A loss evaluated off by ΔL moves its mass m by at most
//!   m·ΔL·(1 + h) between neighbouring grid points; that is charged into `err` too
//!   (`mechanisms.rs`, `loss_error`), as a bound on the bounded-Lipschitz distance
//!   sup |∫ f d(x̃ − x)| over f with |f| ≤ 1 and Lipschitz constant ≤ 1 in the loss, which the
//!   L1 distance also bounds: every weight is such an f, convolving with a measure of mass a
//!   multiplies the distance by at most a (as it does an L1 distance), and a mass differs by
//!   at most the distance (f = 1), so every use of `err` below holds for it. (Clamping negative
//!   values to 0 in [`LossPmf::truncate`] keeps this: a result is the exact convolution z of
//!   stored, nonnegative inputs plus transform noise charged in L1, and since z ≥ 0 the clamped
//!   vector is no farther from z in L1 than the unclamped one.) The L2 bounds of a transform
//!   are in `fft.rs`: Higham's (2002,
//!   *Accuracy and Stability of Numerical Algorithms*, Thm. 24.2) relative L2 bound
//!   ([`fft_error`](super::fft::fft_error), with rustfft's twiddle factors charged at their own
//!   error), a componentwise bound on every forward coefficient, ≤ 128·log₂(n)·u·‖x‖₁
//!   ([`coefficient_error`](super::fft::coefficient_error), Higham §24.1), and the L2 norm of the
//!   computed spectrum before the inverse transform, taken a posteriori. A T-th power charges
//!   T·|ΔX_k|·max(|X_k|, |X̂_k|)^{T−1} per coefficient, which the componentwise bound and
//!   Hölder's inequality turn into about T·128·log₂(n)·u·√(number of frequencies the composed
//!   law uses) ([`power_error`]); a convolution charges each forward error against the other
//!   operand by the better of two Hölder pairings ([`product_error`]). (Before, the T-th power
//!   was charged √n·T·ef·‖x‖₂ with every |X_k| bounded by 1: about 1.8e-8 of δ at DP-SGD
//!   q = 0.004, z = 1.1, T = 10⁴, and 8.3e-8 once the twiddle error is charged in ef, against
//!   6.8e-9 now.)
//! * **Aliasing.** A T-fold power in the Fourier domain is a circular convolution; the window is
//!   chosen by a Chernoff bound on the sum of T losses (P\[S ≥ x\] ≤ e^{−λx}M(λ)^T, with M the
//!   moment generating function of the stored vector), and the bound on the mass above the window
//!   is charged to the +∞ atom. Mass from below the window wraps onto higher losses, which only
//!   raises δ. This is the windowing of Gopi, Lee & Wutschitz 2021 (arXiv 2106.02848, §5), with
//!   the wrapped mass charged instead of estimated. Where the window reaches down to the lowest
//!   possible sum, the transform may even be shorter than the window, so that the lowest sums
//!   wrap onto the highest losses (`LossPmf::wrapped_len`: sound as it stands, and taken only
//!   when a bound on the mass moved is a sixteenth of the floating-point error charged).

use super::fft::{
    buffer, fast_len, fft_len, normalised, plans, power_error, power_in_place, product_error,
    scale, spectrum_norm, spectrum_norm_from, Ffts, SCALE_ERROR,
};
use super::grid_limit::GridTooLarge;
use crate::error::{Error, Result};
use crate::numeric::UNIT_ROUNDOFF as U;

/// Points between fresh exponentials in [`LossPmf::delta_and_slope`]'s recurrence (its drift
/// grows linearly in this: 3u per point).
const RESTART: usize = 32;

/// `x` rounded up by a relative margin that covers the rounding of a sum of `terms` terms.
fn up(x: f64, terms: usize) -> f64 {
    x * (1.0 + 2.0 * (terms as f64 + 4.0) * U)
}

/// The law of the privacy loss L = ln(P(o)/Q(o)), o ~ P, for one ordered pair (P, Q): mass
/// `probs[i]` at loss (offset + i)·h, and an atom at +∞.
#[derive(Debug, Clone, PartialEq)]
pub struct LossPmf {
    pub(super) h: f64,
    pub(super) offset: i64,
    pub(super) probs: Vec<f64>,
    pub(super) inf: f64,
    /// Bound on the floating-point error of `probs`, L1 or bounded-Lipschitz (module docs;
    /// charged by every query).
    pub(super) err: f64,
}

impl LossPmf {
    /// The loss of grid point `i`.
    pub(super) fn loss(&self, i: usize) -> f64 {
        (self.offset + i as i64) as f64 * self.h
    }

    /// Total finite mass, rounded up.
    fn mass(&self) -> f64 {
        up(self.probs.iter().sum(), self.probs.len())
    }

    /// Number of grid points (the memory a direction takes).
    pub(super) fn len(&self) -> usize {
        self.probs.len()
    }

    /// Clamps rounding noise below zero (it moves no entry farther from the exact value), then
    /// cuts at most `tail` of mass from each end: the bottom is moved up to the lowest kept point,
    /// the top goes to +∞.
    pub(super) fn truncate(&mut self, tail: f64) {
        for p in &mut self.probs {
            *p = p.max(0.0);
        }
        let n = self.probs.len();
        let (mut lo, mut below) = (0, 0.0);
        while lo + 1 < n && up(below + self.probs[lo], lo + 1) <= tail {
            below += self.probs[lo];
            lo += 1;
        }
        let (mut hi, mut above) = (n, 0.0);
        while hi > lo + 1 && up(above + self.probs[hi - 1], n - hi + 1) <= tail {
            above += self.probs[hi - 1];
            hi -= 1;
        }
        // Zeros at the ends cost nothing to drop.
        while hi > lo + 1 && self.probs[hi - 1] == 0.0 {
            hi -= 1;
        }
        if below > 0.0 {
            // The mass moved up is `below` as summed (within γ_lo·below ≤ 2(lo + 1)u·below of
            // the exact sum of the points cut) and its addition rounds by at most u of the
            // result: an L1 error, charged as every other.
            self.probs[lo] += below;
            let moved = (2.0 * (lo as f64 + 1.0) * below + self.probs[lo]) * U;
            self.err = up(self.err + moved, 2);
        }
        self.inf = up(self.inf + above, n);
        self.probs.truncate(hi);
        self.probs.drain(..lo);
        self.offset += lo as i64;
    }

    fn norms(&self) -> (f64, f64) {
        let l1 = self.mass();
        let l2 = up(
            self.probs.iter().map(|p| p * p).sum::<f64>().sqrt(),
            self.len(),
        );
        (l1, l2)
    }

    fn same_grid(&self, other: &LossPmf) -> Result<()> {
        if self.h == other.h {
            Ok(())
        } else {
            Err(Error::invalid(
                "interval",
                other.h,
                format!(
                    "PLDs on different grids cannot be composed (this one has {})",
                    self.h
                ),
            ))
        }
    }

    /// The law of L₁ + L₂ for independent losses (sequential composition of two mechanisms on
    /// the same pair): a linear convolution by a zero-padded real FFT, so nothing wraps.
    /// Refused when its grid indices reach 2^53 ([`GridTooLarge::window`]).
    pub(super) fn compose(&self, other: &LossPmf, tail: f64) -> Result<LossPmf> {
        self.same_grid(other)?;
        let len = self.len() + other.len() - 1;
        // In f64 first: the sum of two offsets need not fit an i64 (it is refused then).
        let lo = self.offset as f64 + other.offset as f64;
        GridTooLarge::window(lo, lo + (len - 1) as f64, len as f64)
            .map_err(|e| e.refuse("parts", "their composition"))?;
        let offset = self.offset + other.offset;
        let n = fft_len(len);
        let (fwd, inv) = plans(n);
        let mut ffts =
            Ffts::new(&*fwd, &*inv, n).map_err(|e| e.refuse("parts", "their composition"))?;
        let mut a = fwd.make_output_vec();
        ffts.forward(&self.probs, &mut a)?;
        let mut b = fwd.make_output_vec();
        ffts.forward(&other.probs, &mut b)?;
        for (x, y) in a.iter_mut().zip(&b) {
            *x *= y;
        }
        drop(b);
        let product = spectrum_norm(&a);
        let mut probs = ffts.inverse(&mut a)?;
        probs.truncate(len);
        scale(&mut probs, n);
        let (norms_a, norms_b) = (self.norms(), other.norms());
        let l2 = product_error(n, norms_a, norms_b, product);
        let (ta, tb) = (norms_a.0 + self.err, norms_b.0 + other.err);
        let err = self.err * tb + other.err * ta + (len as f64).sqrt() * l2;
        let err = err + SCALE_ERROR * (ta * tb + err);
        let inf = self.inf * (tb + other.inf) + ta * other.inf;
        let mut out = LossPmf {
            h: self.h,
            offset,
            probs,
            inf: up(inf, 4).min(1.0),
            err: up(err, 8),
        };
        out.truncate(tail);
        Ok(out)
    }

    /// ln M(λ) = ln Σ pᵢ e^{λ lᵢ} of the finite part at λ = ±2^j·λ₀ for j = 0..count: one
    /// exponential per point, then repeated squaring of e^{λ(lᵢ − l_ext)} ∈ (0, 1] (shifted by the
    /// extreme loss, so nothing overflows). Rounded up by a margin for the sums and squarings.
    fn log_mgfs(&self, lambda0: f64, count: usize) -> Vec<f64> {
        let n = self.len();
        let ext = if lambda0 > 0.0 {
            self.loss(n - 1)
        } else {
            self.loss(0)
        };
        let mut pow: Vec<f64> = (0..n)
            .map(|i| (lambda0 * (self.loss(i) - ext)).exp())
            .collect();
        let mut out = Vec::with_capacity(count);
        let mut lambda = lambda0;
        for j in 0..count {
            if j > 0 {
                for p in &mut pow {
                    *p *= *p;
                }
                lambda *= 2.0;
            }
            let s: f64 = self.probs.iter().zip(&pow).map(|(p, w)| p * w).sum();
            out.push(lambda * ext + up(s, n + 8 * (j + 1)).ln());
        }
        out
    }

    /// Whether a window for the sum of `t` draws may as well reach the end of its support on
    /// the top (or bottom) side: the outermost k = ⌈n/(64t)⌉ points carry mass m with
    /// m^t > tail, so P[S ≥ t·l] ≥ m^t (l the innermost of those points) exceeds `tail` and no
    /// valid bound can trim more than t·k ≈ n/64 points there, against a transform of at least
    /// n. Then the whole support is kept on that side (no sum lies beyond it, so nothing is
    /// charged) and the moment generating functions of that side are not computed: an
    /// exponential per point and 13 squarings, as much work as the transforms for a Laplace
    /// law, whose atoms at ±r make every sum up to ±Tr likely. (Point masses below 1 raised to
    /// a large t never pass, so long compositions keep their Chernoff window.) A choice of
    /// window only, so it needs no rounding care: either answer is sound.
    fn reaches_end(&self, t: u64, tail: f64, top: bool) -> bool {
        let k = (self.len() as u64).div_ceil(t.saturating_mul(64)) as usize;
        let end = if top {
            &self.probs[self.len() - k..]
        } else {
            &self.probs[..k]
        };
        t as f64 * end.iter().sum::<f64>().ln() > tail.ln()
    }

    /// Window for the sum of `t` independent draws from the finite part: `(lo, hi)` with
    /// P[S < lo·h] ≤ tail and P[S > hi·h] ≤ tail by a Chernoff bound, λ scaled to the spread of
    /// the sum, or the end of the support on a side where [`Self::reaches_end`]; and the bound on
    /// P\[S ≥ x\] as a function of x (the minimum over the same λ grid; 1 when the top side was
    /// not bounded, where it is never asked for: nothing lies above the support).
    fn chernoff(&self, t: u64, tail: f64) -> (i64, i64, impl Fn(f64) -> f64) {
        const COUNT: usize = 14;
        let tf = t as f64;
        let (full_top, full_bottom) = (
            self.reaches_end(t, tail, true),
            self.reaches_end(t, tail, false),
        );
        let (mut up_m, mut down_m, mut lambdas) = (Vec::new(), Vec::new(), Vec::new());
        if !(full_top && full_bottom) {
            let mass = self.mass();
            let mean = (0..self.len())
                .map(|i| self.probs[i] * self.loss(i))
                .sum::<f64>()
                / mass;
            let var = (0..self.len())
                .map(|i| self.probs[i] * (self.loss(i) - mean).powi(2))
                .sum::<f64>()
                / mass;
            let sd = (var.sqrt() * tf.sqrt()).max(self.h);
            let lambda0 = 1.0 / (16.0 * sd);
            if !full_top {
                up_m = self.log_mgfs(lambda0, COUNT);
            }
            if !full_bottom {
                down_m = self.log_mgfs(-lambda0, COUNT);
            }
            lambdas = (0..COUNT).map(|j| lambda0 * 2f64.powi(j as i32)).collect();
        }
        // P[S ≥ x] ≤ exp(t ln M(λ) − λx) ≤ tail  ⇔  x ≥ (t ln M(λ) − ln tail)/λ.
        let hi = lambdas
            .iter()
            .zip(&up_m)
            .map(|(l, m)| (tf * m - tail.ln()) / l)
            .fold(f64::INFINITY, f64::min);
        // P[S ≤ x] ≤ exp(t ln M(−λ) + λx) ≤ tail  ⇔  x ≤ (ln tail − t ln M(−λ))/λ.
        let lo = lambdas
            .iter()
            .zip(&down_m)
            .map(|(l, m)| (tail.ln() - tf * m) / l)
            .fold(f64::NEG_INFINITY, f64::max);
        let hi = (hi.min(tf * self.loss(self.len() - 1)) / self.h).ceil() as i64;
        let lo = ((lo.max(tf * self.loss(0)) / self.h).floor() as i64).min(hi);
        let bound = move |x: f64| {
            let best = lambdas
                .iter()
                .zip(&up_m)
                .map(|(l, m)| tf * m - l * x)
                .fold(0.0, f64::min);
            up(best.exp(), 16)
        };
        (lo, hi, bound)
    }

    /// The transform length for the sum of `t` draws when its window (`width` points) starts
    /// at the lowest possible sum: `n` ([`fft_len`] of the window), or the faster [`fast_len`]
    /// when that is shorter, even shorter than the window. A transform of length m < width
    /// keeps the top m points of the window, and the circular convolution puts every sum among
    /// the lowest D = width − m points m grid steps higher: its loss only goes up, which only
    /// raises δ, so nothing is charged for it. What it can cost is tightness, at most the mass
    /// of those sums: their t summands exceed the lowest point of this law by at most D − 1
    /// steps in total, so each is among its lowest D points, and the mass is at most
    /// (Σ_{j<D} p_j)^t. A shorter length is taken only when that is at most `budget`. A choice
    /// of length only, so it needs no rounding care (either answer is sound), and a function
    /// of the inputs only.
    fn wrapped_len(&self, t: u64, width: usize, n: usize, budget: f64) -> usize {
        let per_draw = budget.powf(1.0 / t as f64);
        let (mut d, mut below) = (0, 0.0);
        while d < self.len() && below + self.probs[d] <= per_draw {
            below += self.probs[d];
            d += 1;
        }
        fast_len(width.saturating_sub(d).max(self.len())).min(n)
    }

    /// The law of the sum of `t` independent copies (T-fold self-composition): one forward FFT,
    /// the T-th power of every coefficient by repeated squaring, one inverse FFT, on a window
    /// chosen by a Chernoff bound (module docs). Memory is the window, whatever `t` is. Refused
    /// when the window needs more than [`MAX_POINTS`](super::grid_limit::MAX_POINTS) points or
    /// reaches grid indices of 2^53 ([`GridTooLarge::window`]; t·offset does once t times the
    /// loss passes 2^53·h, about 9e11 on the default grid).
    pub(super) fn power(&self, t: u64, tail: f64) -> Result<LossPmf> {
        if t == 0 {
            return Err(Error::invalid("times", t, "must be >= 1"));
        }
        if t == 1 {
            return Ok(self.clone());
        }
        let (lo, hi, above_bound) = self.chernoff(t, tail);
        // In f64: the window of an astronomical `t` does not fit an i64 difference (and its
        // ends, saturated at the i64 range, are refused as beyond 2^53).
        let (lo_f, hi_f) = (lo as f64, hi as f64);
        let width = GridTooLarge::window(lo_f, hi_f, hi_f - lo_f + 1.0)
            .map_err(|e| e.refuse("times", t))?;
        let tf = t as f64;
        let (a1, a2) = self.norms();
        let total = a1 + self.err;
        let growth = ((tf - 1.0) * total.max(1.0).ln()).exp();
        let lowest = i128::from(t) * i128::from(self.offset);
        let mut n = fft_len(width.max(self.len()));
        if i128::from(lo) <= lowest {
            // The budget of the wrap: a sixteenth of the floating-point error that the charge
            // below could reach at most, before the transform says how small it is (Young:
            // ‖x^{*t}‖₂ ≤ ‖x‖₂·‖x‖₁^{t−1}, so by Parseval the powered spectrum has L2 norm at
            // most √n·‖x‖₂·growth).
            let prior = (n as f64).sqrt() * a2 * growth;
            let charge = (width as f64).sqrt() * power_error(n, t, a1, a2, prior);
            n = self.wrapped_len(t, width, n, charge / 16.0);
        }
        // A transform shorter than the window keeps its top n points, [hi − n + 1, hi]; every
        // sum below them lands on one of them, n·h (or a multiple) higher.
        let kept = width.min(n);
        let start = hi - kept as i64 + 1;
        let (fwd, inv) = plans(n);
        let mut ffts = Ffts::new(&*fwd, &*inv, n).map_err(|e| e.refuse("times", t))?;
        let mut spec = fwd.make_output_vec();
        ffts.forward(&self.probs, &mut spec)?;
        // Rounded down, so only coefficients with |z|^t < e^{−800} are dropped.
        let negligible = (-1600.0 / t as f64).exp() * (1.0 - 4.0 * U);
        let powered = spectrum_norm_from(power_in_place(&mut spec, t, negligible), &spec);
        let circular = ffts.inverse(&mut spec)?;
        drop(spec);
        // Circular index i holds the absolute indices ≡ t·offset + i (mod n); unwrap onto
        // [start, start + n): index j of the result is circular index j + shift (mod n). Only
        // the window [start, hi] is kept: what lies above it is charged below.
        let shift = (i128::from(start) - lowest).rem_euclid(n as i128) as usize;
        let (before, after) = circular.split_at(shift);
        let mut probs = buffer(kept).map_err(|e| e.refuse("times", t))?;
        // Two plain slice passes (a chained iterator is not vectorised).
        let (norm, first) = (normalised(n), after.len().min(kept));
        probs.extend(after[..first].iter().map(&norm));
        probs.extend(before[..kept - first].iter().map(&norm));
        drop(circular);
        // An L2 bound over the n circular points is an L1 bound over the kept ones after a
        // factor √kept (the error at the points dropped above is dropped with them). The error
        // of the stored vector itself grows at most t·growth-fold: x̃^{*t} − x^{*t} is a sum of
        // t terms x̃^{*j} * (x̃ − x) * x^{*(t−1−j)}, and L1 norms of convolutions multiply.
        let err =
            tf * self.err * growth + (kept as f64).sqrt() * power_error(n, t, a1, a2, powered);
        let err = err + SCALE_ERROR * (growth * total + err);
        // The points above the window: their mass is at most the Chernoff bound at hi + 1 (none
        // if no sum reaches it), plus what wrapped there from below lo (at most `tail` by the
        // choice of lo, none if lo is the lowest possible sum). Mass below `start` that wrapped
        // into the window sits at a higher loss, which only raises δ.
        let highest = i128::from(t) * i128::from(self.offset + self.len() as i64 - 1);
        let mut above = if i128::from(hi) + 1 > highest {
            0.0
        } else {
            above_bound((hi + 1) as f64 * self.h)
        };
        if i128::from(lo) > lowest {
            above += tail;
        }
        let inf = tf * self.inf * ((tf - 1.0) * (total + self.inf).max(1.0).ln()).exp() + above;
        let mut out = LossPmf {
            h: self.h,
            offset: start,
            probs,
            inf: up(inf, 4).min(1.0),
            err: up(err, 8),
        };
        out.truncate(tail);
        Ok(out)
    }

    /// An upper bound on δ(ε) = E[(1 − e^{ε−L})₊] + P[L = ∞] for this direction, with the
    /// floating-point error charged.
    pub(super) fn delta(&self, eps: f64) -> f64 {
        self.delta_and_slope(eps).0
    }

    /// [`Self::delta`] at `eps`, and Σ pᵢ·e^{ε−lᵢ} over the points above ε (minus the slope of
    /// the finite part there, for the search in [`Self::epsilon`]; not rounded). The points at
    /// or below ε (weight 0) are skipped by a binary search, not visited.
    ///
    /// The weights e^{ε−lᵢ} along the grid are geometric with ratio e^{−h}, so they are carried
    /// by a product, restarted from a fresh `exp` every [`RESTART`] points ([`Self::tail_sums`]):
    /// one exponential per 32 points where an `expm1` per point was taken before. Its error is
    /// charged: with w̃ᵢ the computed weight and wᵢ = e^{ε−lᵢ} at the exact grid loss
    /// lᵢ = (offset + i)·h, |w̃ᵢ − wᵢ| ≤ η·wᵢ, where η covers
    ///
    /// * the fresh `exp` at a block's first point: one ulp (2u) of its value, and its argument
    ///   ε − fl((offset + i)·h), rounded twice, off by at most u·(2|lᵢ| + |ε|)·(1 + u), which
    ///   moves e^{·} by a relative 1.01 times that;
    /// * the j-th point of a block (j ≤ 31) takes j products by fl(e^{−h}), each an ulp of
    ///   `exp` (2u) plus the product's rounding (u): 3u·j ≤ 93u, second-order terms included
    ///   in the 100u below;
    ///
    /// so η = (100 + 3·(2·l_max + |ε|))·u, l_max the largest |lᵢ| visited. The computed sum
    /// Σ fl(pᵢ·(1 − w̃ᵢ)) is then within η·Σ pᵢwᵢ of Σ pᵢ(1 − wᵢ) before its own roundings (the
    /// subtraction, the product and the running sum: relative, of non-negative terms, covered
    /// by the margin of [`up`], as before), and Σ pᵢwᵢ ≤ 1.01·(the computed slope)/(1 − η) (its
    /// relative error is η plus the summation's, at most 2^26·u). So 1.01·η/(1 − η)·slope is
    /// added before rounding up, and δ is 1 when η ≥ 1/2 (losses beyond about 10^14). Where wᵢ
    /// underflows, the product's absolute error of 2^−1074 per step is far inside `up`'s
    /// relative margin on a term that is then ≈ pᵢ.
    ///
    /// Against the `expm1` per point it replaces, δ rises by that charge, η·Σ pᵢwᵢ ≤ η times
    /// the mass above ε (η ≈ 200u ≈ 2.2e-14 for |l| ≤ 15), and moves otherwise by rounding
    /// only (the tests bound that by 1e-14 relative); golden ε are unchanged.
    fn delta_and_slope(&self, eps: f64) -> (f64, f64) {
        let (s, slope, l_max) = self.tail_sums(eps, RESTART);
        let eta = (100.0 + 3.0 * (2.0 * l_max + eps.abs())) * U;
        if eta >= 0.5 && slope > 0.0 {
            // Weighted losses near 10^14 or beyond: the weights' relative error bound is
            // useless. (Only where some weight is positive: above every loss δ must fall to
            // the atom and the error, or `epsilon` would step up for ever.)
            return (1.0, slope);
        }
        // No weight, no drift (and no ∞·0 at ε = −∞, where every weight is 0).
        let s = if slope > 0.0 {
            s + 1.01 * eta / (1.0 - eta) * slope
        } else {
            s
        };
        ((up(s, self.len()) + self.inf + self.err).min(1.0), slope)
    }

    /// Σ pᵢ·(1 − e^{ε−lᵢ}) and Σ pᵢ·e^{ε−lᵢ} over the points above ε, uncharged, with the
    /// weights carried by products restarted from `exp` every `restart` points, and the largest
    /// |lᵢ| among those points (for [`Self::delta_and_slope`], which charges the drift).
    fn tail_sums(&self, eps: f64, restart: usize) -> (f64, f64, f64) {
        // The points with a loss above ε, by the exact sign of (offset + i)·h − ε (one
        // rounding, which keeps the sign): comparing the rounded loss could skip a point whose
        // loss lies just above ε. A weight just above 1 from the rounded loss is within η.
        let start = partition_point(self.len(), |i| {
            ((self.offset + i as i64) as f64).mul_add(self.h, -eps) <= 0.0
        });
        let ratio = (-self.h).exp();
        let (mut s, mut slope) = (0.0, 0.0);
        for (block, probs) in self.probs[start..].chunks(restart).enumerate() {
            let mut w = (eps - self.loss(start + block * restart)).exp();
            for &p in probs {
                s += p * (1.0 - w);
                slope += p * w;
                w *= ratio;
            }
        }
        let l_max = if start < self.len() {
            self.loss(start).abs().max(self.loss(self.len() - 1).abs())
        } else {
            0.0
        };
        (s, slope, l_max)
    }

    /// The smallest ε (at least −∞, a real number) with δ(ε) ≤ `delta` by [`Self::delta`], or
    /// `None` when the +∞ atom and the charged error alone exceed `delta`.
    pub(super) fn epsilon(&self, delta: f64) -> Option<f64> {
        let target = delta - self.inf - self.err;
        // A NaN error or atom (never built by a constructor) is refused too: the search below
        // would never confirm a NaN target.
        if target <= 0.0 || target.is_nan() {
            return None;
        }
        // Aim a little below the target: the confirming sum is rounded up by the relative
        // margin of `up` (2(n + 4)u), so a guess at the target itself fails its first check
        // and costs a second pass over the points; 1e-9 more covers the drift of the guess.
        // ε moves by about 1e-9·δ over the slope of δ(ε).
        let aim = target * (1.0 - 1e-9) / (1.0 + 2.0 * (self.len() as f64 + 4.0) * U);
        // Scan down: on [l_k, l_{k+1}] the finite part is S1 − e^ε·S2 over the points above k,
        // S2 = Σ pᵢe^{−lᵢ}. This only guesses ε (the loop below confirms it). S2 is kept as
        // e^{−r}·s2 with r the loss at the top of the current block of points: e^{−l} itself
        // under- or overflows beyond |l| ≈ 709 (the guess was then +∞). In a block the weights
        // e^{r−l_k} are carried by a product with e^h from 1 at its top, and s2 is rescaled by a
        // fresh e^{r_new − r} at each new block, of 1024 points or of a loss span of 256 at most
        // (so no weight exceeds e^256; drift below 1e-12 relative).
        let (mut s1, mut s2) = (0.0, 0.0);
        let mut guess = None;
        let grow = self.h.exp();
        let block = ((256.0 / self.h) as usize).clamp(1, 1024);
        let (mut r, mut w) = (self.loss(self.len().saturating_sub(1)), 1.0);
        for k in (0..self.len()).rev() {
            if (self.len() - 1 - k).is_multiple_of(block) {
                s2 *= (self.loss(k) - r).exp();
                (r, w) = (self.loss(k), 1.0);
            } else {
                w *= grow;
            }
            // Strictly: where s2/w is below half an ulp of s1 = aim, `>=` stopped with s1 − aim
            // = 0 and guessed ln 0 = −∞ although the finite part here is below the aim.
            if s1 - s2 / w > aim {
                guess = Some(((s1 - aim) / s2).ln() + r);
                break;
            }
            s1 += self.probs[k];
            s2 += self.probs[k] * w;
        }
        let mut eps = guess.unwrap_or_else(|| {
            if s1 <= target {
                f64::NEG_INFINITY
            } else {
                ((s1 - aim) / s2).ln() + r
            }
        });
        if eps == f64::NEG_INFINITY && self.delta(eps) <= delta {
            return Some(eps);
        }
        if eps == f64::NEG_INFINITY || eps.is_nan() {
            // An unconfirmed −∞ (the rounded-up sum of the confirming pass exceeds what the scan
            // compared) or a NaN: the search starts below every loss instead (sound, as every
            // confirmed ε, if possibly loose: δ is concave between grid losses, so a Newton step
            // from the left can overshoot).
            eps = self.loss(0) - self.h;
        }
        // The closed form cancels; confirm with the accurate sum and step up until it holds:
        // by a Newton step on the finite part (δ falls at rate Σ pᵢe^{ε−lᵢ}), at least `step`,
        // which doubles, so the loop ends whatever the slope. Only a confirmed ε is returned.
        let mut step = 1e-12 * eps.abs().max(self.h);
        loop {
            let (d, slope) = self.delta_and_slope(eps);
            if d <= delta {
                return Some(eps);
            }
            if eps == f64::INFINITY {
                // Trivially an upper bound; δ is finite-loss-free there, so this is unreachable
                // while the atom and the error fit `delta` (checked above), but never loop.
                return Some(eps);
            }
            let newton = (d - delta) / slope * (1.0 + 1e-6);
            eps += if newton.is_finite() {
                newton.max(step)
            } else {
                step
            };
            step *= 2.0;
        }
    }
}

/// The first i in 0..n where `below(i)` is false, for a `below` that is true on a prefix.
fn partition_point(n: usize, below: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, n);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if below(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[cfg(test)]
mod tests;

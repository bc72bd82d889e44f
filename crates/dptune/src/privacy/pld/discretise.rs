//! From a mechanism's pair (P, Q) to a [`LossPmf`] that dominates it: connect-the-dots.
//!
//! Every piece of P-mass with loss l between two grid points l_k < l ≤ l_{k+1} is split between
//! them so that both its P-mass and its Q-mass (P-mass × e^{−l}) are kept (Doroshenko, Ghazi,
//! Kamath, Kumar & Manurangsi 2022, "Connect the Dots", arXiv 2207.04380, §3). Seen as a
//! function of y = e^{−l}, the split is a mean-preserving spread of y onto the end points of
//! [e^{−l_{k+1}}, e^{−l_k}], and every hockey-stick divergence H_α = E_P[(1 − α·y)₊] (α ≥ 0) is
//! convex in y; by Jensen it can only grow. So the discretised pair dominates (P, Q) for every α
//! (Zhu, Dong & Wang 2022, arXiv 2106.08567, Def. 7), dominance survives composition (ibid.,
//! Thm. 10), and δ(ε) is exact at the grid points: far tighter than rounding every loss up
//! (Meiser & Mohammadi 2018, "Tight on budget?", CCS, the pessimistic bucketing this refines).
//! Losses below the window are rounded up to its lowest point; losses above it go to +∞.
//!
//! Continuous parts are integrated bucket by bucket (the output interval between the preimages
//! of two grid losses) with Gauss–Legendre rules, each node placed as an atom by the split.
//! Quadrature and special functions are charged [`QUADRATURE_ERROR`] per unit of mass (the
//! tests check the discretised total mass against the closed form far inside that allowance).

use super::grid_limit::GridTooLarge;
use super::pmf::LossPmf;
use crate::resources::try_filled;

/// L1 error allowance per unit of mass for quadrature and special-function evaluation.
pub(super) const QUADRATURE_ERROR: f64 = 1e-13;

const U: f64 = f64::EPSILON / 2.0;

/// Gauss–Legendre nodes and weights on [−1, 1].
const GL2: [(f64, f64); 2] = [
    (-0.577_350_269_189_625_8, 1.0),
    (0.577_350_269_189_625_8, 1.0),
];
const GL3: [(f64, f64); 3] = [
    (-0.774_596_669_241_483_4, 0.555_555_555_555_555_6),
    (0.0, 0.888_888_888_888_889),
    (0.774_596_669_241_483_4, 0.555_555_555_555_555_6),
];
const GL5: [(f64, f64); 5] = [
    (-0.906_179_845_938_664, 0.236_926_885_056_189_1),
    (-0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
    (0.0, 0.568_888_888_888_888_9),
    (0.538_469_310_105_683_1, 0.478_628_670_499_366_5),
    (0.906_179_845_938_664, 0.236_926_885_056_189_1),
];

/// A continuous part of P on the output interval [lo, hi] where the loss is increasing.
pub(super) struct Segment<'a> {
    /// Output interval.
    pub lo: f64,
    /// Output interval.
    pub hi: f64,
    /// P's density on the output.
    pub density: &'a dyn Fn(f64) -> f64,
    /// The privacy loss at an output (increasing).
    pub loss: &'a dyn Fn(f64) -> f64,
    /// The output at which the loss equals a value (the inverse of `loss`).
    pub output_at: &'a dyn Fn(f64) -> f64,
    /// Length over which the density is smooth enough for a 5-point rule.
    pub step: f64,
}

/// Accumulates P-mass on the grid points of a loss window.
pub(super) struct Builder {
    h: f64,
    lo: i64,
    probs: Vec<f64>,
    inf: f64,
    /// 1/(1 − e^{−h}), rounded up.
    inv_gap: f64,
    /// A deliberately wrong variant for the tests: round down instead of splitting.
    #[cfg(test)]
    pub(super) optimistic: bool,
}

impl Builder {
    /// A window covering the losses [from, to] on the grid of width `h`; refused (before
    /// anything is allocated) when the window is not finite or needs more than
    /// [`MAX_POINTS`](super::grid_limit::MAX_POINTS) grid points, as a mechanism with very
    /// little noise or a very fine grid asks for.
    pub fn new(h: f64, from: f64, to: f64) -> Result<Self, GridTooLarge> {
        let (lo, hi) = ((from / h).floor() - 1.0, (to / h).ceil() + 1.0);
        let points = GridTooLarge::check(hi - lo + 1.0)?;
        Ok(Self {
            h,
            lo: lo as i64,
            probs: try_filled(points, 0.0, "interval", h).map_err(|_| GridTooLarge {
                points: points as f64,
            })?,
            inf: 0.0,
            inv_gap: (1.0 / -(-h).exp_m1()) * (1.0 + 4.0 * U),
            #[cfg(test)]
            optimistic: false,
        })
    }

    /// P-mass `mass` at loss `loss` (+∞ allowed).
    pub fn atom(&mut self, mass: f64, loss: f64) {
        if mass <= 0.0 {
            return;
        }
        let last = self.probs.len() - 1;
        let x = loss / self.h - self.lo as f64;
        if x.is_nan() || x > last as f64 {
            self.inf += mass;
            return;
        }
        if x <= 0.0 {
            self.probs[0] += mass;
            return;
        }
        let k = x.floor();
        // Nudge up by more than the rounding of x, so no mass is placed below its loss.
        let t = x - k + (x.abs() + self.lo.unsigned_abs() as f64 + 1.0) * 4.0 * U;
        let k = k as usize;
        #[cfg(test)]
        if self.optimistic {
            self.probs[k] += mass;
            return;
        }
        if t >= 1.0 || k == last {
            match self.probs.get_mut(k + 1) {
                Some(p) => *p += mass,
                None => self.inf += mass,
            }
            return;
        }
        // The share kept by the split is (1 − e^{−x})/(1 − e^{−h}) with x = t·h ≤ h; the cubic
        // Taylor polynomial of 1 − e^{−x} is an upper bound (alternating series), so the share
        // can only err upward: more mass on the higher point, i.e. pessimistic.
        let x = t * self.h;
        let upper = mass * (x * (1.0 - x * (0.5 - x / 6.0))) * self.inv_gap;
        let upper = upper.clamp(0.0, mass);
        self.probs[k + 1] += upper;
        self.probs[k] += mass - upper;
    }

    /// Integrates a continuous segment bucket by bucket.
    pub fn segment(&mut self, seg: &Segment<'_>) {
        let (a, b) = ((seg.loss)(seg.lo), (seg.loss)(seg.hi));
        let first = (a / self.h).floor() as i64;
        let last = (b / self.h).ceil() as i64;
        let mut from = seg.lo;
        for k in first + 1..=last {
            let to = if k == last {
                seg.hi
            } else {
                (seg.output_at)(k as f64 * self.h).clamp(from, seg.hi)
            };
            self.integrate(seg, from, to);
            from = to;
        }
    }

    /// P-mass of density k·e^{(l − top)/2} in the loss on [from, top] (inside the window): the
    /// continuous part of a Laplace pair, whose loss law is e^{l/2} times a symmetric measure.
    ///
    /// Connect-the-dots has a closed form here. On a whole bucket [a, a + h], with c =
    /// k·e^{−top/2}, the P-mass is 2c·e^{a/2}·expm1(h/2) and the Q-mass 2c·e^{−a/2}·(1 − e^{−h/2});
    /// the split that keeps both puts 2c·e^{a/2}·A on a and 2c·e^{(a+h)/2}·A on a + h, with
    /// A = (1 − e^{−h/2})/(1 + e^{−h/2}) = tanh(h/4). So a grid point inside the run gets
    /// 4k·A·e^{(l_j − top)/2} from its two buckets, each end point of the run half of that, and
    /// the two part-buckets at `from` and `top` are integrated by [`Self::segment`]: one
    /// exponential per point, where the quadrature took two, each with a split.
    ///
    /// Floating point: A is a quotient of positive terms from one `exp_m1` (a few ulps); the
    /// exponent is (j − j_top)·h/2 plus the offset of the top point, so its rounding is within
    /// 2u·|l_j − top| and the weighted sum of those relative errors over the points stays below
    /// a few u of the mass. All far inside [`QUADRATURE_ERROR`].
    pub fn half_exponential(&mut self, k: f64, from: f64, top: f64) {
        let h = self.h;
        let density = |l: f64| k * (0.5 * (l - top)).exp();
        let part = |b: &mut Self, lo: f64, hi: f64| {
            b.segment(&Segment {
                lo,
                hi,
                density: &density,
                loss: &|l| l,
                output_at: &|l| l,
                step: 0.25,
            });
        };
        #[cfg(test)]
        if self.optimistic {
            return part(self, from, top);
        }
        // The grid points j·h in [from, top], by the sign of j·h − bound (rounded once).
        let gap = |j: i64, bound: f64| (j as f64).mul_add(h, -bound);
        let mut first = (from / h).ceil() as i64;
        while gap(first, from) < 0.0 {
            first += 1;
        }
        while gap(first - 1, from) >= 0.0 {
            first -= 1;
        }
        let mut last = (top / h).floor() as i64;
        while gap(last, top) > 0.0 {
            last -= 1;
        }
        while gap(last + 1, top) <= 0.0 {
            last += 1;
        }
        if first >= last {
            // No whole bucket.
            return part(self, from, top);
        }
        part(self, from, first as f64 * h);
        part(self, last as f64 * h, top);
        let e = -(-0.5 * h).exp_m1();
        let full = 4.0 * k * (e / (2.0 - e));
        let offset = 0.5 * gap(last, top);
        for j in first..=last {
            let i = (j - self.lo) as usize;
            let share = if j == first || j == last { 0.5 } else { 1.0 };
            self.probs[i] += share * full * ((0.5 * h) * (j - last) as f64 + offset).exp();
        }
    }

    fn integrate(&mut self, seg: &Segment<'_>, from: f64, to: f64) {
        let width = to - from;
        if width.is_nan() || width <= 0.0 {
            return;
        }
        // Relative errors of the rules on a Gaussian-like density over these widths are below
        // 1e-15 (the 2n-th derivative term of an n-point rule).
        let (rule, pieces): (&[(f64, f64)], usize) = if width <= seg.step / 256.0 {
            (&GL2, 1)
        } else if width <= seg.step / 16.0 {
            (&GL3, 1)
        } else {
            (&GL5, (width / seg.step).ceil() as usize)
        };
        let len = width / pieces as f64;
        for p in 0..pieces {
            let mid = from + (p as f64 + 0.5) * len;
            for &(x, w) in rule {
                let o = mid + 0.5 * len * x;
                let mass = (seg.density)(o) * w * 0.5 * len;
                self.atom(mass, (seg.loss)(o));
            }
        }
    }

    /// The finished direction, charged [`QUADRATURE_ERROR`] per unit of mass.
    pub fn finish(self) -> LossPmf {
        let mass: f64 = self.probs.iter().sum::<f64>() + self.inf;
        let mut pmf = LossPmf {
            h: self.h,
            offset: self.lo,
            probs: self.probs,
            inf: self.inf.min(1.0),
            err: QUADRATURE_ERROR * mass.max(1.0),
        };
        pmf.truncate(0.0);
        pmf
    }
}

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
//! The running sums into the grid points are not: a point can receive hundreds of nodes (a
//! bucket cut into many quadrature pieces), and their rounding grows with that number, not
//! with the mass. It is bounded as the sums are made and charged on top ([`Sums`]).

use super::grid_limit::GridTooLarge;
use super::pmf::LossPmf;
use crate::numeric::{mul_up, sum_up};
use crate::resources::try_filled;

/// L1 error allowance per unit of mass for quadrature and special-function evaluation (and the
/// few roundings of each node's own mass and split); the running sums into the grid points are
/// charged apart ([`Sums`]).
pub(super) const QUADRATURE_ERROR: f64 = 1e-13;

const U: f64 = f64::EPSILON / 2.0;

/// Buckets between fresh evaluations in [`Builder::gaussian`]'s recurrence (its drift grows
/// linearly in this: about 3.5u per bucket).
const RESTART: usize = 32;

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

/// The cubic Taylor polynomial of 1 − e^{−x}, for the share (1 − e^{−x})/(1 − e^{−h}) of a
/// piece of P-mass at loss l_k + x (0 ≤ x ≤ h) that connect-the-dots puts on l_{k+1}. It is an
/// upper bound (alternating series) by x⁴/24 − x⁵/120, so the share can only err upward: more
/// mass on the higher point, i.e. pessimistic.
fn cubic(x: f64) -> f64 {
    x * (1.0 - x * (0.5 - x / 6.0))
}

/// The Gauss–Legendre rule for an interval of `width` where the density is smooth over `step`,
/// and the number of equal pieces to apply it on. Relative errors of the rules on a
/// Gaussian-like density over these widths are below 1e-15 (the 2n-th derivative term of an
/// n-point rule).
fn rule(width: f64, step: f64) -> (&'static [(f64, f64)], usize) {
    if width <= step / 256.0 {
        (&GL2, 1)
    } else if width <= step / 16.0 {
        (&GL3, 1)
    } else {
        (&GL5, (width / step).ceil() as usize)
    }
}

/// The running sums into the grid points and the +∞ atom, and a bound on their rounding.
///
/// Every `+=` into a point errs by at most u times its computed result (round to nearest, with
/// gradual underflow: fl(a + b) = (a + b)/(1 + δ), |δ| ≤ u; Higham 2002, §2.2) and by at most
/// the mass added (the old value is a float that far from the exact sum). The errors of a chain
/// of additions add, so the stored values are within E = Σ min(u·result, mass) in L1 of the
/// exact sums of the masses handed in (all of them non-negative). E is about u times the mass
/// times the number of additions a point receives that are not negligible against it: a few
/// for most laws (E is 3.5u to 6.5u per unit of mass at the golden DP-SGD steps, u for the
/// Gaussian), but hundreds where a bucket is cut into many quadrature pieces: the subsampled
/// Gaussian at noise 0.035 and rate 1e-3 puts almost all its mass near loss 0 through about a
/// thousand nodes on two points (E ≈ 3.6e-14), the subsampled Laplace with r = 150 half its
/// mass on the points around ln(1 − q) (E ≈ 1.5e-13, more than the quadrature's allowance).
/// So E is bounded as the sums are made, as a float sum of terms that each bound the error of
/// some additions, and charged ([`Sums::error`]).
#[derive(Default)]
struct Sums {
    /// The float sum of the terms.
    bound: f64,
    /// Their number (for the rounding of `bound` itself).
    count: usize,
}

impl Sums {
    /// `*slot += mass` (mass ≥ 0), booked as min(u·result, mass): a product, a comparison and
    /// an addition. fl(u·result) is exact for results from 2^−969 on; below, it rounds
    /// (monotonically) to a multiple of 2^−1074, and half an ulp of the result, 2^(e−53) for a
    /// result in [2^e, 2^(e+1)), is such a multiple while e ≥ −1021; below 2^−1021 the sum of
    /// two floats is exact. So the term bounds the addition's error.
    fn add(&mut self, slot: &mut f64, mass: f64) {
        *slot += mass;
        let relative = U * *slot;
        self.book(if relative < mass { relative } else { mass });
    }

    /// A run of `n` additions, one per point, whose results (non-negative) summed to
    /// `results` in floating point: booked as one term, u times [`sum_up`] of it, rounded up.
    /// For the loops of [`Builder::gaussian`] (whose walk keeps four partial sums: a minimum
    /// per point, or one chained sum, slowed it by a quarter) and
    /// [`Builder::half_exponential`] (an `exp` per point hides the chain).
    fn run(&mut self, results: f64, n: usize) {
        self.book(mul_up(U, sum_up(results, n)));
    }

    fn book(&mut self, term: f64) {
        self.bound += term;
        self.count += 1;
    }

    /// E rounded up: `bound` is a float sum of `count` non-negative terms, so E is at most
    /// [`sum_up`] of it (+∞ from about 3·10^15 terms on, months of arithmetic).
    fn error(&self) -> f64 {
        sum_up(self.bound, self.count)
    }
}

/// One node of [`Builder::gaussian`]'s rule on every whole bucket: its fraction of the bucket
/// and the P-mass per unit of density it puts on the lower and on the upper grid point.
#[derive(Clone, Copy)]
struct Node {
    theta: f64,
    down: f64,
    up: f64,
}

/// The densities e^{−x²/(4μ)} (x = l − μ) at the nodes of consecutive whole buckets, by blocks
/// of [`RESTART`]: at the block's first bucket x₀ comes from exact integers
/// ((k − k_μ + θ)·h − (μ − k_μ·h)), e^{−x₀²/(4μ)} and ρ = e^{−x₀·h/(2μ)} from `exp`, and the
/// j-th bucket of the block gets e^{−x₀²/(4μ)}·ρ^j·e^{−j²h²/(4μ)}, the last factor from a
/// table (`squares`).
struct Walk {
    /// k − k_μ of the first bucket.
    start: i64,
    h: f64,
    /// μ − k_μ·h.
    mu_rest: f64,
    /// 1/(4μ).
    inv: f64,
    squares: [f64; RESTART],
}

impl Walk {
    /// Adds the nodes' masses on the whole buckets starting at the points of `probs` (the lower
    /// share on a bucket's own point, the upper on the next) and returns the upper share of
    /// the last bucket, which belongs to the point after `probs`, and the float sum of the
    /// points' new values (for [`Sums::run`]).
    fn add<const N: usize>(&self, nodes: [Node; N], probs: &mut [f64]) -> (f64, f64) {
        // Four partial sums of the new values: one would chain an addition's latency through
        // every bucket.
        let (mut carry, mut results) = (0.0, [0.0; 4]);
        for (block, probs) in probs.chunks_mut(RESTART).enumerate() {
            let k = (self.start + (block * RESTART) as i64) as f64;
            let mut g = [0.0; N];
            let mut rho = [0.0; N];
            for (i, n) in nodes.iter().enumerate() {
                let x = (k + n.theta).mul_add(self.h, -self.mu_rest);
                g[i] = (-(x * x) * self.inv).exp();
                rho[i] = (-2.0 * x * self.h * self.inv).exp();
            }
            let mut power = [1.0; N];
            for (j, (p, &square)) in probs.iter_mut().zip(&self.squares).enumerate() {
                let (mut down, mut up) = (carry, 0.0);
                for i in 0..N {
                    let v = g[i] * power[i] * square;
                    down += nodes[i].down * v;
                    up += nodes[i].up * v;
                    power[i] *= rho[i];
                }
                *p += down;
                results[j % 4] += *p;
                carry = up;
            }
        }
        (carry, results.iter().sum())
    }
}

/// A continuous part of P on the output interval [lo, hi] where the loss is increasing.
pub(super) struct Segment<'a> {
    /// Output interval.
    pub lo: f64,
    /// Output interval.
    pub hi: f64,
    /// P's density and the privacy loss (increasing) at an output, evaluated together so that
    /// a mechanism can share their exponentials (the subsampled Gaussian's density is Q's
    /// density times e^{loss}).
    pub at: &'a dyn Fn(f64) -> (f64, f64),
    /// The output at which the loss equals a value (the inverse of `loss`).
    pub output_at: &'a dyn Fn(f64) -> f64,
    /// Length over which the density is smooth enough for a 5-point rule.
    pub step: f64,
}

impl Segment<'_> {
    /// The privacy loss at an output.
    pub fn loss(&self, o: f64) -> f64 {
        (self.at)(o).1
    }
}

/// Accumulates P-mass on the grid points of a loss window.
pub(super) struct Builder {
    h: f64,
    lo: i64,
    probs: Vec<f64>,
    inf: f64,
    /// 1/(1 − e^{−h}), rounded up.
    inv_gap: f64,
    /// L1 error charged beyond [`QUADRATURE_ERROR`] and the sums' ([`Self::charge`]).
    extra: f64,
    sums: Sums,
    /// A deliberately wrong variant for the tests: round down instead of splitting.
    #[cfg(test)]
    pub(super) optimistic: bool,
}

impl Builder {
    /// A window covering the losses [from, to] on the grid of width `h`; refused (before
    /// anything is allocated) when the window is not finite, needs more than
    /// [`MAX_POINTS`](super::grid_limit::MAX_POINTS) grid points, as a mechanism with very
    /// little noise or a very fine grid asks for, or reaches grid indices of 2^53
    /// ([`GridTooLarge::window`]).
    pub fn new(h: f64, from: f64, to: f64) -> Result<Self, GridTooLarge> {
        let (lo, hi) = ((from / h).floor() - 1.0, (to / h).ceil() + 1.0);
        let points = GridTooLarge::window(lo, hi, (to - from) / h)?;
        Ok(Self {
            h,
            lo: lo as i64,
            probs: try_filled(points, 0.0, "interval", h).map_err(|_| GridTooLarge {
                points: points as f64,
            })?,
            inf: 0.0,
            inv_gap: (1.0 / -(-h).exp_m1()) * (1.0 + 4.0 * U),
            extra: 0.0,
            sums: Sums::default(),
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
            self.sums.add(&mut self.inf, mass);
            return;
        }
        if x <= 0.0 {
            self.sums.add(&mut self.probs[0], mass);
            return;
        }
        // x lies in (0, last]: truncation is its floor (without a call to the software `floor`
        // the baseline target links).
        let k = x as usize;
        // Nudge up by more than the rounding of x, so no mass is placed below its loss.
        let t = x - k as f64 + (x.abs() + self.lo.unsigned_abs() as f64 + 1.0) * 4.0 * U;
        #[cfg(test)]
        if self.optimistic {
            self.sums.add(&mut self.probs[k], mass);
            return;
        }
        if t >= 1.0 || k == last {
            let slot = self.probs.get_mut(k + 1).unwrap_or(&mut self.inf);
            self.sums.add(slot, mass);
            return;
        }
        let upper = (mass * cubic(t * self.h) * self.inv_gap).clamp(0.0, mass);
        self.sums.add(&mut self.probs[k + 1], upper);
        self.sums.add(&mut self.probs[k], mass - upper);
    }

    /// Integrates a continuous segment bucket by bucket.
    pub fn segment(&mut self, seg: &Segment<'_>) {
        let (a, b) = (seg.loss(seg.lo), seg.loss(seg.hi));
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
    /// a few u of the mass. All far inside [`QUADRATURE_ERROR`]. The addition into each point
    /// (onto the part-buckets' and the atoms' mass at the two end points) is booked in
    /// [`Sums`].
    pub fn half_exponential(&mut self, k: f64, from: f64, top: f64) {
        let h = self.h;
        let density = |l: f64| k * (0.5 * (l - top)).exp();
        let part = |b: &mut Self, lo: f64, hi: f64| b.segment_in_loss(lo, hi, &density, 0.25);
        #[cfg(test)]
        if self.optimistic {
            return part(self, from, top);
        }
        let Some((first, last)) = self.whole_buckets(from, top) else {
            return part(self, from, top);
        };
        part(self, from, first as f64 * h);
        part(self, last as f64 * h, top);
        let e = -(-0.5 * h).exp_m1();
        let full = 4.0 * k * (e / (2.0 - e));
        let offset = 0.5 * (last as f64).mul_add(h, -top);
        let mut results = 0.0;
        for j in first..=last {
            let i = (j - self.lo) as usize;
            let share = if j == first || j == last { 0.5 } else { 1.0 };
            let mass = share * full * ((0.5 * h) * (j - last) as f64 + offset).exp();
            self.probs[i] += mass;
            results += self.probs[i];
        }
        self.sums.run(results, (last - first + 1) as usize);
    }

    /// P-mass of the Gaussian loss law N(μ, 2μ) on [from, to] (inside the window): the pair of
    /// the Gaussian mechanism, whose loss is affine in the output (mechanisms::gaussian).
    ///
    /// The same connect-the-dots by the same Gauss–Legendre rule as [`Self::segment`], without a
    /// call per node. Buckets have equal width in the loss, so on the whole buckets [l_k, l_k + h]
    /// every node sits at the same fraction θ of its bucket: its split is one pair of constant
    /// shares (the upper one rounded up), and its densities follow a geometric recurrence: with
    /// x = l_k + θh − μ at the first bucket of a block of [`RESTART`],
    /// g(x + jh) = g(x)·ρ^j·e^{−j²h²/(4μ)} with ρ = e^{−x·h/(2μ)} ([`Walk`]): two `exp` per node
    /// and block, a table of the last factor, and three multiplications per node and bucket
    /// (where the quadrature took an `exp` and a split with a `floor` per node). The two
    /// part-buckets at `from` and `to`, and a law too narrow for a one-piece rule (a standard
    /// deviation under 128 grid intervals, so a few thousand points in all), go through
    /// [`Self::segment`].
    ///
    /// Floating point, as a relative error of each node's mass against w·(h/2)·g at the exact
    /// node (k + θ)h, with u the unit roundoff and z = x/√(2μ) the node's standard score:
    ///
    /// * at a block's first bucket x is (k − k_μ + θ)·h − (μ − k_μ·h), k_μ the grid index
    ///   nearest μ: the integer difference is exact, adding θ rounds once and the two fused
    ///   multiply-adds once each, so |Δx| ≤ 2u(|x| + h); the exponent x²/(4μ) = z²/2 errs by at
    ///   most 1.5u·z² from its own three roundings plus |x|·|Δx|/(2μ) ≤ 2u·z² + u|z|/64 (h is
    ///   at most √(2μ)/128 here), and `exp` adds one ulp (2u): at most (4z² + 3)u;
    /// * ρ and each e^{−j²h²/(4μ)} carry at most 2.5u (an ulp of `exp`; their exponents are
    ///   below 0.08 in size for tails down to about 1e-23, so the roundings in them and Δx add
    ///   under 0.5u; at the smallest tail a float allows, c ≈ 38.6 standard deviations, they
    ///   reach 0.3 and add a few u more, still far inside the charge below); ρ^j (j ≤ 31) is
    ///   j − 1 products: 2.5u·j + u·(j − 1) ≤ 108u; the two products with g and the table 2u
    ///   and the table entry 2.5u: at most 113u over the block;
    /// * the constant w·(h/2)/√(4πμ) about 8u, the two products by the shares 2u and the sums
    ///   of a point's node terms in registers (at most six terms) 6u; the addition into the
    ///   point itself, like the part-buckets' and the atoms' on the end points, is booked in
    ///   [`Sums`].
    ///
    /// So each mass errs by at most (4z² + 132)u, and weighted by the masses (E z² = 1 under
    /// N(μ, 2μ)) the L1 error is below 140u ≈ 1.6e-14 per unit of mass: inside the
    /// [`QUADRATURE_ERROR`] charged per unit of mass, with the rule's own error (below
    /// 1e-15). The upper share is rounded up by 16u, more than the 5u of its evaluation
    /// ([`cubic`] times `inv_gap`, its argument θh rounded) and the 3u by which the two products
    /// and the split can shift it, so no node puts less on the upper point than
    /// connect-the-dots does. The caller passes μ rounded up (a larger μ is a Gaussian with
    /// less noise, which dominates).
    pub fn gaussian(&mut self, mu: f64, from: f64, to: f64) {
        let h = self.h;
        let sd = (2.0 * mu).sqrt();
        let norm = 1.0 / (sd * (2.0 * std::f64::consts::PI).sqrt());
        let inv = 1.0 / (4.0 * mu);
        let density = |l: f64| norm * (-(l - mu) * (l - mu) * inv).exp();
        let step = sd / 8.0;
        let part = |b: &mut Self, lo: f64, hi: f64| b.segment_in_loss(lo, hi, &density, step);
        let Some((first, last)) = self.whole_buckets(from, to) else {
            return part(self, from, to);
        };
        let k_mu = (mu / h).round();
        let walk = Walk {
            start: first - k_mu as i64,
            h,
            mu_rest: (-k_mu).mul_add(h, mu),
            inv,
            squares: std::array::from_fn(|j| (-((j * j) as f64) * (h * h) * inv).exp()),
        };
        let node = |&(x, weight): &(f64, f64)| {
            let theta = 0.5 * (1.0 + x);
            let mass = 0.5 * h * weight * norm;
            let share = (cubic(theta * h) * self.inv_gap * (1.0 + 16.0 * U)).min(1.0);
            // The deliberately wrong variant rounds every node down to the lower point.
            #[cfg(test)]
            let share = if self.optimistic { 0.0 } else { share };
            Node {
                theta,
                up: mass * share,
                down: mass - mass * share,
            }
        };
        let (lo, hi) = ((first - self.lo) as usize, (last - self.lo) as usize);
        let (carry, results) = match rule(h, step) {
            ([a, b], 1) => walk.add([node(a), node(b)], &mut self.probs[lo..hi]),
            ([a, b, c], 1) => walk.add([node(a), node(b), node(c)], &mut self.probs[lo..hi]),
            _ => return part(self, from, to),
        };
        self.sums.run(results, hi - lo);
        self.sums.add(&mut self.probs[hi], carry);
        part(self, from, first as f64 * h);
        part(self, last as f64 * h, to);
    }

    /// A continuous part given directly in the loss (the output is the loss itself) on
    /// [lo, hi], with its density and smoothness length: the part-buckets and fallbacks of
    /// [`Self::half_exponential`] and [`Self::gaussian`].
    fn segment_in_loss(&mut self, lo: f64, hi: f64, density: &dyn Fn(f64) -> f64, step: f64) {
        self.segment(&Segment {
            lo,
            hi,
            at: &|l| (density(l), l),
            output_at: &|l| l,
            step,
        });
    }

    /// The first and last grid index j with j·h in [from, top] (by the sign of j·h − bound,
    /// rounded once), or `None` when there is no whole bucket between them.
    fn whole_buckets(&self, from: f64, top: f64) -> Option<(i64, i64)> {
        let h = self.h;
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
        (first < last).then_some((first, last))
    }

    fn integrate(&mut self, seg: &Segment<'_>, from: f64, to: f64) {
        let width = to - from;
        if width.is_nan() || width <= 0.0 {
            return;
        }
        let (rule, pieces) = rule(width, seg.step);
        let len = width / pieces as f64;
        for p in 0..pieces {
            let mid = from + (p as f64 + 0.5) * len;
            for &(x, w) in rule {
                let o = mid + 0.5 * len * x;
                let (density, loss) = (seg.at)(o);
                self.atom(density * w * 0.5 * len, loss);
            }
        }
    }

    /// Charges an L1 error `err` on top of [`QUADRATURE_ERROR`] and the running sums': a
    /// mechanism's evaluation error that its own analysis does not fit inside that allowance
    /// for every parameter (or a bound on how far misplaced losses move the mass, the
    /// bounded-Lipschitz distance the `pmf.rs` module docs describe, which every use of the
    /// error tolerates).
    pub fn charge(&mut self, err: f64) {
        self.extra += err;
    }

    /// The finished direction, charged [`QUADRATURE_ERROR`] per unit of mass, the running
    /// sums' rounding ([`Sums::error`]) and what [`Self::charge`] added.
    pub fn finish(self) -> LossPmf {
        let mass: f64 = self.probs.iter().sum::<f64>() + self.inf;
        let mut pmf = LossPmf {
            h: self.h,
            offset: self.lo,
            probs: self.probs,
            inf: self.inf.min(1.0),
            err: QUADRATURE_ERROR * mass.max(1.0) + self.extra + self.sums.error(),
        };
        pmf.truncate(0.0);
        pmf
    }
}

#[cfg(test)]
mod tests;

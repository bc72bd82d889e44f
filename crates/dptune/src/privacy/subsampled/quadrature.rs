//! ln(A_α − 1) at fractional orders by composite Gauss–Legendre quadrature, with the proven
//! bound on its error and the grids shared by the orders of one evaluation or conversion
//! (module doc of [`super`]).

use std::cell::RefCell;
use std::sync::OnceLock;

use super::binomial::log_a_minus_1_integer;
use super::{ln_expm1, log1p_exp};
use crate::numeric::quadrature::gauss_legendre;

/// Largest number of quadrature panels before falling back to the next integer order.
pub(super) const MAX_PANELS: f64 = 4000.0;

/// Gauss–Legendre points per quadrature panel (20: the proven error bound of
/// [`Quadrature::log_error`] decays like (1+√2)^{−2(NODES−1)}, 2.9e-15 here).
pub(super) const NODES: usize = 20;

/// The Bernstein-ellipse parameter of [`Quadrature::log_error`]: ρ = 1 + √2 makes the ellipse's
/// imaginary semi-axis equal to the panel half-width h (ρ − 1/ρ = 2) and its real one √2·h.
pub(super) const RHO: f64 = 1.0 + std::f64::consts::SQRT_2;

/// Sub-intervals of a panel's bounding box over which [`Quadrature::log_error`] bounds |f|.
pub(super) const PIECES: usize = 8;

/// The integration range is [−TAIL·z, α + TAIL·z]: beyond it the Gaussian factor of both bumps
/// of the integrand (around x ≈ 0 and x ≈ α) is below e^{−TAIL²/2}.
pub(super) const TAIL: f64 = 9.0;

/// Panel width in units of z·min(1, z) (see the module doc).
pub(super) const PANEL: f64 = 3.0;

/// The composite quadrature grid: the first panel's left end and the panel width. They do not
/// depend on α, so every order's panels are a prefix of the same sequence.
pub(super) fn panel_grid(z: f64) -> (f64, f64) {
    (-TAIL * z, PANEL * z * z.min(1.0))
}

/// The number of panels covering [−TAIL·z, α + TAIL·z].
pub(super) fn panel_count(z: f64, alpha: f64) -> f64 {
    let (lo, width) = panel_grid(z);
    ((alpha + TAIL * z - lo) / width).ceil()
}

/// Running log-sum-exp.
#[derive(Clone, Copy)]
pub(super) struct LogSum {
    max: f64,
    sum: f64,
}

impl LogSum {
    pub(super) fn new() -> Self {
        Self {
            max: f64::NEG_INFINITY,
            sum: 0.0,
        }
    }

    pub(super) fn add(&mut self, x: f64) {
        if x == f64::NEG_INFINITY || x.is_nan() {
            return;
        }
        if x > self.max {
            self.sum = self.sum * (self.max - x).exp() + 1.0;
            self.max = x;
        } else {
            self.sum += (x - self.max).exp();
        }
    }

    pub(super) fn value(&self) -> f64 {
        if self.max == f64::NEG_INFINITY {
            f64::NEG_INFINITY
        } else {
            self.max + self.sum.ln()
        }
    }
}

/// [`NODES`]-point Gauss–Legendre nodes on [−1, 1] with the weights as logarithms:
/// (node, ln weight), computed once.
pub(super) fn log_weight_rule() -> &'static [(f64, f64)] {
    static TABLE: OnceLock<Vec<(f64, f64)>> = OnceLock::new();
    TABLE.get_or_init(|| log_weights(NODES))
}

/// The `n`-point Gauss–Legendre rule on [−1, 1] as (node, ln weight).
pub(super) fn log_weights(n: usize) -> Vec<(f64, f64)> {
    gauss_legendre(n)
        .into_iter()
        .map(|(x, w)| (x, w.ln()))
        .collect()
}

/// ln of the integrand (1+t)^α − 1 − αt, t = q(e^L − 1), L = (2x−1)/(2z²).
pub(super) fn log_excess(q: f64, lq: f64, alpha: f64, l: f64) -> f64 {
    let (t, log_t) = if l > 0.0 {
        let lt = lq + ln_expm1(l);
        (lt.exp(), lt)
    } else {
        let t = q * l.exp_m1();
        (t, f64::NAN)
    };
    if t.abs() < 0.25 {
        return excess_series(alpha, t).ln();
    }
    let p = if t.is_finite() {
        alpha * t.ln_1p()
    } else {
        alpha * (lq + l + ((1.0 - q) / q * (-l).exp()).ln_1p())
    };
    if p > 1.0 {
        // t > 0 here; ln g = p + ln(1 − (1 + αt)e^{−p}).
        let log_1_alpha_t = log1p_exp(alpha.ln() + log_t);
        p + (-(log_1_alpha_t - p).exp()).ln_1p()
    } else {
        (p.exp_m1() - alpha * t).ln()
    }
}

/// Σ_{k≥2} C(α,k) t^k = (1+t)^α − 1 − αt for |t| < 1, summed until the terms are negligible
/// (for the small |t| where it is used, the leading term C(α,2)t² > 0 dominates).
pub(super) fn excess_series(alpha: f64, t: f64) -> f64 {
    let mut c = alpha * (alpha - 1.0) / 2.0;
    let mut tk = t * t;
    let mut sum = c * tk;
    for k in 2..60 {
        let kf = k as f64;
        c *= (alpha - kf) / (kf + 1.0);
        tk *= t;
        let term = c * tk;
        sum += term;
        if term.abs() <= 1e-17 * sum.abs() {
            break;
        }
    }
    sum
}

/// |t| below this takes the series for ln(1 + t) − t ([`Node`]).
pub(super) const SMALL_T: f64 = 0.1;

/// α·ln(1 + t) from which [`linear_sum`] keeps e^{α ln(1+t)} inside the exponent.
pub(super) const BIG_Y: f64 = 30.0;

/// A linear-space sum below this falls back to the log-space summation. Where a node's weight
/// underflows (deep in the Gaussian tails) its term is lost, but it is below 2.3e-308 times an
/// integrand value under e^{[`BIG_Y`]} (the larger terms keep their weight in the exponent), so
/// at most 48 000 of them (the panel limit) stay below 1.2e-290, 1e-19 of such a sum.
pub(super) const MIN_LINEAR_SUM: f64 = 1e-270;

/// One node of the quadrature grid of [`panel_grid`], with what the integrand
/// (1+t)^α − 1 − αt, t = q·expm1(L), L = (2x−1)/(2z²), needs there apart from α: t,
/// l = ln(1 + t), d = l − t, and the node's weight in A_α − 1 (Gauss–Legendre weight × panel
/// half-width × Gaussian density at x) with its logarithm. Where |t| < [`SMALL_T`], d comes from
/// [`ln_1p_minus_x`] (no cancellation) and l = t + d; elsewhere d = l − t loses at most
/// (|l| + |t|)/|d| ≤ 41 ulps (at |t| = 0.1, less beyond).
#[derive(Debug, Clone, Copy)]
pub(super) struct Node {
    t: f64,
    l: f64,
    d: f64,
    log_weight: f64,
    weight: f64,
}

/// Everything the quadrature of one (q, z) needs that does not depend on the order, panel by
/// panel: the nodes ([`Node`]) and the order-free factors of the error bound's maxima
/// ([`BoxPiece`]), plus the integer-order values the chord and lower bounds use. The panels
/// start at −TAIL·z with a width independent of α, so an order's panels are a prefix of these:
/// they are built once, as far as the largest order asked so far needs, and reused by every
/// order of a batch ([`rdp_many`](super::rdp_many)) and, inside a [`QuadratureScope`], by every evaluation of
/// one conversion (the grid search and Brent's steps ask one order at a time). A panel's values
/// depend on its index alone, so every order gets the same value bit for bit however many
/// panels were built before it.
pub(super) struct Quadrature {
    q: f64,
    z: f64,
    lq: f64,
    l1q: f64,
    pub(super) nodes: Vec<Node>,
    pieces: Vec<BoxPiece>,
    /// ln(A_k − 1) at integer orders k = index ([`log_a_minus_1_integer`]); NaN until computed.
    integer: Vec<f64>,
}

/// The factors of [`Quadrature::log_error`]'s bound on |f| over one slice of a panel's box that
/// do not involve α: ln of the bound on |t|, ln(1 + that bound), and ln of the bound on the
/// Gaussian factor |φ|.
#[derive(Debug, Clone, Copy)]
pub(super) struct BoxPiece {
    log_t: f64,
    log_1p_t: f64,
    gauss: f64,
}

impl Quadrature {
    pub(super) fn new(q: f64, z: f64) -> Self {
        Self {
            q,
            z,
            lq: q.ln(),
            l1q: (-q).ln_1p(),
            nodes: Vec::new(),
            pieces: Vec::new(),
            integer: Vec::new(),
        }
    }

    /// Builds the nodes of the first `panels` panels, in the order the sums visit them.
    pub(super) fn extend_nodes(&mut self, panels: usize) {
        let (q, z) = (self.q, self.z);
        let two_z2 = 2.0 * z * z;
        let (lo, width) = panel_grid(z);
        let half = width / 2.0;
        let log_norm = (half / (z * (2.0 * std::f64::consts::PI).sqrt())).ln();
        for p in self.nodes.len() / NODES..panels {
            let mid = lo + (p as f64 + 0.5) * width;
            for &(u, log_w) in log_weight_rule() {
                let x = mid + half * u;
                let t = q * exp_m1_fast((2.0 * x - 1.0) / two_z2);
                let (l, d) = if t.abs() < SMALL_T {
                    let d = ln_1p_minus_x(t);
                    (t + d, d)
                } else {
                    let l = t.ln_1p();
                    (l, l - t)
                };
                let log_weight = log_w + log_norm - x * x / two_z2;
                self.nodes.push(Node {
                    t,
                    l,
                    d,
                    log_weight,
                    weight: log_weight.exp(),
                });
            }
        }
    }

    /// Builds the [`BoxPiece`]s of the first `panels` panels ([`Quadrature::log_error`]): each
    /// panel's box [c − √2h, c + √2h] × [−h, h], widened on both sides by a slack of
    /// 1e-12·(|lo| + |c| + width) (far above the few ulps by which its computed ends can be off),
    /// is cut into [`PIECES`] slices, and each factor is taken at its worst point in the slice.
    fn extend_pieces(&mut self, panels: usize) {
        let z = self.z;
        let (lo, width) = panel_grid(z);
        let h = width / 2.0;
        let two_z2 = 2.0 * z * z;
        let log_norm = -(z * (2.0 * std::f64::consts::PI).sqrt()).ln();
        let im_l = h / (z * z);
        let half_real = std::f64::consts::SQRT_2 * h;
        for p in self.pieces.len() / PIECES..panels {
            let mid = lo + (p as f64 + 0.5) * width;
            let slack = 1e-12 * (lo.abs() + mid.abs() + width);
            let (a0, step) = (
                mid - half_real - slack,
                (2.0 * half_real + 2.0 * slack) / PIECES as f64,
            );
            for j in 0..PIECES {
                let (x0, x1) = (a0 + step * j as f64, a0 + step * (j + 1) as f64 + slack);
                let (re_lo, re_hi) = ((2.0 * x0 - 1.0) / two_z2, (2.0 * x1 - 1.0) / two_z2);
                let abs_l = re_lo.abs().max(re_hi.abs()).hypot(im_l);
                let log_t = self.lq + ln_expm1(abs_l).min(log1p_exp(re_hi));
                let d = if x0 > 0.0 {
                    x0
                } else if x1 < 0.0 {
                    -x1
                } else {
                    0.0
                };
                self.pieces.push(BoxPiece {
                    log_t,
                    log_1p_t: log1p_exp(log_t),
                    gauss: -(d * d - h * h) / two_z2 + log_norm,
                });
            }
        }
    }

    /// ln(A_n − 1) at integer n ≥ 2 ([`log_a_minus_1_integer`]), computed once per n.
    pub(super) fn integer(&mut self, n: u64) -> f64 {
        let i = n as usize;
        if self.integer.len() <= i {
            self.integer.resize(i + 1, f64::NAN);
        }
        if self.integer[i].is_nan() {
            self.integer[i] = log_a_minus_1_integer(self.q, self.z, n);
        }
        self.integer[i]
    }
}
/// ln(1 + t) − t for |t| < [`SMALL_T`], without cancellation: with s = t/(2 + t),
/// ln(1 + t) = 2·atanh(s) = 2(s + s³/3 + s⁵/5 + …) and 2s − t = −t²/(2 + t), so
/// ln(1 + t) − t = −t²/(2 + t) + 2s³(1/3 + s²/5 + … + s¹⁰/13). The two parts have ratio about
/// t/6, and |s| < 0.053, so the first omitted term is below 2e-18 of the result.
pub(super) fn ln_1p_minus_x(t: f64) -> f64 {
    let s = t / (2.0 + t);
    let s2 = s * s;
    let odd = [
        1.0 / 13.0,
        1.0 / 11.0,
        1.0 / 9.0,
        1.0 / 7.0,
        1.0 / 5.0,
        1.0 / 3.0,
    ]
    .iter()
    .fold(0.0, |acc, &c| acc * s2 + c);
    -t * t / (2.0 + t) + 2.0 * s * s2 * odd
}

/// e^L − 1: `exp_m1` near 0, where it matters, and the cheaper exp(L) − 1 for |L| ≥ 0.7, which
/// is off by at most 3 units of roundoff there (e^L/|e^L − 1| ≤ 2).
pub(super) fn exp_m1_fast(l: f64) -> f64 {
    if l.abs() < 0.7 {
        l.exp_m1()
    } else {
        l.exp() - 1.0
    }
}

/// e^y − 1 − y: for |y| < 0.3 its Taylor series Σ_{k=2}^{13} y^k/k! (the first omitted term is
/// below 1.2e-17 of the sum), else e^y − (1 + y), whose cancellation costs at most 55 units of
/// roundoff ((e^y + 1 + |y|)/(e^y − 1 − y) ≤ 53 for |y| ≥ 0.3).
pub(super) fn exp_m1_minus_x(y: f64) -> f64 {
    if y.abs() < 0.3 {
        // 1/k! for k = 13 down to 2, by Horner's rule.
        const INV_FACT: [f64; 12] = [
            1.0 / 6_227_020_800.0,
            1.0 / 479_001_600.0,
            1.0 / 39_916_800.0,
            1.0 / 3_628_800.0,
            1.0 / 362_880.0,
            1.0 / 40_320.0,
            1.0 / 5_040.0,
            1.0 / 720.0,
            1.0 / 120.0,
            1.0 / 24.0,
            1.0 / 6.0,
            1.0 / 2.0,
        ];
        y * y * INV_FACT.iter().fold(0.0, |acc, &c| acc * y + c)
    } else {
        y.exp() - (1.0 + y)
    }
}

impl Quadrature {
    /// ln(A_α − 1) plus its proven error bound ([`Quadrature::log_error`] and the float error
    /// of the sum), at a fractional order α with [`takes_quadrature`](super::takes_quadrature), by composite
    /// Gauss–Legendre quadrature on the grid of [`panel_grid`]: the sum over this order's prefix
    /// of the nodes ([`linear_sum`]), or [`log_a_minus_1_quadrature`] where the linear sum is
    /// unusable. The value depends on the order alone, so a single order gets the same value as
    /// in any batch.
    pub(super) fn log_a_minus_1(&mut self, a: f64) -> f64 {
        let (q, z) = (self.q, self.z);
        let two_z2 = 2.0 * z * z;
        let (lo, width) = panel_grid(z);
        let panels = panel_count(z, a);
        // The linear sum is not tried where e^L would overflow at the right end.
        let value = if (2.0 * (lo + panels * width) - 1.0) / two_z2 <= 700.0 {
            let count = panels as usize;
            self.extend_nodes(count);
            linear_sum(&self.nodes[..count * NODES], a, two_z2, q)
        } else {
            None
        }
        .unwrap_or_else(|| log_a_minus_1_quadrature(q, z, a));
        // Float error of the sum of panels·NODES non-negative terms: each term's two parts are
        // within 64 units of roundoff and cancel by at most (α+1)/(α−1) ([`linear_sum`]), the
        // additions add one unit each; doubled for the exp/ln around.
        let float =
            2.0 * (64.0 * (a + 1.0) / (a - 1.0) + panels * NODES as f64) * (f64::EPSILON / 2.0);
        let err = self.log_error(a, panels as usize, NODES);
        let charged = value + float.ln_1p();
        charged.max(err) + log1p_exp(-(charged - err).abs())
    }

    /// ln of a proven bound on |(A_α − 1) − quadrature| for the panels of [`panel_grid`] covering
    /// [−TAIL·z, α + TAIL·z] with `nodes` points per panel (at fractional α; the integrand f(x) = g(t(x))·φ(x) with
    /// g(t) = (1+t)^α − 1 − αt, t = q(e^L − 1), L = (2x−1)/(2z²), φ the N(0, z²) density).
    ///
    /// * **Each panel** (centre c, half-width h = 1.5·z·min(1, z)): Gauss–Legendre with N nodes on
    ///   a function analytic in the open Bernstein ellipse E_ρ (foci at the panel ends) and
    ///   bounded there by M errs by at most h·(64/15)·M·ρ^{−2(N−1)}/(ρ² − 1) (Trefethen, "Is Gauss
    ///   quadrature better than Clenshaw–Curtis?", SIAM Review 50(1), 2008, Theorem 4.5;
    ///   Approximation Theory and Approximation Practice, Thm 19.3; the exponent is taken for
    ///   N − 1 rather than N nodes, the weaker reading). With ρ = 1 + √2 the ellipse lies in the
    ///   box [c − √2h, c + √2h] × [−h, h]. There |Im L| ≤ h/z² ≤ 1.5 < π/2, so
    ///   Re(1 + st) ≥ 1 − q > 0 for s ∈ [0, 1] (Re e^L > 0): the principal power is analytic and
    ///   g(t) = α(α−1)·t²·∫₀¹ (1−s)(1+st)^{α−2} ds, so |g| ≤ C(α,2)·|t|²·B with
    ///   B = (1 + |t|)^{α−2} (α ≥ 2) or (1 − q)^{α−2} (α < 2); |t| ≤ q·min(e^{|L|} − 1,
    ///   e^{Re L} + 1); |φ(x)| = e^{−(Re x² − Im x²)/(2z²)}/(z√(2π)). M is the largest of these
    ///   bounds over [`PIECES`] slices of the box's real range (each factor at its worst point in
    ///   the slice; the factors that do not involve α are computed once per panel,
    ///   [`Quadrature::extend_pieces`]).
    /// * **Tails** (Φ̄(y) ≤ e^{−y²/2}/(y√(2π)); ∫_{x>c} e^{kL}φ = e^{(k²−k)/(2z²)}·Φ̄((c−k)/z)):
    ///   left of −TAIL·z, t ∈ (−q, 0) and g ≤ C(α,2)·q²·max(1, (1−q)^{α−2}); right of the last
    ///   panel (t > 0): for α < 2, g ≤ t^α (h(t) = 1 + αt + t^α − (1+t)^α has
    ///   h′ = α(1 + t^{α−1} − (1+t)^{α−1}) ≥ 0, as y^{α−1} is subadditive) and t ≤ q·e^L; for
    ///   α ≥ 2, g ≤ C(α,2)·t²·(1+t)^{α−2} ≤ C(α,2)·K·(t² + t^α) with K = max(1, 2^{α−3}).
    ///
    /// The sum is inflated by 1e-6 relative for the float error of computing it. Where the bound is
    /// loose (large α/z), the caller's chord bound ([`discrete_rdp_unchecked`](super::discrete_rdp_unchecked)) takes over.
    pub(super) fn log_error(&mut self, alpha: f64, panels: usize, nodes: usize) -> f64 {
        self.extend_pieces(panels);
        let (lq, l1q, z) = (self.lq, self.l1q, self.z);
        let (lo, width) = panel_grid(z);
        let h = width / 2.0;
        let two_z2 = 2.0 * z * z;
        let log_c2 = (alpha * (alpha - 1.0) / 2.0).ln();
        let per_panel = h.ln() + (64.0f64 / 15.0).ln()
            - 2.0 * (nodes as f64 - 1.0) * RHO.ln()
            - (RHO * RHO - 1.0).ln();
        let mut acc = LogSum::new();
        for panel in self.pieces[..panels * PIECES].chunks_exact(PIECES) {
            let mut m = f64::NEG_INFINITY;
            for piece in panel {
                let growth = if alpha >= 2.0 {
                    (alpha - 2.0) * piece.log_1p_t
                } else {
                    (alpha - 2.0) * l1q
                };
                m = m.max(log_c2 + 2.0 * piece.log_t + growth + piece.gauss);
            }
            acc.add(m + per_panel);
        }
        let end = lo + panels as f64 * width;
        let log_bar_phi = |y: f64| -y * y / 2.0 - (y * (2.0 * std::f64::consts::PI).sqrt()).ln();
        acc.add(log_c2 + 2.0 * lq + (alpha - 2.0).min(0.0) * l1q + log_bar_phi(-lo / z));
        if alpha < 2.0 {
            acc.add(alpha * lq + (alpha * alpha - alpha) / two_z2 + log_bar_phi((end - alpha) / z));
        } else {
            let k = (alpha - 3.0).max(0.0) * std::f64::consts::LN_2;
            acc.add(log_c2 + k + 2.0 * lq + 1.0 / (z * z) + log_bar_phi((end - 2.0) / z));
            acc.add(
                log_c2
                    + k
                    + alpha * lq
                    + (alpha * alpha - alpha) / two_z2
                    + log_bar_phi((end - alpha) / z),
            );
        }
        acc.value() + 1e-6
    }
}

thread_local! {
    /// Quadrature grids kept while a [`QuadratureScope`] is open on this thread (`None` outside
    /// one), at most [`SCOPE_GRIDS`] of them.
    pub(super) static SCOPE: RefCell<Option<Vec<Quadrature>>> = const { RefCell::new(None) };
}

/// Grids a scope keeps (one per (q, z) of the curve being converted; the oldest is dropped).
pub(super) const SCOPE_GRIDS: usize = 8;

/// While alive, subsampled-Gaussian evaluations on this thread keep their [`Quadrature`] grids
/// and integer-order values per (q, z) instead of rebuilding them per order. A conversion opens
/// one for its whole search (grid, lower bounds, Brent's steps), so the nodes and the
/// order-free parts of the error bound are computed once per conversion, not once per order;
/// the values are the same bit for bit. Nested scopes share the outermost one; it is cleared
/// when the outermost is dropped, so nothing is kept between calls.
pub(crate) struct QuadratureScope {
    owner: bool,
}

impl QuadratureScope {
    pub(crate) fn open() -> Self {
        let owner = SCOPE.with(|s| {
            let mut s = s.borrow_mut();
            let owner = s.is_none();
            if owner {
                *s = Some(Vec::new());
            }
            owner
        });
        Self { owner }
    }
}

impl Drop for QuadratureScope {
    fn drop(&mut self) {
        if self.owner {
            SCOPE.with(|s| *s.borrow_mut() = None);
        }
    }
}

/// Runs `f` on the grid of (q, z): the scope's if a [`QuadratureScope`] is open (taken out
/// while `f` runs, so `f` may evaluate other orders), else a fresh one.
pub(super) fn with_quadrature<R>(q: f64, z: f64, f: impl FnOnce(&mut Quadrature) -> R) -> R {
    let key = |g: &Quadrature| g.q.to_bits() == q.to_bits() && g.z.to_bits() == z.to_bits();
    let taken = SCOPE.with(|s| {
        s.borrow_mut()
            .as_mut()
            .map(|grids| match grids.iter().position(key) {
                Some(i) => grids.remove(i),
                None => Quadrature::new(q, z),
            })
    });
    let Some(mut grid) = taken else {
        return f(&mut Quadrature::new(q, z));
    };
    let out = f(&mut grid);
    SCOPE.with(|s| {
        if let Some(grids) = s.borrow_mut().as_mut() {
            if grids.len() >= SCOPE_GRIDS {
                grids.remove(0);
            }
            grids.push(grid);
        }
    });
    out
}

/// ln(A_n − 1) at integer n ([`log_a_minus_1_integer`]), kept by an open [`QuadratureScope`].
pub(super) fn log_a_minus_1_integer_scoped(q: f64, z: f64, n: u64) -> f64 {
    let open = SCOPE.with(|s| s.borrow().is_some());
    if open {
        with_quadrature(q, z, |grid| grid.integer(n))
    } else {
        log_a_minus_1_integer(q, z, n)
    }
}
/// ln(A_α − 1) as the quadrature sum over `nodes` in linear space, scaled by e^{−S} (module
/// doc); `None` when e^{−S} or the sum is not safely inside the normal range
/// ([`MIN_LINEAR_SUM`]).
///
/// Per node, with y = α·l, the integrand (1+t)^α − 1 − αt is written as (e^y − 1 − y) + α·d.
/// Both parts are accurate to some tens of ulps at worst ([`exp_m1_minus_x`]; d from [`Node`]),
/// and their sum cancels little: for small t they are about α²t²/2 and −αt²/2, a ratio of
/// (α+1)/(α−1) to the result (21 at α = 1.1), and for large t the first dominates. (The direct
/// form e^y − (1 + αt) cancels up to 1/C(α,2)·0.01 ≈ 2000 times at α = 1.1, t = 0.1.) Where
/// y ≥ [`BIG_Y`] e^y could overflow, so the term is e^{y + ln w − S} − (1 + αt)·w·e^{−S}; there
/// (1 + αt)/(1+t)^α < α·e^{−BIG_Y(1 − 1/α)} leaves nothing to cancel.
pub(super) fn linear_sum(nodes: &[Node], alpha: f64, two_z2: f64, q: f64) -> Option<f64> {
    let scale =
        alpha * std::f64::consts::LN_2 + (alpha * q.ln() + alpha * (alpha - 1.0) / two_z2).max(0.0);
    let inv_scale = (-scale).exp();
    if !inv_scale.is_normal() {
        return None;
    }
    let mut sum = 0.0;
    for n in nodes {
        let y = alpha * n.l;
        sum += if y < BIG_Y {
            (exp_m1_minus_x(y) + alpha * n.d) * (n.weight * inv_scale)
        } else {
            (y + n.log_weight - scale).exp() - (1.0 + alpha * n.t) * (n.weight * inv_scale)
        };
    }
    (sum >= MIN_LINEAR_SUM && sum.is_finite()).then(|| sum.ln() + scale)
}

/// ln(A_α − 1) at fractional α by the same quadrature as [`linear_sum`], summed in log space
/// (slower; for parameters whose scaled linear sum would overflow or underflow).
pub(super) fn log_a_minus_1_quadrature(q: f64, z: f64, alpha: f64) -> f64 {
    log_a_minus_1_quadrature_with(q, z, alpha, log_weight_rule())
}

/// [`log_a_minus_1_quadrature`] with the Gauss–Legendre rule `nodes` on each panel.
pub(super) fn log_a_minus_1_quadrature_with(
    q: f64,
    z: f64,
    alpha: f64,
    nodes: &[(f64, f64)],
) -> f64 {
    let lq = q.ln();
    let two_z2 = 2.0 * z * z;
    let (lo, width) = panel_grid(z);
    let count = panel_count(z, alpha);
    let log_norm = -(z * (2.0 * std::f64::consts::PI).sqrt()).ln();
    let mut acc = LogSum::new();
    let half = width / 2.0;
    let log_half = half.ln();
    for p in 0..count as usize {
        let mid = lo + (p as f64 + 0.5) * width;
        for &(u, log_w) in nodes {
            let x = mid + half * u;
            let l = (2.0 * x - 1.0) / two_z2;
            let lg = log_excess(q, lq, alpha, l);
            acc.add(lg - x * x / two_z2 + log_norm + log_w + log_half);
        }
    }
    acc.value()
}

//! Conversions between privacy currencies. They go one way only, toward weaker guarantees, and
//! round outward: a returned ε or δ is never smaller than the exact value of the formula.
//!
//! * RDP → (ε, δ): Canonne, Kamath & Steinke 2020 (arXiv 2004.00010) Prop. 12 as implemented by
//!   dp_accounting's `compute_epsilon` / `compute_delta` (THEORY.md §12.3).
//!   Closed-form curves are optimised over continuous orders (grid, then Brent
//!   refinement); tabulated curves stay on their orders. `*_on` variants use exactly the
//!   orders given (to reproduce dp_accounting on its grid).
//! * zCDP → (ε, δ): the same bound applied to the curve ρα, at the optimal continuous order from
//!   its stationarity condition (THEORY.md §12.2).
//! * pure → zCDP: ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, arXiv 1605.02065, Prop. 1.4).

use std::borrow::Cow;
use std::sync::OnceLock;

use crate::error::{check_delta, check_non_negative, check_positive, Error, Result};
use crate::numeric::bisect::{bisect, to_resolution, Split};
use std::convert::Infallible;

use crate::numeric::{mul_up, round_up};

use super::rdp::{default_orders, RdpCurve};
use super::subsampled::QuadratureScope;

/// An ε together with the Rényi order that achieved it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsAtOrder {
    /// The (ε, δ)-DP epsilon.
    pub eps: f64,
    /// The order α at which the conversion was tightest.
    pub order: f64,
}

/// CKS20 Prop. 12 at a single order: ε = r + ln(1 − 1/α) − (ln δ + ln α)/(α − 1), with
/// dp_accounting's guards (THEORY.md §12.3): r < 0 ⇒ 0; δ ≥ √(1 − e^{−r}) ⇒ 0; α ≤ 1.01 ⇒ ∞.
/// Precondition: δ ∈ (0, 1]. The result is never below the exact value of the formula (see
/// `CksOrder` and `CksEpsilon::at` for the rounding argument).
pub fn cks_epsilon_at(alpha: f64, r: f64, delta: f64) -> f64 {
    CksEpsilon::new(delta).at(&CksOrder::new(alpha), r)
}

/// log δ at a single order (dp_accounting `compute_delta`): the smaller of the
/// Bretagnolle–Huber term ½·ln(1 − e^{−r}) and (α−1)(r − ε + ln(1 − 1/α)) − ln α (α > 1.01).
pub fn cks_log_delta_at(alpha: f64, r: f64, eps: f64) -> f64 {
    CksLogDelta::new(alpha, r).at(eps)
}

/// [`cks_log_delta_at`] at one order as a function of ε: min(bh, c − s·ε) with the
/// Bretagnolle–Huber term bh and the CKS term's intercept c and slope s = α − 1 precomputed.
#[derive(Debug, Clone, Copy)]
struct CksLogDelta {
    bh: f64,
    cks: Option<(f64, f64)>,
}

impl CksLogDelta {
    /// The terms for order `alpha` and RDP value `r`.
    fn new(alpha: f64, r: f64) -> Self {
        if r.is_nan() || r == f64::INFINITY {
            return Self { bh: 0.0, cks: None };
        }
        if r <= 0.0 {
            return Self {
                bh: f64::NEG_INFINITY,
                cks: None,
            };
        }
        let bh = 0.5 * (-(-r).exp()).ln_1p();
        let cks = (alpha > 1.01).then(|| {
            let slope = alpha - 1.0;
            (slope * (r + (-1.0 / alpha).ln_1p()) - alpha.ln(), slope)
        });
        Self { bh, cks }
    }

    /// log δ at `eps`.
    fn at(&self, eps: f64) -> f64 {
        match self.cks {
            Some((intercept, slope)) => self.bh.min(intercept - slope * eps),
            None => self.bh,
        }
    }
}

/// The minimum over orders of [`cks_log_delta_at`] as a function of ε, for callers that
/// evaluate many ε on the same curve values (Papernot–Steinke Theorem 6). The
/// Bretagnolle–Huber terms do not depend on ε, so their minimum is taken once, leaving one
/// multiply-add and one comparison per order with a CKS term; the value is the same minimum.
#[derive(Debug, Clone)]
pub struct CksLogDeltaMin {
    bh: f64,
    lines: Vec<(f64, f64)>,
}

impl CksLogDeltaMin {
    /// The terms for RDP values `values` at `orders`.
    pub fn new(orders: &[f64], values: &[f64]) -> Self {
        let terms: Vec<CksLogDelta> = orders
            .iter()
            .zip(values)
            .map(|(&a, &r)| CksLogDelta::new(a, r))
            .collect();
        Self {
            bh: terms.iter().map(|t| t.bh).fold(f64::INFINITY, f64::min),
            lines: terms.iter().filter_map(|t| t.cks).collect(),
        }
    }

    /// min over the orders of log δ at `eps`.
    pub fn at(&self, eps: f64) -> f64 {
        self.lines.iter().fold(self.bh, |m, &(intercept, slope)| {
            let v = intercept - slope * eps;
            if v < m {
                v
            } else {
                m
            }
        })
    }
}

/// Unit roundoff of f64: a correctly rounded operation is off by at most `U` times its result.
/// libm's `ln` and `ln_1p` are taken to be off by at most 2 ulps, i.e. 4U relative.
const U: f64 = f64::EPSILON / 2.0;

/// The curve-independent constants of CKS20 Prop. 12 at one order α: the bound is
/// ε(α) = r + a + ln(1/δ)·b with a = ln(1 − 1/α) − ln(α)/(α − 1) and b = 1/(α − 1), so once they
/// are known a conversion costs two multiply-adds per order ([`CksEpsilon::at`]). They depend only
/// on α, so a grid's constants are computed once ([`default_grid`]) and any order gets the same
/// constants whichever grid it is on.
///
/// Both are rounded up, so that r + a + L·b is never below the exact bound:
/// * b = fl(1/fl(α − 1))·(1 + 4U): fl(α − 1) and the division are each off by at most U relative,
///   so fl(1/fl(α−1)) ≥ (1 − 2.1U)/(α − 1), and the factor, after its own rounding, lifts that
///   above 1/(α − 1).
/// * a = fl(l₁ − l₂) + 10U·(1/(α−1) + |l₁| + |l₂|) with l₁ = ln_1p(−fl(1/α)), l₂ = ln α/(α−1):
///   rounding 1/α (U relative) moves ln(1 − 1/α) by at most 1.01U/(α−1); ln_1p adds 4U|l₁|;
///   l₂ carries 4U (ln) + U (α − 1) + U (division); the subtraction and the addition of the
///   margin U each of |l₁| + |l₂| (l₁ < 0 < l₂, so |a| = |l₁| + |l₂|). In total below 1.01U/(α−1) + 6.1U|l₁| + 8.2U|l₂|, which the margin
///   covers.
///
/// Orders α ≤ 1.01 give no bound in dp_accounting: a = +∞, so ε = ∞ there.
#[derive(Debug, Clone, Copy)]
struct CksOrder {
    a: f64,
    b: f64,
}

impl CksOrder {
    fn new(alpha: f64) -> Self {
        if alpha.is_nan() || alpha <= 1.01 {
            return Self {
                a: f64::INFINITY,
                b: 0.0,
            };
        }
        let am1 = alpha - 1.0;
        let l1 = (-1.0 / alpha).ln_1p();
        let l2 = alpha.ln() / am1;
        Self {
            a: (l1 - l2) + 10.0 * U * (1.0 / am1 + l1.abs() + l2.abs()),
            b: (1.0 / am1) * (1.0 + 4.0 * U),
        }
    }
}

/// dp_accounting's default grid with the [`CksOrder`] constants of each order, computed once and
/// shared by every conversion on that grid.
struct DefaultGrid {
    orders: Vec<f64>,
    cks: Vec<CksOrder>,
}

fn cks_orders(orders: &[f64]) -> Vec<CksOrder> {
    orders.iter().map(|&a| CksOrder::new(a)).collect()
}

fn default_grid() -> &'static DefaultGrid {
    static GRID: OnceLock<DefaultGrid> = OnceLock::new();
    GRID.get_or_init(|| {
        let orders = default_orders();
        let cks = cks_orders(&orders);
        DefaultGrid { orders, cks }
    })
}

/// The [`CksOrder`] constants for `orders`: borrowed from [`default_grid`] when `orders` is that
/// grid (checked by address first, so the grid [`search_orders`] returns costs no comparison).
fn cks_for(orders: &[f64]) -> Cow<'static, [CksOrder]> {
    let grid = default_grid();
    if std::ptr::eq(orders, grid.orders.as_slice()) || orders == grid.orders.as_slice() {
        Cow::Borrowed(&grid.cks)
    } else {
        Cow::Owned(cks_orders(orders))
    }
}

/// The default grid together with the curve's tabulated orders, sorted: the default grid itself
/// (borrowed, no allocation) when every tabulated order is already on it.
fn search_orders(curve: &RdpCurve) -> Cow<'static, [f64]> {
    let grid = &default_grid().orders;
    let on_grid = |os: &[f64]| {
        os == grid.as_slice()
            || os
                .iter()
                .all(|o| grid.binary_search_by(|g| g.total_cmp(o)).is_ok())
    };
    if curve.table_orders().all(on_grid) {
        return Cow::Borrowed(grid);
    }
    let mut orders = grid.clone();
    orders.extend(curve.tabulated_orders());
    orders.sort_by(f64::total_cmp);
    orders.dedup();
    Cow::Owned(orders)
}

/// CKS20 Prop. 12 for a fixed δ: ln(1/δ), rounded up, and the Bretagnolle–Huber threshold are
/// computed once; each order then needs its [`CksOrder`] constants and six float operations.
struct CksEpsilon {
    delta: f64,
    /// ln(1/δ)·(1 + 6U): ln is off by at most 4U relative, the product by U, so this is not
    /// below ln(1/δ) (δ ≤ 1).
    ln_inv_delta: f64,
    /// r above this cannot satisfy the Bretagnolle–Huber guard δ² + expm1(−r) > 0, whose exact
    /// threshold is −ln(1 − δ²); the factor 1 + 1e-6 covers float rounding, and smaller r take
    /// the exact test.
    bh_bound: f64,
}

impl CksEpsilon {
    fn new(delta: f64) -> Self {
        Self {
            delta,
            ln_inv_delta: -delta.ln() * (1.0 + 6.0 * U),
            bh_bound: -(-delta * delta).ln_1p() * (1.0 + 1e-6) + f64::MIN_POSITIVE,
        }
    }

    /// The bound at one order with RDP value `r`, never below the exact value of the formula.
    ///
    /// s = fl(r + a), p = fl(L·b), e = fl(s + p) are each off by at most U times their result,
    /// so the exact r + a + L·b is at most e + U(|s| + p + |e|) ≤ e + 2.01U(|e| + p) (as
    /// |s| ≤ (1 + U)|e| + p). The returned e + 4U(|e| + p) exceeds that even after its own
    /// two roundings (at most U|e| + 2.1U·4U(|e| + p)). With the constants rounded up
    /// ([`CksOrder`]) the result is an upper bound on the exact ε at this order.
    fn at(&self, order: &CksOrder, r: f64) -> f64 {
        // One comparison pair for the usual r; the guards only for r that may need them.
        if !(r > self.bh_bound && r < f64::INFINITY) {
            if r.is_nan() || r == f64::INFINITY {
                return f64::INFINITY;
            }
            if r < 0.0 || self.delta * self.delta + (-r).exp_m1() > 0.0 {
                return 0.0;
            }
        }
        let p = self.ln_inv_delta * order.b;
        let e = (r + order.a) + p;
        e + 4.0 * U * (e.abs() + p)
    }
}

fn check_rdp_delta(delta: f64) -> Result<()> {
    check_delta("delta", delta)?;
    if delta == 0.0 {
        return Err(Error::invalid(
            "delta",
            delta,
            "an RDP curve implies (eps, delta)-DP only for delta > 0",
        ));
    }
    Ok(())
}

fn check_orders(orders: &[f64]) -> Result<()> {
    if orders.is_empty() {
        return Err(Error::invalid("orders", "[]", "need at least one order"));
    }
    match orders.iter().find(|o| !(o.is_finite() && **o > 1.0)) {
        Some(o) => Err(Error::invalid(
            "orders",
            o,
            "every order must be finite and > 1",
        )),
        None => Ok(()),
    }
}

/// Minimises `g(i, α, ε(α))` over `orders` (α = orders\[i\]), where `g` is non-decreasing in ε;
/// returns (index,
/// value) of the first minimum (∞ if none is finite). Orders where the curve is costly to
/// evaluate are visited last and skipped when `g` at a lower bound of ε(α) already cannot beat
/// the best value (same result as evaluating everything).
fn grid_min(curve: &RdpCurve, orders: &[f64], g: impl Fn(usize, f64, f64) -> f64) -> (usize, f64) {
    let mut best = (0, f64::INFINITY);
    let better = |v: f64, i: usize, best: (usize, f64)| v < best.1 || (v == best.1 && i < best.0);
    if !curve.may_be_costly() {
        // Indices increase, so the first minimum is kept by a strict comparison.
        for (i, (&a, &r)) in orders
            .iter()
            .zip(curve.values_on(orders).iter())
            .enumerate()
        {
            let v = g(i, a, r);
            if v < best.1 {
                best = (i, v);
            }
        }
        return best;
    }
    let mut deferred = Vec::new();
    let lower_bounds = curve.lower_bounds_if_costly(orders);
    for ((i, &a), lower_bound) in orders.iter().enumerate().zip(lower_bounds) {
        match lower_bound {
            Some(lb) => deferred.push((g(i, a, lb), i)),
            None => {
                let v = g(i, a, curve.eval(a));
                if better(v, i, best) {
                    best = (i, v);
                }
            }
        }
    }
    deferred.sort_by(|x, y| x.0.total_cmp(&y.0));
    for (lb, i) in deferred {
        if lb > best.1 {
            break;
        }
        let v = g(i, orders[i], curve.eval(orders[i]));
        if better(v, i, best) {
            best = (i, v);
        }
    }
    best
}

/// Brent's minimisation on [lo, hi] (interior points only): parabolic steps through the three
/// best points so far, a golden-section step whenever the parabola's minimum is not trusted
/// (outside the bracket, or the step not shrinking), until the bracket is within 1e-7 relative of
/// the best point. Near a smooth minimum it converges superlinearly, so it needs far fewer
/// evaluations than plain golden section (about 8–12 here instead of 25; each evaluation can be
/// a quadrature). Returns the best point evaluated and its value. Any point is a valid order,
/// so the caller may take the minimum with the grid result whatever the shape of `f`.
fn brent_min(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> (f64, f64) {
    const GOLD: f64 = 0.381_966_011_250_105_2; // 2 − φ
    const REL_TOL: f64 = 1e-7;
    // x: best point; w: second best; v: the previous w.
    let mut x = lo + GOLD * (hi - lo);
    let mut fx = f(x);
    let (mut w, mut fw, mut v, mut fv) = (x, fx, x, fx);
    // step: the last step taken; prev_step: the one before (a parabolic step must be shorter
    // than half of it, else the search may stall).
    let (mut step, mut prev_step) = (0.0f64, 0.0f64);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        let tol = REL_TOL * x.abs() / 2.0 + f64::MIN_POSITIVE;
        if (x - mid).abs() <= 2.0 * tol - 0.5 * (hi - lo) {
            break;
        }
        let golden = |x: f64| {
            let span = if x >= mid { lo - x } else { hi - x };
            (span, GOLD * span)
        };
        if prev_step.abs() > tol {
            let r = (x - w) * (fx - fv);
            let mut den = (x - v) * (fx - fw);
            let mut num = (x - v) * den - (x - w) * r;
            den = 2.0 * (den - r);
            if den > 0.0 {
                num = -num;
            } else {
                den = -den;
            }
            let limit = prev_step;
            prev_step = step;
            let trusted = num.abs() < (0.5 * den * limit).abs()
                && num > den * (lo - x)
                && num < den * (hi - x);
            if trusted {
                step = num / den;
                let u = x + step;
                if u - lo < 2.0 * tol || hi - u < 2.0 * tol {
                    step = tol.copysign(mid - x);
                }
            } else {
                (prev_step, step) = golden(x);
            }
        } else {
            (prev_step, step) = golden(x);
        }
        let u = if step.abs() >= tol {
            x + step
        } else {
            x + tol.copysign(step)
        };
        let fu = f(u);
        if fu <= fx {
            if u >= x {
                lo = x;
            } else {
                hi = x;
            }
            (v, fv, w, fw, x, fx) = (w, fw, x, fx, u, fu);
        } else {
            if u < x {
                lo = u;
            } else {
                hi = u;
            }
            if fu <= fw || w == x {
                (v, fv, w, fw) = (w, fw, u, fu);
            } else if fu <= fv || v == x || v == w {
                (v, fv) = (u, fu);
            }
        }
    }
    (x, fx)
}

/// The bracket around grid index `i` for continuous refinement: the neighbouring grid orders,
/// (1.01, ·] below the first and [·, 2·last] above the last.
fn bracket(orders: &[f64], i: usize) -> (f64, f64) {
    let lo = if i == 0 {
        1.01f64.next_up()
    } else {
        orders[i - 1]
    };
    let hi = orders.get(i + 1).copied().unwrap_or(2.0 * orders[i]);
    (lo, hi)
}

/// The smallest ε such that the curve implies (ε, δ)-DP by CKS20 Prop. 12 (arXiv 2004.00010;
/// THEORY.md §12.3), minimised over exactly the given `orders` (dp_accounting
/// `compute_epsilon`). Preconditions: δ ∈ (0, 1), orders finite and > 1. Rounded up.
pub fn rdp_epsilon_on(curve: &RdpCurve, delta: f64, orders: &[f64]) -> Result<EpsAtOrder> {
    let _scope = QuadratureScope::open();
    check_rdp_delta(delta)?;
    check_orders(orders)?;
    let (cks, consts) = (CksEpsilon::new(delta), cks_for(orders));
    let (i, eps) = grid_min(curve, orders, |i, _, r| cks.at(&consts[i], r));
    Ok(EpsAtOrder {
        eps: eps.max(0.0),
        order: if eps.is_finite() { orders[i] } else { f64::NAN },
    })
}

/// The smallest ε such that the curve implies (ε, δ)-DP by CKS20 Prop. 12 (arXiv 2004.00010;
/// THEORY.md §12.3). First minimised over dp_accounting's default grid and the curve's own
/// tabulated orders; then, for closed-form curves ([`RdpCurve::is_closed_form`]), refined over
/// continuous orders by Brent's method between the grid neighbours of the best grid
/// order. Returns min(grid, refined), so it is never worse than dp_accounting's default-grid
/// answer, and (every order giving a valid bound) never below the continuous optimum.
/// Tabulated curves stay on their orders. Precondition: δ ∈ (0, 1). Rounded up.
pub fn rdp_epsilon(curve: &RdpCurve, delta: f64) -> Result<EpsAtOrder> {
    let _scope = QuadratureScope::open();
    check_rdp_delta(delta)?;
    let orders = search_orders(curve);
    let f = |a: f64| cks_epsilon_at(a, curve.eval(a), delta);
    let (cks, consts) = (CksEpsilon::new(delta), cks_for(&orders));
    let (i, mut eps) = grid_min(curve, &orders, |i, _, r| cks.at(&consts[i], r));
    let mut order = if eps.is_finite() { orders[i] } else { f64::NAN };
    if curve.is_closed_form() && eps.is_finite() && eps > 0.0 {
        let (lo, hi) = bracket(&orders, i);
        let (a, e) = brent_min(f, lo, hi);
        if e < eps {
            (eps, order) = (e, a);
        }
    }
    Ok(EpsAtOrder {
        eps: eps.max(0.0),
        order,
    })
}

/// The smallest δ such that the curve implies (ε, δ)-DP (dp_accounting `compute_delta`, CKS20
/// Prop. 12 with the Bretagnolle–Huber term; THEORY.md §12.3), minimised over exactly the given
/// `orders`. Preconditions: ε finite ≥ 0, orders finite and > 1. Rounded up, capped at 1.
pub fn rdp_delta_on(curve: &RdpCurve, eps: f64, orders: &[f64]) -> Result<f64> {
    let _scope = QuadratureScope::open();
    check_non_negative("epsilon", eps)?;
    check_orders(orders)?;
    let (_, log_delta) = grid_min(curve, orders, |_, a, r| cks_log_delta_at(a, r, eps));
    Ok(round_up(log_delta.exp().min(1.0)))
}

/// The smallest δ such that the curve implies (ε, δ)-DP (CKS20 Prop. 12, arXiv 2004.00010, as in
/// dp_accounting `compute_delta`): minimised over the default grid and tabulated orders, then,
/// for closed-form curves, refined over continuous orders as in [`rdp_epsilon`].
/// Precondition: ε finite ≥ 0. Rounded up, capped at 1.
pub fn rdp_delta(curve: &RdpCurve, eps: f64) -> Result<f64> {
    let _scope = QuadratureScope::open();
    check_non_negative("epsilon", eps)?;
    let orders = search_orders(curve);
    let f = |a: f64| cks_log_delta_at(a, curve.eval(a), eps);
    let (i, mut log_delta) = grid_min(curve, &orders, |_, a, r| cks_log_delta_at(a, r, eps));
    if curve.is_closed_form() && log_delta.is_finite() && log_delta < 0.0 {
        let (lo, hi) = bracket(&orders, i);
        log_delta = log_delta.min(brent_min(f, lo, hi).1);
    }
    Ok(round_up(log_delta.exp().min(1.0)))
}

/// Bisection for the root of an increasing function on [lo, hi] (to float resolution).
fn bisect_increasing(f: impl Fn(f64) -> f64, lo: f64, hi: f64) -> f64 {
    let upper = |x: f64| Ok(f(x) >= 0.0);
    let Ok((lo, hi)) = bisect::<Infallible>(lo, hi, Split::Arithmetic, to_resolution, upper);
    0.5 * (lo + hi)
}

/// ε(δ) of a ρ-zCDP mechanism by the optimal CKS bound (Canonne, Kamath & Steinke 2020,
/// arXiv 2004.00010, Prop. 12 applied to the curve ρα; THEORY.md §12.2), at the order α*
/// solving ρ(α−1)² = ln(1/(αδ)) (restricted to α > 1.01 like OpenDP).
///
/// No grid search is needed: for ε(α) = ρα + ln(1 − 1/α) − (ln δ + ln α)/(α − 1),
/// dε/dα = h(α)/(α−1)² with h(α) = ρ(α−1)² + ln α + ln δ, and h is strictly increasing on
/// α > 1 (h′ = 2ρ(α−1) + 1/α > 0). So ε decreases up to the root of h and increases after it:
/// the root, or 1.01 if the root lies below it, minimises ε over every α ≥ 1.01, in particular
/// over dp_accounting's default grid. The root is found by safeguarded Newton steps to 1e-13
/// relative (ε is flat there, so the remaining error in ε is far below float rounding).
/// Preconditions: ρ finite > 0, δ ∈ (0, 1). Rounded up.
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64> {
    Ok(zcdp_epsilon_at_order(rho, delta)?.eps)
}

/// [`zcdp_epsilon`] together with the optimal order α*.
pub fn zcdp_epsilon_at_order(rho: f64, delta: f64) -> Result<EpsAtOrder> {
    check_positive("rho", rho)?;
    check_rdp_delta(delta)?;
    let ln_delta = delta.ln();
    let h = |a: f64| rho * (a - 1.0) * (a - 1.0) + a.ln() + ln_delta;
    let dh = |a: f64| 2.0 * rho * (a - 1.0) + 1.0 / a;
    let alpha =
        newton_increasing(h, dh, 1.0, 2.0 + (-ln_delta / rho).sqrt()).max(1.01f64.next_up());
    Ok(EpsAtOrder {
        eps: cks_epsilon_at(alpha, mul_up(rho, alpha), delta).max(0.0),
        order: alpha,
    })
}

/// The root of an increasing function `f` with derivative `df` on [lo, hi] (f(lo) < 0 ≤ f(hi)
/// assumed): Newton steps, replaced by bisection whenever they leave the shrinking bracket, until
/// a step is below 1e-13 relative.
fn newton_increasing(
    f: impl Fn(f64) -> f64,
    df: impl Fn(f64) -> f64,
    mut lo: f64,
    mut hi: f64,
) -> f64 {
    let mut x = 0.5 * (lo + hi);
    for _ in 0..100 {
        let fx = f(x);
        if fx < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let mut next = x - fx / df(x);
        if !(next > lo && next < hi) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 1e-13 * x {
            return next;
        }
        x = next;
    }
    x
}

/// δ(ε) of a ρ-zCDP mechanism by the optimal CKS bound (arXiv 2004.00010, Prop. 12 on the curve
/// ρα; THEORY.md §12.2): δ = inf_α exp((α−1)(αρ − ε))·(1 − 1/α)^α/(α − 1); the minimiser solves
/// (2α−1)ρ − ε + ln(1 − 1/α) = 0 and is found by bisection on α ∈ (1.01, (ε+1)/(2ρ) + 2]
/// (as OpenDP). Returns min(bound at α*, bound on the default grid). Preconditions: ρ finite
/// > 0, ε finite ≥ 0. Rounded up, capped at 1.
pub fn zcdp_delta(rho: f64, eps: f64) -> Result<f64> {
    check_positive("rho", rho)?;
    check_non_negative("epsilon", eps)?;
    let curve = RdpCurve::linear(rho)?;
    let grid = rdp_delta_on(&curve, eps, &default_orders())?;
    let stationarity = |a: f64| (2.0 * a - 1.0) * rho - eps + (-1.0 / a).ln_1p();
    let hi = (eps + 1.0) / (2.0 * rho) + 2.0;
    let alpha = bisect_increasing(stationarity, 1.0, hi).max(1.01f64.next_up());
    let d = round_up(
        cks_log_delta_at(alpha, mul_up(rho, alpha), eps)
            .exp()
            .min(1.0),
    );
    Ok(d.min(grid))
}

/// The largest ρ whose [`zcdp_epsilon`] at `delta` is at most `eps` (bisection to 1e-12
/// relative, rounded toward smaller ρ): calibrates a zCDP mechanism to an (ε, δ) target through
/// the CKS conversion. Preconditions: ε finite > 0, δ ∈ (0, 1).
pub fn zcdp_rho_for(eps: f64, delta: f64) -> Result<f64> {
    check_positive("epsilon", eps)?;
    check_rdp_delta(delta)?;
    // ε(ρ) ≥ ρ for every δ < 1 (the CKS bound at any order exceeds ρα − ln(α)/(α−1) ≥ ρ), so
    // the answer lies below ε.
    if zcdp_epsilon(eps, delta)? <= eps {
        return Ok(eps);
    }
    let done = |lo: f64, hi: f64| hi - lo <= 1e-12 * hi;
    let upper = |rho: f64| Ok(zcdp_epsilon(rho, delta)? > eps);
    let (lo, _) = bisect(0.0, eps, Split::Arithmetic, done, upper)?;
    if lo == 0.0 {
        return Err(Error::Numerical {
            what: "zCDP calibration",
            reason: format!("no positive rho reaches epsilon {eps} at delta {delta}"),
        });
    }
    Ok(lo)
}

/// ε-DP ⇒ (ε²/2)-zCDP (Bun & Steinke 2016, Prop. 1.4).
pub fn pure_to_zcdp(eps: f64) -> Result<f64> {
    check_positive("epsilon", eps)?;
    Ok(mul_up(mul_up(eps, eps), 0.5))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worked_numbers_from_theory() {
        // THEORY.md §12.3: α = 10, r = 1.0, δ = 1e-5 gives ε = 1.9180.
        assert!((cks_epsilon_at(10.0, 1.0, 1e-5) - 1.9180).abs() < 5e-5);
        // §1.4: 20 EMs at ε₀ = 0.5 are 0.625-zCDP, ε(1e-5) = 5.378 (continuous; the grid is
        // within 3e-4 relative above).
        let e = zcdp_epsilon(0.625, 1e-5).unwrap();
        assert!((5.37767..5.3795).contains(&e), "{e}");
        assert!(rdp_epsilon(&RdpCurve::linear(1.0).unwrap(), 0.0).is_err());
        assert!(zcdp_epsilon(-1.0, 1e-5).is_err());
        assert_eq!(pure_to_zcdp(1.0).unwrap(), 0.5);
    }

    /// The f64 nearest to each exact value below was computed in 50-digit decimal arithmetic on
    /// the same float inputs. A result strictly above the nearest float is at or above the exact
    /// value, whichever side of it the nearest float lies.
    #[test]
    fn cks_bound_rounds_up_and_stays_tight() {
        // (α, r, δ, nearest float to the exact bound). In each case the plain float formula
        // r + ln_1p(−1/α) − (ln δ + ln α)/(α − 1) is below the exact value (10.226631103850337
        // vs 10.22663110385033772…, 7.400797867091743 vs 7.40079786709174424…, 570.7743162509776
        // vs 570.77431625097759…, 1.9180106367839718 vs 1.91801063678397177…), so returning it
        // unrounded fails the first assertion; a constant off by more than 1e-14 fails the second.
        let cases = [
            (2.0, 0.1, 1e-5, 10.226631103850337),
            (1.5, 0.1, 0.01, 7.400797867091744),
            (1.02, 0.05, 1e-5, 570.7743162509776),
            (10.0, 1.0, 1e-5, 1.9180106367839718),
        ];
        for (a, r, d, nearest) in cases {
            let got = cks_epsilon_at(a, r, d);
            assert!(got > nearest, "α={a}: {got} not above the exact {nearest}");
            assert!(got <= nearest * (1.0 + 1e-14), "α={a}: {got} vs {nearest}");
        }
        // The constants alone: a(2) = ln(1/2) − ln 2 = −1.38629436111989061883…,
        // b(1.1) = 1/(fl(1.1) − 1) = 9.99999999999999111…
        let two = CksOrder::new(2.0);
        assert!(two.a > -1.3862943611198906 && two.a < -1.3862943611198906 + 1e-14);
        assert!(two.b > 1.0 && two.b <= 1.0 + 1e-15);
        let b = CksOrder::new(1.1).b;
        assert!(b > 9.999999999999991 && b < 9.999999999999991 * (1.0 + 1e-15));
        assert_eq!(cks_epsilon_at(1.01, 1.0, 1e-5), f64::INFINITY);
        assert_eq!(cks_epsilon_at(2.0, 0.0, 1e-5), 0.0);
    }

    #[test]
    fn table_on_the_default_grid_uses_the_shared_constants() {
        // ρ = 0.5 tabulated on dp_accounting's grid, δ = 1e-5: dp_accounting 0.6.0 gives
        // 4.728507067217623 at order 5.4; the exact bound there is 4.72850706721762305812…
        let orders = default_orders();
        let values = orders.iter().map(|a| 0.5 * a).collect();
        let table = RdpCurve::table(orders.clone(), values).unwrap();
        let got = rdp_epsilon_on(&table, 1e-5, &orders).unwrap();
        assert_eq!(got.order, 5.4);
        assert!(got.eps > 4.728507067217623 && got.eps <= 4.728507067217623 * (1.0 + 1e-14));
        // Same constants on another grid containing 5.4: the same value bit for bit.
        let other = rdp_epsilon_on(&table, 1e-5, &[3.0, 5.4, 7.0]).unwrap();
        assert_eq!(other, got);
        assert_eq!(rdp_epsilon(&table, 1e-5).unwrap(), got);
    }
}

//! The dominating pairs of the mechanisms dptune composes, discretised by connect-the-dots.
//!
//! Outputs are in units that make the loss increasing in the output (a reflection where
//! needed), so that every continuous part is one [`Segment`]. "Forward" is the pair
//! (M(D), M(D′)) with D′ = D minus one record (remove), "backward" its reverse (add); for a
//! mechanism whose pair is symmetric the two laws coincide and only one is kept.

use super::discretise::{Builder, Segment};
use super::grid_limit::GridTooLarge;
use super::pmf::LossPmf;
use super::progression::Progression;
use super::PldConfig;
use crate::numeric::{gamma, inflate, UNIT_ROUNDOFF as U};
use crate::privacy::normal::log_ndtr;

/// Φ(x), accurate in both tails.
fn ndtr(x: f64) -> f64 {
    log_ndtr(x).exp()
}

/// Standard normal density.
fn phi(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// Standard deviations kept on each side: Φ(−c) ≤ e^{−c²/2} ≤ tail.
fn width(tail: f64) -> f64 {
    (-2.0 * tail.ln()).sqrt()
}

/// The error of a computed loss ±ln_1p(q·expm1(t̂)) of a Poisson-subsampled pair (rate
/// 0 < q ≤ 1, |t| ≤ `t_max` over the outputs discretised) that [`Builder::atom`]'s nudge does
/// not cover, times the connect-the-dots slope, per unit of mass: what [`Builder::charge`]
/// adds for it, in full (an allowance shared with the quadrature's other errors would be
/// booked twice).
///
/// The nudge in `atom` covers the rounding of the grid position and an ulp of L itself (the
/// last `ln_1p`). Inherited from its arguments: t̂ is off by at most 3.01u·|t| (three
/// roundings), which moves L by at most as much, since dL/dt = q·e^t/(1 − q + q·e^t) lies in
/// [0, 1]; and x = q·expm1(t̂) is off by 3.01u·|x| (an ulp of `expm1`, the product), which
/// moves L by −ln(1 − 3.01u·|x|/(1 + x)), with |x|/(1 + x) at most 1 for x ≥ 0, and for
/// x < 0 at most q/(1 − q) and at most e^{−t} − 1 (as 1 + x ≥ e^t). A piece of mass m placed
/// ΔL off moves m·ΔL·h/(1 − e^{−h}) ≤ m·ΔL·(1 + h) (h ≤ 1) of mass-times-distance between two
/// neighbouring grid points (the share's slope is at most 1/(1 − e^{−h})): its
/// bounded-Lipschitz distance, which bounds the change of every δ(ε) (weights in [0, 1],
/// 1-Lipschitz in the loss) and composes like the L1 error it is charged with ([`LossPmf`]'s
/// `err`). At the golden DP-SGD steps (s ≥ 1, q ≤ 0.1) it is under 1e-14 per unit of mass.
pub(super) fn loss_error(q: f64, t_max: f64, h: f64) -> f64 {
    let ratio = (q / (1.0 - q)).min(t_max.exp_m1()).max(1.0);
    // x off by 3.01u·|x| moves 1 + x by a relative e ≤ 3.01u·ratio, and L by at most
    // −ln(1 − e) (not e: first order is not enough for q within 1e-13 of 1); no bound for
    // e ≥ 1/2, where the charge is infinite (δ is then 1).
    let e = 3.01 * U * ratio;
    let from_x = if e < 0.5 {
        -(-e).ln_1p()
    } else {
        f64::INFINITY
    };
    (3.01 * U * t_max + from_x) * (1.0 + h) * (1.0 + 8.0 * U)
}

/// What a mechanism's discretisation returns: its law, or the grid it would need.
type Discretised = Result<LossPmf, GridTooLarge>;

fn builder(cfg: &PldConfig, from: f64, to: f64, optimistic: bool) -> Result<Builder, GridTooLarge> {
    #[cfg_attr(not(test), allow(unused_mut))]
    let mut b = Builder::new(cfg.interval, from, to)?;
    #[cfg(test)]
    {
        b.optimistic = optimistic;
    }
    #[cfg(not(test))]
    let _ = optimistic;
    Ok(b)
}

/// One continuous part of P on [lo, hi] (`seg`), P's mass below lo (`below`, put at loss(lo),
/// which only raises it: the loss is increasing) and the mass above hi (`above`, put at +∞):
/// the shape of both directions of the subsampled Gaussian, with lo and hi c standard
/// deviations out; `charge` is the L1 evaluation error charged beyond the quadrature's
/// allowance ([`Builder::charge`]).
fn gaussian_shaped(
    cfg: &PldConfig,
    optimistic: bool,
    seg: &Segment<'_>,
    (below, above): (f64, f64),
    charge: f64,
) -> Discretised {
    let floor = seg.loss(seg.lo);
    let mut b = builder(cfg, floor, seg.loss(seg.hi), optimistic)?;
    b.charge(charge);
    b.segment(seg);
    b.atom(below, floor);
    b.atom(above, f64::INFINITY);
    Ok(b.finish())
}

/// The smallest loss mean μ = 1/(2s²) a Gaussian is discretised with. A noise multiplier s
/// above about 1.3e154 makes s² overflow and μ a subnormal, whose 1/(4μ) is +∞ (and a density
/// of ∞·0 = NaN at the nodes); raising μ to 1e-300 is the same pair with less noise, which
/// dominates, and costs nothing measurable (ε ≈ 1e-150 either way).
const MIN_MU: f64 = 1e-300;

/// Gaussian noise N(0, s²) on a sensitivity-1 query (s = σ/Δ): P = N(1, s²), Q = N(0, s²),
/// L(o) = (2o − 1)/(2s²), i.e. L ~ N(μ, 2μ) with μ = 1/(2s²) (THEORY.md §16a; Balle & Wang
/// 2018, arXiv 1805.06530, Thm. 8 for the exact profile this reproduces at the grid points).
///
/// Discretised in the loss, c standard deviations either side of μ ([`Builder::gaussian`]),
/// with μ rounded up (a larger μ is the same pair with less noise, which dominates) and at
/// least [`MIN_MU`]; the mass Φ(−c) below the window is put at its lowest loss and the mass
/// Φ(−c) above at +∞.
pub(super) fn gaussian(s: f64, cfg: &PldConfig, optimistic: bool) -> Discretised {
    let c = width(cfg.tail);
    let mu = inflate(0.5 / (s * s), 4.0 * U).max(MIN_MU);
    let sd = (2.0 * mu).sqrt();
    let (from, to) = (mu - c * sd, mu + c * sd);
    let mut b = builder(cfg, from, to, optimistic)?;
    b.gaussian(mu, from, to);
    b.atom(ndtr(-c), from);
    b.atom(ndtr(-c), f64::INFINITY);
    Ok(b.finish())
}

/// Laplace noise with scale b on a sensitivity-Δ query, r = Δ/b, in units of b: P = Lap(r, 1),
/// Q = Lap(0, 1); L = −r for o ≤ 0, r for o ≥ r, 2o − r between (THEORY.md §16a). Between the
/// atoms the output density e^{o−r}/2 is, in the loss, e^{(l−r)/2}/4 on (−r, r), discretised in
/// closed form ([`Builder::half_exponential`]).
pub(super) fn laplace(r: f64, cfg: &PldConfig, optimistic: bool) -> Discretised {
    let mut b = builder(cfg, -r, r, optimistic)?;
    b.atom(0.5 * (-r).exp(), -r);
    b.atom(0.5, r);
    b.half_exponential(0.25, -r, r);
    Ok(b.finish())
}

/// Both directions of DP-SGD's step, the Poisson-subsampled Gaussian (rate q, noise multiplier s, sensitivity 1;
/// THEORY.md §16a). Remove: P = (1−q)N(0, s²) + qN(1, s²) vs Q = N(0, s²),
/// L = ln(1 + q(e^{(2o−1)/(2s²)} − 1)). Add, reflected by o ↦ 1 − o: P = N(1, s²) vs
/// Q = (1−q)N(1, s²) + qN(0, s²), L = −ln(1 + q(e^{(1−2o)/(2s²)} − 1)).
#[cfg(test)]
pub(super) fn subsampled_gaussian(
    q: f64,
    s: f64,
    cfg: &PldConfig,
    optimistic: bool,
) -> Result<(LossPmf, LossPmf), GridTooLarge> {
    Ok((
        subsampled_gaussian_direction(q, s, cfg, optimistic, Direction::Remove)?,
        subsampled_gaussian_direction(q, s, cfg, optimistic, Direction::Add)?,
    ))
}

/// A direction of an add/remove-one pair: remove is (M(D), M(D′)) with D′ = D minus one
/// record, add its reverse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Direction {
    Remove,
    Add,
}

/// One direction of the Poisson-subsampled Gaussian (`subsampled_gaussian`).
///
/// In the remove direction P's density is Q's times the likelihood ratio, so with
/// t = (2o − 1)/(2s²) it is φ(o/s)·(1 + q·expm1(t))/s, and the factor is e^L, whose
/// q·expm1(t) the loss ln_1p(q·expm1(t)) needs anyway: one `exp` (for φ) per quadrature node
/// where the mixture (1 − q)φ(o/s) + qφ((o − 1)/s) took two. Floating point, as an L1 error
/// over the output weighted like the masses (u the unit roundoff, z = o/s):
///
/// * φ(o/s)/s: the exponent z²/2 is off by 1.5u·z² (two roundings), `exp` adds an ulp (2u),
///   the constant √(2π), its division and the division by s 3u, the product with the factor
///   u: a relative (1.52z² + 6)u, and E_P z² ≤ 1 + q/s² (P = (1 − q)N(0, s²) + qN(1, s²));
/// * F = 1 + q·expm1(t): t is rounded three times (|Δt| ≤ 3.01u·|t|), which moves q·expm1 by
///   at most 1.01·q·e^t·|Δt|; `expm1`'s ulp and the product by q add 3u·q·|expm1(t)|, the sum
///   u·F. Against φ(o/s)/s these integrate to q·E_{N(1, s²)}|t| ≤ q(1/(2s²) + 1/s) (times
///   3.05u), 3u·q·(1 + 1) and u (the weight φ(o/s)·e^t/s is N(1, s²)'s density; a
///   cancellation in 1 + q·expm1(t) for q near 1 costs nothing in L1: its absolute error is
///   carried by that weight).
///
/// So the L1 error is at most (15 + 4q·(1/s² + 1/s))·u: the 15u, like the mixture's own few
/// u, lies inside [`QUADRATURE_ERROR`](super::discretise::QUADRATURE_ERROR), and the part that
/// grows as s falls, 4q(1/s² + 1/s)·u (under 1e-15 at the golden s ≥ 1), is charged on top.
/// The add direction's density is P's own, N(1, s²), unchanged. (Near the smallest s a grid
/// holds, about 0.034 at the default tail, φ(o/s) is subnormal or 0 at the top nodes while
/// e^t nears 1e308: mass of at most q·Φ(−√70.7) ≈ 2e-17·q is lost there and about 2e-15·q·s
/// rounded, inside the allowance.)
pub(super) fn subsampled_gaussian_direction(
    q: f64,
    s: f64,
    cfg: &PldConfig,
    optimistic: bool,
    direction: Direction,
) -> Discretised {
    let c = width(cfg.tail);
    let (two_s2, s2) = (2.0 * s * s, s * s);
    let (remove_charge, add_charge) = subsampled_gaussian_charges(q, s, cfg);
    match direction {
        Direction::Remove => {
            let seg = Segment {
                lo: -c * s,
                hi: 1.0 + c * s,
                at: &|o| {
                    let e = q * ((2.0 * o - 1.0) / two_s2).exp_m1();
                    (phi(o / s) * (1.0 + e) / s, e.ln_1p())
                },
                output_at: &|l| 0.5 + s2 * (l.exp_m1() / q).ln_1p(),
                step: s / 8.0,
            };
            let below = (1.0 - q) * ndtr(-c) + q * ndtr(-c - 1.0 / s);
            let above = (1.0 - q) * ndtr(-c - 1.0 / s) + q * ndtr(-c);
            gaussian_shaped(cfg, optimistic, &seg, (below, above), remove_charge)
        }
        Direction::Add => {
            let seg = Segment {
                lo: 1.0 - c * s,
                hi: 1.0 + c * s,
                at: &|o| {
                    let loss = -(q * ((1.0 - 2.0 * o) / two_s2).exp_m1()).ln_1p();
                    (phi((o - 1.0) / s) / s, loss)
                },
                output_at: &|l| 0.5 - s2 * ((-l).exp_m1() / q).ln_1p(),
                step: s / 8.0,
            };
            gaussian_shaped(cfg, optimistic, &seg, (ndtr(-c), ndtr(-c)), add_charge)
        }
    }
}

/// What each direction of [`subsampled_gaussian_direction`] charges on top of the quadrature
/// allowance and the running sums, (remove, add): in both the loss's inherited rounding
/// ([`loss_error`], with |t| = |2o − 1|/(2s²) over o within c standard deviations of 0 and 1),
/// and in the remove direction the density's rounding that grows as s falls,
/// 4q(1/s² + 1/s)·u. One function, so that the tests that isolate the running sums' charge
/// subtract exactly what the construction charged.
pub(super) fn subsampled_gaussian_charges(q: f64, s: f64, cfg: &PldConfig) -> (f64, f64) {
    let c = width(cfg.tail);
    let t_max = inflate((1.0 + 2.0 * c * s) / (2.0 * s * s), 4.0 * U);
    let rounding = loss_error(q, t_max, cfg.interval);
    let density = 4.0 * q * (1.0 / (s * s) + 1.0 / s) * U * (1.0 + 4.0 * U);
    (density + rounding, rounding)
}

/// The Poisson-subsampled Laplace mechanism (rate q, r = Δ/b, units of b). Remove:
/// P = (1−q)Lap(0) + qLap(r) vs Q = Lap(0), L = ln(1 + q(e^{|o|−|o−r|} − 1)). Add, reflected by
/// o ↦ r − o: P = Lap(r) vs Q = (1−q)Lap(r) + qLap(0), L = −ln(1 + q(e^{|r−o|−|o|} − 1)).
pub(super) fn subsampled_laplace(
    q: f64,
    r: f64,
    cfg: &PldConfig,
    optimistic: bool,
) -> Result<(LossPmf, LossPmf), GridTooLarge> {
    let low = (q * (-r).exp_m1()).ln_1p();
    let high = (q * r.exp_m1()).ln_1p();
    let remove = {
        let mut b = builder(cfg, low, high, optimistic)?;
        b.charge(loss_error(q, r, cfg.interval));
        b.atom(0.5 * (1.0 - q) + 0.5 * q * (-r).exp(), low);
        b.atom(0.5 * (1.0 - q) * (-r).exp() + 0.5 * q, high);
        b.segment(&Segment {
            lo: 0.0,
            hi: r,
            at: &|o| {
                let density = 0.5 * ((1.0 - q) * (-o).exp() + q * (o - r).exp());
                (density, (q * (2.0 * o - r).exp_m1()).ln_1p())
            },
            output_at: &|l| 0.5 * (r + (l.exp_m1() / q).ln_1p()),
            step: 0.125,
        });
        b.finish()
    };
    let add = {
        let mut b = builder(cfg, -high, -low, optimistic)?;
        b.charge(loss_error(q, r, cfg.interval));
        b.atom(0.5 * (-r).exp(), -high);
        b.atom(0.5, -low);
        b.segment(&Segment {
            lo: 0.0,
            hi: r,
            at: &|o| (0.5 * (o - r).exp(), -(q * (r - 2.0 * o).exp_m1()).ln_1p()),
            output_at: &|l| 0.5 * (r - ((-l).exp_m1() / q).ln_1p()),
            step: 0.125,
        });
        b.finish()
    };
    Ok((remove, add))
}

/// The discrete Gaussian, discretised ([`discrete_gaussian_progression`]).
#[cfg(test)]
pub(super) fn discrete_gaussian(sigma: f64, delta: i64, cfg: &PldConfig) -> Discretised {
    discrete_gaussian_progression(sigma, delta, cfg).discretise(cfg.interval)
}

/// The discrete Gaussian N_Z(0, σ²) on an integer query of sensitivity Δ (Canonne, Kamath &
/// Steinke 2020, arXiv 2004.00010): P = N_Z(Δ, σ²), Q = N_Z(0, σ²), L(o) = Δ(2o − Δ)/(2σ²).
/// The normaliser is the partial sum over the window, which is below the true one, so every
/// mass is overstated (a pointwise larger measure only raises δ); the mass beyond the window on
/// either side is at most σ√(2π)Φ(−K/σ)/Z_K by comparison with the integral.
///
/// Its law before discretising: the outputs o = Δ − K .. Δ + K have
/// losses (Δ(Δ − 2K) + 2Δ·j)/(2σ²), j = o − Δ + K; the mass beyond the window below is put on
/// the lowest output, the mass above at +∞. Relative error of each mass: its exponent
/// n²/(2σ²) ≤ A = K²/(2σ²) is off by at most 3u·A (two roundings and that of 2σ²), `exp` adds an
/// ulp (2u), the normaliser sums 2K + 1 such terms (γ_{2K+1} more) and the quotient rounds once:
/// at most 2(3u·A + 2u) + γ_{2K+1} + u, charged as γ_{2K+9} + 8u·(A + 2) (with the rounding of
/// adding the mass beyond the window to the lowest output).
pub(super) fn discrete_gaussian_progression(
    sigma: f64,
    delta: i64,
    cfg: &PldConfig,
) -> Progression {
    let c = width(cfg.tail);
    let k = (c * sigma).ceil() as i64 + 1;
    let two_s2 = 2.0 * sigma * sigma;
    let weights: Vec<f64> = (-k..=k)
        .map(|n| (-((n * n) as f64) / two_s2).exp())
        .collect();
    let z: f64 = weights.iter().sum();
    let mut probs: Vec<f64> = weights.iter().map(|w| w / z).collect();
    let outside = sigma * (2.0 * std::f64::consts::PI).sqrt() * ndtr(-(k as f64) / sigma) / z;
    probs[0] += outside;
    let d = i128::from(delta);
    let exponent = (k * k) as f64 / two_s2;
    let rho = gamma(weights.len() + 8) + 8.0 * f64::EPSILON / 2.0 * (exponent + 2.0);
    Progression::new(
        d * (d - 2 * i128::from(k)),
        2 * d,
        two_s2,
        probs,
        outside,
        rho,
    )
}

/// The discrete Laplace P(o) ∝ e^{−|o|/t} on an integer query of sensitivity Δ (Ghosh,
/// Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020): P centred at Δ, Q at 0,
/// L = −Δ/t for o ≤ 0, Δ/t for o ≥ Δ, (2o − Δ)/t between; all masses in closed form.
pub(super) fn discrete_laplace(t: f64, delta: i64, cfg: &PldConfig) -> Discretised {
    let d = delta as f64;
    let decay = (-1.0 / t).exp();
    let norm = (1.0 - decay) / (1.0 + decay);
    let mut b = Builder::new(cfg.interval, -d / t, d / t)?;
    b.atom((-d / t).exp() / (1.0 + decay), -d / t);
    b.atom(1.0 / (1.0 + decay), d / t);
    for o in 1..delta {
        b.atom(
            norm * (-((delta - o) as f64) / t).exp(),
            (2 * o - delta) as f64 / t,
        );
    }
    Ok(b.finish())
}

/// k-ary randomized response with parameter ε (Warner 1965; Kairouz, Oh & Viswanath 2016 for
/// its optimality): on a changed input the output keeps loss ε w.p. e^ε/(e^ε + k − 1), −ε w.p.
/// 1/(e^ε + k − 1), and 0 otherwise. With k = 2 it is the worst case of every ε-DP mechanism.
/// The masses are taken as 1/(1 + (k − 1)e^{−ε}) times 1, e^{−ε} and (k − 2)e^{−ε}: e^ε
/// overflows above ε ≈ 709.8, and e^ε/(e^ε + k − 1) was then ∞/∞.
pub(super) fn randomized_response(eps: f64, k: u32, cfg: &PldConfig) -> Discretised {
    let e = (-eps).exp();
    let top = 1.0 / (1.0 + (k - 1) as f64 * e);
    let mut b = Builder::new(cfg.interval, -eps, eps)?;
    b.atom(top, eps);
    b.atom(e * top, -eps);
    b.atom((k - 2) as f64 * e * top, 0.0);
    Ok(b.finish())
}

/// The worst case of every (ε, δ)-DP mechanism (Kairouz, Oh & Viswanath 2015, arXiv
/// 1311.0776, Thm. 2.1; Murtagh & Vadhan 2016): +∞ w.p. δ, ε w.p. (1−δ)e^ε/(1+e^ε), −ε w.p.
/// (1−δ)/(1+e^ε), taken as (1−δ)/(1+e^{−ε}) times 1 and e^{−ε} (as in [`randomized_response`]).
pub(super) fn approx(eps: f64, delta: f64, cfg: &PldConfig) -> Discretised {
    let e = (-eps).exp();
    let top = (1.0 - delta) / (1.0 + e);
    let mut b = Builder::new(cfg.interval, -eps, eps)?;
    b.atom(top, eps);
    b.atom(e * top, -eps);
    b.atom(delta, f64::INFINITY);
    Ok(b.finish())
}

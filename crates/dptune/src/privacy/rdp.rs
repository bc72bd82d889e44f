//! Rényi-DP curves: ε(α) for orders α > 1.
//!
//! A curve is a sum of parts (sequential composition adds RDP pointwise, THEORY.md §9). Parts
//! with a closed form can be evaluated at any continuous order; tabulated parts are known only
//! on their grid and are extended upward conservatively: Rényi divergence is non-decreasing in
//! the order, so ε(α) ≤ ε(α′) for the next tabulated α′ ≥ α, and ε(α) = ∞ above the last one.

use std::borrow::Cow;

use serde::Serialize;

use super::subsampled;
use crate::error::{check_positive, Error, Result};
use crate::numeric::{add_up, mul_up};

/// DEFAULT_RDP_ORDERS of dp_accounting 0.6.0: 1.1, 1.2, …, 10.9, then 11, 12, …, 63, then 128,
/// 256, 512, 1024 (156 orders). Results on this grid are comparable with dp_accounting's.
pub fn default_orders() -> Vec<f64> {
    let mut v: Vec<f64> = (11..110).map(|i| i as f64 / 10.0).collect();
    v.extend((11..64).map(|i| i as f64));
    v.extend([128.0, 256.0, 512.0, 1024.0]);
    v
}

/// One additive part of an RDP curve.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RdpPart {
    /// ε(α) = ρ·α: the Gaussian mechanism (ρ = 1/(2z²), Mironov 2017 Table 2) or any ρ-zCDP
    /// mechanism.
    Linear {
        /// The zCDP parameter ρ.
        rho: f64,
    },
    /// The tight RDP curve of an ε-DP mechanism (Bun & Steinke 2016, arXiv 1605.02065,
    /// Prop. 3.3; closed form as in Steinke's 2024 note on pure DP ⇒ RDP): the Rényi divergence
    /// of randomized response,
    /// ε(α) = (1/(α−1))·ln((sinh(αε) − sinh((α−1)ε))/sinh(ε)),
    /// evaluated as ε + [ln(1 + e^{−(2α−1)ε}) − ln(1 + e^{−ε})]/(α−1) (no overflow).
    /// It is ≤ min(ε, ε·tanh(ε/2)·α) pointwise.
    PureDp {
        /// The pure ε (> 0, finite).
        eps: f64,
    },
    /// One step of the Poisson-subsampled Gaussian mechanism under add/remove-one (Mironov,
    /// Talwar & Zhang 2019, arXiv 1908.10530; THEORY.md §13): sampling rate `q` ∈ (0, 1],
    /// noise multiplier `z` > 0. Evaluated by [`subsampled::subsampled_gaussian_rdp`].
    SubsampledGaussian {
        /// Poisson sampling rate q ∈ (0, 1].
        q: f64,
        /// Noise multiplier z = σ / L2-sensitivity.
        z: f64,
    },
    /// One step of the Poisson-subsampled discrete Gaussian on a lattice (DP-SGD on grid noise),
    /// add/remove-one, with effective multiplier `z`: exact at integer orders, chord of
    /// (α−1)ε between integer orders elsewhere ([`subsampled::discrete_rdp`]).
    SubsampledDiscreteGaussian {
        /// Poisson sampling rate q ∈ (0, 1].
        q: f64,
        /// Effective noise multiplier z = σ / L2-sensitivity (rounding included).
        z: f64,
    },
    /// ε(α) tabulated on increasing orders (values upper-bounded between orders, see module doc).
    Table {
        /// Increasing orders, all > 1.
        orders: Vec<f64>,
        /// ε at each order (may be +∞).
        values: Vec<f64>,
    },
}

impl RdpPart {
    fn eval(&self, alpha: f64) -> f64 {
        match self {
            RdpPart::Linear { rho } => mul_up(*rho, alpha),
            RdpPart::PureDp { eps } => pure_dp_rdp(*eps, alpha),
            RdpPart::SubsampledGaussian { q, z } => subsampled::rdp_unchecked(*q, *z, alpha),
            RdpPart::SubsampledDiscreteGaussian { q, z } => {
                subsampled::discrete_rdp_unchecked(*q, *z, alpha)
            }
            RdpPart::Table { orders, values } => {
                // The first tabulated order ≥ α bounds ε(α) from above.
                let i = orders.partition_point(|&o| o < alpha);
                values.get(i).copied().unwrap_or(f64::INFINITY)
            }
        }
    }

    fn is_closed_form(&self) -> bool {
        !matches!(self, RdpPart::Table { .. })
    }
}

/// Tight RDP of ε-DP at order α > 1 (see [`RdpPart::PureDp`]), rounded up by one ulp and
/// capped at ε (the max-divergence bound).
fn pure_dp_rdp(eps: f64, alpha: f64) -> f64 {
    let num = (-(2.0 * alpha - 1.0) * eps).exp().ln_1p() - (-eps).exp().ln_1p();
    let r = eps + num / (alpha - 1.0);
    crate::numeric::round_up(r.max(0.0)).min(eps)
}

/// `acc + c·v` rounded up (the sum of a curve's terms). The first term of a sum (acc = 0) and a
/// count of 1 are exact and skip the rounding work: `add_up(0, x) = x` and `mul_up(1, v) = v`
/// bit for bit, so this only saves time (a one-part curve, e.g. a table, costs nothing).
fn add_term(acc: f64, c: f64, v: f64) -> f64 {
    let t = if c == 1.0 { v } else { mul_up(c, v) };
    if acc == 0.0 {
        t
    } else {
        add_up(acc, t)
    }
}

/// An RDP curve: the sum of `count × part` over its terms.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RdpCurve {
    terms: Vec<(f64, RdpPart)>,
}

impl RdpCurve {
    /// The curve of a ρ-zCDP mechanism, ε(α) = ρα.
    pub fn linear(rho: f64) -> Result<Self> {
        check_positive("rho", rho)?;
        Ok(Self::from_part(RdpPart::Linear { rho }))
    }

    /// The tight RDP curve of an ε-DP mechanism ([`RdpPart::PureDp`]).
    pub fn pure_dp(eps: f64) -> Result<Self> {
        check_positive("epsilon", eps)?;
        Ok(Self::from_part(RdpPart::PureDp { eps }))
    }

    /// One step of the Poisson-subsampled Gaussian ([`RdpPart::SubsampledGaussian`]); use
    /// [`RdpCurve::times`] for several steps. `q` must lie in (0, 1], `z` be finite and > 0.
    pub fn subsampled_gaussian(q: f64, z: f64) -> Result<Self> {
        subsampled::check_q_z(q, z)?;
        Ok(Self::from_part(RdpPart::SubsampledGaussian { q, z }))
    }

    /// A tabulated curve. Orders must be finite, > 1 and strictly increasing; values must be
    /// non-negative (or +∞) and are taken as given.
    pub fn table(orders: Vec<f64>, values: Vec<f64>) -> Result<Self> {
        if orders.is_empty() || orders.len() != values.len() {
            return Err(Error::invalid(
                "orders",
                format!("{} orders, {} values", orders.len(), values.len()),
                "need as many values as orders, and at least one",
            ));
        }
        for (i, &o) in orders.iter().enumerate() {
            if !(o.is_finite() && o > 1.0) {
                return Err(Error::invalid(
                    "orders",
                    o,
                    "every order must be finite and > 1",
                ));
            }
            if i > 0 && o <= orders[i - 1] {
                return Err(Error::invalid(
                    "orders",
                    o,
                    "orders must be strictly increasing",
                ));
            }
        }
        if let Some(v) = values.iter().find(|v| v.is_nan() || **v < 0.0) {
            return Err(Error::invalid(
                "values",
                v,
                "RDP values must be >= 0 or +inf",
            ));
        }
        Ok(Self::from_part(RdpPart::Table { orders, values }))
    }

    /// A curve made of one part (for modules that construct parts themselves).
    pub fn from_part(part: RdpPart) -> Self {
        Self {
            terms: vec![(1.0, part)],
        }
    }

    /// The terms `(count, part)` whose sum is the curve (for the exact byte encoding).
    pub(crate) fn terms(&self) -> &[(f64, RdpPart)] {
        &self.terms
    }

    /// A curve from its terms (the inverse of [`RdpCurve::terms`]), each part checked as its
    /// constructor checks it and each count finite and > 0.
    pub(crate) fn from_terms(terms: Vec<(f64, RdpPart)>) -> Result<Self> {
        if terms.is_empty() {
            return Err(Error::invalid("terms", 0, "an RDP curve needs a term"));
        }
        for (count, part) in &terms {
            check_positive("count", *count)?;
            match part {
                RdpPart::Linear { rho } => Self::linear(*rho).map(drop)?,
                RdpPart::PureDp { eps } => Self::pure_dp(*eps).map(drop)?,
                RdpPart::SubsampledGaussian { q, z }
                | RdpPart::SubsampledDiscreteGaussian { q, z } => subsampled::check_q_z(*q, *z)?,
                RdpPart::Table { orders, values } => {
                    Self::table(orders.clone(), values.clone()).map(drop)?
                }
            }
        }
        Ok(Self { terms })
    }

    /// ε(α), or +∞ where the curve gives no finite bound. `alpha` must be > 1.
    pub fn eval(&self, alpha: f64) -> f64 {
        self.terms
            .iter()
            .fold(0.0, |acc, (c, p)| add_term(acc, *c, p.eval(alpha)))
    }

    /// [`RdpCurve::eval`] at each of `orders`: the same values bit for bit (same operations in
    /// the same order), but computed together: tables are walked with a cursor when the orders
    /// increase, and a subsampled Gaussian shares one quadrature among its fractional orders
    /// ([`subsampled::rdp_many`]).
    pub(crate) fn eval_many(&self, orders: &[f64]) -> Vec<f64> {
        let increasing = orders.is_sorted();
        let mut out = vec![0.0; orders.len()];
        for (c, p) in &self.terms {
            let mut add = |values: &mut dyn Iterator<Item = f64>| {
                for (acc, v) in out.iter_mut().zip(values) {
                    *acc = add_term(*acc, *c, v);
                }
            };
            match p {
                RdpPart::Table { orders: os, values } if increasing => {
                    let mut cursor = 0;
                    add(&mut orders.iter().map(|&a| {
                        while cursor < os.len() && os[cursor] < a {
                            cursor += 1;
                        }
                        values.get(cursor).copied().unwrap_or(f64::INFINITY)
                    }))
                }
                RdpPart::SubsampledGaussian { q, z } => {
                    add(&mut subsampled::rdp_many(*q, *z, orders).into_iter())
                }
                _ => add(&mut orders.iter().map(|&a| p.eval(a))),
            }
        }
        out
    }

    /// [`RdpCurve::eval_many`], borrowing the values instead when the curve is one table
    /// (count 1) tabulated on exactly `orders`: the same values, without a pass over them.
    pub(crate) fn values_on(&self, orders: &[f64]) -> Cow<'_, [f64]> {
        match self.terms.as_slice() {
            [(c, RdpPart::Table { orders: os, values })] if *c == 1.0 && os == orders => {
                Cow::Borrowed(values)
            }
            _ => Cow::Owned(self.eval_many(orders)),
        }
    }

    /// True when some order may be costly to evaluate (see [`RdpCurve::lower_bound_if_costly`]).
    pub(crate) fn may_be_costly(&self) -> bool {
        self.terms
            .iter()
            .any(|(_, p)| matches!(p, RdpPart::SubsampledGaussian { q, .. } if *q < 1.0))
    }

    /// For each of `orders`: `None` when [`RdpCurve::eval`] is cheap there; otherwise a cheap
    /// lower bound on ε(α), used by conversions to skip orders that cannot win. The only costly
    /// part is the subsampled Gaussian at fractional orders (quadrature), bounded below from its
    /// exact values at nearby integer orders ([`subsampled::FractionalLowerBound`], shared by all
    /// orders so each integer order is summed once).
    pub(crate) fn lower_bounds_if_costly(&self, orders: &[f64]) -> Vec<Option<f64>> {
        let costly = |p: &RdpPart, alpha: f64| matches!(p, RdpPart::SubsampledGaussian { q, .. } if *q < 1.0 && alpha.fract() != 0.0);
        let mut bounds: Vec<Option<subsampled::FractionalLowerBound>> = self
            .terms
            .iter()
            .map(|(_, p)| match p {
                RdpPart::SubsampledGaussian { q, z } if *q < 1.0 => {
                    Some(subsampled::FractionalLowerBound::new(*q, *z))
                }
                _ => None,
            })
            .collect();
        orders
            .iter()
            .map(|&alpha| {
                if !self.terms.iter().any(|(_, p)| costly(p, alpha)) {
                    return None;
                }
                Some(
                    self.terms
                        .iter()
                        .zip(&mut bounds)
                        .fold(0.0, |acc, ((c, p), bound)| {
                            let v = match bound {
                                Some(b) if costly(p, alpha) => b.at(alpha),
                                _ => p.eval(alpha),
                            };
                            acc + c * v
                        }),
                )
            })
            .collect()
    }

    /// True when every part can be evaluated at any continuous order.
    pub fn is_closed_form(&self) -> bool {
        self.terms.iter().all(|(_, p)| p.is_closed_form())
    }

    /// The orders at which tabulated parts are known (empty for closed-form curves). Conversions
    /// evaluate on these in addition to any grid they search.
    pub fn tabulated_orders(&self) -> Vec<f64> {
        let mut v: Vec<f64> = self.table_orders().flatten().copied().collect();
        v.sort_by(f64::total_cmp);
        v.dedup();
        v
    }

    /// The order lists of the tabulated parts, without copying them.
    pub(crate) fn table_orders(&self) -> impl Iterator<Item = &[f64]> {
        self.terms.iter().filter_map(|(_, p)| match p {
            RdpPart::Table { orders, .. } => Some(orders.as_slice()),
            _ => None,
        })
    }

    /// Sequential composition: the pointwise sum of two curves.
    pub fn compose(&self, other: &RdpCurve) -> RdpCurve {
        let mut terms = self.terms.clone();
        for t in &other.terms {
            match terms.iter_mut().find(|(_, p)| *p == t.1) {
                Some(existing) => existing.0 += t.0,
                None => terms.push(t.clone()),
            }
        }
        RdpCurve { terms }
    }

    /// `k`-fold sequential composition of this curve with itself.
    pub fn times(&self, k: f64) -> Result<RdpCurve> {
        check_positive("count", k)?;
        Ok(RdpCurve {
            terms: self.terms.iter().map(|(c, p)| (c * k, p.clone())).collect(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_grid_matches_dp_accounting() {
        let g = default_orders();
        assert_eq!(g.len(), 156);
        assert_eq!(g[0], 1.1);
        assert_eq!(g[98], 10.9);
        assert_eq!(g[99], 11.0);
        assert_eq!(*g.last().unwrap(), 1024.0);
    }

    #[test]
    fn tables_bound_from_above_between_orders() {
        let c = RdpCurve::table(vec![2.0, 4.0], vec![1.0, 3.0]).unwrap();
        assert_eq!(c.eval(1.5), 1.0);
        assert_eq!(c.eval(3.0), 3.0);
        assert_eq!(c.eval(5.0), f64::INFINITY);
        let g = RdpCurve::linear(0.5).unwrap();
        let both = c.compose(&g).compose(&g);
        assert_eq!(both.eval(4.0), 3.0 + 4.0);
        assert_eq!(g.times(3.0).unwrap().eval(2.0), 3.0);
        assert!(RdpCurve::table(vec![2.0, 1.5], vec![1.0, 1.0]).is_err());
        assert!(RdpCurve::table(vec![1.0], vec![1.0]).is_err());
        assert!(RdpCurve::linear(f64::NAN).is_err());
    }

    #[test]
    fn pure_dp_curve_is_randomized_response() {
        // Golden rdp2dp_pure_dp_eps1_tight_*: the curve at ε = 1.
        let c = RdpCurve::pure_dp(1.0).unwrap();
        for (a, v) in [
            (1.25, 0.5526063618581181),
            (1.5, 0.6273326470494996),
            (1.75, 0.6875040623657692),
        ] {
            assert!((c.eval(a) - v).abs() <= 1e-13 * v, "{a}: {}", c.eval(a));
        }
        // Direct sinh form at a moderate order.
        let (a, e) = (3.0f64, 0.7f64);
        let direct = (((a * e).sinh() - ((a - 1.0) * e).sinh()) / e.sinh()).ln() / (a - 1.0);
        assert!((RdpCurve::pure_dp(e).unwrap().eval(a) - direct).abs() < 1e-14);
        assert!(c.eval(1e6) <= 1.0);
        assert!(RdpCurve::pure_dp(0.0).is_err());
    }
}

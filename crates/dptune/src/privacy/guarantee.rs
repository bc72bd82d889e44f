//! [`Guarantee`]: what a mechanism promises and what a release spent.
//!
//! A guarantee is a neighbour relation plus one or more [`Bound`]s that all hold at once. Several
//! bounds are common: the exponential mechanism is both ε-DP and ε²/8-zCDP (THEORY.md §1.2), and
//! composing in each currency separately keeps the tightest answer for whoever reads it later.
//! Conversions go only toward weaker guarantees and round outward.

use std::fmt;
use std::num::NonZeroUsize;

use serde::Serialize;

use super::convert::{pure_to_zcdp, rdp_delta, rdp_epsilon, zcdp_delta, zcdp_epsilon};
pub use super::neighbours::Neighbours;
use super::pld::Pld;
use super::rdp::{default_orders, RdpCurve};
use crate::error::{check_delta, check_positive, Error, Result};
use crate::numeric::{add_up, mul_up};

/// One privacy bound in one currency.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// ε-DP.
    Pure {
        /// ε.
        eps: f64,
    },
    /// (ε, δ)-DP.
    Approx {
        /// ε.
        eps: f64,
        /// δ.
        delta: f64,
    },
    /// ρ-zCDP.
    Zcdp {
        /// ρ.
        rho: f64,
    },
    /// (α, ε(α))-RDP for every order α > 1 of the curve.
    Rdp(RdpCurve),
}

/// A neighbour relation and the bounds that hold for it (all at once).
///
/// A privacy loss distribution ([`Pld`]) is one more simultaneous bound. It is kept beside the
/// closed-form [`Bound`]s rather than as a variant of them, so that code matching on `Bound`
/// (front ends, conversions) is unaffected; every query here takes it into account.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Guarantee {
    neighbours: Neighbours,
    bounds: Vec<Bound>,
    #[serde(skip)]
    pld: Option<Pld>,
}

/// Which accounting route gave an ε (reported beside it, e.g. by [`Guarantee::epsilon_route`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Route {
    /// A pure ε bound.
    Pure,
    /// A stated (ε, δ) bound.
    Approx,
    /// ρ-zCDP converted at δ.
    Zcdp,
    /// An RDP curve converted at δ.
    Rdp,
    /// A privacy loss distribution.
    Pld,
}

impl fmt::Display for Route {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Route::Pure => "pure",
            Route::Approx => "approx",
            Route::Zcdp => "zcdp",
            Route::Rdp => "rdp",
            Route::Pld => "pld",
        })
    }
}

impl Guarantee {
    /// ε-DP.
    pub fn pure(eps: f64, neighbours: Neighbours) -> Result<Self> {
        check_positive("epsilon", eps)?;
        Ok(Self::single(Bound::Pure { eps }, neighbours))
    }

    /// (ε, δ)-DP. δ = 0 is stored as pure ε-DP.
    pub fn approx(eps: f64, delta: f64, neighbours: Neighbours) -> Result<Self> {
        check_positive("epsilon", eps)?;
        check_delta("delta", delta)?;
        if delta == 0.0 {
            return Self::pure(eps, neighbours);
        }
        Ok(Self::single(Bound::Approx { eps, delta }, neighbours))
    }

    /// ρ-zCDP.
    pub fn zcdp(rho: f64, neighbours: Neighbours) -> Result<Self> {
        check_positive("rho", rho)?;
        Ok(Self::single(Bound::Zcdp { rho }, neighbours))
    }

    /// RDP with the given curve.
    pub fn rdp(curve: RdpCurve, neighbours: Neighbours) -> Self {
        Self::single(Bound::Rdp(curve), neighbours)
    }

    /// A guarantee from its parts as stored (for the exact byte encoding, which checks each
    /// bound's values before calling this).
    pub(crate) fn from_parts(neighbours: Neighbours, bounds: Vec<Bound>, pld: Option<Pld>) -> Self {
        Self {
            neighbours,
            bounds,
            pld,
        }
    }

    fn single(bound: Bound, neighbours: Neighbours) -> Self {
        Self {
            neighbours,
            bounds: vec![bound],
            pld: None,
        }
    }

    /// A guarantee stated by a privacy loss distribution alone.
    pub fn from_pld(pld: Pld) -> Self {
        Self {
            neighbours: pld.neighbours(),
            bounds: Vec::new(),
            pld: Some(pld),
        }
    }

    /// Adds a privacy loss distribution that holds simultaneously (same relation).
    pub fn with_pld(self, pld: Pld) -> Result<Self> {
        self.and(Self::from_pld(pld))
    }

    /// The privacy loss distribution, if the guarantee has one.
    pub fn pld(&self) -> Option<&Pld> {
        self.pld.as_ref()
    }

    /// Adds a further bound that holds simultaneously (e.g. the zCDP bound of a pure mechanism).
    /// Of two PLDs the first is kept.
    pub fn and(mut self, other: Guarantee) -> Result<Self> {
        self.same_relation(&other)?;
        self.bounds.extend(other.bounds);
        if self.pld.is_none() {
            self.pld = other.pld;
        }
        Ok(self)
    }

    /// This guarantee's PLD, or, when it has none but states a pure or (ε, δ) bound, the PLD of
    /// that bound's worst-case pair on `like`'s grid (so that it composes with `like`).
    fn pld_like(&self, like: &Pld) -> Result<Option<Pld>> {
        if let Some(p) = &self.pld {
            return Ok(Some(p.clone()));
        }
        match self.approx_pair() {
            Some((eps, 0.0)) => Pld::pure(eps, self.neighbours, like.config()).map(Some),
            Some((eps, delta)) => Pld::approx(eps, delta, self.neighbours, like.config()).map(Some),
            None => Ok(None),
        }
    }

    /// The neighbour relation.
    pub fn neighbours(&self) -> Neighbours {
        self.neighbours
    }

    /// The bounds, each of which holds.
    pub fn bounds(&self) -> &[Bound] {
        &self.bounds
    }

    fn same_relation(&self, other: &Guarantee) -> Result<()> {
        if self.neighbours == other.neighbours {
            Ok(())
        } else {
            Err(Error::NeighboursMismatch {
                left: self.neighbours.to_string(),
                right: other.neighbours.to_string(),
            })
        }
    }

    /// The pure ε, if the guarantee has one.
    pub fn pure_eps(&self) -> Option<f64> {
        self.bounds
            .iter()
            .filter_map(|b| match b {
                Bound::Pure { eps } => Some(*eps),
                _ => None,
            })
            .reduce(f64::min)
    }

    /// (ε, δ) of a guarantee that is one pure or (ε, δ) bound and nothing else (pure read as
    /// δ = 0): what [`Guarantee::approx`] builds. `None` for any other guarantee. For
    /// allowances that a mechanism calibrates in (ε, δ) (it must not guess from a richer one).
    pub fn as_approx(&self) -> Option<(f64, f64)> {
        match (self.bounds.as_slice(), &self.pld) {
            ([Bound::Pure { eps }], None) => Some((*eps, 0.0)),
            ([Bound::Approx { eps, delta }], None) => Some((*eps, *delta)),
            _ => None,
        }
    }

    /// The smallest ρ this guarantee implies, from a zCDP bound or a pure one (ε²/2).
    pub fn zcdp_rho(&self) -> Option<f64> {
        self.bounds
            .iter()
            .filter_map(|b| match b {
                Bound::Zcdp { rho } => Some(*rho),
                Bound::Pure { eps } => pure_to_zcdp(*eps).ok(),
                _ => None,
            })
            .reduce(f64::min)
    }

    /// An RDP curve implied by this guarantee: an explicit curve if there is one, else the zCDP
    /// line, except that a pure ε bound gives the tight curve of ε-DP ([`RdpPart::PureDp`],
    /// Bun & Steinke 2016 Prop. 3.3) whenever that curve is pointwise below the line, i.e. when
    /// ρ ≥ ε·tanh(ε/2) (the curve's supremum of ε(α)/α, reached as α → 1).
    ///
    /// [`RdpPart::PureDp`]: super::rdp::RdpPart::PureDp
    pub fn rdp_curve(&self) -> Option<RdpCurve> {
        let explicit = self.bounds.iter().find_map(|b| match b {
            Bound::Rdp(c) => Some(c.clone()),
            _ => None,
        });
        let pure = self
            .pure_eps()
            .filter(|&eps| {
                self.zcdp_rho()
                    .is_some_and(|rho| rho >= eps * (eps / 2.0).tanh())
            })
            .and_then(|eps| RdpCurve::pure_dp(eps).ok());
        explicit
            .or(pure)
            .or_else(|| self.zcdp_rho().and_then(|rho| RdpCurve::linear(rho).ok()))
    }

    /// The smallest ε such that this guarantee implies (ε, δ)-DP, over all its bounds.
    pub fn epsilon(&self, delta: f64) -> Result<f64> {
        self.epsilon_route(delta).map(|(e, _)| e)
    }

    /// The smallest ε such that this guarantee implies (ε, δ)-DP, over all its bounds and its
    /// PLD, with the route that gave it (the first listed wins a tie: pure, approx, zCDP, RDP,
    /// PLD).
    pub fn epsilon_route(&self, delta: f64) -> Result<(f64, Route)> {
        check_delta("delta", delta)?;
        let mut best = (f64::INFINITY, Route::Pure);
        let mut consider = |e: f64, r: Route| {
            if e < best.0 {
                best = (e, r);
            }
        };
        for b in &self.bounds {
            match b {
                Bound::Pure { eps } => consider(*eps, Route::Pure),
                Bound::Approx { eps, delta: d } if *d <= delta => consider(*eps, Route::Approx),
                _ => {}
            }
        }
        if delta > 0.0 {
            for b in &self.bounds {
                match b {
                    Bound::Zcdp { rho } => consider(zcdp_epsilon(*rho, delta)?, Route::Zcdp),
                    Bound::Rdp(c) => consider(rdp_epsilon(c, delta)?.eps, Route::Rdp),
                    _ => {}
                }
            }
            if let Some(p) = &self.pld {
                match p.epsilon(delta) {
                    Ok(e) => consider(e, Route::Pld),
                    Err(Error::Conversion { .. }) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        if best.0.is_finite() {
            Ok(best)
        } else {
            Err(Error::Conversion {
                from: self.to_string(),
                to: format!("(eps, delta = {delta})-DP"),
                reason: "no bound of this guarantee gives a finite epsilon at this delta".into(),
            })
        }
    }

    /// The smallest δ such that this guarantee implies (ε, δ)-DP, over all its bounds.
    pub fn delta(&self, eps: f64) -> Result<f64> {
        check_positive("epsilon", eps)?;
        let mut best: f64 = 1.0;
        for b in &self.bounds {
            let d = match b {
                Bound::Pure { eps: e } if *e <= eps => 0.0,
                Bound::Approx { eps: e, delta } if *e <= eps => *delta,
                Bound::Zcdp { rho } => zcdp_delta(*rho, eps)?,
                Bound::Rdp(c) => rdp_delta(c, eps)?,
                _ => continue,
            };
            best = best.min(d);
        }
        if let Some(p) = &self.pld {
            best = best.min(p.delta(eps)?);
        }
        Ok(best)
    }

    /// Sequential composition (THEORY.md §9): sums in every currency both sides can express
    /// without choosing a δ. Composing an (ε, δ) bound with a zCDP/RDP-only bound needs a
    /// conversion at a chosen δ first, and is refused.
    pub fn compose(&self, other: &Guarantee) -> Result<Guarantee> {
        self.same_relation(other)?;
        let has_explicit = |g: &Guarantee, f: fn(&Bound) -> bool| g.bounds.iter().any(f);
        let mut bounds = Vec::new();
        if let (Some(a), Some(b)) = (self.pure_eps(), other.pure_eps()) {
            bounds.push(Bound::Pure { eps: add_up(a, b) });
        }
        let any_approx = |b: &Bound| matches!(b, Bound::Approx { .. });
        if has_explicit(self, any_approx) || has_explicit(other, any_approx) {
            if let (Some((e1, d1)), Some((e2, d2))) = (self.approx_pair(), other.approx_pair()) {
                bounds.push(Bound::Approx {
                    eps: add_up(e1, e2),
                    delta: add_up(d1, d2),
                });
            }
        }
        if let (Some(a), Some(b)) = (self.zcdp_rho(), other.zcdp_rho()) {
            bounds.push(Bound::Zcdp { rho: add_up(a, b) });
        }
        let any_rdp = |b: &Bound| matches!(b, Bound::Rdp(_));
        if has_explicit(self, any_rdp) || has_explicit(other, any_rdp) {
            if let (Some(a), Some(b)) = (self.rdp_curve(), other.rdp_curve()) {
                bounds.push(Bound::Rdp(a.compose(&b)));
            }
        }
        // PLDs compose when both sides have one (a pure or (ε, δ) side has its worst case).
        let pld = match (&self.pld, &other.pld) {
            (None, None) => None,
            (Some(like), _) | (_, Some(like)) => {
                match (self.pld_like(like)?, other.pld_like(like)?) {
                    (Some(a), Some(b)) => Some(a.compose(&b)?),
                    _ => None,
                }
            }
        };
        if bounds.is_empty() && pld.is_none() {
            return Err(Error::Conversion {
                from: format!("{self} and {other}"),
                to: "a common currency".into(),
                reason: "convert the zCDP/RDP side to (eps, delta) at a chosen delta first".into(),
            });
        }
        Ok(Guarantee {
            neighbours: self.neighbours,
            bounds,
            pld,
        })
    }

    /// The tightest (ε, δ) pair stated directly (pure bounds count as δ = 0).
    fn approx_pair(&self) -> Option<(f64, f64)> {
        self.bounds
            .iter()
            .filter_map(|b| match b {
                Bound::Pure { eps } => Some((*eps, 0.0)),
                Bound::Approx { eps, delta } => Some((*eps, *delta)),
                _ => None,
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
    }

    /// Parallel composition over disjoint parts of one dataset (THEORY.md §9): the maximum in
    /// every currency all parts share. RDP curves are maximised pointwise on the default grid.
    pub fn parallel(parts: &[Guarantee]) -> Result<Guarantee> {
        let first = parts
            .first()
            .ok_or_else(|| Error::invalid("parts", 0, "parallel composition needs a part"))?;
        for p in parts {
            first.same_relation(p)?;
        }
        let max_all = |f: &dyn Fn(&Guarantee) -> Option<f64>| -> Option<f64> {
            parts
                .iter()
                .map(f)
                .collect::<Option<Vec<f64>>>()
                .map(|v| v.into_iter().fold(0.0, f64::max))
        };
        let mut bounds = Vec::new();
        if let Some(eps) = max_all(&|g| g.pure_eps()) {
            bounds.push(Bound::Pure { eps });
        }
        if let (Some(eps), Some(delta)) = (
            max_all(&|g| g.approx_pair().map(|p| p.0)),
            max_all(&|g| g.approx_pair().map(|p| p.1)),
        ) {
            if delta > 0.0 {
                bounds.push(Bound::Approx { eps, delta });
            }
        }
        if let Some(rho) = max_all(&|g| g.zcdp_rho()) {
            bounds.push(Bound::Zcdp { rho });
        }
        let curves: Option<Vec<RdpCurve>> = parts.iter().map(|g| g.rdp_curve()).collect();
        if let Some(curves) = curves {
            let orders = default_orders();
            let values = orders
                .iter()
                .map(|&a| curves.iter().map(|c| c.eval(a)).fold(0.0, f64::max))
                .collect();
            bounds.push(Bound::Rdp(RdpCurve::table(orders, values)?));
        }
        if bounds.is_empty() {
            return Err(Error::Conversion {
                from: "parts in different currencies".into(),
                to: "a common currency".into(),
                reason: "convert every part to (eps, delta) at a chosen delta first".into(),
            });
        }
        Ok(Guarantee {
            neighbours: first.neighbours,
            bounds,
            pld: None,
        })
    }

    /// The share of this allowance that each of `parts` sequentially composed releases may
    /// spend: the native additive parameters divided by `parts` (ε and δ; ε; ρ; an RDP curve
    /// pointwise on the default orders), each rounded down so that `parts` shares, composed with
    /// outward rounding, never exceed the whole. The allowance must be a single bound (as a
    /// [`super::Ledger`] allowance is); anything else is an invalid `allowance`.
    pub fn share(&self, parts: NonZeroUsize) -> Result<Guarantee> {
        let m = parts.get() as f64;
        let down = |x: f64| {
            let s = x / m;
            if mul_up(s, m) > x {
                s.next_down()
            } else {
                s
            }
        };
        let n = self.neighbours;
        match self.bounds() {
            [Bound::Pure { eps }] => Guarantee::pure(down(*eps), n),
            [Bound::Approx { eps, delta }] => Guarantee::approx(down(*eps), down(*delta), n),
            [Bound::Zcdp { rho }] => Guarantee::zcdp(down(*rho), n),
            [Bound::Rdp(curve)] => {
                let orders = default_orders();
                let values = orders.iter().map(|&a| down(curve.eval(a))).collect();
                Ok(Guarantee::rdp(RdpCurve::table(orders, values)?, n))
            }
            _ => Err(Error::invalid(
                "allowance",
                self,
                "an allowance is a single bound",
            )),
        }
    }

    /// Converts an add/remove guarantee to replace-one by group privacy with groups of 2
    /// (a replacement is one removal and one addition): ε → 2ε, (ε, δ) → (2ε, (1 + e^ε)δ),
    /// ρ → 4ρ (Bun & Steinke 2016, Prop. 1.9: group size k multiplies ρ by k²). RDP curves have
    /// no simple group-privacy form and are dropped; a guarantee with only RDP bounds must be
    /// converted to (ε, δ) first. Replace-one never implies add/remove.
    pub fn to_replace(&self) -> Result<Guarantee> {
        match self.neighbours {
            Neighbours::Replace => Ok(self.clone()),
            Neighbours::AddRemove => {
                let bounds: Vec<Bound> = self
                    .bounds
                    .iter()
                    .filter_map(|b| match b {
                        Bound::Pure { eps } => Some(Bound::Pure { eps: 2.0 * eps }),
                        Bound::Approx { eps, delta } => Some(Bound::Approx {
                            eps: 2.0 * eps,
                            delta: mul_up(add_up(1.0, eps.exp().next_up()), *delta),
                        }),
                        Bound::Zcdp { rho } => Some(Bound::Zcdp { rho: 4.0 * rho }),
                        Bound::Rdp(_) => None,
                    })
                    .collect();
                if bounds.is_empty() {
                    return Err(Error::Conversion {
                        from: self.to_string(),
                        to: "replace-one".into(),
                        reason: "convert the RDP curve to (eps, delta) first".into(),
                    });
                }
                Ok(Guarantee {
                    neighbours: Neighbours::Replace,
                    bounds,
                    pld: None,
                })
            }
        }
    }
}

/// A number for people: the one rule for numbers in text (this Display, the CLI's reports and
/// messages). Six decimals between 1e-3 and 1e6, else four in scientific notation; trailing
/// zeros dropped (`1`, `0.5`, `38.673189`, `1e-5`, `1.2346e300`): never hundreds of digits, and
/// a tiny ε is not shown as 0.
pub fn fmt_number(x: f64) -> String {
    if x == 0.0 || (1e-3..1e6).contains(&x.abs()) {
        let s = format!("{x:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        let s = format!("{x:.4e}");
        match s.split_once('e') {
            Some((mantissa, exp)) if mantissa.contains('.') => format!(
                "{}e{exp}",
                mantissa.trim_end_matches('0').trim_end_matches('.')
            ),
            _ => s,
        }
    }
}

impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = fmt_number;
        let parts: Vec<String> = self
            .bounds
            .iter()
            .map(|b| match b {
                Bound::Pure { eps } => format!("eps = {} (pure)", n(*eps)),
                Bound::Approx { eps, delta } => {
                    format!("(eps, delta) = ({}, {})", n(*eps), n(*delta))
                }
                Bound::Zcdp { rho } => format!("rho = {} (zCDP)", n(*rho)),
                Bound::Rdp(_) => "an RDP curve".to_string(),
            })
            .chain(
                self.pld
                    .as_ref()
                    .map(|_| "a privacy loss distribution".to_string()),
            )
            .collect();
        write!(f, "{} [{}]", parts.join(" and "), self.neighbours)
    }
}

/// A released value together with the guarantee it spent. Every mechanism returns one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Release<T> {
    /// The released value.
    pub value: T,
    /// What releasing it cost.
    pub spent: Guarantee,
}

#[cfg(test)]
mod tests {
    use super::*;
    use Neighbours::*;

    /// Issue 17: `{:.6}` printed ε = 1e300 with 300 digits and ε = 1e-300 as 0.
    #[test]
    fn display_keeps_numbers_short_and_nonzero() {
        let g = Guarantee::approx(1e300, 1e-5, AddRemove).unwrap();
        assert_eq!(g.to_string(), "(eps, delta) = (1e300, 1e-5) [add_remove]");
        let g = Guarantee::pure(1e-300, AddRemove).unwrap();
        assert_eq!(g.to_string(), "eps = 1e-300 (pure) [add_remove]");
        let g = Guarantee::zcdp(0.125, Replace).unwrap();
        assert_eq!(g.to_string(), "rho = 0.125 (zCDP) [replace_one]");
        for (x, want) in [
            (0.0, "0"),
            (1.0, "1"),
            (-1.0, "-1"),
            (38.673_189_4, "38.673189"),
        ] {
            assert_eq!(fmt_number(x), want);
        }
        assert_eq!(fmt_number(1.23456e-5), "1.2346e-5");
        assert_eq!(fmt_number(f64::INFINITY), "inf");
    }

    #[test]
    fn composition_sums_in_every_shared_currency() {
        let em = Guarantee::pure(0.5, AddRemove)
            .unwrap()
            .and(Guarantee::zcdp(0.5 * 0.5 / 8.0, AddRemove).unwrap())
            .unwrap();
        let mut total = em.clone();
        for _ in 1..20 {
            total = total.compose(&em).unwrap();
        }
        // THEORY.md §1.4: basic composition 10; BR-zCDP ρ = 0.625, ε(1e-5) = 5.378.
        assert!((total.pure_eps().unwrap() - 10.0).abs() < 1e-12);
        assert!((total.zcdp_rho().unwrap() - 0.625).abs() < 1e-12);
        let e = total.epsilon(1e-5).unwrap();
        assert!((5.377..5.380).contains(&e), "{e}");
        assert_eq!(total.epsilon(0.0).unwrap(), total.pure_eps().unwrap());
    }

    #[test]
    fn mixing_relations_or_currencies_is_refused() {
        let a = Guarantee::pure(1.0, AddRemove).unwrap();
        let r = Guarantee::pure(1.0, Replace).unwrap();
        assert!(matches!(
            a.compose(&r),
            Err(Error::NeighboursMismatch { .. })
        ));
        let ap = Guarantee::approx(1.0, 1e-6, AddRemove).unwrap();
        let z = Guarantee::zcdp(0.1, AddRemove).unwrap();
        assert!(matches!(ap.compose(&z), Err(Error::Conversion { .. })));
        let c = ap.compose(&a).unwrap();
        assert_eq!(c.epsilon(1e-6).unwrap(), 2.0);
        assert!(c.epsilon(1e-7).is_err());
        assert_eq!(Guarantee::approx(1.0, 0.0, AddRemove).unwrap(), a);
    }

    #[test]
    fn group_privacy_and_parallel() {
        let a = Guarantee::approx(1.0, 1e-6, AddRemove).unwrap();
        let r = a.to_replace().unwrap();
        assert_eq!(r.neighbours(), Replace);
        assert!((r.epsilon(1e-5).unwrap() - 2.0).abs() < 1e-12);
        assert!(r.epsilon(3e-6).is_err()); // (1 + e)·1e-6 > 3e-6
        assert!(Guarantee::pure(1.0, Replace).unwrap().to_replace().is_ok());
        let p = Guarantee::parallel(&[
            Guarantee::pure(1.0, AddRemove).unwrap(),
            Guarantee::pure(2.0, AddRemove).unwrap(),
        ])
        .unwrap();
        assert_eq!(p.pure_eps(), Some(2.0));
        assert!(Guarantee::parallel(&[]).is_err());
    }
}

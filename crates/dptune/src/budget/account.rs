//! What a budget has spent: its charges replayed through a [`Ledger`].
//!
//! The total is whatever the library's composition gives (zCDP and RDP bounds add up and are
//! converted once, at the budget's δ; charges stated only in (ε, δ) are added by basic
//! composition; see [`Ledger`]), never a sum of per-charge epsilons. A better accountant in
//! the Ledger makes every store's totals tighter without a change here.

use serde::Serialize;

use super::codec;
use crate::error::{Error, Result};
use crate::privacy::{Guarantee, Ledger, Neighbours};

/// A budget's allowance as a single-bound guarantee: (ε, δ)-DP, or ε-DP when δ = 0.
pub(super) fn allowance(epsilon: f64, delta: f64, neighbours: Neighbours) -> Result<Guarantee> {
    Guarantee::approx(epsilon, delta, neighbours)
}

/// A ledger holding `charges` against `allowance`. A stored charge that no longer fits (the
/// library's accounting became more careful since it was committed) means the budget is used
/// up: that is reported as [`Error::BudgetExceeded`], which refuses any further charge.
pub(super) fn replay(allowance: &Guarantee, charges: &[Guarantee]) -> Result<Ledger> {
    let mut ledger = Ledger::new(allowance.clone())?;
    for c in charges {
        ledger.charge(c)?;
    }
    Ok(ledger)
}

/// A ledger without a practical limit, for reporting totals even past the allowance.
fn unbounded(delta: f64, neighbours: Neighbours) -> Result<Ledger> {
    Ledger::new(Guarantee::approx(f64::MAX, delta, neighbours)?)
}

/// The privacy a budget has spent, at its δ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Spent {
    /// ε of the composition of all charges, at `delta` (0 when nothing was charged).
    pub epsilon: f64,
    /// The budget's δ.
    pub delta: f64,
    /// Number of charges.
    pub charges: usize,
    /// Which bound of the composition gives `epsilon`: `pure`, `approx`, `zcdp`, `rdp`, or
    /// `none` before the first charge (the serde names of [`crate::privacy::Bound`]).
    pub route: String,
    /// How `epsilon` was obtained, for people.
    pub method: String,
}

/// The [`Spent`] of `charges` at `delta`.
pub(super) fn spent(delta: f64, neighbours: Neighbours, charges: &[Guarantee]) -> Result<Spent> {
    let mut ledger = unbounded(delta, neighbours)?;
    for c in charges {
        ledger.charge(c)?;
    }
    let epsilon = ledger.spent_epsilon(delta)?;
    let (route, mut method) = match ledger.spent() {
        None if ledger.spent_approx().is_none() => ("none".to_string(), "nothing charged".into()),
        None => (
            "approx".to_string(),
            "(eps, delta) charges added by basic composition".into(),
        ),
        Some(g) => {
            let rest = delta - ledger.spent_approx().map_or(0.0, |(_, d)| d);
            route_of(g, rest)?
        }
    };
    if let (Some(_), Some((e, d))) = (ledger.spent(), ledger.spent_approx()) {
        method.push_str(&format!(
            ", plus charges stated only in (eps, delta) = ({e}, {d:e}) by basic composition"
        ));
    }
    Ok(Spent {
        epsilon,
        delta,
        charges: charges.len(),
        route,
        method,
    })
}

/// The bound of `g` that gives its ε at `delta`, and a sentence saying so.
fn route_of(g: &Guarantee, delta: f64) -> Result<(String, String)> {
    let parts = codec::split(g).map_err(|e| Error::invalid("spent", g, e.0))?;
    let best = parts
        .iter()
        .filter_map(|(kind, one)| one.epsilon(delta).ok().map(|e| (kind, e)))
        .min_by(|a, b| a.1.total_cmp(&b.1));
    let Some((kind, _)) = best else {
        return Ok(("none".into(), "no finite epsilon".into()));
    };
    let method = match kind.as_str() {
        "pure" => "pure epsilon, charges added (basic composition)".to_string(),
        "approx" => "(eps, delta) charges added (basic composition)".to_string(),
        "zcdp" => format!(
            "zCDP: the charges' rho added (rho = {}), converted to (eps, delta) once",
            g.zcdp_rho().unwrap_or(f64::NAN)
        ),
        "rdp" => "RDP: the charges' curves added order by order, converted to (eps, delta) once \
                  at the best order"
            .to_string(),
        other => format!("the ledger's `{other}` bound"),
    };
    Ok((kind.clone(), method))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::gaussian::gaussian_rho;
    use Neighbours::AddRemove;

    #[test]
    fn ten_gaussians_compose_far_below_the_sum() {
        // Ten Gaussian mechanisms, each with sigma = 5 times the L2 sensitivity: rho = 1/50
        // each (Bun & Steinke 2016, arXiv 1605.02065, Prop. 1.6), 0.2 in all. At delta = 1e-5
        // one alone is eps = 0.794315 (the optimal-order zCDP conversion, convert.rs), so the
        // plain sum of the ten epsilons is 7.943; the Ledger adds the rhos and converts once:
        // eps = 2.813632 (both checked against a direct minimisation over alpha in Python:
        // 0.7943147742750658 and 2.813632189398702).
        let rho = gaussian_rho(5.0, 1.0).unwrap();
        assert!((rho - 0.02).abs() < 1e-16, "{rho}");
        let one = Guarantee::zcdp(rho, AddRemove).unwrap();
        let s = spent(1e-5, AddRemove, &vec![one.clone(); 10]).unwrap();
        let each = one.epsilon(1e-5).unwrap();
        assert_eq!(s.route, "zcdp");
        assert!((each - 0.794_314_774_275).abs() < 1e-9, "{each}");
        assert!(
            (s.epsilon - 2.813_632_189_399).abs() < 1e-9,
            "{}",
            s.epsilon
        );
        assert!(s.epsilon < 0.36 * (10.0 * each));
        // The wrong variant the check rejects: a plain sum, as a naive store would report.
        let naive: f64 = (0..10).map(|_| each).sum();
        assert!((naive - s.epsilon).abs() > 5.0);
    }

    #[test]
    fn approx_only_charges_add_up_and_are_named() {
        let c = Guarantee::approx(0.25, 1e-7, AddRemove).unwrap();
        let s = spent(1e-5, AddRemove, &[c.clone(), c]).unwrap();
        assert_eq!((s.epsilon, s.route.as_str()), (0.5, "approx"));
        let none = spent(1e-5, AddRemove, &[]).unwrap();
        assert_eq!((none.epsilon, none.route.as_str()), (0.0, "none"));
    }
}

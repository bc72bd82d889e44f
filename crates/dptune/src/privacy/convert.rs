//! Conversions between privacy currencies. They go one way only, toward weaker guarantees, and
//! round outward: a returned ε or δ is never smaller than the exact value of the formula.
//!
//! * RDP → (ε, δ): Canonne, Kamath & Steinke 2020 (arXiv 2004.00010) Prop. 12 as implemented by
//!   dp_accounting's `compute_epsilon` / `compute_delta` (THEORY.md §12.3).
//! * zCDP → (ε, δ): the same bound applied to the curve ρα (THEORY.md §12.2).
//! * pure → zCDP: ε-DP implies ε²/2-zCDP (Bun & Steinke 2016, arXiv 1605.02065, Prop. 1.4).

use crate::error::{check_delta, check_non_negative, check_positive, Error, Result};

use super::rdp::{default_orders, RdpCurve};

/// An ε together with the Rényi order that achieved it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpsAtOrder {
    /// The (ε, δ)-DP epsilon.
    pub eps: f64,
    /// The order α at which the conversion was tightest.
    pub order: f64,
}

/// Rounds a non-negative privacy parameter up by one unit in the last place, so that float
/// rounding in the formula that produced it cannot make it smaller than the exact value.
pub fn round_up(x: f64) -> f64 {
    if x.is_finite() && x > 0.0 {
        x.next_up()
    } else {
        x
    }
}

/// `a + b` rounded up: the float sum, moved up one ulp only when it fell below the exact sum
/// (detected exactly with Knuth's TwoSum).
pub fn add_up(a: f64, b: f64) -> f64 {
    let s = a + b;
    if !s.is_finite() {
        return s;
    }
    let bb = s - a;
    let err = (a - (s - bb)) + (b - bb);
    if err > 0.0 {
        s.next_up()
    } else {
        s
    }
}

/// `a · b` rounded up: the float product, moved up one ulp only when it fell below the exact
/// product (the residual is computed exactly with a fused multiply-add).
pub fn mul_up(a: f64, b: f64) -> f64 {
    let p = a * b;
    if !p.is_finite() {
        return p;
    }
    if a.mul_add(b, -p) > 0.0 {
        p.next_up()
    } else {
        p
    }
}

/// CKS20 Prop. 12 at a single order: ε = r + ln(1 − 1/α) − (ln δ + ln α)/(α − 1), with
/// dp_accounting's guards (THEORY.md §12.3): r < 0 ⇒ 0; δ ≥ √(1 − e^{−r}) ⇒ 0; α ≤ 1.01 ⇒ ∞.
pub fn cks_epsilon_at(alpha: f64, r: f64, delta: f64) -> f64 {
    if r.is_nan() || r == f64::INFINITY {
        return f64::INFINITY;
    }
    if r < 0.0 || delta * delta + (-r).exp_m1() > 0.0 {
        return 0.0;
    }
    if alpha <= 1.01 {
        return f64::INFINITY;
    }
    r + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / (alpha - 1.0)
}

/// log δ at a single order (dp_accounting `compute_delta`): the smaller of the
/// Bretagnolle–Huber term ½·ln(1 − e^{−r}) and (α−1)(r − ε + ln(1 − 1/α)) − ln α (α > 1.01).
pub fn cks_log_delta_at(alpha: f64, r: f64, eps: f64) -> f64 {
    if r.is_nan() || r == f64::INFINITY {
        return 0.0;
    }
    if r <= 0.0 {
        return f64::NEG_INFINITY;
    }
    let bh = 0.5 * (-(-r).exp()).ln_1p();
    if alpha > 1.01 {
        let cks = (alpha - 1.0) * (r - eps + (-1.0 / alpha).ln_1p()) - alpha.ln();
        bh.min(cks)
    } else {
        bh
    }
}

fn search_orders(curve: &RdpCurve) -> Vec<f64> {
    let mut orders = default_orders();
    orders.extend(curve.tabulated_orders());
    orders.sort_by(f64::total_cmp);
    orders.dedup();
    orders
}

/// The smallest ε such that the curve implies (ε, δ)-DP, minimised over dp_accounting's default
/// grid and the curve's own tabulated orders.
pub fn rdp_epsilon(curve: &RdpCurve, delta: f64) -> Result<EpsAtOrder> {
    check_delta("delta", delta)?;
    if delta == 0.0 {
        return Err(Error::invalid(
            "delta",
            delta,
            "an RDP curve implies (eps, delta)-DP only for delta > 0",
        ));
    }
    let mut best = EpsAtOrder {
        eps: f64::INFINITY,
        order: f64::NAN,
    };
    for alpha in search_orders(curve) {
        let e = cks_epsilon_at(alpha, curve.eval(alpha), delta);
        if e < best.eps {
            best = EpsAtOrder {
                eps: e,
                order: alpha,
            };
        }
    }
    best.eps = round_up(best.eps.max(0.0));
    Ok(best)
}

/// The smallest δ such that the curve implies (ε, δ)-DP (dp_accounting `compute_delta`).
pub fn rdp_delta(curve: &RdpCurve, eps: f64) -> Result<f64> {
    check_non_negative("epsilon", eps)?;
    let log_delta = search_orders(curve)
        .into_iter()
        .map(|a| cks_log_delta_at(a, curve.eval(a), eps))
        .fold(f64::INFINITY, f64::min);
    Ok(round_up(log_delta.exp().min(1.0)))
}

/// ε(δ) of a ρ-zCDP mechanism by the CKS bound.
pub fn zcdp_epsilon(rho: f64, delta: f64) -> Result<f64> {
    check_positive("rho", rho)?;
    Ok(rdp_epsilon(&RdpCurve::linear(rho)?, delta)?.eps)
}

/// δ(ε) of a ρ-zCDP mechanism by the CKS bound.
pub fn zcdp_delta(rho: f64, eps: f64) -> Result<f64> {
    check_positive("rho", rho)?;
    rdp_delta(&RdpCurve::linear(rho)?, eps)
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
        assert!((5.3777..5.3795).contains(&e), "{e}");
        assert!(rdp_epsilon(&RdpCurve::linear(1.0).unwrap(), 0.0).is_err());
        assert!(zcdp_epsilon(-1.0, 1e-5).is_err());
        assert_eq!(pure_to_zcdp(1.0).unwrap(), 0.5);
        assert_eq!(add_up(1.0, 1.0), 2.0);
        assert_eq!(add_up(0.1, 0.2), 0.30000000000000004); // exact sum is below this float
        assert_eq!(add_up(1.0, 1e-17), 1.0f64.next_up());
        assert_eq!(mul_up(0.1, 3.0), 0.30000000000000004);
        assert_eq!(mul_up(1.0 / 3.0, 3.0), 1.0);
    }
}

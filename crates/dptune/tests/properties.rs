//! Property tests of the accounting: monotonicity of ε(δ) in every parameter, monotone
//! composition, and a Ledger that never lets spending exceed the allowance. Also bad input.

use dptune::privacy::convert::{rdp_epsilon, rdp_epsilon_on, zcdp_epsilon};
use dptune::privacy::dpsgd::dpsgd_curve;
use dptune::privacy::gaussian::{gaussian_epsilon, gaussian_sigma};
use dptune::privacy::subsampled::subsampled_gaussian_rdp;
use dptune::privacy::{Guarantee, Ledger, Neighbours, RdpCurve};
use dptune::Error;
use proptest::prelude::*;

/// Allow float noise of a few ulps in comparisons of separately optimised values.
fn le(a: f64, b: f64) -> bool {
    a <= b * (1.0 + 1e-12) + 1e-15
}

fn dpsgd_eps(q: f64, z: f64, steps: u64, delta: f64) -> f64 {
    rdp_epsilon(&dpsgd_curve(q, z, steps).unwrap(), delta)
        .unwrap()
        .eps
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn zcdp_eps_monotone(rho in 1e-3f64..5.0, d1 in 1e-12f64..0.5, d2 in 1e-12f64..0.5, k in 1.0f64..4.0) {
        let (lo, hi) = if d1 < d2 { (d1, d2) } else { (d2, d1) };
        prop_assert!(le(zcdp_epsilon(rho, hi).unwrap(), zcdp_epsilon(rho, lo).unwrap()));
        prop_assert!(le(zcdp_epsilon(rho, lo).unwrap(), zcdp_epsilon(rho * k, lo).unwrap()));
    }

    #[test]
    fn gaussian_eps_monotone(z in 0.3f64..20.0, d1 in 1e-15f64..0.5, d2 in 1e-15f64..0.5, k in 1.0f64..3.0) {
        let (lo, hi) = if d1 < d2 { (d1, d2) } else { (d2, d1) };
        let e = gaussian_epsilon(z, 1.0, lo).unwrap();
        prop_assert!(le(gaussian_epsilon(z, 1.0, hi).unwrap(), e));
        prop_assert!(le(gaussian_epsilon(z * k, 1.0, lo).unwrap(), e));
        // Calibration round trip: the calibrated σ meets the target.
        if e > 1e-6 {
            let s = gaussian_sigma(e, lo, 1.0).unwrap();
            prop_assert!(le(gaussian_epsilon(s, 1.0, lo).unwrap(), e));
        }
    }

    #[test]
    fn dpsgd_eps_monotone(
        q in 1e-3f64..0.3,
        z in 0.6f64..4.0,
        steps in 1u64..2000,
        dq in 1.0f64..2.0,
        dz in 1.0f64..2.0,
        ds in 1u64..1000,
    ) {
        let delta = 1e-5;
        let e = dpsgd_eps(q, z, steps, delta);
        prop_assert!(le(dpsgd_eps(q, z, steps, 1e-3), e));
        prop_assert!(le(e, dpsgd_eps((q * dq).min(1.0), z, steps, delta)));
        prop_assert!(le(e, dpsgd_eps(q, z, steps + ds, delta)));
        prop_assert!(le(dpsgd_eps(q, z * dz, steps, delta), e));
    }

    #[test]
    fn subsampled_rdp_monotone_in_order(q in 1e-3f64..0.5, z in 0.5f64..5.0, a in 1.05f64..40.0, da in 0.01f64..3.0) {
        let r1 = subsampled_gaussian_rdp(q, z, a).unwrap();
        let r2 = subsampled_gaussian_rdp(q, z, a + da).unwrap();
        prop_assert!(r1 >= 0.0 && le(r1, r2), "{} {}", r1, r2);
        prop_assert!(le(r1, a / (2.0 * z * z)));
    }

    #[test]
    fn composition_never_decreases_eps(
        rhos in proptest::collection::vec(1e-3f64..1.0, 1..6),
        extra in 1e-3f64..1.0,
        eps0 in 0.01f64..2.0,
    ) {
        let g = |r: f64| Guarantee::zcdp(r, Neighbours::AddRemove).unwrap();
        let mut total = Guarantee::pure(eps0, Neighbours::AddRemove).unwrap();
        let mut last = total.epsilon(1e-6).unwrap();
        for r in rhos.iter().copied().chain([extra]) {
            total = total.compose(&g(r)).unwrap();
            let e = total.epsilon(1e-6).unwrap();
            prop_assert!(le(last, e), "{} -> {}", last, e);
            last = e;
        }
    }

    #[test]
    fn ledger_never_overspends(
        charges in proptest::collection::vec((0u8..3, 1e-3f64..0.8), 1..20),
        budget in 0.5f64..5.0,
    ) {
        let allowance = Guarantee::approx(budget, 1e-5, Neighbours::AddRemove).unwrap();
        let mut ledger = Ledger::new(allowance).unwrap();
        for (kind, x) in charges {
            let charge = match kind {
                0 => Guarantee::pure(x, Neighbours::AddRemove).unwrap(),
                1 => Guarantee::zcdp(x * x / 2.0, Neighbours::AddRemove).unwrap(),
                _ => Guarantee::rdp(dpsgd_curve(x / 4.0, 1.0, 10).unwrap(), Neighbours::AddRemove),
            };
            match ledger.charge(&charge) {
                Ok(()) => {}
                Err(Error::BudgetExceeded { .. }) => {}
                Err(e) => return Err(TestCaseError::fail(format!("{e}"))),
            }
            if ledger.spent().is_some() || ledger.spent_approx().is_some() {
                prop_assert!(ledger.spent_epsilon(1e-5).unwrap() <= budget);
            }
        }
    }
}

fn param(e: Error) -> &'static str {
    match e {
        Error::InvalidParameter { name, .. } => name,
        other => panic!("not InvalidParameter: {other:?}"),
    }
}

#[test]
fn bad_input_is_a_typed_error_naming_the_parameter() {
    let nan = f64::NAN;
    assert_eq!(param(zcdp_epsilon(nan, 1e-5).unwrap_err()), "rho");
    assert_eq!(param(zcdp_epsilon(-1.0, 1e-5).unwrap_err()), "rho");
    assert_eq!(param(zcdp_epsilon(1.0, 1.0).unwrap_err()), "delta");
    assert_eq!(param(zcdp_epsilon(1.0, -0.1).unwrap_err()), "delta");
    assert_eq!(
        param(gaussian_epsilon(0.0, 1.0, 1e-5).unwrap_err()),
        "sigma"
    );
    assert_eq!(
        param(gaussian_epsilon(f64::INFINITY, 1.0, 1e-5).unwrap_err()),
        "sigma"
    );
    assert_eq!(
        param(gaussian_sigma(-1.0, 1e-5, 1.0).unwrap_err()),
        "epsilon"
    );
    assert_eq!(
        param(gaussian_sigma(1.0, 1e-5, nan).unwrap_err()),
        "sensitivity"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(0.0, 1.0, 2.0).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(1.01, 1.0, 2.0).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(nan, 1.0, 2.0).unwrap_err()),
        "sampling_rate"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(0.1, 0.0, 2.0).unwrap_err()),
        "noise_multiplier"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(0.1, 1.0, 1.0).unwrap_err()),
        "order"
    );
    assert_eq!(
        param(subsampled_gaussian_rdp(0.1, 1.0, 0.5).unwrap_err()),
        "order"
    );
    let curve = RdpCurve::linear(0.5).unwrap();
    assert_eq!(
        param(rdp_epsilon_on(&curve, 1e-5, &[2.0, 1.0]).unwrap_err()),
        "orders"
    );
    assert_eq!(
        param(RdpCurve::table(vec![1.0], vec![0.1]).unwrap_err()),
        "orders"
    );
    assert_eq!(param(RdpCurve::pure_dp(nan).unwrap_err()), "epsilon");
    assert_eq!(
        param(Guarantee::pure(0.0, Neighbours::AddRemove).unwrap_err()),
        "epsilon"
    );
    assert_eq!(param(dpsgd_curve(0.1, 1.0, 0).unwrap_err()), "steps");
    // Mismatched neighbour relations are their own typed error (DESIGN.md, "Neighbours").
    let a = Guarantee::zcdp(0.1, Neighbours::AddRemove).unwrap();
    let r = Guarantee::zcdp(0.1, Neighbours::Replace).unwrap();
    assert!(matches!(
        a.compose(&r),
        Err(Error::NeighboursMismatch { .. })
    ));
    assert!(matches!(
        a.clone().and(r.clone()),
        Err(Error::NeighboursMismatch { .. })
    ));
    let mut ledger = Ledger::new(a).unwrap();
    assert!(matches!(
        ledger.charge(&r),
        Err(Error::NeighboursMismatch { .. })
    ));
}

#[test]
fn pure_guarantee_uses_the_tight_curve() {
    // A pure guarantee composed with an RDP curve uses the tight pure-DP curve, not ε²/2·α.
    let pure = Guarantee::pure(1.0, Neighbours::AddRemove).unwrap();
    let c = pure.rdp_curve().unwrap();
    assert!(c.eval(2.0) < 0.5 * 2.0 && c.eval(100.0) <= 1.0);
    // The EM-style guarantee with ρ = ε²/8 keeps its (not pointwise comparable) line.
    let em = pure
        .clone()
        .and(Guarantee::zcdp(1.0 / 8.0, Neighbours::AddRemove).unwrap())
        .unwrap();
    assert_eq!(em.rdp_curve().unwrap().eval(2.0), 0.25);
}

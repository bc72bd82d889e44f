//! The audit harness itself (`tests/support/audit.rs`): Clopper–Pearson intervals against
//! closed forms and a textbook value, and the whole audit on randomized response, whose
//! privacy loss is known exactly (ln 3 for P[truth] = 3/4): an honest claim passes, a claim of
//! half of it is caught.

#[path = "support/audit.rs"]
mod audit;

use audit::{audit, clopper_pearson, eps_lower_bound, Claim, Event, Pair};
use dptune::noise::SecureRng;

#[test]
fn clopper_pearson_matches_closed_forms() {
    // Textbook: 5 of 10 at 95 %: (0.187086, 0.812914).
    let (lo, hi) = clopper_pearson(5, 10, 0.05);
    assert!(
        (lo - 0.187086).abs() < 1e-6 && (hi - 0.812914).abs() < 1e-6,
        "{lo} {hi}"
    );
    // k = 0 and k = n have closed forms: 1 − (α/2)^(1/n) and (α/2)^(1/n).
    for n in [1u64, 7, 1000, 2_000_000] {
        let a: f64 = 1e-8;
        let edge = (a / 2.0).powf(1.0 / n as f64);
        let (lo0, hi0) = clopper_pearson(0, n, a);
        assert_eq!(lo0, 0.0);
        assert!(
            (hi0 - (1.0 - edge)).abs() <= 1e-9 * (1.0 - edge),
            "{n}: {hi0}"
        );
        let (lon, hin) = clopper_pearson(n, n, a);
        assert!((lon - edge).abs() < 1e-12, "{n}: {lon}");
        assert_eq!(hin, 1.0);
    }
    // Large n, central k: close to the normal half-width z·√(p(1−p)/n), z(5e-9) = 5.730.
    let n = 2_000_000;
    let (lo, hi) = clopper_pearson(n / 2, n, 1e-8);
    let half = 5.730 * (0.25 / n as f64).sqrt();
    assert!(((0.5 - lo) / half - 1.0).abs() < 0.01, "{lo}");
    assert!(((hi - 0.5) / half - 1.0).abs() < 0.01, "{hi}");
    // Symmetry: the interval of n − k mirrors that of k.
    let (a, b) = clopper_pearson(123, 10_000, 1e-6);
    let (c, d) = clopper_pearson(10_000 - 123, 10_000, 1e-6);
    assert!((a - (1.0 - d)).abs() < 1e-12 && (b - (1.0 - c)).abs() < 1e-12);
}

#[test]
fn the_bound_uses_both_orders_and_the_complement() {
    // Equal counts prove nothing; a lopsided pair proves a positive ε in either order.
    assert!(eps_lower_bound(5000, 5000, 10_000, 1e-6, 0.0) < 0.0);
    let ab = eps_lower_bound(7500, 2500, 10_000, 1e-6, 0.0);
    let ba = eps_lower_bound(2500, 7500, 10_000, 1e-6, 0.0);
    assert!(ab > 0.9 && (ab - ba).abs() < 1e-12, "{ab} {ba}");
    // δ is subtracted from the larger side.
    assert!(eps_lower_bound(7500, 2500, 10_000, 1e-6, 0.5) < ab);
}

/// Randomized response: report the bit truthfully with probability 3/4 (ln 3-DP).
fn randomized_response(claim: f64) -> audit::Audit {
    let rr = |bit: bool| move |r: &mut SecureRng| (r.below_u64(4) != 0) == bit;
    audit(
        "randomized response (3/4)",
        Claim::pure(claim),
        vec![Pair::new("bit 1 vs bit 0", rr(true), rr(false))],
        &[Event::new("reports 1", |&o: &bool| o)],
        1_000_000,
        7,
    )
}

#[test]
fn randomized_response_is_tight_and_a_low_claim_is_caught() {
    let honest = randomized_response(3f64.ln());
    honest.assert_passes();
    assert!(honest.tightness() > 0.98, "{}", honest.tightness());
    randomized_response(0.5 * 3f64.ln()).assert_caught();
}

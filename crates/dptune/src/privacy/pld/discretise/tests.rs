//! The closed-form Gaussian discretisation ([`Builder::gaussian`]) against the quadrature it
//! replaced, the exact profile and the deliberately wrong variant; the subsampled Gaussian's
//! density from its loss against the mixture it replaced.

use super::super::mechanisms;
use super::super::pmf::LossPmf;
use super::super::tests::{exact_sum, tail_distance};
use super::super::PldConfig;
use super::{Builder, Segment, QUADRATURE_ERROR};
use crate::privacy::normal::log_ndtr;

fn ndtr(x: f64) -> f64 {
    log_ndtr(x).exp()
}

/// The Gaussian pair with noise s (sensitivity 1) as it was discretised before
/// [`Builder::gaussian`]: Gauss–Legendre nodes in the output, each placed by [`Builder::atom`].
fn gaussian_by_quadrature(s: f64, cfg: &PldConfig) -> LossPmf {
    let c = (-2.0 * cfg.tail.ln()).sqrt();
    let two_s2 = 2.0 * s * s;
    let seg = Segment {
        lo: 1.0 - c * s,
        hi: 1.0 + c * s,
        at: &|o| {
            let x = (o - 1.0) / s;
            let density = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt() / s;
            (density, (2.0 * o - 1.0) / two_s2)
        },
        output_at: &|l| 0.5 + l * s * s,
        step: s / 8.0,
    };
    let floor = seg.loss(seg.lo);
    let mut b = Builder::new(cfg.interval, floor, seg.loss(seg.hi)).unwrap();
    b.segment(&seg);
    b.atom(ndtr(-c), floor);
    b.atom(ndtr(-c), f64::INFINITY);
    b.finish()
}

/// The exact δ(ε) of the Gaussian pair with noise s (Balle & Wang 2018, arXiv 1805.06530,
/// Thm. 8): Φ(1/(2s) − εs) − e^ε·Φ(−1/(2s) − εs).
fn exact_delta(s: f64, eps: f64) -> f64 {
    ndtr(0.5 / s - eps * s) - eps.exp() * ndtr(-0.5 / s - eps * s)
}

#[test]
fn gaussian_closed_form_matches_the_quadrature_and_dominates_the_exact_profile() {
    // Two-point rules (s = 0.63, 0.7, 3 at h = 1e-4; s = 0.1, a 1.8-million-point window), a
    // three-point rule (s = 8 at h = 1e-4), the fallback to the quadrature (s = 8 at h = 1e-3)
    // and a coarse grid (s = 0.63 at h = 1e-3). Connect-the-dots keeps P-mass (1) and Q-mass
    // (a wrong split breaks the latter): the window [μ − c·sd, μ + c·sd] holds the Q-mass
    // Φ(c + sd) − Φ(sd − c) of Q's loss law N(−μ, 2μ) (sd = √(2μ)), and the P-mass Φ(−c) put
    // at its lowest loss adds Φ(−c)·e^{c·sd − μ} (up to 1e-14 less at h = 1e-3: the cubic
    // upper bound on each split moves about h³/24 of an upper share one point up, which lowers
    // the Q-mass, as in the quadrature before). The upper tail sums agree with the
    // quadrature's within the charged allowance, and δ(ε) never falls below the exact profile.
    for (s, h) in [
        (0.632_455_532_033_675_8, 1e-4),
        (0.7, 1e-4),
        (3.0, 1e-4),
        (0.1, 1e-4),
        (8.0, 1e-4),
        (8.0, 1e-3),
        (0.632_455_532_033_675_8, 1e-3),
    ] {
        let cfg = PldConfig {
            interval: h,
            ..PldConfig::default()
        };
        let closed = mechanisms::gaussian(s, &cfg, false).unwrap();
        let quadrature = gaussian_by_quadrature(s, &cfg);
        let mass = exact_sum(closed.probs.iter().copied().chain([closed.inf]));
        let q_mass =
            exact_sum((0..closed.len()).map(|i| closed.probs[i] * (-closed.loss(i)).exp()));
        let distance = tail_distance(&closed, &quadrature);
        let (c, mu) = ((-2.0 * cfg.tail.ln()).sqrt(), 0.5 / (s * s));
        let sd = (2.0 * mu).sqrt();
        let q_expected = ndtr(c + sd) - ndtr(sd - c) + ndtr(-c) * (c * sd - mu).exp();
        assert!(
            (mass - 1.0).abs() <= QUADRATURE_ERROR / 100.0
                && (q_mass - q_expected).abs() <= QUADRATURE_ERROR / 4.0
                && distance <= QUADRATURE_ERROR / 10.0
                && closed.err == quadrature.err,
            "s = {s}, h = {h}: P-mass {mass}, Q-mass {q_mass} (exact {q_expected}), tail sums \
             differ by {distance:e}, err {:e} vs {:e}",
            closed.err,
            quadrature.err
        );
        for eps in [0.0, 0.3, 1.0, 2.5, 5.0] {
            let (new, old, exact) = (
                closed.delta(eps),
                quadrature.delta(eps),
                exact_delta(s, eps),
            );
            assert!(
                new >= exact && (new - old).abs() <= QUADRATURE_ERROR,
                "s = {s}, h = {h}, ε = {eps}: δ {new:e}, quadrature {old:e}, exact {exact:e}"
            );
        }
    }
}

#[test]
fn gaussian_closed_form_worked_number_and_the_wrong_variant() {
    // Golden case pld_gauss_s2_T10: ten Gaussians with σ = 2 are one with σ/√10 (rounded down as
    // PartSpec::composed_pld does); exact ε at δ = 1e-5 is 7.511275900744784 (golden
    // eps_exact), dp_accounting 0.6.0 gives 7.5112759312. The quadrature gave
    // 7.511275908074331; the closed form must agree with it to the charged error and stay above
    // the exact value. Rounding every node down to the grid point below (the optimistic
    // variant) must fall below the exact value: the check has teeth.
    let s = (2.0 / 10f64.sqrt().next_up()).next_down();
    let cfg = PldConfig::default();
    let exact = 7.511_275_900_744_784;
    let new = mechanisms::gaussian(s, &cfg, false).unwrap();
    let old = gaussian_by_quadrature(s, &cfg);
    let (e_new, e_old) = (new.epsilon(1e-5).unwrap(), old.epsilon(1e-5).unwrap());
    assert!(
        e_new >= exact && (e_new - e_old).abs() <= 1e-12 * exact,
        "closed form {e_new}, quadrature {e_old}, exact {exact}"
    );
    assert!((e_old - 7.511_275_908_074_331).abs() <= 1e-12);
    let wrong = mechanisms::gaussian(s, &cfg, true).unwrap();
    let e_wrong = wrong.epsilon(1e-5).unwrap();
    assert!(
        e_wrong < exact,
        "the optimistic variant must be caught: {e_wrong}"
    );
    for eps in [1.0, 4.0, 7.5] {
        assert!(
            wrong.delta(eps) < exact_delta(s, eps) && new.delta(eps) >= exact_delta(s, eps),
            "ε = {eps}"
        );
    }
}

/// The remove direction of the subsampled Gaussian (rate q, noise s) as it was discretised
/// before its density was taken from the loss: the mixture (1 − q)φ(o/s) + qφ((o − 1)/s), two
/// `exp` per node besides the loss's `expm1` and `ln_1p`.
fn subsampled_remove_by_mixture(q: f64, s: f64, cfg: &PldConfig) -> LossPmf {
    let c = (-2.0 * cfg.tail.ln()).sqrt();
    let two_s2 = 2.0 * s * s;
    let phi = |x: f64| (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
    let seg = Segment {
        lo: -c * s,
        hi: 1.0 + c * s,
        at: &|o| {
            let density = ((1.0 - q) * phi(o / s) + q * phi((o - 1.0) / s)) / s;
            (density, (q * ((2.0 * o - 1.0) / two_s2).exp_m1()).ln_1p())
        },
        output_at: &|l| 0.5 + s * s * (l.exp_m1() / q).ln_1p(),
        step: s / 8.0,
    };
    let floor = seg.loss(seg.lo);
    let mut b = Builder::new(cfg.interval, floor, seg.loss(seg.hi)).unwrap();
    b.segment(&seg);
    b.atom((1.0 - q) * ndtr(-c) + q * ndtr(-c - 1.0 / s), floor);
    b.atom((1.0 - q) * ndtr(-c - 1.0 / s) + q * ndtr(-c), f64::INFINITY);
    b.finish()
}

#[test]
fn subsampled_gaussian_density_from_the_loss_matches_the_mixture() {
    // The remove direction's density is Q's, φ(o/s)/s, times e^L = 1 + q·expm1(t) (the loss's
    // own expm1): one `exp` fewer per node. Against the mixture it replaced, on both sides of
    // the golden rates and noises, a tiny and a large σ, the q = 1 edge (Pld routes q = 1 to
    // the Gaussian, the direction itself must still agree) and a coarse grid: P-mass within
    // 1e-15 of 1, upper tail sums within a tenth of the charged allowance, δ(ε) within it. The
    // add direction's arithmetic did not change (its density is P's own): it must keep its
    // mass. Worked number: the golden DP-SGD q 0.1, z 2 step's remove direction, δ at ε = 1.
    for (q, s, h) in [
        (0.004, 1.1, 1e-4),
        (0.01, 1.0, 1e-4),
        (0.1, 2.0, 1e-4),
        (0.05, 1.5, 1e-4),
        (1.0, 2.0, 1e-4),
        (0.1, 0.3, 1e-4),
        (0.1, 40.0, 1e-4),
        (0.01, 1.0, 1e-3),
    ] {
        let cfg = PldConfig {
            interval: h,
            ..PldConfig::default()
        };
        let (remove, add) = mechanisms::subsampled_gaussian(q, s, &cfg, false).unwrap();
        let old = subsampled_remove_by_mixture(q, s, &cfg);
        for (law, name) in [(&remove, "remove"), (&add, "add")] {
            let mass = exact_sum(law.probs.iter().copied().chain([law.inf]));
            assert!(
                (mass - 1.0).abs() <= QUADRATURE_ERROR / 100.0,
                "q = {q}, s = {s}, h = {h}, {name}: P-mass {mass}"
            );
        }
        let distance = tail_distance(&remove, &old);
        // The density's charge, and the loss rounding's (both directions, |t| ≤ (1 + 2cs)/(2s²)).
        let u = f64::EPSILON / 2.0;
        let t_max = (1.0 + 2.0 * (-2.0 * cfg.tail.ln()).sqrt() * s) / (2.0 * s * s);
        let ratio = (q / (1.0 - q)).min(t_max.exp_m1()).max(1.0);
        let rounding = 3.01 * u * (t_max + ratio) * (1.0 + h);
        assert!(
            (add.err - old.err - rounding).abs() <= 0.01 * rounding,
            "q = {q}, s = {s}, h = {h}: add direction charged {:e}, loss rounding {rounding:e}",
            add.err - old.err
        );
        let charge = 4.0 * q * (1.0 / (s * s) + 1.0 / s) * u + rounding;
        assert!(
            distance <= QUADRATURE_ERROR / 10.0
                && (remove.err - old.err - charge).abs() <= 0.01 * charge,
            "q = {q}, s = {s}, h = {h}: tail sums differ by {distance:e}"
        );
        for eps in [0.0, 0.1, 0.5, 1.0, 2.0] {
            let (new, before) = (remove.delta(eps), old.delta(eps));
            assert!(
                (new - before).abs() <= QUADRATURE_ERROR,
                "q = {q}, s = {s}, h = {h}, ε = {eps}: δ {new:e}, mixture {before:e}"
            );
        }
    }
    let cfg = PldConfig::default();
    let (remove, _) = mechanisms::subsampled_gaussian(0.1, 2.0, &cfg, false).unwrap();
    let old = subsampled_remove_by_mixture(0.1, 2.0, &cfg);
    // Apart from the charges (the density's and the loss rounding's, 1.9e-15 together here).
    let (new, before) = (remove.delta(1.0), old.delta(1.0));
    let charged = remove.err - old.err;
    assert!(charged > 1.5e-15 && charged < 2.5e-15, "{charged:e}");
    assert!(
        (new - charged - before).abs() <= 1e-15,
        "{new:e} (charged {charged:e}) vs {before:e}"
    );
}

#[test]
fn loss_error_covers_what_the_nudge_does_not() {
    // At q = 1 the subsampled loss ln_1p(q·expm1(t)) is t itself, so its evaluation error is
    // known exactly for a t that is a float: for t ≪ 0, 1 + expm1(t) cancels and the computed
    // loss is off by far more than the nudge of `Builder::atom` (4u·|L| beyond the grid
    // position's rounding): the check has teeth. `loss_error` (per unit of mass, h → 0) must
    // cover every error.
    let u = f64::EPSILON / 2.0;
    let bound = mechanisms::loss_error(1.0, 30.0, 0.0);
    let mut beyond_nudge = 0;
    for k in -120..=120 {
        let t = f64::from(k) / 4.0;
        let err = (t.exp_m1().ln_1p() - t).abs();
        assert!(
            err <= bound,
            "t = {t}: loss off by {err:e}, bound {bound:e}"
        );
        if err > 4.0 * u * t.abs() {
            beyond_nudge += 1;
        }
    }
    assert!(
        beyond_nudge > 10,
        "only {beyond_nudge} losses beyond the nudge"
    );
    // Worked numbers at h = 1e-4, q = 0.01: |t| ≤ 30 (s ≈ 0.3): 3.01u·(30 + 1)·(1 + 1e-4) =
    // 1.036e-14; at q within 2^-50 of 1 (ratio 2^50, e = 3.01u·2^50 ≈ 0.38) the first-order
    // term would undercount: −ln(1 − e) ≈ 0.475 is charged, and at 2^-52 (e ≥ 1/2) no bound.
    let small = mechanisms::loss_error(0.01, 30.0, 1e-4);
    assert!(
        (small - 3.01 * u * 31.0 * 1.0001).abs() <= 1e-12 * small,
        "{small:e}"
    );
    assert!((small - 1.036e-14).abs() < 1e-17, "{small:e}");
    let near = mechanisms::loss_error(1.0 - 2f64.powi(-50), 60.0, 0.0);
    let e = 3.01 * u * (2f64.powi(50) - 1.0);
    assert!(near > e && (near + (-e).ln_1p()).abs() < 1e-12, "{near}");
    assert_eq!(
        mechanisms::loss_error(1.0 - 2f64.powi(-52), 60.0, 0.0),
        f64::INFINITY
    );
}

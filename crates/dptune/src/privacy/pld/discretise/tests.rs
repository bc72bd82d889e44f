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
    // Both are charged the allowance and their running sums' rounding, below 1e-15 here (the
    // walk's one addition per point gives u per unit of mass).
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
                && (0.0..1e-15).contains(&sums_charge(&closed, 0.0))
                && (0.0..1e-15).contains(&sums_charge(&quadrature, 0.0)),
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
    // eps_exact), dp_accounting 0.6.0 gives 7.5112759312. The quadrature gives
    // 7.511275908084427 (7.511275908074331 before its running sums were charged, 2.5u of δ);
    // the closed form must agree with it to the charged error and stay above the exact value.
    // Rounding every node down to the grid point below (the optimistic variant) must fall
    // below the exact value: the check has teeth.
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
    assert!((e_old - 7.511_275_908_084_427).abs() <= 1e-12);
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
        // Net of the running sums' charges, which differ between the constructions (the add
        // direction's up to 1.1e-14 at s = 0.3); each direction charges at least its own
        // formulas (a non-negative rest).
        let (extra_remove, extra_add) = mechanisms::subsampled_gaussian_charges(q, s, &cfg);
        let sums = [
            sums_charge(&remove, extra_remove),
            sums_charge(&add, extra_add),
            sums_charge(&old, 0.0),
        ];
        assert!(
            sums.iter().all(|x| (0.0..2e-14).contains(x)),
            "q = {q}, s = {s}, h = {h}: running sums charged {sums:?}"
        );
        let [remove_net, add_net, old_net] =
            [remove.err - sums[0], add.err - sums[1], old.err - sums[2]];
        assert!(
            (add_net - old_net - rounding).abs() <= 0.01 * rounding,
            "q = {q}, s = {s}, h = {h}: add direction charged {:e}, loss rounding {rounding:e}",
            add_net - old_net
        );
        let charge = 4.0 * q * (1.0 / (s * s) + 1.0 / s) * u + rounding;
        assert!(
            distance <= QUADRATURE_ERROR / 10.0
                && (remove_net - old_net - charge).abs() <= 0.01 * charge,
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

#[test]
fn the_running_sums_rounding_is_charged() {
    // A unit of mass on a grid point (h = 2^-13, loss 0.5 = 4096h: the split puts all but the
    // nudge's 4e-12 on the point) or at +∞, then 10^6 atoms of 1e-17 at the same loss: each
    // addition rounds back to the point's value (1e-17 is below half an ulp of 1), so 1e-11
    // of mass is lost, a hundred times the quadrature allowance. The stored values are all
    // non-negative, so the L1 error is at least the gap between the exact and the stored
    // total: the charge must cover it (here it is the lost mass itself, each addition's error
    // being at most its mass), and the error without the charge (the deliberately wrong
    // variant) falls short. (At +∞ the finished atom is rounded up by `truncate`, which
    // narrows the gap to 8e-12.)
    let h = 2f64.powi(-13);
    let small = std::iter::repeat_n(1e-17, 1_000_000);
    let exact = exact_sum(std::iter::once(1.0).chain(small.clone()));
    for loss in [0.5, f64::INFINITY] {
        let mut b = Builder::new(h, 0.0, 1.0).unwrap();
        b.atom(1.0, loss);
        for m in small.clone() {
            b.atom(m, loss);
        }
        let charge = b.sums.error();
        let pmf = b.finish();
        let gap = exact - exact_sum(pmf.probs.iter().copied().chain([pmf.inf]));
        assert!(
            gap > 8e-12 && charge >= gap && pmf.err - charge < gap / 50.0,
            "loss {loss}: lost {gap:e}, charged {:e} of which the sums {charge:e}",
            pmf.err
        );
        assert!((charge - 1e-11).abs() < 1e-15, "{charge:e}");
    }
}

#[test]
fn every_addition_into_the_grid_is_booked() {
    // The Gaussian's walk and the Laplace run of `half_exponential` add one mass into each
    // point inside their run, onto nothing, so the booked bound is at least u times the mass
    // of the run; were an addition not booked (the walk's, the run's) almost all the mass
    // would be missing from it. With one or a few additions per point it stays within a small
    // multiple of u per unit of mass.
    let (h, u) = (1e-4, f64::EPSILON / 2.0);
    let mut gauss = Builder::new(h, -20.0, 25.0).unwrap();
    gauss.gaussian(2.5, -15.0, 20.0);
    let mut laplace = Builder::new(h, -1.0, 1.0).unwrap();
    laplace.atom(0.5 * (-1f64).exp(), -1.0);
    laplace.atom(0.5, 1.0);
    laplace.half_exponential(0.25, -1.0, 1.0);
    for (b, name, least, most) in [
        (gauss, "gaussian", 0.99, 1.01),
        (laplace, "laplace", 0.4, 4.0),
    ] {
        let charge = b.sums.error();
        let pmf = b.finish();
        let mass = exact_sum(pmf.probs.iter().copied().chain([pmf.inf]));
        assert!(
            mass > 0.99 && charge >= least * u * mass && charge <= most * u * mass,
            "{name}: charged {charge:e}, mass {mass}"
        );
    }
}

/// The running sums' charge in a finished direction: its err less the quadrature allowance
/// (on the mass as [`Builder::finish`] sums it) and the mechanism's own charge `extra` (to a
/// rounding of err, about 1e-29).
fn sums_charge(pmf: &LossPmf, extra: f64) -> f64 {
    let mass: f64 = pmf.probs.iter().sum::<f64>() + pmf.inf;
    pmf.err - (QUADRATURE_ERROR * mass.max(1.0) + extra)
}

#[test]
fn the_running_sums_charge_at_the_golden_and_extreme_parameters() {
    // Per unit of mass (every law here has mass 1 within 1e-15): at the golden DP-SGD steps
    // a few u (3.9e-16 .. 7.2e-16), the Gaussian's walk u, the Laplace (r = 1) 2.4u. Where a
    // bucket is cut into many quadrature pieces it is far more: the subsampled Gaussian at the
    // smallest noise a default grid holds (s = 0.035, q = 1e-3; 6.6 million points) puts
    // almost all its mass near loss 0 through a thousand nodes, 3.6e-14 in both directions;
    // the subsampled Laplace with r = 150 (q = 1e-3) puts half its mass on the points around
    // ln(1 − q) together with about 1,300 nodes of e^{−o} over 0 ≤ o ≤ 33, 1.46e-13 in the
    // remove direction (7.8e-14 add): more than the whole quadrature allowance, which is why
    // the sums are charged apart.
    let cfg = PldConfig::default();
    let u = f64::EPSILON / 2.0;
    let measured = |remove: &LossPmf, add: &LossPmf, (er, ea): (f64, f64)| {
        (sums_charge(remove, er), sums_charge(add, ea))
    };
    for (q, s) in [(0.004, 1.1), (0.01, 1.0), (0.1, 2.0), (0.05, 1.5)] {
        let (remove, add) = mechanisms::subsampled_gaussian(q, s, &cfg, false).unwrap();
        let (r, a) = measured(
            &remove,
            &add,
            mechanisms::subsampled_gaussian_charges(q, s, &cfg),
        );
        assert!(
            r > 3.0 * u && r < 1e-15 && a > 3.0 * u && a < 1e-15,
            "q = {q}, s = {s}: {r:e}, {a:e}"
        );
    }
    let (q, s) = (1e-3, 0.035);
    let (remove, add) = mechanisms::subsampled_gaussian(q, s, &cfg, false).unwrap();
    let (r, a) = measured(
        &remove,
        &add,
        mechanisms::subsampled_gaussian_charges(q, s, &cfg),
    );
    assert!(
        (3.5e-14..3.7e-14).contains(&r) && (3.5e-14..3.7e-14).contains(&a),
        "q = {q}, s = {s}: {r:e}, {a:e}"
    );
    let (q, r) = (1e-3, 150.0);
    let (remove, add) = mechanisms::subsampled_laplace(q, r, &cfg, false).unwrap();
    let rounding = mechanisms::loss_error(q, r, cfg.interval);
    let (r, a) = measured(&remove, &add, (rounding, rounding));
    assert!(
        (1.4e-13..1.5e-13).contains(&r) && (7.7e-14..7.9e-14).contains(&a),
        "laplace q = {q}, r = 150: {r:e}, {a:e}"
    );
    for s in [0.7, 2.0, 0.1] {
        let g = sums_charge(&mechanisms::gaussian(s, &cfg, false).unwrap(), 0.0);
        assert!((g / u - 1.0).abs() < 1e-6, "gaussian s = {s}: {g:e}");
    }
    let l = sums_charge(&mechanisms::laplace(1.0, &cfg, false).unwrap(), 0.0);
    assert!(l > 2.0 * u && l < 3.0 * u, "laplace r = 1: {l:e}");
}

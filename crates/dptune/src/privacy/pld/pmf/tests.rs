//! The ε query's recurrence ([`LossPmf::delta_and_slope`]) against an `expm1` per point, the
//! exact sum, and the deliberately wrong variant (no restarts, no charge).

use super::super::mechanisms;
use super::super::tests::exact_sum;
use super::super::PldConfig;
use super::{partition_point, up, LossPmf, U};

/// δ(ε) as the query computed it before the recurrence: an `expm1` per point above ε.
fn delta_by_expm1(pmf: &LossPmf, eps: f64) -> f64 {
    let start = partition_point(pmf.len(), |i| pmf.loss(i) <= eps);
    let s: f64 = (start..pmf.len())
        .map(|i| pmf.probs[i] * -(eps - pmf.loss(i)).exp_m1())
        .sum();
    (up(s, pmf.len()) + pmf.inf + pmf.err).min(1.0)
}

#[test]
fn the_recurrence_stays_within_a_tiny_margin_of_an_expm1_per_point() {
    // The golden Gaussian σ 2, T 10 (one Gaussian with s = σ/√10; 287,913 points) and a
    // subsampled Gaussian's remove direction (q = 0.1, s = 2), from ε = −0.05 (every point
    // visited) to far in the tail: δ rises by at most the charge, η times the mass above ε
    // (η ≤ 200u here: |l| ≤ 15), and otherwise moves by rounding only (1e-14 relative). At
    // ε = −0.05 in the remove direction that is measured +1.06e-14 on δ = 0.0502 (2.1e-13
    // relative: almost all the mass lies above ε, and δ is small).
    let cfg = PldConfig::default();
    let s = (2.0 / 10f64.sqrt().next_up()).next_down();
    let gauss = mechanisms::gaussian(s, &cfg, false).unwrap();
    let (remove, _) = mechanisms::subsampled_gaussian(0.1, 2.0, &cfg, false).unwrap();
    for (pmf, name) in [(&gauss, "gaussian"), (&remove, "subsampled remove")] {
        for eps in [-0.05, 0.0, 0.3, 1.0, 2.5, 5.0, 7.5] {
            let (new, old) = (pmf.delta(eps), delta_by_expm1(pmf, eps));
            let start = partition_point(pmf.len(), |i| pmf.loss(i) <= eps);
            let above = exact_sum(pmf.probs[start..].iter().copied());
            assert!(
                new - old <= 200.0 * U * above + 1e-14 * old && old - new <= 1e-14 * old,
                "{name}, ε = {eps}: δ {new:e} by the recurrence, {old:e} by expm1"
            );
        }
    }
    // At ε = −∞ every weight is 0: δ is the whole mass (rounded up), not NaN.
    let all = gauss.delta(f64::NEG_INFINITY);
    assert!((1.0 - 1e-12..=1.0).contains(&all), "{all}");
    // Worked number: this law's ε at δ = 1e-5 is 7.51127590807835. It was 7.511275908074314
    // from the seventh pass until the running sums were charged (u of δ, +5.4e-13 relative) and
    // the guessing scan kept its sum scaled to the block (a few ulp: another guess, confirmed by
    // the same δ).
    assert_eq!(gauss.epsilon(1e-5).unwrap(), 7.511_275_908_078_35);
}

/// e^{−h} − fl(e^{−h}) for h = 2^−k (k ≥ 10), from 1 − h + h²/2 (exact in f64) and the rest of
/// the series (below 2e-10, so its rounding is below 1e-26).
fn exp_rounding(h: f64) -> f64 {
    let head = 1.0 - h + h * h / 2.0;
    let rest = -h * h * h / 6.0 + h.powi(4) / 24.0 - h.powi(5) / 120.0;
    (head - (-h).exp()) + rest
}

#[test]
fn the_recurrence_without_restarts_or_charge_falls_below_the_exact_sum() {
    // A unit mass at the point J = 1/h of a grid of width h = 2^−k, ε = −h/2: the exact
    // finite part is 1 − e^{−(J + 1/2)h} (one expm1 of an exact argument, within an ulp).
    // When fl(e^{−h}) is rounded up (chosen below among k = 10..=20), a product carried over
    // J points without a restart drifts up by about J·(its rounding), and 1 − w̃ falls below
    // the exact value by far more than the other roundings: the deliberately wrong variant
    // (no restarts, no charge) is caught. The query (restarts every 32 points, charged) stays
    // above it, and so does the uncharged sum with restarts (its drift is at most 31 products).
    let k = (10..=20)
        .find(|&k| exp_rounding(2f64.powi(-k)) < -0.1 * U)
        .expect("some e^{-h} among h = 2^-10 .. 2^-20 is rounded up by at least u/10");
    let h = 2f64.powi(-k);
    let j = 1usize << k;
    let mut probs = vec![0.0; j + 2];
    probs[j] = 1.0;
    let pmf = LossPmf {
        h,
        offset: 0,
        probs,
        inf: 0.0,
        err: 0.0,
    };
    let eps = -h / 2.0;
    let exact = -(eps - j as f64 * h).exp_m1();
    let ulp = 2.0 * U * exact;
    let (wrong, _, _) = pmf.tail_sums(eps, usize::MAX);
    let (restarted, _, _) = pmf.tail_sums(eps, super::RESTART);
    let charged = pmf.delta(eps);
    assert!(
        wrong < exact - 8.0 * ulp,
        "k = {k}: the uncharged product without restarts gives {wrong:e}, exact {exact:e}"
    );
    assert!(
        charged >= exact + ulp && (restarted - exact).abs() <= 100.0 * U,
        "k = {k}: charged {charged:e}, restarted {restarted:e}, exact {exact:e}"
    );
}

#[test]
fn a_loss_just_above_epsilon_is_counted_and_huge_losses_give_up() {
    let single = |h: f64, offset: i64| LossPmf {
        h,
        offset,
        probs: vec![1.0],
        inf: 0.0,
        err: 0.0,
    };
    // fl(5·0.1) = 0.5, but 5·fl(0.1) is 0.5 + 2.8e-17: at ε = 0.5 the point lies above ε and
    // δ(0.5) = 1 − e^{−2.8e-17} > 0. Comparing the rounded loss skipped it (δ = 0, below the
    // truth); the exact sign test counts it and the drift charge covers its weight.
    let pmf = single(0.1, 5);
    assert_eq!(pmf.loss(0), 0.5);
    assert!(pmf.delta(0.5) >= 2.7e-17, "{:e}", pmf.delta(0.5));
    assert!(pmf.delta(0.5) < 1e-13, "{:e}", pmf.delta(0.5));
    // Losses near 10^15: at 2^48 (η ≈ 0.28) the charge η/(1 − η) keeps δ above the truth; at
    // 2^50 and 2^52 (η ≥ 1/2) the weights' error bound is useless and δ is 1, but only below
    // the loss: above it δ falls to 0 and the ε search ends (it stepped up for ever when δ
    // stayed 1 there).
    for shift in [48, 50, 52] {
        let pmf = single(1.0, 1i64 << shift);
        let l = pmf.loss(0);
        let truth = -(-0.5f64).exp_m1();
        assert!(
            pmf.delta(l - 0.5) >= truth,
            "2^{shift}: {:e}",
            pmf.delta(l - 0.5)
        );
        assert_eq!(pmf.delta(l + 1.0), 0.0, "2^{shift}");
        // It returns (+∞ here: the guess e^{−l} underflows, sound but loose).
        let eps = pmf.epsilon(1e-3).unwrap();
        assert!(eps >= l - 0.01, "2^{shift}: ε {eps}");
    }
    let eta48 = single(1.0, 1i64 << 48).delta((1u64 << 48) as f64 - 0.5);
    assert!(eta48 < 1.0, "{eta48}");
    assert_eq!(
        single(1.0, 1i64 << 52).delta((1u64 << 52) as f64 - 0.5),
        1.0
    );
}

#[test]
fn epsilon_is_found_where_the_losses_are_beyond_the_range_of_exp() {
    // The scan that guesses ε carried e^{−l}, which underflows above l ≈ 745: the guess was +∞
    // (sound, useless). On a grid of 0.01:
    // * a pure ε₀ = 800 pair: P-mass 1/(1 + e^{−800}) = 1 at loss 800, so δ(ε) = 1 − e^{ε−800}
    //   below 800 and ε(1e-5) = 800 + ln(1 − 1e-5) (building it also failed: ∞/∞ masses);
    // * an (ε₀, δ₀) = (800, 1e-6) pair: ε(1e-5) = 800 + ln(1 − (1e-5 − δ₀)/(1 − δ₀));
    // * two Laplace steps with b = 1e-3: losses up to 2000, P-mass 1/4 at 2000 (each step puts
    //   1/2 on its top loss 1000), so ε(1e-5) ≥ 2000 + ln(1 − 4e-5), and no loss exceeds
    //   2000 + 2h once placed on the grid.
    use super::super::{Neighbours, Pld};
    let cfg = PldConfig {
        interval: 0.01,
        ..PldConfig::default()
    };
    let pure = Pld::pure(800.0, Neighbours::AddRemove, cfg).unwrap();
    let exact = 800.0 + (-1e-5f64).ln_1p();
    let eps = pure.epsilon(1e-5).unwrap();
    assert!(eps >= exact && eps <= exact + 1e-6, "{eps} vs {exact}");
    let approx = Pld::approx(800.0, 1e-6, Neighbours::AddRemove, cfg).unwrap();
    let exact = 800.0 + (-(1e-5 - 1e-6) / (1.0 - 1e-6f64)).ln_1p();
    let eps = approx.epsilon(1e-5).unwrap();
    assert!(eps >= exact && eps <= exact + 1e-6, "{eps} vs {exact}");
    let two = Pld::laplace(1e-3, 1.0, Neighbours::AddRemove, cfg)
        .unwrap()
        .self_compose(2)
        .unwrap();
    let eps = two.epsilon(1e-5).unwrap();
    let lower = 2000.0 + (-4e-5f64).ln_1p();
    assert!(
        eps >= lower && eps <= 2000.02,
        "{eps} vs [{lower}, 2000.02]"
    );
}

#[test]
fn compositions_whose_grid_indices_reach_2_53_are_refused() {
    // One point at grid index ±2^52 (h = 1): two draws sum to ±2^53, where neighbouring grid
    // points share a float (loops can hang, mass lands on the wrong point): the power and the
    // composition are refused, quickly, naming the parameter, with the grid refusal. So are an
    // astronomical t (the window's ends saturate the i64 range; `hi + 1` overflowed) and a
    // narrow window far out (3·2^52). One index lower the sums, 2^53 − 2, are held.
    use super::super::grid_limit::GridTooLarge;
    use crate::error::Error;
    let single = |offset: i64| LossPmf {
        h: 1.0,
        offset,
        probs: vec![1.0],
        inf: 0.0,
        err: 0.0,
    };
    let refused = |r: crate::error::Result<LossPmf>, name: &str| match r {
        Err(e @ Error::InvalidParameter { name: n, .. }) => {
            assert!(n == name && GridTooLarge::is_refusal(&e), "{e:?}")
        }
        other => panic!("{name}: expected a refusal, got {other:?}"),
    };
    let tail = 1e-18;
    let start = std::time::Instant::now();
    for far in [single(1 << 52), single(-(1 << 52))] {
        refused(far.power(2, tail), "times");
        refused(far.compose(&far, tail), "parts");
    }
    refused(single(1).power(u64::MAX, tail), "times");
    refused(single(3).power(1 << 52, tail), "times");
    refused(single(i64::MAX).compose(&single(i64::MAX), tail), "parts");
    assert!(start.elapsed().as_secs_f64() < 5.0, "{:?}", start.elapsed());
    for near in [single((1 << 52) - 1), single(1 - (1 << 52))] {
        let sum = 2 * near.offset;
        for law in [
            near.power(2, tail).unwrap(),
            near.compose(&near, tail).unwrap(),
        ] {
            assert!(
                law.offset == sum && law.len() == 1 && (law.probs[0] - 1.0).abs() < 1e-12,
                "{law:?}"
            );
        }
    }
}

#[test]
fn the_mass_moved_up_by_truncation_is_charged() {
    // 1e-20 cut from the bottom and moved onto a point of mass 1: the addition loses all of it
    // (1 + 1e-20 = 1 in f64), an L1 error of 1e-20 that `err` must cover (it stayed 0 before).
    let mut pmf = LossPmf {
        h: 0.1,
        offset: 0,
        probs: vec![1e-20, 1.0, 0.5],
        inf: 0.0,
        err: 0.0,
    };
    pmf.truncate(1e-18);
    assert_eq!((pmf.offset, pmf.probs.clone()), (1, vec![1.0, 0.5]));
    assert!(pmf.err >= 1e-20 && pmf.err <= 1e-15, "{}", pmf.err);
}

#[test]
fn an_epsilon_of_minus_infinity_is_confirmed_before_it_is_returned() {
    // Mass 0.5 at loss 0 and exactly the scan's aim at loss 50 (h = 1, δ = 0.1): scanning down,
    // the upper mass's weight falls below half an ulp some 37 points under it, s1 − s2/w equals
    // the aim and the guess ln((s1 − aim)/s2) was ln 0 = −∞. It was returned unconfirmed, while
    // δ(−∞) = 0.6: an ε below the truth (about −2e-10 here). Found by review. Now the scan goes
    // on to the point at 0 and guesses there.
    let n = 51;
    let aim = 0.1 * (1.0 - 1e-9) / (1.0 + 2.0 * (n as f64 + 4.0) * U);
    let mut probs = vec![0.0; n];
    (probs[0], probs[n - 1]) = (0.5, aim);
    let pmf = LossPmf {
        h: 1.0,
        offset: 0,
        probs,
        inf: 0.0,
        err: 0.0,
    };
    assert!(pmf.delta(f64::NEG_INFINITY) > 0.1);
    let eps = pmf.epsilon(0.1).unwrap();
    assert!(eps.is_finite() && pmf.delta(eps) <= 0.1, "{eps}");
    assert!(
        (-1e-9..1e-6).contains(&eps),
        "{eps}: the smallest is about −2e-10"
    );
    // All the mass scanned and s1 = δ = 0.75 ≤ the target: −∞ was guessed and returned, but
    // the confirming sum is rounded up, δ(−∞) = 0.75·(1 + 12u) > 0.75.
    let pmf = LossPmf {
        h: 1.0,
        offset: 0,
        probs: vec![0.5, 0.25],
        inf: 0.0,
        err: 0.0,
    };
    assert!(pmf.delta(f64::NEG_INFINITY) > 0.75);
    let eps = pmf.epsilon(0.75).unwrap();
    assert!(eps.is_finite() && pmf.delta(eps) <= 0.75, "{eps}");
    // A NaN error is refused (the search looped for ever on it; found by review).
    let nan = LossPmf {
        err: f64::NAN,
        ..pmf
    };
    assert_eq!(nan.epsilon(0.75), None);
}

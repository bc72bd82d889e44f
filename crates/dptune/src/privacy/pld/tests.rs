use super::*;

fn cfg() -> PldConfig {
    PldConfig::default()
}

#[test]
fn single_gaussian_matches_balle_wang() {
    // σ = 2, Δ = 1, δ = 1e-5: the exact ε of one Gaussian.
    let p = Pld::gaussian(2.0, 1.0, Neighbours::AddRemove, cfg()).unwrap();
    let exact = crate::privacy::gaussian::gaussian_epsilon(2.0, 1.0, 1e-5).unwrap();
    let e = p.epsilon(1e-5).unwrap();
    assert!(
        e >= exact * (1.0 - 1e-9) && e <= exact * (1.0 + 1e-4),
        "{e} vs {exact}"
    );
}

const GOLDEN: &str = include_str!("../../../tests/data/pld.json");

/// (q, z, steps, delta, eps_lower_bound) of the golden DP-SGD cases.
pub(super) fn golden_dpsgd() -> Vec<(f64, f64, u64, f64, f64)> {
    let v: serde_json::Value = serde_json::from_str(GOLDEN).unwrap();
    v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"].as_str().unwrap().starts_with("pld_dpsgd"))
        .map(|c| {
            let p = &c["inputs"]["parts"][0];
            (
                p["q"].as_f64().unwrap(),
                p["sigma"].as_f64().unwrap(),
                p["times"].as_u64().unwrap(),
                c["inputs"]["delta"].as_f64().unwrap(),
                c["expected"]["eps_lower_bound"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn dpsgd_variant(q: f64, z: f64, steps: u64, delta: f64, optimistic: bool) -> (f64, f64, f64) {
    let c = cfg();
    let (remove, add) = mechanisms::subsampled_gaussian(q, z, &c, optimistic).unwrap();
    let remove = remove.power(steps, c.tail).unwrap();
    let add = add.power(steps, c.tail).unwrap();
    let (r, a) = (remove.epsilon(delta).unwrap(), add.epsilon(delta).unwrap());
    (r.max(a), r, a)
}

#[test]
fn wrong_constructions_are_rejected_by_the_lower_bounds() {
    let cases = golden_dpsgd();
    assert_eq!(cases.len(), 3);
    let mut dropped_rejected = 0;
    for (q, z, steps, delta, lower) in cases {
        let (right, remove, add) = dpsgd_variant(q, z, steps, delta, false);
        assert!(
            right >= lower,
            "the real construction must pass: {right} vs {lower}"
        );
        // Rounding every loss down to the grid point below: optimistic, and caught.
        let (wrong, _, _) = dpsgd_variant(q, z, steps, delta, true);
        assert!(
            wrong < lower,
            "optimistic rounding must fall below: {wrong} vs {lower}"
        );
        // Keeping one direction only (either one) is caught on some golden case.
        if remove.min(add) < lower {
            dropped_rejected += 1;
        }
    }
    assert!(
        dropped_rejected >= 1,
        "a dropped direction must be caught somewhere"
    );
}

const LAPLACE_EXACT: &str = include_str!("../../../tests/data/laplace_exact.json");

#[test]
fn laplace_compositions_match_their_closed_form() {
    // The exact ε of five Laplace compositions (`tests/data/laplace_exact.json`, computed by
    // `laplace_exact.py` in closed form at 50 digits, independently of this crate: one step, the
    // golden case b = 1, T = 20, and steps where atoms at −Δ/b and the box of the continuous
    // part matter). The golden lower bound of b = 1, T = 20 (an optimistic PLD at 2e-5) lies
    // 2e-5 (relative) below the exact ε; this test leaves an optimistic error no room. The
    // composed PLD on the default grid must be at or above the exact ε (valid) and within 1e-5
    // of it, relative (tight; measured: 4e-10 to 1.0e-6); the same construction with every loss
    // rounded down must fall below it (measured: 1e-10 to 2.5e-5 below).
    let v: serde_json::Value = serde_json::from_str(LAPLACE_EXACT).unwrap();
    let cases = v["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for c in cases {
        let (b, sensitivity) = (c["b"].as_f64().unwrap(), c["sensitivity"].as_f64().unwrap());
        let (steps, delta) = (c["times"].as_u64().unwrap(), c["delta"].as_f64().unwrap());
        let exact: f64 = c["eps_exact"].as_str().unwrap().parse().unwrap();
        let one = Pld::laplace(b, sensitivity, Neighbours::AddRemove, cfg()).unwrap();
        let right = one.self_compose(steps).unwrap().epsilon(delta).unwrap();
        // Every loss rounded down to the grid point below: optimistic.
        let optimistic = mechanisms::laplace(sensitivity / b, &cfg(), true).unwrap();
        let wrong = optimistic
            .power(steps, cfg().tail)
            .unwrap()
            .epsilon(delta)
            .unwrap();
        // The decimal reference is within 1e-25 of the truth; its f64 within half an ulp.
        assert!(
            right >= exact * (1.0 - f64::EPSILON),
            "{}: {right} < {exact}",
            c["id"]
        );
        assert!(
            right <= exact * (1.0 + 1e-5),
            "{}: {right} vs {exact}",
            c["id"]
        );
        assert!(wrong < exact, "{}: optimistic {wrong} vs {exact}", c["id"]);
    }
}

/// The exact ε at δ of `steps` compositions of a law with finitely many losses, the reference for
/// the mechanisms whose losses are atoms: `atoms` are (loss in units of `unit`, probability under
/// P), `inf` the probability of loss +∞ per step. The composed law is the direct convolution
/// (at most a few thousand atoms), δ(ε) its hockey-stick sum, and ε the bisection of δ(ε) = δ to
/// 1e-15; none of it is the crate's construction.
fn exact_atoms_epsilon(atoms: &[(i64, f64)], unit: f64, inf: f64, steps: u32, delta: f64) -> f64 {
    let mut law = std::collections::BTreeMap::from([(0i64, 1.0f64)]);
    for _ in 0..steps {
        let mut next = std::collections::BTreeMap::new();
        for (&k, &p) in &law {
            for &(j, q) in atoms {
                *next.entry(k + j).or_insert(0.0) += p * q;
            }
        }
        law = next;
    }
    let inf_mass = -((steps as f64) * (-inf).ln_1p()).exp_m1();
    let delta_at = |eps: f64| {
        inf_mass
            + exact_sum(
                law.iter()
                    .filter(|&(&k, _)| k as f64 * unit > eps)
                    .map(|(&k, &p)| -p * (eps - k as f64 * unit).exp_m1()),
            )
    };
    let (mut lo, mut hi) = (0.0, *law.keys().last().unwrap() as f64 * unit);
    while hi - lo > 1e-15 * hi {
        let mid = 0.5 * (lo + hi);
        if delta_at(mid) > delta {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

#[test]
fn compositions_of_atom_mechanisms_match_the_direct_convolution() {
    // Pure ε, k-ary randomized response, the discrete Laplace and (ε, δ) worst cases, composed
    // by the crate (lattice or FFT, whichever it takes) against the direct convolution of their
    // atoms. Valid: at or above the exact ε (its bisection's 1e-15 aside). Tight: within 5e-5,
    // relative (measured: 1e-9 to 1.0e-6, and 2.2e-5 for (0.3, 1e-7): the spectrum of two atoms
    // does not decay, so the FFT charge, 2.1e-9 of δ there, is paid at every frequency). The δ
    // put each exact ε well inside the support (randomized response 4.67 of 10, discrete
    // Laplace 20.4 of 30), so many atoms count. The per-step masses are the textbook ones, as in
    // `mechanisms` (a wrong mass there would be wrong here too); what this checks is the
    // discretisation and the composition. Teeth, coarse (4e-4 to 1e-1 below; the Laplace test's
    // optimistic variant is the fine one): the same mechanism with its loss rounded down to the
    // grid point below (ε = 0.12345 → 0.1234), or one step fewer, falls below the exact ε.
    let n = Neighbours::AddRemove;
    let rr = |eps: f64, k: u32| {
        let top = 1.0 / (1.0 + f64::from(k - 1) * (-eps).exp());
        let e = (-eps).exp() * top;
        vec![(1, top), (-1, e), (0, f64::from(k - 2) * e)]
    };
    let dlap = |t: f64, d: i64| {
        // In units of 1/t: −d w.p. e^{−d/t}/(1 + e^{−1/t}), d w.p. 1/(1 + e^{−1/t}), 2o − d
        // w.p. (1 − e^{−1/t})/(1 + e^{−1/t})·e^{−(d−o)/t} for 0 < o < d.
        let decay = (-1.0 / t).exp();
        let mut v = vec![
            (-d, (-(d as f64) / t).exp() / (1.0 + decay)),
            (d, 1.0 / (1.0 + decay)),
        ];
        let norm = (1.0 - decay) / (1.0 + decay);
        v.extend((1..d).map(|o| (2 * o - d, norm * (-((d - o) as f64) / t).exp())));
        v
    };
    let approx_atoms = |eps: f64, d0: f64| {
        let top = (1.0 - d0) / (1.0 + (-eps).exp());
        vec![(1, top), (-1, (-eps).exp() * top)]
    };
    struct Case {
        name: &'static str,
        pld: Pld,
        wrong: Pld,
        wrong_steps: u32,
        atoms: Vec<(i64, f64)>,
        unit: f64,
        inf: f64,
        steps: u32,
        delta: f64,
    }
    let c = cfg();
    let cases = [
        Case {
            name: "pure 0.5, T 30",
            pld: Pld::pure(0.5, n, c).unwrap(),
            wrong: Pld::pure(0.5, n, c).unwrap(),
            wrong_steps: 29,
            atoms: rr(0.5, 2),
            unit: 0.5,
            inf: 0.0,
            steps: 30,
            delta: 1e-5,
        },
        Case {
            name: "pure 0.12345 (between grid points), T 40",
            pld: Pld::pure(0.12345, n, c).unwrap(),
            wrong: Pld::pure(0.1234, n, c).unwrap(),
            wrong_steps: 40,
            atoms: rr(0.12345, 2),
            unit: 0.12345,
            inf: 0.0,
            steps: 40,
            delta: 1e-5,
        },
        Case {
            name: "randomized response 1, k 5, T 10",
            pld: Pld::randomized_response(1.0, 5, n, c).unwrap(),
            wrong: Pld::randomized_response(1.0, 5, n, c).unwrap(),
            wrong_steps: 9,
            atoms: rr(1.0, 5),
            unit: 1.0,
            inf: 0.0,
            steps: 10,
            delta: 0.1,
        },
        Case {
            name: "discrete Laplace t 2, Δ 3, T 20",
            pld: Pld::discrete_laplace(2.0, 3.0, n, c).unwrap(),
            wrong: Pld::discrete_laplace(2.0, 3.0, n, c).unwrap(),
            wrong_steps: 19,
            atoms: dlap(2.0, 3),
            unit: 0.5,
            inf: 0.0,
            steps: 20,
            delta: 0.1,
        },
        Case {
            name: "(0.3, 1e-7), T 50",
            pld: Pld::approx(0.3, 1e-7, n, c).unwrap(),
            wrong: Pld::approx(0.3, 1e-7, n, c).unwrap(),
            wrong_steps: 49,
            atoms: approx_atoms(0.3, 1e-7),
            unit: 0.3,
            inf: 1e-7,
            steps: 50,
            delta: 1e-5,
        },
    ];
    for k in cases {
        let exact = exact_atoms_epsilon(&k.atoms, k.unit, k.inf, k.steps, k.delta);
        let right = k
            .pld
            .self_compose(k.steps.into())
            .unwrap()
            .epsilon(k.delta)
            .unwrap();
        let wrong = k
            .wrong
            .self_compose(k.wrong_steps.into())
            .unwrap()
            .epsilon(k.delta)
            .unwrap();
        assert!(
            right >= exact * (1.0 - 1e-14),
            "{}: {right} < {exact}",
            k.name
        );
        assert!(
            right <= exact * (1.0 + 5e-5),
            "{}: {right} vs {exact}",
            k.name
        );
        assert!(wrong < exact, "{}: wrong {wrong} vs {exact}", k.name);
    }
}

#[test]
fn an_uncharged_tail_is_rejected_and_a_charged_one_is_valid() {
    // Ten Gaussians with σ = 2 (golden case pld_gauss_s2_T10, eps_exact = 7.511275900744784),
    // built with a deliberately fat tail of 1e-6 per side.
    let exact = 7.511275900744784;
    let fat = PldConfig {
        interval: 1e-4,
        tail: 1e-6,
    };
    let one = mechanisms::gaussian(2.0, &fat, false).unwrap();
    let charged = one.power(10, fat.tail).unwrap();
    let e = charged.epsilon(1e-5).unwrap();
    assert!(e >= exact, "charged tail is valid: {e}");
    let mut dropped = one.clone();
    dropped.inf = 0.0;
    let wrong = dropped.power(10, fat.tail).unwrap();
    let mut wrong = wrong;
    wrong.inf = 0.0;
    let w = wrong.epsilon(1e-5).unwrap();
    assert!(w < exact, "dropping the tail must be caught: {w}");
}

/// Neumaier's compensated sum, so the check sees the discretisation and not the summation
/// (shared by the tests of the submodules).
pub(super) fn exact_sum(values: impl Iterator<Item = f64>) -> f64 {
    let (mut s, mut c) = (0.0f64, 0.0f64);
    for v in values {
        let t = s + v;
        c += if s.abs() >= v.abs() {
            (s - t) + v
        } else {
            (v - t) + s
        };
        s = t;
    }
    s + c
}

/// The largest difference of upper tail sums Σ_{i ≥ j} of two laws on the same grid: it bounds
/// the difference of every δ(ε) (each weight (1 − e^{ε−l})₊ rises from 0 to below 1 in l).
pub(super) fn tail_distance(a: &LossPmf, b: &LossPmf) -> f64 {
    let at = |l: &LossPmf, j: i64| {
        usize::try_from(j - l.offset)
            .ok()
            .and_then(|i| l.probs.get(i).copied())
            .unwrap_or(0.0)
    };
    let from = a.offset.min(b.offset);
    let to = (a.offset + a.len() as i64).max(b.offset + b.len() as i64);
    let (mut tail, mut distance) = (a.inf - b.inf, (a.inf - b.inf).abs());
    for j in (from..to).rev() {
        tail += at(a, j) - at(b, j);
        distance = distance.max(tail.abs());
    }
    distance
}

#[test]
fn discretised_mass_is_one_within_the_quadrature_allowance() {
    let c = cfg();
    let mut laws = vec![
        mechanisms::gaussian(0.7, &c, false).unwrap(),
        mechanisms::gaussian(8.0, &c, false).unwrap(),
        mechanisms::laplace(1.0, &c, false).unwrap(),
        mechanisms::discrete_gaussian(3.0, 1, &c).unwrap(),
        mechanisms::discrete_laplace(2.0, 3, &c).unwrap(),
    ];
    for (q, z) in [(0.01, 1.0), (0.001, 0.8), (0.1, 2.0)] {
        let (r, a) = mechanisms::subsampled_gaussian(q, z, &c, false).unwrap();
        laws.push(r);
        laws.push(a);
        let (r, a) = mechanisms::subsampled_laplace(q, 1.0 / z, &c, false).unwrap();
        laws.push(r);
        laws.push(a);
    }
    for (i, l) in laws.iter().enumerate() {
        let total = exact_sum(l.probs.iter().copied().chain([l.inf]));
        assert!(
            (total - 1.0).abs() <= discretise::QUADRATURE_ERROR / 10.0,
            "law {i}: mass {total}"
        );
        // Q's mass (Σ p·e^{−l}) is kept by connect-the-dots and never exceeds 1.
        let q_mass: f64 = (0..l.len()).map(|j| l.probs[j] * (-l.loss(j)).exp()).sum();
        assert!(q_mass <= 1.0 + 1e-12, "law {i}: Q-mass {q_mass}");
    }
}

#[test]
fn laplace_closed_form_matches_the_quadrature() {
    // Builder::half_exponential (closed-form connect-the-dots of the Laplace density), with
    // ±r on and off the grid, a grid coarser than the whole segment, and a large r. Connect-the-
    // dots keeps each bucket's P-mass and Q-mass, and both are 0.5·(1 − e^{−r}) here: a wrong
    // split (shares swapped, the wrong tanh) breaks the Q-mass. Against the Gauss–Legendre
    // quadrature it replaced, the upper tail sums (which bound every difference of δ(ε))
    // agree up to that quadrature's own upward bias (its cubic upper bound on the split, a
    // relative h³/24 of a bucket's share: 1e-13 of tail mass at h = 3e-3).
    use super::discretise::{Builder, Segment, QUADRATURE_ERROR};
    for (r, h) in [
        (1.0, 1e-4),
        (0.37, 1e-4),
        (2.5, 3e-3),
        (1e-3, 1e-4),
        (5e-5, 1e-4),
        (40.0, 1e-3),
    ] {
        let mut quadrature = Builder::new(h, -r, r).unwrap();
        quadrature.segment(&Segment {
            lo: 0.0,
            hi: r,
            at: &|o| (0.5 * (o - r).exp(), 2.0 * o - r),
            output_at: &|l| 0.5 * (l + r),
            step: 0.125,
        });
        let quadrature = quadrature.finish();
        let mut closed = Builder::new(h, -r, r).unwrap();
        closed.half_exponential(0.25, -r, r);
        let closed = closed.finish();
        // Upper tail sums do not count the quadrature's upward nudge within a bucket as a
        // difference of laws.
        let distance = tail_distance(&quadrature, &closed);
        let mass = exact_sum(closed.probs.iter().copied());
        let q_mass =
            exact_sum((0..closed.len()).map(|i| closed.probs[i] * (-closed.loss(i)).exp()));
        let expected = 0.5 * (1.0 - (-r).exp());
        assert!(
            distance <= 1e-12
                && (mass - expected).abs() <= QUADRATURE_ERROR / 100.0
                && (q_mass - expected).abs() <= QUADRATURE_ERROR / 10.0,
            "r = {r}, h = {h}: tail sums differ by {distance:e}, P-mass {mass}, Q-mass {q_mass}, \
             both should be {expected}"
        );
    }
}

#[test]
fn worked_numbers_for_the_discrete_and_pure_mechanisms() {
    let n = Neighbours::AddRemove;
    // Pure ε by randomized response: loss ε w.p. p = e^ε/(1 + e^ε), so δ(ε′) = p(1 − e^{ε′−ε})
    // below ε and ε(δ) = ε + ln(1 − δ/p).
    let e = Pld::pure(1.0, n, cfg()).unwrap().epsilon(1e-6).unwrap();
    let p = 1f64.exp() / (1.0 + 1f64.exp());
    let exact = 1.0 + (-1e-6 / p).ln_1p();
    assert!(e >= exact && e <= exact + 1e-9, "{e} vs {exact}");
    // (ε, δ) worst case: exactly ε at its own δ, infinite below it.
    let a = Pld::approx(0.5, 1e-6, n, cfg()).unwrap();
    let e = a.epsilon(2e-6).unwrap();
    assert!((0.499..=0.5 + 1e-9).contains(&e), "{e}");
    assert!(a.epsilon(5e-7).is_err());
    // One Laplace with r = 1: δ(ε) = 1 − e^{(ε−1)/2} for ε < 1, so δ(0.5) = 1 − e^{−1/4}.
    let l = Pld::laplace(1.0, 1.0, n, cfg()).unwrap();
    let d = l.delta(0.5).unwrap();
    let exact = 1.0 - (-0.25f64).exp();
    assert!(d >= exact && d <= exact + 1e-9, "{d} vs {exact}");
    // Discrete Laplace t = 2, Δ = 3 is 1.5-DP: ε(1e-12) ≤ 1.5 and δ(1.5) ≈ 0.
    let dl = Pld::discrete_laplace(2.0, 3.0, n, cfg()).unwrap();
    assert!(dl.epsilon(1e-12).unwrap() <= 1.5 + 1e-9);
    assert!(dl.delta(1.5).unwrap() <= 1e-12);
    // Subsampling: ε(δ) ≤ ln(1 + q(e^r − 1)) (amplification of pure DP), and q = 1 is Laplace.
    let s = Pld::subsampled_laplace(0.1, 1.0, 1.0, cfg()).unwrap();
    let bound = (0.1 * 1f64.exp_m1()).ln_1p();
    // Connect-the-dots is exact at grid points and above the truth between them, so ε(δ) may
    // exceed the largest loss by at most one grid step.
    assert!(s.epsilon(1e-9).unwrap() <= bound + cfg().interval);
    let q1 = Pld::subsampled_laplace(1.0, 1.0, 1.0, cfg()).unwrap();
    assert_eq!(q1.delta(0.5).unwrap(), d);
    // Bad input names the parameter.
    assert!(matches!(
        Pld::subsampled_gaussian(0.0, 1.0, 1.0, cfg()),
        Err(Error::InvalidParameter { name: "q", .. })
    ));
    assert!(matches!(
        Pld::discrete_gaussian(1.0, 1.5, n, cfg()),
        Err(Error::InvalidParameter {
            name: "sensitivity",
            ..
        })
    ));
}

#[test]
fn memory_is_bounded_by_the_grid_not_the_steps() {
    let one = dpsgd_pld(0.004, 1.1, 1_000, cfg()).unwrap();
    let many = dpsgd_pld(0.004, 1.1, 10_000, cfg()).unwrap();
    // The window grows like √T (spread of the sum), not like T.
    assert!(
        many.grid_points() < 5 * one.grid_points(),
        "{}",
        many.grid_points()
    );
    let e = many.epsilon(1e-5).unwrap();
    // dp_accounting 0.6.0's PLD: 1.849 (issue 14). Ours is stable under grid refinement
    // (1.841321 at h = 1e-4, 1.841286 at 5e-5, 1.841298 at 2.5e-5, before the componentwise
    // FFT bound; 1.841116 at h = 1e-4 after it), as is q = 0.001, z = 0.8, T = 3000: 0.458892
    // (0.458957 before) vs THEORY.md §16a's 0.4589, i.e. [0.45885, 0.45895) (dp_accounting's
    // pessimistic PLD: 0.4588697 at h = 1e-4, 0.4588183 at 2e-5).
    assert!((1.835..1.849).contains(&e), "{e}");
    let small = dpsgd_epsilon(0.001, 0.8, 3000, 1e-5).unwrap();
    assert!((0.45885..0.4591).contains(&small), "{small}");
    // The charged floating-point error grows like T (module docs of pmf) and stays far below δ.
    for d in [&many.forward, many.backward.as_ref().unwrap()] {
        assert!(
            d.err < 1e-7 && d.inf < 1e-12,
            "err {:e}, inf {:e}",
            d.err,
            d.inf
        );
    }
}

#[test]
fn ten_gaussians_are_one_and_the_shortcut_agrees_with_the_fft() {
    // Golden pld_gauss_s2_T10: eps_exact = 7.511275900744784.
    let part: PartSpec =
        serde_json::from_str(r#"{"mechanism": "gaussian", "sigma": 2, "times": 10}"#).unwrap();
    let n = Neighbours::AddRemove;
    let shortcut = part.composed_pld(n, cfg()).unwrap().epsilon(1e-5).unwrap();
    let fft = part
        .pld(n, cfg())
        .unwrap()
        .self_compose(10)
        .unwrap()
        .epsilon(1e-5)
        .unwrap();
    let exact = 7.511275900744784;
    assert!(
        shortcut >= exact && shortcut <= exact * (1.0 + 1e-6),
        "{shortcut}"
    );
    assert!(
        fft >= exact && (fft - shortcut).abs() <= 1e-5 * exact,
        "{fft} vs {shortcut}"
    );
}

#[test]
fn the_gaussian_shortcut_checks_its_parameters_like_the_single_mechanism() {
    let n = Neighbours::AddRemove;
    for json in [
        r#"{"mechanism": "gaussian", "sigma": -1, "times": 10}"#,
        r#"{"mechanism": "gaussian", "sigma": 1, "sensitivity": 0, "times": 10}"#,
        r#"{"mechanism": "gaussian", "sigma": 1, "b": 1, "times": 10}"#,
        r#"{"mechanism": "gaussian", "times": 10}"#,
    ] {
        let part: PartSpec = serde_json::from_str(json).unwrap();
        let (one, many) = (part.pld(n, cfg()), part.composed_pld(n, cfg()));
        assert!(one.is_err() && many.is_err(), "{json}");
        assert_eq!(
            format!("{:?}", one.unwrap_err()),
            format!("{:?}", many.unwrap_err()),
            "{json}"
        );
    }
    let bad = PldConfig {
        interval: 2.0,
        ..cfg()
    };
    let part: PartSpec =
        serde_json::from_str(r#"{"mechanism": "gaussian", "sigma": 1, "times": 10}"#).unwrap();
    assert!(part.composed_pld(n, bad).is_err());
}

/// Issue 17: σ = 1e-3 made the loss window of one DP-SGD step infinite, and the grid size
/// `(hi − lo + 1) as usize` overflowed into a capacity-overflow panic. Every constructor and the
/// self-composition now refuse a grid beyond `MAX_POINTS` naming the parameter that drives it.
#[test]
fn grids_too_large_to_hold_are_refused_naming_the_parameter() {
    let named = |r: Result<Pld>, name: &str| match r {
        Err(Error::InvalidParameter {
            name: n, reason, ..
        }) => {
            assert_eq!(n, name, "{reason}");
            assert!(reason.contains("grid points are held"), "{reason}");
        }
        other => panic!("{name}: expected a refusal, got {other:?}"),
    };
    let c = cfg();
    named(Pld::subsampled_gaussian(0.01, 1e-3, 1.0, c), "sigma");
    named(Pld::subsampled_gaussian(1.0, 1e-3, 1.0, c), "sigma");
    named(
        Pld::gaussian(1e-300, 1.0, Neighbours::AddRemove, c),
        "sigma",
    );
    // Losses near 5e35 with a spread of 1e19: the grid indices pass 2^53, where the window
    // used to collapse onto one float and the bucket walk never ended (a hang).
    for sigma in [1e-18, 1e-12, 1e-25] {
        named(Pld::gaussian(sigma, 1.0, Neighbours::AddRemove, c), "sigma");
        named(Pld::subsampled_gaussian(1.0, sigma, 1.0, c), "sigma");
    }
    // Said as such: the window collapsed to a float or two, so no count of points describes it.
    let reason = Pld::gaussian(1e-18, 1.0, Neighbours::AddRemove, c)
        .unwrap_err()
        .to_string();
    assert!(
        reason.contains("indices of 2^53") && !reason.contains("9.0e15"),
        "{reason}"
    );
    named(Pld::laplace(1e-300, 1.0, Neighbours::AddRemove, c), "b");
    named(Pld::subsampled_laplace(0.5, 1e-300, 1.0, c), "b");
    named(
        Pld::discrete_laplace(1e-300, 1.0, Neighbours::AddRemove, c),
        "t",
    );
    named(Pld::pure(1e300, Neighbours::AddRemove, c), "eps");
    named(Pld::approx(1e300, 1e-6, Neighbours::AddRemove, c), "eps");
    // A grid that is fine for one step but not for 1e9 of them (q = 1: no subsampling).
    let one = Pld::subsampled_gaussian(1.0, 0.8, 1.0, c).unwrap();
    named(one.self_compose(1_000_000_000), "times");
    // The largest step count: the window is astronomically wide; refused or infinite, never a
    // panic or an overflowed shift.
    let r = Pld::subsampled_gaussian(0.01, 0.8, 1.0, c)
        .unwrap()
        .self_compose(u64::MAX);
    assert!(r.is_err() || r.unwrap().epsilon(1e-5).is_err());
    // Just inside: σ = 0.05 on the default grid fits.
    assert!(Pld::subsampled_gaussian(0.01, 0.05, 1.0, c).is_ok());
}

#[test]
fn the_grid_size_check_cannot_overflow() {
    use super::grid_limit::{GridTooLarge, MAX_POINTS};
    assert_eq!(GridTooLarge::check(5.0), Ok(5));
    assert_eq!(GridTooLarge::check(MAX_POINTS as f64), Ok(MAX_POINTS));
    for bad in [
        MAX_POINTS as f64 + 1.0,
        f64::INFINITY,
        f64::NAN,
        0.0,
        -3.0,
        1e300,
    ] {
        assert!(GridTooLarge::check(bad).is_err(), "{bad}");
    }
}

/// (ε lower bound, dp_accounting's ε) of the golden discrete Gaussian case (σ = 3, T = 30).
fn golden_dgauss() -> (f64, f64) {
    let v: serde_json::Value = serde_json::from_str(GOLDEN).unwrap();
    let c = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "pld_dgauss_s3_T30")
        .unwrap();
    let x = &c["expected"];
    (
        x["eps_lower_bound"].as_f64().unwrap(),
        x["eps_dp_accounting_pld"].as_f64().unwrap(),
    )
}

#[test]
fn discrete_gaussians_composed_on_their_progression_are_valid_and_tighter() {
    let (lower, dp_accounting) = golden_dgauss();
    let n = Neighbours::AddRemove;
    let exact = Pld::discrete_gaussian_times(3.0, 1.0, 30, n, cfg()).unwrap();
    let fft = Pld::discrete_gaussian(3.0, 1.0, n, cfg())
        .unwrap()
        .self_compose(30)
        .unwrap();
    let (e, f) = (exact.epsilon(1e-5).unwrap(), fft.epsilon(1e-5).unwrap());
    assert!(e >= lower && e <= f && e <= dp_accounting, "{e} vs {f}");
    // Worked number: ε of the exact composed law on its progression, no grid (30-fold
    // `numpy.convolve` of the same truncated pmf, bisection on δ(ε) = Σ p(1 − e^{ε−l})₊):
    // 8.941992720621174. Connect-the-dots is exact at the grid points and above between them.
    assert!(
        (8.941992720621174..=8.941992720621174 + 1e-6).contains(&e),
        "{e}"
    );
    // The memory is the composed window, and the grid points in it are mostly empty.
    assert!(
        exact.grid_points() <= fft.grid_points(),
        "{}",
        exact.grid_points()
    );
    // A progression too long for direct convolution (σ = 90: about 1,640 indices) or finer
    // than the grid (σ = 2000) falls back to the FFT, with the same answer as composing by hand.
    for sigma in [90.0, 2000.0] {
        let wide = Pld::discrete_gaussian_times(sigma, 1.0, 3, n, cfg()).unwrap();
        let by_hand = Pld::discrete_gaussian(sigma, 1.0, n, cfg())
            .unwrap()
            .self_compose(3)
            .unwrap();
        assert_eq!(wide, by_hand, "{sigma}");
    }
    assert!(matches!(
        Pld::discrete_gaussian_times(3.0, 1.0, 0, n, cfg()),
        Err(Error::InvalidParameter { name: "times", .. })
    ));
}

#[test]
fn an_uncharged_progression_tail_is_rejected() {
    // Cutting 1e-7 per side at every convolution is valid when the top goes to +∞ and invalid
    // when it is dropped: the lower bound of the golden case catches the second.
    let (lower, _) = golden_dgauss();
    let c = cfg();
    let one = mechanisms::discrete_gaussian_progression(3.0, 1, &c);
    let fat = one.power(30, 1e-7).unwrap();
    let charged = Pld::symmetric(
        fat.discretise(c.interval).unwrap(),
        Neighbours::AddRemove,
        c,
    );
    assert!(charged.epsilon(1e-5).unwrap() >= lower);
    let mut dropped = fat.discretise(c.interval).unwrap();
    dropped.inf = 0.0;
    let dropped = Pld::symmetric(dropped, Neighbours::AddRemove, c);
    let w = dropped.epsilon(1e-5).unwrap();
    assert!(
        w < lower,
        "dropping the cut tail must be caught: {w} vs {lower}"
    );
}

/// The FFT length is the smallest even 2^a·3^b·5^c at or above the width: checked against a
/// plain search upward (which a length with another prime factor, an odd length or one
/// further up would fail).
#[test]
fn fft_lengths_are_the_nearest_even_five_smooth_numbers() {
    let smooth = |mut m: usize| {
        for p in [2, 3, 5] {
            while m.is_multiple_of(p) {
                m /= p;
            }
        }
        m == 1
    };
    let search = |w: usize| (w.max(2)..).find(|&n| n % 2 == 0 && smooth(n)).unwrap();
    for w in (1..2000).chain([100_000, 131_073, 262_145, 400_001, 1 << 20]) {
        assert_eq!(fft::fft_len(w), search(w), "width {w}");
    }
    assert_eq!(fft::fft_len(400_001), 405_000);
}

/// The faster length is the smallest 2^k or 3·2^k (k ≥ 1) at or above its argument: checked
/// against a plain search upward (a length of another form, an odd one or one further up
/// would fail).
#[test]
fn fast_lengths_are_the_nearest_powers_of_two_or_three_times_them() {
    let fast = |m: usize| m.is_power_of_two() || (m.is_multiple_of(3) && (m / 3).is_power_of_two());
    let search = |w: usize| (w.max(2)..).find(|&n| n % 2 == 0 && fast(n)).unwrap();
    for w in (1..5000).chain([131_073, 262_145, 393_216, 393_217, 400_041]) {
        assert_eq!(fft::fast_len(w), search(w), "width {w}");
    }
}

/// Laplace b = 1, T = 20 on the default grid: the window is the whole support, 400,021 points,
/// and the lowest sums are rare enough ((Σ of the lowest 6,805 points)^20 ≈ 1.8e-12) that the
/// transform is 393,216 = 2^17·3 points and they wrap onto the highest losses. Checked against
/// nineteen linear convolutions (no wrap; each cut of at most `tail` at the bottom moves mass
/// up, at the top to +∞): the wrapped law must not lie below them (it would if the wrap moved
/// mass down, e.g. if the top sums wrapped instead), and may lie above them by no more than the
/// floating-point errors and the wrap's budget (a sixteenth of the error charged).
#[test]
fn a_transform_shorter_than_the_window_only_moves_the_lowest_sums_up() {
    let c = cfg();
    let one = mechanisms::laplace(1.0, &c, false).unwrap();
    let wrapped = one.power(20, c.tail).unwrap();
    let width = 20 * (one.len() - 1) + 1;
    assert_eq!(width, 400_021);
    // The top of the window is the highest sum, and the lowest 6,805 sums are not held.
    let top = |p: &LossPmf| p.offset + p.len() as i64 - 1;
    assert_eq!(top(&wrapped), 20 * top(&one));
    assert!(wrapped.offset >= 20 * one.offset + 6_805 && wrapped.len() <= 393_216);
    let mut chain = one.clone();
    for _ in 1..20 {
        chain = chain.compose(&one, c.tail).unwrap();
    }
    for eps in [0.0, 5.0, 15.0, 18.0, 19.0, 19.1, 19.5, 19.9] {
        let (w, l) = (wrapped.delta(eps), chain.delta(eps));
        let floor = l - chain.err - chain.inf - 19.0 * c.tail;
        assert!(w >= floor, "eps {eps}: {w} below {floor}");
        assert!(
            w <= l + wrapped.err * (1.0 + 1.0 / 16.0),
            "eps {eps}: {w} vs {l} + {}",
            wrapped.err
        );
    }
}

#[test]
fn a_huge_noise_multiplier_is_discretised_not_a_panic() {
    // s = σ/Δ above about 1.3e154 overflowed s² (μ a subnormal, 1/(4μ) = +∞, NaN densities)
    // and panicked in the split; μ is now at least 1e-300. Both ways of getting there, and a
    // multiplier just below the overflow for comparison: ε is tiny and never negative.
    let nb = Neighbours::AddRemove;
    for (sigma, sens) in [(1e160, 1.0), (1.0, 1e-160), (1e300, 1e-5), (1e150, 1.0)] {
        let p = Pld::gaussian(sigma, sens, nb, cfg()).unwrap();
        let eps = p.epsilon(1e-5).unwrap();
        assert!(
            (0.0..1e-3).contains(&eps),
            "sigma {sigma}, sensitivity {sens}: eps {eps}"
        );
    }
}

#[test]
fn extreme_public_parameters_give_an_answer_or_a_typed_error_never_a_panic() {
    // On a coarse grid (small windows) every constructor, across parameters from 1e-300 to
    // 1e300 and sampling rates from 1e-300 to 1: construction, ε and δ queries and a two-fold
    // composition return a number or an error, and never panic. Randomized response, pure and
    // (ε, δ) pairs above ε ≈ 709.8 used to (e^ε/(e^ε + 1) = ∞/∞, a NaN mass into `clamp`).
    // The NaN check is weak: `Pld::epsilon` takes a max and δ a min, which hide a NaN.
    let c = PldConfig {
        interval: 1.0,
        ..PldConfig::default()
    };
    type Make = Box<dyn Fn(f64) -> Result<Pld>>;
    let mut makers: Vec<(&str, Make)> = vec![
        (
            "gaussian",
            Box::new(move |v| Pld::gaussian(v, 1.0, Neighbours::AddRemove, c)),
        ),
        (
            "gaussian replace",
            Box::new(move |v| Pld::gaussian(v, 1.0, Neighbours::Replace, c)),
        ),
        (
            "laplace",
            Box::new(move |v| Pld::laplace(v, 1.0, Neighbours::AddRemove, c)),
        ),
        (
            "discrete gaussian",
            Box::new(move |v| Pld::discrete_gaussian(v, 1.0, Neighbours::AddRemove, c)),
        ),
        (
            "discrete laplace",
            Box::new(move |v| Pld::discrete_laplace(v, 3.0, Neighbours::AddRemove, c)),
        ),
        (
            "randomized response",
            Box::new(move |v| Pld::randomized_response(v, 5, Neighbours::AddRemove, c)),
        ),
        (
            "pure",
            Box::new(move |v| Pld::pure(v, Neighbours::AddRemove, c)),
        ),
        (
            "approx",
            Box::new(move |v| Pld::approx(v, 1e-6, Neighbours::AddRemove, c)),
        ),
    ];
    for q in [1e-300, 1e-3, 0.999_999] {
        makers.push((
            "subsampled gaussian",
            Box::new(move |v| Pld::subsampled_gaussian(q, v, 1.0, c)),
        ));
        makers.push((
            "subsampled laplace",
            Box::new(move |v| Pld::subsampled_laplace(q, v, 1.0, c)),
        ));
    }
    let values = [1e-300, 1e-8, 0.03, 1.0, 709.0, 710.0, 800.0, 1e4, 1e300];
    for (name, make) in &makers {
        for v in values {
            let answer = |r: Result<f64>| {
                assert!(!matches!(r, Ok(x) if x.is_nan()), "{name} at {v}: NaN");
            };
            let Ok(p) = make(v) else { continue };
            answer(p.epsilon(1e-5));
            answer(p.delta(0.5));
            if let Ok(two) = p.self_compose(2) {
                answer(two.epsilon(1e-5));
            }
        }
    }
}

#[test]
fn decoded_laws_with_grid_indices_of_2_53_are_refused() {
    // A law's offset feeds compose and power, which refuse indices of 2^53 or more: a decoded
    // one is held to the same limit (its last index, offset + len − 1, is the one that
    // counts). Just inside, the law comes back equal.
    use crate::privacy::bytes::{Reader, Writer};
    let encode = |offset: i64, len: usize| {
        let pmf = LossPmf {
            h: cfg().interval,
            offset,
            probs: vec![1.0 / len as f64; len],
            inf: 0.0,
            err: 0.0,
        };
        let mut w = Writer(Vec::new());
        Pld::symmetric(pmf, Neighbours::AddRemove, cfg()).write(&mut w);
        w.0
    };
    let decode = |bytes: &[u8]| Pld::read(&mut Reader(bytes));
    let limit = 1i64 << 53;
    for (offset, len) in [(limit - 2, 2), (-limit + 1, 1)] {
        let pld = decode(&encode(offset, len)).unwrap();
        assert_eq!(pld.forward.offset, offset);
    }
    for (offset, len) in [(limit - 1, 2), (limit, 1), (-limit, 1), (i64::MAX, 1)] {
        assert!(
            matches!(
                decode(&encode(offset, len)),
                Err(Error::InvalidParameter { name: "bytes", .. })
            ),
            "offset {offset}, {len} points"
        );
    }
}

/// The calibration's search on a known ε(z) = c/z, target 2 (the answer is c/2), with the grid
/// refusing every z below `refused_below`: found to its precision, and reported as limited by
/// the grid exactly when refusals, not the target, bound it from below, on the halving path
/// (answer below 1) and the doubling path (above 1). Wrong variants each case rejects: one that
/// cannot tell refusals from ε above the target (the old search: it returned 0.8 below as if
/// 0.8 were the smallest noise meeting the target), and one that reports any refusal seen
/// (refusals below an answer the target sets).
#[test]
fn the_calibration_says_when_the_grid_not_the_target_bounds_it() {
    let search = |c: f64, refused_below: f64, tell: bool| {
        let probe = |z: f64| {
            assert!((0.05..=1e4).contains(&z), "probed {z}");
            Ok(if z < refused_below {
                Err(if tell {
                    Failure::Refused(Error::invalid("times", 1, "grid points are held"))
                } else {
                    Failure::Exceeds
                })
            } else if c / z <= 2.0 {
                Ok(c / z)
            } else {
                Err(Failure::Exceeds)
            })
        };
        smallest_verified(probe, 2.0, 1e-5, 1e-4).unwrap()
    };
    let within = |r: &NoiseCalibration, z: f64| {
        r.noise_multiplier >= z && r.noise_multiplier <= z * (1.0 + 1e-4)
    };
    for (c, refused_below, answer, limited) in [
        (1.0, 0.0, 0.5, false),
        (1.0, 0.3, 0.5, false),
        (1.0, 0.8, 0.8, true),
        (8.0, 0.3, 4.0, false),
        (8.0, 3.0, 4.0, false),
        (8.0, 5.0, 5.0, true),
    ] {
        let r = search(c, refused_below, true);
        assert!(within(&r, answer), "{c} {refused_below}: {r:?}");
        assert_eq!(r.grid_limited, limited, "{c} {refused_below}: {r:?}");
        assert_eq!(r.epsilon, c / r.noise_multiplier);
    }
    assert!(
        !search(1.0, 0.8, false).grid_limited,
        "the variant with no teeth"
    );
}

/// Nothing verified up to the top of the range: the failure there is reported as what it was,
/// whatever failed below it (a step count's refusal as itself, one step's window as the grid's,
/// no finite ε as δ's, ε above the target as the target's); a target met at the bottom of the
/// range is refused.
#[test]
fn a_calibration_that_fails_names_the_cause_at_the_top() {
    let name = |r: Result<NoiseCalibration>| match r {
        Err(Error::InvalidParameter { name, .. }) => name,
        other => panic!("{other:?}"),
    };
    let no_eps = || {
        Failure::NoEpsilon(Error::Conversion {
            from: "a".into(),
            to: "b".into(),
            reason: "c".into(),
        })
    };
    let refused = |n: &'static str| Failure::Refused(Error::invalid(n, 1, "x"));
    type Case = (fn() -> Failure, &'static str);
    let cases: [Case; 4] = [
        (
            || Failure::Refused(Error::invalid("times", 1, "x")),
            "times",
        ),
        (
            || Failure::Refused(Error::invalid("sigma", 1, "x")),
            "interval",
        ),
        (no_eps, "delta"),
        (|| Failure::Exceeds, "epsilon"),
    ];
    for (top, expected) in cases {
        // The same failure everywhere, and a different one (each other kind) below the top.
        assert_eq!(
            name(smallest_verified(|_| Ok(Err(top())), 2.0, 1e-5, 1e-9)),
            expected
        );
        for below in [
            refused("sigma"),
            refused("times"),
            no_eps(),
            Failure::Exceeds,
        ] {
            let below = RefCell::new(Some(below));
            let probe = |z: f64| {
                Ok(Err(if z < 1e4 {
                    below.borrow_mut().take().unwrap_or(Failure::Exceeds)
                } else {
                    top()
                }))
            };
            assert_eq!(name(smallest_verified(probe, 2.0, 1e-5, 1e-9)), expected);
        }
    }
    assert_eq!(
        name(smallest_verified(|z| Ok(Ok(z)), 2.0, 1e-5, 1e-4)),
        "epsilon"
    );
}

/// DP-SGD at q = 0.01, T = 1000 calibrated for (2, 1e-5): the ε reported is the PLD's at the
/// z returned, at most 2, and a z 2e-4 lower (twice the precision) no longer meets 2.
#[test]
fn dpsgd_calibration_is_the_smallest_verified_noise() {
    let cfg = PldConfig::default();
    let c = calibrate_dpsgd_noise(0.01, 1000, 2.0, 1e-5, cfg).unwrap();
    let z = c.noise_multiplier;
    assert!(z > 0.8 && z < 1.0 && !c.grid_limited, "{c:?}");
    assert_eq!(
        c.epsilon,
        dpsgd_pld(0.01, z, 1000, cfg)
            .unwrap()
            .epsilon(1e-5)
            .unwrap()
    );
    assert!(c.epsilon <= 2.0);
    let below = dpsgd_pld(0.01, z * (1.0 - 2e-4), 1000, cfg).unwrap();
    assert!(below.epsilon(1e-5).unwrap() > 2.0);
}

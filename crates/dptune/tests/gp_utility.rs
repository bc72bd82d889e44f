//! Acceptance on the bundled diabetes demo (BMI → progression): at ε_select = 1 and
//! ε_predict = 1 the privately selected lengthscale's expected DP test RMSE, averaged over seeds,
//! beats a uniformly random grid choice and is within 25 % of the best grid lengthscale under the
//! same prediction noise. The 50-seed run is `#[ignore]`d (run it with `--release -- --ignored
//! --nocapture`; numbers in docs/GP.md); a 4-seed version (exact EM expectation) runs by default.

use dptune::gp::{
    demo, nonprivate_scores, select_lengthscale, Folds, Kernel, MveeConfig, OutputRange,
    SelectionConfig, Utility,
};
use dptune::noise::SecureRng;

struct Summary {
    selected: f64,
    expected_em: f64,
    uniform: f64,
    best_fixed: f64,
    oracle: f64,
    per_l: Vec<f64>,
    nonprivate_best: f64,
}

fn run(seeds: u64, utility: Utility, eps_select: f64, eps_predict: f64) -> Summary {
    let (x, y) = demo::diabetes_bmi().unwrap();
    let range = OutputRange::new(demo::Y_RANGE.0, demo::Y_RANGE.1).unwrap();
    let grid = demo::default_grid();
    let delta = 1e-5;
    let cfg = SelectionConfig {
        grid: grid.clone(),
        signal_var: demo::SIGNAL_VAR,
        noise_var: demo::NOISE_VAR,
        folds: 5,
        eps_select,
        eps_predict,
        delta,
        utility,
        mvee: MveeConfig::default(),
    };
    let mut sum_sel = 0.0;
    let mut sum_em = 0.0;
    let mut sum_uniform = 0.0;
    let mut sum_oracle = 0.0;
    let mut sum_np = 0.0;
    let mut per_l = vec![0.0; grid.len()];
    for seed in 0..seeds {
        let mut rng = SecureRng::seeded(1000 + seed);
        let (tr, te) = demo::holdout_split(x.nrows(), 0.2, &mut rng).unwrap();
        let (x_tr, y_tr) = (demo::rows(&x, &tr), demo::pick(&y, &tr));
        let (x_te, y_te) = (demo::rows(&x, &te), demo::pick(&y, &te));
        let errs: Vec<(f64, f64)> = grid
            .iter()
            .map(|&l| {
                let k = Kernel::new(l, demo::SIGNAL_VAR, demo::NOISE_VAR).unwrap();
                demo::expected_dp_rmse(
                    &x_tr,
                    &y_tr,
                    &x_te,
                    &y_te,
                    range,
                    k,
                    eps_predict,
                    delta,
                    &MveeConfig::default(),
                )
                .unwrap()
            })
            .collect();
        let dp: Vec<f64> = errs.iter().map(|e| e.0).collect();
        let sel = select_lengthscale(&x_tr, &y_tr, range, &cfg, &mut rng).unwrap();
        sum_sel += dp[sel.value.index];
        let folds = Folds::random(tr.len(), 5, &mut rng).unwrap();
        let c = range.clip(&y_tr).unwrap().centred;
        let scores = nonprivate_scores(&x_tr, &c, range, &cfg, &folds).unwrap();
        let p = scores.em_probabilities(eps_select).unwrap();
        sum_em += p.iter().zip(&dp).map(|(p, e)| p * e).sum::<f64>();
        sum_uniform += dp.iter().sum::<f64>() / dp.len() as f64;
        sum_oracle += dp.iter().cloned().fold(f64::INFINITY, f64::min);
        sum_np += errs.iter().map(|e| e.1).fold(f64::INFINITY, f64::min);
        for (a, e) in per_l.iter_mut().zip(&dp) {
            *a += e;
        }
    }
    let s = seeds as f64;
    per_l.iter_mut().for_each(|v| *v /= s);
    Summary {
        selected: sum_sel / s,
        expected_em: sum_em / s,
        uniform: sum_uniform / s,
        best_fixed: per_l.iter().cloned().fold(f64::INFINITY, f64::min),
        oracle: sum_oracle / s,
        per_l,
        nonprivate_best: sum_np / s,
    }
}

/// The exact expectation over the EM draw is always checked; the average over the sampled draws
/// only with enough seeds for it to settle (a few seeds are dominated by draw-to-draw variation).
fn check(seeds: u64, sampled: bool) {
    let s = run(seeds, Utility::CrossValidation, 1.0, 1.0);
    println!(
        "CV, {seeds} seeds: selected {:.2}, EM expectation {:.2}, uniform {:.2}, best fixed ℓ {:.2}, \
         per-split oracle {:.2}, non-private best {:.2}; per ℓ {:?}",
        s.selected, s.expected_em, s.uniform, s.best_fixed, s.oracle, s.nonprivate_best,
        s.per_l.iter().map(|v| (v * 100.0).round() / 100.0).collect::<Vec<_>>()
    );
    if sampled {
        assert!(
            s.selected < s.uniform,
            "selected {} vs uniform {}",
            s.selected,
            s.uniform
        );
        assert!(
            s.selected <= 1.25 * s.best_fixed,
            "selected {} vs best {}",
            s.selected,
            s.best_fixed
        );
    }
    assert!(s.expected_em < s.uniform && s.expected_em <= 1.25 * s.best_fixed);
}

#[test]
fn private_choice_beats_uniform_small() {
    check(4, false);
}

#[test]
#[ignore = "50 seeds: run with --release -- --ignored --nocapture"]
fn private_choice_beats_uniform_50_seeds() {
    check(50, true);
}

#[test]
#[ignore = "CV vs LML comparison for docs/GP.md: --release -- --ignored --nocapture"]
fn compare_cv_and_lml() {
    for (eps_sel, eps_pred) in [(1.0, 1.0), (0.5, 1.0), (2.0, 1.0), (1.0, 0.5)] {
        for u in [Utility::CrossValidation, Utility::LogMarginalLikelihood] {
            let s = run(20, u, eps_sel, eps_pred);
            println!(
                "{u:?} eps_sel={eps_sel} eps_pred={eps_pred}: selected {:.2}, EM expectation {:.2}, \
                 uniform {:.2}, best fixed {:.2}, oracle {:.2}",
                s.selected, s.expected_em, s.uniform, s.best_fixed, s.oracle
            );
        }
    }
}

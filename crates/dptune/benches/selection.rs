//! Selection over m = 10, 10³, 10⁶ candidates (one core): accuracy-like scores in [0, 1] with
//! Δ = 10⁻³, ε = 1 (typical), and a worst case for rejection (one candidate far above the rest).

use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::select::{
    ExponentialMechanism, Goal, LaplaceNoisyMax, PermuteAndFlip, Scores, Selector, Sensitivity,
};

fn main() {
    divan::main();
}

const SIZES: [usize; 3] = [10, 1_000, 1_000_000];

/// Accuracy-like scores in [0, 1] (one per candidate, deterministic).
fn scores(m: usize) -> Vec<f64> {
    let mut rng = SecureRng::seeded(42);
    (0..m)
        .map(|_| rng.below_u64(1 << 20) as f64 / (1u64 << 20) as f64)
        .collect()
}

/// ε = 1 under add/remove-one.
fn allowance() -> Guarantee {
    Guarantee::pure(1.0, Neighbours::AddRemove).unwrap()
}

fn sens() -> Sensitivity {
    // Δ = 1/1000 (one validation example out of 1000); fractions are not monotone.
    Sensitivity::general(1e-3).unwrap()
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn exponential_construct_and_select(bencher: divan::Bencher, m: usize) {
    let (u, a) = (scores(m), allowance());
    let mut rng = SecureRng::seeded(1);
    bencher.bench_local(|| {
        let em = ExponentialMechanism::new(&Scores::new(&u, Goal::Maximize, sens()).unwrap(), &a)
            .unwrap();
        em.select(&mut rng).value
    });
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn exponential_select_only(bencher: divan::Bencher, m: usize) {
    let (u, a) = (scores(m), allowance());
    let em =
        ExponentialMechanism::new(&Scores::new(&u, Goal::Maximize, sens()).unwrap(), &a).unwrap();
    let mut rng = SecureRng::seeded(1);
    bencher.bench_local(|| em.select(&mut rng).value);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn permute_and_flip_construct_and_select(bencher: divan::Bencher, m: usize) {
    let (u, a) = (scores(m), allowance());
    let mut rng = SecureRng::seeded(2);
    bencher.bench_local(|| {
        let pf =
            PermuteAndFlip::new(&Scores::new(&u, Goal::Maximize, sens()).unwrap(), &a).unwrap();
        pf.select(&mut rng).value
    });
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn laplace_construct_and_select(bencher: divan::Bencher, m: usize) {
    let (u, a) = (scores(m), allowance());
    let mut rng = SecureRng::seeded(3);
    bencher.bench_local(|| {
        let l =
            LaplaceNoisyMax::new(&Scores::new(&u, Goal::Maximize, sens()).unwrap(), &a).unwrap();
        l.select(&mut rng).value
    });
}

/// Worst case for rejection: one candidate far above all others, so EM needs ≈ m proposals
/// and PF visits ≈ m/2 candidates.
#[divan::bench(args = SIZES, sample_count = 10)]
fn exponential_worst_case(bencher: divan::Bencher, m: usize) {
    let mut u = vec![0.0; m];
    u[m / 2] = 100.0;
    let (s, a) = (Sensitivity::general(1.0).unwrap(), allowance());
    let em = ExponentialMechanism::new(&Scores::new(&u, Goal::Maximize, s).unwrap(), &a).unwrap();
    let mut rng = SecureRng::seeded(4);
    bencher.bench_local(|| em.select(&mut rng).value);
}

#[divan::bench(args = SIZES, sample_count = 10)]
fn permute_and_flip_worst_case(bencher: divan::Bencher, m: usize) {
    let mut u = vec![0.0; m];
    u[m / 2] = 100.0;
    let (s, a) = (Sensitivity::general(1.0).unwrap(), allowance());
    let pf = PermuteAndFlip::new(&Scores::new(&u, Goal::Maximize, s).unwrap(), &a).unwrap();
    let mut rng = SecureRng::seeded(5);
    bencher.bench_local(|| pf.select(&mut rng).value);
}

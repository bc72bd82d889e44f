//! Throughput of the exact samplers: `cargo bench --bench samplers`.
//!
//! Each iteration draws `N` samples, so divan's item counter reports samples per second on one
//! core. Goal: >= 2 million samples/s for the discrete Laplace and Gaussian up to scale 2^20.

use divan::counter::ItemsCount;
use divan::Bencher;
use dptune::noise::{
    DiscreteGaussian, DiscreteLaplace, Geometric, GeometricTrials, GridGaussian, GridLaplace,
    Poisson, SecureRng, TruncatedNegativeBinomial,
};

fn main() {
    divan::main();
}

/// Draws per benchmark iteration.
const N: usize = 1000;

/// Runs `draw` N times per iteration with a fixed-seed generator.
fn run(bencher: Bencher, n: usize, mut draw: impl FnMut(&mut SecureRng) -> i64) {
    let mut rng = SecureRng::seeded(1);
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        let mut acc = 0i64;
        for _ in 0..n {
            acc = acc.wrapping_add(draw(&mut rng));
        }
        acc
    });
}

#[divan::bench(args = [1, 1 << 10, 1 << 20])]
fn discrete_laplace(bencher: Bencher, scale: u64) {
    let d = DiscreteLaplace::from_scale(scale, 1).expect("valid scale");
    run(bencher, N, |rng| d.sample(rng));
}

#[divan::bench(args = [1, 1 << 10, 1 << 20])]
fn discrete_gaussian(bencher: Bencher, sigma: u64) {
    let d = DiscreteGaussian::from_sigma(sigma as f64).expect("valid sigma");
    run(bencher, N, |rng| d.sample(rng));
}

#[divan::bench]
fn discrete_gaussian_sigma2_9_over_4(bencher: Bencher) {
    let d = DiscreteGaussian::new(9, 4).expect("valid sigma2");
    run(bencher, N, |rng| d.sample(rng));
}

#[divan::bench]
fn discrete_gaussian_sigma_0_7_bignum(bencher: Bencher) {
    let d = DiscreteGaussian::from_sigma(0.7).expect("valid sigma");
    run(bencher, N / 10, |rng| d.sample(rng));
}

#[divan::bench(args = [1, 1000])]
fn geometric_rate_one_over(bencher: Bencher, den: u64) {
    let d = Geometric::from_rate(1, den).expect("valid rate");
    run(bencher, N, |rng| d.sample(rng) as i64);
}

#[divan::bench(args = [0.1, 0.01, 0.001])]
fn geometric_trials(bencher: Bencher, gamma: f64) {
    let d = GeometricTrials::from_success_prob(gamma).expect("valid gamma");
    run(bencher, N / 10, |rng| d.sample(rng) as i64);
}

#[divan::bench(args = [1.0, 1000.0])]
fn poisson(bencher: Bencher, mu: f64) {
    let d = Poisson::from_mean(mu).expect("valid mu");
    run(bencher, N / 10, |rng| d.sample(rng) as i64);
}

#[divan::bench(args = [0.0, 0.5, 1.0, 2.0])]
fn truncated_negative_binomial_gamma_0_05(bencher: Bencher, eta: f64) {
    let d = TruncatedNegativeBinomial::new(eta, 0.05).expect("valid parameters");
    run(bencher, N / 10, |rng| d.sample(rng) as i64);
}

#[divan::bench]
fn grid_laplace(bencher: Bencher) {
    let m = GridLaplace::new(1.0, 1.0).expect("valid parameters");
    run(bencher, N, |rng| {
        m.release(rng, 3.25).map(f64::to_bits).unwrap_or(0) as i64
    });
}

#[divan::bench]
fn grid_gaussian(bencher: Bencher) {
    let m = GridGaussian::new(1.0, 1.0, 1).expect("valid parameters");
    run(bencher, N, |rng| {
        m.release(rng, 3.25).map(f64::to_bits).unwrap_or(0) as i64
    });
}

//! Full private lengthscale selection (5-fold noise-aware CV over 20 lengthscales, MVEE per fold,
//! exact exponential mechanism) for n = 200, 1 000 and 5 000 training points.
//!
//! `cargo bench -p dptune --bench gp` (the n = 5 000 case takes minutes per sample).

use dptune::gp::{select_lengthscale, MveeConfig, OutputRange, SelectionConfig, Utility};
use dptune::noise::SecureRng;
use nalgebra::DMatrix;

fn main() {
    divan::main();
}

/// Synthetic 1-D data on the demo's scale: x ~ U[−2.5, 2.5], y = 150 + 60 sin(x) + U(−25, 25).
pub fn data(n: usize) -> (DMatrix<f64>, Vec<f64>) {
    let mut rng = SecureRng::seeded(n as u64);
    let x = DMatrix::from_fn(n, 1, |_, _| rng.unit_f64() * 5.0 - 2.5);
    let y = (0..n)
        .map(|i| 150.0 + 60.0 * x[(i, 0)].sin() + 50.0 * (rng.unit_f64() - 0.5))
        .collect();
    (x, y)
}

/// 20 lengthscales log-spaced over 2⁻³ … 2⁵, the demo's range.
pub fn config() -> SelectionConfig {
    SelectionConfig {
        grid: (0..20)
            .map(|k| 2f64.powf(-3.0 + 8.0 * k as f64 / 19.0))
            .collect(),
        signal_var: 6400.0,
        noise_var: 3200.0,
        folds: 5,
        eps_select: 1.0,
        eps_predict: 1.0,
        delta: 1e-5,
        utility: Utility::CrossValidation,
        mvee: MveeConfig::default(),
    }
}

fn select(bencher: divan::Bencher, n: usize) {
    let (x, y) = data(n);
    let cfg = config();
    let range = OutputRange::new(20.0, 350.0).unwrap();
    bencher.bench_local(|| {
        let mut rng = SecureRng::seeded(1);
        select_lengthscale(&x, &y, range, &cfg, &mut rng).unwrap()
    });
}

#[divan::bench(args = [200, 1000], sample_count = 5, sample_size = 1)]
fn private_selection(bencher: divan::Bencher, n: usize) {
    select(bencher, n);
}

#[divan::bench(args = [5000], sample_count = 1, sample_size = 1)]
fn private_selection_large(bencher: divan::Bencher, n: usize) {
    select(bencher, n);
}

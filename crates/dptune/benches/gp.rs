//! Full private lengthscale selection (5-fold noise-aware CV over 20 lengthscales, MVEE per fold,
//! exact exponential mechanism) for n = 200, 1 000 and 5 000 training points, on the synthetic
//! problem [`dptune::gp::demo::timing_data`] / [`dptune::gp::demo::timing_config`].
//!
//! `cargo bench -p dptune --bench gp` (the n = 5 000 case takes tens of seconds per sample).

use dptune::gp::demo::{timing_config, timing_data};
use dptune::gp::select_lengthscale;
use dptune::noise::SecureRng;

fn main() {
    divan::main();
}

fn select(bencher: divan::Bencher, n: usize) {
    let (x, y, range) = timing_data(n).unwrap();
    let cfg = timing_config();
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

//! Wall-clock time of one full private lengthscale selection on the benchmark data
//! (`benches/gp.rs`): `cargo run --release -p dptune --example gp_select_timing -- 1000`.
//! Used by `bench/gp/run.sh` for the side-by-side ratio with numpy/scipy.

use dptune::gp::{select_lengthscale, MveeConfig, OutputRange, SelectionConfig, Utility};
use dptune::noise::SecureRng;
use nalgebra::DMatrix;
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let mut rng = SecureRng::seeded(n as u64);
    let x = DMatrix::from_fn(n, 1, |_, _| rng.unit_f64() * 5.0 - 2.5);
    let y: Vec<f64> = (0..n)
        .map(|i| 150.0 + 60.0 * x[(i, 0)].sin() + 50.0 * (rng.unit_f64() - 0.5))
        .collect();
    let cfg = SelectionConfig {
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
    };
    let range = OutputRange::new(20.0, 350.0).expect("valid range");
    let t = Instant::now();
    let r = select_lengthscale(&x, &y, range, &cfg, &mut SecureRng::seeded(1));
    let secs = t.elapsed().as_secs_f64();
    match r {
        Ok(sel) => println!(
            "{{\"n\": {n}, \"seconds\": {secs}, \"lengthscale\": {}}}",
            sel.value.lengthscale
        ),
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}

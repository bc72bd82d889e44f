//! Accounting benchmarks (divan): `cargo bench -p dptune --bench accounting`.

use divan::black_box;
use dptune::privacy::convert::{rdp_epsilon, rdp_epsilon_on, zcdp_epsilon};
use dptune::privacy::dpsgd::dpsgd_curve;
use dptune::privacy::gaussian::gaussian_sigma;
use dptune::privacy::{default_orders, RdpCurve};

fn main() {
    divan::main();
}

/// DP-SGD ε for 1,000 steps, q = 0.01, z = 1, δ = 1e-5 (exact curve, continuous orders).
#[divan::bench]
fn dpsgd_eps_1000_steps() -> f64 {
    let curve = dpsgd_curve(black_box(0.01), black_box(1.0), black_box(1000)).unwrap();
    rdp_epsilon(&curve, black_box(1e-5)).unwrap().eps
}

/// The same on dp_accounting's default grid only.
#[divan::bench]
fn dpsgd_eps_1000_steps_grid() -> f64 {
    let curve = dpsgd_curve(black_box(0.01), black_box(1.0), black_box(1000)).unwrap();
    rdp_epsilon_on(&curve, black_box(1e-5), &default_orders())
        .unwrap()
        .eps
}

/// ρ-zCDP → ε (optimal CKS order).
#[divan::bench]
fn zcdp_to_eps() -> f64 {
    zcdp_epsilon(black_box(0.125), black_box(1e-5)).unwrap()
}

/// A tabulated RDP curve on the default grid → ε.
#[divan::bench(sample_count = 1000)]
fn rdp_table_to_eps(bencher: divan::Bencher) {
    let orders = default_orders();
    let values: Vec<f64> = orders.iter().map(|a| 0.5 * a).collect();
    let curve = RdpCurve::table(orders, values).unwrap();
    bencher.bench(|| rdp_epsilon(&curve, black_box(1e-5)).unwrap().eps);
}

/// Analytic Gaussian σ for (1, 1e-5)-DP.
#[divan::bench]
fn analytic_gaussian_sigma() -> f64 {
    gaussian_sigma(black_box(1.0), black_box(1e-5), black_box(1.0)).unwrap()
}

//! Privacy loss distribution benchmarks (divan): `cargo bench -p dptune --bench pld`.
//!
//! The golden PLD cases (`tests/data/pld.json`, the inputs `bench/pld/run.sh` compares with
//! dp_accounting) on the default grid, plus DP-SGD at 10,000 steps (issue 14's 20 ms goal) and
//! the pieces of a DP-SGD accounting on their own: one step's discretisation, the T-fold power
//! and the ε query.

use divan::black_box;
use dptune::privacy::pld::{dpsgd_pld, ComposeSpec, Pld, PldConfig};

fn main() {
    divan::main();
}

const GOLDEN: &str = include_str!("../tests/data/pld.json");

/// The golden case `id`'s inputs.
fn case(id: &str) -> ComposeSpec {
    let v: serde_json::Value = serde_json::from_str(GOLDEN).unwrap();
    let c = v["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == id)
        .unwrap();
    serde_json::from_value(c["inputs"].clone()).unwrap()
}

const CASES: &[&str] = &[
    "pld_dpsgd_q0.01_z1_T1000",
    "pld_dpsgd_q0.1_z2_T500",
    "pld_dpsgd_q0.05_z1.5_T300",
    "pld_gauss_s2_T10",
    "pld_laplace_b1_T20",
    "pld_dgauss_s3_T30",
    "pld_mixed_dpsgd_laplace_gauss",
];

/// ε of a golden case: build every part, compose, query.
#[divan::bench(args = CASES, sample_count = 10)]
fn golden_case(bencher: divan::Bencher, id: &str) {
    let spec = case(id);
    bencher.bench(|| {
        spec.pld(PldConfig::default())
            .unwrap()
            .epsilon(black_box(spec.delta))
            .unwrap()
    });
}

/// DP-SGD, q = 0.004, z = 1.1, 10,000 steps, δ = 1e-5 (goal: under 20 ms).
#[divan::bench(sample_count = 10)]
fn dpsgd_10000_steps() -> f64 {
    dpsgd_pld(
        black_box(0.004),
        black_box(1.1),
        10_000,
        PldConfig::default(),
    )
    .unwrap()
    .epsilon(1e-5)
    .unwrap()
}

/// One DP-SGD step (both directions), discretised.
#[divan::bench(sample_count = 10)]
fn dpsgd_one_step() -> Pld {
    Pld::subsampled_gaussian(black_box(0.004), black_box(1.1), 1.0, PldConfig::default()).unwrap()
}

/// The 10,000-fold self-composition of one DP-SGD step.
#[divan::bench(sample_count = 10)]
fn dpsgd_power_10000(bencher: divan::Bencher) {
    let one = Pld::subsampled_gaussian(0.004, 1.1, 1.0, PldConfig::default()).unwrap();
    bencher.bench(|| one.self_compose(black_box(10_000)).unwrap());
}

/// ε at δ = 1e-5 of the composed 10,000 steps.
#[divan::bench(sample_count = 10)]
fn dpsgd_epsilon_query(bencher: divan::Bencher) {
    let many = dpsgd_pld(0.004, 1.1, 10_000, PldConfig::default()).unwrap();
    bencher.bench(|| many.epsilon(black_box(1e-5)).unwrap());
}

//! Shared by the learner tests: a configuration from pairs, and public synthetic data
//! (two features in [0, 1), label 1 when x0 > x1).

#![allow(dead_code)] // each including test uses a different subset

use dptune::data::{Dataset, Task};
use dptune::noise::SecureRng;
use dptune::tune::{Config, Value};

pub fn cfg(pairs: &[(&str, Value)]) -> Config {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

/// `n` records of public synthetic data: label 1 when x0 > x1.
pub fn toy(n: usize) -> Dataset {
    let mut rng = SecureRng::seeded(1);
    let mut x = Vec::new();
    let mut y = Vec::new();
    for _ in 0..n {
        let a = rng.unit_f64();
        let b = rng.unit_f64();
        x.extend([a, b]);
        y.push(if a > b { 1.0 } else { 0.0 });
    }
    Dataset::new(
        x,
        y,
        2f64.sqrt().next_up(),
        Task::Classification {
            classes: vec!["no".into(), "yes".into()],
        },
        vec!["a".into(), "b".into()],
    )
    .unwrap()
}

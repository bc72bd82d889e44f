//! Public synthetic data shared by the learners' unit tests.

use crate::data::{Dataset, Task};
use crate::noise::SecureRng;

/// Public synthetic data: label 1 when x0 > x1, with `flip` of the labels flipped.
pub(crate) fn toy(n: usize, flip: f64, seed: u64) -> Dataset {
    let mut rng = SecureRng::seeded(seed);
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b) = (rng.unit_f64(), rng.unit_f64());
        x.extend([a, b]);
        let label = (a > b) != (rng.unit_f64() < flip);
        y.push(if label { 1.0 } else { 0.0 });
    }
    let task = Task::Classification {
        classes: vec!["no".into(), "yes".into()],
    };
    Dataset::new(
        x,
        y,
        2f64.sqrt().next_up(),
        task,
        vec!["a".into(), "b".into()],
    )
    .unwrap()
}

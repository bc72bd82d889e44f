//! The learners' private sums are exact on the noise grid (`dptune::numeric::GridSum`): a worked
//! number for the clipped-loss scorer with almost no noise, under both noise kinds.

use dptune::data::{Dataset, Task};
use dptune::learn::{Model, NoisyClippedLoss, RidgeSsp, Scratch};
use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{PrivateStep, Scorer};

/// 1000 records, label 2.0 for even rows and 0.5 for odd rows; the zero linear model predicts
/// the middle of [−1, 2], 0.5. Squared errors 2.25 and 0, capped at 1: the clipped sum is
/// exactly 500.
#[test]
fn clipped_loss_sum_worked_number() {
    let n = 1000;
    let x: Vec<f64> = (0..n).map(|i| i as f64 / n as f64).collect();
    let y: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 2.0 } else { 0.5 }).collect();
    let task = Task::Regression {
        low: -1.0,
        high: 2.0,
    };
    let data = Dataset::new(x, y, 1.0, task.clone(), vec!["a".into()]).unwrap();
    let model = Model::linear(1, &task, 1.0);
    assert_eq!(model.predict_value(&[0.3], &mut Scratch::default()), 0.5);
    let scorer = NoisyClippedLoss { cap: 1.0 };
    for allowance in [
        Guarantee::pure(1e4, Neighbours::AddRemove).unwrap(),
        Guarantee::zcdp(1e6, Neighbours::AddRemove).unwrap(),
    ] {
        let s = <NoisyClippedLoss as Scorer<RidgeSsp>>::score(
            &scorer,
            &model,
            PrivateStep::new(&data, &allowance, &mut SecureRng::seeded(2)),
        )
        .unwrap();
        // Noise s.d. ≈ 1.4e-4 (Laplace) or 7.1e-4 (Gaussian): 0.01 is over 14 s.d.
        assert!((s.value + 500.0).abs() < 0.01, "{allowance}: {}", s.value);
    }
}

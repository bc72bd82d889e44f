//! Tuner overhead: everything a tuning does besides the candidate runs themselves (drawing K,
//! per-run streams, sampling configurations, the parallel reduction, the cost computation). The
//! candidate here is the exact toy of the tests (two noisy counts over 200 records), so the
//! measured time per run is an upper bound on the overhead; compare it with a real run (a DP-SGD
//! fit on Adult takes tens of milliseconds).

use std::sync::atomic::Ordering;

use dptune::noise::SecureRng;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::Guarantee;
use dptune::tune::{split_by_coin, Domain, Method, SearchSpace, TuneOptions, Tuner, Value};

#[path = "../tests/support/toy.rs"]
mod toy;

use toy::{Bits, CountLearner, CountScorer, AR};

fn main() {
    divan::main();
}

/// One whole tuning with geometric repeats of mean `mean`; divan reports the time per tuning,
/// so the overhead per run is that time divided by the mean.
#[divan::bench(args = [10.0, 100.0, 1000.0], sample_count = 20)]
fn tuning_with_mean_runs(bencher: divan::Bencher, mean: f64) {
    let space = SearchSpace::new(vec![(
        "bias".into(),
        Domain::Choice {
            values: (0..10).map(Value::Int).collect(),
        },
    )])
    .unwrap();
    let data = Bits((0..200).map(|i| i % 3 == 0).collect());
    let method = Method::RepeatAndSelect(Repeats::tnb_with_mean(1.0, mean).unwrap());
    let tuner = Tuner::new(method, &space, Guarantee::pure(0.1, AR).unwrap()).unwrap();
    let learner = CountLearner::default();
    let mut seed = 0;
    bencher.bench_local(|| {
        seed += 1;
        let mut rng = SecureRng::seeded(seed);
        let split = split_by_coin(data.0.len(), 0.5, &mut rng).unwrap();
        tuner
            .run(
                &learner,
                &CountScorer,
                &data,
                &split,
                &TuneOptions::default(),
                &mut rng,
            )
            .unwrap()
    });
    divan::black_box(learner.fits.load(Ordering::Relaxed));
}

//! Wall time of one DP-SGD epoch on synthetic data, for `bench/dpsgd/run.sh` (issue 17 §2:
//! the Poisson batches are drawn by exact geometric gaps, so an epoch is linear in the rows).
//!
//! Usage: `dpsgd_timing <rows> <dim> <batch_size> <seed>`. The data are public synthetic
//! records (features uniform in [0, 1], label x0 > x1) built in memory. The run is DP-SGD
//! logistic regression for one epoch (T = ⌈rows/batch_size⌉ steps) at a fixed noise multiplier
//! 1.0 and a public size equal to `rows`. Also timed, on the same rate q: the batches alone as
//! drawn now (geometric gaps over all T steps), and the old per-record Bernoulli sampling on
//! the first few steps, extrapolated to T steps (it is quadratic in the rows: running it whole
//! at 18M rows would take hours). Prints one JSON object.

use std::hint::black_box;
use std::process::ExitCode;
use std::time::Instant;

use dptune::data::{Dataset, Task};
use dptune::learn::DpSgd;
use dptune::noise::{GeometricGap, GeometricTrials, SecureRng};
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{Config, Learner, PrivateStep, Value};

#[path = "support/report.rs"]
mod report;

use report::report;

/// Steps of the old per-record sampler that are actually run before extrapolating.
const OLD_STEPS: u64 = 5;

/// CPU time of this thread in seconds (Linux `schedstat`; NaN elsewhere). On a shared machine
/// it is steadier than wall time, which counts the time other processes hold the cores.
fn cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .map_or(f64::NAN, |ns| ns * 1e-9)
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, f64) {
    let (t, c) = (Instant::now(), cpu_seconds());
    let out = f();
    (out, t.elapsed().as_secs_f64(), cpu_seconds() - c)
}

fn data(rows: usize, dim: usize, rng: &mut SecureRng) -> Result<Dataset, String> {
    let mut x = Vec::with_capacity(rows * dim);
    let mut y = Vec::with_capacity(rows);
    for _ in 0..rows {
        let start = x.len();
        x.extend((0..dim).map(|_| rng.unit_f64()));
        y.push(if x[start] > x[start + 1] { 1.0 } else { 0.0 });
    }
    let task = Task::Classification {
        classes: vec!["no".into(), "yes".into()],
    };
    let names = (0..dim).map(|i| format!("x{i}")).collect();
    Dataset::new(x, y, (dim as f64).sqrt(), task, names).map_err(|e| e.to_string())
}

fn run(args: &[String]) -> Result<String, String> {
    let num = |i: usize| -> Result<usize, String> {
        args.get(i)
            .ok_or(format!("missing argument {i}"))?
            .parse::<usize>()
            .map_err(|e| format!("argument {i}: {e}"))
    };
    let (rows, dim, batch, seed) = (num(0)?, num(1)?.max(2), num(2)?, num(3)? as u64);
    let mut rng = SecureRng::seeded(seed);
    let d = data(rows, dim, &mut rng)?;
    let config: Config = [
        ("learning_rate", Value::Float(1.0)),
        ("clip_norm", Value::Float(1.0)),
        ("epochs", Value::Int(1)),
        ("batch_size", Value::Int(batch as i64)),
        ("noise_multiplier", Value::Float(1.0)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let allowance =
        Guarantee::approx(1e6, 1e-5, Neighbours::AddRemove).map_err(|e| e.to_string())?;
    let learner = DpSgd::linear(rows as f64);
    let (sched, _) = learner
        .plan(&config, dim + 1, &allowance)
        .map_err(|e| e.to_string())?;

    let (model, fit_wall, fit_cpu) =
        timed(|| learner.fit(&config, PrivateStep::new(&d, &allowance, &mut rng)));
    black_box(model.map_err(|e| e.to_string())?);

    let (mut gap_cpu, mut old_cpu) = (0.0, 0.0);
    if sched.q < 1.0 {
        let gaps = GeometricGap::new(sched.q).map_err(|e| e.to_string())?;
        let (included, _, cpu) = timed(|| {
            (0..sched.steps)
                .map(|_| gaps.included(rows, &mut rng).count())
                .sum::<usize>()
        });
        black_box(included);
        gap_cpu = cpu;
        let trials = GeometricTrials::from_success_prob(sched.q).map_err(|e| e.to_string())?;
        let steps = OLD_STEPS.min(sched.steps);
        let (included, _, cpu) = timed(|| {
            (0..steps)
                .map(|_| (0..rows).filter(|_| trials.stops(&mut rng)).count())
                .sum::<usize>()
        });
        black_box(included);
        old_cpu = cpu * sched.steps as f64 / steps as f64;
    }
    Ok(format!(
        "{{\"rows\": {rows}, \"dim\": {dim}, \"batch_size\": {batch}, \"q\": {}, \"steps\": {}, \
         \"fit_wall_seconds\": {fit_wall:.3}, \"fit_cpu_seconds\": {fit_cpu:.3}, \
         \"gap_sampling_cpu_seconds\": {gap_cpu:.3}, \
         \"per_record_sampling_cpu_seconds_extrapolated\": {old_cpu:.1}}}",
        sched.q, sched.steps
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    report(run(&args), "dpsgd_timing")
}

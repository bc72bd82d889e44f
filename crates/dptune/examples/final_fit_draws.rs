//! Many draws of `dptune tune`'s final DP-SGD fit on bundled Adult at fixed configurations, at
//! the noise multiplier calibrated by the RDP curve alone ("before", main at cf07e50) and by
//! the tightest route ("after", the PLD): does less noise give a better model on average?
//! An experiment for issue 14's acceptance point (docs/TUNE.md, "Before and after").
//!
//! Usage: `final_fit_draws [draws] [split_seed]` (defaults 60 and 1). Prints Markdown tables.
//!
//! The final part is a fair coin split of Adult's training records (as `dptune tune` makes it;
//! `split_seed` fixes which coins), and the schedule is planned for 16,250 records (half of a
//! noisy count of 32,500) under the parts' allowance (ε = 1 − the count's share, δ = 1e-5), so
//! q, T and z are those of the default job. z_after is what [`DpSgd::plan`] calibrates;
//! z_before is the RDP-only value printed by the test
//! `learn::dpsgd::tests::the_final_fit_needs_less_noise_than_by_rdp_alone` (docs/TUNE.md's
//! table). Test accuracy is on Adult's public test split.
//!
//! Two kinds of draw per configuration:
//!
//! * **learner**: `DpSgd::fit` itself (exact grid noise, exact per-record sampling) with
//!   `noise_multiplier` fixed to z_before or z_after, both from `SecureRng::seeded(k)`. The
//!   noise sampler's randomness use depends on σ, so the two runs of a seed share the first
//!   batch only: their difference is (nearly) unpaired.
//! * **paired** (common random numbers, NOT the private mechanism: a float simulation of it):
//!   the same DP-SGD steps (Poisson batches by exact geometric gaps, per-example clipping to C,
//!   sum, Gaussian noise, the same step −lr·(noisy sum)/(q·records)) with continuous N(0, 1)
//!   draws scaled by z·C, where both multipliers see the same batches and the same standard
//!   normal draws. The paired difference then isolates the effect of z. It reports the last
//!   iterate (what the learner released until the tail average) and the mean of the last
//!   epoch's iterates (what `DpSgd` releases now: the same tail for these configurations,
//!   which all run 3 or more epochs).
//!
//! Not private: this program reads the data freely and prints exact accuracies.

use std::process::ExitCode;

use dptune::data::{bundled, Dataset, Records};
use dptune::learn::{DpSgd, Model, Scratch};
use dptune::noise::{GeometricGap, SecureRng};
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{split_by_coin, Config, Learner, PrivateStep, Value};

/// The planned number of records of the final part (half of a noisy count of 32,500).
const RECORDS: f64 = 16_250.0;

/// The configurations compared: (batch, clip, epochs, learning rate, z_before). z_before is the
/// RDP-only calibration at 16,250 planned records (docs/TUNE.md's table).
const CONFIGS: [(i64, f64, i64, f64, f64); 6] = [
    (512, 1.0, 6, 16.0, 2.0597),
    (512, 0.5, 6, 16.0, 2.0597),
    (256, 0.5, 3, 16.0, 1.3094),
    (512, 0.5, 3, 16.0, 1.6398),
    (512, 1.0, 6, 2.0, 2.0597),
    (256, 0.5, 6, 2.0, 1.5426),
];

fn config(batch: i64, clip: f64, epochs: i64, lr: f64, z: Option<f64>) -> Config {
    let mut c = Config::new();
    c.insert("batch_size".into(), Value::Int(batch));
    c.insert("clip_norm".into(), Value::Float(clip));
    c.insert("epochs".into(), Value::Int(epochs));
    c.insert("learning_rate".into(), Value::Float(lr));
    if let Some(z) = z {
        c.insert("noise_multiplier".into(), Value::Float(z));
    }
    c
}

/// A standard normal draw (Box–Muller on two uniforms; a simulation, not a DP mechanism).
fn std_normal(rng: &mut SecureRng) -> f64 {
    let u = 1.0 - rng.unit_f64(); // in (0, 1]
    let v = rng.unit_f64();
    (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
}

/// The paired simulation: both multipliers `zs` step on the same batches and the same standard
/// normals. Returns, per multiplier, (last-iterate accuracy, last-epoch-average accuracy).
#[allow(clippy::too_many_arguments)]
fn paired(
    data: &Dataset,
    test: &Dataset,
    batch: i64,
    clip: f64,
    epochs: i64,
    lr: f64,
    zs: [f64; 2],
    seed: u64,
) -> Result<[(f64, f64); 2], String> {
    let e = |e: dptune::error::Error| e.to_string();
    let q = (batch as f64 / RECORDS).min(1.0);
    let steps = (epochs as f64 / q).ceil() as u64;
    let per_epoch = (1.0 / q).ceil() as u64;
    let mut models = [0, 1].map(|_| Model::linear(data.dim(), data.task(), 1.0));
    let p = models[0].params.len();
    let mut sums = [vec![0.0; p], vec![0.0; p]];
    let mut avgs = [vec![0.0; p], vec![0.0; p]];
    let mut g = vec![0.0; p];
    let mut s = Scratch::default();
    let mut batches = SecureRng::seeded(seed);
    let mut normals = SecureRng::seeded(seed ^ 0x9e37_79b9_7f4a_7c15);
    let gaps = GeometricGap::new(q).map_err(e)?;
    let step_size = lr / (q * RECORDS);
    let averaged_from = steps.saturating_sub(per_epoch);
    for step in 0..steps {
        sums.iter_mut().for_each(|v| v.fill(0.0));
        let rows: Vec<usize> = gaps.included(data.len(), &mut batches).collect();
        for (m, sum) in models.iter().zip(sums.iter_mut()) {
            for &i in &rows {
                m.gradient(data.row(i), data.labels()[i], &mut g, &mut s);
                let norm = g.iter().map(|x| x * x).sum::<f64>().sqrt();
                let f = if norm > clip { clip / norm } else { 1.0 };
                sum.iter_mut().zip(&g).for_each(|(a, b)| *a += f * b);
            }
        }
        let n: Vec<f64> = (0..p).map(|_| std_normal(&mut normals)).collect();
        for ((m, sum), z) in models.iter_mut().zip(&sums).zip(zs) {
            for ((w, v), n) in m.params.iter_mut().zip(sum).zip(&n) {
                *w -= step_size * (v + z * clip * n);
            }
        }
        if step >= averaged_from {
            for (a, m) in avgs.iter_mut().zip(&models) {
                a.iter_mut().zip(&m.params).for_each(|(a, w)| *a += w);
            }
        }
    }
    let count = (steps - averaged_from) as f64;
    Ok([0, 1].map(|k| {
        let mut avg = models[k].clone();
        avg.params = avgs[k].iter().map(|a| a / count).collect();
        (models[k].accuracy(test), avg.accuracy(test))
    }))
}

/// Mean and sample standard deviation.
fn mean_sd(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let m = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (n - 1.0);
    (m, var.sqrt())
}

/// "mean ± sd" of accuracies, in percent.
fn pct(v: &[f64]) -> String {
    let (m, s) = mean_sd(v);
    format!("{:.2} ± {:.2}", 100.0 * m, 100.0 * s)
}

/// The paired difference b − a: "mean (se)" in points.
fn diff(a: &[f64], b: &[f64]) -> String {
    let d: Vec<f64> = a.iter().zip(b).map(|(x, y)| y - x).collect();
    let (m, s) = mean_sd(&d);
    format!(
        "{:+.2} ({:.2})",
        100.0 * m,
        100.0 * s / (d.len() as f64).sqrt()
    )
}

fn run(draws: u64, split_seed: u64) -> Result<(), String> {
    let e = |e: dptune::error::Error| e.to_string();
    let adult = bundled("adult").map_err(e)?;
    let (train, test) = (adult.train(), adult.test());
    let split = split_by_coin(train.len(), 0.5, &mut SecureRng::seeded(split_seed)).map_err(e)?;
    let data = train.select(&split.second);
    // The parts' allowance of the default plan: ε = 1 minus the noisy count's ⌊0.02·2^32⌋/2^32.
    let count = (0.02 * 4_294_967_296.0f64).floor() / 4_294_967_296.0;
    let allowance = Guarantee::approx(1.0 - count, 1e-5, Neighbours::AddRemove).map_err(e)?;
    let learner = DpSgd::linear(RECORDS);
    let params = Model::linear(data.dim(), data.task(), 1.0).params.len();
    println!(
        "final part: {} records, {params} parameters; {draws} draws per configuration\n",
        data.len()
    );
    println!(
        "| batch, clip, epochs, lr | z before | z after | learner before | learner after | \
         learner after − before (se) | paired last before | paired last after | \
         paired last after − before (se) | paired avg before | paired avg after | \
         paired avg after − before (se) | avg − last at z after (se) |"
    );
    println!("|---|---:|---:|---|---|---|---|---|---|---|---|---|---|");
    for (batch, clip, epochs, lr, z_before) in CONFIGS {
        let plain = config(batch, clip, epochs, lr, None);
        let z_after = learner
            .plan(&plain, params, &allowance)
            .map_err(e)?
            .0
            .z_request;
        let zs = [z_before, z_after];
        let mut learned = [Vec::new(), Vec::new()];
        let mut last = [Vec::new(), Vec::new()];
        let mut avg = [Vec::new(), Vec::new()];
        for k in 0..draws {
            for (i, &z) in zs.iter().enumerate() {
                let c = config(batch, clip, epochs, lr, Some(z));
                let m = learner
                    .fit(
                        &c,
                        PrivateStep::new(&data, &allowance, &mut SecureRng::seeded(k)),
                    )
                    .map_err(e)?;
                learned[i].push(m.value.accuracy(&test));
            }
            let pair = paired(&data, &test, batch, clip, epochs, lr, zs, 1_000_000 + k)?;
            for i in 0..2 {
                last[i].push(pair[i].0);
                avg[i].push(pair[i].1);
            }
        }
        println!(
            "| {batch}, {clip}, {epochs}, {lr} | {z_before:.4} | {z_after:.4} | {} | {} | {} | \
             {} | {} | {} | {} | {} | {} | {} |",
            pct(&learned[0]),
            pct(&learned[1]),
            diff(&learned[0], &learned[1]),
            pct(&last[0]),
            pct(&last[1]),
            diff(&last[0], &last[1]),
            pct(&avg[0]),
            pct(&avg[1]),
            diff(&avg[0], &avg[1]),
            diff(&last[1], &avg[1]),
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let num = |i: usize, default: u64| -> Result<u64, String> {
        args.get(i)
            .map_or(Ok(default), |a| a.parse::<u64>().map_err(|e| e.to_string()))
    };
    match num(0, 60).and_then(|d| Ok((d, num(1, 1)?))) {
        Ok((draws, _)) if draws < 2 => {
            eprintln!("draws must be >= 2");
            ExitCode::from(2)
        }
        Ok((draws, split_seed)) => match run(draws, split_seed) {
            Ok(()) => ExitCode::SUCCESS,
            Err(msg) => {
                eprintln!("error: {msg}");
                ExitCode::FAILURE
            }
        },
        Err(msg) => {
            eprintln!("error: {msg}");
            ExitCode::from(2)
        }
    }
}

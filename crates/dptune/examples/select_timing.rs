//! Per-call timing of exact selection, for `bench/selection/run.sh`.
//!
//! Usage: `select_timing <mechanism> <scores.f64le> <epsilon> <sensitivity> <repeats>` with
//! mechanism `exponential`, `permute-and-flip` or `laplace` (report-noisy-max with Laplace
//! noise); the scores file holds little-endian f64s.
//! Each call builds the mechanism from the scores (snapping, validation) and draws once, as a
//! caller would. Prints one JSON object: {"mechanism", "m", "us_per_call", "repeats"}.

use std::process::ExitCode;

use dptune::noise::SecureRng;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::select::{
    ExponentialMechanism, Goal, LaplaceNoisyMax, PermuteAndFlip, Scores, Selector, Sensitivity,
};

#[path = "support/per_call.rs"]
mod per_call;
#[path = "support/report.rs"]
mod report;

use per_call::per_call;
use report::report;

fn run(args: &[String]) -> Result<String, String> {
    let arg = |i: usize| args.get(i).ok_or(format!("missing argument {i}"));
    let num = |i: usize| -> Result<f64, String> {
        arg(i)?
            .parse::<f64>()
            .map_err(|e| format!("argument {i}: {e}"))
    };
    let mechanism = arg(0)?.clone();
    let bytes = std::fs::read(arg(1)?).map_err(|e| e.to_string())?;
    let scores: Vec<f64> = bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect();
    let (eps, delta, repeats) = (num(2)?, num(3)?, num(4)?.max(1.0) as u32);
    let sens = Sensitivity::general(delta).map_err(|e| e.to_string())?;
    let a = Guarantee::pure(eps, Neighbours::AddRemove).map_err(|e| e.to_string())?;
    let mut rng = SecureRng::from_os().map_err(|e| e.to_string())?;
    let once = || -> Result<usize, String> {
        // Validation is part of the timed construction, as it is in every front end.
        let scored = Scores::new(&scores, Goal::Maximize, sens).map_err(|e| e.to_string())?;
        Ok(match mechanism.as_str() {
            "exponential" => {
                ExponentialMechanism::new(&scored, &a)
                    .map_err(|e| e.to_string())?
                    .select(&mut rng)
                    .value
            }
            "permute-and-flip" => {
                PermuteAndFlip::new(&scored, &a)
                    .map_err(|e| e.to_string())?
                    .select(&mut rng)
                    .value
            }
            "laplace" => {
                LaplaceNoisyMax::new(&scored, &a)
                    .map_err(|e| e.to_string())?
                    .select(&mut rng)
                    .value
            }
            other => return Err(format!("unknown mechanism {other}")),
        })
    };
    let (_, us) = per_call(repeats, once)?;
    Ok(format!(
        "{{\"mechanism\": \"{mechanism}\", \"m\": {}, \"us_per_call\": {us}, \"repeats\": {repeats}}}",
        scores.len()
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    report(run(&args), "select_timing")
}

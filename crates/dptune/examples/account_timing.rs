//! Per-call timing of the accounting functions, for `bench/accounting/run.sh`.
//!
//! Usage: `account_timing <case> <repeats> <args...>` with case one of
//! `dpsgd Q Z STEPS DELTA`, `zcdp RHO DELTA`, `rdp_table RHO DELTA`, `sigma EPS DELTA`,
//! `repeat_gaussian Z ETA MEAN DELTA`, `repeat_dpsgd Q Z STEPS ETA MEAN DELTA` (ETA = inf for
//! Poisson repeats). The repeat cases time the whole computation: base curve, Papernot–Steinke
//! curve and conversion.
//! Prints one JSON object: {"case", "eps" (or "sigma"), "us_per_call", "repeats"}.

use std::process::ExitCode;

use dptune::privacy::convert::{rdp_epsilon, zcdp_epsilon};
use dptune::privacy::dpsgd::{dpsgd_curve, dpsgd_epsilon_grid};
use dptune::privacy::gaussian::{gaussian_curve, gaussian_sigma};
use dptune::privacy::repeat::Repeats;
use dptune::privacy::{default_orders, RdpCurve};
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{tuning_cost, Method};

#[path = "support/per_call.rs"]
mod per_call;
#[path = "support/report.rs"]
mod report;

use per_call::per_call;
use report::report;

/// ε of the best of K runs of `base` (η = ∞ means Poisson repeats), as `dptune account repeat`.
fn repeat_epsilon(base: &Guarantee, eta: f64, mean: f64, delta: f64) -> dptune::Result<f64> {
    let repeats = if eta.is_infinite() {
        Repeats::poisson(mean)?
    } else {
        Repeats::tnb_with_mean(eta, mean)?
    };
    tuning_cost(&Method::RepeatAndSelect(repeats), base)?.epsilon(delta)
}

fn run(args: &[String]) -> Result<String, String> {
    let num = |i: usize| -> Result<f64, String> {
        args.get(i)
            .ok_or(format!("missing argument {i}"))?
            .parse::<f64>()
            .map_err(|e| format!("argument {i}: {e}"))
    };
    let case = args.first().ok_or("missing case")?.as_str();
    let repeats = num(1)?.max(1.0) as u32;
    let r = match case {
        "dpsgd" => {
            let (q, z, steps, delta) = (num(2)?, num(3)?, num(4)? as u64, num(5)?);
            per_call(repeats, || {
                Ok(rdp_epsilon(&dpsgd_curve(q, z, steps)?, delta)?.eps)
            })
        }
        "dpsgd_grid" => {
            let (q, z, steps, delta) = (num(2)?, num(3)?, num(4)? as u64, num(5)?);
            per_call(repeats, || Ok(dpsgd_epsilon_grid(q, z, steps, delta)?.eps))
        }
        "zcdp" => {
            let (rho, delta) = (num(2)?, num(3)?);
            per_call(repeats, || zcdp_epsilon(rho, delta))
        }
        "rdp_table" => {
            let (rho, delta) = (num(2)?, num(3)?);
            let orders = default_orders();
            let values = orders.iter().map(|a| rho * a).collect();
            let curve = RdpCurve::table(orders, values).map_err(|e| e.to_string())?;
            per_call(repeats, || Ok(rdp_epsilon(&curve, delta)?.eps))
        }
        "sigma" => {
            let (eps, delta) = (num(2)?, num(3)?);
            per_call(repeats, || gaussian_sigma(eps, delta, 1.0))
        }
        "repeat_gaussian" => {
            let (z, eta, mean, delta) = (num(2)?, num(3)?, num(4)?, num(5)?);
            per_call(repeats, || {
                let base = Guarantee::rdp(gaussian_curve(z, 1.0)?, Neighbours::AddRemove);
                repeat_epsilon(&base, eta, mean, delta)
            })
        }
        "repeat_dpsgd" => {
            let (q, z, steps) = (num(2)?, num(3)?, num(4)? as u64);
            let (eta, mean, delta) = (num(5)?, num(6)?, num(7)?);
            per_call(repeats, || {
                let base = Guarantee::rdp(dpsgd_curve(q, z, steps)?, Neighbours::AddRemove);
                repeat_epsilon(&base, eta, mean, delta)
            })
        }
        other => return Err(format!("unknown case {other}")),
    }
    .map_err(|e| e.to_string())?;
    Ok(format!(
        "{{\"case\": \"{case}\", \"value\": {:.17e}, \"us_per_call\": {:.6}, \"repeats\": {repeats}}}",
        r.0, r.1
    ))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    report(run(&args), "error")
}

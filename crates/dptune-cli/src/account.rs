//! `dptune account`: privacy accounting for common mechanisms, without running anything.
//!
//! * `gaussian`: exact ε of one Gaussian mechanism (Balle–Wang) and ε via RDP.
//! * `calibrate-gaussian`: the smallest σ for (ε, δ) (Balle–Wang), with the classic σ as a
//!   labelled comparison.
//! * `dpsgd`: ε of Poisson-subsampled Gaussian DP-SGD via RDP (continuous orders).
//! * `zcdp`: ε of a ρ-zCDP mechanism (optimal CKS conversion).
//! * `repeat`: ε of releasing the best of a random number of runs of a base mechanism
//!   (Papernot–Steinke 2022; Liu–Talwar 2019 for geometric repeats).

use clap::{Args, Subcommand};
use serde_json::json;

use dptune::privacy::convert::{rdp_epsilon, zcdp_epsilon_at_order};
use dptune::privacy::gaussian::{
    classic_gaussian_sigma, gaussian_curve, gaussian_epsilon, gaussian_sigma,
};
use dptune::privacy::subsampled::{dpsgd_curve, dpsgd_epsilon_grid};

use dptune::privacy::repeat::Repeats;
use dptune::privacy::{Guarantee, Neighbours};
use dptune::tune::{tuning_cost, Method};

use crate::report::{fmt_param, Failure, Report};

/// Arguments of `dptune account`.
#[derive(Args)]
pub struct AccountArgs {
    #[command(subcommand)]
    command: AccountCommand,
}

#[derive(Subcommand)]
enum AccountCommand {
    /// ε of one Gaussian mechanism: exact (Balle–Wang 2018) and via RDP.
    #[command(allow_negative_numbers = true)]
    Gaussian {
        /// Noise multiplier z = σ / sensitivity.
        #[arg(long)]
        noise_multiplier: f64,
        /// L2 sensitivity Δ.
        #[arg(long, default_value_t = 1.0)]
        sensitivity: f64,
        /// Target δ in (0, 1).
        #[arg(long)]
        delta: f64,
    },
    /// Smallest σ giving (ε, δ)-DP (analytic Gaussian, Balle–Wang 2018).
    #[command(allow_negative_numbers = true)]
    CalibrateGaussian {
        /// Target ε > 0.
        #[arg(long)]
        epsilon: f64,
        /// Target δ in (0, 1).
        #[arg(long)]
        delta: f64,
        /// L2 sensitivity Δ.
        #[arg(long, default_value_t = 1.0)]
        sensitivity: f64,
    },
    /// ε of DP-SGD with Poisson sampling (add/remove-one), via RDP.
    #[command(allow_negative_numbers = true)]
    Dpsgd {
        /// Poisson sampling rate q in (0, 1].
        #[arg(long)]
        sampling_rate: f64,
        /// Noise multiplier z = σ / clipping norm.
        #[arg(long)]
        noise_multiplier: f64,
        /// Number of steps.
        #[arg(long)]
        steps: u64,
        /// Target δ in (0, 1).
        #[arg(long)]
        delta: f64,
    },
    /// ε of the best of a random number of runs (Papernot–Steinke 2022, Liu–Talwar 2019).
    #[command(allow_negative_numbers = true)]
    Repeat(RepeatArgs),
    /// ε of a ρ-zCDP mechanism (optimal CKS20 conversion).
    #[command(allow_negative_numbers = true)]
    Zcdp {
        /// ρ > 0.
        #[arg(long)]
        rho: f64,
        /// Target δ in (0, 1).
        #[arg(long)]
        delta: f64,
    },
}

/// The base mechanism that is repeated.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Base {
    /// One Gaussian release with `--noise-multiplier`.
    Gaussian,
    /// A DP-SGD run: `--sampling-rate`, `--noise-multiplier`, `--steps`.
    Dpsgd,
    /// An ε-DP mechanism: `--epsilon`.
    Pure,
    /// A ρ-zCDP mechanism: `--rho`.
    Zcdp,
}

/// The distribution of the number of runs.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum RepeatKind {
    /// Poisson(`--mean`) (Papernot–Steinke Thm 6).
    Poisson,
    /// Truncated negative binomial (`--eta`, and `--mean` or `--gamma`) (Thm 2).
    Tnb,
    /// Geometric: stop with probability `--gamma` after each run (or give `--mean`).
    Geometric,
    /// Logarithmic (η = 0): `--mean` or `--gamma`.
    Logarithmic,
}

/// Arguments of `dptune account repeat`.
#[derive(Args)]
struct RepeatArgs {
    /// The base mechanism.
    #[arg(long, value_enum)]
    base: Base,
    /// Noise multiplier z (gaussian, dpsgd).
    #[arg(long)]
    noise_multiplier: Option<f64>,
    /// Poisson sampling rate q (dpsgd).
    #[arg(long)]
    sampling_rate: Option<f64>,
    /// Number of steps (dpsgd).
    #[arg(long)]
    steps: Option<u64>,
    /// Per-run ε (pure).
    #[arg(long)]
    epsilon: Option<f64>,
    /// Per-run ρ (zcdp).
    #[arg(long)]
    rho: Option<f64>,
    /// The distribution of the number of runs.
    #[arg(long, value_enum)]
    repeats: RepeatKind,
    /// Expected number of runs.
    #[arg(long)]
    mean: Option<f64>,
    /// Shape η ≥ 0 (tnb).
    #[arg(long)]
    eta: Option<f64>,
    /// γ ∈ (0, 1) (tnb, geometric, logarithmic).
    #[arg(long)]
    gamma: Option<f64>,
    /// Target δ in (0, 1).
    #[arg(long)]
    delta: f64,
}

/// Runs `dptune account ...`.
pub fn run(args: AccountArgs) -> Result<Report, Failure> {
    match args.command {
        AccountCommand::Gaussian {
            noise_multiplier,
            sensitivity,
            delta,
        } => gaussian(noise_multiplier, sensitivity, delta),
        AccountCommand::CalibrateGaussian {
            epsilon,
            delta,
            sensitivity,
        } => calibrate(epsilon, delta, sensitivity),
        AccountCommand::Dpsgd {
            sampling_rate,
            noise_multiplier,
            steps,
            delta,
        } => dpsgd(sampling_rate, noise_multiplier, steps, delta),
        AccountCommand::Zcdp { rho, delta } => zcdp(rho, delta),
        AccountCommand::Repeat(args) => repeat(&args),
    }
}

/// A required flag of the chosen base or distribution.
fn need<T>(value: Option<T>, flag: &str, what: &str) -> Result<T, Failure> {
    value.ok_or_else(|| Failure::input(format!("`--{flag}` is required {what}")))
}

fn repeat(a: &RepeatArgs) -> Result<Report, Failure> {
    let n = Neighbours::AddRemove;
    let (per_run, base_desc) = match a.base {
        Base::Gaussian => {
            let z = need(
                a.noise_multiplier,
                "noise-multiplier",
                "for --base gaussian",
            )?;
            (
                Guarantee::rdp(gaussian_curve(z, 1.0)?, n),
                format!("Gaussian, noise multiplier {}", fmt_param(z)),
            )
        }
        Base::Dpsgd => {
            let q = need(a.sampling_rate, "sampling-rate", "for --base dpsgd")?;
            let z = need(a.noise_multiplier, "noise-multiplier", "for --base dpsgd")?;
            let t = need(a.steps, "steps", "for --base dpsgd")?;
            (
                Guarantee::rdp(dpsgd_curve(q, z, t)?, n),
                format!("DP-SGD, q {}, z {}, {t} steps", fmt_param(q), fmt_param(z)),
            )
        }
        Base::Pure => {
            let e = need(a.epsilon, "epsilon", "for --base pure")?;
            (Guarantee::pure(e, n)?, format!("{}-DP", fmt_param(e)))
        }
        Base::Zcdp => {
            let r = need(a.rho, "rho", "for --base zcdp")?;
            (Guarantee::zcdp(r, n)?, format!("{}-zCDP", fmt_param(r)))
        }
    };
    let by_mean_or_gamma = |eta: f64| -> Result<Repeats, Failure> {
        match (a.mean, a.gamma) {
            (Some(m), None) => Ok(Repeats::tnb_with_mean(eta, m)?),
            (None, Some(g)) => Ok(Repeats::tnb(eta, g)?),
            _ => Err(Failure::input(
                "give exactly one of `--mean` and `--gamma` for these repeats",
            )),
        }
    };
    let repeats = match a.repeats {
        RepeatKind::Poisson => Repeats::poisson(need(a.mean, "mean", "for --repeats poisson")?)?,
        RepeatKind::Tnb => by_mean_or_gamma(need(a.eta, "eta", "for --repeats tnb")?)?,
        RepeatKind::Geometric => by_mean_or_gamma(1.0)?,
        RepeatKind::Logarithmic => by_mean_or_gamma(0.0)?,
    };
    let single = per_run.epsilon(a.delta)?;
    let total = tuning_cost(&Method::RepeatAndSelect(repeats), &per_run)?;
    let epsilon = total.epsilon(a.delta)?;
    let pure = total.pure_eps();
    let (shape, gamma) = match repeats {
        Repeats::Poisson { .. } => (None, None),
        Repeats::TruncatedNegativeBinomial { eta, gamma } => (Some(eta), Some(gamma)),
    };
    let json = json!({
        "base": base_desc,
        "mean_runs": repeats.mean(),
        "eta": shape,
        "gamma": gamma,
        "delta": a.delta,
        "epsilon": epsilon,
        "epsilon_pure": pure,
        "epsilon_single_run": single,
    });
    let mut human = format!(
        "Best of a random number of runs (mean {}) of: {base_desc}\n  \
         epsilon at delta {}: {} (one run alone: {})",
        fmt_param(repeats.mean()),
        fmt_param(a.delta),
        fmt_param(epsilon),
        fmt_param(single),
    );
    if let Some(p) = pure {
        human += &format!(
            "\n  pure epsilon (Papernot-Steinke Cor. 3): {}",
            fmt_param(p)
        );
    }
    Ok(Report { json, human })
}

fn gaussian(z: f64, sensitivity: f64, delta: f64) -> Result<Report, Failure> {
    // The library validates σ; name the flag the user typed when z itself is bad.
    if !(z.is_finite() && z > 0.0) {
        return Err(Failure::input(format!(
            "invalid parameter `noise_multiplier` = {z}: must be finite and > 0"
        )));
    }
    let sigma = z * sensitivity;
    let epsilon = gaussian_epsilon(sigma, sensitivity, delta)?;
    let rdp = rdp_epsilon(&gaussian_curve(sigma, sensitivity)?, delta)?;
    let json = json!({
        "mechanism": "gaussian",
        "noise_multiplier": z,
        "sensitivity": sensitivity,
        "sigma": sigma,
        "delta": delta,
        "epsilon": epsilon,
        "epsilon_rdp": rdp.eps,
        "order": rdp.order,
    });
    let human = format!(
        "Gaussian mechanism: noise multiplier {}, sensitivity {}, delta {}\n  \
         epsilon (exact, Balle-Wang 2018 Thm 8): {}\n  \
         epsilon via RDP (CKS20, continuous orders): {} at order {}",
        fmt_param(z),
        fmt_param(sensitivity),
        fmt_param(delta),
        fmt_param(epsilon),
        fmt_param(rdp.eps),
        fmt_param(rdp.order),
    );
    Ok(Report { json, human })
}

fn calibrate(eps: f64, delta: f64, sensitivity: f64) -> Result<Report, Failure> {
    let sigma = gaussian_sigma(eps, delta, sensitivity)?;
    let classic = classic_gaussian_sigma(eps, delta, sensitivity)?;
    let valid = eps < 1.0;
    let json = json!({
        "mechanism": "gaussian",
        "epsilon": eps,
        "delta": delta,
        "sensitivity": sensitivity,
        "sigma": sigma,
        "sigma_classic": classic,
        "sigma_classic_note": "comparison only: Dwork-Roth 2014 Thm A.1, proven only for epsilon < 1",
        "sigma_classic_valid": valid,
    });
    let human = format!(
        "Gaussian calibration for ({}, {})-DP, sensitivity {}\n  \
         sigma (analytic, Balle-Wang 2018 Thm 8): {}\n  \
         comparison only: classic sigma (Dwork-Roth A.1{}): {}",
        fmt_param(eps),
        fmt_param(delta),
        fmt_param(sensitivity),
        fmt_param(sigma),
        if valid {
            ""
        } else {
            ", NOT valid for epsilon >= 1"
        },
        fmt_param(classic),
    );
    Ok(Report { json, human })
}

fn dpsgd(q: f64, z: f64, steps: u64, delta: f64) -> Result<Report, Failure> {
    let curve = dpsgd_curve(q, z, steps)?;
    let cont = rdp_epsilon(&curve, delta)?;
    let grid = dpsgd_epsilon_grid(q, z, steps, delta)?;
    let json = json!({
        "mechanism": "dpsgd",
        "sampling_rate": q,
        "noise_multiplier": z,
        "steps": steps,
        "delta": delta,
        "neighbours": "add_remove",
        "epsilon": cont.eps,
        "order": cont.order,
        "epsilon_default_grid": grid.eps,
        "order_default_grid": grid.order,
    });
    let human = format!(
        "DP-SGD (Poisson sampling, add/remove-one): q = {}, noise multiplier {}, {} steps, delta {}\n  \
         epsilon (exact subsampled-Gaussian RDP, CKS20, continuous orders): {} at order {}\n  \
         epsilon on dp_accounting's default order grid: {} at order {}",
        fmt_param(q),
        fmt_param(z),
        steps,
        fmt_param(delta),
        fmt_param(cont.eps),
        fmt_param(cont.order),
        fmt_param(grid.eps),
        fmt_param(grid.order),
    );
    Ok(Report { json, human })
}

fn zcdp(rho: f64, delta: f64) -> Result<Report, Failure> {
    let r = zcdp_epsilon_at_order(rho, delta)?;
    let json = json!({
        "rho": rho,
        "delta": delta,
        "epsilon": r.eps,
        "order": r.order,
    });
    let human = format!(
        "rho-zCDP with rho = {}, delta {}\n  epsilon (CKS20, optimal order {}): {}",
        fmt_param(rho),
        fmt_param(delta),
        fmt_param(r.order),
        fmt_param(r.eps),
    );
    Ok(Report { json, human })
}

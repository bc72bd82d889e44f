//! `dptune account`: privacy accounting for common mechanisms, without running anything.
//!
//! * `gaussian`: exact ε of one Gaussian mechanism (Balle–Wang) and ε via RDP.
//! * `calibrate-gaussian`: the smallest σ for (ε, δ) (Balle–Wang), with the classic σ as a
//!   labelled comparison.
//! * `dpsgd`: ε of Poisson-subsampled Gaussian DP-SGD via RDP (continuous orders).
//! * `zcdp`: ε of a ρ-zCDP mechanism (optimal CKS conversion).

use clap::{Args, Subcommand};
use serde_json::json;

use dptune::privacy::convert::{rdp_epsilon, zcdp_epsilon_at_order};
use dptune::privacy::gaussian::{
    classic_gaussian_sigma, gaussian_curve, gaussian_epsilon, gaussian_sigma,
};
use dptune::privacy::subsampled::{dpsgd_curve, dpsgd_epsilon_grid};

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
    }
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

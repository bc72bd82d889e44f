//! `dptune account`: privacy accounting for common mechanisms, without running anything.
//!
//! * `gaussian`: exact ε of one Gaussian mechanism (Balle–Wang) and ε via RDP.
//! * `calibrate-gaussian`: the smallest σ for (ε, δ) (Balle–Wang), with the classic σ as a
//!   labelled comparison.
//! * `dpsgd`: ε of Poisson-subsampled Gaussian DP-SGD by its privacy loss distribution, with the
//!   RDP ε (continuous orders) beside it.
//! * `calibrate-dpsgd`: the smallest noise multiplier for (ε, δ) by PLD.
//! * `compose FILE`: ε of a list of mechanisms (JSON, the form of `golden/pld.json`'s inputs), the
//!   minimum over PLD, RDP, zCDP and pure routes, naming the winner.
//! * `profile FILE`: δ(ε) over a range by PLD and by the closed-form route (`--plot` draws both).
//! * `zcdp`: ε of a ρ-zCDP mechanism (optimal CKS conversion).
//! * `repeat`: ε of releasing the best of a random number of runs of a base mechanism
//!   (Papernot–Steinke 2022; Liu–Talwar 2019 for geometric repeats).

use std::path::PathBuf;

use clap::{Args, Subcommand};

use dptune::privacy::pld::ComposeSpec;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::report::{
    pld_config, profile_epsilons, CompositionAccount, DpsgdAccount, DpsgdCalibration,
    GaussianAccount, GaussianCalibration, ProfileAccount, RepeatAccount, RepeatBase, ZcdpAccount,
};

use crate::flags::refuse_unread;
use crate::plot_file::Delivery;
use crate::plot_file::Pending;
use crate::progress::Progress;
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
    /// ε of DP-SGD with Poisson sampling (add/remove-one), by PLD (and via RDP beside it).
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
        /// Width of the PLD's loss grid.
        #[arg(long, default_value_t = 1e-4)]
        interval: f64,
    },
    /// Smallest noise multiplier giving (ε, δ)-DP to DP-SGD, by PLD (`grid_limited` when less
    /// noise would need more grid points than are held: try a coarser --interval).
    CalibrateDpsgd {
        /// Poisson sampling rate q in (0, 1].
        #[arg(long)]
        sampling_rate: f64,
        /// Number of steps.
        #[arg(long)]
        steps: u64,
        /// Target ε > 0.
        #[arg(long)]
        epsilon: f64,
        /// Target δ in (0, 1).
        #[arg(long)]
        delta: f64,
        /// Width of the PLD's loss grid.
        #[arg(long, default_value_t = 1e-4)]
        interval: f64,
    },
    /// ε of a composition of mechanisms listed in a JSON file: the tightest valid route.
    Compose {
        /// JSON: {"parts": [{"mechanism": "gaussian", "sigma": 1, "q": 0.01, "times": 1000},
        /// ...], "delta": 1e-5, "neighbours": "add_remove"}.
        file: PathBuf,
        /// Width of the PLD's loss grid.
        #[arg(long, default_value_t = 1e-4)]
        interval: f64,
    },
    /// δ(ε) of a composition (JSON file as for `compose`) over a range of ε.
    Profile {
        /// JSON file as for `compose` (its `delta` is not used).
        file: PathBuf,
        /// Smallest ε.
        #[arg(long, default_value_t = 0.0)]
        from: f64,
        /// Largest ε.
        #[arg(long, default_value_t = 10.0)]
        to: f64,
        /// Number of ε values, evenly spaced.
        #[arg(long, default_value_t = 21)]
        points: usize,
        /// Width of the PLD's loss grid.
        #[arg(long, default_value_t = 1e-4)]
        interval: f64,
        /// Draw δ(ε) by PLD and by the closed-form route to this file (`.svg` or `.png`).
        #[arg(long)]
        plot: Option<PathBuf>,
    },
    /// ε of the best of a random number of runs (Papernot–Steinke 2022, Liu–Talwar 2019).
    Repeat(RepeatArgs),
    /// ε of a ρ-zCDP mechanism (optimal CKS20 conversion).
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
pub fn run(args: AccountArgs) -> Result<Delivery, Failure> {
    if let AccountCommand::Repeat(a) = &args.command {
        validate_repeat(a)?;
    }
    let report = match args.command {
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
            interval,
        } => dpsgd(sampling_rate, noise_multiplier, steps, delta, interval),
        AccountCommand::CalibrateDpsgd {
            sampling_rate,
            steps,
            epsilon,
            delta,
            interval,
        } => calibrate_dpsgd(sampling_rate, steps, epsilon, delta, interval),
        AccountCommand::Compose { file, interval } => compose(&file, interval),
        AccountCommand::Profile {
            file,
            from,
            to,
            points,
            interval,
            plot,
        } => return profile(&file, from, to, points, interval, plot.as_deref()),
        AccountCommand::Zcdp { rho, delta } => zcdp(rho, delta),
        AccountCommand::Repeat(args) => repeat(&args),
    };
    report.map(Delivery::from)
}

/// A required flag of the chosen base or distribution.
fn need<T>(value: Option<T>, flag: &str, what: &str) -> Result<T, Failure> {
    value.ok_or_else(|| Failure::input(format!("`--{flag}` is required {what}")))
}

/// Refuses the flags of `account repeat` that the chosen base or distribution does not read.
fn validate_repeat(a: &RepeatArgs) -> Result<(), Failure> {
    let base_reads =
        |read: bool, flags: &[(&str, bool)]| refuse_unread(read, "with this --base", flags);
    base_reads(
        matches!(a.base, Base::Gaussian | Base::Dpsgd),
        &[("--noise-multiplier", a.noise_multiplier.is_some())],
    )?;
    base_reads(
        a.base == Base::Dpsgd,
        &[
            ("--sampling-rate", a.sampling_rate.is_some()),
            ("--steps", a.steps.is_some()),
        ],
    )?;
    base_reads(a.base == Base::Pure, &[("--epsilon", a.epsilon.is_some())])?;
    base_reads(a.base == Base::Zcdp, &[("--rho", a.rho.is_some())])?;
    let (mean, eta, gamma) = match a.repeats {
        RepeatKind::Poisson => (true, false, false),
        RepeatKind::Tnb => (true, true, true),
        RepeatKind::Geometric | RepeatKind::Logarithmic => (true, false, true),
    };
    let because = "with this --repeats (geometric fixes eta = 1, logarithmic eta = 0)";
    refuse_unread(mean, because, &[("--mean", a.mean.is_some())])?;
    refuse_unread(eta, because, &[("--eta", a.eta.is_some())])?;
    refuse_unread(gamma, because, &[("--gamma", a.gamma.is_some())])?;
    Ok(())
}

fn repeat(a: &RepeatArgs) -> Result<Report, Failure> {
    let progress = Progress::new("dptune account repeat");
    progress.stage("accounting");
    let base = match a.base {
        Base::Gaussian => RepeatBase::Gaussian {
            noise_multiplier: need(
                a.noise_multiplier,
                "noise-multiplier",
                "for --base gaussian",
            )?,
        },
        Base::Dpsgd => RepeatBase::Dpsgd {
            sampling_rate: need(a.sampling_rate, "sampling-rate", "for --base dpsgd")?,
            noise_multiplier: need(a.noise_multiplier, "noise-multiplier", "for --base dpsgd")?,
            steps: need(a.steps, "steps", "for --base dpsgd")?,
        },
        Base::Pure => RepeatBase::Pure {
            epsilon: need(a.epsilon, "epsilon", "for --base pure")?,
        },
        Base::Zcdp => RepeatBase::Zcdp {
            rho: need(a.rho, "rho", "for --base zcdp")?,
        },
    };
    // The base is validated (under the flags' names) before the repeats.
    base.guarantee()?;
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
    let r = RepeatAccount::new(&base, repeats, a.delta)?;
    let mut human = format!(
        "Best of a random number of runs (mean {}) of: {}\n  \
         epsilon at delta {}: {} (one run alone: {})",
        fmt_param(r.mean_runs),
        r.base,
        fmt_param(r.delta),
        fmt_param(r.epsilon),
        fmt_param(r.epsilon_single_run),
    );
    if let Some(p) = r.epsilon_pure {
        human += &format!(
            "\n  pure epsilon (Papernot-Steinke Cor. 3): {}",
            fmt_param(p)
        );
    }
    Report::of(&r, human)
}

fn gaussian(z: f64, sensitivity: f64, delta: f64) -> Result<Report, Failure> {
    let r = GaussianAccount::new(z, sensitivity, delta)?;
    let human = format!(
        "Gaussian mechanism: noise multiplier {}, sensitivity {}, delta {}\n  \
         epsilon (exact, Balle-Wang 2018 Thm 8): {}\n  \
         epsilon via RDP (CKS20, continuous orders): {} at order {}",
        fmt_param(r.noise_multiplier),
        fmt_param(r.sensitivity),
        fmt_param(r.delta),
        fmt_param(r.epsilon),
        fmt_param(r.epsilon_rdp),
        fmt_param(r.order),
    );
    Report::of(&r, human)
}

fn calibrate(eps: f64, delta: f64, sensitivity: f64) -> Result<Report, Failure> {
    let r = GaussianCalibration::new(eps, delta, sensitivity)?;
    let human = format!(
        "Gaussian calibration for ({}, {})-DP, sensitivity {}\n  \
         sigma (analytic, Balle-Wang 2018 Thm 8): {}\n  \
         comparison only: classic sigma (Dwork-Roth A.1{}): {}",
        fmt_param(r.epsilon),
        fmt_param(r.delta),
        fmt_param(r.sensitivity),
        fmt_param(r.sigma),
        if r.sigma_classic_valid {
            ""
        } else {
            ", NOT valid for epsilon >= 1"
        },
        fmt_param(r.sigma_classic),
    );
    Report::of(&r, human)
}

fn dpsgd(q: f64, z: f64, steps: u64, delta: f64, interval: f64) -> Result<Report, Failure> {
    let progress = Progress::new("dptune account dpsgd");
    progress.stage("accounting");
    let r = DpsgdAccount::new(q, z, steps, delta, interval)?;
    let human = format!(
        "DP-SGD (Poisson sampling, {}): q = {}, noise multiplier {}, {} steps, delta {}\n  \
         epsilon (privacy loss distribution, grid {}): {}\n  \
         epsilon via RDP (exact subsampled-Gaussian RDP, CKS20, continuous orders): {} at order {}\n  \
         epsilon via RDP on dp_accounting's default order grid: {} at order {}",
        r.neighbours,
        fmt_param(r.sampling_rate),
        fmt_param(r.noise_multiplier),
        r.steps,
        fmt_param(r.delta),
        fmt_param(r.interval),
        fmt_param(r.epsilon_pld),
        fmt_param(r.epsilon_rdp),
        fmt_param(r.order),
        fmt_param(r.epsilon_default_grid),
        fmt_param(r.order_default_grid),
    );
    Report::of(&r, human)
}

fn calibrate_dpsgd(
    q: f64,
    steps: u64,
    eps: f64,
    delta: f64,
    interval: f64,
) -> Result<Report, Failure> {
    let progress = Progress::new("dptune account calibrate-dpsgd");
    progress.stage("calibrating");
    let r = DpsgdCalibration::new(q, steps, eps, delta, interval)?;
    let mut human = format!(
        "DP-SGD calibration for ({}, {})-DP: q = {}, {} steps\n  \
         noise multiplier (privacy loss distribution, grid interval {}): {}\n  \
         at it: epsilon by PLD {}, via RDP {}",
        fmt_param(r.epsilon),
        fmt_param(r.delta),
        fmt_param(r.sampling_rate),
        r.steps,
        fmt_param(r.interval),
        fmt_param(r.noise_multiplier),
        fmt_param(r.epsilon_pld),
        fmt_param(r.epsilon_rdp),
    );
    if r.grid_limited {
        human.push_str(
            "\n  limited by the grid, not the target: with less noise the PLD needs more grid \
             points than are held; a coarser --interval may certify less noise (a coarser grid \
             is also looser)",
        );
    }
    if r.epsilon_rdp < r.epsilon_pld {
        human.push_str(
            "\n  the PLD on this grid is looser than RDP here: a finer --interval may \
             calibrate less noise",
        );
    }
    Report::of(&r, human)
}

fn read_spec(file: &std::path::Path) -> Result<ComposeSpec, Failure> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| Failure::input(format!("cannot read {}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| Failure::input(format!("{}: not a composition file: {e}", file.display())))
}

fn compose(file: &std::path::Path, interval: f64) -> Result<Report, Failure> {
    let progress = Progress::new("dptune account compose");
    progress.stage("composing");
    let spec = read_spec(file)?;
    let g = spec.guarantee(pld_config(interval))?;
    let r = CompositionAccount::new(&spec, &g, spec.delta, interval)?;
    let human = format!(
        "Composition of {} part(s) ({}), delta {}\n  epsilon: {} (route: {})",
        r.parts,
        r.neighbours,
        fmt_param(r.delta),
        fmt_param(r.epsilon),
        r.route,
    );
    Report::of(&r, human)
}

fn profile(
    file: &std::path::Path,
    from: f64,
    to: f64,
    points: usize,
    interval: f64,
    plot: Option<&std::path::Path>,
) -> Result<Delivery, Failure> {
    crate::plot_file::check(plot)?;
    let epsilon = profile_epsilons(from, to, points)?;
    let progress = Progress::new("dptune account profile");
    progress.stage("composing");
    let spec = read_spec(file)?;
    progress.stage("computing the profile");
    let r = ProfileAccount::new(
        &spec,
        epsilon,
        interval,
        plot.map(|p| p.display().to_string()),
    )?;
    let rows = r.rows();
    // Drawn now, written by `main` after the report (plot_file: the report comes first).
    let pending = plot.map(|p| Pending::new(p, crate::profile_plot::svg(&rows)));
    let mut human = format!(
        "Privacy profile of {} part(s) ({})\n  {:>10}  {:>12}  {:>12}",
        spec.parts.len(),
        r.neighbours,
        "epsilon",
        "delta (PLD)",
        "delta (RDP)",
    );
    for (e, d, c) in &rows {
        let c = c.map_or("-".to_string(), |c| format!("{c:.4e}"));
        human += &format!("\n  {e:>10.4}  {d:>12.4e}  {c:>12}");
    }
    if let Some(p) = &r.plot {
        human += &format!("\n  plot: {p}");
    }
    Ok(Delivery {
        report: Report::of(&r, human)?,
        plot: pending,
    })
}

fn zcdp(rho: f64, delta: f64) -> Result<Report, Failure> {
    let r = ZcdpAccount::new(rho, delta)?;
    let human = format!(
        "rho-zCDP with rho = {}, delta {}\n  epsilon (CKS20, optimal order {}): {}",
        fmt_param(r.rho),
        fmt_param(r.delta),
        fmt_param(r.order),
        fmt_param(r.epsilon),
    );
    Report::of(&r, human)
}

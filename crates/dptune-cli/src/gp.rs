//! `dptune gp`: private lengthscale selection and cloaked GP predictions.
//!
//! Splits the data into a training part (private outputs) and a held-out test part whose public
//! inputs are the prediction points, selects ℓ on the training part by K-fold CV and the
//! exponential mechanism, and releases cloaked predictions at the test inputs (and at a plotting
//! grid with `--plot`).
//!
//! **What is printed (DESIGN rule 4).** The threat model is DPGP.md §2: inputs public, outputs
//! private, replace-one neighbours (one output changed), so the number of rows and everything
//! computed from the inputs alone are public. By default the output is the release (the selected
//! ℓ and the cloaked predictions) and public inputs and facts derived from public inputs and the
//! release. Anything computed from the private outputs and not charged (the held-out RMSE, the
//! number of clipped outputs, the data points and the non-private mean in the plot) appears only
//! with `--diagnostics`, labelled NOT PRIVATE. Nothing is timed.

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, ValueEnum};
use dptune::error::check_positive;
use dptune::gp::report::{GpDataReport, GpDiagnostics, GpReport, NOT_PRIVATE};
use dptune::gp::{
    demo, load_gp_data, private_gp, ColumnMap, GpPlot, GpRegression, InputScaling, Kernel,
    MveeConfig, NotPrivate, OutputRange, ScaledInputs, SelectionConfig, Utility,
};
use dptune::noise::{SecureRng, SEEDED_NOTE};
use nalgebra::DMatrix;

use crate::flags::ignored;
use crate::plot_file;
use crate::plot_file::Delivery;
use crate::progress::Progress;
use crate::report::{fmt_param, Failure, Report};

/// Score used for the selection.
#[derive(Clone, Copy, ValueEnum)]
pub enum UtilityArg {
    /// K-fold cross-validation, noise-aware residual norm (recommended).
    Cv,
    /// Noise-aware log marginal likelihood (documented alternative; weaker).
    Lml,
}

/// Arguments of `dptune gp`.
#[derive(Args)]
pub struct GpArgs {
    /// CSV file with a header row; without it the bundled diabetes demo (BMI → progression) runs.
    #[arg(long, requires_all = ["x", "y", "y_range"])]
    data: Option<PathBuf>,
    /// Input columns of --data (names or 0-based indices, comma-separated).
    #[arg(long, value_delimiter = ',', requires = "data")]
    x: Vec<String>,
    /// Output column of --data (name or 0-based index).
    #[arg(long, requires = "data")]
    y: Option<String>,
    /// Declared public output range LO,HI; outputs outside are clipped (and counted).
    #[arg(
        long,
        value_delimiter = ',',
        num_args = 1,
        allow_hyphen_values = true,
        requires = "data"
    )]
    y_range: Option<Vec<f64>>,
    /// Declared public bounds of the inputs: LO,HI for every --x column (or one LO,HI for all).
    /// Each column is mapped by the public affine map x' = (x − mid)/(width/4), so the declared
    /// range becomes [−2, 2]; an input outside its declared range is refused. Required with
    /// --data unless --x-standardise is given (DESIGN rule 5: preprocessing uses public bounds).
    #[arg(
        long,
        value_delimiter = ',',
        allow_hyphen_values = true,
        conflicts_with = "x_standardise",
        requires = "data"
    )]
    x_range: Option<Vec<f64>>,
    /// Instead of --x-range: standardise each input column by its own mean and s.d. Sound only
    /// because inputs are public in the cloaking threat model (DPGP.md §2: only the outputs are
    /// protected); the output says so. Do not use it if the inputs are sensitive.
    #[arg(long, requires = "data")]
    x_standardise: bool,
    /// Public lengthscale grid (comma-separated, in scaled input units: see --x-range).
    #[arg(long, value_delimiter = ',', allow_hyphen_values = true)]
    lengthscales: Option<Vec<f64>>,
    /// Number of cross-validation folds (--utility cv only; default 5).
    #[arg(long)]
    folds: Option<usize>,
    /// ε of the private selection (exponential mechanism).
    #[arg(long, default_value_t = 1.0)]
    eps_select: f64,
    /// ε of the cloaked predictions.
    #[arg(long, default_value_t = 1.0)]
    eps_predict: f64,
    /// δ of the cloaked predictions.
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    #[command(flatten)]
    budget: crate::budget::BudgetCharge,
    #[command(flatten)]
    force: crate::limits::Force,
    /// Signal standard deviation σ_f (public; default: range width / 4, or 80 for the demo).
    #[arg(long)]
    signal_sd: Option<f64>,
    /// Noise variance as a fraction of σ_f² (public).
    #[arg(long, default_value_t = 0.5)]
    noise_ratio: f64,
    /// Fraction of rows held out: their (public) inputs are the prediction points; their outputs
    /// are only read for the --diagnostics RMSE.
    #[arg(long, default_value_t = 0.2)]
    test_frac: f64,
    /// Selection score.
    #[arg(long, value_enum, default_value = "cv")]
    utility: UtilityArg,
    /// Seed for a reproducible research run (NOT private against anyone who knows it); default:
    /// operating-system entropy.
    #[arg(long)]
    seed: Option<u64>,
    /// Draw the private predictions (± 2 noise s.d.) to this file (`.svg`, or `.png`); with
    /// --diagnostics also the data points and the non-private mean (NOT PRIVATE).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Also print NOT PRIVATE diagnostics computed from the private outputs and not covered by
    /// the guarantee: the RMSE on the held-out outputs and how many training outputs were
    /// clipped (and, with --plot, draw the data and the non-private mean). For research on data
    /// you may see; never publish them.
    #[arg(long)]
    diagnostics: bool,
}

/// Inputs (standardised), raw outputs, and how to map the first input back for plotting.
struct Loaded {
    x: DMatrix<f64>,
    y: Vec<f64>,
    range: OutputRange,
    signal_sd: f64,
    source: String,
    x_label: String,
    y_label: String,
    /// The first input column's public map (the plot's x axis is in raw units).
    map: ColumnMap,
    scaling_note: String,
}

fn load(args: &GpArgs) -> Result<Loaded, Failure> {
    let Some(path) = &args.data else {
        let (x, y) = demo::diabetes_bmi()?;
        let (lo, hi) = demo::Y_RANGE;
        return Ok(Loaded {
            x,
            y,
            range: OutputRange::new(lo, hi)?,
            signal_sd: args.signal_sd.unwrap_or(demo::SIGNAL_VAR.sqrt()),
            source: demo::SOURCE.into(),
            x_label: demo::LABELS.0.into(),
            y_label: demo::LABELS.1.into(),
            map: demo::BMI_MAP,
            scaling_note: demo::scaling_note(),
        });
    };
    let yr = args.y_range.as_deref().unwrap_or_default();
    if yr.len() != 2 {
        return Err(Failure::input("--y-range needs exactly LO,HI"));
    }
    let range = OutputRange::new(yr[0], yr[1])?;
    let data = load_gp_data(path, &args.x, args.y.as_deref().unwrap_or_default())?;
    let names: Vec<&str> = data.x_names.iter().map(String::as_str).collect();
    let ScaledInputs { x, maps, note } = scaling(args, names.len())?.apply(data.x, &names)?;
    Ok(Loaded {
        x,
        y: data.y,
        range,
        signal_sd: args.signal_sd.unwrap_or(range.width() / 4.0),
        source: path.display().to_string(),
        x_label: names[0].to_string(),
        y_label: data.y_name,
        map: maps[0],
        scaling_note: note,
    })
}

/// The public-bounds rule (`dptune::gp::InputScaling`) from `--x-range` (one LO,HI for all
/// `columns` or one per column) or `--x-standardise`.
fn scaling(args: &GpArgs, columns: usize) -> Result<InputScaling, Failure> {
    if args.x_standardise {
        return Ok(InputScaling::Standardise);
    }
    let Some(r) = &args.x_range else {
        return Err(Failure::input(
            "--data needs --x-range LO,HI (declared public input bounds, DESIGN rule 5) or \
             --x-standardise (inputs treated as public and standardised by their own mean and \
             s.d.)",
        ));
    };
    match r.len() {
        2 => Ok(InputScaling::Declared(vec![(r[0], r[1]); columns])),
        k if k == 2 * columns => Ok(InputScaling::Declared(
            r.chunks(2).map(|c| (c[0], c[1])).collect(),
        )),
        _ => Err(Failure::input(format!(
            "--x-range needs LO,HI once or once per --x column ({columns} columns, got {} \
             numbers)",
            r.len()
        ))),
    }
}

/// The σ_f accepted: its square and every product with the kernel's other public constants stay
/// far inside the normal f64 range, so no matrix built from them overflows or underflows.
const SIGNAL_SD: (f64, f64) = (1e-50, 1e50);

/// The σ_n²/σ_f² accepted. Outside it double precision stops carrying the model: above, the
/// prediction matrix shrinks like σ_f²/σ_n² until it is numerically zero (at 1e300 it was, and
/// an eigendecomposition of its empty range panicked); below, K + σ_n²I has a condition number
/// up to n/ratio, past what a Cholesky factorisation resolves for the row counts the GP takes.
const NOISE_RATIO: (f64, f64) = (1e-8, 1e8);

fn in_range(name: &'static str, value: f64, (lo, hi): (f64, f64)) -> Result<(), Failure> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(dptune::Error::invalid(name, value, format!("must lie in [{lo:e}, {hi:e}]")).into())
    }
}

/// Refuses, before anything is read, public parameters that the library would only see after a
/// transformation (σ_f enters squared, so a negative value would pass as its square),
/// `--folds` where no folds are used, and a `--plot` target that cannot be written.
fn validate(args: &GpArgs) -> Result<(), Failure> {
    if let Some(sd) = args.signal_sd {
        check_positive("signal_sd", sd)?;
        in_range("signal_sd", sd, SIGNAL_SD)?;
    }
    check_positive("noise_ratio", args.noise_ratio)?;
    in_range("noise_ratio", args.noise_ratio, NOISE_RATIO)?;
    if args.folds.is_some() && matches!(args.utility, UtilityArg::Lml) {
        return Err(ignored(
            "--folds",
            "with --utility lml (the marginal likelihood uses no folds)",
        ));
    }
    plot_file::check(args.plot.as_deref())
}

/// Runs `dptune gp`.
pub fn run(args: GpArgs) -> Result<Delivery, Failure> {
    validate(&args)?;
    // Public stages only (crate::progress): no row count, no lengthscale, no time.
    let progress = Progress::new("dptune gp");
    progress.stage("reading data");
    let data = load(&args)?;
    // σ_f defaults to a quarter of the declared (public) output range's width.
    if args.signal_sd.is_none() {
        in_range("range", data.signal_sd, SIGNAL_SD)?;
    }
    let signal_var = data.signal_sd * data.signal_sd;
    let cfg = SelectionConfig {
        grid: args.lengthscales.clone().unwrap_or_else(demo::default_grid),
        signal_var,
        noise_var: args.noise_ratio * signal_var,
        folds: args.folds.unwrap_or(5),
        eps_select: args.eps_select,
        eps_predict: args.eps_predict,
        delta: args.delta,
        utility: match args.utility {
            UtilityArg::Cv => Utility::CrossValidation,
            UtilityArg::Lml => Utility::LogMarginalLikelihood,
        },
        mvee: MveeConfig::default(),
    };
    let mut rng = match args.seed {
        Some(s) => SecureRng::seeded(s),
        None => SecureRng::from_os()?,
    };
    let n = data.x.nrows();
    let (train, test) = demo::holdout_split(n, args.test_frac, &mut rng)?;
    let x_tr = demo::rows(&data.x, &train);
    let y_tr = demo::pick(&data.y, &train);
    let x_te = demo::rows(&data.x, &test);
    let y_te = demo::pick(&data.y, &test);
    // With --plot and 1-D inputs, the release also covers a grid across the training inputs (one
    // release: the grid points are public inputs like the test points).
    let plot_grid: Vec<f64> = if args.plot.is_some() && data.x.ncols() == 1 {
        let lo = x_tr.column(0).min();
        let hi = x_tr.column(0).max();
        (0..100).map(|i| lo + (hi - lo) * i as f64 / 99.0).collect()
    } else {
        Vec::new()
    };
    let mut x_star = DMatrix::zeros(test.len() + plot_grid.len(), data.x.ncols());
    x_star.rows_mut(0, test.len()).copy_from(&x_te);
    for (i, g) in plot_grid.iter().enumerate() {
        x_star[(test.len() + i, 0)] = *g;
    }
    args.force
        .check(&cfg.resources(x_tr.nrows(), x_star.nrows()))?;
    args.budget.charge("gp", &cfg.cost(x_tr.nrows())?)?;
    progress.stage("private selection and predictions");
    let release = private_gp(&x_tr, &y_tr, data.range, &x_star, &cfg, &mut rng)?;
    let sel = &release.value.selection;
    let pred = &release.value.predictions;
    let nt = test.len();
    // NOT PRIVATE diagnostics: computed only when asked for; with --plot also the posterior
    // mean at the selected ℓ without noise, drawn and never released.
    let (diagnostics, nonpriv) = if args.diagnostics {
        progress.stage("not-private diagnostics");
        let clipped = data.range.clip(&y_tr)?;
        let nonpriv: Vec<f64> = match &args.plot {
            Some(_) => {
                let kernel = Kernel::new(sel.lengthscale, cfg.signal_var, cfg.noise_var)?;
                let gp = GpRegression::fit(&x_tr, &clipped.centred, kernel)?;
                gp.predict(&x_star)?
                    .iter()
                    .map(|v| v + data.range.centre())
                    .collect()
            }
            None => Vec::new(),
        };
        let d = GpDiagnostics::new(&pred.values[..nt], &y_te, clipped.clipped);
        (Some(d), nonpriv)
    } else {
        (None, Vec::new())
    };
    // Drawn now, written by `main` after the report (plot_file: the report comes first).
    let plot = args.plot.as_ref().map(|path| {
        let chart = GpPlot {
            x_label: &data.x_label,
            y_label: &data.y_label,
            map: data.map,
            range: data.range,
            x_train: &x_tr,
            x_test: &x_te,
            x_star: &x_star,
            predictions: pred,
        };
        let title = format!("{NOT_PRIVATE} (--diagnostics)");
        let shown = diagnostics.as_ref().map(|_| NotPrivate {
            title: &title,
            y_train: &y_tr,
            y_test: &y_te,
            mean: &nonpriv,
        });
        plot_file::Pending::new(path, chart.svg(shown))
    });
    let r = GpReport::new(
        &release,
        &cfg,
        test,
        GpDataReport::new(
            &data.source,
            train.len(),
            nt,
            data.range,
            &data.scaling_note,
        ),
        args.seed.is_some(),
        args.plot.as_ref().map(|p| p.display().to_string()),
        diagnostics,
    )?;
    let human = human(&r);
    Ok(Delivery {
        report: Report::of(&r, human)?,
        plot,
    })
}

/// The report for people.
fn human(r: &GpReport) -> String {
    let (d, sel, pred, p) = (&r.data, &r.selection, &r.predictions, &r.privacy);
    let mut human = String::new();
    let _ = writeln!(human, "DP Gaussian-process regression (cloaking)");
    let _ = writeln!(
        human,
        "  data:         {} ({} train / {} test; inputs and row count public, outputs private)",
        d.source, d.n_train, d.n_test
    );
    let _ = writeln!(human, "  inputs:       {}", d.input_scaling);
    let _ = writeln!(
        human,
        "  outputs:      clipped into the declared range [{}, {}]",
        fmt_param(d.y_range[0]),
        fmt_param(d.y_range[1])
    );
    let _ = writeln!(
        human,
        "  lengthscale:  {} (selected privately from {} candidates, {}-fold {:?}, Δu = {:.3})",
        fmt_param(r.lengthscale),
        sel.grid.len(),
        sel.folds,
        sel.utility,
        sel.sensitivity
    );
    let _ = writeln!(
        human,
        "  predictions:  {} cloaked predictions at the held-out inputs (values in --json)",
        pred.n_test
    );
    let _ = writeln!(
        human,
        "  noise:        multiplier s = {:.4} (analytic Gaussian){}; mean noise s.d. at test points {:.3}",
        pred.sigma,
        pred.classic_sigma_c_delta
            .map(|c| format!(", paper's c(δ) form would give {c:.4}"))
            .unwrap_or_default(),
        pred.mean_noise_sd_at_test
    );
    let _ = writeln!(
        human,
        "  privacy:      (ε = {}, δ = {}) {} = selection ε {} + predictions (ε {}, δ {})",
        fmt_param(p.epsilon),
        fmt_param(p.delta),
        p.neighbours,
        fmt_param(p.eps_select),
        fmt_param(p.eps_predict),
        fmt_param(p.delta)
    );
    if r.seeded {
        let _ = writeln!(human, "  note:         {SEEDED_NOTE}");
    }
    if let Some(plot) = &r.plot {
        let _ = writeln!(human, "  plot:         {plot}");
    }
    if let Some(diag) = &r.diagnostics {
        let _ = writeln!(human, "  diagnostics:  {NOT_PRIVATE}");
        let _ = writeln!(
            human,
            "    test RMSE:  {:.3} on the held-out outputs (NOT PRIVATE)",
            diag.test_rmse
        );
        let _ = writeln!(
            human,
            "    clipped:    {} of {} training outputs were outside the range (NOT PRIVATE)",
            diag.clipped_training_outputs, d.n_train
        );
    }
    human.trim_end().to_string()
}

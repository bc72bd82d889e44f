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
use dptune::gp::{
    demo, load_gp_data, private_gp, GpRegression, Kernel, MveeConfig, OutputRange, SelectionConfig,
    Utility,
};
use dptune::noise::SecureRng;
use nalgebra::DMatrix;
use serde_json::json;

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

/// The label every diagnostic carries, in text and JSON.
const NOT_PRIVATE: &str =
    "NOT PRIVATE: computed from the private outputs and not covered by the guarantee";

/// Inputs (standardised), raw outputs, and how to map the first input back for plotting.
struct Loaded {
    x: DMatrix<f64>,
    y: Vec<f64>,
    range: OutputRange,
    signal_sd: f64,
    source: String,
    x_label: String,
    y_label: String,
    /// raw = std·scale + shift for the first input column.
    shift: f64,
    scale: f64,
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
            source: "bundled diabetes (scikit-learn 1.5.2, BSD-3): BMI -> disease progression"
                .into(),
            x_label: "BMI (kg/m²)".into(),
            y_label: "disease progression".into(),
            shift: demo::BMI_CENTRE,
            scale: demo::BMI_SCALE,
            scaling_note: format!(
                "x = (BMI - {})/{} (public constants)",
                demo::BMI_CENTRE,
                demo::BMI_SCALE
            ),
        });
    };
    let yr = args.y_range.as_deref().unwrap_or_default();
    if yr.len() != 2 {
        return Err(Failure::input("--y-range needs exactly LO,HI"));
    }
    let range = OutputRange::new(yr[0], yr[1])?;
    let data = load_gp_data(path, &args.x, args.y.as_deref().unwrap_or_default())?;
    let names: Vec<&str> = data.x_names.iter().map(String::as_str).collect();
    let (x, shift, scale, scaling_note) = scale_inputs(data.x, &names, args)?;
    Ok(Loaded {
        x,
        y: data.y,
        range,
        signal_sd: args.signal_sd.unwrap_or(range.width() / 4.0),
        source: path.display().to_string(),
        x_label: names[0].to_string(),
        y_label: data.y_name,
        shift,
        scale,
        scaling_note,
    })
}

/// Maps the raw inputs to the scaled units the lengthscales are stated in: by the declared public
/// bounds of `--x-range` (DESIGN rule 5), or, only when the user asks with `--x-standardise`, by
/// each column's own mean and s.d. (inputs are public in the cloaking threat model, DPGP.md §2).
/// Returns the scaled inputs, the first column's shift and scale (raw = scaled·scale + shift),
/// and a note for the output.
fn scale_inputs(
    mut x: DMatrix<f64>,
    names: &[&str],
    args: &GpArgs,
) -> Result<(DMatrix<f64>, f64, f64, String), Failure> {
    let (n, p) = x.shape();
    let mut maps = Vec::with_capacity(p);
    let note = if let Some(r) = &args.x_range {
        let pairs: Vec<(f64, f64)> = match r.len() {
            2 => vec![(r[0], r[1]); p],
            k if k == 2 * p => r.chunks(2).map(|c| (c[0], c[1])).collect(),
            _ => {
                return Err(Failure::input(format!(
                    "--x-range needs LO,HI once or once per --x column ({p} columns, got {} \
                     numbers)",
                    r.len()
                )))
            }
        };
        for (j, &(lo, hi)) in pairs.iter().enumerate() {
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(Failure::input(format!(
                    "--x-range for column {}: needs finite LO < HI, got {},{}",
                    names[j],
                    fmt_param(lo),
                    fmt_param(hi)
                )));
            }
            if let Some(i) = (0..n).find(|&i| !(lo..=hi).contains(&x[(i, j)])) {
                return Err(Failure::input(format!(
                    "--x-range: column {} has {} (data row {}) outside the declared public \
                     range [{}, {}]; declare bounds that hold for every input",
                    names[j],
                    fmt_param(x[(i, j)]),
                    i + 1,
                    fmt_param(lo),
                    fmt_param(hi)
                )));
            }
            maps.push((0.5 * (lo + hi), 0.25 * (hi - lo)));
        }
        let ranges: Vec<String> = names
            .iter()
            .zip(&pairs)
            .map(|(c, (lo, hi))| format!("{c} in [{}, {}]", fmt_param(*lo), fmt_param(*hi)))
            .collect();
        format!(
            "inputs scaled by the declared public ranges ({}) to [-2, 2]",
            ranges.join(", ")
        )
    } else if args.x_standardise {
        for j in 0..p {
            let col = x.column(j);
            let mean = col.mean();
            let sd = (col.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
            maps.push((mean, if sd > 0.0 { sd } else { 1.0 }));
        }
        "inputs standardised by their own mean and s.d. (--x-standardise): the inputs are \
         treated as PUBLIC, as in the cloaking threat model; only the outputs are protected"
            .to_string()
    } else {
        return Err(Failure::input(
            "--data needs --x-range LO,HI (declared public input bounds, DESIGN rule 5) or \
             --x-standardise (inputs treated as public and standardised by their own mean and \
             s.d.)",
        ));
    };
    for (j, &(shift, scale)) in maps.iter().enumerate() {
        x.column_mut(j).apply(|v| *v = (*v - shift) / scale);
    }
    Ok((x, maps[0].0, maps[0].1, note))
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
/// transformation (σ_f enters squared, so a negative value would pass as its square), and
/// `--folds` where no folds are used.
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
    Ok(())
}

/// Runs `dptune gp`.
pub fn run(args: GpArgs) -> Result<Delivery, Failure> {
    validate(&args)?;
    if let Some(p) = &args.plot {
        plot_file::check(p)?;
    }
    // Public stages only (crate::progress): no row count, no lengthscale, no time.
    let progress = Progress::new("dptune gp");
    progress.stage("reading data");
    let data = load(&args)?;
    // σ_f defaults to a quarter of the declared (public) output range's width.
    if args.signal_sd.is_none() {
        in_range("range", data.signal_sd, SIGNAL_SD)?;
    }
    let grid = args.lengthscales.clone().unwrap_or_else(demo::default_grid);
    let signal_var = data.signal_sd * data.signal_sd;
    let cfg = SelectionConfig {
        grid: grid.clone(),
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
    let eps = release.spent.epsilon(args.delta)?;
    let mean_sd = pred.noise_sd[..nt].iter().sum::<f64>() / nt as f64;
    // NOT PRIVATE diagnostics: computed only when asked for.
    let diag = if args.diagnostics {
        progress.stage("not-private diagnostics");
        let test_rmse = (pred.values[..nt]
            .iter()
            .zip(&y_te)
            .map(|(p, y)| (p - y).powi(2))
            .sum::<f64>()
            / nt as f64)
            .sqrt();
        let clipped = data.range.clip(&y_tr)?.clipped;
        let nonpriv = match &args.plot {
            Some(_) => {
                // The posterior mean at the selected ℓ without noise: drawn, never released.
                let kernel = Kernel::new(sel.lengthscale, cfg.signal_var, cfg.noise_var)?;
                let centred = data.range.clip(&y_tr)?.centred;
                let gp = GpRegression::fit(&x_tr, &centred, kernel)?;
                gp.predict(&x_star)?
                    .iter()
                    .map(|v| v + data.range.centre())
                    .collect()
            }
            None => Vec::new(),
        };
        Some(Diagnostics {
            test_rmse,
            clipped,
            nonpriv,
        })
    } else {
        None
    };
    // Drawn now, written by `main` after the report (plot_file: the report comes first).
    let plot = args.plot.as_ref().map(|path| {
        let private = diag.as_ref().map(|d| PlotDiagnostics {
            x_tr: &x_tr,
            y_tr: &y_tr,
            x_te: &x_te,
            y_te: &y_te,
            nonpriv: &d.nonpriv,
        });
        let svg = render_svg(&data, &x_tr, &x_te, &x_star, pred, nt, private);
        plot_file::Pending::new(path, svg)
    });
    // Every field is classified. [public] = a public input or computed from public inputs (the
    // inputs X, flags, the output range, the OS-keyed or seeded randomness of the split and the
    // folds, drawn independently of the outputs); [release] = the charged release or a function
    // of it and public inputs; [NOT PRIVATE] = under --diagnostics only.
    let mut json = json!({
        "lengthscale": sel.lengthscale,                       // [release] the EM's choice
        "privacy": {                                          // [public] flags only
            "epsilon": eps,
            "delta": args.delta,
            "eps_select": args.eps_select,
            "eps_predict": args.eps_predict,
            "neighbours": release.spent.neighbours(),
            "guarantee": release.spent,
        },
        "selection": {
            "index": sel.index,                               // [release]
            "grid": grid,                                     // [public]
            "utility": sel.utility,                           // [public]
            "sensitivity": sel.sensitivity,                   // [public] from X and the folds
            "folds": cfg.folds,                               // [public]
        },
        "predictions": {
            "values": pred.values[..nt],                      // [release] cloaked predictions
            "noise_sd": pred.noise_sd[..nt],                  // [release] from X* and ℓ
            "test_rows": test,                                // [public] the random split
            "n_test": nt,                                     // [public] N is public (replace-one)
            "n_plot_grid": plot_grid.len(),                   // [public]
            "sigma": pred.sigma,                              // [release] from X, X*, ℓ, ε, δ
            "classic_sigma_c_delta": pred.classic_sigma,      // [release] idem
            "sensitivity": pred.sensitivity,                  // [release] idem
            "charged_sensitivity": pred.charged_sensitivity,  // [release] idem
            "granularity": pred.granularity,                  // [release] idem
            "mean_noise_sd_at_test": mean_sd,                 // [release] idem
        },
        "data": {
            "source": data.source,                            // [public]
            "n_train": train.len(),                           // [public] N is public (replace-one)
            "n_test": nt,                                     // [public]
            "y_range": [data.range.lo(), data.range.hi()],    // [public] declared
            "input_scaling": data.scaling_note,               // [public] inputs only
        },
        "seeded": args.seed.is_some(),                        // [public]
        "plot": args.plot.as_ref().map(|p| p.display().to_string()), // [public]
    });
    if let Some(d) = &diag {
        json["diagnostics"] = json!({                         // [NOT PRIVATE] --diagnostics only
            "not_private": true,
            "label": NOT_PRIVATE,
            "test_rmse": d.test_rmse,
            "clipped_training_outputs": d.clipped,
        });
    }
    let mut human = String::new();
    let _ = writeln!(human, "DP Gaussian-process regression (cloaking)");
    let _ = writeln!(
        human,
        "  data:         {} ({} train / {} test; inputs and row count public, outputs private)",
        data.source,
        train.len(),
        nt
    );
    let _ = writeln!(human, "  inputs:       {}", data.scaling_note);
    let _ = writeln!(
        human,
        "  outputs:      clipped into the declared range [{}, {}]",
        fmt_param(data.range.lo()),
        fmt_param(data.range.hi())
    );
    let _ = writeln!(
        human,
        "  lengthscale:  {} (selected privately from {} candidates, {}-fold {:?}, Δu = {:.3})",
        fmt_param(sel.lengthscale),
        grid.len(),
        cfg.folds,
        sel.utility,
        sel.sensitivity
    );
    let _ = writeln!(
        human,
        "  predictions:  {nt} cloaked predictions at the held-out inputs (values in --json)"
    );
    let _ = writeln!(
        human,
        "  noise:        multiplier s = {:.4} (analytic Gaussian){}; mean noise s.d. at test points {:.3}",
        pred.sigma,
        pred.classic_sigma
            .map(|c| format!(", paper's c(δ) form would give {c:.4}"))
            .unwrap_or_default(),
        mean_sd
    );
    let _ = writeln!(
        human,
        "  privacy:      (ε = {}, δ = {}) {} = selection ε {} + predictions (ε {}, δ {})",
        fmt_param(eps),
        fmt_param(args.delta),
        release.spent.neighbours(),
        fmt_param(args.eps_select),
        fmt_param(args.eps_predict),
        fmt_param(args.delta)
    );
    if args.seed.is_some() {
        let _ = writeln!(human, "  note:         seeded run: reproducible, NOT private against anyone who knows the seed");
    }
    if let Some(p) = &args.plot {
        let _ = writeln!(human, "  plot:         {}", p.display());
    }
    if let Some(d) = &diag {
        let _ = writeln!(human, "  diagnostics:  {NOT_PRIVATE}");
        let _ = writeln!(
            human,
            "    test RMSE:  {:.3} on the held-out outputs (NOT PRIVATE)",
            d.test_rmse
        );
        let _ = writeln!(
            human,
            "    clipped:    {} of {} training outputs were outside the range (NOT PRIVATE)",
            d.clipped,
            train.len()
        );
    }
    Ok(Delivery {
        report: Report {
            json,
            human: human.trim_end().to_string(),
        },
        plot,
    })
}

/// NOT PRIVATE values shown only under `--diagnostics`.
struct Diagnostics {
    test_rmse: f64,
    clipped: usize,
    /// The non-private posterior mean at the prediction points (only with --plot).
    nonpriv: Vec<f64>,
}

/// What the plot adds under `--diagnostics` (NOT PRIVATE): the data points and the non-private
/// mean.
struct PlotDiagnostics<'a> {
    x_tr: &'a DMatrix<f64>,
    y_tr: &'a [f64],
    x_te: &'a DMatrix<f64>,
    y_te: &'a [f64],
    nonpriv: &'a [f64],
}

/// A small hand-written SVG: the private predictions with ±2 noise s.d. (the release; the axes
/// come from the public inputs and the declared output range) and, only with `--diagnostics`,
/// the training and test points and the non-private mean under a NOT PRIVATE title.
fn render_svg(
    data: &Loaded,
    x_tr: &DMatrix<f64>,
    x_te: &DMatrix<f64>,
    x_star: &DMatrix<f64>,
    pred: &dptune::gp::DpPredictions,
    nt: usize,
    private: Option<PlotDiagnostics<'_>>,
) -> String {
    let raw = |v: f64| v * data.scale + data.shift;
    let (w, h, m) = (760.0, 480.0, 60.0);
    let xs: Vec<f64> = x_tr
        .column(0)
        .iter()
        .chain(x_te.column(0).iter())
        .map(|v| raw(*v))
        .collect();
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(f64::NEG_INFINITY, f64::max),
    );
    let (y0, y1) = (data.range.lo(), data.range.hi());
    let px = |x: f64| m + (x - x0) / (x1 - x0).max(1e-12) * (w - 2.0 * m);
    let py = |y: f64| h - m - (y.clamp(y0, y1) - y0) / (y1 - y0) * (h - 2.0 * m);
    let mut s = String::new();
    let _ = write!(
        s,
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="white"/>
<line x1="{m}" y1="{b}" x2="{r}" y2="{b}" stroke="black"/><line x1="{m}" y1="{m}" x2="{m}" y2="{b}" stroke="black"/>
<text x="{cx}" y="{tb}" text-anchor="middle">{xl}</text>
<text x="15" y="{cy}" transform="rotate(-90 15 {cy})" text-anchor="middle">{yl}</text>
<text x="{m}" y="{tb}" >{x0:.1}</text><text x="{r}" y="{tb}" text-anchor="end">{x1:.1}</text>
<text x="{ml}" y="{b}" text-anchor="end">{y0}</text><text x="{ml}" y="{mt}" text-anchor="end">{y1}</text>
"##,
        b = h - m,
        r = w - m,
        cx = w / 2.0,
        tb = h - m + 30.0,
        cy = h / 2.0,
        ml = m - 5.0,
        mt = m + 4.0,
        xl = data.x_label,
        yl = data.y_label,
    );
    if private.is_some() {
        let _ = writeln!(
            s,
            r##"<text x="{}" y="20" text-anchor="middle" fill="#b00">{NOT_PRIVATE} (--diagnostics)</text>"##,
            w / 2.0
        );
    }
    let empty = DMatrix::zeros(0, 1);
    let none = PlotDiagnostics {
        x_tr: &empty,
        y_tr: &[],
        x_te: &empty,
        y_te: &[],
        nonpriv: &[],
    };
    let shown = private.as_ref().unwrap_or(&none);
    let nonpriv = shown.nonpriv;
    for (x, y) in shown.x_tr.column(0).iter().zip(shown.y_tr) {
        let _ = writeln!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2" fill="#999"/>"##,
            px(raw(*x)),
            py(*y)
        );
    }
    for (x, y) in shown.x_te.column(0).iter().zip(shown.y_te) {
        let _ = writeln!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="2.5" fill="none" stroke="#1b9e77"/>"##,
            px(raw(*x)),
            py(*y)
        );
    }
    let grid: Vec<usize> = (nt..x_star.nrows()).collect();
    if grid.is_empty() {
        // Multi-dimensional inputs: private and non-private predictions at the test points.
        for i in 0..nt {
            let x = px(raw(x_star[(i, 0)]));
            let _ = writeln!(
                s,
                r##"<circle cx="{x:.1}" cy="{:.1}" r="3" fill="#d95f02"/>"##,
                py(pred.values[i])
            );
            if let Some(v) = nonpriv.get(i) {
                let _ = writeln!(
                    s,
                    r##"<circle cx="{x:.1}" cy="{:.1}" r="3" fill="#7570b3"/>"##,
                    py(*v)
                );
            }
        }
    } else {
        let path = |f: &dyn Fn(usize) -> f64| {
            grid.iter()
                .enumerate()
                .map(|(k, &i)| {
                    format!(
                        "{}{:.1},{:.1}",
                        if k == 0 { "M" } else { "L" },
                        px(raw(x_star[(i, 0)])),
                        py(f(i))
                    )
                })
                .collect::<Vec<_>>()
                .join(" ")
        };
        let upper = path(&|i| pred.values[i] + 2.0 * pred.noise_sd[i]);
        let lower = path(&|i| pred.values[i] - 2.0 * pred.noise_sd[i]);
        let _ = writeln!(
            s,
            r##"<path d="{upper}" fill="none" stroke="#d95f02" stroke-dasharray="4 3" stroke-width="1"/>"##
        );
        let _ = writeln!(
            s,
            r##"<path d="{lower}" fill="none" stroke="#d95f02" stroke-dasharray="4 3" stroke-width="1"/>"##
        );
        let _ = writeln!(
            s,
            r##"<path d="{}" fill="none" stroke="#d95f02" stroke-width="2"/>"##,
            path(&|i| pred.values[i])
        );
        if !nonpriv.is_empty() {
            let _ = writeln!(
                s,
                r##"<path d="{}" fill="none" stroke="#7570b3" stroke-width="2"/>"##,
                path(&|i| nonpriv[i])
            );
        }
    }
    let mut legend = vec![("#d95f02", "private cloaked predictions (± 2 noise s.d.)")];
    if private.is_some() {
        legend.extend([
            ("#999", "training data (NOT PRIVATE)"),
            ("#1b9e77", "held-out test data (NOT PRIVATE)"),
            ("#7570b3", "non-private GP mean (NOT PRIVATE)"),
        ]);
    }
    for (k, (c, t)) in legend.iter().enumerate() {
        let y = m + 14.0 * k as f64;
        let _ = writeln!(
            s,
            r##"<rect x="{}" y="{}" width="10" height="10" fill="{c}"/><text x="{}" y="{}">{t}</text>"##,
            w - m - 260.0,
            y - 9.0,
            w - m - 245.0,
            y
        );
    }
    s.push_str("</svg>\n");
    s
}

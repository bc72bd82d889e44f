//! `dptune study`: how close each private tuner gets to the non-private best on a benchmark
//! table, per method and budget; `--recommend` names the method to use under the study's model.

use std::path::{Path, PathBuf};

use clap::Args;
use dptune::select::Goal;
use dptune::study::report::TitledStudy;
use dptune::study::{
    load_json_table, load_table, plot, recommend, run_study, Columns, ScoreModel, ScoreTable,
    StudyMethod, StudyOptions, StudyReport,
};
use dptune::Error;

use crate::flags::refuse_unread;
use crate::plot_file;
use crate::plot_file::Delivery;
use crate::progress::Progress;
use crate::report::{fmt_param, Failure, Report};

/// Arguments of `dptune study`.
#[derive(Args)]
pub struct StudyArgs {
    /// Table: CSV (optionally gzip) with a header, or a JSON object {configuration: score}.
    table: Option<PathBuf>,
    /// Validation-score column of a CSV table, or the base name B of per-seed columns B_seed0,
    /// B_seed1, ... (then seed 0 is the validation score).
    #[arg(long)]
    score: Option<String>,
    /// Test-score column of a CSV table (or per-seed base name, averaged). Default: the mean of
    /// the other seeds of the score column.
    #[arg(long)]
    test_score: Option<String>,
    /// Larger scores are better (default).
    #[arg(long, conflicts_with = "minimize")]
    maximize: bool,
    /// Smaller scores are better (losses).
    #[arg(long)]
    minimize: bool,
    /// Validation-set size n: the sensitivity of a score is bound/n.
    #[arg(long)]
    n: Option<u64>,
    /// Per-record scores lie in [0, bound]; table scores are clipped to it.
    #[arg(long, default_value_t = 1.0)]
    bound: f64,
    /// Scores are not monotone between neighbours (range 2Δ instead of Δ).
    #[arg(long)]
    non_monotone: bool,
    /// Total budgets ε, comma-separated (not with --recommend) [default: 0.01,0.1,0.3,1,3,10].
    #[arg(long, value_delimiter = ',')]
    epsilons: Option<Vec<f64>>,
    /// Repetitions per sampled (method, budget) [default: 1000; with --recommend 400, and at
    /// most 400].
    #[arg(long)]
    repetitions: Option<usize>,
    /// Seed of the study (reproducible research run).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// E\[K\] of Liu-Talwar and Papernot-Steinke.
    #[arg(long, default_value_t = 10.0)]
    mean_runs: f64,
    /// δ of Gaussian report-noisy-max (not with --recommend) [default: 1e-6].
    #[arg(long)]
    delta: Option<f64>,
    /// Methods to compare, comma-separated (default: all; not with --recommend).
    #[arg(long, value_delimiter = ',')]
    methods: Vec<String>,
    /// Write a plot of mean regret against ε (`.svg`, or `.png` rasterised from it).
    #[arg(long)]
    plot: Option<PathBuf>,
    /// Title of the plot (default: the table's file name).
    #[arg(long)]
    title: Option<String>,
    /// Name the method with the lowest expected regret for --candidates, --epsilon and the
    /// sensitivity bound/n, under the study's model.
    #[arg(long)]
    recommend: bool,
    /// Number of candidates (for --recommend, instead of a table).
    #[arg(long, requires = "recommend", conflicts_with = "table")]
    candidates: Option<usize>,
    /// Total budget (for --recommend).
    #[arg(long, requires = "recommend")]
    epsilon: Option<f64>,
    /// Run --recommend even if its estimated memory or time exceeds what this machine has
    /// (never past what a 64-bit process can address).
    #[arg(long, requires = "recommend")]
    force: bool,
}

fn load(args: &StudyArgs, path: &Path, goal: Goal) -> Result<ScoreTable, Failure> {
    if path.extension().is_some_and(|e| e == "json") {
        Ok(load_json_table(path, goal)?)
    } else {
        let score = args
            .score
            .clone()
            .ok_or_else(|| Failure::input("name the validation-score column with --score COL"))?;
        Ok(load_table(
            path,
            &Columns {
                score,
                test: args.test_score.clone(),
                goal,
            },
        )?)
    }
}

/// Most repetitions `--recommend` runs per method.
const RECOMMEND_REPETITIONS: usize = 400;

/// Refuses, before anything is read, the flags that the mode (`--recommend` or a study) or the
/// table's kind does not read (each would be silently dropped), and a `--plot` target that
/// cannot be written.
fn validate(args: &StudyArgs) -> Result<(), Failure> {
    refuse_unread(
        !args.recommend,
        "with --recommend (it reads only the number of candidates)",
        &[
            ("--plot", args.plot.is_some()),
            ("--title", args.title.is_some()),
            ("--methods", !args.methods.is_empty()),
            ("--epsilons", args.epsilons.is_some()),
            ("--delta", args.delta.is_some()),
            ("--test-score", args.test_score.is_some()),
            ("--minimize", args.minimize),
            ("--maximize", args.maximize),
        ],
    )?;
    if args.recommend {
        if let Some(r) = args.repetitions.filter(|&r| r > RECOMMEND_REPETITIONS) {
            return Err(Error::invalid(
                "repetitions",
                r,
                format!("--recommend runs at most {RECOMMEND_REPETITIONS} per method"),
            )
            .into());
        }
    }
    let json_table = args
        .table
        .as_ref()
        .is_some_and(|p| p.extension().is_some_and(|e| e == "json"));
    refuse_unread(
        !json_table,
        "with a JSON table (its values are the scores)",
        &[
            ("--score", args.score.is_some()),
            ("--test-score", args.test_score.is_some()),
        ],
    )?;
    plot_file::check(args.plot.as_deref())
}

/// Runs `dptune study`.
pub fn run(args: StudyArgs) -> Result<Delivery, Failure> {
    validate(&args)?;
    // Public stages (crate::progress); on a terminal also the count of finished cells (methods
    // times budgets, public).
    let progress = Progress::new("dptune study");
    let goal = if args.minimize {
        Goal::Minimize
    } else {
        Goal::Maximize
    };
    let n = args
        .n
        .ok_or_else(|| Failure::input("give the validation-set size with --n N"))?;
    let model = ScoreModel::new(n, args.bound, !args.non_monotone)?;
    let table = match &args.table {
        Some(p) => {
            progress.stage("reading the table");
            Some(load(&args, p, goal)?)
        }
        None => None,
    };
    if args.recommend {
        let m = match (args.candidates, &table) {
            (Some(m), _) => m,
            (None, Some(t)) => t.len(),
            (None, None) => {
                return Err(Failure::input(
                    "--recommend needs --candidates M (or a table)",
                ))
            }
        };
        let eps = args
            .epsilon
            .ok_or_else(|| Failure::input("--recommend needs the total budget --epsilon E"))?;
        let reps = args.repetitions.unwrap_or(RECOMMEND_REPETITIONS);
        crate::limits::check(&recommend::resources(m, reps, args.mean_runs), args.force)?;
        progress.stage("comparing the methods");
        let r = recommend(m, eps, &model, args.mean_runs, reps, args.seed)?;
        let mut human = format!("recommendation: {}\n{}\n\n", r.method, r.reason);
        human.push_str("method              expected regret (fraction of range)   runs needed\n");
        for x in &r.ranking {
            human.push_str(&format!(
                "{:<20}{:>12.5} ± {:<10.5}{:>22}\n",
                x.method.name(),
                x.expected_regret / args.bound,
                x.se / args.bound,
                x.runs_needed
            ));
        }
        return Ok(Report::of(&r, human.trim_end().to_string())?.into());
    }
    let table = table.ok_or_else(|| Failure::input("give a table file"))?;
    let methods = if args.methods.is_empty() {
        StudyMethod::ALL.to_vec()
    } else {
        args.methods
            .iter()
            .map(|s| s.parse())
            .collect::<Result<Vec<StudyMethod>, _>>()?
    };
    let options = StudyOptions {
        epsilons: args
            .epsilons
            .clone()
            .unwrap_or_else(|| vec![0.01, 0.1, 0.3, 1.0, 3.0, 10.0]),
        repetitions: args.repetitions.unwrap_or(1000),
        seed: args.seed,
        mean_runs: args.mean_runs,
        delta: args.delta.unwrap_or(1e-6),
        methods,
    };
    progress.stage("simulating the tuners");
    let tick = |done: usize, total: usize| progress.detail(&format!("{done}/{total} cells"));
    let report = run_study(&table, &model, &options, Some(&tick))?;
    let title = args.title.clone().unwrap_or_else(|| {
        args.table
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    // Drawn now, written by `main` after the report (plot_file: the report comes first).
    let plot = args
        .plot
        .as_ref()
        .map(|p| plot_file::Pending::new(p, plot::svg(&report, &title)));
    let human = human(&report, &title);
    Ok(Delivery {
        report: Report::of(
            &TitledStudy {
                study: report,
                title,
            },
            human,
        )?,
        plot,
    })
}

fn human(r: &StudyReport, title: &str) -> String {
    let mut s = format!(
        "study of {title}: {} configurations; select on {}, regret on {} ({}); n = {}, \
         sensitivity {:.3e}{}\n",
        r.configurations,
        r.validation_source,
        r.test_source,
        match r.goal {
            Goal::Maximize => "maximise",
            Goal::Minimize => "minimise",
        },
        r.model.n,
        r.sensitivity,
        if r.model.monotonic { " (monotone)" } else { "" },
    );
    s.push_str(&format!(
        "non-private best: configuration {} of {} tied (validation {:.6}, mean test {:.6}); \
         test-oracle regret {:.6}; table mean regret {:.6} ± {:.6}\n",
        r.best_index,
        r.tied_best,
        r.best_validation,
        r.best_test,
        r.oracle_regret,
        r.table_mean_regret,
        r.table_mean_regret_se
    ));
    s.push_str(&format!(
        "{} repetitions per sampled cell, seed {}; regret = mean test of the tied best - test(chosen), \
         in table units\n\n",
        r.options.repetitions, r.options.seed
    ));
    s.push_str(&format!(
        "{:<18}{:>9}{:>12}{:>11}{:>11}{:>11}{:>11}  {}\n",
        "method", "epsilon", "mean", "se", "p10", "p50", "p90", "how"
    ));
    for c in &r.cells {
        s.push_str(&format!(
            "{:<18}{:>9}{:>12.6}{:>11.6}{:>11.6}{:>11.6}{:>11.6}  {}\n",
            c.method.name(),
            fmt_param(c.epsilon),
            c.mean,
            c.se,
            c.p10,
            c.p50,
            c.p90,
            if c.exact { "exact" } else { "sampled" }
        ));
    }
    s.trim_end().to_string()
}

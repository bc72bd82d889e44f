//! `dptune study`: how close each private tuner gets to the non-private best on a benchmark
//! table, per method and budget; `--recommend` names the method to use under the study's model.

use std::path::{Path, PathBuf};

use clap::Args;
use dptune::select::Goal;
use dptune::study::{
    load_json_table, load_table, plot, recommend, run_study, Columns, ScoreModel, ScoreTable,
    StudyMethod, StudyOptions, StudyReport,
};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;

use crate::plot_file;
use crate::report::{Failure, Report};

/// Arguments of `dptune study`.
#[derive(Args)]
pub struct StudyArgs {
    /// Table: CSV (optionally gzip) with a header, or a JSON object {configuration: score}.
    table: Option<PathBuf>,
    /// Validation-score column, or the base name B of per-seed columns B_seed0, B_seed1, ...
    /// (then seed 0 is the validation score).
    #[arg(long)]
    score: Option<String>,
    /// Test-score column (or per-seed base name, averaged). Default: the mean of the other
    /// seeds of the score column.
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
    /// Total budgets ε, comma-separated.
    #[arg(long, value_delimiter = ',', default_value = "0.01,0.1,0.3,1,3,10")]
    epsilons: Vec<f64>,
    /// Repetitions per sampled (method, budget).
    #[arg(long, default_value_t = 1000)]
    repetitions: usize,
    /// Seed of the study (reproducible research run).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// E[K] of Liu-Talwar and Papernot-Steinke.
    #[arg(long, default_value_t = 10.0)]
    mean_runs: f64,
    /// δ of Gaussian report-noisy-max.
    #[arg(long, default_value_t = 1e-6)]
    delta: f64,
    /// Methods to compare, comma-separated (default: all).
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
    /// Number of candidates (for --recommend; default: the table's size).
    #[arg(long)]
    candidates: Option<usize>,
    /// Total budget (for --recommend).
    #[arg(long)]
    epsilon: Option<f64>,
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

/// Runs `dptune study`.
pub fn run(args: StudyArgs, json_out: bool) -> Result<Report, Failure> {
    if let Some(p) = &args.plot {
        plot_file::format_of(p)?;
    }
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
        Some(p) => Some(load(&args, p, goal)?),
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
        let reps = args.repetitions.min(400);
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
        return Ok(Report {
            json: serde_json::to_value(&r).expect("serialisable"),
            human: human.trim_end().to_string(),
        });
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
        epsilons: args.epsilons.clone(),
        repetitions: args.repetitions,
        seed: args.seed,
        mean_runs: args.mean_runs,
        delta: args.delta,
        methods,
    };
    let bar = if json_out {
        ProgressBar::hidden()
    } else {
        ProgressBar::new(0).with_style(
            ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} cells ({elapsed})")
                .expect("valid template"),
        )
    };
    bar.set_message("study");
    let tick = |done: usize, total: usize| {
        bar.set_length(total as u64);
        bar.set_position(done as u64);
    };
    let report = run_study(&table, &model, &options, Some(&tick))?;
    bar.finish_and_clear();
    let title = args.title.clone().unwrap_or_else(|| {
        args.table
            .as_ref()
            .and_then(|p| p.file_name())
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_default()
    });
    if let Some(p) = &args.plot {
        plot_file::write(p, &plot::svg(&report, &title))?;
    }
    let mut json = serde_json::to_value(&report).expect("serialisable");
    json["title"] = json!(title);
    Ok(Report {
        json,
        human: human(&report, &title),
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
            c.epsilon,
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

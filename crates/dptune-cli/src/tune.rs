//! `dptune tune`: a privately tuned model from a dataset and a budget, in one command
//! (library: `dptune::learn::pipeline`).
//!
//! Output: the chosen configuration, the final model's score on the public test split, the
//! record count DP-SGD planned with (a charged noisy count, or the declared public size), the
//! privacy spent (count, tuning, final fit, total) and one line saying who may see timing.
//! Never the exact number of private records, the number of candidate runs or the run time:
//! not in the output, not in the progress display (public stages and a heartbeat of fixed text:
//! `crate::progress`).

use std::path::{Path, PathBuf};

use clap::{Args, ValueEnum};

use dptune::data::{bundled, load_csv, Dataset, Schema, BUNDLED_NAMES};
use dptune::error::check_positive;
use dptune::learn::pipeline::{
    compare_on_test, released_nothing, tune, Events, LearnerKind, Plan, Size, SizeReport,
    TuneReport, COUNT_SHARE,
};
use dptune::noise::{SecureRng, SEEDED_NOTE};
use dptune::privacy::repeat::Repeats;
use dptune::privacy::{Guarantee, Route};
use dptune::tune::{Config, Fractions, Method, SearchSpace, SpaceSpec};
use dptune::Error;

use crate::flags::refuse_unread;
use crate::progress::Progress;
use crate::report::{fmt_param, Failure, Report};

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LearnerArg {
    /// DP-SGD logistic (softmax) regression.
    DpsgdLogistic,
    /// DP-SGD one-hidden-layer MLP (--hidden units).
    DpsgdMlp,
    /// Logistic regression by output perturbation of a certified minimiser (binary labels;
    /// replace-one neighbours; the name is historical).
    Objpert,
    /// Ridge regression by sufficient-statistics perturbation (numeric labels).
    Ridge,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum TunerArg {
    /// Papernot–Steinke: truncated negative binomial repeats (--eta; 0 = logarithmic).
    PapernotSteinke,
    /// Liu–Talwar Algorithm 2: geometric repeats (Papernot–Steinke with eta = 1).
    LiuTalwar,
    /// Papernot–Steinke Theorem 6: Poisson repeats.
    Poisson,
    /// Liu–Talwar Algorithm 1: first run whose private score reaches --threshold.
    Threshold,
    /// Every grid point of the search space, each under its share of the budget.
    Exhaustive,
}

/// Privately tune a DP learner and fit the chosen configuration (split–tune–final).
#[derive(Args)]
pub struct TuneArgs {
    /// A bundled dataset (adult, mnist5k); the default when no --data is given.
    #[arg(long, conflicts_with = "data")]
    dataset: Option<String>,
    /// A CSV file of private records (plain or .gz); needs --schema.
    #[arg(long, requires = "schema")]
    data: Option<PathBuf>,
    /// The TOML schema of --data (label, features, declared bounds and values).
    #[arg(long, requires = "data")]
    schema: Option<PathBuf>,
    /// A public test CSV with the same schema, to score the final model (with --data).
    #[arg(long, requires = "data")]
    test: Option<PathBuf>,
    /// The learner.
    #[arg(long, value_enum, default_value = "dpsgd-logistic")]
    learner: LearnerArg,
    /// Hidden units of the MLP (dpsgd-mlp only; default 32).
    #[arg(long)]
    hidden: Option<usize>,
    /// The private tuner.
    #[arg(long, value_enum, default_value = "papernot-steinke")]
    tuner: TunerArg,
    /// Expected number of runs (repeat tuners), 1/gamma for --tuner threshold; not with
    /// exhaustive (default 10).
    #[arg(long)]
    mean_runs: Option<f64>,
    /// The truncated negative binomial's eta (papernot-steinke only): 0 logarithmic, 1
    /// geometric (default 0).
    #[arg(long)]
    eta: Option<f64>,
    /// The public score threshold of --tuner threshold, which requires it (in the scorer's
    /// units: noisy correct count, or minus the noisy clipped loss).
    #[arg(long)]
    threshold: Option<f64>,
    /// Total epsilon (tuning and final fit together).
    #[arg(long, default_value_t = 1.0)]
    epsilon: f64,
    /// Total delta.
    #[arg(long, default_value_t = 1e-5)]
    delta: f64,
    /// A TOML search space (one table per hyperparameter: values = [...], uniform = [lo, hi],
    /// log_uniform = [lo, hi] or int = [lo, hi]).
    #[arg(long)]
    space: Option<PathBuf>,
    /// Fraction of the records used for tuning (the rest fits the final model).
    #[arg(long, default_value_t = 0.5)]
    tune_fraction: f64,
    /// Fraction of the tuning records used to train candidates (the rest scores them).
    #[arg(long, default_value_t = 0.8)]
    train_fraction: f64,
    /// The number of private records, if it is public (e.g. a published dataset size): DP-SGD
    /// plans its schedule with it and no budget is spent on a noisy count. The guarantee holds
    /// whatever the value; a wrong value only costs accuracy.
    #[arg(long, value_name = "N")]
    public_size: Option<u64>,
    /// Share of --epsilon spent on the noisy record count that DP-SGD plans its schedule with
    /// (DP-SGD learners, when no --public-size is given; part of the total) [default: 0.02].
    #[arg(long, conflicts_with = "public_size")]
    count_share: Option<f64>,
    /// Capped mode: always execute exactly T candidate slots (keep the first min(K, T)), so
    /// the run time does not reveal the number of runs K; the truncation is charged in delta.
    #[arg(long, value_name = "T")]
    cap: Option<u64>,
    /// Seed for a reproducible research run, NOT PRIVATE: the noise is predictable from it (the
    /// output says so; default: the operating system's generator).
    #[arg(long)]
    seed: Option<u64>,
    /// Also report the NOT PRIVATE exact-best configuration's test score (same per-run budget).
    #[arg(long)]
    compare: bool,
    #[command(flatten)]
    budget: crate::budget::BudgetCharge,
    #[command(flatten)]
    force: crate::limits::Force,
}

fn input(location: &Path, reason: impl std::fmt::Display) -> Failure {
    Failure::input(format!("{}: {reason}", location.display()))
}

/// Reads a TOML search space (the library's one grammar, `dptune::tune::grammar`).
fn parse_space(path: &Path) -> Result<SearchSpace, Failure> {
    let text = std::fs::read_to_string(path).map_err(|e| input(path, e))?;
    SpaceSpec::from_toml(&text).map_err(|e| input(path, e))
}

/// The private data and the public test split (if any), and a name for them.
fn load_data(a: &TuneArgs) -> Result<(String, Dataset, Option<Dataset>), Failure> {
    if let (Some(data), Some(schema)) = (&a.data, &a.schema) {
        let text = std::fs::read_to_string(schema).map_err(|e| input(schema, e))?;
        let schema_v: Schema = toml::from_str(&text).map_err(|e| input(schema, e))?;
        schema_v.validate().map_err(|e| input(schema, e))?;
        let train = load_csv(data, &schema_v)?;
        let test = match &a.test {
            Some(t) => Some(load_csv(t, &schema_v)?),
            None => None,
        };
        return Ok((data.display().to_string(), train, test));
    }
    let name = a.dataset.as_deref().unwrap_or("adult");
    if !BUNDLED_NAMES.contains(&name) && name != "mnist" {
        return Err(Failure::input(format!(
            "unknown dataset `{name}` (bundled: {})",
            BUNDLED_NAMES.join(", ")
        )));
    }
    let b = bundled(name)?;
    Ok((b.name.to_string(), b.train(), Some(b.test())))
}

impl TuneArgs {
    /// `--mean-runs`, or its default.
    fn mean_runs(&self) -> f64 {
        self.mean_runs.unwrap_or(10.0)
    }

    /// `--eta`, or its default (logarithmic repeats).
    fn eta(&self) -> f64 {
        self.eta.unwrap_or(0.0)
    }
}

/// Refuses, before anything is read, the flags that the chosen learner or tuner does not read
/// (each would be silently dropped), and the values no run could use.
fn validate(a: &TuneArgs) -> Result<(), Failure> {
    refuse_unread(
        a.learner == LearnerArg::DpsgdMlp,
        "except with --learner dpsgd-mlp",
        &[("--hidden", a.hidden.is_some())],
    )?;
    refuse_unread(
        a.tuner == TunerArg::Threshold,
        "except with --tuner threshold",
        &[("--threshold", a.threshold.is_some())],
    )?;
    refuse_unread(
        a.tuner == TunerArg::PapernotSteinke,
        "except with --tuner papernot-steinke (liu-talwar is eta = 1)",
        &[("--eta", a.eta.is_some())],
    )?;
    refuse_unread(
        a.tuner != TunerArg::Exhaustive,
        "with --tuner exhaustive (it runs every grid point once)",
        &[("--mean-runs", a.mean_runs.is_some())],
    )?;
    refuse_unread(
        matches!(a.learner, LearnerArg::DpsgdLogistic | LearnerArg::DpsgdMlp),
        "with this --learner (only DP-SGD plans with a record count)",
        &[
            ("--count-share", a.count_share.is_some()),
            ("--public-size", a.public_size.is_some()),
        ],
    )?;
    match a.threshold {
        None if a.tuner == TunerArg::Threshold => {
            return Err(Failure::input(
                "--tuner threshold needs --threshold (a public score threshold)",
            ))
        }
        Some(t) if !t.is_finite() => {
            return Err(Error::invalid("threshold", t, "must be a finite score").into())
        }
        _ => {}
    }
    check_positive("mean_runs", a.mean_runs())?;
    if a.compare && a.data.is_some() && a.test.is_none() {
        return Err(Failure::input(
            "--compare needs a public test split (--test) with --data",
        ));
    }
    Ok(())
}

fn method(a: &TuneArgs, space: &SearchSpace) -> Result<Method, Failure> {
    Ok(match a.tuner {
        TunerArg::PapernotSteinke => {
            Method::RepeatAndSelect(Repeats::tnb_with_mean(a.eta(), a.mean_runs())?)
        }
        TunerArg::LiuTalwar => Method::RepeatAndSelect(Repeats::geometric(1.0 / a.mean_runs())?),
        TunerArg::Poisson => Method::RepeatAndSelect(Repeats::poisson(a.mean_runs())?),
        TunerArg::Threshold => Method::Threshold {
            threshold: a.threshold.unwrap_or_default(), // required by `validate`
            gamma: 1.0 / a.mean_runs(),
        },
        TunerArg::Exhaustive => Method::Exhaustive {
            runs: space.grid()?.len(),
        },
    })
}

fn config_text(c: &Config) -> String {
    c.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Runs `dptune tune`.
pub fn run(a: TuneArgs) -> Result<Report, Failure> {
    validate(&a)?;
    let name = a
        .learner
        .to_possible_value()
        .map(|v| v.get_name().to_string());
    let learner = LearnerKind::from_name(name.as_deref().unwrap_or_default(), a.hidden)?;
    // Everything that can be checked without data is checked first.
    let space = match &a.space {
        Some(p) => {
            let s = parse_space(p)?;
            s.check(learner.rules()).map_err(|e| input(p, e))?;
            s
        }
        None => learner.default_space(),
    };
    let mut plan = Plan::default_for(learner)?;
    plan.method = method(&a, &space)?;
    plan.space = space;
    plan.allowance = Guarantee::approx(a.epsilon, a.delta, learner.neighbours())?;
    plan.fractions = Fractions {
        tune: a.tune_fraction,
        train: a.train_fraction,
    };
    plan.size = match a.public_size {
        Some(n) => Size::Public(n),
        None => Size::NoisyCount {
            share: a.count_share.unwrap_or(COUNT_SHARE),
        },
    };
    plan.cap = a.cap;
    plan.check()?;
    // Progress on stderr: public stages only (crate::progress), never a number computed from
    // the data, the number of runs or a run time.
    let progress = Progress::new("dptune tune");
    progress.stage("reading data");
    let (name, data, test) = load_data(&a)?;
    plan.check_data(&data)?;
    a.force.check(&plan.resources(&data))?;
    a.budget.charge("tune", &plan.allowance)?;
    let mut rng = match a.seed {
        Some(s) => SecureRng::seeded(s),
        None => SecureRng::from_os()?,
    };
    progress.stage("tuning");
    let on_epoch = |e: u64, total: u64| {
        progress.stage("final fit");
        // The epoch count is the released configuration's, shown on a terminal only.
        progress.detail(&format!("epoch {e}/{total}"));
    };
    let events = Events {
        tuning: None,
        final_epoch: Some(&on_epoch),
    };
    let outcome = tune(&plan, &data, &events, &mut rng);
    let Some(o) = outcome? else {
        return Err(released_nothing().into());
    };
    // Every bundled dataset has a test split, and `validate` refused --compare with --data but
    // no --test: with --compare there is a test split here.
    let comparison = match test.as_ref().filter(|_| a.compare) {
        Some(t) => {
            progress.stage("not-private comparison");
            Some(compare_on_test(&plan, &o, &data, t, &mut rng)?.value)
        }
        None => None,
    };
    let seeded = a.seed.is_some();
    let report = TuneReport::new(&plan, &name, &data, test.as_ref(), &o, comparison, seeded)?;
    Report::of(&report, human(&report))
}

/// A route as the human output names it.
fn route_name(r: Route) -> &'static str {
    match r {
        Route::Pure => "pure DP",
        Route::Approx => "(eps, delta)",
        Route::Zcdp => "zCDP",
        Route::Rdp => "RDP",
        Route::Pld => "privacy loss distribution (PLD)",
    }
}

/// The text a person reads: the same fields as the JSON.
fn human(r: &TuneReport) -> String {
    let p = &r.privacy;
    let d = p.delta;
    let cap = r
        .cap
        .map_or(String::new(), |t| format!(", capped at {t} runs"));
    let mut human = format!(
        "dptune tune: {}, {:?}, {}{cap}\n\
         chosen configuration: {}\n",
        r.dataset,
        r.learner,
        r.tuner,
        config_text(&r.best),
    );
    match (r.test_score(), r.public_test_records) {
        (Some((key, s)), Some(n)) => human.push_str(&format!(
            "{key}: {s:.4} (final model on the public test split, {n} records)\n"
        )),
        _ => human.push_str("test score: none (give --test FILE for a public test split)\n"),
    }
    let size = match &r.size {
        SizeReport::NotNeeded => "not needed by this learner (nothing spent)".to_string(),
        SizeReport::Public { records } => {
            format!("{records}, declared public with --public-size (nothing spent)")
        }
        SizeReport::NoisyCount { value, epsilon, .. } => format!(
            "noisy count {value} (a charged release, eps = {}, discrete Laplace; DP-SGD \
             plans its schedule with it)",
            fmt_param(*epsilon)
        ),
    };
    human.push_str(&format!("record count: {size}\n"));
    // The parts' allowances are stated (their exact spend may depend on the noisy count or on
    // the split's sizes): every printed eps is a function of public inputs only.
    let count = p.record_count.as_ref().map_or(String::new(), |c| {
        format!("record count eps = {}, ", fmt_param(c.epsilon))
    });
    human.push_str(&format!(
        "privacy ({} neighbours, delta = {}): {count}tuning eps <= {}, final fit eps <= {}, \
         total eps <= {} (the allowances each part was checked against before release; tuning \
         and final fit on disjoint parts: parallel composition)\n",
        p.neighbours,
        fmt_param(d),
        fmt_param(p.tuning.epsilon),
        fmt_param(p.final_fit.epsilon),
        fmt_param(p.epsilon)
    ));
    let noise = p.final_fit.noise_multiplier.map_or(String::new(), |z| {
        format!(", noise multiplier {}", fmt_param(z))
    });
    human.push_str(&format!(
        "accounting: tuning by {} ({}); final fit by {}{noise}\n",
        route_name(p.tuning.route),
        p.tuning.theorem,
        route_name(p.final_fit.route),
    ));
    human.push_str(&format!("timing: {}", r.timing));
    if r.seeded {
        human.push_str(&format!("\n{SEEDED_NOTE}"));
    }
    if let Some((c, (key, s))) = r.compare.as_ref().and_then(|c| Some((c, c.test_score()?))) {
        human.push_str(&format!(
            "\n[NOT PRIVATE] exact-best configuration at the same per-run budget: {} -> {key} {s:.4}",
            config_text(&c.best),
        ));
    }
    human
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `LearnerArg` is clap's copy of the library's learner names (the library type carries the
    /// MLP's size, so clap cannot derive its values, and the library takes no UI crate): the two
    /// lists must be the same, in the same order.
    #[test]
    fn learner_values_are_the_library_names() {
        let values: Vec<String> = LearnerArg::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value())
            .map(|p| p.get_name().to_string())
            .collect();
        assert_eq!(values, LearnerKind::NAMES);
    }
}

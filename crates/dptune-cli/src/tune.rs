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
use serde_json::{json, Value as Json};

use dptune::data::Records;
use dptune::data::{bundled, load_csv, Dataset, Schema, Task, BUNDLED_NAMES};
use dptune::error::check_positive;
use dptune::learn::pipeline::{
    oracle_on_test, tune, Events, LearnerKind, Outcome, Plan, Size, SizeUsed, COUNT_SHARE,
};
use dptune::noise::SecureRng;
use dptune::privacy::repeat::Repeats;
use dptune::privacy::{Guarantee, Route};
use dptune::tune::{Config, Fractions, Method, SearchSpace, SpaceSpec};
use dptune::Error;

use crate::flags::ignored;
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
    /// Seed for a reproducible research run (default: the operating system's generator).
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
    let dpsgd = matches!(a.learner, LearnerArg::DpsgdLogistic | LearnerArg::DpsgdMlp);
    let checks: [(&str, bool, bool, &str); 6] = [
        (
            "--hidden",
            a.hidden.is_some(),
            a.learner == LearnerArg::DpsgdMlp,
            "except with --learner dpsgd-mlp",
        ),
        (
            "--threshold",
            a.threshold.is_some(),
            a.tuner == TunerArg::Threshold,
            "except with --tuner threshold",
        ),
        (
            "--eta",
            a.eta.is_some(),
            a.tuner == TunerArg::PapernotSteinke,
            "except with --tuner papernot-steinke (liu-talwar is eta = 1)",
        ),
        (
            "--mean-runs",
            a.mean_runs.is_some(),
            a.tuner != TunerArg::Exhaustive,
            "with --tuner exhaustive (it runs every grid point once)",
        ),
        (
            "--count-share",
            a.count_share.is_some(),
            dpsgd,
            "with this --learner (only DP-SGD plans with a record count)",
        ),
        (
            "--public-size",
            a.public_size.is_some(),
            dpsgd,
            "with this --learner (only DP-SGD plans with a record count)",
        ),
    ];
    for (flag, given, read, because) in checks {
        if given && !read {
            return Err(ignored(flag, because));
        }
    }
    if a.hidden == Some(0) {
        return Err(Error::invalid("hidden", 0, "must be >= 1").into());
    }
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

fn tuner_name(a: &TuneArgs) -> String {
    let (eta, mean) = (fmt_param(a.eta()), fmt_param(a.mean_runs()));
    match a.tuner {
        TunerArg::PapernotSteinke if a.eta() == 0.0 => {
            format!("Papernot-Steinke (logarithmic repeats, mean {mean})")
        }
        TunerArg::PapernotSteinke => {
            format!("Papernot-Steinke (truncated negative binomial, eta {eta}, mean {mean})")
        }
        TunerArg::LiuTalwar => format!("Liu-Talwar (geometric repeats, mean {mean})"),
        TunerArg::Poisson => format!("Papernot-Steinke (Poisson repeats, mean {mean})"),
        TunerArg::Threshold => format!("Liu-Talwar threshold (stop probability 1/{mean})"),
        TunerArg::Exhaustive => "exhaustive grid (composition)".into(),
    }
}

fn config_json(c: &Config) -> Json {
    serde_json::to_value(c).unwrap_or(Json::Null)
}

fn config_text(c: &Config) -> String {
    c.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn eps_at(g: &Guarantee, delta: f64) -> Result<f64, Failure> {
    Ok(g.epsilon(delta)?)
}

/// Test score of `model`: ("test_accuracy", acc) or ("test_rmse", rmse).
fn test_score(o_model: &dptune::learn::Model, test: &Dataset) -> (&'static str, f64) {
    match test.task() {
        Task::Regression { .. } => ("test_rmse", o_model.rmse(test)),
        Task::Classification { .. } => ("test_accuracy", o_model.accuracy(test)),
    }
}

/// Runs `dptune tune`.
pub fn run(a: TuneArgs) -> Result<Report, Failure> {
    validate(&a)?;
    let learner = match a.learner {
        LearnerArg::DpsgdLogistic => LearnerKind::DpSgdLogistic,
        LearnerArg::DpsgdMlp => LearnerKind::DpSgdMlp {
            hidden: a.hidden.unwrap_or(32),
        },
        LearnerArg::Objpert => LearnerKind::ObjectivePerturbation,
        LearnerArg::Ridge => LearnerKind::Ridge,
    };
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
    if a.compare && a.data.is_some() && a.test.is_none() {
        return Err(Failure::input(
            "--compare needs a public test split (--test)",
        ));
    }
    // Progress on stderr: public stages only (crate::progress), never a number computed from
    // the data, the number of runs or a run time.
    let progress = Progress::new("dptune tune");
    progress.stage("reading data");
    let (name, data, test) = load_data(&a)?;
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
        return Err(Failure {
            message: "no release: the private tuning released nothing (⊥); the budget was \
                      spent, nothing else is released"
                .into(),
            code: 3,
        });
    };
    let comparison = if a.compare {
        progress.stage("not-private comparison");
        let configs = match plan.space.grid() {
            Ok(g) => g,
            Err(_) => {
                let n = (2.0 * a.mean_runs()).ceil() as usize;
                (0..n).map(|_| plan.space.sample(&mut rng)).collect()
            }
        };
        match &test {
            Some(t) => Some(oracle_on_test(&plan, &o, &configs, &data, t, &mut rng)?.value),
            None => {
                return Err(Failure::input(
                    "--compare needs a public test split (--test)",
                ))
            }
        }
    } else {
        None
    };
    render(&a, &plan, &name, &data, test.as_ref(), &o, comparison)
}

/// The theorem that bounds the tuning's cost.
fn tuning_theorem(a: &TuneArgs) -> &'static str {
    match a.tuner {
        TunerArg::PapernotSteinke | TunerArg::LiuTalwar | TunerArg::Poisson => {
            "Papernot-Steinke, private selection from private candidates"
        }
        TunerArg::Threshold => "Liu-Talwar, threshold selection",
        TunerArg::Exhaustive => "sequential composition",
    }
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

/// Who may see timing (the trust model, docs/PRIVACY.md "Trust model and timing").
fn timing_line(cap: Option<u64>) -> String {
    match cap {
        None => "not part of this release; the run time reveals the number of candidate runs, so \
                 only the curator running this command may see it, and it must not be published \
                 (--cap T makes it independent of that number)"
            .into(),
        Some(t) => format!(
            "not part of this release; with --cap {t} every tuning executes {t} candidate slots, so \
             the run time does not depend on the number of runs (it still grows with the data \
             size: keep it with the curator)"
        ),
    }
}

/// The record count's JSON and human renderings.
fn size_report(size: &SizeUsed, d: f64) -> Result<(Json, String), Failure> {
    Ok(match size {
        SizeUsed::NotNeeded => (
            json!({"source": "not_needed"}),
            "not needed by this learner (nothing spent)".into(),
        ),
        SizeUsed::Public { records } => (
            json!({"source": "public", "records": records}),
            format!("{records}, declared public with --public-size (nothing spent)"),
        ),
        SizeUsed::NoisyCount { value, spent } => {
            let e = eps_at(spent, d)?;
            (
                json!({
                    "source": "noisy_count",
                    "value": value,
                    "epsilon": e,
                    "label": "charged release: noisy record count (discrete Laplace)",
                }),
                format!(
                    "noisy count {value} (a charged release, eps = {}, discrete Laplace; DP-SGD \
                     plans its schedule with it)",
                    fmt_param(e)
                ),
            )
        }
    })
}

fn render(
    a: &TuneArgs,
    plan: &Plan,
    name: &str,
    data: &Dataset,
    test: Option<&Dataset>,
    o: &Outcome,
    comparison: Option<dptune::tune::baseline::Scored>,
) -> Result<Report, Failure> {
    let (_, d) = plan.epsilon_delta()?;
    let (e_tune, e_final, e_total) = (
        eps_at(&o.reported.tuning, d)?,
        eps_at(&o.reported.final_fit, d)?,
        eps_at(&o.reported.total, d)?,
    );
    let score = test.map(|t| test_score(&o.model, t));
    let regression = matches!(data.task(), Task::Regression { .. });
    let key = if regression {
        "test_rmse"
    } else {
        "test_accuracy"
    };
    let (size_json, size_text) = size_report(&o.size, d)?;
    let timing = timing_line(plan.cap);
    let r = &o.reported;
    let theorem = tuning_theorem(a);
    let mut privacy = json!({
        "epsilon": e_total,
        "delta": d,
        "neighbours": o.total.neighbours(),
        "tuning": {
            "epsilon": e_tune,
            "delta": d,
            "route": r.tuning_route,
            "theorem": theorem,
        },
        "final_fit": {
            "epsilon": e_final,
            "delta": d,
            "route": r.final_fit_route,
            "noise_multiplier": r.final_noise_multiplier,
        },
        "per_run": o.per_run.to_string(),
    });
    if let SizeUsed::NoisyCount { spent, .. } = &o.size {
        privacy["record_count"] = json!({"epsilon": eps_at(spent, d)?, "delta": 0.0});
    }
    let mut value = json!({
        "dataset": name,
        "learner": plan.learner,
        "tuner": tuner_name(a),
        "cap": plan.cap,
        "best": config_json(&o.config),
        "privacy": privacy,
        "size": size_json,
        "timing": timing,
        "public_test_records": test.map(Records::len),
    });
    value[key] = score.map_or(Json::Null, |s| json!(s.1));
    let cap = plan
        .cap
        .map_or(String::new(), |t| format!(", capped at {t} runs"));
    let mut human = format!(
        "dptune tune: {name}, {:?}, {}{cap}\n\
         chosen configuration: {}\n",
        plan.learner,
        tuner_name(a),
        config_text(&o.config),
    );
    match (score, test) {
        (Some((_, s)), Some(t)) => human.push_str(&format!(
            "{}: {s:.4} (final model on the public test split, {} records)\n",
            key.replace('_', " "),
            t.len()
        )),
        _ => human.push_str("test score: none (give --test FILE for a public test split)\n"),
    }
    human.push_str(&format!("record count: {size_text}\n"));
    // The parts' allowances are stated (their exact spend may depend on the noisy count or on
    // the split's sizes): every printed eps is a function of public inputs only.
    let count = match &o.size {
        SizeUsed::NoisyCount { spent, .. } => {
            format!("record count eps = {}, ", fmt_param(eps_at(spent, d)?))
        }
        _ => String::new(),
    };
    human.push_str(&format!(
        "privacy ({} neighbours, delta = {}): {count}tuning eps <= {}, final fit eps <= {}, \
         total eps <= {} (the allowances each part was checked against before release; tuning \
         and final fit on disjoint parts: parallel composition)\n",
        o.total.neighbours(),
        fmt_param(d),
        fmt_param(e_tune),
        fmt_param(e_final),
        fmt_param(e_total)
    ));
    let noise = r.final_noise_multiplier.map_or(String::new(), |z| {
        format!(", noise multiplier {}", fmt_param(z))
    });
    human.push_str(&format!(
        "accounting: tuning by {} ({theorem}); final fit by {}{noise}\n",
        route_name(r.tuning_route),
        route_name(r.final_fit_route),
    ));
    human.push_str(&format!("timing: {timing}"));
    if let Some(c) = comparison {
        let s = if regression { -c.score } else { c.score };
        value["compare"] = json!({
            "not_private": true,
            "label": "NOT PRIVATE: exact-best configuration chosen on the test split",
            "best": config_json(&c.config),
            key: s,
        });
        human.push_str(&format!(
            "\n[NOT PRIVATE] exact-best configuration at the same per-run budget: {} -> {} {s:.4}",
            config_text(&c.config),
            key.replace('_', " ")
        ));
    }
    Ok(Report { json: value, human })
}

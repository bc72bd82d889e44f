//! `dptune select`: choose among scored candidates privately.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use dptune::data::load_scores;
use dptune::noise::{SecureRng, SEEDED_NOTE};
use dptune::privacy::Bound;
use dptune::select::report::{Counts, ProbabilitiesReport, Released, SelectReport};
use dptune::select::{Goal, L2Sensitivity, Mechanism, Spec, TopKMethod};
use dptune::Error;

use crate::flags::{refuse_unread, NeighboursArg};
use crate::report::{fmt_param, Failure, Report};

/// Top-k method on the command line.
#[derive(Clone, Copy, ValueEnum)]
pub enum TopKArg {
    /// Peeling permute-and-flip (pure DP).
    PermuteAndFlip,
    /// One-shot Gumbel = peeling EM (pure and zCDP).
    Gumbel,
}

/// Arguments of `dptune select`.
#[derive(Args)]
pub struct SelectArgs {
    /// exponential | gumbel | laplace | permute-and-flip | gaussian | gem | top-k
    #[arg(long)]
    mechanism: String,
    /// Privacy parameter ε: what the selection may spend (for top-k, all k rounds together:
    /// each round gets ε/k, rounded down).
    #[arg(long)]
    epsilon: f64,
    /// δ (gaussian only, which requires it).
    #[arg(long)]
    delta: Option<f64>,
    /// Per-candidate sensitivity Δ (every mechanism but gem).
    #[arg(long)]
    sensitivity: Option<f64>,
    /// File with one sensitivity per candidate (gem only, which requires it).
    #[arg(long)]
    sensitivities: Option<PathBuf>,
    /// Scores are monotone (range R = Δ instead of 2Δ; not gem).
    #[arg(long)]
    monotonic: bool,
    /// Lower scores are better.
    #[arg(long)]
    minimize: bool,
    /// Number of candidates to release (top-k only, which requires it).
    #[arg(long)]
    k: Option<usize>,
    /// Top-k method (top-k; default permute-and-flip).
    #[arg(long, value_enum)]
    top_k_method: Option<TopKArg>,
    /// GEM failure probability β (gem; default 0.1).
    #[arg(long)]
    beta: Option<f64>,
    /// Gaussian: centre monotone add/remove scores (L2 sensitivity (Δ/2)√m).
    #[arg(long, conflicts_with = "l2_sensitivity")]
    centred: bool,
    /// Gaussian: a declared L2 sensitivity of the whole score vector.
    #[arg(long)]
    l2_sensitivity: Option<f64>,
    /// Neighbour relation the sensitivity refers to.
    #[arg(long, value_enum, default_value = "add_remove")]
    neighbours: NeighboursArg,
    /// Reproducible (NOT private against anyone who knows the seed); OS entropy otherwise.
    #[arg(long)]
    seed: Option<u64>,
    /// Read scores from this CSV column (the file has a header line).
    #[arg(long)]
    column: Option<String>,
    /// Draw N independent selections and print counts (spends N times the budget).
    #[arg(long)]
    repeat: Option<usize>,
    /// Print the exact selection probabilities instead of selecting (NON-PRIVATE: for
    /// analysis of public or synthetic scores only).
    #[arg(long, conflicts_with_all = ["budget", "repeat", "seed"])]
    probabilities: bool,
    /// Scores file (one per line, or CSV with --column); stdin if absent or `-`.
    scores: Option<PathBuf>,
    #[command(flatten)]
    budget: crate::budget::BudgetCharge,
}

/// The scores of `path` (stdin if absent or `-`) through the library's one CSV reader: one per
/// line, or the named CSV column.
fn read_scores(path: &Option<PathBuf>, column: Option<&str>) -> Result<Vec<f64>, Failure> {
    Ok(match path {
        Some(p) if p.as_os_str() != "-" => load_scores(p, column)?,
        _ => dptune::data::read_scores(std::io::stdin().lock(), "stdin", column)?,
    })
}

/// The most repetitions `--repeat` runs: beyond this the command would run for hours.
const MAX_REPEAT: usize = 10_000_000;

/// Refuses, before anything is read, the flags that `mechanism` does not read (each would be
/// silently dropped) and the flags it needs but lacks.
fn validate(a: &SelectArgs, mechanism: Mechanism) -> Result<(), Failure> {
    let is = |m: Mechanism| mechanism == m;
    let only = |m: Mechanism| format!("except with --mechanism {m}");
    let gaussian = Mechanism::Gaussian;
    refuse_unread(
        is(gaussian),
        &only(gaussian),
        &[
            ("--delta", a.delta.is_some()),
            ("--centred", a.centred),
            ("--l2-sensitivity", a.l2_sensitivity.is_some()),
        ],
    )?;
    refuse_unread(
        is(Mechanism::TopK),
        &only(Mechanism::TopK),
        &[
            ("--k", a.k.is_some()),
            ("--top-k-method", a.top_k_method.is_some()),
        ],
    )?;
    refuse_unread(
        is(Mechanism::Gem),
        &only(Mechanism::Gem),
        &[
            ("--beta", a.beta.is_some()),
            ("--sensitivities", a.sensitivities.is_some()),
        ],
    )?;
    refuse_unread(
        !is(Mechanism::Gem),
        "with --mechanism gem (it reads one per candidate from --sensitivities)",
        &[("--sensitivity", a.sensitivity.is_some())],
    )?;
    refuse_unread(
        !is(Mechanism::Gem),
        "with --mechanism gem",
        &[("--monotonic", a.monotonic)],
    )?;
    let needs = |flag: &str, present: bool| {
        if present {
            Ok(())
        } else {
            Err(Failure::input(format!(
                "--mechanism {mechanism} needs {flag}"
            )))
        }
    };
    match mechanism {
        Mechanism::Gem => needs(
            "--sensitivities FILE (one per candidate)",
            a.sensitivities.is_some(),
        )?,
        _ => needs("--sensitivity", a.sensitivity.is_some())?,
    }
    if is(Mechanism::TopK) {
        needs("--k", a.k.is_some())?;
    }
    if is(Mechanism::Gaussian) {
        needs("--delta", a.delta.is_some())?;
    }
    if a.probabilities && !mechanism.has_exact_probabilities() {
        return Err(Failure::input(format!(
            "--probabilities is available for exponential, gumbel, gem and permute-and-flip, \
             not {mechanism}"
        )));
    }
    if a.repeat == Some(0) {
        return Err(Error::invalid("repeat", 0, "must be at least 1").into());
    }
    if let Some(r) = a.repeat.filter(|&r| r > MAX_REPEAT) {
        return Err(Error::invalid(
            "repeat",
            r,
            format!("at most {MAX_REPEAT} repetitions (each is a full selection)"),
        )
        .into());
    }
    Ok(())
}

/// Runs `dptune select`.
pub fn run(a: SelectArgs) -> Result<Report, Failure> {
    let mechanism: Mechanism = a.mechanism.parse()?;
    let mechanism = mechanism.as_selection()?;
    validate(&a, mechanism)?;
    let scores = read_scores(&a.scores, a.column.as_deref())?;
    let allowance = mechanism.allowance(a.epsilon, a.delta, a.neighbours.into())?;
    let mut spec = Spec::new(allowance, a.sensitivity.unwrap_or_default());
    if a.minimize {
        spec.goal = Goal::Minimize;
    }
    spec.monotonic = a.monotonic;
    spec.l2 = match (a.l2_sensitivity, a.centred) {
        (Some(x), _) => L2Sensitivity::Declared(x),
        (None, true) => L2Sensitivity::MonotoneCentred,
        (None, false) => L2Sensitivity::General,
    };
    // `validate` has checked that gem, and only gem, has its --sensitivities file.
    if let Some(path) = &a.sensitivities {
        spec.sensitivities = Some(load_scores(path, None)?);
    }
    spec.beta = a.beta.unwrap_or(spec.beta);
    spec.k = a.k;
    if let Some(TopKArg::Gumbel) = a.top_k_method {
        spec.top_k = TopKMethod::Gumbel;
    }
    let prepared = mechanism.build(&scores, &spec)?;
    let guarantee = prepared.guarantee().clone();
    if a.probabilities {
        let r = ProbabilitiesReport::new(mechanism, &prepared)?;
        let human = r
            .probabilities
            .iter()
            .enumerate()
            .map(|(i, x)| format!("{i}\t{x:.12e}"))
            .collect::<Vec<_>>()
            .join("\n");
        return Report::of(
            &r,
            format!(
                "NON-PRIVATE: exact selection probabilities of {mechanism} on these scores\n{human}"
            ),
        );
    }
    let mut rng = match a.seed {
        Some(s) => SecureRng::seeded(s),
        None => SecureRng::from_os()?,
    };
    let repeat = a.repeat.unwrap_or(1);
    let mut total = guarantee.clone();
    for _ in 1..repeat {
        total = total.compose(&guarantee)?;
    }
    // Composed deltas add up: at delta >= 1 the (epsilon, delta) bound promises nothing.
    if let Some(d) = total.bounds().iter().find_map(|b| match b {
        Bound::Approx { delta, .. } if *delta >= 1.0 => Some(*delta),
        _ => None,
    }) {
        return Err(Failure::input(format!(
            "--repeat {repeat} composes the (epsilon, delta) bound to delta = {} >= 1, which \
             promises nothing: lower --repeat or --delta (nothing was charged)",
            fmt_param(d)
        )));
    }
    a.budget.charge("select", &total)?;
    let r = SelectReport::draw(
        mechanism,
        &prepared,
        scores.len(),
        a.repeat,
        &total,
        &mut rng,
        a.seed.is_some(),
    );
    let outcome = match &r.released {
        Released::One { index } => format!("selected candidate {index}"),
        Released::Many { indices } => format!("selected candidates (best first) {indices:?}"),
        Released::Repeated { repeat, counts } => {
            let counts = match counts {
                Counts::PerCandidate(c) => format!("{c:?}"),
                Counts::PerTuple(c) => format!("{c:?}"),
            };
            format!("counts over {repeat} selections: {counts}")
        }
    };
    let mut human = format!("{outcome}\nspent: {total}");
    if let Some(eps) = total.pure_eps() {
        human.push_str(&format!("\n(total pure epsilon {})", fmt_param(eps)));
    }
    // Last, below every guarantee it refers to.
    if r.seeded {
        human.push_str(&format!("\n{SEEDED_NOTE}"));
    }
    Report::of(&r, human)
}

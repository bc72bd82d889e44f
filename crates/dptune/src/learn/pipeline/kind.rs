//! The learners `dptune tune` can tune: their rules, neighbour relations, default spaces, the
//! labels they fit, and how each is built for a planned number of records.

use serde::Serialize;

use crate::data::Task;
use crate::error::{Error, Result};
use crate::learn::{DpSgd, DPSGD_RULES, REGULARIZATION_RULES};
use crate::privacy::Neighbours;
use crate::tune::space::Rule;
use crate::tune::{Domain, SearchSpace, Value};

/// Which learner to tune.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LearnerKind {
    /// DP-SGD logistic (softmax) regression.
    DpSgdLogistic,
    /// DP-SGD one-hidden-layer MLP.
    DpSgdMlp {
        /// Hidden units.
        hidden: usize,
    },
    /// Objective perturbation logistic regression (replace-one neighbours).
    ObjectivePerturbation,
    /// Ridge regression by sufficient-statistics perturbation.
    Ridge,
}

impl LearnerKind {
    /// The names front ends accept, as the CLI spells them (`--learner`); Python writes `_`
    /// for `-`.
    pub const NAMES: [&'static str; 4] = ["dpsgd-logistic", "dpsgd-mlp", "objpert", "ridge"];

    /// The learner called `name` (one of [`Self::NAMES`], with `_` or `-`); `hidden` is the
    /// MLP's number of hidden units (default 32) and is refused for the other learners.
    pub fn from_name(name: &str, hidden: Option<usize>) -> Result<Self> {
        if hidden == Some(0) {
            return Err(Error::invalid("hidden", 0, "must be >= 1"));
        }
        let kind = match name.replace('_', "-").as_str() {
            "dpsgd-logistic" => LearnerKind::DpSgdLogistic,
            "dpsgd-mlp" => LearnerKind::DpSgdMlp {
                hidden: hidden.unwrap_or(32),
            },
            "objpert" => LearnerKind::ObjectivePerturbation,
            "ridge" => LearnerKind::Ridge,
            _ => {
                return Err(Error::invalid(
                    "learner",
                    name,
                    format!("expected one of {}", Self::NAMES.join(", ")),
                ))
            }
        };
        if hidden.is_some() && !matches!(kind, LearnerKind::DpSgdMlp { .. }) {
            return Err(Error::invalid(
                "hidden",
                hidden.unwrap_or_default(),
                "is read only by the dpsgd-mlp learner",
            ));
        }
        Ok(kind)
    }

    /// The hyperparameters it reads and the values each accepts (checked against a search
    /// space by [`SearchSpace::check`] before any data is read).
    pub fn rules(&self) -> &'static [Rule] {
        match self {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => &DPSGD_RULES,
            LearnerKind::ObjectivePerturbation | LearnerKind::Ridge => &REGULARIZATION_RULES,
        }
    }

    /// The neighbour relation its guarantee is stated in.
    pub fn neighbours(&self) -> Neighbours {
        match self {
            LearnerKind::ObjectivePerturbation => Neighbours::Replace,
            _ => Neighbours::AddRemove,
        }
    }

    /// A sensible default search space.
    pub fn default_space(&self) -> SearchSpace {
        let floats = |v: &[f64]| Domain::Choice {
            values: v.iter().map(|&x| Value::Float(x)).collect(),
        };
        let ints = |v: &[i64]| Domain::Choice {
            values: v.iter().map(|&x| Value::Int(x)).collect(),
        };
        let params = match self {
            LearnerKind::DpSgdLogistic | LearnerKind::DpSgdMlp { .. } => vec![
                ("learning_rate".to_string(), floats(&[0.5, 2.0, 8.0, 16.0])),
                ("clip_norm".to_string(), floats(&[0.5, 1.0])),
                ("epochs".to_string(), ints(&[3, 6])),
                ("batch_size".to_string(), ints(&[256, 512])),
            ],
            LearnerKind::ObjectivePerturbation | LearnerKind::Ridge => vec![(
                "regularization".to_string(),
                floats(&[1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1]),
            )],
        };
        SearchSpace::new(params).expect("the default spaces are valid")
    }
}

pub(super) fn check_task(learner: LearnerKind, task: &Task) -> Result<()> {
    let ok = match learner {
        LearnerKind::Ridge => matches!(task, Task::Regression { .. }),
        LearnerKind::ObjectivePerturbation => task.classes() == 2,
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(
            "learner",
            format!("{learner:?}"),
            "does not fit the data's label (ridge needs a numeric label; objective \
             perturbation a binary one)",
        ))
    }
}

/// The planned number of records DP-SGD needs (the pipeline always has one for it).
pub(super) fn planned(records: Option<f64>) -> Result<f64> {
    records
        .ok_or_else(|| Error::invalid("size", "none", "DP-SGD needs a planned number of records"))
}

pub(super) fn dpsgd(kind: LearnerKind, records: Option<f64>) -> Result<DpSgd> {
    let records = planned(records)?;
    Ok(match kind {
        LearnerKind::DpSgdMlp { hidden } => DpSgd::mlp(hidden, records),
        _ => DpSgd::linear(records),
    })
}

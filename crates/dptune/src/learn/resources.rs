//! What [`tune`](super::pipeline::tune) needs in memory and time under a [`Plan`], checked
//! before the budget is charged (see [`crate::resources`]).

use super::pipeline::{LearnerKind, Plan, Size};
use crate::data::{Dataset, Records};
use crate::resources::Estimate;
use crate::tune::{Domain, Method, SearchSpace, Value};

/// Bytes per model parameter and concurrent DP-SGD run: the model, its gradient, the exact
/// grid sum (an `i128` and an `i64` per coordinate), the noisy sum and the best model kept by
/// the reduction (8 + 8 + 24 + 8 + 8).
const DPSGD_BYTES_PER_PARAM: f64 = 56.0;

/// Core-seconds per (example, parameter) of a DP-SGD gradient, and per (step, parameter) of
/// the exact grid Gaussian noise: measured 4e-9 and 1.5e-7 (MLP with 64 hidden units on Adult,
/// batch 256 and 8; docs/PERFORMANCE.md, "Resource limits"), rounded down (optimistic). The
/// Poisson sampling's pass over every record at every step is left out: it is being made
/// linear in the batch size (issue 17 §2).
const GRADIENT_SECONDS: f64 = 2e-9;
const NOISE_SECONDS: f64 = 1e-7;

impl Plan {
    /// Peak memory of the models (driven by `hidden` for the MLP, by the number of encoded
    /// features otherwise) and, for DP-SGD, its CPU time (driven by the largest `epochs` of the
    /// space) on `data`. Only the data's public shape (features, classes: from the schema) is
    /// read, and its size when it is not declared public: the time grows with it. That use is a
    /// data-validation step before any mechanism (module [`crate::resources`]).
    pub fn resources(&self, data: &Dataset) -> Estimate {
        let dim = data.dim() as f64;
        let outputs = match data.task().classes() {
            0..=2 => 1.0,
            c => c as f64,
        };
        let threads = rayon::current_num_threads() as f64;
        let (params, estimate) = match self.learner {
            LearnerKind::DpSgdMlp { hidden } => {
                let h = hidden as f64;
                let p = h * (dim + 1.0) + outputs * (h + 1.0);
                let bytes = DPSGD_BYTES_PER_PARAM * p * (threads + 1.0);
                (p, Estimate::new().memory("hidden", hidden, bytes))
            }
            LearnerKind::DpSgdLogistic => {
                let p = outputs * (dim + 1.0);
                let bytes = DPSGD_BYTES_PER_PARAM * p * (threads + 1.0);
                (p, Estimate::new().memory("features", data.dim(), bytes))
            }
            // Ridge accumulates XᵀX exactly (an i128 and an i64 per entry, and the f64 matrix).
            LearnerKind::Ridge => {
                let bytes = 32.0 * (dim + 1.0) * (dim + 1.0) * (threads + 1.0);
                return Estimate::new().memory("features", data.dim(), bytes);
            }
            LearnerKind::ObjectivePerturbation => {
                let bytes = 16.0 * (dim + 1.0) * (dim + 1.0) * (threads + 1.0);
                return Estimate::new().memory("features", data.dim(), bytes);
            }
        };
        let records = match self.size {
            Size::Public(n) => n as f64,
            Size::NoisyCount { .. } => data.len() as f64,
        };
        let epochs = largest(&self.space, "epochs");
        let batch = smallest(&self.space, "batch_size").max(1.0);
        let runs = match (self.method, self.cap) {
            (_, Some(t)) => t as f64,
            (Method::RepeatAndSelect(r), None) => r.mean(),
            (Method::Threshold { gamma, .. }, None) => 1.0 / gamma,
            (Method::Exhaustive { runs }, None) => runs as f64,
        };
        let f = self.fractions;
        // Examples seen per epoch: every run on the candidates' training part, then the final
        // fit on the rest; steps per epoch: those examples over the batch size.
        let examples = records * (runs * f.tune * f.train + (1.0 - f.tune));
        let seconds =
            epochs * params * (examples * GRADIENT_SECONDS + examples / batch * NOISE_SECONDS);
        estimate.time("epochs", epochs, seconds)
    }
}

/// The largest (smallest) numeric value `name` can take in `space`; 1 if absent.
fn largest(space: &SearchSpace, name: &str) -> f64 {
    extreme(space, name, f64::max)
}

fn smallest(space: &SearchSpace, name: &str) -> f64 {
    extreme(space, name, f64::min)
}

fn extreme(space: &SearchSpace, name: &str, pick: fn(f64, f64) -> f64) -> f64 {
    let Some((_, domain)) = space.params().find(|(n, _)| *n == name) else {
        return 1.0;
    };
    let ends = match domain {
        Domain::Choice { values } => values
            .iter()
            .filter_map(|v| match v {
                Value::Int(i) => Some(*i as f64),
                Value::Float(x) => Some(*x),
                _ => None,
            })
            .collect(),
        Domain::Uniform { low, high } | Domain::LogUniform { low, high } => vec![*low, *high],
        Domain::Int { low, high } => vec![*low as f64, *high as f64],
    };
    ends.into_iter().reduce(pick).unwrap_or(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::data::{Dataset, Task};
    use crate::resources::{Limits, Resource};

    fn data(rows: usize, dim: usize) -> Dataset {
        let task = Task::Classification {
            classes: vec!["no".into(), "yes".into()],
        };
        let names = (0..dim).map(|j| format!("f{j}")).collect();
        Dataset::new(vec![0.0; rows * dim], vec![0.0; rows], 1.0, task, names).unwrap()
    }

    #[test]
    fn a_huge_hidden_layer_is_refused_by_name() {
        let plan = Plan::default_for(LearnerKind::DpSgdMlp {
            hidden: 100_000_000,
        })
        .unwrap();
        let e = plan.resources(&data(10, 100));
        let need = &e.needs()[0];
        assert_eq!(
            (need.resource, need.parameter),
            (Resource::Memory, "hidden")
        );
        // 10⁸ × 101 + 10⁸ + 1 parameters, 56 bytes each, at least twice: over a terabyte.
        assert!(need.amount >= 2.0 * 56.0 * 1.02e10, "{}", need.amount);
        let limits = Limits::test_machine();
        let msg = limits.refusal(&e);
        assert!(msg.starts_with("invalid parameter `hidden` = 100000000: needs about"));
        // The default MLP on a small table passes.
        let small = Plan::default_for(LearnerKind::DpSgdMlp { hidden: 32 }).unwrap();
        assert!(limits
            .check(
                &small.resources(&data(1000, 100)),
                false,
                "use --force to try anyway"
            )
            .is_ok());
    }

    #[test]
    fn training_time_grows_with_epochs_records_and_runs() {
        let mut plan = Plan::default_for(LearnerKind::DpSgdLogistic).unwrap();
        let t = |plan: &Plan, d: &Dataset| plan.resources(d).needs()[1].amount;
        let base = t(&plan, &data(1000, 10));
        assert!(base > 0.0);
        // Ten times the records, ten times the time (the steps scale with them too).
        assert!((t(&plan, &data(10_000, 10)) / base - 10.0).abs() < 1e-9);
        // A declared public size replaces the count.
        plan.size = Size::Public(100_000);
        assert!((t(&plan, &data(1000, 10)) / base - 100.0).abs() < 1e-9);
        // The largest epochs of the space drives it (the default space's largest is 6).
        assert_eq!(plan.resources(&data(1000, 10)).needs()[1].value, "6");
    }
}

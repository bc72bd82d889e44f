//! Timing hooks for the Python overhead benchmark (bench/python), compiled only with the cargo
//! feature `bench-hooks` (bench/python/run.sh turns it on). They time the Rust side of a
//! comparison and are no part of the released package: the wheel and the test build leave them
//! out.

use pyo3::prelude::*;
use pyo3::types::PyDict;

use dptune::data::Records;
use dptune::noise::SecureRng;
use dptune::privacy::Release;
use dptune::tune::{self, Config, PrivateStep, TuneOptions, Tuner, Value};

use crate::errors::{IntoPy, R};
use crate::input::vec_f64;
use crate::method::{method_over, LooseMethod, MethodArg};
use crate::select::{build, select_one, SelArgs};
use crate::space::space_from;

/// Times `repeats` selections in Rust alone (construct + select each time), for the overhead
/// benchmark: returns nanoseconds per call. Takes the options of `dptune.select`, so that both
/// sides of the comparison run the same selection.
#[pyfunction]
#[pyo3(signature = (scores, epsilon, repeats, *, seed=0, **options))]
pub(crate) fn _time_select_rust(
    py: Python<'_>,
    scores: &Bound<'_, PyAny>,
    epsilon: f64,
    repeats: u32,
    seed: u64,
    options: Option<&Bound<'_, PyDict>>,
) -> R<f64> {
    let scores = vec_f64("scores", scores)?;
    let a = SelArgs::from_options("_time_select_rust", epsilon, options)?;
    let n = repeats.max(1);
    py.detach(|| -> R<f64> {
        let start = std::time::Instant::now();
        let mut acc = 0usize;
        for i in 0..n {
            let mut rng = SecureRng::seeded(seed.wrapping_add(i as u64));
            acc ^= select_one(&build(&scores, &a)?, &mut rng)?.0;
        }
        std::hint::black_box(acc);
        Ok(start.elapsed().as_nanos() as f64 / n as f64)
    })
}

/// A record set with no content (the trivial learner ignores data).
struct Nothing;
impl Records for Nothing {
    fn len(&self) -> usize {
        0
    }
    fn select(&self, _indices: &[usize]) -> Self {
        Nothing
    }
}

/// The trivial Rust learner of the tuner benchmark: its score is a public function of the
/// configuration and of the run's first random word, spent under the allowance.
struct Trivial;
impl tune::Learner for Trivial {
    type Data = Nothing;
    type Model = f64;
    fn fit(&self, config: &Config, step: PrivateStep<'_, Nothing>) -> dptune::Result<Release<f64>> {
        let mut s = (step.rng.next_u64() % 1000) as f64 * 1e-6;
        for v in config.values() {
            let x = match v {
                Value::Float(x) => *x,
                Value::Int(i) => *i as f64,
                Value::Text(t) => t.len() as f64,
            };
            s -= (x - 0.3) * (x - 0.3);
        }
        Ok(Release {
            value: s,
            spent: step.allowance.clone(),
        })
    }
}
impl tune::Scorer<Trivial> for Trivial {
    fn score(&self, model: &f64, step: PrivateStep<'_, Nothing>) -> dptune::Result<Release<f64>> {
        Ok(Release {
            value: *model,
            spent: step.allowance.clone(),
        })
    }
}

/// Times the library's own `Tuner::run` on the trivial learner with the plan `dptune.tune`
/// draws for the same arguments: returns the seconds it took.
#[pyfunction]
#[pyo3(signature = (space, per_run, method, *, cap=None, cap_delta=0.0, seed=0))]
fn _time_tune_rust(
    py: Python<'_>,
    space: &Bound<'_, PyAny>,
    per_run: &crate::guarantee::PyGuarantee,
    method: MethodArg<'_>,
    cap: Option<u64>,
    cap_delta: f64,
    seed: u64,
) -> R<f64> {
    let space = space_from(space)?;
    let m = method_over(&space, Some(&method), &LooseMethod::default())?;
    let tuner = Tuner::new(m, &space, per_run.inner.clone()).py()?;
    let options = TuneOptions {
        cap,
        cap_delta,
        ..Default::default()
    };
    let split = tune::Split {
        first: vec![],
        second: vec![],
    };
    py.detach(|| -> R<f64> {
        let start = std::time::Instant::now();
        let mut rng = SecureRng::seeded(seed);
        let r = tuner
            .run(&Trivial, &Trivial, &Nothing, &split, &options, &mut rng)
            .py()?;
        std::hint::black_box(r.value.map(|c| c.score));
        Ok(start.elapsed().as_secs_f64())
    })
}

/// Adds the timing hooks to the module `dptune._core`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_time_select_rust, m)?)?;
    m.add_function(wrap_pyfunction!(_time_tune_rust, m)?)?;
    Ok(())
}

//! Search spaces: named hyperparameters with discrete value lists or continuous ranges.
//!
//! Sampling is data-independent (it uses only the tuner's own randomness), which is what the
//! private-selection theorems require of "random search" (Papernot–Steinke §7.2: hyperparameters
//! are drawn inside the base mechanism from a fixed distribution). Hyperparameter values are not
//! privacy noise, so plain uniform floats are fine here.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::error::{Error, Result};
use crate::noise::SecureRng;

/// One hyperparameter value.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Value {
    /// A real number.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A label (e.g. an optimiser name).
    Text(String),
}

impl Value {
    /// The value as a real number (integers convert), or an error naming `name`.
    pub fn as_f64(&self, name: &'static str) -> Result<f64> {
        match self {
            Value::Float(x) => Ok(*x),
            Value::Int(i) => Ok(*i as f64),
            Value::Text(t) => Err(Error::invalid(name, t, "expected a number")),
        }
    }

    /// The value as an integer, or an error naming `name`.
    pub fn as_i64(&self, name: &'static str) -> Result<i64> {
        match self {
            Value::Int(i) => Ok(*i),
            other => Err(Error::invalid(name, other, "expected an integer")),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Float(x) => write!(f, "{x}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Text(t) => f.write_str(t),
        }
    }
}

/// A configuration: one value per hyperparameter name.
pub type Config = BTreeMap<String, Value>;

/// Where one hyperparameter's values come from.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Domain {
    /// One of the listed values, uniformly.
    Choice {
        /// The values (at least one).
        values: Vec<Value>,
    },
    /// Uniform on [low, high].
    Uniform {
        /// Lower end.
        low: f64,
        /// Upper end.
        high: f64,
    },
    /// Log-uniform on [low, high], 0 < low.
    LogUniform {
        /// Lower end.
        low: f64,
        /// Upper end.
        high: f64,
    },
    /// Uniform integer in [low, high].
    Int {
        /// Lower end (inclusive).
        low: i64,
        /// Upper end (inclusive).
        high: i64,
    },
}

impl Domain {
    fn validate(&self) -> Result<()> {
        let bad = |reason: &str| Err(Error::invalid("search_space", self.describe(), reason));
        match self {
            Domain::Choice { values } if values.is_empty() => bad("a choice needs values"),
            Domain::Choice { values } => {
                if values
                    .iter()
                    .any(|v| matches!(v, Value::Float(x) if !x.is_finite()))
                {
                    bad("values must be finite")
                } else {
                    Ok(())
                }
            }
            Domain::Uniform { low, high }
                if !(low.is_finite() && high.is_finite() && low <= high) =>
            {
                bad("need finite low <= high")
            }
            Domain::LogUniform { low, high }
                if !(low.is_finite() && high.is_finite() && *low > 0.0 && low <= high) =>
            {
                bad("need finite 0 < low <= high")
            }
            Domain::Int { low, high } if low > high => bad("need low <= high"),
            _ => Ok(()),
        }
    }

    fn describe(&self) -> String {
        match self {
            Domain::Choice { values } => format!("choice of {} values", values.len()),
            Domain::Uniform { low, high } => format!("uniform[{low}, {high}]"),
            Domain::LogUniform { low, high } => format!("log-uniform[{low}, {high}]"),
            Domain::Int { low, high } => format!("int[{low}, {high}]"),
        }
    }

    fn sample(&self, rng: &mut SecureRng) -> Value {
        match self {
            Domain::Choice { values } => {
                values[rng.below_u64(values.len() as u64) as usize].clone()
            }
            Domain::Uniform { low, high } => Value::Float(low + (high - low) * rng.unit_f64()),
            Domain::LogUniform { low, high } => {
                let (a, b) = (low.ln(), high.ln());
                Value::Float((a + (b - a) * rng.unit_f64()).exp().clamp(*low, *high))
            }
            Domain::Int { low, high } => {
                let span = high.abs_diff(*low) as u128 + 1;
                Value::Int(low.wrapping_add(rng.below_u128(span) as i64))
            }
        }
    }

    /// All values, for enumerable domains (an integer range of at most [`MAX_GRID`] values).
    fn values(&self) -> Option<Vec<Value>> {
        match self {
            Domain::Choice { values } => Some(values.clone()),
            // `abs_diff`: `high - low` overflows for ranges wider than `i64::MAX` (found by
            // fuzzing the search-space TOML; `low <= high` is validated).
            Domain::Int { low, high } if high.abs_diff(*low) < MAX_GRID as u64 => {
                Some((*low..=*high).map(Value::Int).collect())
            }
            _ => None,
        }
    }
}

/// The most configurations [`SearchSpace::grid`] enumerates, and the most values of an integer
/// range it lists: a larger grid cannot be run exhaustively, and building it would exhaust
/// memory before any error could be given.
pub const MAX_GRID: usize = 1_000_000;

/// Named hyperparameters and their domains, in a fixed order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SearchSpace {
    params: Vec<(String, Domain)>,
}

impl SearchSpace {
    /// A search space; names must be distinct. The empty space is allowed: its one
    /// configuration is `{}`, so a tuner over it repeats one algorithm whose randomness (the
    /// run's seed) is its only variation. That is what define-by-run front ends need
    /// (`dptune.optuna` samples each trial's hyperparameters inside the run from its seed,
    /// independently of the data), and it is a valid instance of every tuning theorem: the
    /// runs are still independent draws of one mechanism.
    pub fn new(params: Vec<(String, Domain)>) -> Result<Self> {
        for (i, (name, d)) in params.iter().enumerate() {
            d.validate()?;
            if params[..i].iter().any(|(n, _)| n == name) {
                return Err(Error::invalid(
                    "search_space",
                    name,
                    "duplicate hyperparameter name",
                ));
            }
        }
        Ok(Self { params })
    }

    /// The hyperparameter names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|(n, _)| n.as_str())
    }

    /// The hyperparameters and their domains, in order.
    pub fn params(&self) -> impl Iterator<Item = (&str, &Domain)> {
        self.params.iter().map(|(n, d)| (n.as_str(), d))
    }

    /// One configuration drawn independently of any data.
    pub fn sample(&self, rng: &mut SecureRng) -> Config {
        self.params
            .iter()
            .map(|(n, d)| (n.clone(), d.sample(rng)))
            .collect()
    }

    /// Every configuration of the grid (the Cartesian product), for spaces whose domains are all
    /// enumerable; continuous ranges, and grids of more than [`MAX_GRID`] configurations, are
    /// refused with an error naming the parameter.
    pub fn grid(&self) -> Result<Vec<Config>> {
        let mut out: Vec<Config> = vec![Config::new()];
        for (name, d) in &self.params {
            let values = d.values().ok_or_else(|| {
                Error::invalid(
                    "search_space",
                    name,
                    format!(
                        "a continuous range (or an integer range of more than {MAX_GRID} values) \
                         cannot be enumerated; list its values for a grid"
                    ),
                )
            })?;
            if out.len().saturating_mul(values.len()) > MAX_GRID {
                return Err(Error::invalid(
                    "search_space",
                    name,
                    format!("the grid would have more than {MAX_GRID} configurations"),
                ));
            }
            out = out
                .into_iter()
                .flat_map(|c| {
                    values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.insert(name.clone(), v.clone());
                        c
                    })
                })
                .collect();
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn space() -> SearchSpace {
        SearchSpace::new(vec![
            (
                "lr".into(),
                Domain::LogUniform {
                    low: 1e-3,
                    high: 1.0,
                },
            ),
            ("epochs".into(), Domain::Int { low: 1, high: 3 }),
            (
                "opt".into(),
                Domain::Choice {
                    values: vec![Value::Text("sgd".into()), Value::Text("adam".into())],
                },
            ),
        ])
        .unwrap()
    }

    /// The reason of an `InvalidParameter` error about `search_space` naming `param`.
    fn refusal(e: Error, param: &str) -> String {
        match e {
            Error::InvalidParameter {
                name,
                value,
                reason,
            } if name == "search_space" && value == param => reason,
            other => panic!("expected a search_space error naming {param}, got {other:?}"),
        }
    }

    #[test]
    fn grid_of_the_whole_i64_range_is_refused_not_overflowed() {
        // Crash input fuzz/space_toml/int_full_range: `high - low` overflowed (debug) or wrapped
        // to a negative length and asked for 2^64 values (release, exit 101).
        let s = SearchSpace::new(vec![(
            "epochs".into(),
            Domain::Int {
                low: i64::MIN,
                high: i64::MAX,
            },
        )])
        .unwrap();
        let reason = refusal(s.grid().unwrap_err(), "epochs");
        assert!(reason.contains("cannot be enumerated"), "{reason}");
    }

    #[test]
    fn grid_larger_than_the_cap_is_refused_before_it_is_built() {
        // 1000 × 1001 configurations: one more row than the cap allows. (Without the check,
        // two ranges of 10^6 values asked for 10^12 configurations and exhausted memory.)
        let int = |high| Domain::Int { low: 1, high };
        let big = SearchSpace::new(vec![("a".into(), int(1000)), ("b".into(), int(1001))]).unwrap();
        let reason = refusal(big.grid().unwrap_err(), "b");
        assert!(
            reason.contains("more than 1000000 configurations"),
            "{reason}"
        );
        let small = SearchSpace::new(vec![("a".into(), int(1000)), ("b".into(), int(2))]).unwrap();
        assert_eq!(small.grid().unwrap().len(), 2000);
    }

    #[test]
    fn sampling_stays_in_range_and_is_reproducible() {
        let s = space();
        let mut a = SecureRng::seeded(3);
        let mut b = SecureRng::seeded(3);
        for _ in 0..1000 {
            let c = s.sample(&mut a);
            assert_eq!(c, s.sample(&mut b));
            let lr = c["lr"].as_f64("lr").unwrap();
            assert!((1e-3..=1.0).contains(&lr));
            assert!((1..=3).contains(&c["epochs"].as_i64("epochs").unwrap()));
        }
    }

    #[test]
    fn grids_enumerate_and_continuous_ranges_refuse() {
        assert!(space().grid().is_err());
        let g = SearchSpace::new(vec![
            ("a".into(), Domain::Int { low: 0, high: 2 }),
            (
                "b".into(),
                Domain::Choice {
                    values: vec![Value::Float(0.1), Value::Float(0.2)],
                },
            ),
        ])
        .unwrap()
        .grid()
        .unwrap();
        assert_eq!(g.len(), 6);
        let empty = SearchSpace::new(vec![]).unwrap();
        assert_eq!(empty.grid().unwrap(), vec![Config::new()]);
        assert_eq!(empty.sample(&mut SecureRng::seeded(1)), Config::new());
        assert!(SearchSpace::new(vec![("x".into(), Domain::Choice { values: vec![] })]).is_err());
        assert!(SearchSpace::new(vec![(
            "x".into(),
            Domain::LogUniform {
                low: 0.0,
                high: 1.0
            }
        )])
        .is_err());
        let dup = vec![
            ("x".into(), Domain::Int { low: 0, high: 1 }),
            ("x".into(), Domain::Int { low: 0, high: 1 }),
        ];
        assert!(SearchSpace::new(dup).is_err());
    }
}

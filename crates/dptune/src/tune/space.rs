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
    /// Checks the domain's own bounds (the error names the domain, e.g. `uniform[1, 0]`).
    pub(crate) fn validate(&self) -> Result<()> {
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
            // Clamped: the rounded sum can overshoot `high` by an ulp, and a learner's rule is
            // checked at the ends only (see `Rule::check_domain`).
            Domain::Uniform { low, high } => {
                Value::Float((low + (high - low) * rng.unit_f64()).clamp(*low, *high))
            }
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

/// The values one hyperparameter of a learner accepts: its type and its interval. A learner
/// declares one rule per hyperparameter next to its code and reads every configuration through
/// it ([`Rule::real`], [`Rule::integer`]); [`SearchSpace::check`] applies the same rules to every
/// value a search space can produce, before any data is read. So a value refused inside a run
/// (where the budget would already be spent) is refused up front instead, by the same check.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// The hyperparameter's name.
    pub name: &'static str,
    /// Its type and interval.
    pub range: Range,
    /// Whether every configuration must give it.
    pub required: bool,
}

/// The type and interval of a [`Rule`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A finite real number x with `low` < x <= `high` (`open_low`) or `low` <= x <= `high`;
    /// integers are accepted as reals.
    Real {
        /// Lower end.
        low: f64,
        /// Whether the lower end itself is excluded.
        open_low: bool,
        /// Upper end (included).
        high: f64,
    },
    /// An integer in [`low`, `high`] (a float, even 256.0, is refused).
    Integer {
        /// Lower end (inclusive).
        low: i64,
        /// Upper end (inclusive).
        high: i64,
    },
}

impl Rule {
    /// A required finite real number in (0, `high`].
    pub const fn positive(name: &'static str, high: f64) -> Self {
        Self {
            name,
            range: Range::Real {
                low: 0.0,
                open_low: true,
                high,
            },
            required: true,
        }
    }

    /// A required finite real number in [`low`, `high`].
    pub const fn between(name: &'static str, low: f64, high: f64) -> Self {
        Self {
            name,
            range: Range::Real {
                low,
                open_low: false,
                high,
            },
            required: true,
        }
    }

    /// A required integer in [`low`, `high`].
    pub const fn integer_in(name: &'static str, low: i64, high: i64) -> Self {
        Self {
            name,
            range: Range::Integer { low, high },
            required: true,
        }
    }

    /// The same rule for a hyperparameter a configuration may leave out.
    pub const fn optional(self) -> Self {
        Self {
            required: false,
            ..self
        }
    }

    fn describe(&self) -> String {
        match self.range {
            Range::Real {
                low,
                open_low,
                high,
            } => {
                let op = if open_low { ">" } else { ">=" };
                if high == f64::MAX {
                    format!("must be a finite number {op} {}", compact(low))
                } else {
                    format!(
                        "must be a number {op} {} and <= {}",
                        compact(low),
                        compact(high)
                    )
                }
            }
            Range::Integer { low, high } if high == i64::MAX => {
                format!("must be an integer >= {low}")
            }
            Range::Integer { low, high } => format!("must be an integer in [{low}, {high}]"),
        }
    }

    /// Checks one value; the error names the hyperparameter and the value.
    pub fn check(&self, value: &Value) -> Result<()> {
        let ok = match (self.range, value) {
            (
                Range::Real {
                    low,
                    open_low,
                    high,
                },
                Value::Float(_) | Value::Int(_),
            ) => {
                let x = value.as_f64(self.name)?;
                x.is_finite() && (x > low || (!open_low && x == low)) && x <= high
            }
            (Range::Integer { low, high }, Value::Int(i)) => (low..=high).contains(i),
            _ => false,
        };
        match value {
            _ if ok => Ok(()),
            Value::Float(x) => Err(Error::invalid(self.name, compact(*x), self.describe())),
            _ => Err(Error::invalid(self.name, value, self.describe())),
        }
    }

    /// Checks every value `domain` can produce: each listed value; for a range both ends (the
    /// rule is an interval and the samplers stay within the ends) and its type (a continuous
    /// range for an integer hyperparameter is refused).
    pub fn check_domain(&self, domain: &Domain) -> Result<()> {
        match domain {
            Domain::Choice { values } => values.iter().try_for_each(|v| self.check(v)),
            Domain::Uniform { low, high } | Domain::LogUniform { low, high } => {
                if let Range::Integer { .. } = self.range {
                    return Err(Error::invalid(
                        self.name,
                        domain.describe(),
                        format!(
                            "a continuous range for an integer hyperparameter ({}); give `int` \
                             or `values`",
                            self.describe()
                        ),
                    ));
                }
                self.check(&Value::Float(*low))?;
                self.check(&Value::Float(*high))
            }
            Domain::Int { low, high } => {
                self.check(&Value::Int(*low))?;
                self.check(&Value::Int(*high))
            }
        }
    }

    fn missing(&self) -> Error {
        Error::invalid(self.name, "(missing)", "required hyperparameter")
    }

    /// This hyperparameter's value in `config`, checked; `None` when an optional one is absent.
    fn get<'c>(&self, config: &'c Config) -> Result<Option<&'c Value>> {
        match config.get(self.name) {
            Some(v) => self.check(v).map(|()| Some(v)),
            None if self.required => Err(self.missing()),
            None => Ok(None),
        }
    }

    /// This real hyperparameter's value in `config`, checked (an error if absent).
    pub fn real(&self, config: &Config) -> Result<f64> {
        self.real_opt(config)?.ok_or_else(|| self.missing())
    }

    /// This real hyperparameter's value in `config`, checked, or `None` if absent and optional.
    pub fn real_opt(&self, config: &Config) -> Result<Option<f64>> {
        self.get(config)?.map(|v| v.as_f64(self.name)).transpose()
    }

    /// This integer hyperparameter's value in `config`, checked (an error if absent).
    pub fn integer(&self, config: &Config) -> Result<i64> {
        self.get(config)?
            .ok_or_else(|| self.missing())?
            .as_i64(self.name)
    }
}

/// `x` as written by a person: plain decimals for ordinary sizes, an exponent for very large or
/// very small ones (1e308, not 309 digits).
fn compact(x: f64) -> String {
    if x != 0.0 && !(1e-4..1e6).contains(&x.abs()) {
        format!("{x:e}")
    } else {
        x.to_string()
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

    /// Checks the space against a learner's `rules` before any data is read: every name must
    /// have a rule, every required rule a name, and every value the space can produce must
    /// pass its rule ([`Rule::check_domain`]). The error names the hyperparameter.
    pub fn check(&self, rules: &[Rule]) -> Result<()> {
        let known = || rules.iter().map(|r| r.name).collect::<Vec<_>>().join(", ");
        for (name, domain) in &self.params {
            let rule = rules.iter().find(|r| r.name == name).ok_or_else(|| {
                Error::invalid(
                    "hyperparameter",
                    name,
                    format!("unknown name; this learner reads {}", known()),
                )
            })?;
            rule.check_domain(domain)?;
        }
        for r in rules.iter().filter(|r| r.required) {
            if !self.params.iter().any(|(n, _)| n == r.name) {
                return Err(Error::invalid(
                    "hyperparameter",
                    r.name,
                    "missing from the search space",
                ));
            }
        }
        Ok(())
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

    /// The rules of a learner with a positive real, an integer and an optional bounded real.
    const RULES: [Rule; 3] = [
        Rule::positive("learning_rate", f64::MAX),
        Rule::integer_in("batch_size", 1, i64::MAX),
        Rule::between("clip_norm", 1e-12, 1e12).optional(),
    ];

    fn one(name: &str, d: Domain) -> SearchSpace {
        let mut params = vec![
            (
                "learning_rate".to_string(),
                Domain::Uniform {
                    low: 0.1,
                    high: 1.0,
                },
            ),
            ("batch_size".to_string(), Domain::Int { low: 1, high: 8 }),
        ];
        params.retain(|(n, _)| n != name);
        params.push((name.to_string(), d));
        SearchSpace::new(params).unwrap()
    }

    /// The error of checking `space` against RULES, which must name `name` and `value`.
    fn refused(space: &SearchSpace, name: &str, value: &str) -> String {
        match space.check(&RULES) {
            Err(Error::InvalidParameter {
                name: n,
                value: v,
                reason,
            }) if n == name && v == value => reason,
            other => panic!("expected {name} = {value} refused, got {other:?}"),
        }
    }

    #[test]
    fn every_value_a_space_can_produce_is_checked_against_the_rule() {
        let choice = |v: Vec<Value>| Domain::Choice { values: v };
        // Issue 17 §2: each of these was found only inside a run, after the budget was spent.
        let int = |i| Value::Int(i);
        let float = |x| Value::Float(x);
        for (name, values, bad) in [
            ("batch_size", vec![int(256), int(0)], "0"),
            ("batch_size", vec![int(-5)], "-5"),
            ("batch_size", vec![float(256.5)], "256.5"),
            ("batch_size", vec![float(256.0)], "256"),
            ("clip_norm", vec![float(1.0), int(0)], "0"),
            ("clip_norm", vec![float(1e308)], "1e308"),
            ("learning_rate", vec![Value::Text("fast".into())], "fast"),
            ("learning_rate", vec![float(-1.0)], "-1"),
        ] {
            let reason = refused(&one(name, choice(values)), name, bad);
            assert!(reason.starts_with("must be"), "{reason}");
        }
        // Ranges: both ends, and the type.
        let s = one("batch_size", Domain::Int { low: 0, high: 10 });
        assert!(refused(&s, "batch_size", "0").contains("integer >= 1"));
        let s = one(
            "learning_rate",
            Domain::Uniform {
                low: 0.0,
                high: 1.0,
            },
        );
        assert!(refused(&s, "learning_rate", "0").contains("> 0"));
        let s = one(
            "clip_norm",
            Domain::LogUniform {
                low: 1.0,
                high: 1e13,
            },
        );
        assert!(refused(&s, "clip_norm", "1e13").contains("<= 1e12"));
        let s = one(
            "batch_size",
            Domain::Uniform {
                low: 1.0,
                high: 8.0,
            },
        );
        let reason = refused(&s, "batch_size", "uniform[1, 8]");
        assert!(
            reason.contains("continuous range for an integer"),
            "{reason}"
        );
        // Unknown and missing names.
        let s = one("momentum", Domain::Int { low: 0, high: 1 });
        refused(&s, "hyperparameter", "momentum");
        let s =
            SearchSpace::new(vec![("batch_size".into(), Domain::Int { low: 1, high: 2 })]).unwrap();
        refused(&s, "hyperparameter", "learning_rate");
        // A valid space passes, with the optional rule present or not; an integer range for a
        // real hyperparameter is fine.
        assert!(one(
            "clip_norm",
            Domain::Uniform {
                low: 1e-12,
                high: 1e12
            }
        )
        .check(&RULES)
        .is_ok());
        assert!(one("learning_rate", Domain::Int { low: 1, high: 3 })
            .check(&RULES)
            .is_ok());
    }

    #[test]
    fn the_run_time_read_uses_the_same_rule() {
        let config = |pairs: &[(&str, Value)]| -> Config {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect()
        };
        let [lr, batch, clip] = &RULES;
        let c = config(&[
            ("learning_rate", Value::Int(2)),
            ("batch_size", Value::Int(3)),
        ]);
        assert_eq!(lr.real(&c).unwrap(), 2.0);
        assert_eq!(batch.integer(&c).unwrap(), 3);
        assert_eq!(clip.real_opt(&c).unwrap(), None);
        let e = clip.real(&c).unwrap_err().to_string();
        assert!(e.contains("`clip_norm` = (missing)"), "{e}");
        let c = config(&[("batch_size", Value::Int(0))]);
        let e = batch.integer(&c).unwrap_err().to_string();
        assert!(
            e.contains("`batch_size` = 0: must be an integer >= 1"),
            "{e}"
        );
        assert!(lr.real(&c).unwrap_err().to_string().contains("(missing)"));
        let c = config(&[("learning_rate", Value::Float(f64::NAN))]);
        assert!(lr.real(&c).is_err());
    }

    #[test]
    fn uniform_samples_stay_within_the_checked_ends() {
        let d = Domain::Uniform {
            low: 0.1,
            high: 0.1 + 3.0 * f64::EPSILON,
        };
        let mut rng = SecureRng::seeded(5);
        for _ in 0..10_000 {
            let Value::Float(x) = d.sample(&mut rng) else {
                panic!("a float")
            };
            assert!((0.1..=0.1 + 3.0 * f64::EPSILON).contains(&x));
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

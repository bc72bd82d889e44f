//! The search-space grammar: how a person writes a search space. The command-line tool reads it
//! from a TOML file (`dptune tune --space`) and the Python package from a dict; both hand what
//! they read to [`SpaceSpec::build`], so a space means the same, and is refused with the same
//! reason, in either front end.
//!
//! A space names its hyperparameters; each is a table with exactly one entry:
//!
//! ```toml
//! [optimizer]
//! values = ["sgd", "adam"]      # a uniform choice of numbers or strings
//! [learning_rate]
//! log_uniform = [1e-3, 1.0]     # also spelled log-uniform or loguniform
//! [momentum]
//! uniform = [0.0, 0.9]
//! [epochs]
//! int = [1, 5]                  # integer bounds (1.0 is read as 1)
//! ```
//!
//! The order of the hyperparameters is the order the front end gives ([`SpaceSpec::from_toml`]:
//! name order; Python: the dict's order); sampling draws them in that order.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

use super::space::{Domain, SearchSpace, Value};
use crate::error::{Error, Result};

/// One item as written: a number, a string, a list, a table (entries in the order written), or
/// something else, kept only to be refused by [`SpaceSpec::build`] with the parameter's name.
#[derive(Debug, Clone, PartialEq)]
pub enum Written {
    /// A number or string.
    Value(Value),
    /// A list of items.
    List(Vec<Written>),
    /// A table of named items.
    Table(Vec<(String, Written)>),
    /// Anything else (a boolean, a date, ...), described for the error.
    Other(String),
}

impl From<Value> for Written {
    fn from(v: Value) -> Self {
        Written::Value(v)
    }
}

/// A search space as written: each hyperparameter's name and its one-entry table, in order.
/// Deserialises from any self-describing format (a TOML table, JSON object, ...).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SpaceSpec {
    params: Vec<(String, Written)>,
}

/// The kinds a hyperparameter's table may give, as listed in errors.
const KINDS: &str = "values, uniform, log_uniform, int";

impl SpaceSpec {
    /// A space as written; [`SpaceSpec::build`] checks it.
    pub fn new(params: Vec<(String, Written)>) -> Self {
        Self { params }
    }

    /// Reads TOML text, one table per hyperparameter (in name order, as the command-line tool
    /// always has), and builds the space.
    pub fn from_toml(text: &str) -> Result<SearchSpace> {
        let not_toml = |e: toml::de::Error| {
            Error::invalid("search_space", "(not TOML)", e.to_string().trim_end())
        };
        let table: toml::Table = text.parse().map_err(not_toml)?;
        let spec: SpaceSpec = toml::Value::Table(table).try_into().map_err(not_toml)?;
        spec.build()
    }

    /// The search space, or an error naming the hyperparameter (`search_space` = name) and
    /// what is wrong with it: the grammar, the domain's checks, then those of
    /// [`SearchSpace::new`] (distinct names).
    pub fn build(self) -> Result<SearchSpace> {
        let params = self
            .params
            .into_iter()
            .map(|(name, w)| {
                let refused = |r: String| Error::invalid("search_space", &name, r);
                let domain = domain(&w).map_err(refused)?;
                // The domain's own checks, here so that the error names the hyperparameter.
                domain.validate().map_err(|e| match e {
                    Error::InvalidParameter { value, reason, .. } => {
                        refused(format!("{value}: {reason}"))
                    }
                    e => e,
                })?;
                Ok((name, domain))
            })
            .collect::<Result<Vec<_>>>()?;
        SearchSpace::new(params)
    }
}

/// One hyperparameter's domain from its table, or the reason it is refused.
fn domain(w: &Written) -> std::result::Result<Domain, String> {
    let Written::Table(t) = w else {
        return Err("expected a table such as `values = [...]`".into());
    };
    let [(kind, items)] = t.as_slice() else {
        return Err(format!("give exactly one of {KINDS}"));
    };
    let Written::List(items) = items else {
        return Err(format!("`{kind}` must be an array"));
    };
    let number = |x: &Written| match x {
        Written::Value(v @ (Value::Float(_) | Value::Int(_))) => Ok(v.clone()),
        _ => Err(format!("`{kind}` needs numbers")),
    };
    let pair = || match items.as_slice() {
        [low, high] => Ok((number(low)?, number(high)?)),
        _ => Err(format!("`{kind}` needs [low, high]")),
    };
    let real = |v: &Value| v.as_f64("search_space").map_err(|e| e.to_string());
    Ok(match kind.as_str() {
        "values" => Domain::Choice {
            values: items
                .iter()
                .map(|x| match x {
                    Written::Value(v) => Ok(v.clone()),
                    _ => Err("values must be numbers or strings".to_string()),
                })
                .collect::<std::result::Result<_, _>>()?,
        },
        "uniform" => {
            let (low, high) = pair()?;
            Domain::Uniform {
                low: real(&low)?,
                high: real(&high)?,
            }
        }
        "log_uniform" | "log-uniform" | "loguniform" => {
            let (low, high) = pair()?;
            Domain::LogUniform {
                low: real(&low)?,
                high: real(&high)?,
            }
        }
        "int" => {
            let (low, high) = pair()?;
            Domain::Int {
                low: integer(&low)?,
                high: integer(&high)?,
            }
        }
        other => return Err(format!("unknown kind `{other}` ({KINDS})")),
    })
}

/// An integer bound: an integer, or a float with no fractional part (saturating beyond the
/// range of i64, where a range is refused or enumerated by [`SearchSpace`] as it is).
fn integer(v: &Value) -> std::result::Result<i64, String> {
    match v {
        Value::Int(i) => Ok(*i),
        Value::Float(x) if x.fract() == 0.0 => Ok(*x as i64),
        _ => Err("`int` bounds must be integers".into()),
    }
}

impl<'de> Deserialize<'de> for SpaceSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        match Written::deserialize(d)? {
            Written::Table(params) => Ok(SpaceSpec { params }),
            _ => Err(de::Error::custom(
                "a search space is a table of hyperparameters",
            )),
        }
    }
}

impl<'de> Deserialize<'de> for Written {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        d.deserialize_any(WrittenVisitor)
    }
}

struct WrittenVisitor;

impl<'de> Visitor<'de> for WrittenVisitor {
    type Value = Written;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a number, string, array or table")
    }
    fn visit_bool<E: de::Error>(self, b: bool) -> std::result::Result<Written, E> {
        Ok(Written::Other(format!("boolean {b}")))
    }
    fn visit_i64<E: de::Error>(self, i: i64) -> std::result::Result<Written, E> {
        Ok(Value::Int(i).into())
    }
    fn visit_u64<E: de::Error>(self, u: u64) -> std::result::Result<Written, E> {
        Ok(i64::try_from(u).map_or_else(
            |_| Written::Other(format!("integer {u} (beyond 64-bit signed integers)")),
            |i| Value::Int(i).into(),
        ))
    }
    fn visit_f64<E: de::Error>(self, x: f64) -> std::result::Result<Written, E> {
        Ok(Value::Float(x).into())
    }
    fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<Written, E> {
        Ok(Value::Text(s.to_string()).into())
    }
    fn visit_unit<E: de::Error>(self) -> std::result::Result<Written, E> {
        Ok(Written::Other("null".into()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> std::result::Result<Written, A::Error> {
        let mut items = Vec::new();
        while let Some(x) = seq.next_element()? {
            items.push(x);
        }
        Ok(Written::List(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> std::result::Result<Written, A::Error> {
        let mut entries = Vec::new();
        while let Some(entry) = map.next_entry::<String, Written>()? {
            entries.push(entry);
        }
        Ok(Written::Table(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::SecureRng;

    const TOML: &str = r#"
        [opt]
        values = ["sgd", "adam", 3, 0.5]
        [lr]
        log_uniform = [1e-3, 1]
        [momentum]
        uniform = [0, 0.9]
        [epochs]
        int = [1, 5.0]
    "#;

    fn table(kind: &str, items: Vec<Written>) -> Written {
        Written::Table(vec![(kind.into(), Written::List(items))])
    }
    fn int(i: i64) -> Written {
        Value::Int(i).into()
    }
    fn float(x: f64) -> Written {
        Value::Float(x).into()
    }

    /// The reason given for `param`, which the error must name.
    fn refused(text: &str, param: &str) -> String {
        match SpaceSpec::from_toml(text) {
            Err(Error::InvalidParameter {
                name: "search_space",
                value,
                reason,
            }) if value == param => reason,
            other => panic!("expected {param} refused, got {other:?}"),
        }
    }

    #[test]
    fn toml_and_a_built_spec_give_the_same_space_in_name_order() {
        let from_toml = SpaceSpec::from_toml(TOML).unwrap();
        let names: Vec<&str> = from_toml.names().collect();
        assert_eq!(names, ["epochs", "lr", "momentum", "opt"]);
        let expected = SearchSpace::new(vec![
            ("epochs".into(), Domain::Int { low: 1, high: 5 }),
            (
                "lr".into(),
                Domain::LogUniform {
                    low: 1e-3,
                    high: 1.0,
                },
            ),
            (
                "momentum".into(),
                Domain::Uniform {
                    low: 0.0,
                    high: 0.9,
                },
            ),
            (
                "opt".into(),
                Domain::Choice {
                    values: vec![
                        Value::Text("sgd".into()),
                        Value::Text("adam".into()),
                        Value::Int(3),
                        Value::Float(0.5),
                    ],
                },
            ),
        ])
        .unwrap();
        assert_eq!(from_toml, expected);
        // The same space written as a front end builds it (aliases of log_uniform included).
        let built = SpaceSpec::new(vec![
            ("epochs".into(), table("int", vec![int(1), float(5.0)])),
            ("lr".into(), table("log-uniform", vec![float(1e-3), int(1)])),
            (
                "momentum".into(),
                table("uniform", vec![int(0), float(0.9)]),
            ),
            (
                "opt".into(),
                table(
                    "values",
                    vec![
                        Value::Text("sgd".into()).into(),
                        Value::Text("adam".into()).into(),
                        int(3),
                        float(0.5),
                    ],
                ),
            ),
        ])
        .build()
        .unwrap();
        assert_eq!(built, expected);
        let (mut a, mut b) = (SecureRng::seeded(9), SecureRng::seeded(9));
        assert_eq!(from_toml.sample(&mut a), built.sample(&mut b));
    }

    #[test]
    fn every_mistake_names_the_hyperparameter() {
        for (text, reason) in [
            ("lr = 3", "expected a table such as `values = [...]`"),
            (
                "[lr]\nuniform = [0, 1]\nint = [0, 1]",
                "give exactly one of",
            ),
            ("[lr]", "give exactly one of"),
            ("[lr]\nbetween = 3", "`between` must be an array"),
            ("[lr]\nbetween = [1, 2]", "unknown kind `between`"),
            ("[lr]\nuniform = [0, \"1\"]", "`uniform` needs numbers"),
            ("[lr]\nuniform = [0, 1, 2]", "`uniform` needs [low, high]"),
            ("[lr]\nvalues = [true]", "values must be numbers or strings"),
            ("[lr]\nvalues = [[1]]", "values must be numbers or strings"),
            ("[lr]\nint = [1, 2.5]", "`int` bounds must be integers"),
        ] {
            let r = refused(text, "lr");
            assert!(r.starts_with(reason), "{text}: {r}");
        }
        // After the grammar, the domain's own checks, naming the hyperparameter too.
        let r = refused("[lr]\nuniform = [1, 0]", "lr");
        assert_eq!(r, "uniform[1, 0]: need finite low <= high");
        assert!(refused("[lr]\nvalues = []", "lr").contains("a choice needs values"));
        assert!(SpaceSpec::from_toml("[lr\n").is_err());
    }
}

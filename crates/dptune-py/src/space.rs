//! Search spaces and configurations between Python and the library: a dict is converted item by
//! item into the library's one grammar ([`dptune::tune::grammar`]), which checks it exactly as
//! it checks the command-line tool's TOML file.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use dptune::tune::{Config, SearchSpace, SpaceSpec, Value, Written};

use crate::errors::{invalid, IntoPy, R};
use crate::input::type_name;

pub(crate) fn value_to_py<'py>(py: Python<'py>, v: &Value) -> R<Bound<'py, PyAny>> {
    Ok(match v {
        Value::Float(x) => PyFloat::new(py, *x).into_any(),
        Value::Int(i) => PyInt::new(py, *i).into_any(),
        Value::Text(s) => PyString::new(py, s).into_any(),
    })
}

pub(crate) fn value_from_py(name: &str, v: &Bound<'_, PyAny>) -> R<Value> {
    if v.is_instance_of::<pyo3::types::PyBool>() {
        return Err(invalid(name, "a bool", "choices must be int, float or str"));
    }
    if v.is_instance_of::<PyInt>() {
        return Ok(Value::Int(v.extract()?));
    }
    if v.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(v.extract()?));
    }
    if v.is_instance_of::<PyString>() {
        return Ok(Value::Text(v.extract()?));
    }
    if let Ok(x) = v.extract::<i64>() {
        return Ok(Value::Int(x));
    }
    if let Ok(x) = v.extract::<f64>() {
        return Ok(Value::Float(x));
    }
    Err(invalid(
        name,
        type_name(v),
        "choices must be int, float or str",
    ))
}

/// One item of the grammar: a list or dict as written, anything else a value.
fn written(v: &Bound<'_, PyAny>) -> R<Written> {
    if let Ok(l) = v.cast::<PyList>() {
        return Ok(Written::List(
            l.iter().map(|x| written(&x)).collect::<R<_>>()?,
        ));
    }
    if let Ok(d) = v.cast::<PyDict>() {
        return Ok(Written::Table(
            d.iter()
                .map(|(k, x)| {
                    let key = k
                        .extract()
                        .map_err(|_| invalid("space", type_name(&k), "keys must be strings"))?;
                    Ok((key, written(&x)?))
                })
                .collect::<R<_>>()?,
        ));
    }
    Ok(Written::Value(value_from_py("space", v)?))
}

/// A search space from a dict: name → list of choices, a `(kind, low, high)` tuple with kind
/// "uniform", "log-uniform" (or "log_uniform", "loguniform") or "int", or the TOML file's form
/// `{kind: [items]}`; the library's grammar checks it ([`SpaceSpec::build`]).
pub(crate) fn space_from(obj: &Bound<'_, PyAny>) -> R<SearchSpace> {
    let d = obj
        .cast::<PyDict>()
        .map_err(|_| invalid("space", type_name(obj), "must be a dict name -> domain"))?;
    let mut params = Vec::new();
    for (k, v) in d.iter() {
        let name: String = k
            .extract()
            .map_err(|_| invalid("space", type_name(&k), "names must be strings"))?;
        let table =
            |kind: String, items: Vec<Written>| Written::Table(vec![(kind, Written::List(items))]);
        let domain = if let Ok(t) = v.cast::<PyTuple>() {
            let kind = t.get_item(0).and_then(|x| x.extract());
            let (Ok(kind), 3) = (kind, t.len()) else {
                return Err(invalid("space", &name, "a range is (kind, low, high)"));
            };
            let ends = [t.get_item(1)?, t.get_item(2)?];
            table(kind, ends.iter().map(written).collect::<R<_>>()?)
        } else if let Ok(l) = v.cast::<PyList>() {
            let values = l.iter().map(|x| value_from_py("space", &x));
            table(
                "values".into(),
                values.map(|x| x.map(Written::Value)).collect::<R<_>>()?,
            )
        } else if v.is_instance_of::<PyDict>() {
            written(&v)?
        } else {
            return Err(invalid(
                "space",
                &name,
                "a domain is a list of choices, a (kind, low, high) tuple or {kind: [...]}",
            ));
        };
        params.push((name, domain));
    }
    SpaceSpec::new(params).build().py()
}

pub(crate) fn config_to_py<'py>(py: Python<'py>, c: &Config) -> R<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c {
        d.set_item(k, value_to_py(py, v)?)?;
    }
    Ok(d)
}

//! A charge's [`Guarantee`] as stored text, and back.
//!
//! Writing uses the guarantee's own serde form (`Serialize`, unchanged) rendered as TOML: TOML
//! keeps every `f64` exactly (shortest round-trip digits, parsed exactly) and spells +∞, which
//! RDP tables may hold; JSON would turn +∞ into `null` and may misread the last bit of a float.
//! Reading rebuilds the guarantee through its validating constructors
//! ([`Guarantee::pure`], [`Guarantee::approx`], [`Guarantee::zcdp`], [`Guarantee::rdp`],
//! [`RdpCurve`]'s), so a damaged row can never yield a guarantee that the library would refuse to
//! build. [`encode`] refuses any guarantee that does not read back bit for bit (e.g. a kind of
//! bound this reader does not know yet), so nothing is stored that could later be misread.

use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::privacy::{Guarantee, Neighbours, RdpCurve};

/// Why a stored guarantee cannot be read (the caller adds the store's path).
#[derive(Debug)]
pub(super) struct Unreadable(pub String);

type Read<T> = std::result::Result<T, Unreadable>;

fn bad<T>(reason: impl Into<String>) -> Read<T> {
    Err(Unreadable(reason.into()))
}

/// The stored text of `g`. Refuses (as an invalid `cost`) a guarantee that would not read back
/// exactly.
pub(super) fn encode(g: &Guarantee) -> Result<String> {
    let text = toml::to_string(g).map_err(|e| Error::invalid("cost", g, e.to_string()))?;
    match decode(&text) {
        Ok(back) if back == *g => Ok(text),
        Ok(_) => Err(Error::invalid(
            "cost",
            g,
            "the budget store cannot record this guarantee exactly",
        )),
        Err(Unreadable(why)) => Err(Error::invalid(
            "cost",
            g,
            format!("the budget store cannot record this guarantee: {why}"),
        )),
    }
}

/// The guarantee stored as `text` by [`encode`].
pub(super) fn decode(text: &str) -> Read<Guarantee> {
    let t: Table = match text.parse() {
        Ok(t) => t,
        Err(e) => return bad(format!("not TOML: {e}")),
    };
    let neighbours = match t.get("neighbours").and_then(Value::as_str) {
        // Rows written before the one spelling (`replace_one`) spelled the relation `replace`;
        // stores outlive releases, so that spelling is still read (never written).
        Some("replace") => Neighbours::Replace,
        Some(name) => match name.parse() {
            Ok(n) => n,
            Err(_) => return bad(format!("unknown neighbour relation {name:?}")),
        },
        None => return bad("no neighbour relation"),
    };
    let Some(bounds) = t.get("bounds").and_then(Value::as_array) else {
        return bad("no bounds");
    };
    let mut out: Option<Guarantee> = None;
    for b in bounds {
        let one = bound(b, neighbours)?;
        out = Some(match out {
            None => one,
            Some(g) => lib(g.and(one))?,
        });
    }
    match out {
        Some(g) => Ok(g),
        None => bad("a guarantee needs at least one bound"),
    }
}

/// The single-bound guarantees that make up `g` (each holds on its own), with the serde name
/// of each bound's kind (`pure`, `approx`, `zcdp`, `rdp`).
pub(super) fn split(g: &Guarantee) -> Read<Vec<(String, Guarantee)>> {
    let text = match toml::to_string(g) {
        Ok(t) => t,
        Err(e) => return bad(e.to_string()),
    };
    let Ok(t) = text.parse::<Table>() else {
        return bad("unreadable");
    };
    let bounds = t.get("bounds").and_then(Value::as_array);
    bounds
        .into_iter()
        .flatten()
        .map(|b| Ok((single_key(b)?.0.to_string(), bound(b, g.neighbours())?)))
        .collect()
}

fn lib<T>(r: Result<T>) -> Read<T> {
    r.map_err(|e| Unreadable(e.to_string()))
}

/// A table with exactly one entry: an externally tagged enum variant.
fn single_key(v: &Value) -> Read<(&str, &Value)> {
    match v.as_table() {
        Some(t) if t.len() == 1 => {
            let (k, v) = t.iter().next().expect("one entry");
            Ok((k.as_str(), v))
        }
        _ => bad(format!("expected a one-entry table, found {v}")),
    }
}

fn num(body: &Value, key: &str) -> Read<f64> {
    match body.get(key).and_then(Value::as_float) {
        Some(x) => Ok(x),
        None => bad(format!("missing number `{key}` in {body}")),
    }
}

fn nums(body: &Value, key: &str) -> Read<Vec<f64>> {
    let Some(a) = body.get(key).and_then(Value::as_array) else {
        return bad(format!("missing list `{key}`"));
    };
    a.iter()
        .map(|x| match x.as_float() {
            Some(f) => Ok(f),
            None => bad(format!("`{key}` holds {x}, not a number")),
        })
        .collect()
}

fn bound(v: &Value, n: Neighbours) -> Read<Guarantee> {
    let (kind, body) = single_key(v)?;
    match kind {
        "pure" => lib(Guarantee::pure(num(body, "eps")?, n)),
        "approx" => lib(Guarantee::approx(num(body, "eps")?, num(body, "delta")?, n)),
        "zcdp" => lib(Guarantee::zcdp(num(body, "rho")?, n)),
        "rdp" => Ok(Guarantee::rdp(curve(body)?, n)),
        other => bad(format!("unknown kind of bound `{other}`")),
    }
}

/// An [`RdpCurve`] from its serde form `{ terms = [[count, part], ...] }`.
fn curve(body: &Value) -> Read<RdpCurve> {
    let Some(terms) = body.get("terms").and_then(Value::as_array) else {
        return bad("an RDP curve without terms");
    };
    let mut out: Option<RdpCurve> = None;
    for term in terms {
        let (count, part) = match term.as_array().map(Vec::as_slice) {
            Some([c, p]) => match c.as_float() {
                Some(c) => (c, p),
                None => return bad(format!("RDP term count {c} is not a number")),
            },
            _ => return bad(format!("RDP term {term} is not [count, part]")),
        };
        let (kind, p) = single_key(part)?;
        let one = match kind {
            "linear" => lib(RdpCurve::linear(num(p, "rho")?))?,
            "pure_dp" => lib(RdpCurve::pure_dp(num(p, "eps")?))?,
            "subsampled_gaussian" => {
                lib(RdpCurve::subsampled_gaussian(num(p, "q")?, num(p, "z")?))?
            }
            "table" => lib(RdpCurve::table(nums(p, "orders")?, nums(p, "values")?))?,
            other => return bad(format!("unknown RDP part `{other}`")),
        };
        let one = lib(one.times(count))?;
        out = Some(match out {
            None => one,
            Some(c) => c.compose(&one),
        });
    }
    match out {
        Some(c) => Ok(c),
        None => bad("an RDP curve needs a term"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privacy::default_orders;
    use Neighbours::*;

    fn round_trip(g: &Guarantee) {
        let text = encode(g).unwrap();
        assert_eq!(&decode(&text).unwrap(), g, "{text}");
    }

    #[test]
    fn every_kind_reads_back_bit_for_bit() {
        round_trip(&Guarantee::pure(0.1, AddRemove).unwrap());
        // 0.1 + 0.2 has a 17-digit shortest form: it must survive exactly.
        round_trip(&Guarantee::approx(0.1 + 0.2, 1e-5 / 3.0, Replace).unwrap());
        round_trip(&Guarantee::zcdp(1.0 / 3.0, AddRemove).unwrap());
        let em = Guarantee::pure(0.5, AddRemove)
            .unwrap()
            .and(Guarantee::zcdp(0.5 * 0.5 / 8.0, AddRemove).unwrap())
            .unwrap();
        round_trip(&em.compose(&em).unwrap());
        let mut values = vec![0.25; 155];
        values.push(f64::INFINITY); // tables may hold +inf: JSON could not say it
        let table = RdpCurve::table(default_orders(), values).unwrap();
        let curve = RdpCurve::subsampled_gaussian(0.01, 1.1)
            .unwrap()
            .times(1000.0)
            .unwrap()
            .compose(&table)
            .compose(&RdpCurve::pure_dp(0.3).unwrap())
            .compose(&RdpCurve::linear(0.02).unwrap());
        let g = Guarantee::rdp(curve, AddRemove)
            .and(Guarantee::approx(2.0, 1e-6, AddRemove).unwrap())
            .unwrap();
        round_trip(&g);
        let parts = split(&g).unwrap();
        assert_eq!(parts.len(), 2);
        assert_eq!(parts[0].0, "rdp");
        assert_eq!(parts[1].1, Guarantee::approx(2.0, 1e-6, AddRemove).unwrap());
    }

    #[test]
    fn damaged_text_is_refused_not_guessed() {
        let text = encode(&Guarantee::zcdp(0.5, AddRemove).unwrap()).unwrap();
        for broken in [
            text.replace("0.5", "-0.5"),  // the constructor's check
            text.replace("zcdp", "zcdq"), // unknown kind
            text.replace("add_remove", "x"),
            text.replace("rho", "rh0"),
            text[..text.len() / 2].to_string(),
            String::new(),
        ] {
            assert!(decode(&broken).is_err(), "{broken}");
        }
        // The wrong variant that the checks exist for: an unchecked reader would accept -0.5.
        let negative = text.replace("0.5", "-0.5");
        assert!(negative.parse::<Table>().is_ok());
    }

    #[test]
    fn replace_one_is_written_and_the_old_spelling_still_read() {
        let g = Guarantee::approx(1.0, 1e-6, Replace).unwrap();
        let text = encode(&g).unwrap();
        assert!(text.contains("\"replace_one\""), "{text}");
        let old = text.replace("replace_one", "replace");
        assert_eq!(decode(&old).unwrap(), g);
        assert!(decode(&text.replace("replace_one", "replace-one")).is_err());
    }
}

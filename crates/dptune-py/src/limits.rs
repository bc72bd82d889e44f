//! Up-front size limits: a public size whose memory estimate exceeds this machine's physical
//! memory is refused with `InvalidParameter` (naming the parameter and the estimate) before
//! anything is allocated, instead of aborting the interpreter.

use pyo3::prelude::*;

use crate::errors::{invalid, R};

/// Physical memory in bytes: `MemTotal` of /proc/meminfo on Linux; elsewhere (or if it cannot
/// be read) 1 TiB, a bound no laptop or ordinary server exceeds.
fn physical_memory() -> u128 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemTotal:"))
                .and_then(|v| v.trim().strip_suffix("kB"))
                .and_then(|v| v.trim().parse::<u128>().ok())
        })
        .map_or(1 << 40, |kib| kib * 1024)
}

fn human(bytes: u128) -> String {
    let gib = bytes as f64 / f64::from(1u32 << 30);
    if gib >= 1.0 {
        format!("{gib:.3} GiB")
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
}

/// Refuses `name` = `n` when `n` items of `bytes_each` bytes would not fit in memory.
pub(crate) fn check_size(name: &str, n: u64, bytes_each: u64) -> R<()> {
    let need = u128::from(n) * u128::from(bytes_each);
    let have = physical_memory();
    if need > have {
        return Err(invalid(
            name,
            n,
            &format!(
                "needs about {} of memory ({bytes_each} bytes per item), more than this \
                 machine's {}",
                human(need),
                human(have)
            ),
        ));
    }
    Ok(())
}

/// A size argument: a Python integer in 0..=2⁶⁴−1, else `InvalidParameter` naming it (never
/// Python's bare `OverflowError`).
pub(crate) fn size_arg(name: &str, obj: &Bound<'_, PyAny>) -> R<u64> {
    let v: i128 = obj.extract().map_err(|_| {
        invalid(
            name,
            obj.repr().map_or_else(|_| "?".into(), |r| r.to_string()),
            "must be a non-negative integer",
        )
    })?;
    u64::try_from(v).map_err(|_| invalid(name, v, "must be a non-negative integer below 2^64"))
}

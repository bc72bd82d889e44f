//! Mean wall time per call, as the per-call timing examples measure it.

use std::hint::black_box;
use std::time::Instant;

/// Calls `f` once (its value, and a warm-up), then `repeats` more times; returns the first
/// value and the mean wall time of the repeated calls in microseconds. The first error stops it.
pub fn per_call<T, E>(repeats: u32, mut f: impl FnMut() -> Result<T, E>) -> Result<(T, f64), E> {
    let value = f()?;
    let start = Instant::now();
    for _ in 0..repeats {
        black_box(f()?);
    }
    Ok((
        value,
        start.elapsed().as_secs_f64() * 1e6 / f64::from(repeats),
    ))
}

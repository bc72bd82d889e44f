//! Times dptune's PLD accountant on the golden PLD cases (and DP-SGD at 10,000 steps) for
//! `bench/pld`: one JSON line per case with ε, the median and minimum wall time over the
//! repeats, the CPU time per call (all threads, mean over the repeats; Linux only, from
//! /proc/self/task/*/schedstat, null elsewhere) and the grid points held at the end (the memory).
//!
//! Usage: pld_timing GOLDEN_JSON REPEATS [INTERVAL [CASE]] (CASE: run only the case of that id,
//! e.g. under a profiler).

use std::time::Instant;

use dptune::privacy::pld::{dpsgd_pld, ComposeSpec, PldConfig};
use serde_json::{json, Value};

/// CPU seconds used so far by every thread of this process (the rayon workers too), if the
/// system says.
fn cpu_seconds() -> Option<f64> {
    let mut ns = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        ns += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(ns as f64 * 1e-9)
}

/// The value, the median and the minimum wall time, and the mean CPU time per call.
fn time<T>(repeats: usize, mut f: impl FnMut() -> T) -> (T, f64, f64, Option<f64>) {
    let mut value = f();
    let mut times = Vec::with_capacity(repeats);
    let cpu0 = cpu_seconds();
    for _ in 0..repeats {
        let t = Instant::now();
        value = f();
        times.push(t.elapsed().as_secs_f64());
    }
    let cpu = cpu0
        .zip(cpu_seconds())
        .map(|(a, b)| (b - a) / repeats as f64);
    times.sort_by(f64::total_cmp);
    (value, times[times.len() / 2], times[0], cpu)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let golden: Value = serde_json::from_str(&std::fs::read_to_string(&args[1]).unwrap()).unwrap();
    let repeats: usize = args[2].parse().unwrap();
    let config = PldConfig {
        interval: args.get(3).map_or(1e-4, |s| s.parse().unwrap()),
        ..PldConfig::default()
    };
    let only = args.get(4);
    let wanted = |id: &str| only.is_none_or(|o| o == id);
    for c in golden["cases"].as_array().unwrap() {
        if !wanted(c["id"].as_str().unwrap()) {
            continue;
        }
        let spec: ComposeSpec = serde_json::from_value(c["inputs"].clone()).unwrap();
        let ((eps, points), median, min, cpu) = time(repeats, || {
            let p = spec.pld(config).unwrap();
            (p.epsilon(spec.delta).unwrap(), p.grid_points())
        });
        println!(
            "{}",
            json!({"id": c["id"], "epsilon": eps, "median_s": median, "min_s": min, "cpu_s": cpu,
                   "grid_points": points})
        );
    }
    for steps in [1_000u64, 10_000] {
        let id = format!("dpsgd_q0.004_z1.1_T{steps}");
        if !wanted(&id) {
            continue;
        }
        let ((eps, points), median, min, cpu) = time(repeats, || {
            let p = dpsgd_pld(0.004, 1.1, steps, config).unwrap();
            (p.epsilon(1e-5).unwrap(), p.grid_points())
        });
        println!(
            "{}",
            json!({"id": id, "epsilon": eps,
                   "median_s": median, "min_s": min, "cpu_s": cpu, "grid_points": points})
        );
    }
}

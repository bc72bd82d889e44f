//! Times dptune's PLD accountant on the golden PLD cases (and DP-SGD at 10,000 steps) for
//! `bench/pld`: one JSON line per case with ε, the median and minimum wall time over the
//! repeats, and the grid points held at the end (the memory).
//!
//! Usage: pld_timing GOLDEN_JSON REPEATS [INTERVAL [CASE]] (CASE: run only the case of that id,
//! e.g. under a profiler).

use std::time::Instant;

use dptune::privacy::pld::{dpsgd_pld, ComposeSpec, PldConfig};
use serde_json::{json, Value};

fn time<T>(repeats: usize, mut f: impl FnMut() -> T) -> (T, f64, f64) {
    let mut value = f();
    let mut times = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        value = f();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    (value, times[times.len() / 2], times[0])
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
        let ((eps, points), median, min) = time(repeats, || {
            let p = spec.pld(config).unwrap();
            (p.epsilon(spec.delta).unwrap(), p.grid_points())
        });
        println!(
            "{}",
            json!({"id": c["id"], "epsilon": eps, "median_s": median, "min_s": min,
                   "grid_points": points})
        );
    }
    for steps in [1_000u64, 10_000] {
        let id = format!("dpsgd_q0.004_z1.1_T{steps}");
        if !wanted(&id) {
            continue;
        }
        let ((eps, points), median, min) = time(repeats, || {
            let p = dpsgd_pld(0.004, 1.1, steps, config).unwrap();
            (p.epsilon(1e-5).unwrap(), p.grid_points())
        });
        println!(
            "{}",
            json!({"id": id, "epsilon": eps,
                   "median_s": median, "min_s": min, "grid_points": points})
        );
    }
}

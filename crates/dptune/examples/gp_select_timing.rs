//! Wall-clock time of one full private lengthscale selection on the benchmark problem
//! ([`dptune::gp::demo::timing_data`], also used by `benches/gp.rs`):
//! `cargo run --release -p dptune --example gp_select_timing -- 1000 [repeats]`.
//! Used by `bench/gp/run.sh` for the side-by-side ratio with numpy/scipy. With `repeats` > 1 it
//! reports the median and the maximum over the runs.

use dptune::gp::demo::{timing_config, timing_data};
use dptune::gp::select_lengthscale;
use dptune::noise::SecureRng;
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1000);
    let repeats: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1).max(1);
    let (x, y, range) = match timing_data(n) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    };
    let cfg = timing_config();
    let mut times = Vec::with_capacity(repeats);
    let mut chosen = f64::NAN;
    for _ in 0..repeats {
        let t = Instant::now();
        let r = select_lengthscale(&x, &y, range, &cfg, &mut SecureRng::seeded(1));
        times.push(t.elapsed().as_secs_f64());
        match r {
            Ok(sel) => chosen = sel.value.lengthscale,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{{\"n\": {n}, \"seconds\": {}, \"max_seconds\": {}, \"repeats\": {repeats}, \"lengthscale\": {chosen}}}",
        times[repeats / 2],
        times[repeats - 1]
    );
}

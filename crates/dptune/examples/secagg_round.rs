//! Times one secure-aggregation round (p = 100, no dropouts) for n = 100 and 1000 clients with a
//! SecAgg+ graph (degree 2⌈log2 n⌉ rounded to even, majority threshold) and, for n = 100, the
//! complete graph (threshold t = 0.8·n). Client compute is the sum over clients of the time spent
//! building their state and answering the five stages (key generation, Shamir sharing, share
//! encryption and decryption, masking, message encoding and decoding); server compute is the
//! server's message handling, routing and unmasking. Prints one JSON line per configuration, with
//! `num_shares` (neighbourhood size including the client itself, Flower's name) and `threshold`.
//! Client and server times are wall-clock sums per call (clients run on a rayon pool), so they
//! grow with the load of a shared machine; `round_cpu_seconds` is the CPU time (user + system,
//! all threads, from `/proc/self/stat`, 10 ms ticks; Linux only, `null` elsewhere) that the
//! process spent in the whole round (clients, server and the in-process driver), which does not.
//! Each configuration is run several times (`rounds`) and every number is the mean per round.
//! Used by `bench/secagg/run.sh`.

use dptune::federated::secagg::local::{run_round, Timing};
use dptune::federated::secagg::SecAggParams;
use dptune::noise::SecureRng;

/// CPU time (user + system) of this process so far, in seconds: fields 14 and 15 of
/// `/proc/self/stat`, in clock ticks of 1/100 s (Linux's USER_HZ). `None` if unavailable.
fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: skip past it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // `rest` starts at field 3, so fields 14 and 15 are at indices 11 and 12.
    let utime: u64 = fields.get(11)?.parse().ok()?;
    let stime: u64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) as f64 / 100.0)
}

fn main() -> Result<(), dptune::Error> {
    let p = 100;
    let mut rng = SecureRng::seeded(7);
    // (n, degree, rounds): each configuration is repeated so that its CPU time spans many
    // 10 ms ticks; every number printed is the mean over its rounds.
    for (n, degree, reps) in [
        (100usize, None, 3u32),
        (100, Some(14usize), 20),
        (1000, Some(20), 3),
    ] {
        let t = n * 4 / 5;
        let params = match degree {
            None => SecAggParams::complete(1, n, p, t)?,
            Some(d) => SecAggParams::sparse(1, n, p, t, d, d / 2 + 1, 3)?,
        };
        let mut total = Timing::default();
        let cpu0 = process_cpu_seconds();
        for _ in 0..reps {
            let inputs: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32; p]).collect();
            let (agg, timing) = run_round(&params, inputs, &[], &mut rng)?;
            let expected = (0..n as u32).fold(0u32, |a, b| a.wrapping_add(b));
            assert_eq!(agg.sum[0], expected);
            total.clients += timing.clients;
            total.server += timing.server;
            total.client_bytes = timing.client_bytes;
            total.server_bytes = timing.server_bytes;
        }
        let round_cpu = match (cpu0, process_cpu_seconds()) {
            (Some(a), Some(b)) => format!("{:.4}", (b - a) / f64::from(reps)),
            _ => "null".to_string(),
        };
        let clients = total.clients.as_secs_f64() / f64::from(reps);
        println!(
            "{{\"impl\": \"dptune\", \"n\": {n}, \"p\": {p}, \"num_shares\": {}, \"threshold\": {}, \"graph\": \"{}\", \"rounds\": {reps}, \"client_seconds_total\": {:.4}, \"client_seconds_mean\": {:.6}, \"server_seconds\": {:.4}, \"round_cpu_seconds\": {round_cpu}, \"client_bytes\": {}, \"server_bytes\": {}}}",
            degree.map_or(n, |d| d + 1),
            degree.map_or(t, |d| d / 2 + 1),
            degree.map_or("complete".to_string(), |d| format!("secagg+ degree {d}")),
            clients,
            clients / n as f64,
            total.server.as_secs_f64() / f64::from(reps),
            total.client_bytes,
            total.server_bytes
        );
    }
    Ok(())
}

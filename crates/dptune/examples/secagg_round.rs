//! Times one secure-aggregation round (p = 100, no dropouts) for n = 100 and 1000 clients with a
//! SecAgg+ graph (degree 2⌈log2 n⌉ rounded to even, majority threshold) and, for n = 100, the
//! complete graph (threshold t = 0.8·n). Client compute is the sum over clients of the time spent
//! building their state and answering the four stages (key generation, Shamir sharing, share
//! encryption and decryption, masking, message encoding and decoding); server compute is the
//! server's message handling, routing and unmasking. Prints one JSON line per configuration, with
//! `num_shares` (neighbourhood size including the client itself, Flower's name) and `threshold`.
//! Client and server times are wall-clock sums per call (clients run on a rayon pool), so they
//! grow with the load of a shared machine; `round_cpu_seconds` is the CPU time (user + system,
//! all threads, from `/proc/self/stat`, 10 ms ticks; Linux only, `null` elsewhere) that the
//! process spent in the whole round (clients, server and the in-process driver), which does not.
//! Used by `bench/secagg/run.sh`.

use dptune::federated::secagg::local::run_round;
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
    for (n, degree) in [(100usize, None), (100, Some(14usize)), (1000, Some(20))] {
        let t = n * 4 / 5;
        let params = match degree {
            None => SecAggParams::complete(1, n, p, t)?,
            Some(d) => SecAggParams::sparse(1, n, p, t, d, d / 2 + 1, 3)?,
        };
        let inputs: Vec<Vec<u32>> = (0..n).map(|i| vec![i as u32; p]).collect();
        let cpu0 = process_cpu_seconds();
        let (agg, timing) = run_round(&params, inputs, &[], &mut rng)?;
        let round_cpu = match (cpu0, process_cpu_seconds()) {
            (Some(a), Some(b)) => format!("{:.2}", b - a),
            _ => "null".to_string(),
        };
        let expected = (0..n as u32).fold(0u32, |a, b| a.wrapping_add(b));
        assert_eq!(agg.sum[0], expected);
        println!(
            "{{\"impl\": \"dptune\", \"n\": {n}, \"p\": {p}, \"num_shares\": {}, \"threshold\": {}, \"graph\": \"{}\", \"client_seconds_total\": {:.4}, \"client_seconds_mean\": {:.6}, \"server_seconds\": {:.4}, \"round_cpu_seconds\": {round_cpu}, \"client_bytes\": {}, \"server_bytes\": {}}}",
            degree.map_or(n, |d| d + 1),
            degree.map_or(t, |d| d / 2 + 1),
            degree.map_or("complete".to_string(), |d| format!("secagg+ degree {d}")),
            timing.clients.as_secs_f64(),
            timing.clients.as_secs_f64() / n as f64,
            timing.server.as_secs_f64(),
            timing.client_bytes,
            timing.server_bytes
        );
    }
    Ok(())
}

//! An in-process driver that runs one round between a [`Server`] and its [`Client`]s through
//! the real, serialised protocol messages, with scripted dropouts. Used by the simulation, the
//! tests and the benchmark; client and server compute are timed separately.

use std::time::{Duration, Instant};

use rayon::prelude::*;

use super::{Aggregate, Client, SecAggParams, Server};
use crate::error::Result;
use crate::noise::SecureRng;

/// The stage at which a client drops out (it sends nothing from that stage on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DropAt {
    /// Before advertising keys.
    Keys,
    /// Before sending its shares.
    Shares,
    /// Before sending its masked input.
    Masked,
    /// Before attesting the survivor set (its masked input is in the sum).
    Attest,
    /// Before answering the unmask request.
    Unmask,
}

impl DropAt {
    /// Every stage, in the order the protocol runs them: the one list the driver walks and
    /// the simulation and tests draw dropouts from, so a new stage cannot be missed by one.
    pub const STAGES: [DropAt; 5] = [
        DropAt::Keys,
        DropAt::Shares,
        DropAt::Masked,
        DropAt::Attest,
        DropAt::Unmask,
    ];
}

/// Compute time of one round: summed over all clients, and the server's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timing {
    /// Sum of the clients' compute time.
    pub clients: Duration,
    /// The server's compute time (message handling and unmasking).
    pub server: Duration,
    /// Bytes sent by all clients to the server.
    pub client_bytes: usize,
    /// Bytes sent by the server to all clients.
    pub server_bytes: usize,
}

fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let t = Instant::now();
    let v = f();
    (v, t.elapsed())
}

/// Runs one round. `inputs[i]` is client i's vector; `drops[i]` says when client i drops
/// (`None`: never). Client randomness comes from independent streams of `rng`, so a seeded run
/// is reproducible whatever the thread count. Returns the aggregate (or the server's
/// [`crate::Error::NoRelease`]) and the timings.
pub fn run_round(
    params: &SecAggParams,
    inputs: Vec<Vec<u32>>,
    drops: &[Option<DropAt>],
    rng: &mut SecureRng,
) -> Result<(Aggregate, Timing)> {
    let streams = rng.streams();
    let n = inputs.len();
    let alive = |i: usize, stage: DropAt| drops.get(i).copied().flatten().is_none_or(|d| d > stage);
    let mut timing = Timing::default();
    let built: Vec<(Result<Client>, Duration)> = inputs
        .into_par_iter()
        .enumerate()
        .map(|(i, x)| timed(|| Client::new(i, params.clone(), x, streams.get(i as u64))))
        .collect();
    let mut clients = Vec::with_capacity(n);
    for (c, d) in built {
        timing.clients += d;
        clients.push(c?);
    }
    let mut server = Server::new(params.clone());

    // Each stage: the clients still alive answer the server's message (or advertise keys).
    let mut inbox: Vec<Option<Vec<u8>>> = vec![None; n];
    for stage in DropAt::STAGES {
        let replies: Vec<(Option<Vec<u8>>, Duration)> = clients
            .par_iter_mut()
            .zip(inbox.par_iter())
            .enumerate()
            .map(|(i, (c, msg))| {
                if !alive(i, stage) {
                    return (None, Duration::ZERO);
                }
                timed(|| match (stage, msg) {
                    (DropAt::Keys, _) => c.advertise_keys().ok(),
                    (DropAt::Shares, Some(m)) => c.share_keys(m).ok(),
                    (DropAt::Masked, Some(m)) => c.masked_input(m).ok(),
                    (DropAt::Attest, Some(m)) => c.attest(m).ok(),
                    (DropAt::Unmask, Some(m)) => c.unmask(m).ok(),
                    _ => None,
                })
            })
            .collect();
        let ((), d) = timed(|| {
            for (reply, d) in &replies {
                timing.clients += *d;
                if let Some(bytes) = reply {
                    timing.client_bytes += bytes.len();
                    // A refused message is as good as a dropout; the server state is unchanged.
                    let _ = server.receive(bytes);
                }
            }
        });
        timing.server += d;
        if stage == DropAt::Unmask {
            break;
        }
        let (out, d) = timed(|| server.advance());
        timing.server += d;
        inbox = vec![None; n];
        for (to, bytes) in out? {
            timing.server_bytes += bytes.len();
            inbox[to as usize] = Some(bytes);
        }
    }
    let (agg, d) = timed(|| server.finish());
    timing.server += d;
    Ok((agg?, timing))
}

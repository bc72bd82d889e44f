//! Secure aggregation: the server learns the sum of the surviving clients' vectors in ℤ_{2^32}
//! and nothing else about any one of them.
//!
//! The protocol is SecAgg (Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving
//! Machine Learning", CCS 2017, IACR ePrint 2017/281) with the sparse neighbour graph of SecAgg+
//! (Bell, Bonawitz, Gascón, Lepoint, Raykova, "Secure Single-Server Aggregation with
//! (Poly)Logarithmic Overhead", CCS 2020, ePrint 2020/704), in the honest-but-curious server
//! model (no signatures, no consistency round; what a malicious server can and cannot do is
//! below and in docs/FEDERATED.md). Four server ↔ client round trips:
//!
//! 0. **Advertise keys.** Each client creates two X25519 key pairs (mask, encryption) and sends
//!    the public keys ([`wire::Kind::AdvertiseKeys`]). The server, and again every neighbour,
//!    refuses a key that is not the canonical encoding of a point of large order on Curve25519,
//!    and a pair that is one X25519 key twice (`crypto::PeerKey`).
//! 1. **Share keys.** The server forwards each client its live neighbours' keys. The client draws
//!    a 32-byte self-mask seed b_i, Shamir-splits b_i and its mask secret key over GF(2^61 − 1)
//!    with threshold `threshold` among its neighbourhood (itself included), and encrypts each
//!    neighbour's pair of shares with ChaCha20-Poly1305 under
//!    HKDF-SHA256(X25519(enc_sk_i, enc_pk_j)); the associated data binds round, sender and
//!    recipient. The plaintext also carries mask_pk_i and mask_pk_j as i received it: j refuses
//!    to go on if either differs from its own view (a server that showed i and j different mask
//!    keys for each other would otherwise make their pairwise masks fail to cancel).
//! 2. **Masked input.** Client i sends y_i = x_i + PRG(b_i) + Σ_{j∈N(i), i<j} PRG(s_ij)
//!    − Σ_{j∈N(i), i>j} PRG(s_ij) (mod 2^32), over the neighbours j that completed stage 1, with
//!    s_ij = HKDF-SHA256(X25519(mask_sk_i, mask_pk_j)) and PRG = the ChaCha20 keystream. The
//!    message names those neighbours and carries a Poly1305 tag over (round, i, neighbours, y_i)
//!    under a key derived from b_i (`crypto::input_tag`). The server refuses a neighbour list
//!    that differs from the shares it forwarded to i, and sets aside a survivor whose mask with
//!    another survivor is one-sided (that survivor is then treated as dropped).
//! 3. **Unmask.** The server names the survivors of stage 2 and the clients that dropped after
//!    stage 1. Each responding client reveals, for each neighbour, the share of b_j (survivor) or
//!    of mask_sk_j (dropped), never both: a client answers one unmask request per round. The
//!    server reconstructs b_j, checks y_j's tag under it (a masked input altered on the way or
//!    sent under j's id by someone else, or a wrong share of b_j, fails: [`Error::NoRelease`])
//!    and removes PRG(b_j); it reconstructs mask_sk_j (checked against mask_pk_j) and removes
//!    j's pairwise masks from the survivors that masked against j.
//!
//! **Faults** (tests in `fault_tests.rs`; the list and the limits in docs/FEDERATED.md,
//! "Faults"): tampered, replayed, duplicated, reordered, late and forged messages end in the
//! exact sum of the survivors or in a typed refusal, never in a wrong sum.
//!
//! **Dropouts.** With the complete graph ([`SecAggParams::complete`]) the Shamir threshold equals
//! the minimum number of survivors t: any n − t clients may drop at any stage and the server still
//! recovers the exact sum of the survivors' inputs; with fewer than t survivors at any stage the
//! server fails with [`Error::NoRelease`] and releases nothing. With a sparse SecAgg+ graph
//! ([`SecAggParams::sparse`]) recovery needs `threshold` live members in every affected
//! neighbourhood; otherwise the server fails cleanly in the same way.
//!
//! **Threshold and an untrusted server.** A server that lies about who dropped could ask some
//! neighbours for b_j and others for mask_sk_j. Shamir with threshold > half of each
//! neighbourhood makes that impossible (it would need 2·threshold distinct holders). The sparse
//! constructor enforces this majority; for the complete graph, choose t > n/2 when the server is
//! not trusted to follow the protocol.
//!
//! **Arithmetic and overflow.** Inputs live in ℤ_{2^32} (u32 with wrapping arithmetic, so masks
//! are exactly uniform and cancel exactly). Signed inputs are encoded by two's complement and the
//! sum is decoded to the centred representative in [−2^31, 2^31). The decoded sum is correct iff
//! the true integer sum lies in that interval. For DP-HYPE votes plus Skellam noise, coordinate j
//! of the true sum is c_j + Z_j with 0 ≤ c_j ≤ n and Z_j ~ Sk(μ_tot) (variance μ_tot ≤ n·μ_c);
//! Bennett's inequality for a sum of independent increments bounded by 1 gives
//! P(|Z_j| ≥ x) ≤ 2·exp(−x²/(2(μ_tot + x/3))). [`overflow_probability`] evaluates the union bound
//! over all coordinates; the voting layer refuses configurations where it exceeds 2^−40. For
//! example n = 10^4 clients, μ_tot = 10^6: x = 2^31 − 10^4 makes the bound exp(−3·10^9)-small.

pub mod client;
pub mod local;
pub mod server;
pub mod shamir;
pub mod wire;

mod crypto;

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::noise::SecureRng;

pub use client::Client;
pub use server::{Aggregate, Server};

/// Largest accepted vector dimension (keeps every length prefix and mask buffer small).
pub const MAX_DIM: usize = 1 << 24;

/// Which clients share secrets with which.
#[derive(Debug, Clone)]
enum Graph {
    /// Everyone with everyone (SecAgg).
    Complete,
    /// A ring over a public random permutation; each client is joined to `half` clients on each
    /// side (SecAgg+'s Harary-style graph).
    Ring {
        /// Position of each client on the ring.
        pos: Arc<Vec<u32>>,
        /// Client at each position.
        at: Arc<Vec<u32>>,
        /// Neighbours per side.
        half: usize,
    },
}

/// Public parameters of one aggregation round, identical for the server and every client.
#[derive(Debug, Clone)]
pub struct SecAggParams {
    round: u64,
    clients: u32,
    dim: usize,
    min_survivors: usize,
    threshold: usize,
    graph: Graph,
}

impl SecAggParams {
    fn check_common(clients: usize, dim: usize, min_survivors: usize) -> Result<()> {
        if clients < 2 || clients >= u32::MAX as usize {
            return Err(Error::invalid(
                "clients",
                clients,
                "need at least 2 clients (and fewer than 2^32 − 1)",
            ));
        }
        if dim == 0 || dim > MAX_DIM {
            return Err(Error::invalid(
                "dim",
                dim,
                format!("vector length must lie in 1..={MAX_DIM}"),
            ));
        }
        if min_survivors < 2 {
            return Err(Error::invalid(
                "min_survivors",
                min_survivors,
                "at least 2 survivors are needed (one survivor's sum is its own vector)",
            ));
        }
        if min_survivors > clients {
            return Err(Error::invalid(
                "min_survivors",
                min_survivors,
                format!("cannot exceed the number of clients ({clients})"),
            ));
        }
        Ok(())
    }

    /// SecAgg over the complete graph: Shamir threshold T = max(t, ⌊n/2⌋ + 1) for
    /// `min_survivors` = t, a strict majority of the n clients whatever t (module doc,
    /// "Untrusted server"). The sum is recovered whenever at least T clients survive every stage;
    /// with t ≤ n/2 that is more than t, so fewer than T survivors end in [`Error::NoRelease`].
    pub fn complete(round: u64, clients: usize, dim: usize, min_survivors: usize) -> Result<Self> {
        Self::check_common(clients, dim, min_survivors)?;
        Ok(Self {
            round,
            clients: clients as u32,
            dim,
            min_survivors,
            threshold: majority_threshold(clients, min_survivors),
            graph: Graph::Complete,
        })
    }

    /// SecAgg+ over a sparse ring graph: each client shares with `degree` neighbours (even,
    /// `degree/2` per side of a ring over a permutation drawn from the public `graph_seed`), and
    /// any `threshold` of a neighbourhood (of `degree + 1` members, the owner included) recover
    /// its secrets. `threshold` must be a strict majority of the neighbourhood. A `degree` of at
    /// least n − 1 is the complete graph.
    pub fn sparse(
        round: u64,
        clients: usize,
        dim: usize,
        min_survivors: usize,
        degree: usize,
        threshold: usize,
        graph_seed: u64,
    ) -> Result<Self> {
        Self::check_common(clients, dim, min_survivors)?;
        if degree < 2 || degree % 2 == 1 {
            return Err(Error::invalid(
                "degree",
                degree,
                "the neighbour count must be even and at least 2",
            ));
        }
        let group = degree.min(clients - 1) + 1;
        if threshold * 2 <= group || threshold > group {
            return Err(Error::invalid(
                "threshold",
                threshold,
                format!("must be a strict majority of the neighbourhood size {group}"),
            ));
        }
        let graph = if degree >= clients - 1 {
            Graph::Complete
        } else {
            let mut rng = SecureRng::seeded(graph_seed);
            let mut at: Vec<u32> = (0..clients as u32).collect();
            for i in (1..clients).rev() {
                let j = rng.below_u64(i as u64 + 1) as usize;
                at.swap(i, j);
            }
            let mut pos = vec![0u32; clients];
            for (p, &c) in at.iter().enumerate() {
                pos[c as usize] = p as u32;
            }
            Graph::Ring {
                pos: Arc::new(pos),
                at: Arc::new(at),
                half: degree / 2,
            }
        };
        Ok(Self {
            round,
            clients: clients as u32,
            dim,
            min_survivors,
            threshold,
            graph,
        })
    }

    /// Round id.
    pub fn round(&self) -> u64 {
        self.round
    }
    /// Number of clients on the roster (ids 0..n).
    pub fn clients(&self) -> usize {
        self.clients as usize
    }
    /// Vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Minimum number of survivors t.
    pub fn min_survivors(&self) -> usize {
        self.min_survivors
    }
    /// Shamir threshold.
    pub fn threshold(&self) -> usize {
        self.threshold
    }

    /// True if `a` and `b` (distinct) share secrets.
    pub fn are_neighbours(&self, a: u32, b: u32) -> bool {
        if a == b || a >= self.clients || b >= self.clients {
            return false;
        }
        match &self.graph {
            Graph::Complete => true,
            Graph::Ring { pos, half, .. } => {
                let n = self.clients as usize;
                let d = (pos[a as usize] as usize + n - pos[b as usize] as usize) % n;
                d.min(n - d) <= *half
            }
        }
    }

    /// The neighbours of `id` (itself excluded), in increasing order.
    pub fn neighbours(&self, id: u32) -> Vec<u32> {
        match &self.graph {
            Graph::Complete => (0..self.clients).filter(|&j| j != id).collect(),
            Graph::Ring { pos, at, half } => {
                let n = self.clients as usize;
                let p = pos[id as usize] as usize;
                let mut v: Vec<u32> = (1..=*half)
                    .flat_map(|d| [at[(p + d) % n], at[(p + n - d) % n]])
                    .collect();
                v.sort_unstable();
                v.dedup();
                v
            }
        }
    }
}

/// The complete graph's Shamir threshold for n clients and t minimum survivors:
/// max(t, ⌊n/2⌋ + 1), the smallest strict majority of the n clients if t is not one already.
pub fn majority_threshold(clients: usize, min_survivors: usize) -> usize {
    min_survivors.max(clients / 2 + 1)
}

/// Encodes signed integers into ℤ_{2^32} (two's complement). Every value must lie in
/// [−2^31, 2^31); anything else is refused, naming `name`.
pub fn encode_signed(name: &'static str, values: &[i64]) -> Result<Vec<u32>> {
    values
        .iter()
        .map(|&v| {
            i32::try_from(v)
                .map(|x| x as u32)
                .map_err(|_| Error::invalid(name, v, "must lie in [-2^31, 2^31) for ℤ_{2^32}"))
        })
        .collect()
}

/// Decodes elements of ℤ_{2^32} to their centred representatives in [−2^31, 2^31).
pub fn decode_signed(values: &[u32]) -> Vec<i64> {
    values.iter().map(|&v| v as i32 as i64).collect()
}

/// Union bound on the probability that some coordinate of c + Z wraps around in ℤ_{2^32}, where
/// 0 ≤ c_j ≤ `max_count` and Z_j ~ Sk(`variance`) independently over `dim` coordinates (Bennett's
/// inequality, module doc). Returns a value ≥ the true probability (rounded up).
pub fn overflow_probability(max_count: u64, variance: f64, dim: usize) -> f64 {
    let room = (1u64 << 31) as f64 - 1.0 - max_count as f64;
    if room <= 0.0 || variance.is_nan() {
        return 1.0;
    }
    let log_tail = -(room * room) / (2.0 * (variance + room / 3.0));
    let p = 2.0 * dim as f64 * log_tail.exp();
    p.next_up().min(1.0)
}

#[cfg(test)]
mod fault_tests;
#[cfg(test)]
mod tests;

//! Secure aggregation: the server learns the sum of the surviving clients' vectors in ℤ_{2^32}
//! and nothing else about any one of them.
//!
//! The protocol is SecAgg (Bonawitz et al., "Practical Secure Aggregation for Privacy-Preserving
//! Machine Learning", CCS 2017, IACR ePrint 2017/281, arXiv 1611.04482) with the sparse neighbour
//! graph of SecAgg+ (Bell, Bonawitz, Gascón, Lepoint, Raykova, "Secure Single-Server Aggregation
//! with (Poly)Logarithmic Overhead", CCS 2020, ePrint 2020/704) and a consistency stage after
//! the masked inputs (the role of Bonawitz et al.'s ConsistencyCheck round), so that a server
//! that lies about who survived learns no more than an honest one ("Untrusted server" below).
//! Five server ↔ client round trips:
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
//! 3. **Consistency.** The server names the survivors of stage 2 and the clients that dropped
//!    after stage 1. A client checks the survivor set (it contains the client, has at least t
//!    members, and classifies exactly the neighbours whose shares it holds, so every other
//!    survivor is a neighbour it masked against) and attests it to each fellow survivor j: a
//!    Poly1305 tag over (round, i, j, survivors) under the pair's share key
//!    (`crypto::attest_tag`). A client attests at most one set per round.
//! 4. **Unmask.** The server forwards each client the attestations addressed to it. A client
//!    reveals shares only if at least `threshold` members of its neighbourhood, itself included,
//!    attested the very set it attested (tags checked under its own pairwise keys); then, for
//!    each neighbour, the share of b_j (survivor) or of mask_sk_j (dropped), never both, and at
//!    most once per round. The server reconstructs b_j, checks y_j's tag under it (a masked input
//!    altered on the way or sent under j's id by someone else, or a wrong share of b_j, fails:
//!    [`Error::NoRelease`]) and removes PRG(b_j); it reconstructs mask_sk_j (checked against
//!    mask_pk_j) and removes j's pairwise masks from the survivors that masked against j.
//!
//! **Faults** (tests in `fault_tests.rs`; the list and the limits in docs/FEDERATED.md,
//! "Faults"): tampered, replayed, duplicated, reordered, late and forged messages end in the
//! exact sum of the survivors or in a typed refusal, never in a wrong sum.
//!
//! **Dropouts.** With the complete graph ([`SecAggParams::complete`]) the Shamir threshold is
//! T = max(t, ⌊n/2⌋ + 1) for the minimum number of survivors t: any n − T clients may drop at
//! any stage and the server still recovers the exact sum of the survivors' inputs (a client that
//! drops after its masked input is in the sum as long as T others attest and unmask); with fewer
//! than T clients left at any stage the server fails with [`Error::NoRelease`] and releases
//! nothing. For t ≤ n/2 this tolerates fewer dropouts than t alone would suggest; the DP-HYPE
//! noise stays sized for t survivors (a sum over more survivors only has more noise). With a
//! sparse SecAgg+ graph ([`SecAggParams::sparse`]) recovery needs `threshold` live members in
//! every affected neighbourhood; otherwise the server fails cleanly in the same way.
//!
//! **Untrusted server.** A server that relays the public keys faithfully but then lies (hides
//! stage-1 ciphertexts from some clients, shows different clients different survivor sets) had
//! two attacks on the four-stage protocol, both tests in `fault_tests.rs`:
//! * *split*: tell some clients that j survived and the others that j dropped, reconstruct b_j
//!   from the first group's shares and mask_sk_j from the second's, and x_j = y_j − masks. It
//!   needs 2·T holders of j's shares (j itself reveals only its seed share): it worked with
//!   T ≤ n/2 (T = 2 of 5 in the test recovers x_j exactly).
//! * *isolation*: hide from j all but T − 1 neighbours' shares, so that y_j is masked against
//!   those only, then show each client its own survivor set so that b_j and the mask keys of j's
//!   T − 1 partners each reach T holders while no client reveals both shares of any owner. This
//!   worked with a majority threshold too (n = 5, T = 3 in the test), and in general gave the
//!   server sums of fewer than t inputs.
//!
//! Claim (complete graph, T = max(t, ⌊n/2⌋ + 1), a server colluding with c clients,
//! 2T > n + c, enforced by [`SecAggParams::check_colluders`] wherever a guarantee against c
//! colluders is stated): the server learns at most the sum of the honest members of one
//! survivor set of at least t clients, so of at least t − c honest inputs, which is what the
//! DP-HYPE noise is sized for. Argument (ours; it follows the structure of Bonawitz et al.'s
//! consistency check, with MACs under the pairwise share keys in place of signatures under a
//! PKI: only the recipient of an attestation needs to verify it):
//! 1. *One survivor set.* An honest client unmasks only with T attestations of its set (its
//!    own included), at least T − c of them from honest clients, and an honest client attests
//!    one set. Two honest clients unmasking with different sets would need 2(T − c) distinct
//!    honest attesters among n − c honest clients, contradicting 2T > n + c. Call the set U.
//! 2. *Never both secrets.* Every honest answer classifies an honest client j by U, so the
//!    honest clients reveal shares of b_j or of mask_sk_j, not both; the c colluders alone hold
//!    fewer than T shares of anything (c < T, implied by 2T > n + c and T ≤ n).
//! 3. *No smaller sum.* The masks PRG(s_jk) of two clients whose mask keys stay secret are
//!    pseudorandom pads, so the server can only compute sums over sets of survivors closed under
//!    "masked against each other" (Bonawitz et al. §6). No honest member of U has its key
//!    revealed (2.), and an honest attester masked against every other member of U (it checked
//!    that U holds only neighbours that shared with it), so a computable sum containing an
//!    attester contains all honest members of U. A sum of non-attesters only would need each of
//!    its members j to have masked against none of the ≥ T − c honest attesters, yet j masked
//!    against ≥ T − 1 neighbours (checked in stage 2): T − 1 ≤ n − 1 − (T − c), i.e.
//!    2T ≤ n + c, a contradiction.
//!
//! Limits: the claim assumes the server relayed the public keys faithfully (without a PKI it can
//! substitute keys it knows and read the shares sent to them, docs/FEDERATED.md, "Faults"). For
//! the sparse SecAgg+ graph the attestations are checked within each neighbourhood; only 2. is
//! claimed there (the threshold is a strict majority of every neighbourhood and
//! 2·threshold > neighbourhood + c), not the bound on smaller sums (Bell et al. 2020 analyse
//! malicious servers on sparse graphs under further conditions that are not checked here).
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

    /// Size of every neighbourhood: a client and the clients it shares secrets with.
    pub fn group_size(&self) -> usize {
        match &self.graph {
            Graph::Complete => self.clients as usize,
            Graph::Ring { half, .. } => 2 * half + 1,
        }
    }

    /// Refuses a guarantee against a server colluding with `colluders` clients unless
    /// 2·threshold > group + colluders (module doc, "Untrusted server"): colluders reveal both
    /// shares of every owner and attest any survivor set, so with fewer honest clients the
    /// server could obtain both secrets of an honest client, or two quorums of attestations of
    /// different survivor sets.
    pub fn check_colluders(&self, colluders: usize) -> Result<()> {
        let group = self.group_size();
        if 2 * self.threshold <= group + colluders {
            return Err(Error::invalid(
                "colluders",
                colluders,
                format!(
                    "secure aggregation with Shamir threshold {} in neighbourhoods of {group} \
                     resists a server colluding with fewer than {} clients (2 × threshold > \
                     neighbourhood + colluders); raise the minimum number of survivors",
                    self.threshold,
                    2 * self.threshold - group
                ),
            ));
        }
        Ok(())
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

//! The server side of the protocol (module doc of [`super`]).
//!
//! The server collects messages as bytes with [`Server::receive`] (a malformed, replayed,
//! misdirected or duplicate message is refused with an error and leaves the state unchanged, so
//! one bad client cannot crash or poison a round), closes each stage with [`Server::advance`]
//! (which returns the messages to send), and finally computes the sum with [`Server::finish`].
//! Whenever fewer than `min_survivors` clients are alive, or a secret cannot be reconstructed,
//! the server fails with [`Error::NoRelease`] and releases nothing.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use x25519_dalek::{PublicKey, StaticSecret};

use super::crypto::{apply_mask, input_tag, pairwise_keys, PeerKey, Purpose};
use super::shamir::{combine, lagrange_at_zero, Share};
use super::wire::{Body, Kind, Message, PublicKeys, SERVER, TAG_LEN};
use super::SecAggParams;
use crate::error::{Error, Result};

/// (owner, share) pairs revealed by one client.
type OwnedShares = Vec<(u32, Share)>;

/// (peer, attestation tag) pairs.
type Tags = Vec<(u32, [u8; TAG_LEN])>;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    CollectKeys,
    CollectShares,
    CollectMasked,
    CollectAttest,
    CollectUnmask,
    Done,
}

/// A survivor's masked input as received.
#[derive(Debug)]
struct Masked {
    y: Vec<u32>,
    /// The neighbours whose pairwise masks `y` contains.
    live: Vec<u32>,
    tag: [u8; TAG_LEN],
}

/// The result of a round: the sum in ℤ_{2^32} of the survivors' inputs, and who they are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aggregate {
    /// Σ_{i ∈ survivors} x_i mod 2^32.
    pub sum: Vec<u32>,
    /// The clients whose inputs are in the sum, in increasing order.
    pub survivors: Vec<u32>,
}

/// The server of one aggregation round.
#[derive(Debug)]
pub struct Server {
    params: SecAggParams,
    stage: Stage,
    keys: BTreeMap<u32, PublicKeys>,
    /// The mask keys of `keys`, checked on arrival, for removing a dropped client's masks.
    mask_keys: BTreeMap<u32, PeerKey>,
    /// Stage-1 ciphertexts: recipient → (sender, ciphertext).
    mailbox: BTreeMap<u32, Vec<(u32, Vec<u8>)>>,
    shared: BTreeSet<u32>,
    /// Stage-2 inboxes: recipient → the senders whose ciphertexts it was sent, increasing.
    forwarded: BTreeMap<u32, Vec<u32>>,
    masked: BTreeMap<u32, Masked>,
    dropped: Vec<u32>,
    /// Stage-3 attestations: sender → (recipient, tag).
    attest: BTreeMap<u32, Tags>,
    unmask: BTreeMap<u32, (OwnedShares, OwnedShares)>,
}

fn refuse(reason: impl Into<String>) -> Error {
    Error::Data {
        location: "secure-aggregation protocol (server)".into(),
        reason: reason.into(),
    }
}

impl Server {
    /// A server for a round with `params`.
    pub fn new(params: SecAggParams) -> Self {
        Self {
            params,
            stage: Stage::CollectKeys,
            keys: BTreeMap::new(),
            mask_keys: BTreeMap::new(),
            mailbox: BTreeMap::new(),
            shared: BTreeSet::new(),
            forwarded: BTreeMap::new(),
            masked: BTreeMap::new(),
            dropped: Vec::new(),
            attest: BTreeMap::new(),
            unmask: BTreeMap::new(),
        }
    }

    /// The round's parameters.
    pub fn params(&self) -> &SecAggParams {
        &self.params
    }

    fn expected_kind(&self) -> Option<Kind> {
        match self.stage {
            Stage::CollectKeys => Some(Kind::AdvertiseKeys),
            Stage::CollectShares => Some(Kind::EncryptedShares),
            Stage::CollectMasked => Some(Kind::MaskedInput),
            Stage::CollectAttest => Some(Kind::Attestations),
            Stage::CollectUnmask => Some(Kind::UnmaskShares),
            Stage::Done => None,
        }
    }

    /// Whether `id` is allowed to speak in the current stage (it completed the previous one).
    fn eligible(&self, id: u32) -> bool {
        match self.stage {
            Stage::CollectKeys => id < self.params.clients,
            Stage::CollectShares => self.keys.contains_key(&id),
            Stage::CollectMasked => self.shared.contains(&id),
            Stage::CollectAttest => self.masked.contains_key(&id),
            Stage::CollectUnmask => self.attest.contains_key(&id),
            Stage::Done => false,
        }
    }

    fn already_heard(&self, id: u32) -> bool {
        match self.stage {
            Stage::CollectKeys => self.keys.contains_key(&id),
            Stage::CollectShares => self.shared.contains(&id),
            Stage::CollectMasked => self.masked.contains_key(&id),
            Stage::CollectAttest => self.attest.contains_key(&id),
            Stage::CollectUnmask => self.unmask.contains_key(&id),
            Stage::Done => true,
        }
    }

    /// Accepts one client message. Malformed bytes, a wrong round, stage, sender or recipient, a
    /// duplicate, or a body inconsistent with the round are refused with an error; the state is
    /// unchanged, and the sender counts as dropped unless a valid message follows.
    pub fn receive(&mut self, bytes: &[u8]) -> Result<()> {
        let m = Message::decode(bytes)?;
        let h = m.header;
        let Some(kind) = self.expected_kind() else {
            return Err(refuse("the round is over"));
        };
        if h.round != self.params.round() {
            return Err(refuse(format!("message for round {} (replay?)", h.round)));
        }
        if h.kind != kind {
            return Err(refuse(format!("expected {kind:?}, got {:?}", h.kind)));
        }
        if h.to != SERVER || !self.eligible(h.from) {
            return Err(refuse(format!("sender {} may not speak now", h.from)));
        }
        if self.already_heard(h.from) {
            return Err(refuse(format!("duplicate message from {}", h.from)));
        }
        let from = h.from;
        match m.body {
            Body::AdvertiseKeys { mask_pk, enc_pk } => {
                // Refusing a bad key here makes its sender a dropout before any neighbour sees
                // it (each neighbour checks again: the server may not be honest).
                let (Some(mask), Some(enc)) = (PeerKey::parse(&mask_pk), PeerKey::parse(&enc_pk))
                else {
                    return Err(refuse(
                        "a key is not a canonical point of large order on Curve25519",
                    ));
                };
                if mask.same_as(&enc) {
                    return Err(refuse("mask and encryption keys must differ"));
                }
                self.mask_keys.insert(from, mask);
                self.keys.insert(
                    from,
                    PublicKeys {
                        id: from,
                        mask_pk,
                        enc_pk,
                    },
                );
            }
            Body::EncryptedShares(cts) => {
                let mut seen = BTreeSet::new();
                for (to, _) in &cts {
                    if !self.params.are_neighbours(from, *to)
                        || !self.keys.contains_key(to)
                        || !seen.insert(*to)
                    {
                        return Err(refuse(format!(
                            "share for {to} from {from} is misaddressed"
                        )));
                    }
                }
                for (to, ct) in cts {
                    self.mailbox.entry(to).or_default().push((from, ct));
                }
                self.shared.insert(from);
            }
            Body::MaskedInput { y, live, tag } => {
                if y.len() != self.params.dim() {
                    return Err(refuse(format!(
                        "masked input of length {}, expected {}",
                        y.len(),
                        self.params.dim()
                    )));
                }
                // The masks in y must be those of the shares this server forwarded to `from`,
                // or the pairwise masks would not cancel (a lost or withheld ciphertext).
                let sent = self.forwarded.get(&from).map(Vec::as_slice).unwrap_or(&[]);
                if live != sent {
                    return Err(refuse(format!(
                        "masked input of {from} is masked against {live:?}, but it was sent the \
                         shares of {sent:?}"
                    )));
                }
                self.masked.insert(from, Masked { y, live, tag });
            }
            Body::Attestations(tags) => {
                let mut seen = BTreeSet::new();
                for (to, _) in &tags {
                    if *to == from
                        || !self.masked.contains_key(to)
                        || !self.params.are_neighbours(from, *to)
                        || !seen.insert(*to)
                    {
                        return Err(refuse(format!(
                            "attestation for {to} from {from} is misaddressed"
                        )));
                    }
                }
                self.attest.insert(from, tags);
            }
            Body::UnmaskShares {
                seed_shares,
                key_shares,
            } => {
                let x = from as u64 + 1;
                for (owner, sh) in seed_shares.iter().chain(key_shares.iter()) {
                    if sh.x != x || (*owner != from && !self.params.are_neighbours(from, *owner)) {
                        return Err(refuse(format!("unmask share from {from} is inconsistent")));
                    }
                }
                if seed_shares
                    .iter()
                    .any(|(o, _)| !self.masked.contains_key(o))
                    || key_shares
                        .iter()
                        .any(|(o, _)| self.dropped.binary_search(o).is_err())
                {
                    return Err(refuse(format!(
                        "unmask shares from {from} for the wrong set"
                    )));
                }
                self.unmask.insert(from, (seed_shares, key_shares));
            }
            _ => return Err(refuse("client sent a server message")),
        }
        Ok(())
    }

    /// Two survivors i, j cancel their pairwise mask only if each masked against the other.
    /// When j's shares reached i but not the other way round (j addressed its shares to only
    /// some neighbours), i's masked input carries PRG(s_ij) and j's does not: i's masked input
    /// is set aside and i is treated as dropped, so its mask key is reconstructed and its masks
    /// with the others removed. One pass suffices: whether a pair is one-sided depends on the
    /// two neighbour lists only, so setting clients aside never makes another pair one-sided.
    fn demote_one_sided(&mut self) {
        let one_sided: Vec<u32> = self
            .masked
            .iter()
            .filter(|&(&i, m)| {
                m.live.iter().any(|j| {
                    self.masked
                        .get(j)
                        .is_some_and(|mj| mj.live.binary_search(&i).is_err())
                })
            })
            .map(|(&i, _)| i)
            .collect();
        for i in one_sided {
            self.masked.remove(&i);
        }
    }

    fn check_alive(&self, alive: usize, what: &str) -> Result<()> {
        if alive < self.params.min_survivors() {
            return Err(Error::NoRelease {
                reason: format!(
                    "{alive} clients {what}, fewer than the minimum of {} survivors",
                    self.params.min_survivors()
                ),
            });
        }
        Ok(())
    }

    /// Closes the current stage (all messages in, or the timeout passed) and returns the
    /// messages to send, as (recipient, bytes). Fails with [`Error::NoRelease`] if too few
    /// clients are left.
    pub fn advance(&mut self) -> Result<Vec<(u32, Vec<u8>)>> {
        let round = self.params.round();
        let out = match self.stage {
            Stage::CollectKeys => {
                self.check_alive(self.keys.len(), "advertised keys")?;
                self.stage = Stage::CollectShares;
                self.keys
                    .keys()
                    .map(|&i| {
                        let list: Vec<PublicKeys> = self
                            .keys
                            .values()
                            .filter(|k| k.id == i || self.params.are_neighbours(i, k.id))
                            .copied()
                            .collect();
                        (i, Message::new(round, SERVER, i, Body::Keys(list)).encode())
                    })
                    .collect()
            }
            Stage::CollectShares => {
                self.check_alive(self.shared.len(), "shared their keys")?;
                self.stage = Stage::CollectMasked;
                let mut mailbox = std::mem::take(&mut self.mailbox);
                self.shared
                    .iter()
                    .map(|&i| {
                        let inbox: Vec<(u32, Vec<u8>)> = mailbox
                            .remove(&i)
                            .unwrap_or_default()
                            .into_iter()
                            .filter(|(from, _)| self.shared.contains(from))
                            .collect();
                        let mut senders: Vec<u32> = inbox.iter().map(|&(j, _)| j).collect();
                        senders.sort_unstable();
                        self.forwarded.insert(i, senders);
                        let body = Body::ForwardedShares(inbox);
                        (i, Message::new(round, SERVER, i, body).encode())
                    })
                    .collect()
            }
            Stage::CollectMasked => {
                self.demote_one_sided();
                self.check_alive(self.masked.len(), "sent masked inputs")?;
                self.stage = Stage::CollectAttest;
                let survivors: Vec<u32> = self.masked.keys().copied().collect();
                self.dropped = self
                    .shared
                    .iter()
                    .filter(|i| !self.masked.contains_key(i))
                    .copied()
                    .collect();
                survivors
                    .iter()
                    .map(|&i| {
                        let body = Body::UnmaskRequest {
                            survivors: survivors.clone(),
                            dropped: self.dropped.clone(),
                        };
                        (i, Message::new(round, SERVER, i, body).encode())
                    })
                    .collect()
            }
            Stage::CollectAttest => {
                self.check_alive(self.attest.len(), "attested the survivor set")?;
                self.stage = Stage::CollectUnmask;
                let mut inbox: BTreeMap<u32, Tags> = BTreeMap::new();
                for (&from, tags) in &self.attest {
                    for &(to, tag) in tags {
                        inbox.entry(to).or_default().push((from, tag));
                    }
                }
                self.attest
                    .keys()
                    .map(|&i| {
                        let body =
                            Body::ForwardedAttestations(inbox.remove(&i).unwrap_or_default());
                        (i, Message::new(round, SERVER, i, body).encode())
                    })
                    .collect()
            }
            Stage::CollectUnmask | Stage::Done => {
                return Err(refuse("call finish() to close the unmask stage"));
            }
        };
        Ok(out)
    }

    /// Closes the unmask stage and returns the survivors' sum. Fails with [`Error::NoRelease`]
    /// (releasing nothing) if fewer than `min_survivors` answered or some secret has fewer than
    /// `threshold` shares or reconstructs inconsistently.
    pub fn finish(&mut self) -> Result<Aggregate> {
        if self.stage != Stage::CollectUnmask {
            return Err(refuse("finish() is only valid after the attestation stage"));
        }
        self.stage = Stage::Done;
        self.check_alive(self.unmask.len(), "answered the unmask request")?;
        let t = self.params.threshold();
        let mut seed_shares: BTreeMap<u32, Vec<Share>> = BTreeMap::new();
        let mut key_shares: BTreeMap<u32, Vec<Share>> = BTreeMap::new();
        for (seeds, keys) in self.unmask.values() {
            for (o, s) in seeds {
                seed_shares.entry(*o).or_default().push(*s);
            }
            for (o, s) in keys {
                key_shares.entry(*o).or_default().push(*s);
            }
        }
        let mut lagrange = LagrangeCache::default();
        let mut sum = vec![0u32; self.params.dim()];
        for (&i, m) in &self.masked {
            for (s, v) in sum.iter_mut().zip(&m.y) {
                *s = s.wrapping_add(*v);
            }
            let shares = seed_shares.get(&i).map(Vec::as_slice).unwrap_or(&[]);
            let seed = lagrange
                .reconstruct(shares, t)
                .ok_or_else(|| Error::NoRelease {
                    reason: format!("the self-mask seed of client {i} cannot be reconstructed"),
                })?;
            if input_tag(&seed, self.params.round(), i, &m.live, &m.y) != m.tag {
                return Err(Error::NoRelease {
                    reason: format!(
                        "the masked input of client {i} fails authentication under its \
                         reconstructed seed (altered in transit, sent under its id by someone \
                         else, or wrong shares of its seed)"
                    ),
                });
            }
            apply_mask(&mut sum, &seed, false);
        }
        for &j in &self.dropped {
            let shares = key_shares.get(&j).map(Vec::as_slice).unwrap_or(&[]);
            let bytes = lagrange
                .reconstruct(shares, t)
                .ok_or_else(|| Error::NoRelease {
                    reason: format!("the mask key of dropped client {j} cannot be reconstructed"),
                })?;
            let sk = StaticSecret::from(bytes);
            if PublicKey::from(&sk).to_bytes() != self.keys[&j].mask_pk {
                return Err(Error::NoRelease {
                    reason: format!("shares of client {j}'s mask key are inconsistent"),
                });
            }
            // Exactly the survivors that masked against j (their `live` names j).
            let neighbours: Vec<(u32, &PeerKey)> = self
                .masked
                .iter()
                .filter(|(_, m)| m.live.binary_search(&j).is_ok())
                .map(|(&i, _)| (i, &self.mask_keys[&i]))
                .collect();
            let seeds = pairwise_keys(Purpose::Mask, &sk, j, &neighbours, self.params.round());
            for (&(i, _), seed) in neighbours.iter().zip(&seeds) {
                // Survivor i added +PRG(s_ij) if i < j and −PRG(s_ij) otherwise: undo it.
                apply_mask(&mut sum, seed, i > j);
            }
        }
        Ok(Aggregate {
            sum,
            survivors: self.masked.keys().copied().collect(),
        })
    }
}

/// Lagrange interpolation at 0 with the basis coefficients cached per set of points (with the
/// complete graph every secret is usually recovered from the same holders).
#[derive(Default)]
struct LagrangeCache {
    cache: HashMap<Vec<u64>, Option<Vec<u64>>>,
}

impl LagrangeCache {
    /// Reconstructs from the `t` shares with the smallest points (deterministic choice).
    fn reconstruct(&mut self, shares: &[Share], t: usize) -> Option<[u8; 32]> {
        if shares.len() < t {
            return None;
        }
        let mut s: Vec<Share> = shares.to_vec();
        s.sort_by_key(|x| x.x);
        s.truncate(t);
        let xs: Vec<u64> = s.iter().map(|x| x.x).collect();
        let coeffs = self
            .cache
            .entry(xs)
            .or_insert_with_key(|xs| lagrange_at_zero(xs));
        combine(coeffs.as_deref()?, &s)
    }
}

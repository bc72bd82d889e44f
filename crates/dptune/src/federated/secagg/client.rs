//! The client side of the protocol (module doc of [`super`]): a state machine that consumes the
//! server's messages as bytes and answers with bytes. Every incoming message is checked for
//! round, stage, sender and recipient, and its content for consistency with what the client
//! already knows; anything else is an error and the client answers nothing.

use std::collections::BTreeMap;

use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

use super::crypto::{
    apply_mask, attest_tag, attest_valid, input_tag, keypair, open, pairwise_keys, seal, PeerKey,
    Purpose,
};
use super::shamir::{split, Share};
use super::wire::{decode_share_pair, encode_share_pair, Body, KeyView, Kind, Message, SERVER};
use super::SecAggParams;
use crate::error::{Error, Result};
use crate::noise::SecureRng;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Fresh,
    KeysSent,
    SharesSent,
    MaskedSent,
    Attested,
    Done,
}

/// Neighbour keys as received (and checked) in stage 1, and the share-transport key derived from
/// them.
struct PeerKeys {
    mask_pk: PeerKey,
    /// `mask_pk` as the server sent it (compared with the neighbour's own, stage 2).
    mask_pk_bytes: [u8; 32],
    enc_pk: PeerKey,
    /// HKDF-SHA256(X25519(enc_sk, enc_pk)) for [`Purpose::Share`], computed once in stage 1 and
    /// reused to open the neighbour's ciphertext in stage 2 and for the attestations of stages 3
    /// and 4 (the key is the same in both directions; the nonce and associated data tell the
    /// directions and purposes apart). Zeroised when the unmask request has been checked, and
    /// on drop.
    share_key: Option<Zeroizing<[u8; 32]>>,
}

/// One client of one aggregation round.
pub struct Client {
    id: u32,
    params: SecAggParams,
    input: Vec<u32>,
    rng: SecureRng,
    stage: Stage,
    mask_sk: StaticSecret,
    mask_pk: PublicKey,
    enc_sk: StaticSecret,
    enc_pk: PublicKey,
    self_seed: Zeroizing<[u8; 32]>,
    peers: BTreeMap<u32, PeerKeys>,
    /// Shares held for each owner (self included): (self-seed share, mask-key share).
    held: BTreeMap<u32, (Share, Share)>,
    /// The survivor set this client attested in stage 3 (sorted), and the status (survivor or
    /// dropped) of every owner in `held`; the unmask stage reveals shares by this status only.
    attested: Option<(Vec<u32>, BTreeMap<u32, bool>)>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print secrets.
        f.debug_struct("Client")
            .field("id", &self.id)
            .field("stage", &self.stage)
            .finish_non_exhaustive()
    }
}

fn protocol(reason: impl Into<String>) -> Error {
    Error::Data {
        location: "secure-aggregation protocol (client)".into(),
        reason: reason.into(),
    }
}

impl Client {
    /// Client `id` (in 0..n) of a round with `params`, holding `input` (length `params.dim()`).
    /// `rng` supplies the keys, seeds and Shamir coefficients: use [`SecureRng::from_os`]
    /// outside tests.
    pub fn new(
        id: usize,
        params: SecAggParams,
        input: Vec<u32>,
        mut rng: SecureRng,
    ) -> Result<Self> {
        if id >= params.clients() {
            return Err(Error::invalid(
                "client id",
                id,
                format!("must be below the number of clients ({})", params.clients()),
            ));
        }
        if input.len() != params.dim() {
            return Err(Error::invalid(
                "input",
                format!("a vector of length {}", input.len()),
                format!("must have length {}", params.dim()),
            ));
        }
        let (mask_sk, mask_pk) = keypair(&mut rng);
        let (enc_sk, enc_pk) = keypair(&mut rng);
        let mut self_seed = Zeroizing::new([0u8; 32]);
        rng.fill_bytes(self_seed.as_mut());
        Ok(Self {
            id: id as u32,
            params,
            input,
            rng,
            stage: Stage::Fresh,
            mask_sk,
            mask_pk,
            enc_sk,
            enc_pk,
            self_seed,
            peers: BTreeMap::new(),
            held: BTreeMap::new(),
            attested: None,
        })
    }

    /// This client's id.
    pub fn id(&self) -> u32 {
        self.id
    }

    fn expect(&self, stage: Stage, bytes: &[u8], kind: Kind) -> Result<Message> {
        if self.stage != stage {
            return Err(protocol(format!(
                "message {kind:?} arrived in stage {:?}",
                self.stage
            )));
        }
        let m = Message::decode(bytes)?;
        let h = m.header;
        if h.kind != kind || h.round != self.params.round() || h.from != SERVER || h.to != self.id {
            return Err(protocol(format!(
                "expected {kind:?} for round {} to client {}, got {:?} for round {} from {} to {}",
                self.params.round(),
                self.id,
                h.kind,
                h.round,
                h.from,
                h.to
            )));
        }
        Ok(m)
    }

    fn send(&self, body: Body) -> Vec<u8> {
        Message::new(self.params.round(), self.id, SERVER, body).encode()
    }

    /// Stage 0: the public keys.
    pub fn advertise_keys(&mut self) -> Result<Vec<u8>> {
        if self.stage != Stage::Fresh {
            return Err(protocol("keys were already advertised"));
        }
        self.stage = Stage::KeysSent;
        Ok(self.send(Body::AdvertiseKeys {
            mask_pk: self.mask_pk.to_bytes(),
            enc_pk: self.enc_pk.to_bytes(),
        }))
    }

    /// Stage 1: receives the neighbours' keys, answers with encrypted shares.
    pub fn share_keys(&mut self, msg: &[u8]) -> Result<Vec<u8>> {
        let m = self.expect(Stage::KeysSent, msg, Kind::Keys)?;
        let Body::Keys(keys) = m.body else {
            return Err(protocol("body does not match kind"));
        };
        let mut saw_self = false;
        let mut peers = BTreeMap::new();
        for k in keys {
            if k.id == self.id {
                if k.mask_pk != self.mask_pk.to_bytes() || k.enc_pk != self.enc_pk.to_bytes() {
                    return Err(protocol("the server altered this client's own keys"));
                }
                saw_self = true;
            } else if !self.params.are_neighbours(self.id, k.id) {
                return Err(protocol(format!("client {} is not a neighbour", k.id)));
            } else {
                let (Some(mask_pk), Some(enc_pk)) =
                    (PeerKey::parse(&k.mask_pk), PeerKey::parse(&k.enc_pk))
                else {
                    return Err(protocol(format!(
                        "client {} sent a key that is not a canonical point of large order \
                         on Curve25519",
                        k.id
                    )));
                };
                if mask_pk.same_as(&enc_pk) {
                    return Err(protocol(format!("client {} reuses one key twice", k.id)));
                }
                let keys = PeerKeys {
                    mask_pk,
                    mask_pk_bytes: k.mask_pk,
                    enc_pk,
                    share_key: None,
                };
                if peers.insert(k.id, keys).is_some() {
                    return Err(protocol(format!("client {} listed twice", k.id)));
                }
            }
        }
        if !saw_self {
            return Err(protocol("this client's keys are missing"));
        }
        if peers.len() + 1 < self.params.threshold() {
            return Err(Error::NoRelease {
                reason: format!(
                    "only {} live neighbours; the threshold {} cannot be met",
                    peers.len(),
                    self.params.threshold()
                ),
            });
        }
        // Holder 0 is this client, then the peers in increasing id order.
        let holders: Vec<u32> = std::iter::once(self.id)
            .chain(peers.keys().copied())
            .collect();
        let xs: Vec<u64> = holders.iter().map(|&h| h as u64 + 1).collect();
        let t = self.params.threshold();
        let mut seed_shares = split(&self.self_seed, t, &xs, &mut self.rng).into_iter();
        let mut key_shares = split(&self.mask_sk.to_bytes(), t, &xs, &mut self.rng).into_iter();
        let own = seed_shares.next().zip(key_shares.next());
        self.held
            .insert(self.id, own.expect("split returns one share per holder"));
        let enc_pks: Vec<(u32, &PeerKey)> = peers.iter().map(|(&j, p)| (j, &p.enc_pk)).collect();
        let round = self.params.round();
        let keys = pairwise_keys(Purpose::Share, &self.enc_sk, self.id, &enc_pks, round);
        let mut out = Vec::with_capacity(peers.len());
        for ((((&h, peer), s), k), key) in
            peers.iter_mut().zip(seed_shares).zip(key_shares).zip(keys)
        {
            let view = KeyView {
                owner_mask_pk: self.mask_pk.to_bytes(),
                holder_mask_pk: peer.mask_pk_bytes,
            };
            let plain = Zeroizing::new(encode_share_pair(self.id, h, &view, &s, &k));
            out.push((h, seal(&key, round, self.id, h, &plain)));
            peer.share_key = Some(key);
        }
        self.peers = peers;
        self.stage = Stage::SharesSent;
        Ok(self.send(Body::EncryptedShares(out)))
    }

    /// Stage 2: receives the shares addressed to this client, answers with the masked input.
    pub fn masked_input(&mut self, msg: &[u8]) -> Result<Vec<u8>> {
        let m = self.expect(Stage::SharesSent, msg, Kind::ForwardedShares)?;
        let Body::ForwardedShares(cts) = m.body else {
            return Err(protocol("body does not match kind"));
        };
        let mut live = Vec::with_capacity(cts.len());
        for (from, ct) in cts {
            let Some(peer) = self.peers.get(&from) else {
                return Err(protocol(format!("share from non-neighbour {from}")));
            };
            if self.held.contains_key(&from) {
                return Err(protocol(format!("two shares from {from}")));
            }
            let Some(key) = peer.share_key.as_ref() else {
                return Err(protocol(format!("no share key for neighbour {from}")));
            };
            let plain = open(key, self.params.round(), from, self.id, &ct)
                .ok_or_else(|| protocol(format!("share from {from} fails authentication")))?;
            let (view, seed, key) = decode_share_pair(&plain, from, self.id)?;
            if view.owner_mask_pk != peer.mask_pk_bytes
                || view.holder_mask_pk != self.mask_pk.to_bytes()
            {
                return Err(protocol(format!(
                    "inconsistent views: client {from} and this client were shown different \
                     mask keys for each other"
                )));
            }
            self.held.insert(from, (seed, key));
            live.push(from);
        }
        if live.len() + 1 < self.params.threshold() {
            return Err(Error::NoRelease {
                reason: "too few neighbours completed the share stage".into(),
            });
        }
        let mut y = self.input.clone();
        apply_mask(&mut y, &self.self_seed, true);
        let mask_pks: Vec<(u32, &PeerKey)> =
            live.iter().map(|&j| (j, &self.peers[&j].mask_pk)).collect();
        let seeds = pairwise_keys(
            Purpose::Mask,
            &self.mask_sk,
            self.id,
            &mask_pks,
            self.params.round(),
        );
        for (&(j, _), seed) in mask_pks.iter().zip(&seeds) {
            apply_mask(&mut y, seed, self.id < j);
        }
        live.sort_unstable();
        let tag = input_tag(&self.self_seed, self.params.round(), self.id, &live, &y);
        self.stage = Stage::MaskedSent;
        Ok(self.send(Body::MaskedInput { y, live, tag }))
    }

    /// Stage 3 (consistency): receives who survived and who dropped, checks it against what this
    /// client knows, and attests the survivor set to each fellow survivor (a tag under the pair's
    /// share key). It attests only a set that contains itself, has at least `min_survivors`
    /// members, and whose other members are all neighbours it masked against (so every attester
    /// masks against all the others). A client attests at most one set per round.
    pub fn attest(&mut self, msg: &[u8]) -> Result<Vec<u8>> {
        let m = self.expect(Stage::MaskedSent, msg, Kind::UnmaskRequest)?;
        // Whatever happens next, this client will not attest another set.
        self.stage = Stage::Attested;
        let Body::UnmaskRequest {
            mut survivors,
            dropped,
        } = m.body
        else {
            return Err(protocol("body does not match kind"));
        };
        let mut status: BTreeMap<u32, bool> = BTreeMap::new();
        for &s in &survivors {
            if status.insert(s, true).is_some() {
                return Err(protocol(format!("client {s} listed twice")));
            }
        }
        for &d in &dropped {
            if status.insert(d, false).is_some() {
                return Err(protocol(format!(
                    "client {d} listed as survivor and dropped"
                )));
            }
        }
        if survivors.len() < self.params.min_survivors() {
            return Err(Error::NoRelease {
                reason: format!(
                    "{} survivors, fewer than the minimum {}",
                    survivors.len(),
                    self.params.min_survivors()
                ),
            });
        }
        if status.get(&self.id) != Some(&true) {
            return Err(protocol(
                "this client sent its masked input but is not listed",
            ));
        }
        // Every neighbour that sent shares must be classified, and only those: in particular
        // every other survivor is a neighbour this client masked against.
        for (&j, &alive) in &status {
            if j != self.id && self.params.are_neighbours(self.id, j) && !self.held.contains_key(&j)
            {
                return Err(protocol(format!(
                    "client {j} listed as {} but sent no share here",
                    if alive { "survivor" } else { "dropped" }
                )));
            }
        }
        if let Some(owner) = self.held.keys().find(|o| !status.contains_key(o)) {
            return Err(protocol(format!("neighbour {owner} is not classified")));
        }
        let fellows: Vec<u32> = survivors
            .iter()
            .copied()
            .filter(|&s| s != self.id && self.held.contains_key(&s))
            .collect();
        if fellows.len() + 1 < self.params.threshold() {
            return Err(Error::NoRelease {
                reason: format!(
                    "{} surviving neighbours, fewer than the threshold {} needs",
                    fellows.len(),
                    self.params.threshold()
                ),
            });
        }
        // The set is attested in canonical order (the order of the lists carries nothing).
        survivors.sort_unstable();
        let round = self.params.round();
        let mut tags = Vec::with_capacity(fellows.len());
        for &j in &fellows {
            let key = self.peers[&j]
                .share_key
                .as_ref()
                .ok_or_else(|| protocol(format!("no share key for neighbour {j}")))?;
            tags.push((j, attest_tag(key, round, self.id, j, &survivors)));
        }
        self.attested = Some((survivors, status));
        Ok(self.send(Body::Attestations(tags)))
    }

    /// Stage 4 (unmask): receives the fellow survivors' attestations; if at least `threshold`
    /// members of its neighbourhood (itself included) attested the same survivor set as this
    /// client, reveals for each neighbour either the self-seed share (survivor) or the mask-key
    /// share (dropped), never both; otherwise refuses. A client answers at most one unmask
    /// request per round.
    pub fn unmask(&mut self, msg: &[u8]) -> Result<Vec<u8>> {
        let m = self.expect(Stage::Attested, msg, Kind::ForwardedAttestations)?;
        // Whatever happens next, this client will not answer another unmask request.
        self.stage = Stage::Done;
        let Body::ForwardedAttestations(tags) = m.body else {
            return Err(protocol("body does not match kind"));
        };
        let (survivors, status) = self
            .attested
            .take()
            .ok_or_else(|| protocol("no survivor set was attested"))?;
        let round = self.params.round();
        let mut agreed = std::collections::BTreeSet::new();
        for (from, tag) in &tags {
            if status.get(from) != Some(&true) || *from == self.id {
                continue;
            }
            let Some(key) = self.peers.get(from).and_then(|p| p.share_key.as_ref()) else {
                continue;
            };
            if attest_valid(key, round, *from, self.id, &survivors, tag) {
                agreed.insert(*from);
            }
        }
        // The share keys are not needed any more.
        for peer in self.peers.values_mut() {
            peer.share_key = None;
        }
        if agreed.len() + 1 < self.params.threshold() {
            return Err(Error::NoRelease {
                reason: format!(
                    "{} fellow survivors attested the survivor set, fewer than the threshold {} \
                     needs",
                    agreed.len(),
                    self.params.threshold() - 1
                ),
            });
        }
        let mut seed_shares = Vec::new();
        let mut key_shares = Vec::new();
        for (&owner, (s, k)) in &self.held {
            if status[&owner] {
                seed_shares.push((owner, *s));
            } else {
                key_shares.push((owner, *k));
            }
        }
        Ok(self.send(Body::UnmaskShares {
            seed_shares,
            key_shares,
        }))
    }
}

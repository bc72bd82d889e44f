//! The protocol messages and their binary encoding.
//!
//! Every message starts with a header: magic `DSA1`, a kind byte, the round id (u64), the sender
//! and the recipient (u32; [`SERVER`] for the server). Receivers check all of them, so a message
//! replayed from another round, another stage, or another sender is rejected before its body is
//! looked at. Decoding is total: any byte string yields a message or an [`Error::Data`], never a
//! panic, and length prefixes are checked against the bytes actually present before anything is
//! allocated.

use super::shamir::{Share, LIMBS};
use crate::error::{Error, Result};

/// The sender/recipient id of the server.
pub const SERVER: u32 = u32::MAX;
const MAGIC: &[u8; 4] = b"DSA1";

/// Message kinds, in protocol order (except the consistency stage's 8 and 9, which come between
/// 6 and 7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// Client → server: public keys.
    AdvertiseKeys = 1,
    /// Server → client: the public keys of the client's live neighbours.
    Keys = 2,
    /// Client → server: encrypted shares for its neighbours.
    EncryptedShares = 3,
    /// Server → client: the encrypted shares addressed to it.
    ForwardedShares = 4,
    /// Client → server: the masked input vector.
    MaskedInput = 5,
    /// Server → client: who survived and who dropped (the survivor set to attest).
    UnmaskRequest = 6,
    /// Client → server: shares of survivors' self-mask seeds and of dropped clients' keys.
    UnmaskShares = 7,
    /// Client → server: its attestation of the survivor set, one tag per fellow survivor.
    Attestations = 8,
    /// Server → client: the attestations addressed to it.
    ForwardedAttestations = 9,
}

impl Kind {
    fn from_byte(b: u8) -> Result<Kind> {
        Ok(match b {
            1 => Kind::AdvertiseKeys,
            2 => Kind::Keys,
            3 => Kind::EncryptedShares,
            4 => Kind::ForwardedShares,
            5 => Kind::MaskedInput,
            6 => Kind::UnmaskRequest,
            7 => Kind::UnmaskShares,
            8 => Kind::Attestations,
            9 => Kind::ForwardedAttestations,
            _ => return Err(malformed(format!("unknown message kind {b}"))),
        })
    }
}

/// Header fields common to all messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Message kind.
    pub kind: Kind,
    /// Round id (public, fresh per aggregation).
    pub round: u64,
    /// Sender id.
    pub from: u32,
    /// Recipient id.
    pub to: u32,
}

/// Public keys of one client: for pairwise masks and for share encryption.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKeys {
    /// The client.
    pub id: u32,
    /// X25519 public key for pairwise mask agreement.
    pub mask_pk: [u8; 32],
    /// X25519 public key for share encryption.
    pub enc_pk: [u8; 32],
}

/// A message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body {
    /// See [`Kind::AdvertiseKeys`].
    AdvertiseKeys {
        /// Mask key.
        mask_pk: [u8; 32],
        /// Encryption key.
        enc_pk: [u8; 32],
    },
    /// See [`Kind::Keys`].
    Keys(Vec<PublicKeys>),
    /// See [`Kind::EncryptedShares`]: (recipient, ciphertext).
    EncryptedShares(Vec<(u32, Vec<u8>)>),
    /// See [`Kind::ForwardedShares`]: (sender, ciphertext).
    ForwardedShares(Vec<(u32, Vec<u8>)>),
    /// See [`Kind::MaskedInput`].
    MaskedInput {
        /// y_i = x_i + masks (mod 2^32).
        y: Vec<u32>,
        /// The neighbours whose pairwise masks are in `y` (those whose shares reached the
        /// sender), in increasing order: the server cancels exactly these.
        live: Vec<u32>,
        /// Poly1305 tag over (round, sender, `live`, `y`) under a key derived from the sender's
        /// self-mask seed (`crypto::input_tag`); the server checks it once it has reconstructed
        /// the seed, so a masked input altered in transit or sent under another client's id is
        /// refused instead of summed.
        tag: [u8; TAG_LEN],
    },
    /// See [`Kind::UnmaskRequest`].
    UnmaskRequest {
        /// Clients whose masked input arrived (their self-mask seeds are to be revealed).
        survivors: Vec<u32>,
        /// Clients that sent shares but no masked input (their mask keys are to be revealed).
        dropped: Vec<u32>,
    },
    /// See [`Kind::Attestations`]: (recipient, tag) pairs, the tag authenticating (round,
    /// sender, recipient, survivors) under the pair's share key (`crypto::attest_tag`).
    Attestations(Vec<(u32, [u8; TAG_LEN])>),
    /// See [`Kind::ForwardedAttestations`]: (sender, tag) pairs.
    ForwardedAttestations(Vec<(u32, [u8; TAG_LEN])>),
    /// See [`Kind::UnmaskShares`]: (owner, share) pairs.
    UnmaskShares {
        /// Shares of survivors' self-mask seeds.
        seed_shares: Vec<(u32, Share)>,
        /// Shares of dropped clients' mask secret keys.
        key_shares: Vec<(u32, Share)>,
    },
}

impl Body {
    fn kind(&self) -> Kind {
        match self {
            Body::AdvertiseKeys { .. } => Kind::AdvertiseKeys,
            Body::Keys(_) => Kind::Keys,
            Body::EncryptedShares(_) => Kind::EncryptedShares,
            Body::ForwardedShares(_) => Kind::ForwardedShares,
            Body::MaskedInput { .. } => Kind::MaskedInput,
            Body::UnmaskRequest { .. } => Kind::UnmaskRequest,
            Body::UnmaskShares { .. } => Kind::UnmaskShares,
            Body::Attestations(_) => Kind::Attestations,
            Body::ForwardedAttestations(_) => Kind::ForwardedAttestations,
        }
    }
}

/// A whole message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// Header.
    pub header: Header,
    /// Body (its kind is the header's).
    pub body: Body,
}

fn malformed(reason: impl Into<String>) -> Error {
    Error::Data {
        location: "secure-aggregation message".into(),
        reason: reason.into(),
    }
}

/// Length of the masked-input tag (a Poly1305 tag).
pub const TAG_LEN: usize = 16;

/// The plaintext of one encrypted share: owner, holder, the owner's mask public key, the
/// holder's mask public key as the owner received it, and the two shares.
pub(crate) const SHARE_PLAINTEXT_LEN: usize = 8 + 64 + 2 * 8 * LIMBS;

/// The mask public keys a share plaintext carries: the owner's own, and the holder's as the
/// server showed it to the owner. The holder compares both with its own view, so a server that
/// shows two clients different mask keys for each other (their pairwise masks would then not
/// cancel) is caught before either sends a masked input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct KeyView {
    pub owner_mask_pk: [u8; 32],
    pub holder_mask_pk: [u8; 32],
}

pub(crate) fn encode_share_pair(
    owner: u32,
    holder: u32,
    view: &KeyView,
    seed: &Share,
    key: &Share,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(SHARE_PLAINTEXT_LEN);
    out.extend_from_slice(&owner.to_le_bytes());
    out.extend_from_slice(&holder.to_le_bytes());
    out.extend_from_slice(&view.owner_mask_pk);
    out.extend_from_slice(&view.holder_mask_pk);
    for v in seed.y.iter().chain(key.y.iter()) {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// Decodes a share plaintext; the owner/holder it names must be the expected ones.
pub(crate) fn decode_share_pair(
    bytes: &[u8],
    owner: u32,
    holder: u32,
) -> Result<(KeyView, Share, Share)> {
    let mut r = Reader { b: bytes, pos: 0 };
    if r.u32()? != owner || r.u32()? != holder {
        return Err(malformed("share names the wrong owner or holder"));
    }
    let view = KeyView {
        owner_mask_pk: r.key()?,
        holder_mask_pk: r.key()?,
    };
    let x = holder as u64 + 1;
    let mut seed = Share { x, y: [0; LIMBS] };
    let mut key = Share { x, y: [0; LIMBS] };
    for v in seed.y.iter_mut().chain(key.y.iter_mut()) {
        *v = r.u64()?;
    }
    r.end()?;
    Ok((view, seed, key))
}

struct Writer(Vec<u8>);

impl Writer {
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes());
    }
    fn len(&mut self, n: usize) {
        // Lengths are bounded by the roster size or the vector dimension, both validated to fit
        // in u32 by `SecAggParams`.
        self.u32(n as u32);
    }
    fn bytes(&mut self, b: &[u8]) {
        self.len(b.len());
        self.0.extend_from_slice(b);
    }
    fn ids(&mut self, ids: &[u32]) {
        self.len(ids.len());
        for &i in ids {
            self.u32(i);
        }
    }
    fn tags(&mut self, v: &[(u32, [u8; TAG_LEN])]) {
        self.len(v.len());
        for (id, tag) in v {
            self.u32(*id);
            self.0.extend_from_slice(tag);
        }
    }
    fn shares(&mut self, s: &[(u32, Share)]) {
        self.len(s.len());
        for (owner, sh) in s {
            self.u32(*owner);
            self.u64(sh.x);
            for &v in &sh.y {
                self.u64(v);
            }
        }
    }
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.b.len() - self.pos < n {
            return Err(malformed("truncated"));
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Result<u64> {
        let mut w = [0u8; 8];
        w.copy_from_slice(self.take(8)?);
        Ok(u64::from_le_bytes(w))
    }
    fn key(&mut self) -> Result<[u8; 32]> {
        let mut k = [0u8; 32];
        k.copy_from_slice(self.take(32)?);
        Ok(k)
    }
    /// A length prefix for items of at least `item_bytes` bytes each, checked against what is
    /// left so that a forged length cannot trigger a huge allocation.
    fn len(&mut self, item_bytes: usize) -> Result<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(item_bytes) > self.b.len() - self.pos {
            return Err(malformed(format!("length {n} exceeds the message")));
        }
        Ok(n)
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let n = self.len(1)?;
        Ok(self.take(n)?.to_vec())
    }
    fn ids(&mut self) -> Result<Vec<u32>> {
        let n = self.len(4)?;
        (0..n).map(|_| self.u32()).collect()
    }
    fn tag(&mut self) -> Result<[u8; TAG_LEN]> {
        let mut tag = [0u8; TAG_LEN];
        tag.copy_from_slice(self.take(TAG_LEN)?);
        Ok(tag)
    }
    fn tags(&mut self) -> Result<Vec<(u32, [u8; TAG_LEN])>> {
        let n = self.len(4 + TAG_LEN)?;
        (0..n).map(|_| Ok((self.u32()?, self.tag()?))).collect()
    }
    fn shares(&mut self) -> Result<Vec<(u32, Share)>> {
        let n = self.len(12 + 8 * LIMBS)?;
        (0..n)
            .map(|_| {
                let owner = self.u32()?;
                let x = self.u64()?;
                let mut y = [0u64; LIMBS];
                for v in y.iter_mut() {
                    *v = self.u64()?;
                }
                Ok((owner, Share { x, y }))
            })
            .collect()
    }
    fn end(&self) -> Result<()> {
        if self.pos == self.b.len() {
            Ok(())
        } else {
            Err(malformed("trailing bytes"))
        }
    }
}

impl Message {
    /// A message from `from` to `to` in `round`.
    pub fn new(round: u64, from: u32, to: u32, body: Body) -> Self {
        Message {
            header: Header {
                kind: body.kind(),
                round,
                from,
                to,
            },
            body,
        }
    }

    /// The wire encoding.
    pub fn encode(&self) -> Vec<u8> {
        let mut w = Writer(Vec::with_capacity(64));
        w.0.extend_from_slice(MAGIC);
        w.0.push(self.header.kind as u8);
        w.u64(self.header.round);
        w.u32(self.header.from);
        w.u32(self.header.to);
        match &self.body {
            Body::AdvertiseKeys { mask_pk, enc_pk } => {
                w.0.extend_from_slice(mask_pk);
                w.0.extend_from_slice(enc_pk);
            }
            Body::Keys(keys) => {
                w.len(keys.len());
                for k in keys {
                    w.u32(k.id);
                    w.0.extend_from_slice(&k.mask_pk);
                    w.0.extend_from_slice(&k.enc_pk);
                }
            }
            Body::EncryptedShares(v) | Body::ForwardedShares(v) => {
                w.len(v.len());
                for (id, ct) in v {
                    w.u32(*id);
                    w.bytes(ct);
                }
            }
            Body::MaskedInput { y, live, tag } => {
                w.len(y.len());
                for &v in y {
                    w.u32(v);
                }
                w.ids(live);
                w.0.extend_from_slice(tag);
            }
            Body::UnmaskRequest { survivors, dropped } => {
                w.ids(survivors);
                w.ids(dropped);
            }
            Body::UnmaskShares {
                seed_shares,
                key_shares,
            } => {
                w.shares(seed_shares);
                w.shares(key_shares);
            }
            Body::Attestations(v) | Body::ForwardedAttestations(v) => w.tags(v),
        }
        w.0
    }

    /// Decodes a message; never panics, whatever the bytes.
    pub fn decode(bytes: &[u8]) -> Result<Message> {
        let mut r = Reader { b: bytes, pos: 0 };
        if r.take(4)? != MAGIC {
            return Err(malformed("bad magic"));
        }
        let kind = Kind::from_byte(r.u8()?)?;
        let header = Header {
            kind,
            round: r.u64()?,
            from: r.u32()?,
            to: r.u32()?,
        };
        let body = match kind {
            Kind::AdvertiseKeys => Body::AdvertiseKeys {
                mask_pk: r.key()?,
                enc_pk: r.key()?,
            },
            Kind::Keys => {
                let n = r.len(68)?;
                Body::Keys(
                    (0..n)
                        .map(|_| {
                            Ok(PublicKeys {
                                id: r.u32()?,
                                mask_pk: r.key()?,
                                enc_pk: r.key()?,
                            })
                        })
                        .collect::<Result<_>>()?,
                )
            }
            Kind::EncryptedShares | Kind::ForwardedShares => {
                let n = r.len(8)?;
                let v = (0..n)
                    .map(|_| Ok((r.u32()?, r.bytes()?)))
                    .collect::<Result<Vec<_>>>()?;
                if kind == Kind::EncryptedShares {
                    Body::EncryptedShares(v)
                } else {
                    Body::ForwardedShares(v)
                }
            }
            Kind::MaskedInput => {
                let n = r.len(4)?;
                let y = (0..n).map(|_| r.u32()).collect::<Result<_>>()?;
                let live = r.ids()?;
                let tag = r.tag()?;
                Body::MaskedInput { y, live, tag }
            }
            Kind::UnmaskRequest => Body::UnmaskRequest {
                survivors: r.ids()?,
                dropped: r.ids()?,
            },
            Kind::UnmaskShares => Body::UnmaskShares {
                seed_shares: r.shares()?,
                key_shares: r.shares()?,
            },
            Kind::Attestations => Body::Attestations(r.tags()?),
            Kind::ForwardedAttestations => Body::ForwardedAttestations(r.tags()?),
        };
        r.end()?;
        Ok(Message { header, body })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::SecureRng;

    fn samples() -> Vec<Message> {
        let share = Share {
            x: 3,
            y: [1, 2, 3, 4, 5],
        };
        vec![
            Message::new(
                9,
                1,
                SERVER,
                Body::AdvertiseKeys {
                    mask_pk: [1; 32],
                    enc_pk: [2; 32],
                },
            ),
            Message::new(
                9,
                SERVER,
                1,
                Body::Keys(vec![PublicKeys {
                    id: 4,
                    mask_pk: [3; 32],
                    enc_pk: [4; 32],
                }]),
            ),
            Message::new(9, 1, SERVER, Body::EncryptedShares(vec![(2, vec![7; 10])])),
            Message::new(9, SERVER, 1, Body::ForwardedShares(vec![(2, vec![])])),
            Message::new(
                9,
                1,
                SERVER,
                Body::MaskedInput {
                    y: vec![1, u32::MAX],
                    live: vec![0, 2],
                    tag: [5; TAG_LEN],
                },
            ),
            Message::new(
                9,
                SERVER,
                1,
                Body::UnmaskRequest {
                    survivors: vec![1, 2],
                    dropped: vec![3],
                },
            ),
            Message::new(
                9,
                1,
                SERVER,
                Body::UnmaskShares {
                    seed_shares: vec![(2, share)],
                    key_shares: vec![],
                },
            ),
            Message::new(9, 1, SERVER, Body::Attestations(vec![(2, [6; TAG_LEN])])),
            Message::new(
                9,
                SERVER,
                1,
                Body::ForwardedAttestations(vec![(2, [7; TAG_LEN]), (3, [8; TAG_LEN])]),
            ),
        ]
    }

    #[test]
    fn round_trip() {
        for m in samples() {
            assert_eq!(Message::decode(&m.encode()).unwrap(), m);
        }
    }

    #[test]
    fn garbage_truncation_and_bit_flips_never_panic() {
        let mut rng = SecureRng::seeded(3);
        for m in samples() {
            let bytes = m.encode();
            for cut in 0..bytes.len() {
                assert!(Message::decode(&bytes[..cut]).is_err());
            }
            for _ in 0..200 {
                let mut b = bytes.clone();
                let i = rng.below_u64(b.len() as u64) as usize;
                b[i] ^= 1 << rng.below_u64(8);
                let _ = Message::decode(&b);
            }
        }
        for len in 0..300 {
            let mut b = vec![0u8; len];
            rng.fill_bytes(&mut b);
            if len >= 5 {
                b[..4].copy_from_slice(MAGIC);
                b[4] = 1 + rng.below_u64(9) as u8;
            }
            let _ = Message::decode(&b);
        }
        // A forged huge length is refused without allocating.
        let mut b = samples()[4].encode();
        b[21..25].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Message::decode(&b).is_err());
    }
}

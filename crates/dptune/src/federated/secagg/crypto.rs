//! Cryptographic building blocks of the secure aggregation protocol, all from well-kept crates:
//! X25519 key agreement (RFC 7748; key pairs from `x25519-dalek`, the agreement itself on
//! `curve25519-dalek`'s Edwards form, see [`PeerKey`]), HKDF-SHA256 key derivation with domain
//! separation (`hkdf` + `sha2`), ChaCha20 as the mask PRG (`chacha20`), ChaCha20-Poly1305 for the
//! share transport (`chacha20poly1305`). The protocol built on them is in [`super::client`] and
//! [`super::server`].

use std::cmp::Ordering;

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha20;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{ChaCha20Poly1305, Nonce};
use curve25519_dalek::edwards::EdwardsPoint;
use curve25519_dalek::montgomery::MontgomeryPoint;
use hkdf::Hkdf;
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::{Zeroize, Zeroizing};

use super::wire::TAG_LEN;
use crate::noise::SecureRng;

/// What a pairwise key is for. Each purpose has its own HKDF domain-separation label, so a
/// pairwise mask seed and a share-encryption key derived from the same kind of secret can never
/// coincide.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Purpose {
    /// The pairwise mask seed s_ij = s_ji.
    Mask,
    /// The AEAD key for share transport.
    Share,
}

impl Purpose {
    fn label(self) -> &'static [u8] {
        match self {
            Purpose::Mask => b"dptune/secagg/v1/pairwise-mask",
            Purpose::Share => b"dptune/secagg/v1/share-key",
        }
    }
}

/// A fresh X25519 key pair (secret from `rng`, 32 bytes).
pub(crate) fn keypair(rng: &mut SecureRng) -> (StaticSecret, PublicKey) {
    let mut bytes = Zeroizing::new([0u8; 32]);
    rng.fill_bytes(bytes.as_mut());
    let sk = StaticSecret::from(*bytes);
    let pk = PublicKey::from(&sk);
    (sk, pk)
}

/// p = 2^255 − 19 in little-endian bytes.
const FIELD_PRIME_LE: [u8; 32] = {
    let mut p = [0xff; 32];
    p[0] = 0xed;
    p[31] = 0x7f;
    p
};

/// Another client's X25519 public key (an RFC 7748 u-coordinate), checked once and kept as a
/// point of curve25519-dalek's twisted Edwards form.
///
/// **Why Edwards.** `x25519_dalek`'s `diffie_hellman` runs curve25519-dalek's Montgomery ladder,
/// which has only a portable serial implementation. `EdwardsPoint` variable-base multiplication
/// dispatches at run time to curve25519-dalek's AVX2 backend on x86_64 (its `backend` module;
/// serial elsewhere) and is about a quarter cheaper including both conversions
/// (docs/PERFORMANCE.md, "Secure aggregation"). The result is the same: the birational map sends
/// [k]P to the point with u-coordinate X25519(k, u(P)), for either sign chosen in
/// [`MontgomeryPoint::to_edwards`] because u([k](−P)) = u(−[k]P) = u([k]P). Tests check bit-for-bit
/// equality with `x25519-dalek` and the RFC 7748 §5.2 / §6.1 vectors.
///
/// **What is refused.** RFC 7748 §5 asks a general-purpose X25519 to accept any 32 bytes. Every
/// honest client sends the canonical encoding of a point of large order on the curve, so anything
/// else is an attack or a bug and is refused here (the caller turns it into a typed error):
/// * non-canonical encodings (u ≥ p or bit 255 set): otherwise one key has several encodings,
///   which would defeat the check that a client's two keys differ;
/// * points on the quadratic twist (`to_edwards` returns `None` exactly for those);
/// * points of small order (the 8-torsion): X25519 with them is all-zero (or, on the twist, from a
///   small set) whatever the secret, so the "shared" secret would be public. For an accepted key
///   the result is never all-zero: a clamped scalar is k = 8k′ with 2^251 ≤ k′ < 2^252 < ℓ, so
///   [k]P = [k′]([8]P) with [8]P ≠ 0 of order ℓ, and ℓ ∤ k′.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PeerKey(EdwardsPoint);

impl PeerKey {
    /// The checked key, or `None` if `u` is refused (see the type's doc).
    pub(crate) fn parse(u: &[u8; 32]) -> Option<Self> {
        // Little-endian comparison with p, most significant byte first.
        if u.iter().rev().cmp(FIELD_PRIME_LE.iter().rev()) != Ordering::Less {
            return None;
        }
        let point = MontgomeryPoint(*u).to_edwards(0)?;
        (!point.is_small_order()).then_some(Self(point))
    }

    /// Whether the two keys agree on the same secret with every private key: X25519 clamps the
    /// scalar to a multiple of 8 and keeps only the u-coordinate, so P, −P and P + T for T in the
    /// 8-torsion are one key, i.e. keys are equal iff [8]P = ±[8]Q.
    pub(crate) fn same_as(&self, other: &PeerKey) -> bool {
        let (p, q) = (self.0.mul_by_cofactor(), other.0.mul_by_cofactor());
        p == q || p == -q
    }
}

/// X25519(sk, P) (RFC 7748 §5) with every key P of `peers`, in order: the u-coordinates of
/// [clamp(sk)]P. `mul_clamped` applies X25519's clamping (curve25519-dalek docs: it multiplies by
/// `clamp_integer(bytes)`) in constant time in the scalar; `to_montgomery_batch` turns all the
/// products into u-coordinates with one field inversion (Montgomery's trick, constant-time
/// selects) instead of one each. The only branches depend on public keys, in [`PeerKey::parse`].
/// The Edwards products and the u-coordinates are zeroised; the batch inversion's scratch
/// (denominators of the projective products, not enough to give u) is freed inside
/// curve25519-dalek without zeroising, as the ladder's projective points are in x25519-dalek.
fn x25519_batch<'a>(
    sk: &StaticSecret,
    peers: impl IntoIterator<Item = &'a PeerKey>,
) -> Zeroizing<Vec<MontgomeryPoint>> {
    let sk_bytes = Zeroizing::new(sk.to_bytes());
    let mut points: Vec<EdwardsPoint> = peers
        .into_iter()
        .map(|p| p.0.mul_clamped(*sk_bytes))
        .collect();
    let shared = Zeroizing::new(EdwardsPoint::to_montgomery_batch(&points));
    points.zeroize();
    shared
}

/// The keys of client `me` with each client j of `peers` (id and key), for `purpose` in
/// `round`, in order: HKDF-SHA256(ikm = X25519(sk, pk_j), salt = round id) expanded with
/// `label || lo || hi`, where (lo, hi) are the two client ids in increasing order (both ends
/// derive the same key).
pub(crate) fn pairwise_keys(
    purpose: Purpose,
    sk: &StaticSecret,
    me: u32,
    peers: &[(u32, &PeerKey)],
    round: u64,
) -> Vec<Zeroizing<[u8; 32]>> {
    let shared = x25519_batch(sk, peers.iter().map(|&(_, pk)| pk));
    let label = purpose.label();
    peers
        .iter()
        .zip(shared.iter())
        .map(|(&(j, _), u)| {
            let hk = Hkdf::<Sha256>::new(Some(&round.to_le_bytes()), u.as_bytes());
            let (lo, hi) = if me < j { (me, j) } else { (j, me) };
            let mut info = Vec::with_capacity(label.len() + 8);
            info.extend_from_slice(label);
            info.extend_from_slice(&lo.to_le_bytes());
            info.extend_from_slice(&hi.to_le_bytes());
            let mut out = Zeroizing::new([0u8; 32]);
            // 32 bytes is far below HKDF-SHA256's 8160-byte limit, so expansion cannot fail.
            hk.expand(&info, out.as_mut())
                .expect("32-byte HKDF-SHA256 output is always valid");
            out
        })
        .collect()
}

/// Adds `sign ×` the ChaCha20 keystream of `seed` (zero nonce, read as little-endian u32 words)
/// to `acc` modulo 2^32. Every seed keys exactly one stream (seeds are fresh per round and per
/// pair), so a fixed nonce is safe. Words of a ChaCha20 keystream are uniform on [0, 2^32),
/// hence the masks are uniform in ℤ_{2^32} without any reduction bias.
pub(crate) fn apply_mask(acc: &mut [u32], seed: &[u8; 32], add: bool) {
    let mut cipher = ChaCha20::new(seed.into(), &[0u8; 12].into());
    let mut buf = vec![0u8; acc.len() * 4];
    cipher.apply_keystream(&mut buf);
    for (a, w) in acc.iter_mut().zip(buf.chunks_exact(4)) {
        let m = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
        *a = if add {
            a.wrapping_add(m)
        } else {
            a.wrapping_sub(m)
        };
    }
}

/// The tag of client `from`'s masked input in `round`: ChaCha20-Poly1305 over an empty
/// plaintext with (round, from, `live`, `y`) as associated data, i.e. a Poly1305 one-time MAC,
/// under HKDF-SHA256(ikm = self-mask seed b, salt = round id, info = label || from). The key is
/// used once (b is fresh per client and round; a client sends one masked input per round) and
/// is independent of the mask stream PRG(b), which ChaCha20 draws from b itself. Only the
/// sender knows b until the unmask stage, when the server reconstructs it and checks the tag: a
/// masked input altered on the way, forged under another client's id, or unmasked with a wrong
/// reconstruction of b fails the check (forgery probability ≤ 2^−100 per attempt for inputs of
/// up to 2^24 words, RFC 8439 §4).
pub(crate) fn input_tag(
    seed: &[u8; 32],
    round: u64,
    from: u32,
    live: &[u32],
    y: &[u32],
) -> [u8; TAG_LEN] {
    let hk = Hkdf::<Sha256>::new(Some(&round.to_le_bytes()), seed);
    let mut info = b"dptune/secagg/v1/input-tag".to_vec();
    info.extend_from_slice(&from.to_le_bytes());
    let mut key = Zeroizing::new([0u8; 32]);
    hk.expand(&info, key.as_mut())
        .expect("32-byte HKDF-SHA256 output is always valid");
    let mut ad = Vec::with_capacity(16 + 4 * (live.len() + y.len()));
    ad.extend_from_slice(&round.to_le_bytes());
    ad.extend_from_slice(&from.to_le_bytes());
    ad.extend_from_slice(&(live.len() as u32).to_le_bytes());
    for w in live.iter().chain(y) {
        ad.extend_from_slice(&w.to_le_bytes());
    }
    let tag = ChaCha20Poly1305::new((&*key).into())
        .encrypt(&[0u8; 12].into(), Payload { msg: &[], aad: &ad })
        .expect("ChaCha20-Poly1305 over an empty plaintext cannot fail");
    let mut out = [0u8; TAG_LEN];
    out.copy_from_slice(&tag);
    out
}

/// The AEAD nonce for a message from `from` to `to`: distinct per direction, so the two ends of
/// a pair (who share one key) never reuse a nonce; each direction carries one message per round
/// and purpose (`purpose` 0: the encrypted share; 1: the attestation of the survivor set).
fn nonce_for(from: u32, to: u32, purpose: u8) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&from.to_le_bytes());
    n[4..8].copy_from_slice(&to.to_le_bytes());
    n[8] = purpose;
    n
}

fn nonce(from: u32, to: u32) -> [u8; 12] {
    nonce_for(from, to, 0)
}

/// Associated data of an attestation: a domain label, the round, sender, recipient and the
/// survivor set (in the order received).
fn attest_ad(round: u64, from: u32, to: u32, survivors: &[u32]) -> Vec<u8> {
    let label = b"dptune/secagg/v1/attest-survivors";
    let mut ad = Vec::with_capacity(label.len() + 20 + 4 * survivors.len());
    ad.extend_from_slice(label);
    ad.extend_from_slice(&aad(round, from, to));
    ad.extend_from_slice(&(survivors.len() as u32).to_le_bytes());
    for s in survivors {
        ad.extend_from_slice(&s.to_le_bytes());
    }
    ad
}

/// Client `from`'s attestation to `to` that `survivors` is the survivor set it was shown in
/// `round`: ChaCha20-Poly1305 over an empty plaintext with the set as associated data (a
/// Poly1305 MAC), under the pair's share-transport key and a nonce of its own (purpose 1), so it
/// never collides with the share ciphertext of the same direction. Only `from` and `to` know the
/// key, so the server can neither forge an attestation nor move one to another set, round or
/// pair (the same assumption as for share confidentiality: it relayed the public keys faithfully).
pub(crate) fn attest_tag(
    key: &[u8; 32],
    round: u64,
    from: u32,
    to: u32,
    survivors: &[u32],
) -> [u8; TAG_LEN] {
    let ad = attest_ad(round, from, to, survivors);
    let tag = ChaCha20Poly1305::new(key.into())
        .encrypt(
            &nonce_for(from, to, 1).into(),
            Payload { msg: &[], aad: &ad },
        )
        .expect("ChaCha20-Poly1305 over an empty plaintext cannot fail");
    let mut out = [0u8; TAG_LEN];
    out.copy_from_slice(&tag);
    out
}

/// Whether `tag` is `from`'s attestation of `survivors` to `to` in `round` (checked in constant
/// time by the AEAD's decryption).
pub(crate) fn attest_valid(
    key: &[u8; 32],
    round: u64,
    from: u32,
    to: u32,
    survivors: &[u32],
    tag: &[u8; TAG_LEN],
) -> bool {
    let ad = attest_ad(round, from, to, survivors);
    ChaCha20Poly1305::new(key.into())
        .decrypt(
            &nonce_for(from, to, 1).into(),
            Payload { msg: tag, aad: &ad },
        )
        .is_ok()
}

/// Associated data binding a ciphertext to its round, sender and recipient.
fn aad(round: u64, from: u32, to: u32) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[..8].copy_from_slice(&round.to_le_bytes());
    a[8..12].copy_from_slice(&from.to_le_bytes());
    a[12..].copy_from_slice(&to.to_le_bytes());
    a
}

/// ChaCha20-Poly1305 encryption of `plaintext` from `from` to `to` in `round`.
pub(crate) fn seal(key: &[u8; 32], round: u64, from: u32, to: u32, plaintext: &[u8]) -> Vec<u8> {
    in_channel(key, round, from, to, plaintext, |c, n, p| c.encrypt(n, p))
        .expect("ChaCha20-Poly1305 encryption of a short message cannot fail")
}

/// Decryption; `None` if the ciphertext was tampered with, replayed from another round, or
/// redirected to another sender/recipient pair.
pub(crate) fn open(
    key: &[u8; 32],
    round: u64,
    from: u32,
    to: u32,
    ciphertext: &[u8],
) -> Option<Zeroizing<Vec<u8>>> {
    in_channel(key, round, from, to, ciphertext, |c, n, p| c.decrypt(n, p))
        .ok()
        .map(Zeroizing::new)
}

/// Applies `op` (encryption or decryption) to `msg` under `key` with the nonce and associated
/// data of the message from `from` to `to` in `round`: sealing and opening bind one context.
fn in_channel<T>(
    key: &[u8; 32],
    round: u64,
    from: u32,
    to: u32,
    msg: &[u8],
    op: impl FnOnce(&ChaCha20Poly1305, &Nonce, Payload) -> T,
) -> T {
    let cipher = ChaCha20Poly1305::new(key.into());
    let ad = aad(round, from, to);
    op(&cipher, &nonce(from, to).into(), Payload { msg, aad: &ad })
}

#[cfg(test)]
mod tests {
    use curve25519_dalek::constants::EIGHT_TORSION;

    use super::*;

    fn peer(pk: &PublicKey) -> PeerKey {
        PeerKey::parse(pk.as_bytes()).expect("an honest public key is accepted")
    }

    fn hex32(s: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (o, i) in out.iter_mut().zip((0..64).step_by(2)) {
            *o = u8::from_str_radix(&s[i..i + 2], 16).unwrap();
        }
        out
    }

    fn x25519(sk: &StaticSecret, p: &PeerKey) -> [u8; 32] {
        x25519_batch(sk, [p])[0].to_bytes()
    }

    /// Our X25519 on the scalar bytes `k` and the encoded point `u`.
    fn ours(k: [u8; 32], u: &[u8; 32]) -> Option<[u8; 32]> {
        PeerKey::parse(u).map(|p| x25519(&StaticSecret::from(k), &p))
    }

    fn pairwise_key(
        purpose: Purpose,
        sk: &StaticSecret,
        their: &PeerKey,
        round: u64,
        me: u32,
        j: u32,
    ) -> Zeroizing<[u8; 32]> {
        let mut keys = pairwise_keys(purpose, sk, me, &[(j, their)], round);
        keys.pop().unwrap()
    }

    #[test]
    fn agreement_equals_x25519_dalek_bit_for_bit() {
        let mut rng = SecureRng::seeded(11);
        let (sk, pk) = keypair(&mut rng);
        let others: Vec<(StaticSecret, PublicKey)> = (0..200).map(|_| keypair(&mut rng)).collect();
        let peers: Vec<PeerKey> = others.iter().map(|(_, pk)| peer(pk)).collect();
        // One batch (one shared inversion), in order, and each end alone.
        let batch = x25519_batch(&sk, &peers);
        assert_eq!(batch.len(), others.len());
        for ((skb, pkb), u) in others.iter().zip(batch.iter()) {
            assert_eq!(u.to_bytes(), *sk.diffie_hellman(pkb).as_bytes());
            assert_eq!(u.to_bytes(), x25519(skb, &peer(&pk)));
        }
        // Arbitrary canonical u-coordinates: about half are on the curve, and those mostly have
        // a torsion component, which clamping must remove exactly as the ladder does.
        let mut accepted = 0;
        for _ in 0..400 {
            let (sk, _) = keypair(&mut rng);
            let mut u = [0u8; 32];
            rng.fill_bytes(&mut u);
            u[31] &= 0x3f;
            if let Some(p) = PeerKey::parse(&u) {
                accepted += 1;
                let ladder = sk.diffie_hellman(&PublicKey::from(u));
                assert_eq!(x25519(&sk, &p), *ladder.as_bytes());
            }
        }
        assert!(
            (140..260).contains(&accepted),
            "{accepted} of 400 on the curve"
        );
    }

    #[test]
    fn rfc7748_vectors() {
        // §5.2, first single-step vector (its u is on the curve).
        let k = hex32("a546e36bf0527c9d3b16154b82465edd62144c0ac1fc5a18506a2244ba449ac4");
        let u = hex32("e6db6867583030db3594c1a424b15f7c726624ec26b3353b10a903a6d0ab1c4c");
        let out = hex32("c3da55379de9c6908e94ea4df28d084f32eccf03491c71f754b4075577a28552");
        assert_eq!(ours(k, &u), Some(out));
        // The second vector's u has bit 255 set and, masked as §5 prescribes, lies on the twist:
        // both are refused (the ladder would answer 95cbde94…).
        let u2 = hex32("e5210f12786811d3f4b7959d0538ae2c31dbe7106fc03c3efc4cd549c715a493");
        let mut u2_masked = u2;
        u2_masked[31] &= 0x7f;
        assert!(PeerKey::parse(&u2).is_none() && PeerKey::parse(&u2_masked).is_none());
        // §5.2 iterated vector: k, u ← X25519(k, u), k, starting from k = u = 9.
        let (mut k, mut u) = ([0u8; 32], [0u8; 32]);
        k[0] = 9;
        u[0] = 9;
        for i in 1..=1000 {
            let r = ours(k, &u).expect("every u in the chain is on the curve");
            (u, k) = (k, r);
            if i == 1 {
                let one = "422c8e7a6227d7bca1350b3e2bb7279f7897b87bb6854b783c60e80311ae3079";
                assert_eq!(k, hex32(one));
            }
        }
        let thousand = "684cf59ba83309552800ef566f2f4d3c1c3887c49360e3875f2eb94d99532c51";
        assert_eq!(k, hex32(thousand));
        // §6.1 Diffie-Hellman.
        let a = hex32("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a");
        let a_pub = hex32("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a");
        let b = hex32("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb");
        let b_pub = hex32("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f");
        let shared = hex32("4a5d9d5ba4ce2de1728e3bf480350f25e07e21c947d19e3376f09b3c1e161742");
        assert_eq!(PublicKey::from(&StaticSecret::from(a)).to_bytes(), a_pub);
        assert_eq!(PublicKey::from(&StaticSecret::from(b)).to_bytes(), b_pub);
        assert_eq!(ours(a, &b_pub), Some(shared));
        assert_eq!(ours(b, &a_pub), Some(shared));
    }

    #[test]
    fn small_order_twist_and_non_canonical_keys_are_refused() {
        let sk = StaticSecret::from([0x5a; 32]);
        let mut refused: Vec<[u8; 32]> = Vec::new();
        // The 8-torsion has the u-coordinates 0, 1 and two of order 8: with each of them the
        // ladder's result is all-zero whatever the secret.
        for t in EIGHT_TORSION {
            let u = t.to_montgomery().to_bytes();
            assert!(!sk.diffie_hellman(&PublicKey::from(u)).was_contributory());
            refused.push(u);
        }
        // p − 1 (on the twist), p and p + 1 (non-canonical 0 and 1), 2^255 − 1.
        let mut p = FIELD_PRIME_LE;
        for delta in [-1i16, 0, 1] {
            p[0] = (0xed + delta) as u8;
            refused.push(p);
        }
        refused.push([0xff; 32]);
        // An honest key with bit 255 set (the same point modulo the masking in RFC 7748 §5).
        let (_, pk) = keypair(&mut SecureRng::seeded(3));
        let mut high = pk.to_bytes();
        high[31] |= 0x80;
        refused.push(high);
        for u in refused {
            assert!(PeerKey::parse(&u).is_none(), "accepted {u:02x?}");
        }
        assert!(PeerKey::parse(pk.as_bytes()).is_some());
    }

    #[test]
    fn keys_differing_by_torsion_or_sign_are_the_same_key() {
        let mut rng = SecureRng::seeded(5);
        let (sk, pk) = keypair(&mut rng);
        let (_, other) = keypair(&mut rng);
        let p = peer(&pk);
        let twin_u = (p.0 + EIGHT_TORSION[1]).to_montgomery().to_bytes();
        assert_ne!(twin_u, pk.to_bytes());
        let twin = PeerKey::parse(&twin_u).unwrap();
        assert!(p.same_as(&twin) && twin.same_as(&p));
        assert!(p.same_as(&PeerKey(-p.0)));
        assert_eq!(x25519(&sk, &p), x25519(&sk, &twin));
        assert!(!p.same_as(&peer(&other)));
    }

    #[test]
    fn both_ends_derive_the_same_keys_and_masks_cancel() {
        let mut rng = SecureRng::seeded(1);
        let (ska, pka) = keypair(&mut rng);
        let (skb, pkb) = keypair(&mut rng);
        let (pka, pkb) = (peer(&pka), peer(&pkb));
        let sa = pairwise_key(Purpose::Mask, &ska, &pkb, 7, 3, 9);
        let sb = pairwise_key(Purpose::Mask, &skb, &pka, 7, 9, 3);
        assert_eq!(*sa, *sb);
        assert_ne!(*sa, *pairwise_key(Purpose::Share, &ska, &pkb, 7, 3, 9));
        assert_ne!(*sa, *pairwise_key(Purpose::Mask, &ska, &pkb, 8, 3, 9));
        let mut v = vec![5u32, 6, 7];
        apply_mask(&mut v, &sa, true);
        assert_ne!(v, vec![5, 6, 7]);
        apply_mask(&mut v, &sb, false);
        assert_eq!(v, vec![5, 6, 7]);
    }

    #[test]
    fn a_wrong_shared_secret_is_detected() {
        let mut rng = SecureRng::seeded(2);
        let (ska, pka) = keypair(&mut rng);
        let (skb, pkb) = keypair(&mut rng);
        let (_, pkc) = keypair(&mut rng);
        let key_ab = pairwise_key(Purpose::Share, &ska, &peer(&pkb), 1, 0, 1);
        let ct = seal(&key_ab, 1, 0, 1, b"share");
        let key_ba = pairwise_key(Purpose::Share, &skb, &peer(&pka), 1, 1, 0);
        assert_eq!(open(&key_ba, 1, 0, 1, &ct).unwrap().as_slice(), b"share");
        // Bob agreeing with the wrong key (Carol's instead of Alice's) cannot open it.
        let key_bc = pairwise_key(Purpose::Share, &skb, &peer(&pkc), 1, 1, 0);
        assert!(open(&key_bc, 1, 0, 1, &ct).is_none());
    }

    #[test]
    fn aead_rejects_tampering_redirection_and_replay() {
        let key = [9u8; 32];
        let ct = seal(&key, 1, 2, 3, b"share");
        assert_eq!(open(&key, 1, 2, 3, &ct).unwrap().as_slice(), b"share");
        let mut bad = ct.clone();
        bad[0] ^= 1;
        assert!(open(&key, 1, 2, 3, &bad).is_none());
        assert!(open(&key, 2, 2, 3, &ct).is_none());
        assert!(open(&key, 1, 3, 2, &ct).is_none());
        assert!(open(&key, 1, 2, 4, &ct).is_none());
    }

    #[test]
    fn an_attestation_holds_for_its_own_set_pair_round_and_key_only() {
        let key = [9u8; 32];
        let set = [0u32, 2, 5];
        let tag = attest_tag(&key, 1, 2, 5, &set);
        assert!(attest_valid(&key, 1, 2, 5, &set, &tag));
        // Another set (one member more, one fewer, or another), round, direction, recipient,
        // key, or a flipped bit: refused.
        for other in [&[0u32, 2, 5, 7][..], &[0, 2], &[0, 2, 6]] {
            assert!(!attest_valid(&key, 1, 2, 5, other, &tag));
        }
        assert!(!attest_valid(&key, 2, 2, 5, &set, &tag));
        assert!(!attest_valid(&key, 1, 5, 2, &set, &tag));
        assert!(!attest_valid(&key, 1, 2, 0, &set, &tag));
        assert!(!attest_valid(&[8u8; 32], 1, 2, 5, &set, &tag));
        let mut bad = tag;
        bad[15] ^= 0x80;
        assert!(!attest_valid(&key, 1, 2, 5, &set, &bad));
    }
}

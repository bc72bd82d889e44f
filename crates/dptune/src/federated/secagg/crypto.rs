//! Cryptographic building blocks of the secure aggregation protocol, all from well-kept crates:
//! X25519 key agreement (`x25519-dalek`), HKDF-SHA256 key derivation with domain separation
//! (`hkdf` + `sha2`), ChaCha20 as the mask PRG (`chacha20`), ChaCha20-Poly1305 for the share
//! transport (`chacha20poly1305`). The protocol built on them is in [`super::client`] and
//! [`super::server`].

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha20;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::ChaCha20Poly1305;
use hkdf::Hkdf;
use sha2::Sha256;
use x25519_dalek::{PublicKey, StaticSecret};
use zeroize::Zeroizing;

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

/// The key of clients `a` and `b` for `purpose` in `round`: HKDF-SHA256(ikm = X25519(sk, pk),
/// salt = round id) expanded with `label || lo || hi`, where (lo, hi) are the two client ids in
/// increasing order (both ends derive the same key).
pub(crate) fn pairwise_key(
    purpose: Purpose,
    sk: &StaticSecret,
    their_pk: &PublicKey,
    round: u64,
    a: u32,
    b: u32,
) -> Zeroizing<[u8; 32]> {
    let shared = sk.diffie_hellman(their_pk);
    let hk = Hkdf::<Sha256>::new(Some(&round.to_le_bytes()), shared.as_bytes());
    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
    let label = purpose.label();
    let mut info = Vec::with_capacity(label.len() + 8);
    info.extend_from_slice(label);
    info.extend_from_slice(&lo.to_le_bytes());
    info.extend_from_slice(&hi.to_le_bytes());
    let mut out = Zeroizing::new([0u8; 32]);
    // 32 bytes is far below HKDF-SHA256's 8160-byte limit, so expansion cannot fail.
    hk.expand(&info, out.as_mut())
        .expect("32-byte HKDF-SHA256 output is always valid");
    out
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

/// The AEAD nonce for a message from `from` to `to`: distinct per direction, so the two ends of
/// a pair (who share one key) never reuse a nonce; each direction carries one message per round.
fn nonce(from: u32, to: u32) -> [u8; 12] {
    let mut n = [0u8; 12];
    n[..4].copy_from_slice(&from.to_le_bytes());
    n[4..8].copy_from_slice(&to.to_le_bytes());
    n
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
    let cipher = ChaCha20Poly1305::new(key.into());
    let ad = aad(round, from, to);
    cipher
        .encrypt(
            &nonce(from, to).into(),
            Payload {
                msg: plaintext,
                aad: &ad,
            },
        )
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
    let cipher = ChaCha20Poly1305::new(key.into());
    let ad = aad(round, from, to);
    cipher
        .decrypt(
            &nonce(from, to).into(),
            Payload {
                msg: ciphertext,
                aad: &ad,
            },
        )
        .ok()
        .map(Zeroizing::new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_ends_derive_the_same_keys_and_masks_cancel() {
        let mut rng = SecureRng::seeded(1);
        let (ska, pka) = keypair(&mut rng);
        let (skb, pkb) = keypair(&mut rng);
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
}

//! Shamir secret sharing (Shamir 1979, "How to share a secret", CACM 22(11)) over the prime
//! field GF(p), p = 2^61 − 1 (a Mersenne prime, so reduction is two shifts and an add).
//!
//! A 32-byte secret (a mask seed or an X25519 secret key) is cut into [`LIMBS`] limbs of at most
//! 56 bits (< p); each limb is shared with its own random polynomial of degree `threshold − 1`
//! whose coefficients are uniform in GF(p) (drawn by exact rejection from [`SecureRng`]). Any
//! `threshold` shares determine the secret (Lagrange interpolation at 0); any fewer are jointly
//! uniform and independent of it (information-theoretic secrecy).

use zeroize::Zeroize;

use crate::noise::SecureRng;

/// The field modulus p = 2^61 − 1.
pub const P: u64 = (1 << 61) - 1;
/// Limbs per 32-byte secret (seven bytes each, the last one four).
pub const LIMBS: usize = 5;

/// One share of a 32-byte secret: the evaluation point x (a client id + 1, never 0) and one
/// field element per limb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Share {
    /// Evaluation point, in 1..p.
    pub x: u64,
    /// Polynomial values at x, one per limb, each < p.
    pub y: [u64; LIMBS],
}

#[inline]
fn reduce(x: u128) -> u64 {
    // x < 2^122: fold twice.
    let lo = (x as u64) & P;
    let hi = (x >> 61) as u64;
    let s = lo + (hi & P) + (hi >> 61);
    let s = (s & P) + (s >> 61);
    if s >= P {
        s - P
    } else {
        s
    }
}

#[inline]
fn add(a: u64, b: u64) -> u64 {
    let s = a + b;
    if s >= P {
        s - P
    } else {
        s
    }
}

#[inline]
fn sub(a: u64, b: u64) -> u64 {
    if a >= b {
        a - b
    } else {
        a + P - b
    }
}

#[inline]
fn mul(a: u64, b: u64) -> u64 {
    reduce(a as u128 * b as u128)
}

fn pow(mut a: u64, mut e: u64) -> u64 {
    let mut r = 1;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, a);
        }
        a = mul(a, a);
        e >>= 1;
    }
    r
}

/// Multiplicative inverse of a non-zero element (Fermat).
fn inv(a: u64) -> u64 {
    pow(a, P - 2)
}

fn to_limbs(secret: &[u8; 32]) -> [u64; LIMBS] {
    let mut limbs = [0u64; LIMBS];
    for (i, chunk) in secret.chunks(7).enumerate() {
        let mut w = [0u8; 8];
        w[..chunk.len()].copy_from_slice(chunk);
        limbs[i] = u64::from_le_bytes(w);
        w.zeroize();
    }
    limbs
}

/// Inverse of `to_limbs`; `None` if a limb does not fit its byte width (a sign of wrong or
/// tampered shares).
fn from_limbs(limbs: &[u64; LIMBS]) -> Option<[u8; 32]> {
    let mut out = [0u8; 32];
    for (i, &l) in limbs.iter().enumerate() {
        let width = if i + 1 == LIMBS { 4 } else { 7 };
        if l >> (8 * width) != 0 {
            return None;
        }
        out[7 * i..7 * i + width].copy_from_slice(&l.to_le_bytes()[..width]);
    }
    Some(out)
}

/// Splits `secret` into one share per point of `xs` (distinct, non-zero, < p), any `threshold` of
/// which recover it. Callers validate `1 <= threshold <= xs.len()`.
pub fn split(secret: &[u8; 32], threshold: usize, xs: &[u64], rng: &mut SecureRng) -> Vec<Share> {
    let mut limbs = to_limbs(secret);
    let mut coeffs = vec![[0u64; LIMBS]; threshold];
    coeffs[0] = limbs;
    for c in coeffs.iter_mut().skip(1) {
        for v in c.iter_mut() {
            *v = rng.below_u64(P);
        }
    }
    let shares = xs
        .iter()
        .map(|&x| {
            let mut y = [0u64; LIMBS];
            for (l, yl) in y.iter_mut().enumerate() {
                // Horner from the top coefficient.
                let mut acc = 0;
                for c in coeffs.iter().rev() {
                    acc = add(mul(acc, x), c[l]);
                }
                *yl = acc;
            }
            Share { x, y }
        })
        .collect();
    limbs.zeroize();
    for c in coeffs.iter_mut() {
        c.zeroize();
    }
    shares
}

/// The Lagrange basis coefficients at 0 for the points `xs`: ℓ_i(0) = Π_{j≠i} x_j / (x_j − x_i).
/// `None` if points repeat or lie outside 1..p.
pub fn lagrange_at_zero(xs: &[u64]) -> Option<Vec<u64>> {
    if xs.is_empty() || xs.iter().any(|&x| x == 0 || x >= P) {
        return None;
    }
    let mut out = Vec::with_capacity(xs.len());
    for (i, &xi) in xs.iter().enumerate() {
        let mut num = 1;
        let mut den = 1;
        for (j, &xj) in xs.iter().enumerate() {
            if i != j {
                if xj == xi {
                    return None;
                }
                num = mul(num, xj);
                den = mul(den, sub(xj, xi));
            }
        }
        out.push(mul(num, inv(den)));
    }
    Some(out)
}

/// Combines shares with precomputed coefficients (from [`lagrange_at_zero`] of the shares'
/// points, in the same order). `None` if a value is out of the field or the result is not an
/// encoded 32-byte secret.
pub fn combine(coeffs: &[u64], shares: &[Share]) -> Option<[u8; 32]> {
    if coeffs.len() != shares.len() || shares.iter().any(|s| s.y.iter().any(|&v| v >= P)) {
        return None;
    }
    let mut limbs = [0u64; LIMBS];
    for (c, s) in coeffs.iter().zip(shares) {
        for (limb, &y) in limbs.iter_mut().zip(&s.y) {
            *limb = add(*limb, mul(*c, y));
        }
    }
    let out = from_limbs(&limbs);
    limbs.zeroize();
    out
}

/// Recovers the secret from shares with distinct non-zero points (all of them are used, so pass
/// exactly `threshold`). `None` if points repeat or are out of range, or the interpolated value
/// is not an encoded 32-byte secret.
pub fn reconstruct(shares: &[Share]) -> Option<[u8; 32]> {
    let xs: Vec<u64> = shares.iter().map(|s| s.x).collect();
    combine(&lagrange_at_zero(&xs)?, shares)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_arithmetic() {
        assert_eq!(mul(P - 1, P - 1), 1);
        assert_eq!(mul(inv(12345), 12345), 1);
        assert_eq!(reduce((P as u128) * 3 + 5), 5);
        assert_eq!(sub(0, 1), P - 1);
    }

    #[test]
    fn any_threshold_subset_recovers_and_fewer_do_not() {
        let mut rng = SecureRng::seeded(5);
        let mut secret = [0u8; 32];
        rng.fill_bytes(&mut secret);
        secret[31] = 0xff;
        let xs: Vec<u64> = (1..=7).collect();
        let shares = split(&secret, 4, &xs, &mut rng);
        for start in 0..4 {
            assert_eq!(reconstruct(&shares[start..start + 4]), Some(secret));
        }
        let picked = [shares[6], shares[0], shares[3], shares[5]];
        assert_eq!(reconstruct(&picked), Some(secret));
        assert_ne!(reconstruct(&shares[..3]), Some(secret));
        assert_eq!(reconstruct(&[shares[0], shares[0]]), None);
        assert_eq!(reconstruct(&[]), None);
    }
}

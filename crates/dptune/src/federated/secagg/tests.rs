//! Acceptance tests of the secure aggregation protocol.

use curve25519_dalek::constants::EIGHT_TORSION;
use curve25519_dalek::montgomery::MontgomeryPoint;

use super::local::{run_round, DropAt};
use super::wire::{Body, Message, PublicKeys, SERVER};
use super::*;

pub(super) fn inputs(n: usize, dim: usize, rng: &mut SecureRng) -> Vec<Vec<u32>> {
    (0..n)
        .map(|_| (0..dim).map(|_| rng.next_u64() as u32).collect())
        .collect()
}

pub(super) fn plain_sum(inputs: &[Vec<u32>], who: &[u32]) -> Vec<u32> {
    let mut s = vec![0u32; inputs[0].len()];
    for &i in who {
        for (a, b) in s.iter_mut().zip(&inputs[i as usize]) {
            *a = a.wrapping_add(*b);
        }
    }
    s
}

#[test]
fn no_dropout_sum_is_exact() {
    let mut rng = SecureRng::seeded(1);
    let p = SecAggParams::complete(1, 6, 9, 4).unwrap();
    let x = inputs(6, 9, &mut rng);
    let (agg, _) = run_round(&p, x.clone(), &[], &mut rng).unwrap();
    assert_eq!(agg.survivors, (0..6).collect::<Vec<u32>>());
    assert_eq!(agg.sum, plain_sum(&x, &agg.survivors));
}

#[test]
fn up_to_n_minus_t_dropouts_at_any_stage_give_the_exact_sum() {
    // n = 7, t = 4: every pattern of up to 3 dropouts spread over the five stages.
    let (n, t, dim) = (7usize, 4usize, 5usize);
    let mut rng = SecureRng::seeded(2);
    let p = SecAggParams::complete(2, n, dim, t).unwrap();
    let x = inputs(n, dim, &mut rng);
    for pattern in 0..(6usize.pow(3)) {
        // Clients 1, 3, 5 get a stage each (or none).
        let mut drops = vec![None; n];
        let mut code = pattern;
        for who in [1, 3, 5] {
            drops[who] = match code % 6 {
                0 => None,
                s => Some(DropAt::STAGES[s - 1]),
            };
            code /= 6;
        }
        let (agg, _) = run_round(&p, x.clone(), &drops, &mut rng).unwrap();
        let expected: Vec<u32> = (0..n as u32)
            .filter(|&i| {
                !matches!(
                    drops[i as usize],
                    Some(DropAt::Keys | DropAt::Shares | DropAt::Masked)
                )
            })
            .collect();
        assert_eq!(agg.survivors, expected, "pattern {drops:?}");
        assert_eq!(agg.sum, plain_sum(&x, &expected), "pattern {drops:?}");
    }
}

#[test]
fn more_than_n_minus_t_dropouts_fail_cleanly() {
    let (n, t) = (6usize, 4usize);
    let mut rng = SecureRng::seeded(3);
    let p = SecAggParams::complete(3, n, 3, t).unwrap();
    let x = inputs(n, 3, &mut rng);
    for stage in DropAt::STAGES {
        let mut drops = vec![None; n];
        drops[0] = Some(stage);
        drops[2] = Some(stage);
        drops[4] = Some(DropAt::Keys.max(stage));
        let err = run_round(&p, x.clone(), &drops, &mut rng).unwrap_err();
        assert!(matches!(err, Error::NoRelease { .. }), "{stage:?}: {err}");
    }
}

#[test]
fn sparse_secagg_plus_graph_sums_exactly_with_dropouts() {
    let (n, dim) = (40usize, 7usize);
    let mut rng = SecureRng::seeded(4);
    let p = SecAggParams::sparse(4, n, dim, 20, 8, 6, 99).unwrap();
    for i in 0..n as u32 {
        let nb = p.neighbours(i);
        assert_eq!(nb.len(), 8);
        assert!(nb.iter().all(|&j| p.are_neighbours(j, i)));
    }
    let x = inputs(n, dim, &mut rng);
    let mut drops = vec![None; n];
    drops[3] = Some(DropAt::Shares);
    drops[17] = Some(DropAt::Masked);
    drops[25] = Some(DropAt::Attest);
    drops[30] = Some(DropAt::Unmask);
    let (agg, _) = run_round(&p, x.clone(), &drops, &mut rng).unwrap();
    assert_eq!(agg.survivors.len(), n - 2);
    assert_eq!(agg.sum, plain_sum(&x, &agg.survivors));
    assert!(
        SecAggParams::sparse(4, n, dim, 20, 8, 4, 99).is_err(),
        "minority threshold"
    );
    assert!(
        SecAggParams::sparse(4, n, dim, 20, 7, 5, 99).is_err(),
        "odd degree"
    );
}

#[test]
fn bad_parameters_are_typed_errors() {
    for (n, dim, t, name) in [
        (5, 3, 6, "min_survivors"),
        (5, 3, 1, "min_survivors"),
        (1, 3, 2, "clients"),
        (5, 0, 2, "dim"),
    ] {
        match SecAggParams::complete(0, n, dim, t) {
            Err(Error::InvalidParameter { name: got, .. }) => assert_eq!(got, name),
            other => panic!("{other:?}"),
        }
    }
    let p = SecAggParams::complete(0, 3, 4, 2).unwrap();
    assert!(Client::new(0, p.clone(), vec![0; 3], SecureRng::seeded(0)).is_err());
    assert!(Client::new(3, p, vec![0; 4], SecureRng::seeded(0)).is_err());
    assert!(encode_signed("vote", &[1 << 31]).is_err());
    assert_eq!(
        decode_signed(&encode_signed("vote", &[-5, 7]).unwrap()),
        vec![-5, 7]
    );
}

/// Runs stages 0–2 by hand and returns the server's view of client 0's masked vector.
fn masked_view(round: u64, x0: &[u32], rng: &mut SecureRng) -> Vec<u32> {
    let n = 3;
    let p = SecAggParams::complete(round, n, x0.len(), 2).unwrap();
    let streams = rng.streams();
    let mut cs: Vec<Client> = (0..n)
        .map(|i| Client::new(i, p.clone(), x0.to_vec(), streams.get(i as u64)).unwrap())
        .collect();
    let mut server = Server::new(p);
    for c in cs.iter_mut() {
        server.receive(&c.advertise_keys().unwrap()).unwrap();
    }
    let out = server.advance().unwrap();
    for (to, m) in out {
        server
            .receive(&cs[to as usize].share_keys(&m).unwrap())
            .unwrap();
    }
    let out = server.advance().unwrap();
    let (to, m) = &out[0];
    assert_eq!(*to, 0);
    let bytes = cs[0].masked_input(m).unwrap();
    match Message::decode(&bytes).unwrap().body {
        Body::MaskedInput { y, .. } => y,
        _ => unreachable!(),
    }
}

#[test]
fn masked_vector_is_indistinguishable_from_uniform() {
    // The server's view of client 0's masked vector, for a constant input (all coordinates 7),
    // over 40 rounds × 512 coordinates = 20 480 words. Chi-square on the top byte and on the
    // bottom byte (255 d.o.f. each): the 1e-6 upper quantile is 376.5, so each check fails
    // falsely with probability < 1e-6 (fixed seed). A constant input shows up as a spike in
    // either byte unless the masks are uniform.
    let mut rng = SecureRng::seeded(5);
    let x0 = vec![7u32; 512];
    let mut hi = [0f64; 256];
    let mut lo = [0f64; 256];
    let mut total = 0f64;
    for round in 0..40 {
        for w in masked_view(round, &x0, &mut rng) {
            hi[(w >> 24) as usize] += 1.0;
            lo[(w & 0xff) as usize] += 1.0;
            total += 1.0;
        }
    }
    let e = total / 256.0;
    for counts in [hi, lo] {
        let chi2: f64 = counts.iter().map(|c| (c - e) * (c - e) / e).sum();
        assert!(chi2 < 376.5, "chi2 = {chi2}");
    }
}

/// A round driven by hand, so that messages can be tampered with.
struct Manual {
    server: Server,
    clients: Vec<Client>,
}

impl Manual {
    fn new(round: u64, n: usize, t: usize) -> Self {
        let p = SecAggParams::complete(round, n, 4, t).unwrap();
        let mut rng = SecureRng::seeded(round);
        let clients = (0..n)
            .map(|i| {
                Client::new(i, p.clone(), vec![i as u32; 4], rng.streams().get(i as u64)).unwrap()
            })
            .collect();
        Manual {
            server: Server::new(p),
            clients,
        }
    }
}

#[test]
fn tampered_replayed_and_malformed_messages_are_rejected() {
    let mut a = Manual::new(10, 3, 2);
    let mut b = Manual::new(11, 3, 2);
    let adv_a: Vec<Vec<u8>> = a
        .clients
        .iter_mut()
        .map(|c| c.advertise_keys().unwrap())
        .collect();
    let adv_b: Vec<Vec<u8>> = b
        .clients
        .iter_mut()
        .map(|c| c.advertise_keys().unwrap())
        .collect();
    // Replay from another round, garbage, truncation: refused, state unchanged.
    assert!(a.server.receive(&adv_b[0]).is_err());
    assert!(a.server.receive(b"not a message").is_err());
    assert!(a.server.receive(&adv_a[0][..20]).is_err());
    for m in &adv_a {
        a.server.receive(m).unwrap();
    }
    // Duplicate (replay within the round) refused.
    assert!(a.server.receive(&adv_a[1]).is_err());
    for m in &adv_b {
        b.server.receive(m).unwrap();
    }
    let keys_a = a.server.advance().unwrap();
    let keys_b = b.server.advance().unwrap();
    // A client refuses the other round's key list, and one naming it with altered keys.
    assert!(a.clients[0].share_keys(&keys_b[0].1).is_err());
    let mut shares_a = Vec::new();
    for (to, m) in &keys_a {
        shares_a.push(a.clients[*to as usize].share_keys(m).unwrap());
    }
    // A message of the wrong stage is refused by the server.
    let stale = Message::new(
        10,
        0,
        SERVER,
        Body::MaskedInput {
            y: vec![0; 4],
            live: vec![],
            tag: [0; 16],
        },
    )
    .encode();
    assert!(a.server.receive(&stale).is_err());
    for m in &shares_a {
        a.server.receive(m).unwrap();
    }
    let fwd = a.server.advance().unwrap();
    // Tamper with one forwarded ciphertext: the recipient refuses it.
    let (to, m) = &fwd[1];
    let mut msg = Message::decode(m).unwrap();
    if let Body::ForwardedShares(v) = &mut msg.body {
        v[0].1[3] ^= 0x40;
    }
    assert!(a.clients[*to as usize].masked_input(&msg.encode()).is_err());
    // Redirect a ciphertext to a different recipient: refused too.
    let (to2, m2) = &fwd[2];
    let mut msg2 = Message::decode(m2).unwrap();
    if let (Body::ForwardedShares(v), Body::ForwardedShares(w)) =
        (&mut msg2.body, &Message::decode(&fwd[0].1).unwrap().body)
    {
        v[0] = w[0].clone();
    }
    assert!(a.clients[*to2 as usize]
        .masked_input(&msg2.encode())
        .is_err());
}

/// The same key as `pk` with bit 255 set: RFC 7748 §5 masks that bit, so a lenient decoder
/// would take it for the same point.
fn high_bit(pk: [u8; 32]) -> [u8; 32] {
    let mut u = pk;
    u[31] |= 0x80;
    u
}

#[test]
fn malicious_public_keys_are_refused_by_server_and_clients() {
    let mut a = Manual::new(12, 4, 3);
    let adv: Vec<Vec<u8>> = a
        .clients
        .iter_mut()
        .map(|c| c.advertise_keys().unwrap())
        .collect();
    let Body::AdvertiseKeys { mask_pk, enc_pk } = Message::decode(&adv[3]).unwrap().body else {
        unreachable!("an advertisement")
    };
    // A small-order key (u = 0: every agreement with it is all-zero), a twist point (u = p − 1),
    // a non-canonical encoding, and as encryption key the mask key plus a point of order 8
    // (other bytes, but the same key for X25519, which clamps the scalar to a multiple of 8):
    // all refused, state unchanged.
    let mut minus_one = [0xff; 32];
    minus_one[0] = 0xec;
    minus_one[31] = 0x7f;
    let twin = (MontgomeryPoint(mask_pk).to_edwards(0).unwrap() + EIGHT_TORSION[1])
        .to_montgomery()
        .to_bytes();
    for (m, e) in [
        ([0u8; 32], enc_pk),
        (mask_pk, minus_one),
        (mask_pk, high_bit(enc_pk)),
        (mask_pk, twin),
    ] {
        let body = Body::AdvertiseKeys {
            mask_pk: m,
            enc_pk: e,
        };
        let bad = Message::new(12, 3, SERVER, body).encode();
        assert!(matches!(a.server.receive(&bad), Err(Error::Data { .. })));
    }
    for m in &adv {
        a.server.receive(m).unwrap();
    }
    // A server that substitutes such keys in a neighbour's entry is refused by the client.
    let keys = a.server.advance().unwrap();
    let (to, honest) = &keys[0];
    for tamper in [
        (|k: &mut PublicKeys| k.mask_pk = [0u8; 32]) as fn(&mut PublicKeys),
        |k| k.enc_pk = high_bit(k.enc_pk),
        |k| k.enc_pk = k.mask_pk,
    ] {
        let mut msg = Message::decode(honest).unwrap();
        let Body::Keys(list) = &mut msg.body else {
            unreachable!("a key list")
        };
        let other = list.iter_mut().find(|k| k.id != *to).unwrap();
        tamper(other);
        let client = &mut a.clients[*to as usize];
        assert!(matches!(
            client.share_keys(&msg.encode()),
            Err(Error::Data { .. })
        ));
    }
    assert!(a.clients[*to as usize].share_keys(honest).is_ok());
}

#[test]
fn a_client_answers_one_unmask_request_only() {
    let mut a = Manual::new(20, 3, 2);
    for c in a.clients.iter_mut() {
        a.server.receive(&c.advertise_keys().unwrap()).unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        a.server
            .receive(&a.clients[to as usize].share_keys(&m).unwrap())
            .unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        // Client 2 drops before sending its masked input.
        if to != 2 {
            a.server
                .receive(&a.clients[to as usize].masked_input(&m).unwrap())
                .unwrap();
        }
    }
    let reqs = a.server.advance().unwrap();
    let (to, m) = &reqs[0];
    // After a genuine survivor set, a second (here forged: it claims client 2 survived, which
    // would reveal client 2's self-mask share next to its key share) is refused.
    let reply = a.clients[*to as usize].attest(m).unwrap();
    let forged = Message::new(
        20,
        SERVER,
        *to,
        Body::UnmaskRequest {
            survivors: vec![0, 1, 2],
            dropped: vec![],
        },
    )
    .encode();
    assert!(a.clients[*to as usize].attest(&forged).is_err());
    a.server.receive(&reply).unwrap();
    let (to, m) = &reqs[1];
    a.server
        .receive(&a.clients[*to as usize].attest(m).unwrap())
        .unwrap();
    let fwd = a.server.advance().unwrap();
    let (to, m) = &fwd[0];
    let reply = a.clients[*to as usize].unmask(m).unwrap();
    // Likewise a second unmask request.
    assert!(a.clients[*to as usize].unmask(m).is_err());
    a.server.receive(&reply).unwrap();
    let (to, m) = &fwd[1];
    a.server
        .receive(&a.clients[*to as usize].unmask(m).unwrap())
        .unwrap();
    let agg = a.server.finish().unwrap();
    assert_eq!(agg.survivors, vec![0, 1]);
    assert_eq!(agg.sum, vec![1; 4]);
}

#[test]
fn random_bytes_never_crash_the_server_and_the_round_still_completes() {
    let mut a = Manual::new(30, 4, 3);
    let mut rng = SecureRng::seeded(31);
    let mut junk = |server: &mut Server| {
        for len in [0usize, 5, 21, 40, 100, 300] {
            for _ in 0..20 {
                let mut b = vec![0u8; len];
                rng.fill_bytes(&mut b);
                if len > 25 {
                    b[..4].copy_from_slice(b"DSA1");
                    b[4] = 1 + rng.below_u64(9) as u8;
                    b[5..13].copy_from_slice(&30u64.to_le_bytes());
                    b[13..17].copy_from_slice(&(rng.below_u64(4) as u32).to_le_bytes());
                    b[17..21].copy_from_slice(&SERVER.to_le_bytes());
                }
                assert!(server.receive(&b).is_err());
            }
        }
    };
    junk(&mut a.server);
    for c in a.clients.iter_mut() {
        a.server.receive(&c.advertise_keys().unwrap()).unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        junk(&mut a.server);
        a.server
            .receive(&a.clients[to as usize].share_keys(&m).unwrap())
            .unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        junk(&mut a.server);
        a.server
            .receive(&a.clients[to as usize].masked_input(&m).unwrap())
            .unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        junk(&mut a.server);
        a.server
            .receive(&a.clients[to as usize].attest(&m).unwrap())
            .unwrap();
    }
    for (to, m) in a.server.advance().unwrap() {
        junk(&mut a.server);
        a.server
            .receive(&a.clients[to as usize].unmask(&m).unwrap())
            .unwrap();
    }
    let agg = a.server.finish().unwrap();
    assert_eq!(agg.sum, vec![6; 4]);
}

#[test]
fn overflow_bound() {
    assert!(overflow_probability(10_000, 1e6, 100) < 1e-300);
    assert_eq!(overflow_probability(1 << 31, 1.0, 1), 1.0);
    // Tight regime: variance 1e16 (std 1e8): 2^31 is ~21 std, the bound is still tiny but > 0.
    let p = overflow_probability(0, 1e16, 1);
    assert!(p > 0.0 && p < 1e-40, "{p}");
}

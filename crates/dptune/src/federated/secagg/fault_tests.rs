//! Fault injection at the protocol level: the real client and server state machines and the
//! real wire encoding, with every message in flight exposed to a hook that flips bits, replays,
//! duplicates, reorders, delays, forges senders, or (as a malicious server) shows clients
//! inconsistent views. Every run must end in the exact sum of the clients the server reports as
//! survivors, or in a typed refusal (`Error::NoRelease` or `Error::Data`); never a wrong sum, a
//! panic or a hang (the driver is a straight line of at most five stages). The last tests play a
//! malicious server that lies about who survived in order to learn one client's input.

use std::collections::BTreeMap;

use x25519_dalek::StaticSecret;

use super::crypto::{apply_mask, pairwise_keys, PeerKey, Purpose};
use super::shamir::{reconstruct, Share};
use super::tests::{inputs, plain_sum};
use super::wire::{Body, Message, PublicKeys, SERVER, TAG_LEN};
use super::*;

/// A message hop: client → server (`Up`) or server → client (`Down`) in stage s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Up(usize),
    Down(usize),
}

/// All nine hops in protocol order.
const HOPS: [Hop; 9] = [
    Hop::Up(0),
    Hop::Down(1),
    Hop::Up(1),
    Hop::Down(2),
    Hop::Up(2),
    Hop::Down(3),
    Hop::Up(3),
    Hop::Down(4),
    Hop::Up(4),
];

/// The last stage (unmask).
const LAST: usize = 4;

/// Messages in flight at one hop: (client, bytes), the client being the sender of an `Up`
/// message and the recipient of a `Down` message.
type Flight = Vec<(u32, Vec<u8>)>;

/// One round: `n` clients with random inputs; `params` as given.
struct Setup {
    params: SecAggParams,
    inputs: Vec<Vec<u32>>,
    seed: u64,
}

impl Setup {
    fn complete(round: u64, n: usize, t: usize) -> Self {
        let params = SecAggParams::complete(round, n, 3, t).unwrap();
        Self::with(params, round)
    }

    fn with(params: SecAggParams, seed: u64) -> Self {
        let mut rng = SecureRng::seeded(seed ^ 0x005e_ca66);
        let inputs = inputs(params.clients(), params.dim(), &mut rng);
        Setup {
            params,
            inputs,
            seed,
        }
    }

    /// Runs the round, passing every flight through `fault` before delivery. A client that
    /// refuses a message answers nothing (it drops out, as a real client would); a message the
    /// server refuses is ignored.
    fn clients(&self) -> Vec<Client> {
        let mut rng = SecureRng::seeded(self.seed);
        let streams = rng.streams();
        (0..self.params.clients())
            .map(|i| {
                Client::new(
                    i,
                    self.params.clone(),
                    self.inputs[i].clone(),
                    streams.get(i as u64),
                )
                .unwrap()
            })
            .collect()
    }

    fn run(&self, fault: &mut dyn FnMut(Hop, &mut Flight)) -> Result<Aggregate> {
        let mut clients = self.clients();
        let mut server = Server::new(self.params.clone());
        let mut up: Flight = clients
            .iter_mut()
            .map(|c| (c.id(), c.advertise_keys().unwrap()))
            .collect();
        for stage in 0..=LAST {
            fault(Hop::Up(stage), &mut up);
            for (_, m) in &up {
                if let Err(e) = server.receive(m) {
                    assert!(matches!(e, Error::Data { .. }), "untyped refusal {e:?}");
                }
            }
            if stage == LAST {
                break;
            }
            let mut down = server.advance()?;
            fault(Hop::Down(stage + 1), &mut down);
            up = down
                .iter()
                .filter_map(|(to, m)| {
                    let c = clients.get_mut(*to as usize)?;
                    let reply = match stage {
                        0 => c.share_keys(m),
                        1 => c.masked_input(m),
                        2 => c.attest(m),
                        _ => c.unmask(m),
                    };
                    if let Err(e) = &reply {
                        assert!(
                            matches!(e, Error::Data { .. } | Error::NoRelease { .. }),
                            "untyped refusal {e:?}"
                        );
                    }
                    reply.ok().map(|r| (*to, r))
                })
                .collect();
        }
        server.finish()
    }

    /// Checks the outcome: the exact sum of the reported survivors (at least t of them), or a
    /// typed refusal. Returns true if a sum was released.
    fn sound(&self, out: &Result<Aggregate>, what: &str) -> bool {
        match out {
            Ok(agg) => {
                assert!(
                    agg.survivors.len() >= self.params.min_survivors(),
                    "{what}: released with {} survivors",
                    agg.survivors.len()
                );
                assert_eq!(
                    agg.sum,
                    plain_sum(&self.inputs, &agg.survivors),
                    "{what}: WRONG SUM over {:?}",
                    agg.survivors
                );
                true
            }
            Err(Error::NoRelease { .. } | Error::Data { .. }) => false,
            Err(e) => panic!("{what}: untyped refusal {e:?}"),
        }
    }

    fn all(&self) -> Vec<u32> {
        (0..self.params.clients() as u32).collect()
    }
}

/// Rewrites the message `bytes` with `edit` applied to its decoded form.
fn edit(bytes: &[u8], edit: impl FnOnce(&mut Message)) -> Vec<u8> {
    let mut m = Message::decode(bytes).unwrap();
    edit(&mut m);
    m.encode()
}

fn position(flight: &Flight, client: u32) -> usize {
    flight.iter().position(|(c, _)| *c == client).unwrap()
}

#[test]
fn a_bit_flip_anywhere_in_any_message_gives_the_exact_sum_or_a_refusal() {
    for s in [
        Setup::complete(40, 5, 3),
        Setup::with(SecAggParams::sparse(41, 8, 3, 3, 4, 3, 7).unwrap(), 41),
    ] {
        let mut released = 0;
        let mut refused = 0;
        for hop in HOPS {
            let len = {
                let mut len = 0;
                s.run(&mut |h, f| {
                    if h == hop {
                        len = f[1].1.len();
                    }
                })
                .unwrap();
                len
            };
            for byte in 0..len {
                let bit = (byte * 5 + 3) % 8;
                let out = s.run(&mut |h, f| {
                    if h == hop {
                        f[1].1[byte] ^= 1 << bit;
                    }
                });
                if s.sound(&out, &format!("{hop:?}, byte {byte} bit {bit}")) {
                    released += 1;
                } else {
                    refused += 1;
                }
            }
        }
        // Both outcomes occur (flips in the header of a message make its sender or recipient a
        // dropout and the others still sum; flips in a masked input are refused).
        assert!(released > 0 && refused > 0, "{released} {refused}");
    }
}

#[test]
fn a_tampered_masked_input_is_refused_not_summed() {
    // Regression: the server summed whatever arrived as a masked input.
    let s = Setup::complete(42, 4, 3);
    for word in 0..3 {
        let out = s.run(&mut |h, f| {
            if h == Hop::Up(2) {
                f[2].1 = edit(&f[2].1, |m| {
                    if let Body::MaskedInput { y, .. } = &mut m.body {
                        y[word] = y[word].wrapping_add(1);
                    }
                });
            }
        });
        assert!(
            matches!(&out, Err(Error::NoRelease { reason }) if reason.contains("client 2")
                && reason.contains("authentication")),
            "{out:?}"
        );
    }
}

#[test]
fn a_tampered_self_seed_share_is_refused_not_summed() {
    // Regression: a wrong share of b_j reconstructed a wrong self-mask, summed unchecked.
    let s = Setup::complete(43, 4, 3);
    let out = s.run(&mut |h, f| {
        if h == Hop::Up(LAST) {
            f[0].1 = edit(&f[0].1, |m| {
                if let Body::UnmaskShares { seed_shares, .. } = &mut m.body {
                    seed_shares[1].1.y[0] ^= 1;
                }
            });
        }
    });
    assert!(
        matches!(&out, Err(Error::NoRelease { reason }) if reason.contains("authentication")),
        "{out:?}"
    );
}

#[test]
fn replays_from_an_earlier_round_or_stage_and_duplicates_cost_nothing() {
    let old = Setup::complete(50, 5, 3);
    let mut recorded: Vec<(Hop, Flight)> = Vec::new();
    old.run(&mut |h, f| recorded.push((h, f.clone()))).unwrap();
    let s = Setup::complete(51, 5, 3);
    for (k, hop) in HOPS.iter().enumerate() {
        // Added in front of the genuine messages: the previous round's messages of this hop,
        // this round's messages of the previous stage (same direction), and a copy of each
        // genuine message. All are refused and the genuine ones still work.
        let mut earlier: Flight = Vec::new();
        let out = s.run(&mut |h, f| {
            if h == *hop {
                let mut injected = recorded[k].1.clone();
                injected.append(&mut earlier.clone());
                let genuine = f.clone();
                for (c, m) in genuine.iter() {
                    injected.push((*c, m.clone()));
                }
                injected.append(&mut f.clone());
                *f = injected;
            }
            if k >= 2 && h == HOPS[k - 2] {
                earlier = f.clone();
            }
        });
        let agg = out.unwrap_or_else(|e| panic!("{hop:?}: {e}"));
        assert_eq!(agg.survivors, s.all(), "{hop:?}");
        assert_eq!(agg.sum, plain_sum(&s.inputs, &s.all()));
        // In place of the genuine message of client 1: it is a dropout, the rest still sum.
        let out = s.run(&mut |h, f| {
            if h == *hop {
                let i = position(f, 1);
                f[i].1 = recorded[k].1[i].1.clone();
            }
        });
        assert!(
            s.sound(&out, &format!("{hop:?} replaced")),
            "{hop:?}: {out:?}"
        );
    }
}

#[test]
fn reordered_and_late_messages_give_the_exact_sum() {
    let s = Setup::complete(52, 5, 3);
    // Every flight reversed, and the lists inside each message reversed too.
    let out = s.run(&mut |_, f| {
        f.reverse();
        for (_, m) in f.iter_mut() {
            *m = edit(m, |m| match &mut m.body {
                Body::Keys(v) => v.reverse(),
                Body::EncryptedShares(v) | Body::ForwardedShares(v) => v.reverse(),
                Body::Attestations(v) | Body::ForwardedAttestations(v) => v.reverse(),
                Body::UnmaskRequest { survivors, dropped } => {
                    survivors.reverse();
                    dropped.reverse();
                }
                Body::UnmaskShares {
                    seed_shares,
                    key_shares,
                } => {
                    seed_shares.reverse();
                    key_shares.reverse();
                }
                Body::AdvertiseKeys { .. } | Body::MaskedInput { .. } => {}
            })
        }
    });
    assert_eq!(out.unwrap().sum, plain_sum(&s.inputs, &s.all()));
    // Client 3's message of stage s arrives only in stage s + 1: refused as late, client 3 is a
    // dropout of stage s, the others sum exactly (a late attestation leaves client 3's masked
    // input in the sum: it only does not answer the unmask request).
    for stage in 0..LAST {
        let mut held: Option<(u32, Vec<u8>)> = None;
        let out = s.run(&mut |h, f| {
            if h == Hop::Up(stage) {
                held = Some(f.remove(position(f, 3)));
            } else if h == Hop::Up(stage + 1) {
                f.insert(0, held.take().unwrap());
            }
        });
        let agg = out.unwrap();
        let expected = if stage == 3 {
            s.all()
        } else {
            vec![0, 1, 2, 4]
        };
        assert_eq!(agg.survivors, expected, "stage {stage}");
        assert!(s.sound(&Ok(agg), "late"));
    }
}

#[test]
fn a_message_claiming_another_senders_id_never_gives_a_wrong_sum() {
    let s = Setup::complete(53, 5, 3);
    for stage in 0..=LAST {
        // Client 4's message of this stage, relabelled as client 1's and delivered first (the
        // share index x follows the claimed id, as a forger would set it).
        let out = s.run(&mut |h, f| {
            if h == Hop::Up(stage) {
                let forged = edit(&f[position(f, 4)].1, |m| {
                    m.header.from = 1;
                    if let Body::UnmaskShares {
                        seed_shares,
                        key_shares,
                    } = &mut m.body
                    {
                        for (_, sh) in seed_shares.iter_mut().chain(key_shares.iter_mut()) {
                            sh.x = 2;
                        }
                    }
                    if let Body::EncryptedShares(v) = &mut m.body {
                        v.retain(|(to, _)| *to != 1);
                    }
                });
                f.insert(0, (1, forged));
            }
        });
        s.sound(&out, &format!("stage {stage}"));
    }
    // Regression: a masked input forged under client 1's id, with the neighbour list client 1
    // was actually sent, was summed in place of client 1's.
    let out = s.run(&mut |h, f| {
        if h == Hop::Up(2) {
            let forged = edit(&f[position(f, 1)].1, |m| {
                if let Body::MaskedInput { y, .. } = &mut m.body {
                    y.iter_mut().for_each(|v| *v = 7);
                }
            });
            f.insert(0, (1, forged));
        }
    });
    assert!(
        matches!(&out, Err(Error::NoRelease { reason }) if reason.contains("client 1")),
        "{out:?}"
    );
}

#[test]
fn a_server_showing_two_clients_different_mask_keys_is_caught_by_both() {
    // Regression: client 0 was shown client 2's mask key as client 1's; clients 0 and 1 then
    // derived different pairwise masks, which did not cancel: a wrong sum.
    let s = Setup::complete(54, 5, 3);
    let mut key2 = [0u8; 32];
    let out = s.run(&mut |h, f| {
        if h == Hop::Down(1) {
            let i = position(f, 0);
            f[i].1 = edit(&f[i].1, |m| {
                let Body::Keys(list) = &mut m.body else {
                    unreachable!("a key list")
                };
                key2 = list.iter().find(|k| k.id == 2).unwrap().mask_pk;
                let k1: &mut PublicKeys = list.iter_mut().find(|k| k.id == 1).unwrap();
                k1.mask_pk = key2;
            });
        }
    });
    assert_eq!(out.unwrap().survivors, vec![2, 3, 4]);
}

#[test]
fn withheld_or_one_sided_shares_give_the_exact_sum() {
    let s = Setup::complete(55, 5, 3);
    // Regression: client 1's ciphertext to client 0 was lost on the way. Client 0 masked
    // without client 1, client 1 with client 0: their masks did not cancel, a wrong sum. Now
    // client 0's masked input names the shares it got, which are not those the server sent:
    // refused, client 0 is a dropout and its mask with client 1 is removed.
    let out = s.run(&mut |h, f| {
        if h == Hop::Down(2) {
            let i = position(f, 0);
            f[i].1 = edit(&f[i].1, |m| {
                if let Body::ForwardedShares(v) = &mut m.body {
                    v.retain(|(from, _)| *from != 1);
                }
            });
        }
    });
    let agg = out.unwrap();
    assert_eq!(agg.survivors, vec![1, 2, 3, 4]);
    assert!(s.sound(&Ok(agg), "lost"));
    // Regression: client 4 addressed its shares to all neighbours but client 0, then dropped.
    // The server removed 4's mask from client 0, which had never added it.
    let out = s.run(&mut |h, f| {
        if h == Hop::Up(1) {
            let i = position(f, 4);
            f[i].1 = edit(&f[i].1, |m| {
                if let Body::EncryptedShares(v) = &mut m.body {
                    v.retain(|(to, _)| *to != 0);
                }
            });
        }
        if h == Hop::Up(2) {
            f.retain(|(c, _)| *c != 4);
        }
    });
    let agg = out.unwrap();
    assert_eq!(agg.survivors, vec![0, 1, 2, 3]);
    assert!(s.sound(&Ok(agg), "one-sided, dropped"));
    // Regression: the same, but client 4 stays. Client 4 masked with client 0 (it got 0's
    // share), client 0 not with 4: client 4's masked input is set aside (4 is treated as
    // dropped), and the others sum exactly.
    let out = s.run(&mut |h, f| {
        if h == Hop::Up(1) {
            let i = position(f, 4);
            f[i].1 = edit(&f[i].1, |m| {
                if let Body::EncryptedShares(v) = &mut m.body {
                    v.retain(|(to, _)| *to != 0);
                }
            });
        }
    });
    let agg = out.unwrap();
    assert_eq!(agg.survivors, vec![0, 1, 2, 3]);
    assert!(s.sound(&Ok(agg), "one-sided, stayed"));
    // A masked input whose neighbour list differs from the shares it was sent is refused.
    let out = s.run(&mut |h, f| {
        if h == Hop::Up(2) {
            f[0].1 = edit(&f[0].1, |m| {
                if let Body::MaskedInput { live, .. } = &mut m.body {
                    live.pop();
                }
            });
        }
    });
    assert_eq!(out.unwrap().survivors, vec![1, 2, 3, 4]);
}

/// What a malicious server tells the clients: `withhold[v]` lists the clients whose stage-1
/// ciphertexts it does not forward to client v (v then masks against the others only), and
/// `told[v]` is the survivor set it shows client v (the dropped list is the rest of what v
/// holds, as a client requires). It forwards every attestation to its recipient.
struct Lies {
    withhold: BTreeMap<u32, Vec<u32>>,
    told: BTreeMap<u32, Vec<u32>>,
}

impl Lies {
    /// The owners whose shares client `v` holds (itself included).
    fn held(&self, v: u32, n: u32) -> Vec<u32> {
        let hidden = self.withhold.get(&v).map(Vec::as_slice).unwrap_or(&[]);
        (0..n).filter(|j| !hidden.contains(j)).collect()
    }
}

/// The classic split: the clients in `told_dropped` are told that `victim` dropped, everyone
/// else that all survived.
fn split(n: u32, victim: u32, told_dropped: &[u32]) -> Lies {
    let told = (0..n)
        .map(|v| {
            let set = (0..n)
                .filter(|&c| !(told_dropped.contains(&v) && c == victim))
                .collect();
            (v, set)
        })
        .collect();
    Lies {
        withhold: BTreeMap::new(),
        told,
    }
}

/// What the server collects: every masked input (y, neighbour list), the mask public keys, and
/// every share revealed at unmasking, by owner.
#[derive(Default)]
struct Loot {
    masked: BTreeMap<u32, (Vec<u32>, Vec<u32>)>,
    mask_pks: BTreeMap<u32, [u8; 32]>,
    seeds: BTreeMap<u32, Vec<Share>>,
    keys: BTreeMap<u32, Vec<Share>>,
}

impl Loot {
    /// How many shares of `owner`'s self-mask seed (`seed`) or mask key reached the server.
    fn count(&self, owner: u32, seed: bool) -> usize {
        let m = if seed { &self.seeds } else { &self.keys };
        m.get(&owner).map_or(0, Vec::len)
    }
}

impl Setup {
    /// Runs a round against the malicious server of `lies`: stages 0 and 1 are relayed
    /// honestly, then it hides shares, shows each client its own survivor set, and keeps
    /// everything the clients send. Clients that refuse simply answer nothing.
    fn attack(&self, lies: &Lies) -> Loot {
        let n = self.params.clients() as u32;
        let round = self.params.round();
        let mut clients = self.clients();
        let mut server = Server::new(self.params.clone());
        let mut loot = Loot::default();
        for c in clients.iter_mut() {
            let m = c.advertise_keys().unwrap();
            if let Body::AdvertiseKeys { mask_pk, .. } = Message::decode(&m).unwrap().body {
                loot.mask_pks.insert(c.id(), mask_pk);
            }
            server.receive(&m).unwrap();
        }
        for (to, m) in server.advance().unwrap() {
            let reply = clients[to as usize].share_keys(&m).unwrap();
            server.receive(&reply).unwrap();
        }
        for (to, m) in server.advance().unwrap() {
            let hidden = lies.withhold.get(&to).cloned().unwrap_or_default();
            let m = edit(&m, |m| {
                if let Body::ForwardedShares(v) = &mut m.body {
                    v.retain(|(from, _)| !hidden.contains(from));
                }
            });
            if let Ok(reply) = clients[to as usize].masked_input(&m) {
                if let Body::MaskedInput { y, live, .. } = Message::decode(&reply).unwrap().body {
                    loot.masked.insert(to, (y, live));
                }
            }
        }
        let mut inbox: BTreeMap<u32, Vec<(u32, [u8; TAG_LEN])>> = BTreeMap::new();
        for v in 0..n {
            let survivors = lies.told[&v].clone();
            let dropped = lies
                .held(v, n)
                .into_iter()
                .filter(|j| !survivors.contains(j))
                .collect();
            let body = Body::UnmaskRequest { survivors, dropped };
            let request = Message::new(round, SERVER, v, body).encode();
            if let Ok(reply) = clients[v as usize].attest(&request) {
                if let Body::Attestations(tags) = Message::decode(&reply).unwrap().body {
                    for (to, tag) in tags {
                        inbox.entry(to).or_default().push((v, tag));
                    }
                }
            }
        }
        for v in 0..n {
            let body = Body::ForwardedAttestations(inbox.remove(&v).unwrap_or_default());
            let forwarded = Message::new(round, SERVER, v, body).encode();
            if let Ok(reply) = clients[v as usize].unmask(&forwarded) {
                if let Body::UnmaskShares {
                    seed_shares,
                    key_shares,
                } = Message::decode(&reply).unwrap().body
                {
                    for (o, sh) in seed_shares {
                        loot.seeds.entry(o).or_default().push(sh);
                    }
                    for (o, sh) in key_shares {
                        loot.keys.entry(o).or_default().push(sh);
                    }
                }
            }
        }
        loot
    }

    /// The victim's input, if the loot holds its masked input, `threshold` shares of its
    /// self-mask seed, and for each neighbour it masked against `threshold` shares of its own
    /// or of that neighbour's mask key: x = y − PRG(b) ∓ PRG(s_ij).
    fn recover(&self, loot: &Loot, victim: u32) -> Option<Vec<u32>> {
        let t = self.params.threshold();
        let secret = |m: &BTreeMap<u32, Vec<Share>>, owner: u32| {
            let shares = m.get(&owner)?;
            (shares.len() >= t).then(|| reconstruct(&shares[..t]))?
        };
        let (y, live) = loot.masked.get(&victim)?;
        let mut x = y.clone();
        apply_mask(&mut x, &secret(&loot.seeds, victim)?, false);
        for &j in live {
            // s_ij from either end's mask secret key and the other end's public key.
            let (sk, me, other) = match secret(&loot.keys, victim) {
                Some(sk) => (sk, victim, j),
                None => (secret(&loot.keys, j)?, j, victim),
            };
            let pk = PeerKey::parse(&loot.mask_pks[&other])?;
            let sk = StaticSecret::from(sk);
            let seed =
                &pairwise_keys(Purpose::Mask, &sk, me, &[(other, &pk)], self.params.round())[0];
            // The victim added PRG(s_ij) if victim < j and subtracted it otherwise: undo it.
            apply_mask(&mut x, seed, victim > j);
        }
        Some(x)
    }
}

#[test]
fn a_server_splitting_the_unmask_requests_learns_an_input_only_with_a_minority_threshold() {
    // The deliberately wrong variant: the complete graph of n = 5 with Shamir threshold
    // t = 2 ≤ n/2, what `SecAggParams::complete` built for t = 2 before the threshold became a
    // majority. The server tells clients 2 and 3 that client 4 dropped and the others that all
    // survived: 0, 1 and 4 reveal shares of b_4, 2 and 3 shares of mask_sk_4 (each group
    // attests its own set among itself and reaches the quorum of 2), and x_4 comes out exactly.
    let weak = SecAggParams {
        threshold: 2,
        ..SecAggParams::complete(57, 5, 3, 2).unwrap()
    };
    let weak = Setup::with(weak, 57);
    let loot = weak.attack(&split(5, 4, &[2, 3]));
    assert_eq!((loot.count(4, true), loot.count(4, false)), (3, 2));
    assert_eq!(weak.recover(&loot, 4), Some(weak.inputs[4].clone()));
    // Every complete-graph configuration of n = 5 (t = 2..=5, threshold max(t, 3)) and every
    // split of clients 0..=3 into "told 4 survived" and "told 4 dropped": fewer than threshold
    // shares of b_4 or of mask_sk_4 reach the server, and x_4 stays hidden.
    for t in 2..=5 {
        let s = Setup::complete(58 + t as u64, 5, t);
        let threshold = s.params.threshold();
        assert_eq!(threshold, t.max(3));
        for mask in 0u32..16 {
            let told_dropped: Vec<u32> = (0..4).filter(|c| mask >> c & 1 == 1).collect();
            let loot = s.attack(&split(5, 4, &told_dropped));
            let (seeds, keys) = (loot.count(4, true), loot.count(4, false));
            assert!(
                seeds < threshold || keys < threshold,
                "t = {t}, {told_dropped:?}: {seeds} {keys}"
            );
            assert_eq!(s.recover(&loot, 4), None, "t = {t}, {told_dropped:?}");
        }
    }
}

/// The shares the clients would reveal if each answered the survivor set it was shown at once,
/// as they did before the consistency stage (the old client's rule: its set must contain it,
/// have at least t members and be a subset of what it holds; then the seed share of every
/// listed survivor and the key share of every other owner it holds): (owner, seed?) → count.
fn revealed_without_consistency(s: &Setup, lies: &Lies) -> BTreeMap<(u32, bool), usize> {
    let n = s.params.clients() as u32;
    let mut count = BTreeMap::new();
    for v in 0..n {
        let (told, held) = (&lies.told[&v], lies.held(v, n));
        if !told.contains(&v)
            || told.len() < s.params.min_survivors()
            || told.iter().any(|c| !held.contains(c))
        {
            continue;
        }
        for owner in held {
            *count.entry((owner, told.contains(&owner))).or_default() += 1;
        }
    }
    count
}

#[test]
fn a_server_hiding_shares_and_showing_each_client_its_own_survivor_set_gets_nothing() {
    // n = 5, t = 3 (threshold 3, a majority). The server forwards to client 4 the shares of
    // clients 0 and 1 only, so y_4 is masked against 0 and 1 only, and shows each client a
    // survivor set of its own, chosen so that b_4, mask_sk_0 and mask_sk_1 are each revealed by
    // three clients while no client reveals both shares of any owner: y_4 minus those masks is
    // x_4. The majority threshold alone does not prevent this.
    let s = Setup::complete(60, 5, 3);
    let lies = Lies {
        withhold: [(4, vec![2, 3])].into(),
        told: [
            (0, vec![0, 2, 4]),
            (1, vec![1, 2, 4]),
            (2, vec![2, 3, 4]),
            (3, vec![2, 3, 4]),
            (4, vec![0, 1, 4]),
        ]
        .into(),
    };
    let old = revealed_without_consistency(&s, &lies);
    for needed in [(4, true), (0, false), (1, false)] {
        assert!(old[&needed] >= 3, "{needed:?}: {old:?}");
    }
    // With the consistency stage no client sees a quorum of attestations of its own set, so
    // nobody reveals anything.
    let loot = s.attack(&lies);
    assert_eq!(loot.masked[&4].1, vec![0, 1]);
    assert!(loot.seeds.is_empty() && loot.keys.is_empty());
    assert_eq!(s.recover(&loot, 4), None);
    // The same server showing everyone the same set gets the honest outcome only: client 4 does
    // not attest a set naming 2 or 3 (it holds no share of theirs), the others attest the full
    // set, and the server learns the seeds of all five and no mask key.
    let one_set = Lies {
        told: (0..5).map(|v| (v, (0..5).collect())).collect(),
        ..lies
    };
    let loot = s.attack(&one_set);
    assert!(loot.keys.is_empty());
    assert_eq!(s.recover(&loot, 4), None);
}

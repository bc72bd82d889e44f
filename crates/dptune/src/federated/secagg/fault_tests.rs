//! Fault injection at the protocol level: the real client and server state machines and the
//! real wire encoding, with every message in flight exposed to a hook that flips bits, replays,
//! duplicates, reorders, delays, forges senders, or (as a malicious server) shows clients
//! inconsistent views. Every run must end in the exact sum of the clients the server reports as
//! survivors, or in a typed refusal (`Error::NoRelease` or `Error::Data`); never a wrong sum, a
//! panic or a hang (the driver is a straight line of at most four stages).

use super::tests::{inputs, plain_sum};
use super::wire::{Body, Message, PublicKeys};
use super::*;

/// A message hop: client → server (`Up`) or server → client (`Down`) in stage s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hop {
    Up(usize),
    Down(usize),
}

/// All seven hops in protocol order.
const HOPS: [Hop; 7] = [
    Hop::Up(0),
    Hop::Down(1),
    Hop::Up(1),
    Hop::Down(2),
    Hop::Up(2),
    Hop::Down(3),
    Hop::Up(3),
];

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
    fn run(&self, fault: &mut dyn FnMut(Hop, &mut Flight)) -> Result<Aggregate> {
        let n = self.params.clients();
        let mut rng = SecureRng::seeded(self.seed);
        let streams = rng.streams();
        let mut clients: Vec<Client> = (0..n)
            .map(|i| {
                Client::new(
                    i,
                    self.params.clone(),
                    self.inputs[i].clone(),
                    streams.get(i as u64),
                )
                .unwrap()
            })
            .collect();
        let mut server = Server::new(self.params.clone());
        let mut up: Flight = clients
            .iter_mut()
            .map(|c| (c.id(), c.advertise_keys().unwrap()))
            .collect();
        for stage in 0..4 {
            fault(Hop::Up(stage), &mut up);
            for (_, m) in &up {
                if let Err(e) = server.receive(m) {
                    assert!(matches!(e, Error::Data { .. }), "untyped refusal {e:?}");
                }
            }
            if stage == 3 {
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
        if h == Hop::Up(3) {
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
    // dropout of stage s, the others sum exactly.
    for stage in 0..3 {
        let mut held: Option<(u32, Vec<u8>)> = None;
        let out = s.run(&mut |h, f| {
            if h == Hop::Up(stage) {
                held = Some(f.remove(position(f, 3)));
            } else if h == Hop::Up(stage + 1) {
                f.insert(0, held.take().unwrap());
            }
        });
        let agg = out.unwrap();
        assert_eq!(agg.survivors, vec![0, 1, 2, 4], "stage {stage}");
        assert!(s.sound(&Ok(agg), "late"));
    }
}

#[test]
fn a_message_claiming_another_senders_id_never_gives_a_wrong_sum() {
    let s = Setup::complete(53, 5, 3);
    for stage in 0..4 {
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

/// The shares a malicious server collects for client `victim` by telling the clients in
/// `told_dropped` that the victim dropped and everyone else that it survived (the classic
/// attack: b_victim from one group, mask_sk_victim from the other, then x = y − masks).
/// Returns (seed shares, key shares) obtained.
fn split_view_attack(s: &Setup, victim: u32, told_dropped: &[u32]) -> (usize, usize) {
    let mut seeds = 0;
    let mut keys = 0;
    let all = s.all();
    let _ = s.run(&mut |h, f| match h {
        Hop::Down(3) => {
            for (to, m) in f.iter_mut() {
                let dropped = told_dropped.contains(to);
                *m = edit(m, |m| {
                    m.body = Body::UnmaskRequest {
                        survivors: all
                            .iter()
                            .copied()
                            .filter(|&c| !(dropped && c == victim))
                            .collect(),
                        dropped: if dropped { vec![victim] } else { vec![] },
                    };
                });
            }
        }
        Hop::Up(3) => {
            for (_, m) in f.iter() {
                if let Body::UnmaskShares {
                    seed_shares,
                    key_shares,
                } = Message::decode(m).unwrap().body
                {
                    seeds += seed_shares.iter().filter(|(o, _)| *o == victim).count();
                    keys += key_shares.iter().filter(|(o, _)| *o == victim).count();
                }
            }
        }
        _ => {}
    });
    (seeds, keys)
}

#[test]
fn inconsistent_unmask_requests_reveal_at_most_one_secret_with_a_majority_threshold() {
    // n = 5, t = 3 > n/2: whatever split the server tells, it gets fewer than t shares of the
    // victim's self-mask seed or of its mask key (the victim itself only reveals its seed).
    let s = Setup::complete(56, 5, 3);
    for split in [&[0u32, 1][..], &[0, 1, 2], &[2, 3], &[0, 1, 2, 3]] {
        let (seeds, keys) = split_view_attack(&s, 4, split);
        assert!(seeds < 3 || keys < 3, "{split:?}: {seeds} {keys}");
        assert_eq!(seeds + keys, 5, "{split:?}");
    }
    // The documented limit (module doc): with t ≤ n/2 there is no such guarantee without a
    // consistency round. n = 5, t = 2: the split {0, 1} | {2, 3, 4} yields both secrets.
    let weak = Setup::complete(57, 5, 2);
    let (seeds, keys) = split_view_attack(&weak, 4, &[0, 1]);
    assert!(seeds >= 2 && keys >= 2, "{seeds} {keys}");
}

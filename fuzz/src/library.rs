//! In-process fuzz entry points into the `dptune` library, one per input kind.
//!
//! Each function takes arbitrary bytes and drives one public parser with them. A parser may
//! refuse the input with an error (that is the point); it must never panic, so every panic
//! here is a bug. The same functions are used by the libFuzzer targets in `fuzz_targets/` and
//! by the stable replay test `crates/dptune/tests/fuzz_replay.rs`, which includes this file.

use std::sync::OnceLock;

use dptune::data::{parse_csv, Schema};
use dptune::federated::secagg::{Client, SecAggParams, Server};
use dptune::noise::SecureRng;
use dptune::select::Goal;
use dptune::study::{
    run_study, table_from_csv, table_from_values, Columns, ScoreModel, StudyOptions,
};

/// Separates the schema TOML from the CSV text in a `csv_schema` input.
const SEPARATOR: &[u8] = b"\n---\n";

/// The schema used when a `csv_schema` input has no [`SEPARATOR`]: a class label and one
/// feature of each kind, so the CSV half alone reaches every encoding path.
const DEFAULT_SCHEMA: &str = r#"
[label]
kind = "class"
column = "y"
values = ["no", "yes"]

[[feature]]
kind = "numeric"
column = "a"
low = 0
high = 1
transform = "log1p"

[[feature]]
kind = "categorical"
column = "c"
values = ["r", "g"]
"#;

/// CSV + schema loader: `SCHEMA_TOML \n---\n CSV`, or CSV alone under [`DEFAULT_SCHEMA`].
/// The schema goes through the same serde path as `dptune tune --schema`.
pub fn csv_schema(data: &[u8]) {
    let (schema_text, csv) = match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (
            String::from_utf8_lossy(&data[..at]).into_owned(),
            &data[at + SEPARATOR.len()..],
        ),
        None => (DEFAULT_SCHEMA.to_owned(), data),
    };
    let Ok(schema) = toml::from_str::<Schema>(&schema_text) else {
        return;
    };
    if schema.validate().is_ok() {
        let _ = (schema.dim(), schema.max_norm());
    }
    let _ = parse_csv(csv, "fuzz", &schema);
}

/// Study tables. The first byte picks the goal (bit 0) and the format (bit 1): CSV, whose first
/// line names the score column and optionally, after a comma, the test column; or a JSON object
/// `{configuration: score}` as `dptune study` reads it. A table that loads is run through a
/// small study (two repetitions at ε = 1), as `dptune study` does.
pub fn study(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let goal = if mode & 1 == 0 {
        Goal::Maximize
    } else {
        Goal::Minimize
    };
    let table = if mode & 2 == 0 {
        let text = String::from_utf8_lossy(rest);
        let (first, csv) = text.split_once('\n').unwrap_or((&text, ""));
        let (score, test) = match first.split_once(',') {
            Some((s, t)) => (s.to_owned(), Some(t.to_owned())),
            None => (first.to_owned(), None),
        };
        table_from_csv(csv, "fuzz", &Columns { score, test, goal })
    } else {
        let Ok(serde_json::Value::Object(obj)) = serde_json::from_slice(rest) else {
            return;
        };
        let Some(scores) = obj.values().map(serde_json::Value::as_f64).collect() else {
            return;
        };
        table_from_values(scores, goal)
    };
    let Ok(table) = table else {
        return;
    };
    let model = ScoreModel::new(100, 1.0, true).expect("valid fuzz model");
    let options = StudyOptions {
        epsilons: vec![1.0],
        repetitions: 2,
        ..StudyOptions::default()
    };
    let _ = run_study(&table, &model, &options, None);
}

/// Clients, dimension and threshold of the fuzzed SecAgg round: small, so that an honest
/// prefix of the protocol costs little per input.
const CLIENTS: usize = 3;
const DIM: usize = 2;
const THRESHOLD: usize = 2;

/// An honest round advanced by some stages: the clients, the server, and the messages each
/// client received from the server's last `advance` (or sent in the last stage).
struct Round {
    clients: Vec<Client>,
    server: Server,
    to_clients: Vec<Option<Vec<u8>>>,
}

fn params() -> SecAggParams {
    SecAggParams::complete(7, CLIENTS, DIM, THRESHOLD).expect("valid fuzz parameters")
}

/// Client `i`'s answer in `stage` (0 keys, 1 shares, 2 masked input, 3 unmask) to `msg`.
fn answer(c: &mut Client, stage: u8, msg: Option<&[u8]>) -> Option<Vec<u8>> {
    match (stage, msg) {
        (0, _) => c.advertise_keys().ok(),
        (1, Some(m)) => c.share_keys(m).ok(),
        (2, Some(m)) => c.masked_input(m).ok(),
        (3, Some(m)) => c.unmask(m).ok(),
        _ => None,
    }
}

/// Runs `stages` complete honest stages (all clients answer, the server advances).
fn honest(stages: u8) -> Round {
    let streams = SecureRng::seeded(17).streams();
    let clients = (0..CLIENTS)
        .map(|i| {
            let input = vec![i as u32 + 1; DIM];
            Client::new(i, params(), input, streams.get(i as u64)).expect("valid client")
        })
        .collect();
    let mut round = Round {
        clients,
        server: Server::new(params()),
        to_clients: vec![None; CLIENTS],
    };
    for stage in 0..stages {
        for (c, m) in round.clients.iter_mut().zip(&round.to_clients) {
            let reply = answer(c, stage, m.as_deref()).expect("honest client answers");
            round
                .server
                .receive(&reply)
                .expect("honest message accepted");
        }
        round.to_clients = vec![None; CLIENTS];
        for (to, bytes) in round.server.advance().expect("honest round advances") {
            round.to_clients[to as usize] = Some(bytes);
        }
    }
    round
}

/// The fuzzed message: byte 0 odd → `rest` patches `honest` (triples of little-endian offset
/// and XOR mask; a trailing byte truncates); even → `rest` verbatim.
fn fuzzed(mode: u8, rest: &[u8], honest: Option<&[u8]>) -> Vec<u8> {
    match honest {
        Some(h) if mode & 1 == 1 && !h.is_empty() => {
            let mut m = h.to_vec();
            let mut triples = rest.chunks_exact(3);
            for t in &mut triples {
                let at = u16::from_le_bytes([t[0], t[1]]) as usize % m.len();
                m[at] ^= t[2];
            }
            if let [cut, ..] = triples.remainder() {
                m.truncate(*cut as usize * m.len() / 256);
            }
            m
        }
        _ => rest.to_vec(),
    }
}

/// SecAgg client decoder: byte 0 picks the stage (1 keys list, 2 forwarded shares, 3 unmask
/// request) and byte 1 the mode of [`fuzzed`]; client 0 receives the fuzzed server message
/// after an honest prefix.
pub fn secagg_client(data: &[u8]) {
    let [stage, mode, rest @ ..] = data else {
        return;
    };
    let stage = stage % 3 + 1;
    let mut round = honest(stage - 1);
    let msg = match stage {
        1 => {
            // The keys list is the server's answer to the advertised keys.
            for c in &mut round.clients {
                let reply = c.advertise_keys().expect("fresh client");
                round.server.receive(&reply).expect("honest keys accepted");
            }
            let out = round.server.advance().expect("keys stage advances");
            let honest = out.into_iter().find(|(to, _)| *to == 0).map(|(_, b)| b);
            fuzzed(*mode, rest, honest.as_deref())
        }
        _ => fuzzed(*mode, rest, round.to_clients[0].as_deref()),
    };
    let _ = answer(&mut round.clients[0], stage, Some(&msg));
}

/// Every client's honest message in each stage (0 keys … 3 unmask) of the fuzzed round,
/// computed once: the server target replays them into a fresh server, which skips the clients'
/// key generation and encryption on every input.
fn honest_messages() -> &'static [Vec<Vec<u8>>] {
    static MESSAGES: OnceLock<Vec<Vec<Vec<u8>>>> = OnceLock::new();
    MESSAGES.get_or_init(|| {
        let mut round = honest(0);
        let mut all = Vec::new();
        for stage in 0..4 {
            let sent: Vec<Vec<u8>> = round
                .clients
                .iter_mut()
                .zip(&round.to_clients)
                .map(|(c, m)| answer(c, stage, m.as_deref()).expect("honest client answers"))
                .collect();
            for m in &sent {
                round.server.receive(m).expect("honest message accepted");
            }
            if stage < 3 {
                round.to_clients = vec![None; CLIENTS];
                for (to, bytes) in round.server.advance().expect("honest round advances") {
                    round.to_clients[to as usize] = Some(bytes);
                }
            }
            all.push(sent);
        }
        all
    })
}

/// SecAgg server decoder: byte 0 picks the stage (0 keys … 3 unmask) and byte 1 the mode of
/// [`fuzzed`]; the earlier stages are honest, in the picked stage client 0's message is
/// replaced by the fuzzed one and the others are honest, then the server closes the stage.
pub fn secagg_server(data: &[u8]) {
    let [stage, mode, rest @ ..] = data else {
        return;
    };
    let stage = (stage % 4) as usize;
    let messages = honest_messages();
    let mut server = Server::new(params());
    for sent in &messages[..stage] {
        for m in sent {
            server.receive(m).expect("honest message accepted");
        }
        server.advance().expect("honest round advances");
    }
    let _ = server.receive(&fuzzed(*mode, rest, Some(&messages[stage][0])));
    for m in &messages[stage][1..] {
        let _ = server.receive(m);
    }
    if stage == 3 {
        let _ = server.finish();
    } else {
        let _ = server.advance();
    }
}

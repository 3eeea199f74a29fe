//! The game core's cost per move, without I/O: decide, apply (the patch from the event) and
//! the patch's encoding, over a fixed Ūnane 8x7 game. What the server spends on a move
//! beyond the sockets and the store.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use serde_json::json;
use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{SeatPlayer, Visibility};
use stoa_server::domain::setup::GameSetup;
use stoa_server::game::clock_driver::ClockDriver;
use stoa_server::game::core::{Core, Decision};
use stoa_server::game::{Act, NewGame};

const PLAYERS: [&str; 2] = ["pa", "pb"];

fn core() -> Core {
    let k = stoa_protocol::kind("unane").expect("kind");
    let options = k
        .validate_options(&json!({"width": 8, "height": 7}))
        .expect("options");
    let game = k.start(&options).expect("start");
    let tc = TimeControl::Fischer {
        initial_ms: 600_000,
        increment_ms: 2_000,
    };
    let seat = |id: &str| SeatPlayer {
        id: id.into(),
        name: id.into(),
        rating: Some(json!(1500)),
        bot: false,
    };
    let new = NewGame {
        id: "gbenchgame001".into(),
        setup: GameSetup {
            kind: k,
            options,
            clock: tc,
            start: None,
        },
        rated: false,
        visibility: Visibility::Public,
        code: None,
        players: [seat(PLAYERS[0]), seat(PLAYERS[1])],
        rematch_of: None,
        arena: None,
    };
    let clock = ClockDriver::new(tc, PLAYERS, 30_000).expect("clock");
    Core::new(new, game, clock, 1_000_000, 60_000)
}

/// A fixed game of up to `n` moves, with who plays each (chosen outside the timing).
fn script(n: usize) -> Vec<(&'static str, String)> {
    let mut core = core();
    let mut out = Vec::new();
    let mut now = 1_000_000;
    for i in 0..n {
        let legal = core.legal();
        let Some(mv) = legal.get((i * 7) % legal.len().max(1)).cloned() else {
            break;
        };
        now += 700;
        let found = PLAYERS.into_iter().find_map(|p| {
            match core.decide(
                &p.into(),
                &Act::Move {
                    mv: mv.clone(),
                    seq: None,
                },
                now,
                None,
            ) {
                Ok(Decision::Record(e)) => Some((p, e)),
                _ => None,
            }
        });
        let Some((p, e)) = found else { break };
        core.apply(&e).expect("applies");
        out.push((p, mv));
    }
    out
}

/// Plays the script through decide, apply and the patch's encoding.
fn play(core: &mut Core, script: &[(&'static str, String)]) {
    let mut now = 1_000_000;
    for (player, mv) in script {
        now += 700;
        let act = Act::Move {
            mv: mv.clone(),
            seq: None,
        };
        let Ok(Decision::Record(event)) = core.decide(&(*player).into(), &act, now, None) else {
            panic!("the script's move {mv} is decided");
        };
        let patch = core.apply(&event).expect("applies");
        // The frame's patch, encoded as the actor does (typed operations to text).
        criterion::black_box(serde_json::to_string(&patch).expect("encodes"));
    }
}

fn bench(c: &mut Criterion) {
    let script = script(40);
    c.bench_function(
        &format!("unane 8x7: {} moves, decide + apply + encode", script.len()),
        |b| b.iter_batched(core, |mut c| play(&mut c, &script), BatchSize::SmallInput),
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);

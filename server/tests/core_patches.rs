//! Property: for random games of every kind, the patches the game core computes from its
//! events turn the document at seq 0 into exactly the document a fresh build gives at every
//! seq (byte for byte after canonical encoding), and a fold of the same events from the log
//! rebuilds the same document at the same seq.

use proptest::prelude::*;
use serde_json::{json, Value};
use stoa_protocol::clock::TimeControl;
use stoa_protocol::wire::{DrawAction, SeatPlayer, Visibility};
use stoa_server::domain::setup::GameSetup;
use stoa_server::game::clock_driver::ClockDriver;
use stoa_server::game::core::{Core, Decision};
use stoa_server::game::{Act, NewGame};
use stoa_server::store::ActionRecord;

const PLAYERS: [&str; 2] = ["pa", "pb"];
const T0: u64 = 10_000_000;

/// JSON with every object's keys sorted, so equal documents encode to equal bytes.
fn canonical(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sort(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

fn options(kind: &str, variant: u8) -> Value {
    match (kind, variant % 2) {
        ("unane", 0) => json!({"width": 8, "height": 7}),
        ("unane", _) => json!({"width": 6, "height": 5}),
        ("akron", 0) => json!({"size": 4}),
        ("akron", _) => json!({"size": 5}),
        ("staku", 0) => json!({"max_stack": 2}),
        _ => json!({}),
    }
}

fn core(kind: &str, variant: u8, timed: bool) -> Core {
    let k = stoa_protocol::kind(kind).expect("kind");
    let options = k
        .validate_options(&options(kind, variant))
        .expect("options");
    let game = k.start(&options).expect("start");
    let tc = if timed {
        TimeControl::Fischer {
            initial_ms: 600_000,
            increment_ms: 2_000,
        }
    } else {
        TimeControl::None
    };
    let seat = |id: &str| SeatPlayer {
        id: id.to_string(),
        name: id.to_uppercase(),
        rating: Some(json!(1500)),
        bot: false,
    };
    let new = NewGame {
        id: "g1".into(),
        setup: GameSetup::stored(kind, &options, &serde_json::to_value(tc).expect("clock"))
            .expect("valid settings"),
        rated: true,
        visibility: Visibility::Public,
        code: None,
        players: [seat(PLAYERS[0]), seat(PLAYERS[1])],
        rematch_of: None,
        arena: None,
    };
    let clock = ClockDriver::new(tc, PLAYERS, 30_000).expect("clock");
    Core::new(new, game, clock, T0, 60_000)
}

/// The player whose turn it is (by the document: sides follow the person after a swap).
fn to_act(core: &Core) -> Option<String> {
    let doc = core.document();
    let side = doc["to_act"].as_str()?;
    doc["players"][side]["id"].as_str().map(str::to_string)
}

/// Plays a random game through `decide` + `apply`, checking the patched document after every
/// event; returns the log.
fn play(kind: &str, variant: u8, timed: bool, choices: &[u16]) -> (Core, Vec<ActionRecord>) {
    let mut core = core(kind, variant, timed);
    let mut doc = core.document();
    assert_eq!(canonical(&doc), canonical(&core.fresh_document()));
    let mut log = Vec::new();
    let mut now = T0;
    for (step, &c) in choices.iter().enumerate() {
        now += 500 + u64::from(c % 7) * 100;
        let Some(player) = to_act(&core) else {
            // Over: both ask for the rematch once, then stop.
            for p in PLAYERS {
                if let Ok(Decision::Record(e)) = core.decide(&p.into(), &Act::Rematch, now, None) {
                    commit(&mut core, &mut doc, &mut log, e);
                }
            }
            break;
        };
        let other = PLAYERS
            .iter()
            .find(|p| **p != player)
            .copied()
            .unwrap_or("pa");
        let act = match c % 41 {
            0 => Act::Draw {
                action: DrawAction::Offer,
            },
            1 => Act::Resign,
            2 if step > 4 => Act::Claim,
            _ => {
                let legal = core.legal();
                Act::Move {
                    mv: legal[usize::from(c) % legal.len()].clone(),
                    seq: Some(core.seq()),
                }
            }
        };
        let (who, act) = match act {
            // The opponent answers a draw offer, sometimes accepting it.
            Act::Draw { .. } if c % 3 == 0 => {
                if let Ok(Decision::Record(e)) = core.decide(
                    &player.as_str().into(),
                    &Act::Draw {
                        action: DrawAction::Offer,
                    },
                    now,
                    None,
                ) {
                    commit(&mut core, &mut doc, &mut log, e);
                }
                (
                    other.to_string(),
                    Act::Draw {
                        action: DrawAction::Decline,
                    },
                )
            }
            act => (player, act),
        };
        let gone = (c % 5 == 0).then_some(now - 120_000);
        match core.decide(&who.as_str().into(), &act, now, gone) {
            Ok(Decision::Record(e)) | Ok(Decision::EndInstead(e, _)) => {
                commit(&mut core, &mut doc, &mut log, e)
            }
            Ok(Decision::Unchanged) | Err(_) => {}
        }
        if c % 13 == 0 {
            // The server stops (or its store goes away) and comes back later.
            core.pause(now);
            now += 10_000;
            if let Some(e) = core.resume(now) {
                commit(&mut core, &mut doc, &mut log, e);
            }
        }
    }
    (core, log)
}

fn commit(core: &mut Core, doc: &mut Value, log: &mut Vec<ActionRecord>, event: ActionRecord) {
    assert_eq!(
        event.seq,
        core.seq() + 1,
        "events are numbered without gaps"
    );
    let patch = core.apply(&event).expect("a decided event applies");
    let patch: json_patch::Patch = serde_json::from_value(json!(patch)).expect("RFC 6902");
    json_patch::patch(doc, &patch).expect("the patch applies");
    assert_eq!(
        canonical(doc),
        canonical(&core.fresh_document()),
        "after {event:?}"
    );
    log.push(event);
}

fn check(kind: &str, variant: u8, timed: bool, choices: &[u16]) {
    let (live, log) = play(kind, variant, timed, choices);
    // Recovery: the same events folded from the log give the same document and seq.
    let mut rebuilt = core(kind, variant, timed);
    for e in &log {
        rebuilt.apply(e).expect("the log replays");
    }
    assert_eq!(rebuilt.seq(), live.seq());
    assert_eq!(canonical(&rebuilt.document()), canonical(&live.document()));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn unane(variant: u8, timed: bool, choices in prop::collection::vec(any::<u16>(), 1..160)) {
        check("unane", variant, timed, &choices);
    }

    #[test]
    fn staku(variant: u8, timed: bool, choices in prop::collection::vec(any::<u16>(), 1..160)) {
        check("staku", variant, timed, &choices);
    }

    #[test]
    fn akron(variant: u8, timed: bool, choices in prop::collection::vec(any::<u16>(), 1..160)) {
        check("akron", variant, timed, &choices);
    }

    #[test]
    fn akunur(variant: u8, timed: bool, choices in prop::collection::vec(any::<u16>(), 1..160)) {
        check("akunur", variant, timed, &choices);
    }
}

#[test]
fn a_full_game_of_each_kind_ends_and_replays() {
    for kind in ["unane", "staku", "akron", "akunur"] {
        // Long enough to reach the end of most games; random choices never resign here.
        let choices: Vec<u16> = (0..600u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 7) as u16 | 0x40)
            .filter(|c| c % 41 > 2 && c % 13 != 0)
            .collect();
        check(kind, 0, true, &choices);
    }
}

#[test]
fn a_swap_exchanges_the_seats_in_the_patch() {
    let mut core = core("unane", 0, true);
    let mut doc = core.document();
    let mut log = Vec::new();
    let first = core.legal()[0].clone();
    for (i, (who, mv)) in [("pa", first), ("pb", "swap".to_string())]
        .into_iter()
        .enumerate()
    {
        let now = T0 + 1_000 * (i as u64 + 1);
        let act = Act::Move { mv, seq: None };
        match core.decide(&who.into(), &act, now, None) {
            Ok(Decision::Record(e)) => commit(&mut core, &mut doc, &mut log, e),
            other => panic!("{other:?}"),
        }
    }
    // The person who swapped (pb) now sits on the first side.
    assert_eq!(doc["players"]["black"]["id"], "pb");
    assert_eq!(doc["players"]["white"]["id"], "pa");
    assert_eq!(doc["moves"].as_array().map(Vec::len), Some(2));
}

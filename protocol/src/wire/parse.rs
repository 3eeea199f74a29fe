//! Parsing a client text frame into a [`ClientMessage`], telling the protocol's failure
//! classes apart.

use serde::Deserialize;
use serde_json::Value;

use super::{extract_rid, move_scan, ClientMessage, ErrorCode, Rid, CLIENT_TYPES};

/// Why a client frame could not be turned into a [`ClientMessage`].
#[derive(Clone, Debug, PartialEq)]
pub struct ParseError {
    /// `bad_request` or `unknown_type`.
    pub code: ErrorCode,
    /// A message for a person.
    pub message: String,
    /// The rid, when the frame was an object with a valid one.
    pub rid: Option<Rid>,
}

/// `game.move`'s fields, read in one pass.
#[derive(Deserialize)]
struct MoveFrame<'a> {
    #[serde(borrow)]
    t: std::borrow::Cow<'a, str>,
    #[serde(default)]
    rid: Option<Rid>,
    #[serde(default)]
    game_id: Option<String>,
    #[serde(default, rename = "move")]
    mv: Option<String>,
    #[serde(default)]
    seq: Option<u64>,
}

/// A well-formed `game.move` frame, the most frequent of all, or `None` for any other frame
/// (which [`parse_client_message`] then decodes as it decodes every message).
///
/// Why a path of its own: `ClientMessage` is tagged by a member, so serde buffers every
/// member of the frame before it knows the variant (a profile of the move path had that
/// buffering at 5 % of the server's instructions); here the move's members are read
/// straight into their fields; the common shape of the frame not even through serde
/// ([`move_scan`]). Whatever this refuses is decoded the general way, so the answer to any
/// frame is the same as without it (tests hold the paths together).
fn parse_move(text: &str) -> Option<ClientMessage> {
    if let Some(msg) = move_scan::scan_move(text) {
        return Some(msg);
    }
    let f: MoveFrame<'_> = serde_json::from_str(text).ok()?;
    if f.t != "game.move" {
        return None;
    }
    Some(ClientMessage::GameMove {
        rid: f.rid,
        game_id: f.game_id?,
        mv: f.mv?,
        seq: f.seq,
    })
}

/// Parses one client text frame, telling `bad_request` (invalid JSON, not an object,
/// missing or non-string `t`, wrong field types) from `unknown_type` (a `t` not in
/// [`CLIENT_TYPES`]).
pub fn parse_client_message(text: &str) -> Result<ClientMessage, ParseError> {
    if let Some(msg) = parse_move(text) {
        return Ok(msg);
    }
    // Almost every frame is well formed: decode it straight into its type, without a
    // `Value` tree in between. Only a frame that fails is decoded again below, to tell
    // which error it gets and to find its rid.
    if let Ok(msg) = serde_json::from_str::<ClientMessage>(text) {
        return Ok(msg);
    }
    let value: Value = serde_json::from_str(text).map_err(|e| ParseError {
        code: ErrorCode::BadRequest,
        message: format!("invalid JSON: {e}"),
        rid: None,
    })?;
    let rid = extract_rid(&value);
    let Some(obj) = value.as_object() else {
        return Err(ParseError {
            code: ErrorCode::BadRequest,
            message: "a message must be a JSON object".into(),
            rid,
        });
    };
    let t = match obj.get("t") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => {
            return Err(ParseError {
                code: ErrorCode::BadRequest,
                message: "field 't' must be a string".into(),
                rid,
            })
        }
        None => {
            return Err(ParseError {
                code: ErrorCode::BadRequest,
                message: "missing field 't'".into(),
                rid,
            })
        }
    };
    if !CLIENT_TYPES.contains(&t.as_str()) {
        return Err(ParseError {
            code: ErrorCode::UnknownType,
            message: format!("unknown message type '{t}'"),
            rid,
        });
    }
    ClientMessage::deserialize(value).map_err(|e| ParseError {
        code: ErrorCode::BadRequest,
        message: format!("bad '{t}' message: {e}"),
        rid,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{ServerMessage, Visibility};
    use serde_json::json;

    /// The general decoding alone (what `parse_client_message` did before `parse_move`).
    fn parse_generally(text: &str) -> Result<ClientMessage, ParseError> {
        match serde_json::from_str::<ClientMessage>(text) {
            Ok(msg) => Ok(msg),
            Err(_) => {
                // The frame fails the fast paths too: the same error path is taken.
                assert!(parse_move(text).is_none(), "{text}");
                parse_client_message(text)
            }
        }
    }

    /// Every type the server knows, sent with nothing but its `t` and a rid, decodes as
    /// that type or is a bad request of it (a missing field), never "unknown": the list
    /// the error path checks names every message (`analysis.*` and `report` were missing).
    #[test]
    fn every_known_type_is_decoded_or_a_bad_request_never_unknown() {
        for t in CLIENT_TYPES {
            match parse_client_message(&format!(r#"{{"t":"{t}","rid":"r1"}}"#)) {
                Ok(msg) => assert_eq!(msg.type_name(), *t),
                Err(e) => {
                    assert_eq!(e.code, ErrorCode::BadRequest, "{t}: {}", e.message);
                    assert_eq!(e.rid, Some(Rid::Str("r1".into())), "{t}");
                }
            }
        }
        for t in [
            "analysis.request",
            "analysis.serve",
            "analysis.result",
            "report",
        ] {
            assert!(CLIENT_TYPES.contains(&t), "{t}");
        }
    }

    #[test]
    fn the_move_path_decodes_every_frame_as_the_general_path_does() {
        let frames = [
            r#"{"t":"game.move","game_id":"g1","move":"d4"}"#,
            r#"{"t":"game.move","rid":7,"game_id":"g1","move":"d4","seq":12}"#,
            r#"{"move":"d4","seq":null,"rid":"r\"1","game_id":"g\u0031","t":"game.move","x":[1,{"t":2}]}"#,
            r#"{"t":"game\u002emove","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1"}"#,
            r#"{"t":"game.move","move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":-1}"#,
            r#"{"t":"game.move","game_id":1,"move":"a1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":1.5}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}"#,
            r#"{"t":"game.move","game_id":"g1","game_id":"g2","move":"a1"}"#,
            r#"{"t":"game.move","t":"game.resign","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.resign","game_id":"g1","move":"a1"}"#,
            r#"{"t":"game.moves","game_id":"g1","move":"a1"}"#,
            r#"{"t":5,"game_id":"g1","move":"a1"}"#,
            r#"{"game_id":"g1","move":"a1"}"#,
            r#"[1,2]"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1""#,
            r#" { "t" : "game.move" ,"rid":"r1","game_id":"g1","move":"a1","seq":0 } "#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":01}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":1.0}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":1e2}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","seq":18446744073709551616}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":9223372036854775808}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1","rid":-3}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a\u00e9"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"é1"}"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1"}x"#,
            r#"{"t":"game.move","game_id":"g1","move":"a1",}"#,
            r#"{"t":"game.move",,"game_id":"g1","move":"a1"}"#,
            "{\"t\":\"game.move\",\"game_id\":\"g\u{1}\",\"move\":\"a1\"}",
            r#"{}"#,
        ];
        for text in frames {
            let fast = parse_client_message(text);
            let general = parse_generally(text);
            match (&fast, &general) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{text}"),
                (Err(a), Err(b)) => {
                    assert_eq!(
                        (a.code, &a.message, &a.rid),
                        (b.code, &b.message, &b.rid),
                        "{text}"
                    )
                }
                _ => panic!("{text}: {fast:?} against {general:?}"),
            }
        }
        assert_eq!(
            parse_client_message(r#"{"rid":7,"t":"game.move","game_id":"g1","move":"d4","seq":3}"#)
                .unwrap(),
            ClientMessage::GameMove {
                rid: Some(Rid::Int(7)),
                game_id: "g1".into(),
                mv: "d4".into(),
                seq: Some(3),
            }
        );
    }

    /// Frames assembled from members of every kind the move path meets (the common
    /// shape, escapes, unknown and repeated members, nulls, signs, fractions, leading zeros,
    /// long rids, odd whitespace): every one is answered exactly as the general decoding
    /// answers it.
    #[test]
    fn generated_move_frames_decode_as_the_general_path_does() {
        use proptest::prelude::*;
        use proptest::test_runner::{Config, TestRunner};
        let value = prop_oneof![
            Just(r#""game.move""#.to_string()),
            Just(r#""game\u002emove""#.to_string()),
            Just(r#""game.resign""#.to_string()),
            Just(r#""g7c2m9x4k0t8r""#.to_string()),
            Just(r#""b1-c1+d1""#.to_string()),
            Just(r#""a\"1""#.to_string()),
            Just(r#""é""#.to_string()),
            Just(format!("\"x{}\"", "r".repeat(70))),
            Just("null".to_string()),
            Just("true".to_string()),
            Just("[1,{\"t\":2}]".to_string()),
            (0u64..u64::MAX).prop_map(|n| n.to_string()),
            Just("18446744073709551616".to_string()),
            Just("9223372036854775807".to_string()),
            Just("-1".to_string()),
            Just("01".to_string()),
            Just("0".to_string()),
            Just("1.5".to_string()),
            Just("2e3".to_string()),
        ];
        // Mostly the common shape, each member drawn from plausible and odd values, in any
        // order, with now and then a member left out, repeated or unknown.
        let t = prop_oneof![
            8 => Just(r#""game.move""#.to_string()),
            1 => Just(r#""game\u002emove""#.to_string()),
            1 => Just(r#""game.resign""#.to_string()),
            1 => value.clone(),
        ];
        let text = prop_oneof![
            8 => Just(r#""g7c2m9x4k0t8r""#.to_string()),
            4 => Just(r#""b1-c1+d1""#.to_string()),
            1 => value.clone(),
        ];
        let number = prop_oneof![
            8 => (0u64..1_000_000).prop_map(|n| n.to_string()),
            1 => value.clone(),
        ];
        let optional = |v: BoxedStrategy<String>| prop::option::weighted(0.7, v);
        let extra = prop::option::weighted(
            0.2,
            (
                prop_oneof![
                    Just("x"),
                    Just("t"),
                    Just("rid"),
                    Just("game_id"),
                    Just("move"),
                    Just("seq")
                ],
                value.clone(),
            ),
        );
        let blank =
            prop_oneof![4 => Just(""), 2 => Just(" "), 1 => Just("\n\t"), 1 => Just("\u{a0}")];
        let frame = (
            prop::option::weighted(0.95, t),
            prop::option::weighted(0.95, text.clone()),
            prop::option::weighted(0.95, text),
            optional(prop_oneof![number.clone(), Just(r#""r-1""#.to_string())].boxed()),
            optional(number.boxed()),
            extra,
            prop::collection::vec(blank, 12),
            any::<prop::sample::Index>(),
        )
            .prop_map(|(t, g, m, rid, seq, extra, blanks, order)| {
                let mut members: Vec<(String, String)> = Vec::new();
                for (k, v) in [
                    ("t", t),
                    ("game_id", g),
                    ("move", m),
                    ("rid", rid),
                    ("seq", seq),
                ] {
                    if let Some(v) = v {
                        members.push((k.to_string(), v));
                    }
                }
                if let Some((k, v)) = extra {
                    let at = order.index(members.len() + 1);
                    members.insert(at, (k.to_string(), v));
                }
                let n = members.len().max(1);
                members.rotate_left(order.index(n) % n);
                let body: Vec<String> = members
                    .iter()
                    .enumerate()
                    .map(|(i, (k, v))| {
                        let (a, b) = (blanks[i % 12], blanks[(i + 5) % 12]);
                        format!("{a}\"{k}\"{b}:{a}{v}{b}")
                    })
                    .collect();
                format!("{}{{{}}}{}", blanks[11], body.join(","), blanks[10])
            });
        let mut runner = TestRunner::new(Config {
            cases: 4000,
            ..Config::default()
        });
        runner
            .run(&frame, |text| {
                let fast = parse_client_message(&text);
                let general = parse_generally(&text);
                match (&fast, &general) {
                    (Ok(a), Ok(b)) => prop_assert_eq!(a, b, "{}", text),
                    (Err(a), Err(b)) => prop_assert_eq!(
                        (a.code, &a.message, &a.rid),
                        (b.code, &b.message, &b.rid),
                        "{}",
                        text
                    ),
                    _ => prop_assert!(false, "{}: {:?} against {:?}", text, fast, general),
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn classifies_bad_frames() {
        assert_eq!(
            parse_client_message("{").unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            parse_client_message("[1]").unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            parse_client_message(r#"{"rid":1}"#).unwrap_err().code,
            ErrorCode::BadRequest
        );
        let e = parse_client_message(r#"{"t":"nope","rid":"a"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::UnknownType);
        assert_eq!(e.rid, Some(Rid::Str("a".into())));
        let e = parse_client_message(r#"{"t":"game.move","rid":3,"game_id":1,"move":"x"}"#)
            .unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(e.rid, Some(Rid::Int(3)));
        let long = "x".repeat(65);
        let e = parse_client_message(&format!(r#"{{"t":"ping","rid":"{long}"}}"#)).unwrap_err();
        assert_eq!(e.code, ErrorCode::BadRequest);
        assert_eq!(
            parse_client_message(r#"{"t":"ping","rid":1.5}"#)
                .unwrap_err()
                .code,
            ErrorCode::BadRequest
        );
    }

    #[test]
    fn parses_requests() {
        let m = parse_client_message(
            r#"{"t":"game.move","rid":"r1","game_id":"g","move":"a1","seq":4}"#,
        )
        .unwrap();
        assert_eq!(
            m,
            ClientMessage::GameMove {
                rid: Some(Rid::Str("r1".into())),
                game_id: "g".into(),
                mv: "a1".into(),
                seq: Some(4)
            }
        );
        let m = parse_client_message(r#"{"t":"hello","protocol":1}"#).unwrap();
        assert_eq!(m.type_name(), "hello");
        let m = parse_client_message(r#"{"t":"room.create","kind":"unane"}"#).unwrap();
        match m {
            ClientMessage::RoomCreate {
                visibility, side, ..
            } => {
                assert_eq!(visibility, Visibility::Private);
                assert_eq!(side, "random");
            }
            _ => panic!(),
        }
        let m =
            parse_client_message(r#"{"t":"game.draw","game_id":"g","action":"offer"}"#).unwrap();
        assert_eq!(m.type_name(), "game.draw");
        assert!(parse_client_message(r#"{"t":"game.draw","game_id":"g","action":"x"}"#).is_err());
    }

    #[test]
    fn parses_arena_requests() {
        let m = parse_client_message(
            r#"{"t":"arena.create","rid":1,"kind":"unane","duration_ms":90000,"berserk":true,
                "clock":{"kind":"fischer","initial_ms":15000,"increment_ms":0}}"#,
        )
        .unwrap();
        let ClientMessage::ArenaCreate { rid, settings } = &m else {
            panic!("{m:?}");
        };
        assert_eq!(rid, &Some(Rid::Int(1)));
        assert_eq!(settings.kind, "unane");
        assert_eq!(settings.duration_ms, 90_000);
        assert!(settings.berserk && !settings.bots && !settings.rated);
        assert_eq!(settings.visibility, None);
        assert_eq!(m.type_name(), "arena.create");
        let e = parse_client_message(r#"{"t":"arena.create","rid":2,"kind":"unane"}"#).unwrap_err();
        assert_eq!((e.code, e.rid), (ErrorCode::BadRequest, Some(Rid::Int(2))));
        let m = parse_client_message(r#"{"t":"arena.join","code":"AB12"}"#).unwrap();
        assert!(matches!(
            m,
            ClientMessage::ArenaJoin {
                id: None,
                code: Some(_),
                ..
            }
        ));
        let m = parse_client_message(r#"{"t":"game.berserk","game_id":"g"}"#).unwrap();
        assert_eq!(m.type_name(), "game.berserk");
        let d = ServerMessage::ArenaDiff {
            id: "a1".into(),
            seq: 3,
            patch: json!([]),
        };
        assert_eq!(
            d.to_json(),
            r#"{"t":"arena.diff","id":"a1","seq":3,"patch":[]}"#
        );
    }
}

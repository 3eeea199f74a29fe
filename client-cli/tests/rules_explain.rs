//! `stoa rules explain <game>`: each game's player's guide, exactly the repository's
//! `protocol/docs/games/<game>.md`, and a clear error for an unknown game.
#![forbid(unsafe_code)]

mod common;

use common::{fails, ok};

#[test]
fn explain_prints_each_games_guide_from_the_repository() {
    let docs = concat!(env!("CARGO_MANIFEST_DIR"), "/../protocol/docs/games");
    for (kind, title) in [
        ("unane", "# Ūnane — a player's guide"),
        ("staku", "# Staku — a player's guide"),
        ("akron", "# Akron — a player's guide"),
        ("akunur", "# Akunur — a player's guide"),
    ] {
        let out = ok(&["rules", "explain", kind]);
        let file = std::fs::read_to_string(format!("{docs}/{kind}.md")).expect("guide file");
        assert_eq!(out, file, "{kind}: the guide shown is the repository's");
        assert_eq!(out.lines().next(), Some(title));
        // Case does not matter, as for every kind argument.
        assert_eq!(ok(&["rules", "explain", &kind.to_uppercase()]), out);
    }
}

#[test]
fn explain_of_an_unknown_game_exits_2() {
    let err = fails(&["rules", "explain", "chess"]);
    assert!(err.starts_with("error: ") && err.contains("chess"), "{err}");
}

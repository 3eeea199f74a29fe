//! Each game's player's guide (`protocol/docs/games/<kind>.md`), built into the crate.
//!
//! Why here: the guides are the repository's own statement of the rules the engines
//! implement, and every front-end (`stoa rules explain`, `help <game>` in the client, a web
//! page) must show the same text, so it lives beside the engines and ships with them.

/// The Markdown guide of a game kind (`unane`, `staku`, `akron`, `akunur`), or `None` for a
/// kind without one.
pub fn guide(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "unane" => include_str!("../docs/games/unane.md"),
        "staku" => include_str!("../docs/games/staku.md"),
        "akron" => include_str!("../docs/games/akron.md"),
        "akunur" => include_str!("../docs/games/akunur.md"),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::guide;
    use crate::KINDS;

    #[test]
    fn every_registered_kind_has_a_guide_with_its_sections() {
        for k in KINDS {
            let text = guide(k.id).unwrap_or_else(|| panic!("{} has no guide", k.id));
            for section in [
                "## The board",
                "## Your turn",
                "## How the game ends",
                "## Notation",
                "## Options",
            ] {
                assert!(text.contains(section), "{}: no '{section}'", k.id);
            }
        }
        assert!(guide("chess").is_none());
    }
}

//! Game records: a portable text form of a finished (or running) game, in the spirit of PGN
//! and SGF — tag lines, then the moves in the game's own notation.
//!
//! ```text
//! [Game "unane"]
//! [Options "{\"height\":5,\"width\":6}"]
//! [Id "g3b06t0ps5rjt"]
//! [Black "Alice"]
//! [White "Bob"]
//! [Clock "5+3"]
//! [Result "black"]
//! [Reason "one_group"]
//!
//! 1. a5xb5 2. f5xe5 3. b4xb5
//! ```
//!
//! Why every ply is numbered (not move pairs as in chess): a side may act twice in a row
//! (Akunur's bonus placements) and swaps exchange the seats, so pairs would mislead. Why a
//! text format and not JSON: people read, mail and diff records; the tags still carry JSON
//! where a value is structured (options, the clock object).
//!
//! Tag values are double-quoted with `\"` and `\\` escaped. Lines starting with `;` are
//! comments. Move numbers (`12.`) are optional on input.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use thiserror::Error;

/// A record: its tags (name → value) and its moves in canonical notation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Tags in the order they are written (see [`Record::tag`]).
    pub tags: Vec<(String, String)>,
    /// The moves, one per ply.
    pub moves: Vec<String>,
}

/// Why a text is not a record.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
pub enum RecordError {
    /// A tag line that is not `[Name "value"]`.
    #[error("line {line}: a tag is written [Name \"value\"]: {text}")]
    BadTag {
        /// 1-based line number.
        line: usize,
        /// The line.
        text: String,
    },
    /// A tag after the first move.
    #[error("line {line}: tags come before the moves")]
    TagAfterMoves {
        /// 1-based line number.
        line: usize,
    },
    /// A required tag is missing.
    #[error("the record has no [{0} \"…\"] tag")]
    Missing(&'static str),
}

impl Record {
    /// The value of tag `name`, if present (the first one).
    pub fn tag(&self, name: &str) -> Option<&str> {
        self.tags
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// Sets (or adds) a tag.
    pub fn set(&mut self, name: &str, value: impl Into<String>) {
        let value = value.into();
        match self.tags.iter_mut().find(|(n, _)| n == name) {
            Some(t) => t.1 = value,
            None => self.tags.push((name.to_string(), value)),
        }
    }

    /// The game kind (`Game` tag).
    pub fn kind(&self) -> Result<&str, RecordError> {
        self.tag("Game").ok_or(RecordError::Missing("Game"))
    }

    /// The text form: tags, a blank line, the numbered moves wrapped at 80 columns.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for (name, value) in &self.tags {
            let escaped = value.replace('\\', "\\\\").replace('"', "\\\"");
            let _ = writeln!(out, "[{name} \"{escaped}\"]");
        }
        out.push('\n');
        let mut line = String::new();
        for (i, mv) in self.moves.iter().enumerate() {
            let item = format!("{}. {mv}", i + 1);
            if !line.is_empty() && line.len() + 1 + item.len() > 80 {
                out.push_str(&line);
                out.push('\n');
                line.clear();
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(&item);
        }
        if !line.is_empty() {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }

    /// Reads a record. Moves are taken as written (the rules engine checks them).
    pub fn parse(text: &str) -> Result<Record, RecordError> {
        let mut record = Record::default();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with(';') {
                continue;
            }
            if line.starts_with('[') {
                if !record.moves.is_empty() {
                    return Err(RecordError::TagAfterMoves { line: i + 1 });
                }
                let bad = || RecordError::BadTag {
                    line: i + 1,
                    text: line.to_string(),
                };
                let inner = line
                    .strip_prefix('[')
                    .and_then(|l| l.strip_suffix(']'))
                    .ok_or_else(bad)?;
                let (name, rest) = inner.split_once(' ').ok_or_else(bad)?;
                let quoted = rest
                    .trim()
                    .strip_prefix('"')
                    .and_then(|r| r.strip_suffix('"'))
                    .ok_or_else(bad)?;
                if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric()) {
                    return Err(bad());
                }
                let mut value = String::new();
                let mut chars = quoted.chars();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => value.push(chars.next().ok_or_else(bad)?),
                        '"' => return Err(bad()),
                        c => value.push(c),
                    }
                }
                record.tags.push((name.to_string(), value));
                continue;
            }
            for token in line.split_whitespace() {
                // Move numbers: `12.`, or glued to the move as `12.b3xb4`.
                let token = match token.split_once('.') {
                    Some((n, rest)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => {
                        rest
                    }
                    _ => token,
                };
                if !token.is_empty() {
                    record.moves.push(token.to_string());
                }
            }
        }
        Ok(record)
    }

    /// The tags as a map (for lookups by name; the order is lost).
    pub fn tag_map(&self) -> BTreeMap<&str, &str> {
        self.tags
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_str()))
            .collect()
    }
}

/// RFC 3339 UTC text of a time in ms since the epoch (`2026-11-24T14:03:07Z`), for the
/// `Date` and `End` tags.
pub fn utc(ms: u64) -> String {
    let secs = ms / 1000;
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400_000), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_795_532_587_000), "2026-11-24T15:03:07Z");
    }

    #[test]
    fn round_trips_tags_with_quotes_and_numbered_moves() {
        let mut r = Record::default();
        r.set("Game", "unane");
        r.set("Options", r#"{"height":5,"width":6}"#);
        r.set("White", r#"Bob "the \ builder""#);
        r.moves = (0..30).map(|i| format!("a{i}xb{i}")).collect();
        let text = r.to_text();
        assert!(text
            .starts_with("[Game \"unane\"]\n[Options \"{\\\"height\\\":5,\\\"width\\\":6}\"]\n"));
        assert!(text.lines().all(|l| l.len() <= 80), "{text}");
        assert!(text.contains("\n\n1. a0xb0 2. a1xb1"));
        let back = Record::parse(&text).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.tag("White"), Some(r#"Bob "the \ builder""#));
        assert_eq!(back.kind(), Ok("unane"));
    }

    #[test]
    fn reads_unnumbered_moves_comments_and_glued_numbers() {
        let r =
            Record::parse("; a comment\n[Game \"staku\"]\n\nb1-c1+d1 2.f2-e2\n3. b3-c3\n").unwrap();
        assert_eq!(r.moves, ["b1-c1+d1", "f2-e2", "b3-c3"]);
        // Ūnane removals start with '-' and are not move numbers.
        let r = Record::parse("[Game \"unane\"]\n1. -a4 2. b3xb4").unwrap();
        assert_eq!(r.moves, ["-a4", "b3xb4"]);
    }

    #[test]
    fn refuses_malformed_tags_and_late_tags() {
        assert!(matches!(
            Record::parse("[Game unane]"),
            Err(RecordError::BadTag { line: 1, .. })
        ));
        assert!(matches!(
            Record::parse("[Game \"a\"b\"]"),
            Err(RecordError::BadTag { .. })
        ));
        assert_eq!(
            Record::parse("[Game \"unane\"]\na1xb1\n[Result \"black\"]"),
            Err(RecordError::TagAfterMoves { line: 3 })
        );
        assert_eq!(
            Record::parse("1. a1xb1").unwrap().kind(),
            Err(RecordError::Missing("Game"))
        );
    }
}

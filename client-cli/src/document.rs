//! Versioned JSON documents (a game, the lobby) kept in sync with `snapshot` + `diff`
//! messages, and read-only accessors over the game document of protocol/docs/PROTOCOL.md.
//!
//! Why keep the whole document: the server sends RFC 6902 patches against it, so the client
//! must hold exactly what the server holds; everything drawn is read from it, never
//! recomputed with rules knowledge.

use serde_json::Value;

/// What applying a diff did.
#[derive(Debug, PartialEq, Eq)]
pub enum Applied {
    /// The document moved to the diff's seq.
    Changed,
    /// The diff was already applied (a replay overlapping what we had): nothing to do.
    Stale,
    /// A seq was skipped, or the patch did not apply: the document must be fetched again
    /// (`game.watch` with `since`).
    Gap,
}

/// A document and its seq.
#[derive(Clone, Debug)]
pub struct Versioned {
    /// The document's seq.
    pub seq: u64,
    /// The document.
    pub doc: Value,
}

impl Versioned {
    /// A document from a snapshot.
    pub fn new(seq: u64, doc: Value) -> Self {
        Versioned { seq, doc }
    }

    /// Takes a whole document (a snapshot), unless the one held is newer: a snapshot
    /// answering an earlier watch may come after diffs moved past it. Says whether it was
    /// taken.
    pub fn snapshot(&mut self, seq: u64, doc: Value) -> bool {
        if self.seq > seq {
            return false;
        }
        self.seq = seq;
        self.doc = doc;
        true
    }

    /// [`Versioned::snapshot`] into a slot that may hold no document yet; `pushed`: the
    /// server sent it on its own (no `rid`), and it is taken whatever seq is held (a game
    /// that went back after its storage lost its last events: protocol/docs/PROTOCOL.md,
    /// "Watching and reconnecting").
    pub fn take_snapshot(slot: &mut Option<Versioned>, seq: u64, doc: Value, pushed: bool) -> bool {
        match slot {
            Some(held) if pushed => {
                *held = Versioned::new(seq, doc);
                true
            }
            Some(held) => held.snapshot(seq, doc),
            None => {
                *slot = Some(Versioned::new(seq, doc));
                true
            }
        }
    }

    /// Applies the patch that turns `seq - 1` into `seq`.
    pub fn apply(&mut self, seq: u64, patch: &Value) -> Applied {
        if seq <= self.seq {
            return Applied::Stale;
        }
        if seq != self.seq + 1 {
            return Applied::Gap;
        }
        let Ok(ops) = serde_json::from_value::<json_patch::Patch>(patch.clone()) else {
            return Applied::Gap;
        };
        // Patch a copy: a failed patch must leave the document as it was (then resync).
        let mut next = self.doc.clone();
        if json_patch::patch(&mut next, &ops.0).is_err() {
            return Applied::Gap;
        }
        self.doc = next;
        self.seq = seq;
        Applied::Changed
    }
}

/// The game's outcome as the document states it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Status {
    /// `true` once `status.state` is `ended`.
    pub ended: bool,
    /// The winning side, `None` for a draw or while playing.
    pub winner: Option<String>,
    /// The end reason.
    pub reason: Option<String>,
}

/// Read-only accessors over a game document and, beside it, the game's crowd (the last
/// `game.crowd` message: spectators and online flags are not part of the document).
#[derive(Clone, Copy, Debug)]
pub struct GameDoc<'a> {
    doc: &'a Value,
    crowd: &'a Value,
}

static NO_CROWD: Value = Value::Null;

impl<'a> GameDoc<'a> {
    /// A document without crowd information (spectators 0, online flags unknown).
    pub fn new(doc: &'a Value) -> Self {
        GameDoc {
            doc,
            crowd: &NO_CROWD,
        }
    }

    /// A document with the game's last `game.crowd` message.
    pub fn with_crowd(doc: &'a Value, crowd: &'a Value) -> Self {
        // A crowd of another game (the one before a rematch) says nothing about this one.
        if crowd["game_id"] != doc["id"] {
            return GameDoc::new(doc);
        }
        GameDoc { doc, crowd }
    }

    /// Game id.
    pub fn id(self) -> &'a str {
        self.doc["id"].as_str().unwrap_or_default()
    }

    /// Game kind (`unane`, …).
    pub fn kind(self) -> &'a str {
        self.doc["kind"].as_str().unwrap_or_default()
    }

    /// The position the game started from, when not the kind's start (a game from a
    /// position): its moves are played from there.
    pub fn start(self) -> Option<&'a str> {
        self.doc["start"].as_str()
    }

    /// The two side names, first-acting side first. The registry gives the order; a kind the
    /// client does not know falls back to the order of the `players` object.
    pub fn sides(self) -> Vec<String> {
        if let Ok(k) = stoa_protocol::kind(self.kind()) {
            return k.side_names.iter().map(|s| s.to_string()).collect();
        }
        self.doc["players"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// The side to act, `None` once ended.
    pub fn to_act(self) -> Option<&'a str> {
        self.doc["to_act"].as_str()
    }

    /// Every action so far.
    pub fn moves(self) -> Vec<&'a str> {
        self.doc["moves"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default()
    }

    /// The game's options.
    pub fn options(self) -> &'a Value {
        &self.doc["options"]
    }

    /// The game-specific view.
    pub fn state(self) -> &'a Value {
        &self.doc["state"]
    }

    /// Playing or ended, with winner and reason.
    pub fn status(self) -> Status {
        let s = &self.doc["status"];
        Status {
            ended: s["state"].as_str() == Some("ended"),
            winner: s["winner"].as_str().map(String::from),
            reason: s["reason"].as_str().map(String::from),
        }
    }

    /// The player seated on `side`.
    pub fn player(self, side: &str) -> &'a Value {
        &self.doc["players"][side]
    }

    /// Display name of the player on `side`.
    pub fn player_name(self, side: &str) -> &'a str {
        self.player(side)["name"].as_str().unwrap_or("?")
    }

    /// The side the player with this id sits on (it changes after a swap).
    pub fn side_of(self, player_id: &str) -> Option<String> {
        self.doc["players"].as_object().and_then(|m| {
            m.iter()
                .find(|(_, p)| p["id"].as_str() == Some(player_id))
                .map(|(side, _)| side.clone())
        })
    }

    /// The clock object (`kind`, `remaining_ms`, `running`, `since`, …).
    pub fn clock(self) -> &'a Value {
        &self.doc["clock"]
    }

    /// The side that offered a draw, if an offer stands.
    pub fn draw_offer(self) -> Option<&'a str> {
        self.doc["draw_offer"].as_str()
    }

    /// Number of spectators (from the crowd).
    pub fn spectators(self) -> u64 {
        self.crowd["spectators"].as_u64().unwrap_or(0)
    }

    /// Whether the player on `side` has a connection (from the crowd; `None` before the
    /// first crowd message).
    pub fn online(self, side: &str) -> Option<bool> {
        self.crowd["online"][side].as_bool()
    }

    /// Whether the game is rated.
    pub fn rated(self) -> bool {
        self.doc["rated"].as_bool().unwrap_or(false)
    }

    /// The remaining main time of `side` at server time `server_now_ms`, counting down
    /// locally from `remaining_ms` at `since` for the running side (a delay clock's first
    /// `delay_ms` of the turn are free). `None` without a timed clock.
    pub fn remaining_ms(self, side: &str, server_now_ms: i64) -> Option<i64> {
        self.clock_reading(side, server_now_ms).map(|r| r.main_ms)
    }

    /// What a side's clock shows now: main time, and for byo-yomi the periods left and the
    /// time left in the current period once main time is spent.
    pub fn clock_reading(self, side: &str, server_now_ms: i64) -> Option<ClockReading> {
        let clock = self.clock();
        let kind = clock["kind"].as_str().unwrap_or("none");
        if kind == "none" {
            return None;
        }
        // Before the live fields exist, each side has its full initial time (no clock runs
        // until both sides have acted).
        let base = clock["remaining_ms"][side]
            .as_i64()
            .or_else(|| clock["initial_ms"].as_i64())
            .or_else(|| clock["days_per_turn"].as_i64().map(|d| d * 86_400_000))?;
        let periods = clock["periods_left"][side]
            .as_i64()
            .or_else(|| clock["periods"].as_i64());
        let running = !self.status().ended && clock["running"].as_str() == Some(side);
        let mut elapsed = if running {
            let since = clock["since"].as_i64().unwrap_or(server_now_ms);
            (server_now_ms - since).max(0)
        } else {
            0
        };
        if kind == "delay" {
            elapsed = (elapsed - clock["delay_ms"].as_i64().unwrap_or(0)).max(0);
        }
        let main_ms = base - elapsed;
        let mut reading = ClockReading {
            main_ms: main_ms.max(0),
            running,
            periods_left: if kind == "byoyomi" { periods } else { None },
            period_ms: None,
        };
        if kind == "byoyomi" && main_ms < 0 {
            let period = clock["period_ms"].as_i64().unwrap_or(0).max(1);
            let over = -main_ms;
            let used = over / period;
            let left = periods.unwrap_or(0);
            reading.periods_left = Some((left - used).max(0));
            reading.period_ms = Some(if used < left {
                period - over % period
            } else {
                0
            });
        }
        Some(reading)
    }
}

/// A clock as it reads at some instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClockReading {
    /// Main time left, ms (0 once spent).
    pub main_ms: i64,
    /// This side's clock is running.
    pub running: bool,
    /// Byo-yomi: periods left.
    pub periods_left: Option<i64>,
    /// Byo-yomi, main time spent: time left in the current period.
    pub period_ms: Option<i64>,
}

/// The end of a game for scripts (plain mode's `game over:` line): `<winner> wins by
/// <reason>`, `draw by <reason>`, or `aborted` (an aborted game has no result at all).
pub fn outcome_text(status: &Status) -> String {
    let reason = status.reason.as_deref().unwrap_or("unknown");
    match (&status.winner, reason) {
        (_, "aborted") => "aborted".into(),
        (Some(w), _) => format!("{w} wins by {reason}"),
        (None, _) => format!("draw by {reason}"),
    }
}

/// The end of a game as people say it: "Black resigned — White wins", "White ran out of
/// time — Black wins", "Game aborted", "Draw by agreement". `sides` are the game's two side
/// names (to name the loser).
pub fn ending_sentence(status: &Status, sides: &[String]) -> String {
    let reason = status.reason.as_deref().unwrap_or("unknown");
    let Some(winner) = &status.winner else {
        return match reason {
            "aborted" => "Game aborted".into(),
            "agreement" => "Draw by agreement".into(),
            "repetition" => "Draw: the same position came up three times".into(),
            "no_capture_limit" => "Draw: 20 turns without a capture".into(),
            "passes" => "Draw: both players passed".into(),
            other => format!("Draw ({})", other.replace('_', " ")),
        };
    };
    let loser = sides
        .iter()
        .find(|s| *s != winner)
        .cloned()
        .unwrap_or_else(|| "the opponent".into());
    let (w, l) = (capitalized(winner), capitalized(&loser));
    let why = match reason {
        "resign" => format!("{l} resigned"),
        "timeout" => format!("{l} ran out of time"),
        "abandoned" => format!("{l} left the game"),
        "no_moves" => format!("{l} had no legal move"),
        "one_group" => format!("{w} connected their pieces into one group"),
        "connection" => format!("{w} connected their two edges"),
        "palace" => format!("{w} took a palace"),
        "corners" => format!("{w} holds enough corners"),
        "repetition" => "The same position came up three times".into(),
        "passes" => "Both players passed".into(),
        "no_capture_limit" => "20 turns passed without a capture".into(),
        other => other.replace('_', " "),
    };
    format!("{why} — {w} wins")
}

fn capitalized(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Cell names mentioned in a move (for highlighting the last move), found without rules
/// knowledge: a letter immediately followed by digits (and apostrophes, for Akron's raised
/// points), lower-cased. `b3xb4` gives b3 and b4.
pub fn cells_in_move(mv: &str) -> Vec<String> {
    let chars: Vec<char> = mv.chars().collect();
    let mut out = Vec::new();
    let mut i = 1;
    while i < chars.len() {
        if chars[i].is_ascii_digit() && chars[i - 1].is_ascii_alphabetic() {
            let start = i - 1;
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            while i < chars.len() && chars[i] == '\'' {
                i += 1;
            }
            out.push(chars[start..i].iter().collect::<String>().to_lowercase());
        } else {
            i += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ended(winner: Option<&str>, reason: &str) -> Status {
        Status {
            ended: true,
            winner: winner.map(String::from),
            reason: Some(reason.into()),
        }
    }

    #[test]
    fn a_snapshot_older_than_the_document_held_is_not_taken() {
        let mut slot = None;
        assert!(Versioned::take_snapshot(
            &mut slot,
            5,
            json!({"a": 1}),
            false
        ));
        assert!(!Versioned::take_snapshot(
            &mut slot,
            4,
            json!({"a": 0}),
            false
        ));
        assert_eq!(slot.as_ref().map(|v| &v.doc), Some(&json!({"a": 1})));
        assert!(Versioned::take_snapshot(
            &mut slot,
            6,
            json!({"a": 2}),
            false
        ));
        assert_eq!(
            slot.as_ref().map(|v| (v.seq, v.doc.clone())),
            Some((6, json!({"a": 2})))
        );
        // Pushed by the server (no rid): a game that went back is taken at its lower seq.
        assert!(Versioned::take_snapshot(
            &mut slot,
            3,
            json!({"a": 3}),
            true
        ));
        let held = slot.expect("a document");
        assert_eq!((held.seq, held.doc), (3, json!({"a": 3})));
    }

    #[test]
    fn endings_name_the_winner_and_why() {
        let sides = ["white".to_string(), "black".to_string()];
        let cases = [
            (
                Some("white"),
                "resign",
                "Black resigned — White wins",
                "white wins by resign",
            ),
            (
                Some("black"),
                "timeout",
                "White ran out of time — Black wins",
                "black wins by timeout",
            ),
            (
                Some("white"),
                "abandoned",
                "Black left the game — White wins",
                "white wins by abandoned",
            ),
            (
                Some("black"),
                "one_group",
                "Black connected their pieces into one group — Black wins",
                "black wins by one_group",
            ),
            (None, "aborted", "Game aborted", "aborted"),
            (None, "agreement", "Draw by agreement", "draw by agreement"),
            (
                None,
                "no_capture_limit",
                "Draw: 20 turns without a capture",
                "draw by no_capture_limit",
            ),
        ];
        for (winner, reason, sentence, line) in cases {
            let st = ended(winner, reason);
            assert_eq!(ending_sentence(&st, &sides), sentence);
            assert_eq!(outcome_text(&st), line);
        }
        let akron = ["vert".to_string(), "horz".to_string()];
        assert_eq!(
            ending_sentence(&ended(Some("horz"), "connection"), &akron),
            "Horz connected their two edges — Horz wins"
        );
    }

    #[test]
    fn applies_diffs_in_order_and_detects_gaps() {
        let mut v = Versioned::new(3, json!({"moves": [], "to_act": "white"}));
        let p = json!([{"op":"add","path":"/moves/-","value":"a1"},{"op":"replace","path":"/to_act","value":"black"}]);
        assert_eq!(v.apply(4, &p), Applied::Changed);
        assert_eq!(v.doc["moves"], json!(["a1"]));
        assert_eq!(v.apply(4, &p), Applied::Stale);
        assert_eq!(v.apply(6, &p), Applied::Gap);
        // A patch that does not apply leaves the document untouched.
        let bad = json!([{"op":"remove","path":"/nope"}]);
        assert_eq!(v.apply(5, &bad), Applied::Gap);
        assert_eq!(v.seq, 4);
        assert_eq!(v.doc["to_act"], "black");
    }

    #[test]
    fn clocks_count_down_for_the_running_side() {
        let doc = json!({
            "kind": "staku",
            "clock": {"kind":"fischer","remaining_ms":{"white":60_000,"black":50_000},"running":"white","since":1_000},
            "status": {"state":"playing","winner":null,"reason":null},
            "players": {"white":{"id":"p1","name":"Ann"},"black":{"id":"p2","name":"Bob"}}
        });
        let g = GameDoc::new(&doc);
        assert_eq!(g.remaining_ms("white", 11_000), Some(50_000));
        assert_eq!(g.remaining_ms("black", 11_000), Some(50_000));
        assert_eq!(g.side_of("p2").as_deref(), Some("black"));
        let fresh = json!({"kind":"staku","clock":{"kind":"fischer","initial_ms":300_000,"increment_ms":0,"remaining_ms":null}});
        assert_eq!(GameDoc::new(&fresh).remaining_ms("white", 5), Some(300_000));
        let delay = json!({"kind":"staku","clock":{"kind":"delay","initial_ms":60_000,"delay_ms":5_000,
            "remaining_ms":{"white":60_000,"black":60_000},"running":"white","since":0}});
        assert_eq!(
            GameDoc::new(&delay).remaining_ms("white", 3_000),
            Some(60_000)
        );
        assert_eq!(
            GameDoc::new(&delay).remaining_ms("white", 8_000),
            Some(57_000)
        );
        let byo = json!({"kind":"staku","clock":{"kind":"byoyomi","initial_ms":10_000,"periods":3,"period_ms":30_000,
            "remaining_ms":{"white":10_000,"black":10_000},"periods_left":{"white":3,"black":3},"running":"white","since":0}});
        let r = GameDoc::new(&byo).clock_reading("white", 45_000).unwrap();
        assert_eq!(
            (r.main_ms, r.periods_left, r.period_ms),
            (0, Some(2), Some(25_000))
        );
        let r = GameDoc::new(&byo).clock_reading("black", 45_000).unwrap();
        assert_eq!(
            (r.main_ms, r.periods_left, r.period_ms, r.running),
            (10_000, Some(3), None, false)
        );
        assert_eq!(g.sides(), vec!["white", "black"]);
    }

    #[test]
    fn finds_cells_in_moves() {
        assert_eq!(cells_in_move("b3xb4"), vec!["b3", "b4"]);
        assert_eq!(cells_in_move("-b3"), vec!["b3"]);
        assert_eq!(cells_in_move("b1-c1+d1"), vec!["b1", "c1", "d1"]);
        assert_eq!(cells_in_move("A2-D3'"), vec!["a2", "d3'"]);
        assert_eq!(cells_in_move("swap"), Vec::<String>::new());
        assert_eq!(cells_in_move("pass"), Vec::<String>::new());
    }
}

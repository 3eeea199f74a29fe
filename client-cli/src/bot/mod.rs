//! `stoa bot`: a computer opponent that connects like any player (same protocol, its own
//! identity, marked as a bot) and waits in quick pairing, hosts public rooms, or joins a room
//! by code — then plays every game it gets with the search in [`search`], within its clock.
//!
//! Why the search runs on a blocking thread: a level-5 search may think for seconds, and the
//! connection must keep answering pings and following the game meanwhile.

pub mod knowledge;
pub mod search;
pub mod tournament;

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};
use stoa_protocol::akron::Akron;
use stoa_protocol::akunur::Akunur;
use stoa_protocol::staku::Staku;
use stoa_protocol::unane::Unane;
use stoa_protocol::wire::{ClientMessage, DrawAction, ServerMessage, Visibility};

use crate::commands::{block_on, connect, parse_options, resolved, Global};
use crate::connection::ConnEvent;
use crate::document::{Applied, GameDoc, Versioned};
use search::Rng;

/// Arguments of `stoa bot`.
#[derive(Clone, Debug, Args)]
pub struct BotArgs {
    /// Game kinds it plays, comma-separated (taken in turn, one game each).
    #[arg(long, default_value = "unane,staku,akron,akunur")]
    kinds: String,
    /// Strength, 1 (makes mistakes on purpose) to 5 (thinks as long as its clock allows).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u8).range(1..=5))]
    level: u8,
    /// Time control it asks for when queueing or hosting (see `stoa play --help`).
    #[arg(long, default_value = "5+3")]
    clock: String,
    /// Game options when queueing or hosting (key=value pairs or JSON).
    #[arg(long)]
    options: Option<String>,
    /// Host public rooms (listed in the lobby) instead of queueing.
    #[arg(long, conflicts_with = "join")]
    host: bool,
    /// Join the room with this code (one game).
    #[arg(long)]
    join: Option<String>,
    /// Serve people who ask to play the computer (`stoa play <kind> --computer <level>`, the
    /// web page's "Play the computer"): wait for invitations, one game at a time.
    #[arg(long, conflicts_with_all = ["host", "join"])]
    serve: bool,
    /// With `--serve`: the levels offered, comma-separated (each game is played at the
    /// level the person asked for); default: `--level` only.
    #[arg(long, requires = "serve")]
    levels: Option<String>,
    /// Stop after this many games (0: play on until stopped).
    #[arg(long, default_value_t = 0)]
    games: u32,
    /// Seed of the search's random choices (reproducible games).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

/// The action a level-`level` search picks for the side to act, in canonical notation,
/// after `moves` from the start of a `kind` game with `options`.
pub fn think(
    kind: &str,
    options: &Value,
    moves: &[String],
    level: u8,
    budget: Duration,
    rng: &mut Rng,
) -> Result<Option<String>, String> {
    fn run<G: knowledge::Knowledge>(
        options: &Value,
        moves: &[String],
        level: u8,
        budget: Duration,
        rng: &mut Rng,
    ) -> Result<Option<String>, String> {
        let options: G::Options =
            serde_json::from_value(options.clone()).map_err(|e| e.to_string())?;
        let mut game = G::start(&options);
        for m in moves {
            let a = game.parse_action(m).map_err(|e| format!("{m}: {e}"))?;
            game.apply(a);
        }
        Ok(search::choose(&game, level, budget, rng).map(|a| game.format_action(a)))
    }
    match kind {
        "unane" => run::<Unane>(options, moves, level, budget, rng),
        "staku" => run::<Staku>(options, moves, level, budget, rng),
        "akron" => run::<Akron>(options, moves, level, budget, rng),
        "akunur" => run::<Akunur>(options, moves, level, budget, rng),
        other => Err(format!("no search for game kind '{other}'")),
    }
}

/// How long to think with `remaining_ms` on the clock and `increment_ms` per turn: a
/// slice of what is left plus most of the increment, less a margin for the network; a
/// game without a clock gets a few seconds.
pub fn budget(clock: &Value, remaining_ms: Option<i64>) -> Duration {
    let ms = match (clock["kind"].as_str(), remaining_ms) {
        (Some("none") | None, _) | (_, None) => 2_000,
        (Some("correspondence"), _) => 5_000,
        (_, Some(left)) => {
            let bonus = clock["increment_ms"]
                .as_i64()
                .or_else(|| clock["delay_ms"].as_i64())
                .unwrap_or(0);
            let period = clock["period_ms"].as_i64().unwrap_or(0);
            (left / 30 + bonus * 4 / 5 + period / 3 - 300).clamp(30, 8_000)
        }
    };
    Duration::from_millis(ms as u64)
}

/// How long a bot stays with a finished game for its opponent to ask for a rematch.
const REMATCH_WAIT: Duration = Duration::from_secs(10);

/// The name of a bot playing at `level` (unless `--name` gives one).
fn level_name(level: u8) -> String {
    format!("bot-level-{level}")
}

/// Sleeps until `at`; never returns without one (a `select!` branch that stays quiet).
async fn wait_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

impl BotArgs {
    /// Runs the bot until its games are played (or forever).
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(self.play(global)).unwrap_or_else(|code| code)
    }

    async fn play(&self, global: &Global) -> Result<ExitCode, ExitCode> {
        let kinds: Vec<String> = self
            .kinds
            .split(',')
            .map(|k| k.trim().to_ascii_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        for k in &kinds {
            if stoa_protocol::kind(k).is_err() {
                eprintln!("error: unknown game kind '{k}'");
                return Err(ExitCode::from(2));
            }
        }
        let options = match &self.options {
            Some(o) => parse_options(o).map_err(|e| {
                eprintln!("error: {e}");
                ExitCode::from(2)
            })?,
            None => json!({}),
        };
        let clock = crate::clock_spec::parse(&self.clock).map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        })?;
        let global = resolved(global)?;
        let mut g = global.clone();
        g.bot = true;
        // Without `--name` the bot is named after the level it plays, and renamed for each
        // game asked at another level (a name is given at `hello`, so by connecting again).
        let auto_name = g.name.is_none();
        if auto_name {
            g.name = Some(level_name(self.level));
        }
        let (mut conn, mut me, mut events) = connect(&g).await?;
        println!("bot {} ({}) level {}", me.name, me.id, self.level);
        let offered: Vec<u8> = match &self.levels {
            None => vec![self.level],
            Some(list) => {
                let parsed: Result<Vec<u8>, _> =
                    list.split(',').map(|l| l.trim().parse::<u8>()).collect();
                match parsed {
                    Ok(v) if !v.is_empty() && v.iter().all(|l| (1..=5).contains(l)) => v,
                    _ => {
                        eprintln!("error: --levels takes levels 1-5, comma-separated");
                        return Err(ExitCode::from(2));
                    }
                }
            }
        };
        let serve = ClientMessage::BotServe {
            rid: None,
            kinds: kinds.clone(),
            levels: offered,
        };
        let mut level = self.level;
        let mut rng = Rng::new(self.seed);
        let mut played = 0u32;
        let mut next_kind = 0usize;
        'games: loop {
            if self.games > 0 && played >= self.games {
                return Ok(ExitCode::SUCCESS);
            }
            // Ask for a game.
            let kind = kinds[next_kind % kinds.len()].clone();
            next_kind += 1;
            let request = if self.serve {
                level = self.level;
                serve.clone()
            } else if let Some(code) = &self.join {
                room_join(code.clone())
            } else if self.host {
                ClientMessage::RoomCreate {
                    rid: None,
                    kind,
                    options: options.clone(),
                    clock: Some(clock.clone()),
                    rated: false,
                    visibility: Visibility::Public,
                    side: "random".into(),
                }
            } else {
                ClientMessage::QueueJoin {
                    rid: None,
                    kind,
                    options: options.clone(),
                    clock: Some(clock.clone()),
                    rated: false,
                }
            };
            if let Err(e) = conn.request(request).await {
                eprintln!("error {}: {}", e.code(), e.message());
                return Err(ExitCode::FAILURE);
            }
            let mut game: Option<(String, Versioned)> = None;
            let mut asked_at: Option<u64> = None;
            // Once a game ended: until when a rematch the person asks for is accepted, and
            // whether it was.
            let mut rematch_until: Option<tokio::time::Instant> = None;
            let mut rematch_sent = false;
            let (tx, mut rx) =
                tokio::sync::mpsc::unbounded_channel::<(u64, Result<Option<String>, String>)>();
            loop {
                tokio::select! {
                    ev = events.recv() => match ev {
                        None | Some(ConnEvent::Closed(_)) => {
                            eprintln!("error connection: the server closed the connection");
                            return Err(ExitCode::FAILURE);
                        }
                        Some(ConnEvent::Disconnected(why)) => eprintln!("{}", crate::session::disconnected_line(&why)),
                        Some(ConnEvent::Reconnected(_)) => {
                            if let Some((id, doc)) = &game {
                                conn.send(watch_since(id, doc.seq));
                            } else if self.serve {
                                conn.send(serve.clone());
                            }
                        }
                        Some(ConnEvent::Message(msg)) => {
                            match msg {
                                ServerMessage::BotInvite { code, level: asked, .. } if game.is_none() => {
                                    level = asked.clamp(1, 5);
                                    println!("invited to room {code} at level {level}");
                                    if auto_name && me.name != level_name(level) {
                                        g.name = Some(level_name(level));
                                        let (c, m, e) = connect(&g).await?;
                                        (conn, me, events) = (c, m, e);
                                        println!("bot {} ({}) level {level}", me.name, me.id);
                                    }
                                    if let Err(e) = conn.request(room_join(code.clone())).await {
                                        eprintln!("note: could not join room {code}: {} {}", e.code(), e.message());
                                        conn.send(serve.clone());
                                    }
                                }
                                ServerMessage::GameStarted { game_id: id, side, .. } => {
                                    println!("game started {id} side {side}");
                                    game = Some((id, Versioned::new(0, Value::Null)));
                                    asked_at = None;
                                    rematch_until = None;
                                    rematch_sent = false;
                                }
                                ServerMessage::GameSnapshot { game_id: id, seq, doc, .. } if game.as_ref().is_some_and(|(g, _)| *g == id) => {
                                    game = Some((id, Versioned::new(seq, doc)));
                                }
                                ServerMessage::GameDiff { game_id: id, seq, patch } if game.as_ref().is_some_and(|(g, _)| *g == id) => {
                                    let (_, doc) = game.as_mut().expect("game");
                                    if doc.doc.is_null() || doc.apply(seq, &patch) == Applied::Gap {
                                        conn.send(watch_since(&id, doc.seq));
                                    }
                                }
                                _ => {}
                            }
                        }
                    },
                    () = wait_until(rematch_until) => {
                        // Nobody asked for a rematch in time: on to the next game.
                        if let Some((id, _)) = &game {
                            conn.send(ClientMessage::GameUnwatch { rid: None, game_id: id.clone() });
                        }
                        continue 'games;
                    }
                    Some((seq, result)) = rx.recv() => {
                        let Some((id, doc)) = &game else { continue };
                        match result {
                            Ok(Some(mv)) if doc.seq == seq => {
                                let mv_msg = ClientMessage::GameMove {
                                    rid: None,
                                    game_id: id.clone(),
                                    mv: mv.clone(),
                                    seq: Some(seq),
                                };
                                let answer = conn.request(mv_msg).await;
                                if let Err(e) = answer {
                                    // A stale seq (a draw offer came in) is thought over again.
                                    eprintln!("note: {mv} not played: {} {}", e.code(), e.message());
                                    asked_at = None;
                                }
                            }
                            Ok(_) => asked_at = None,
                            Err(e) => {
                                eprintln!("error: the search failed: {e}");
                                return Err(ExitCode::FAILURE);
                            }
                        }
                    }
                }
                let Some((id, versioned)) = &game else {
                    continue;
                };
                if versioned.doc.is_null() {
                    continue;
                }
                let doc = GameDoc::new(&versioned.doc);
                let status = doc.status();
                if status.ended {
                    if rematch_until.is_none() {
                        println!("game over: {}", crate::document::outcome_text(&status));
                        played += 1;
                        let more = self.games == 0 || played < self.games;
                        if self.join.is_some() || !more {
                            conn.send(ClientMessage::GameUnwatch {
                                rid: None,
                                game_id: id.clone(),
                            });
                            if self.join.is_some() {
                                return Ok(ExitCode::SUCCESS);
                            }
                            continue 'games;
                        }
                        rematch_until = Some(tokio::time::Instant::now() + REMATCH_WAIT);
                    }
                    // The person asked for a rematch: play it (the server starts it once
                    // both asked, and says `game.started`).
                    let mine = doc.side_of(&me.id);
                    let asked = versioned.doc["rematch"]["requested"]
                        .as_array()
                        .is_some_and(|a| a.iter().any(|s| s.as_str() != mine.as_deref()));
                    if asked && !rematch_sent {
                        rematch_sent = true;
                        println!("rematch asked: accepting");
                        conn.send(ClientMessage::GameRematch {
                            rid: None,
                            game_id: id.clone(),
                        });
                    }
                    continue;
                }
                let mine = doc.side_of(&me.id);
                if let (Some(side), Some(offer)) = (&mine, doc.draw_offer()) {
                    if offer != side {
                        conn.send(ClientMessage::GameDraw {
                            rid: None,
                            game_id: id.clone(),
                            action: DrawAction::Decline,
                        });
                    }
                }
                let my_turn = mine.is_some() && doc.to_act() == mine.as_deref();
                if my_turn && asked_at != Some(versioned.seq) {
                    asked_at = Some(versioned.seq);
                    let seq = versioned.seq;
                    let kind = doc.kind().to_string();
                    let options = doc.options().clone();
                    let moves: Vec<String> = doc.moves().iter().map(|m| m.to_string()).collect();
                    let side = mine.clone().unwrap_or_default();
                    let think_for =
                        budget(doc.clock(), doc.remaining_ms(&side, conn.server_now_ms()));
                    let mut search_rng = Rng::new(rng.next());
                    let tx = tx.clone();
                    tokio::task::spawn_blocking(move || {
                        let r = think(&kind, &options, &moves, level, think_for, &mut search_rng);
                        let _ = tx.send((seq, r));
                    });
                }
            }
        }
    }
}

/// `room.join` of room `code`.
fn room_join(code: String) -> ClientMessage {
    ClientMessage::RoomJoin { rid: None, code }
}

/// `game.watch` of a game we follow, from the seq we have (the missed diffs, or a snapshot).
fn watch_since(game_id: &str, seq: u64) -> ClientMessage {
    ClientMessage::GameWatch {
        rid: None,
        game_id: game_id.to_string(),
        since: Some(seq),
        code: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_follow_the_clock() {
        let fischer = json!({"kind":"fischer","initial_ms":300_000,"increment_ms":3_000});
        assert_eq!(
            budget(&fischer, Some(300_000)),
            Duration::from_millis(8_000)
        );
        assert_eq!(budget(&fischer, Some(3_000)), Duration::from_millis(2_200));
        let sudden = json!({"kind":"fischer","initial_ms":60_000,"increment_ms":0});
        assert_eq!(budget(&sudden, Some(600)), Duration::from_millis(30));
        assert_eq!(
            budget(&json!({"kind":"none"}), None),
            Duration::from_millis(2_000)
        );
    }

    #[test]
    fn thinks_for_every_kind_from_a_move_list() {
        let mut rng = Rng::new(3);
        for kind in ["unane", "staku", "akron", "akunur"] {
            let k = stoa_protocol::kind(kind).unwrap();
            let options = k.validate_options(&Value::Null).unwrap();
            let mut game = k.start(&options).unwrap();
            let first = game.legal_notations()[0].clone();
            game.play(&first).unwrap();
            let mv = think(
                kind,
                &options,
                &[first],
                1,
                Duration::from_millis(20),
                &mut rng,
            )
            .unwrap()
            .expect("a move");
            assert!(game.legal_notations().contains(&mv), "{kind}: {mv}");
        }
        assert!(think("chess", &json!({}), &[], 1, Duration::ZERO, &mut rng).is_err());
    }
}

//! Two players seated in one game, moving with legal moves a local rules engine picks.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use stoa_protocol::AnyGame;

use crate::conn::{is_type, seq_of, source, wall_now, Conn};

/// One game: its id, both players, and the engine that picks their moves.
pub struct Table {
    /// Game id.
    pub game_id: String,
    /// Room code (to let spectators of a private game in).
    pub code: String,
    /// The players by side index (the first-acting side first); a swap exchanges them.
    pub seats: [Conn; 2],
    game: Box<dyn AnyGame>,
    seed: u64,
    ply: u64,
}

/// What one move measured.
pub struct MoveTiming {
    /// From sending `game.move` to the opponent receiving its diff.
    pub to_opponent: Duration,
    /// From sending `game.move` to the server putting the opponent's diff on the wire (the
    /// kernel's stamp, see [`Conn::stamp`]).
    pub to_opponent_on_wire: Option<Duration>,
    /// The move's seq.
    pub seq: u64,
}

impl Table {
    /// Two new guests (connections `index*2` and `index*2+1` for source addresses) and a
    /// room of `kind`/`options` with `clock`; the host takes the first side.
    pub async fn open(
        server: SocketAddr,
        index: usize,
        kind: &str,
        options: &Value,
        clock: &Value,
        visibility: &str,
    ) -> std::io::Result<Table> {
        let engine = stoa_protocol::kind(kind).map_err(std::io::Error::other)?;
        let valid = engine
            .validate_options(options)
            .map_err(std::io::Error::other)?;
        let game = engine.start(&valid).map_err(std::io::Error::other)?;
        let first = game.side_names()[0];
        let mut host = Conn::open(server, source(index * 2)).await?;
        let mut guest = Conn::open(server, source(index * 2 + 1)).await?;
        let room = host
            .request(json!({"t":"room.create","kind":kind,"options":options,
                "clock":clock,"rated":false,"visibility":visibility,"side":first}))
            .await;
        let code = room["room"]["code"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let joined = guest.request(json!({"t":"room.join","code":code})).await;
        if joined["t"] != "room" {
            return Err(std::io::Error::other(format!("room.join failed: {joined}")));
        }
        let mut game_id = String::new();
        for c in [&mut host, &mut guest] {
            let started = c.until(|t| is_type(t, "game.started")).await;
            game_id = started["game_id"].as_str().unwrap_or_default().to_string();
            c.until(|t| is_type(t, "game.snapshot")).await;
        }
        Ok(Table {
            game_id,
            code,
            seats: [host, guest],
            game,
            seed: index as u64,
            ply: 0,
        })
    }

    /// Whether the game is still on.
    pub fn on(&self) -> bool {
        self.game.to_act().is_some()
    }

    /// Plays one legal move: sends it, waits for the opponent's diff and the mover's `ok`.
    /// `sent` is called with the send instant (spectator timing). `None` once ended.
    pub async fn step(&mut self, sent: impl FnOnce(Instant)) -> Option<MoveTiming> {
        let side = self.game.to_act()?.index();
        // Picked without formatting every legal action (on 16x15 that listing made the
        // generator, not the server, the bottleneck).
        let (seed, ply) = (self.seed, self.ply);
        let mv = self
            .game
            .pick_legal(&mut |n| stoa_tests::pick(seed, ply, n))?;
        self.ply += 1;
        let (a, b) = self.seats.split_at_mut(1);
        let (mover, other) = if side == 0 {
            (&mut a[0], &mut b[0])
        } else {
            (&mut b[0], &mut a[0])
        };
        let (start, start_wall) = (Instant::now(), wall_now());
        let rid = mover
            .send(json!({"t":"game.move","game_id":self.game_id,"move":mv}))
            .await;
        sent(start);
        let diff = other.until_text(|t| is_type(t, "game.diff")).await?;
        let to_opponent = start.elapsed();
        let to_opponent_on_wire = other.stamp().map(|at| at.saturating_sub(start_wall));
        let tag = format!("\"rid\":{rid},");
        let answer = mover.until_text(|t| t.contains(&tag)).await?;
        if !is_type(&answer, "ok") {
            eprintln!("move refused: {answer}");
            return None;
        }
        let played = self.game.play(&mv).ok()?;
        if played.swap {
            self.seats.swap(0, 1);
        }
        Some(MoveTiming {
            to_opponent,
            to_opponent_on_wire,
            seq: seq_of(&diff)?,
        })
    }
}

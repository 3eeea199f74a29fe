//! `stoa analyse`: a finished game's engine review, printed as a table of plies and a graph
//! (asked for when there is none yet, then waited for); with `--serve`, an analysis worker
//! that connects like a bot and reviews the games the server hands it (`analysis.job`).

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use stoa_protocol::wire::{
    AnalysisRequestBody, AnalysisResult, AnalysisResultBody, AnalysisServeBody, AnalysisState,
    ClientMessage, ServerMessage,
};
use tokio::time::Instant;

use super::review::{review, Budget};
use super::search::Rng;
use crate::commands::{block_on, connect, resolved, Global};
use crate::connection::{ConnEvent, Connection};

/// Arguments of `stoa analyse`.
#[derive(Clone, Debug, Args)]
pub struct AnalyseArgs {
    /// The finished game to review (its id).
    #[arg(required_unless_present = "serve")]
    game: Option<String>,
    /// The room code of a private game.
    #[arg(long)]
    code: Option<String>,
    /// How long to wait for the review, in seconds.
    #[arg(long, default_value_t = 300)]
    wait: u64,
    /// Be an analysis worker: take review jobs from the server, one at a time.
    #[arg(long, conflicts_with = "game")]
    serve: bool,
    /// With `--serve`: the kinds reviewed, comma-separated (default: all).
    #[arg(long, requires = "serve")]
    kinds: Option<String>,
    /// With `--serve`: the worker's key, where the server requires one (its operator
    /// gives it: `--analysis-keys` of the server).
    #[arg(long, env = "STOA_ANALYSIS_KEY", hide_env_values = true)]
    key: Option<String>,
    /// With `--serve`: playouts of the tree search per position.
    #[arg(long, default_value_t = Budget::default().playouts)]
    playouts: u32,
    /// With `--serve`: nodes of the proof search per position.
    #[arg(long, default_value_t = Budget::default().proof_nodes)]
    proof_nodes: u32,
    /// With `--serve`: the longest search per position, in milliseconds.
    #[arg(long, default_value_t = Budget::default().per_position.as_millis() as u64)]
    position_ms: u64,
    /// With `--serve`: stop after this many jobs (0: serve until stopped).
    #[arg(long, default_value_t = 0)]
    jobs: u32,
}

impl AnalyseArgs {
    /// Prints a game's review, or serves as a worker.
    pub fn run(&self, global: &Global) -> ExitCode {
        let run = async {
            let mut global = resolved(global)?;
            if self.serve {
                global.bot = true;
                if global.name.is_none() {
                    global.name = Some("analysis-worker".into());
                }
                let (conn, me, events) = connect(&global).await?;
                println!("analysis worker {} ({})", me.name, me.id);
                self.serve(conn, events).await
            } else {
                let (conn, _, _events) = connect(&global).await?;
                self.print_review(&conn).await
            }
        };
        block_on(run).unwrap_or_else(|code| code)
    }

    /// Asks for the review and waits for it, saying what it waits for.
    async fn print_review(&self, conn: &Connection) -> Result<ExitCode, ExitCode> {
        let game = self.game.clone().unwrap_or_default();
        let until = Instant::now() + Duration::from_secs(self.wait);
        let mut said = None;
        loop {
            let msg = ClientMessage::AnalysisRequest(AnalysisRequestBody {
                rid: None,
                game_id: game.clone(),
                code: self.code.clone(),
            });
            let (state, result) = match conn.request(msg).await {
                Ok(ServerMessage::Analysis { state, result, .. }) => (state, result),
                Ok(other) => {
                    eprintln!("error: unexpected answer {other:?}");
                    return Err(ExitCode::FAILURE);
                }
                Err(e) => {
                    eprintln!("error {}: {}", e.code(), e.message());
                    return Err(ExitCode::FAILURE);
                }
            };
            if let (AnalysisState::Done, Some(result)) = (state, &result) {
                print!("{}", table(&game, result));
                return Ok(ExitCode::SUCCESS);
            }
            if said != Some(state) {
                eprintln!("{}", waiting_line(state));
                said = Some(state);
            }
            if Instant::now() >= until {
                eprintln!("error: no review within {} s", self.wait);
                return Err(ExitCode::FAILURE);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }

    /// The worker: says `analysis.serve`, reviews each job on a blocking thread (the
    /// connection keeps answering meanwhile) and sends the result.
    async fn serve(
        &self,
        conn: Connection,
        mut events: tokio::sync::mpsc::UnboundedReceiver<ConnEvent>,
    ) -> Result<ExitCode, ExitCode> {
        let kinds: Vec<String> = self
            .kinds
            .as_deref()
            .unwrap_or("")
            .split(',')
            .map(|k| k.trim().to_ascii_lowercase())
            .filter(|k| !k.is_empty())
            .collect();
        let serve = ClientMessage::AnalysisServe(AnalysisServeBody {
            rid: None,
            kinds,
            key: self.key.clone(),
        });
        if let Err(e) = conn.request(serve.clone()).await {
            eprintln!("error {}: {}", e.code(), e.message());
            return Err(ExitCode::FAILURE);
        }
        let budget = Budget {
            playouts: self.playouts,
            proof_nodes: self.proof_nodes,
            per_position: Duration::from_millis(self.position_ms),
            ..Budget::default()
        };
        let mut done = 0u32;
        while self.jobs == 0 || done < self.jobs {
            let Some(event) = events.recv().await else {
                return Err(ExitCode::FAILURE);
            };
            match event {
                ConnEvent::Reconnected(_) => conn.send(serve.clone()),
                ConnEvent::Message(ServerMessage::AnalysisJob {
                    job,
                    game_id,
                    kind,
                    options,
                    moves,
                }) => {
                    println!("job {job} game {game_id} ({kind}, {} moves)", moves.len());
                    let reviewed = tokio::task::spawn_blocking(move || {
                        review(&kind, &options, &moves, &budget, &mut Rng::new(1))
                    })
                    .await
                    .unwrap_or_else(|e| Err(e.to_string()));
                    let result = match reviewed {
                        Ok(r) => r,
                        Err(e) => {
                            // The job goes back to the queue when this worker asks anew.
                            eprintln!("job {job}: cannot review: {e}");
                            conn.send(serve.clone());
                            continue;
                        }
                    };
                    let msg = ClientMessage::AnalysisResult(AnalysisResultBody {
                        rid: None,
                        job: job.clone(),
                        result,
                    });
                    match conn.request(msg).await {
                        Ok(_) => println!("job {job} done"),
                        Err(e) => eprintln!("job {job}: {} {}", e.code(), e.message()),
                    }
                    done += 1;
                }
                ConnEvent::Disconnected(why) => {
                    eprintln!("{}", crate::session::disconnected_line(&why))
                }
                _ => {}
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// What a review not done yet waits for.
fn waiting_line(state: AnalysisState) -> &'static str {
    match state {
        AnalysisState::WaitingForWorker => "waiting for an analysis worker (none is connected)",
        AnalysisState::Queued => "queued for an analysis worker",
        AnalysisState::Running => "an analysis worker is reviewing the game",
        AnalysisState::None | AnalysisState::Done => "asking for the review",
    }
}

/// The printed review: one line per ply (ply, side, move, the mover's win probability
/// before and after, the mark and the engine's preferred move), then the graph.
pub fn table(game: &str, r: &AnalysisResult) -> String {
    let mut out = format!("review of {game} ({})\n", r.engine);
    out.push_str("ply  side    move          eval  after  mark        best\n");
    for p in &r.plies {
        let mark = p.mark.map_or("", |m| m.as_str());
        let best = match (&p.mark, &p.best) {
            (Some(_), Some(b)) => b.as_str(),
            _ => "",
        };
        out.push_str(&format!(
            "{:>3}  {:<6}  {:<12}  {:.2}  {:.2}   {:<10}  {}\n",
            p.ply, p.side, p.played, p.eval, p.after, mark, best
        ));
    }
    // The first ply is always the first-acting side's.
    let first = r
        .plies
        .first()
        .map_or("the first side", |p| p.side.as_str());
    out.push_str(&format!(
        "graph ({first}'s win probability, start to end): {}\n",
        graph(r)
    ));
    let counts = |m: &str| {
        r.plies
            .iter()
            .filter(|p| p.mark.map(|k| k.as_str()) == Some(m))
            .count()
    };
    out.push_str(&format!(
        "{} inaccuracies, {} mistakes, {} blunders\n",
        counts("inaccuracy"),
        counts("mistake"),
        counts("blunder")
    ));
    out
}

/// The first side's win probability from the start through every ply, one block character
/// each (low to high).
pub fn graph(r: &AnalysisResult) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    std::iter::once(r.start)
        .chain(r.plies.iter().map(|p| p.first))
        .map(|v| BARS[((v.clamp(0.0, 1.0) * 7.0).round()) as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use stoa_protocol::wire::{AnalysisPly, Mark};

    #[test]
    fn the_table_marks_the_blunder_with_the_preferred_move() {
        let ply = |n: u32, side: &str, m: &str, eval: f64, after: f64, best: &str| AnalysisPly {
            ply: n,
            side: side.into(),
            played: m.into(),
            eval,
            after,
            first: if side == "black" { after } else { 1.0 - after },
            best: Some(best.into()),
            mark: Mark::of(eval, after, m == best),
        };
        let r = AnalysisResult {
            start: 0.5,
            plies: vec![
                ply(1, "black", "-a4", 0.5, 0.5, "-a4"),
                ply(2, "white", "b1xb2", 1.0, 0.0, "-c3"),
            ],
            engine: "test".into(),
        };
        let text = table("g1", &r);
        assert!(
            text.contains("  2  white   b1xb2         1.00  0.00   blunder     -c3"),
            "{text}"
        );
        assert!(text.contains("(black's win probability"), "{text}");
        assert_eq!(graph(&r), "▅▅█");
        assert!(
            text.contains("0 inaccuracies, 0 mistakes, 1 blunders"),
            "{text}"
        );
    }
}

//! `stoa arena <id|code>`: follow an arena tournament (its standings, kept live), join it,
//! pause, and play the games it pairs in the usual game screen.

use clap::Args;

use crate::session::Start;

/// Arguments of `stoa arena`.
#[derive(Clone, Debug, Args)]
#[command(
    after_help = "At the prompt: join (enter the pool; pairing is automatic), pause \
                        (leave it; points stay), standings, berserk (in an arena game, \
                        before your first move), help, quit (pauses you). When a game is \
                        paired it opens like any game; at its end the standings come back."
)]
pub struct ArenaArgs {
    /// The arena's id (`a…`), or a private arena's code.
    target: String,
    /// Join the arena at once (as typing join).
    #[arg(long)]
    join: bool,
}

impl ArenaArgs {
    /// The arena request.
    pub fn start(&self) -> Start {
        Start::Arena {
            target: self.target.trim().to_string(),
            join: self.join,
        }
    }
}

//! `stoa host-arena <kind>`: create an arena tournament, print its id (or a private
//! arena's code) to share, then follow it as `stoa arena` does.

use clap::Args;
use stoa_protocol::wire::{ArenaSettings, Visibility};

use super::GameSettings;
use crate::session::Start;

/// Arguments of `stoa host-arena`.
#[derive(Clone, Debug, Args)]
pub struct HostArenaArgs {
    #[command(flatten)]
    settings: GameSettings,
    /// How long the arena runs, in minutes (the server takes 10 s to 24 h).
    #[arg(long, default_value_t = 30.0)]
    minutes: f64,
    /// Start in this many seconds (default: at once).
    #[arg(long, default_value_t = 0)]
    starts_in: u64,
    /// Reachable only by its code, not listed in the lobby.
    #[arg(long)]
    private: bool,
    /// The arena's name (default: from the kind and clock; `--name` is yours).
    #[arg(long)]
    title: Option<String>,
    /// Players may go berserk (halve their clock for an extra point).
    #[arg(long)]
    berserk: bool,
    /// Computer players may join (casual arenas only).
    #[arg(long)]
    bots: bool,
    /// Join the arena's pool yourself once it is created.
    #[arg(long)]
    join: bool,
}

impl HostArenaArgs {
    /// The arena's creation request.
    pub fn start(&self) -> Result<Start, String> {
        let (kind, options, clock) = self.settings.resolve()?;
        if !self.minutes.is_finite() || self.minutes <= 0.0 {
            return Err("--minutes must be a positive number".into());
        }
        Ok(Start::NewArena {
            settings: Box::new(ArenaSettings {
                kind,
                options,
                clock: Some(clock),
                rated: self.settings.rated,
                starts_in_ms: (self.starts_in > 0).then(|| self.starts_in.saturating_mul(1000)),
                starts_at_ms: None,
                duration_ms: (self.minutes * 60_000.0).round() as u64,
                visibility: Some(if self.private {
                    Visibility::Private
                } else {
                    Visibility::Public
                }),
                name: self.title.clone(),
                bots: self.bots,
                berserk: self.berserk,
                min_draw_plies: 0,
            }),
            join: self.join,
        })
    }
}

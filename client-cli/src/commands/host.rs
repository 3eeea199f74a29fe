//! `stoa host <kind>`: create a room, print its code and a line to share, wait for the
//! opponent, then play.

use clap::Args;
use stoa_protocol::wire::Visibility;

use super::GameSettings;
use crate::session::Start;

/// Arguments of `stoa host`.
#[derive(Clone, Debug, Args)]
pub struct HostArgs {
    #[command(flatten)]
    settings: GameSettings,
    /// List the room in the lobby (anyone may join or watch).
    #[arg(long, conflicts_with = "private")]
    public: bool,
    /// Reachable only by its code (the default).
    #[arg(long)]
    private: bool,
    /// Your side: random, or a side name of the game (e.g. white, black).
    #[arg(long, default_value = "random")]
    side: String,
}

impl HostArgs {
    /// The room request.
    pub fn start(&self) -> Result<Start, String> {
        let (kind, options, clock) = self.settings.resolve()?;
        let side = self.side.to_ascii_lowercase();
        if side != "random" {
            let names = stoa_protocol::kind(&kind)
                .map_err(|e| e.to_string())?
                .side_names;
            if !names.contains(&side.as_str()) {
                return Err(format!(
                    "--side must be random, {} or {}",
                    names[0], names[1]
                ));
            }
        }
        Ok(Start::Host {
            kind,
            options,
            clock,
            rated: self.settings.rated,
            visibility: if self.public {
                Visibility::Public
            } else {
                Visibility::Private
            },
            side,
        })
    }
}

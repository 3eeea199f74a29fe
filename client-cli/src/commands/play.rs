//! `stoa play <kind>`: join the quick-pairing queue and play the game it pairs.

use clap::Args;

use super::GameSettings;
use crate::session::Start;

/// Arguments of `stoa play`.
#[derive(Clone, Debug, Args)]
pub struct PlayArgs {
    #[command(flatten)]
    settings: GameSettings,
}

impl PlayArgs {
    /// The queue request.
    pub fn start(&self) -> Result<Start, String> {
        let (kind, options, clock) = self.settings.resolve()?;
        Ok(Start::Queue {
            kind,
            options,
            clock,
            rated: self.settings.rated,
        })
    }
}

//! `stoa play <kind>`: join the quick-pairing queue and play the game it pairs; with
//! `--computer <level>`, play a computer opponent the server's operator runs instead.

use clap::Args;

use super::GameSettings;
use crate::session::Start;

/// Arguments of `stoa play`.
#[derive(Clone, Debug, Args)]
pub struct PlayArgs {
    #[command(flatten)]
    settings: GameSettings,
    /// Play the computer at this level (1 makes mistakes on purpose, 5 is the strongest);
    /// games against the computer are unrated.
    #[arg(long, value_parser = clap::value_parser!(u8).range(1..=5))]
    computer: Option<u8>,
    /// Your side against the computer (`random` or a side name).
    #[arg(long, default_value = "random", requires = "computer")]
    side: String,
}

impl PlayArgs {
    /// The queue request.
    pub fn start(&self) -> Result<Start, String> {
        let (kind, options, clock) = self.settings.resolve()?;
        if let Some(level) = self.computer {
            return Ok(Start::Computer {
                kind,
                options,
                clock,
                level,
                side: self.side.clone(),
            });
        }
        Ok(Start::Queue {
            kind,
            options,
            clock,
            rated: self.settings.rated,
        })
    }
}

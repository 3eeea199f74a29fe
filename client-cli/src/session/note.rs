//! The lines the session has for the user, which each front-end shows its own way.

/// A line for the user.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    /// Something happened.
    Info(String),
    /// A request failed: `error <code>: <message>`.
    Error(String),
    /// Long output the user asked for (legal moves, help, a game's guide): plain mode prints
    /// `text`; the terminal UI shows it in a scrollable window titled `title`, since a
    /// message pane of a few rows would cut it.
    Page {
        /// What it is, e.g. `legal moves (12)`.
        title: String,
        /// The text, lines separated by `\n`.
        text: String,
    },
    /// The end of a game: plain mode prints `plain` (`game over: white wins by resign`, the
    /// protocol's codes, which scripts read); the terminal UI shows `people`, the same end
    /// in words (`game over: Black resigned — White wins`).
    End {
        /// The line for scripts.
        plain: String,
        /// The line for people.
        people: String,
    },
}

impl Note {
    /// The line's text.
    pub fn text(&self) -> &str {
        match self {
            Note::Info(s) | Note::Error(s) | Note::Page { text: s, .. } => s,
            Note::End { plain, .. } => plain,
        }
    }
}

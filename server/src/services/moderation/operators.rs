//! Who may use the operators' console: the accounts named in `--admin-file`, each with a
//! token of its own, one per line as `<name> <token>` (`#` starts a comment).
//!
//! Why tokens compared in constant time, and kept only as SHA-256 digests: a request's
//! bearer token is compared with every operator's by the `subtle` crate's constant-time
//! equality on digests of fixed length, so neither the time an answer takes nor a memory
//! dump tells a token; a tried token is never logged.

use std::path::Path;

use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The shortest operator token accepted (a token is a password nobody types).
pub const MIN_TOKEN_CHARS: usize = 24;

/// The operators named in the configuration.
#[derive(Clone, Default)]
pub struct Operators {
    /// (name, SHA-256 of the token).
    known: Vec<(String, [u8; 32])>,
}

impl std::fmt::Debug for Operators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.known.iter().map(|(n, _)| n.as_str()).collect();
        f.debug_struct("Operators").field("names", &names).finish()
    }
}

fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

impl Operators {
    /// Reads the operators' file; an error names the line that is wrong.
    pub fn load(path: &Path) -> Result<Operators, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the admin file {}: {e}", path.display()))?;
        Operators::parse(&text).map_err(|e| format!("admin file {}: {e}", path.display()))
    }

    /// Parses the file's text.
    pub fn parse(text: &str) -> Result<Operators, String> {
        let mut known = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (Some(name), Some(token), None) = (parts.next(), parts.next(), parts.next()) else {
                return Err(format!(
                    "line {}: expected '<name> <token>' (two words)",
                    n + 1
                ));
            };
            if token.chars().count() < MIN_TOKEN_CHARS {
                return Err(format!(
                    "line {}: the token of '{name}' is shorter than {MIN_TOKEN_CHARS} characters",
                    n + 1
                ));
            }
            if known.iter().any(|(k, _)| k == name) {
                return Err(format!("line {}: '{name}' is named twice", n + 1));
            }
            known.push((name.to_string(), digest(token)));
        }
        Ok(Operators { known })
    }

    /// Whether any operator is named (without, the console does not exist).
    pub fn any(&self) -> bool {
        !self.known.is_empty()
    }

    /// The operator whose token this is. Every operator's digest is compared, each in
    /// constant time, so the answer takes as long whoever (or nobody) matches.
    pub fn who(&self, token: &str) -> Option<&str> {
        let tried = digest(token);
        let mut found = None;
        for (name, known) in &self.known {
            if bool::from(known.ct_eq(&tried)) {
                found = Some(name.as_str());
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_are_read_and_matched() {
        let ops = Operators::parse(
            "# operators\nann aaaaaaaaaaaaaaaaaaaaaaaaaaaa\n\nbo  bbbbbbbbbbbbbbbbbbbbbbbbbbbb # night shift\n",
        )
        .unwrap();
        assert!(ops.any());
        assert_eq!(ops.who("aaaaaaaaaaaaaaaaaaaaaaaaaaaa"), Some("ann"));
        assert_eq!(ops.who("bbbbbbbbbbbbbbbbbbbbbbbbbbbb"), Some("bo"));
        assert_eq!(ops.who("aaaaaaaaaaaaaaaaaaaaaaaaaaab"), None);
        assert_eq!(ops.who(""), None);
        assert!(!Operators::default().any());
    }

    #[test]
    fn bad_lines_are_named() {
        assert_eq!(
            Operators::parse("ann\n").unwrap_err(),
            "line 1: expected '<name> <token>' (two words)"
        );
        assert_eq!(
            Operators::parse("ann short\n").unwrap_err(),
            "line 1: the token of 'ann' is shorter than 24 characters"
        );
        assert!(Operators::parse(
            "ann aaaaaaaaaaaaaaaaaaaaaaaaaaaa\nann cccccccccccccccccccccccccccc\n"
        )
        .unwrap_err()
        .contains("named twice"));
    }
}

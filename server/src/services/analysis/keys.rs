//! The analysis workers' keys, fishnet style: with `--analysis-keys <file>` (one key per
//! line, `#` starts a comment) only a worker whose `analysis.serve` carries one of them is
//! handed jobs, so only those workers write reviews into the records.
//!
//! Why digests compared in fixed time: a tried key is hashed (SHA-256) and its digest
//! compared with every known digest, byte by byte without stopping early, so neither the
//! time an answer takes nor a memory dump tells a key. A key is never logged.

use std::path::Path;

use sha2::{Digest, Sha256};

/// The shortest key accepted (a key is a password nobody types: `openssl rand -hex 16`).
pub const MIN_KEY_CHARS: usize = 16;

/// The keys of the analysis workers allowed to serve.
#[derive(Clone, Default)]
pub struct WorkerKeys {
    /// SHA-256 of each key.
    known: Vec<[u8; 32]>,
}

impl std::fmt::Debug for WorkerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WorkerKeys")
            .field("keys", &self.known.len())
            .finish()
    }
}

fn digest(key: &str) -> [u8; 32] {
    Sha256::digest(key.as_bytes()).into()
}

/// Whether two digests are equal, looking at every byte whatever the first difference.
fn same(a: &[u8; 32], b: &[u8; 32]) -> bool {
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

impl WorkerKeys {
    /// Reads the keys' file; an error names the line that is wrong (never the key).
    pub fn load(path: &Path) -> Result<WorkerKeys, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the analysis keys {}: {e}", path.display()))?;
        WorkerKeys::parse(&text).map_err(|e| format!("analysis keys {}: {e}", path.display()))
    }

    /// Parses the file's text: one key a line, blank lines and `#` comments skipped. A file
    /// with no key at all is an error (it would shut every worker out).
    pub fn parse(text: &str) -> Result<WorkerKeys, String> {
        let mut known = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            if line.split_whitespace().count() != 1 {
                return Err(format!("line {}: a key is one word", n + 1));
            }
            if line.chars().count() < MIN_KEY_CHARS {
                return Err(format!(
                    "line {}: a key is at least {MIN_KEY_CHARS} characters",
                    n + 1
                ));
            }
            known.push(digest(line));
        }
        if known.is_empty() {
            return Err("no key in the file".into());
        }
        Ok(WorkerKeys { known })
    }

    /// How many keys there are.
    pub fn len(&self) -> usize {
        self.known.len()
    }

    /// Whether there is none (no file given: every computer player may serve).
    pub fn is_empty(&self) -> bool {
        self.known.is_empty()
    }

    /// Whether `key` is one of the keys. Every digest is compared in full, so the answer
    /// takes as long whichever key (or none) matches.
    pub fn allows(&self, key: &str) -> bool {
        let tried = digest(key);
        self.known
            .iter()
            .fold(false, |found, k| same(k, &tried) | found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_with_comments_and_only_they_are_allowed() {
        let keys = WorkerKeys::parse(
            "# the workers of the deployment\n\
             0123456789abcdef0123   # worker one\n\
             \n\
             fedcba9876543210fedc\n",
        )
        .expect("parse");
        assert_eq!(keys.len(), 2);
        assert!(keys.allows("0123456789abcdef0123"));
        assert!(keys.allows("fedcba9876543210fedc"));
        assert!(!keys.allows("0123456789abcdef012"));
        assert!(!keys.allows(""));
        assert!(!keys.allows("# the workers of the deployment"));
        assert_eq!(format!("{keys:?}"), "WorkerKeys { keys: 2 }");
    }

    #[test]
    fn a_bad_file_names_its_line_and_not_the_key() {
        let short = WorkerKeys::parse("# c\nshortkey\n").unwrap_err();
        assert_eq!(short, "line 2: a key is at least 16 characters");
        let two = WorkerKeys::parse("0123456789abcdef0123 fedcba9876543210fedc\n").unwrap_err();
        assert_eq!(two, "line 1: a key is one word");
        assert!(!two.contains("0123456789abcdef"));
        assert_eq!(
            WorkerKeys::parse("# only comments\n").unwrap_err(),
            "no key in the file"
        );
    }
}

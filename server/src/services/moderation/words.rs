//! The deployment's word filter (`--word-filter <file>`): a chat line holding one of the
//! listed words is refused with `bad_request` and counted for operators.
//!
//! Why whole words, case- and accent-folded: a list of words should not refuse "class"
//! for "ass"; folding (NFKD, marks dropped, lower case) catches "ÀSS" and "ａｓｓ" without a
//! list of every spelling.

use std::collections::HashSet;
use std::path::Path;

use unicode_normalization::UnicodeNormalization;

/// The listed words, folded.
#[derive(Clone, Debug, Default)]
pub struct WordFilter {
    words: HashSet<String>,
    /// Listed phrases of several words, folded and joined by one space.
    phrases: Vec<String>,
}

/// Text folded for comparison: compatibility-decomposed, combining marks dropped, lower
/// case; every run of non-alphanumeric characters becomes one space.
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut gap = true;
    for c in text
        .nfkd()
        .filter(|c| !unicode_normalization::char::is_combining_mark(*c))
    {
        if c.is_alphanumeric() {
            out.extend(c.to_lowercase());
            gap = false;
        } else if !gap {
            out.push(' ');
            gap = true;
        }
    }
    out.trim_end().to_string()
}

impl WordFilter {
    /// Reads the list: one word or phrase per line, `#` starts a comment.
    pub fn load(path: &Path) -> Result<WordFilter, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the word filter {}: {e}", path.display()))?;
        Ok(WordFilter::parse(&text))
    }

    /// The list in `text`.
    pub fn parse(text: &str) -> WordFilter {
        let mut filter = WordFilter::default();
        for line in text.lines() {
            let folded = fold(line.split('#').next().unwrap_or(""));
            if folded.is_empty() {
                continue;
            }
            if folded.contains(' ') {
                filter.phrases.push(folded);
            } else {
                filter.words.insert(folded);
            }
        }
        filter
    }

    /// Whether `text` holds a listed word (as a whole word) or phrase.
    pub fn refuses(&self, text: &str) -> bool {
        if self.words.is_empty() && self.phrases.is_empty() {
            return false;
        }
        let folded = fold(text);
        if folded.split(' ').any(|w| self.words.contains(w)) {
            return true;
        }
        let padded = format!(" {folded} ");
        self.phrases
            .iter()
            .any(|p| padded.contains(&format!(" {p} ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_words_folded() {
        let f = WordFilter::parse("# list\nass\nBad Word\n\n");
        assert!(f.refuses("you ass"));
        assert!(f.refuses("ÀSS!"));
        assert!(f.refuses("ａｓｓ"));
        assert!(!f.refuses("first class pass"));
        assert!(f.refuses("what a bad   word, really"));
        assert!(!f.refuses("badword"));
        assert!(!WordFilter::default().refuses("ass"));
    }
}

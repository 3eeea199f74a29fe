//! The documentation's own checks: every relative link in README.md, docs/ and
//! deploy/OPERATIONS.md names a file that exists (and, for a Markdown file, a heading it
//! has), and the README's quick start gives the commands the project really runs.
//!
//! Why a test: the documentation is split over a dozen files that move with the code, and
//! a link to a renamed file or heading fails silently for whoever follows it.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The Markdown files checked: the README, every file under docs/, the operator's guide.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("deploy/OPERATIONS.md")];
    let mut dirs = vec![root.join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).expect("read docs/") {
            let path = entry.expect("a docs/ entry").path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files
}

/// The text outside fenced code blocks (a board drawn in a block is no link).
fn prose(text: &str) -> String {
    let mut inside = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            inside = !inside;
        } else if !inside {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the `[text](target)` links in `text`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        if let Some(end) = rest.find(')') {
            let target = &rest[..end];
            if !target.contains(char::is_whitespace) {
                out.push(target.to_string());
            }
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The anchors of a Markdown file's headings.
fn anchors(path: &Path) -> HashSet<String> {
    let text = std::fs::read_to_string(path).expect("read a linked document");
    prose(&text)
        .lines()
        .filter(|l| l.starts_with('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

#[test]
fn every_relative_link_names_a_file_and_heading_that_exist() {
    let mut broken = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).expect("read a document");
        for target in links(&prose(&text)) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let file = if path.is_empty() {
                doc.clone()
            } else {
                doc.parent().expect("a document's folder").join(path)
            };
            if !file.exists() {
                broken.push(format!("{}: {target} (no such file)", doc.display()));
            } else if !fragment.is_empty()
                && file.extension().is_some_and(|e| e == "md")
                && !anchors(&file).contains(fragment)
            {
                broken.push(format!("{}: {target} (no such heading)", doc.display()));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_quick_start_runs_the_commands_the_project_runs() {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("read README.md");
    let quick_start = readme
        .split("## Quick start")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a Quick start section");
    let commands: Vec<&str> = quick_start
        .split("```sh\n")
        .skip(1)
        .filter_map(|block| block.split("```").next())
        .map(str::trim)
        .collect();
    // The server on its embedded default (no Redis), and the whole suite exactly as CI
    // runs it: `.ci/run` ends with the same command.
    assert_eq!(
        commands,
        [
            "cargo run --release -p stoa-server",
            "cargo test --workspace"
        ],
        "{quick_start}"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).expect("read .ci/run");
    assert_eq!(
        ci.lines().rev().find(|l| !l.trim().is_empty()),
        Some("cargo test --workspace"),
        "{ci}"
    );
}

#[test]
fn anchors_follow_githubs_rule() {
    assert_eq!(
        anchor(" Fault bench (`stoa-faults`)"),
        "fault-bench-stoa-faults"
    );
    assert_eq!(anchor("Arenas (additions)"), "arenas-additions");
    assert_eq!(
        anchor("Your games, ratings and leaderboards"),
        "your-games-ratings-and-leaderboards"
    );
}

//! The help of the offline subcommands lists only what acts offline (issue 47, item 10):
//! `--server`, `--plain`, `--name` and `--ca-file` belong to the commands that talk to a
//! server, and clap copies them into every subcommand.
#![forbid(unsafe_code)]

mod common;

use common::{fails, ok};

/// The options of the networked commands, as their help spells them.
const NETWORKED: &[&str] = &["--server", "--plain", "--name <NAME>", "--ca-file"];

#[test]
fn offline_help_lists_only_offline_flags() {
    for args in [
        &["rules", "--help"][..],
        &["rules", "legal", "--help"],
        &["rules", "perft", "--help"],
        &["rules", "start", "--help"],
        &["tournament", "--help"],
    ] {
        let help = ok(args);
        for flag in NETWORKED {
            assert!(!help.contains(flag), "stoa {args:?} lists {flag}:\n{help}");
        }
        assert!(help.contains("--help"), "{help}");
    }
    // Their own options are still there.
    let legal = ok(&["rules", "legal", "--help"]);
    for flag in ["--options", "--position", "--moves", "--record"] {
        assert!(legal.contains(flag), "{legal}");
    }
    assert!(ok(&["tournament", "--help"]).contains("--games"));
    // The networked commands keep them.
    let host = ok(&["host", "--help"]);
    for flag in NETWORKED {
        assert!(
            host.contains(flag),
            "stoa host --help lacks {flag}:\n{host}"
        );
    }
}

#[test]
fn offline_commands_still_accept_the_networked_flags() {
    // A `--server` given out of habit (or from an alias) changes nothing offline.
    assert_eq!(
        ok(&["rules", "start", "staku", "--server", "ws://example.org/ws"]),
        ok(&["rules", "start", "staku"])
    );
    assert_eq!(
        ok(&["--plain", "rules", "start", "unane"]),
        ok(&["rules", "start", "unane"])
    );
    let err = fails(&["rules", "start", "chess", "--server", "ws://example.org/ws"]);
    assert!(err.starts_with("error: ") && err.contains("chess"), "{err}");
}

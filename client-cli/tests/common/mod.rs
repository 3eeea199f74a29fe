//! Running the real `stoa` binary from the CLI tests.

use std::process::{Command, Output};

/// Runs `stoa` with `args`.
pub fn stoa(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_stoa"))
        .args(args)
        .output()
        .expect("run stoa")
}

/// Runs a command that must succeed; returns its stdout.
pub fn ok(args: &[&str]) -> String {
    let out = stoa(args);
    assert!(
        out.status.success(),
        "stoa {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

/// Runs a command that must fail with status 2 and nothing on stdout; returns its stderr.
pub fn fails(args: &[&str]) -> String {
    let out = stoa(args);
    assert_eq!(out.status.code(), Some(2), "stoa {args:?} should exit 2");
    assert!(out.stdout.is_empty(), "stoa {args:?} printed on stdout");
    String::from_utf8(out.stderr).expect("utf-8")
}

//! Helpers shared by the end-to-end tests: starting binaries, free ports, websocket clients.
#![forbid(unsafe_code)]

use std::path::PathBuf;

/// Path of a workspace binary built by cargo (`stoa-server`, `stoa`).
pub fn binary(name: &str) -> PathBuf {
    let mut dir = std::env::current_exe().expect("test executable path");
    dir.pop();
    if dir.ends_with("deps") {
        dir.pop();
    }
    dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX))
}

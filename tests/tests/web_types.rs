//! The web client's types: its modules (`server/web/`, plain JavaScript with `// @ts-check`
//! and JSDoc) pass `tsc --noEmit` under `server/web/tsconfig.json`, and the wire messages they
//! are checked against (`server/web/wire.d.ts`) are the ones generated from the Rust wire
//! types (`stoa_protocol::typescript`), so a change of the protocol that the page does not
//! follow fails here rather than in a browser.
//!
//! TypeScript comes from npm (`server/web/package.json`; `.ci/run` installs it). Where it is
//! missing the type check says so and skips; under CI (`CI` set) it fails instead.
#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// `server/web/` of this workspace.
fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("server")
        .join("web")
}

/// The committed declarations of the wire messages.
fn wire_file() -> PathBuf {
    web_dir().join("wire.d.ts")
}

/// `STOA_BLESS=1 cargo test -p stoa-tests --test web_types` writes the file anew.
#[test]
fn the_wire_types_of_the_web_client_are_generated_from_the_rust_ones() {
    let generated = stoa_protocol::typescript::wire_declarations();
    if std::env::var_os("STOA_BLESS").is_some() {
        std::fs::write(wire_file(), &generated).expect("write server/web/wire.d.ts");
    }
    let committed = std::fs::read_to_string(wire_file()).unwrap_or_default();
    assert!(
        committed == generated,
        "server/web/wire.d.ts is not what the Rust wire types generate; write it anew with \
         `STOA_BLESS=1 cargo test -p stoa-tests --test web_types` and commit it"
    );
    // The declarations name what the page reads: a broken generator is caught here.
    for name in ["ServerMessage", "ClientMessage", "PlayerInfo", "RoomInfo"] {
        assert!(
            generated.contains(&format!("export type {name} =")),
            "{name} is not declared"
        );
    }
}

/// The `tsc` to run: the one `npm install` put under `server/web/node_modules`, else one on
/// the PATH.
fn tsc() -> Option<PathBuf> {
    let local = web_dir().join("node_modules").join(".bin").join("tsc");
    if local.is_file() {
        return Some(local);
    }
    let on_path = Command::new("tsc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    on_path.then(|| PathBuf::from("tsc"))
}

#[test]
fn the_web_client_passes_the_type_checker() {
    let Some(tsc) = tsc() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "`tsc` is not installed (npm install --prefix server/web); .ci/run installs it"
        );
        eprintln!("skipping: `tsc` is not installed (npm install --prefix server/web)");
        return;
    };
    let out = Command::new(&tsc)
        .args(["--noEmit", "--pretty", "false", "-p"])
        .arg(web_dir())
        .output()
        .expect("run tsc");
    assert!(
        out.status.success(),
        "tsc found errors in server/web:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Every page module is checked: `// @ts-check` opens each, so an editor checks them too,
/// and the type checker's configuration covers them.
#[test]
fn every_module_of_the_web_client_asks_to_be_checked() {
    let mut stack = vec![web_dir()];
    let mut seen = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read server/web") {
            let path = entry.expect("entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "node_modules" && name != "vendor" {
                    stack.push(path);
                }
            } else if name.ends_with(".js") {
                let text = std::fs::read_to_string(&path).expect("read a module");
                assert!(
                    text.starts_with("// @ts-check\n"),
                    "{} does not start with // @ts-check",
                    path.display()
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 20, "only {seen} modules found");
}

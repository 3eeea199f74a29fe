//! TypeScript declarations of the wire messages, for the web client's type checker: the page
//! is plain JavaScript with JSDoc types, and `server/web/wire.d.ts` is this module's text
//! (tests/tests/web_types.rs compares the two and runs `tsc`). Behind the optional `ts`
//! feature, so the protocol's normal build carries no `ts-rs`; nothing here does I/O.

use std::collections::BTreeMap;

use ts_rs::{Config, TypeVisitor, TS};

use crate::wire::{ClientMessage, ServerMessage};

/// What opens the generated file.
const HEADER: &str =
    "// The wire messages of protocol/docs/PROTOCOL.md as TypeScript types, generated from the\n\
// Rust types of protocol/src/wire/ by `stoa_protocol::typescript`. Do not edit: write it anew\n\
// with `STOA_BLESS=1 cargo test -p stoa-tests --test web_types`.\n\n";

/// Gathers the declaration of every named type a message is built from, by name.
struct Declarations<'a> {
    cfg: &'a Config,
    by_name: BTreeMap<String, String>,
}

impl TypeVisitor for Declarations<'_> {
    fn visit<T: TS + 'static + ?Sized>(&mut self) {
        // Only the types that have a declaration of their own (not `string`, `Array<…>`).
        if T::output_path().is_none() {
            return;
        }
        let name = T::ident(self.cfg);
        if self.by_name.contains_key(&name) {
            return;
        }
        let mut decl = T::docs().unwrap_or_default();
        decl.push_str("export ");
        decl.push_str(&T::decl(self.cfg));
        self.by_name.insert(name, decl);
        T::visit_dependencies(self);
    }
}

/// The text of `server/web/wire.d.ts`: every message a client sends or receives and every
/// type they name, in the order of their names (so the file changes only with the types).
pub fn wire_declarations() -> String {
    // Integers on the wire are JSON numbers: JavaScript reads them as `number`.
    let cfg = Config::new().with_large_int("number");
    let mut all = Declarations {
        cfg: &cfg,
        by_name: BTreeMap::new(),
    };
    all.visit::<ClientMessage>();
    all.visit::<ServerMessage>();
    let mut out = String::from(HEADER);
    for decl in all.by_name.values() {
        out.push_str(decl);
        out.push_str("\n\n");
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::wire_declarations;

    #[test]
    fn every_message_and_the_types_they_name_are_declared() {
        let text = wire_declarations();
        for name in [
            "ClientMessage",
            "ServerMessage",
            "Rid",
            "PlayerInfo",
            "ErrorCode",
        ] {
            assert!(
                text.contains(&format!("export type {name} = ")),
                "{name} missing:\n{text}"
            );
        }
        // Requests and pushes are told apart by `t`, as on the wire.
        assert!(text.contains("\"t\": \"welcome\""), "{text}");
        assert!(
            text.contains("export type Rid = number | string;"),
            "{text}"
        );
    }
}

//! The analysis board's move tree (`server/web/lib/move-tree.js`) run by Node: moves played
//! twice reuse their node, other moves become variations, the tree is written in reading
//! order with each variation in parentheses after the move it branches from, and promoting
//! or deleting a line changes exactly that. The module is the file the server serves, run
//! as it is (no DOM, no rules in it).
//!
//! Skipped (with a message) where `node` is not installed; `.ci/run` installs npm, which
//! brings it.
#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::Command;

/// Runs `script` after the module's own source, as one ES module; what it prints.
fn run_with_tree(script: &str) -> Option<String> {
    let module = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../server/web/lib/move-tree.js");
    let source = std::fs::read_to_string(&module).expect("read move-tree.js");
    let out = Command::new("node")
        .args(["--input-type=module", "-e"])
        .arg(format!("{source}\n{script}"))
        .output();
    let Ok(out) = out else {
        eprintln!("node is not installed: skipping the move tree's check");
        return None;
    };
    assert!(
        out.status.success(),
        "node failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).expect("utf-8"))
}

/// The tree's helpers used by every case: `text()` writes the tree as the page reads it.
const HELPERS: &str = r#"
const tree = new MoveTree("start");
const text = () => tokens(tree.root)
  .map((t) => (t.t === "move" ? t.node.move : t.t === "open" ? "(" : ")")).join(" ");
const say = (...parts) => console.log(parts.join(" | "));
"#;

#[test]
fn variations_are_written_where_they_branch_and_move_with_promote_and_delete() {
    let script = format!(
        r#"{HELPERS}
const a = tree.play(tree.root, "a1");
const b = tree.play(a, "b1");
say("again", tree.play(tree.root, "a1") === a, tree.root.children.length);
const v = tree.play(tree.root, "c1");
const w = tree.play(v, "d1", "known");
const x = tree.play(a, "e1");
say("tree", text());
say("plies", a.ply, b.ply, w.ply, x.ply, w.data, b.data);
say("main", onMainLine(b), onMainLine(w), onMainLine(x));
say("path", pathTo(w).map((n) => n.move).join(","), movesBetween(tree.root, w).join(","),
  movesBetween(a, b).join(","), lineEnd(tree.root) === b, lineEnd(v) === w);
tree.promote(w);
say("promoted", text(), onMainLine(w), onMainLine(b));
say("removed", tree.remove(x) === a, text(), String(tree.find(x.id)), tree.find(w.id) === w);
say("root", String(tree.remove(tree.root)), text());
say("line", tree.playLine(tree.root, ["c1", "d1", "f1"]).move, text());
"#
    );
    let Some(out) = run_with_tree(&script) else {
        return;
    };
    assert_eq!(
        out,
        "again | true | 1\n\
         tree | a1 ( c1 d1 ) b1 ( e1 )\n\
         plies | 1 | 2 | 2 | 2 | known | \n\
         main | true | false | false\n\
         path | ,c1,d1 | c1,d1 | b1 | true | true\n\
         promoted | c1 ( a1 b1 ( e1 ) ) d1 | true | false\n\
         removed | true | c1 ( a1 b1 ) d1 | null | true\n\
         root | null | c1 ( a1 b1 ) d1\n\
         line | f1 | c1 ( a1 b1 ) d1 f1\n"
    );
}

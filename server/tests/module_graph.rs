//! The server's import graph, read from its sources: which modules name which.
//!
//! Why a test: the server's data flow is meant to be one-way (socket → session → game
//! actor → store + broadcast) and its layers ordered (docs/architecture.md, "Inside the
//! server"), and an import cycle or an import against the layer order is how that erodes,
//! one convenient `use` at a time. Both fail these tests.
//!
//! A module is a source file (`a/mod.rs` is `a`). An edge is a path naming another module
//! in code (`crate::x::y`, `super::z`, grouped `use crate::{..}`), outside comments and
//! unit tests, or a child module's declaration (`mod x;`: the parent depends on what its
//! children name). A module may always name its ancestors (a child lives in its parent's
//! context): those edges are not counted.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The server's layers, lowest first, each with the modules (and their children) in it. A
/// module may name modules of its own layer or lower ones, never a higher one; within a
/// layer the cycle check keeps the graph one-way.
///
/// A layer is a folder of `src` (`domain/`, `store/`, `game/`, `services/`, `session/`,
/// `net/`), plus the few top-level modules that belong to no folder (`ids`, `config`,
/// `error`, `time` beside the domain; `node` at the top). Two modules sit below their
/// folder, named here by their full path: the connection's send handle (`net::outbound`),
/// the socket it writes to (`net::socket`) and the crowd writer over them (`net::fanout`),
/// which actors and services send through, and the bus formats the actors speak
/// (`cluster::messages`).
///
/// Why these: the domain is pure values and rules; the store and the plumbing a game
/// needs (metrics, a connection's outbound queue) come next; then the game actors and the
/// registries they live in (with the bus formats the actors speak); the services built
/// over them, with the seam between a single node and a cluster; the sessions that turn
/// requests into service calls; the network edge; and at the top the composition root,
/// the only module that names the cluster.
const LAYERS: &[(&str, &[&str])] = &[
    ("domain", &["domain", "ids", "config", "error", "time"]),
    (
        "store",
        &[
            "store",
            "metrics",
            "net::outbound",
            "net::socket",
            "net::frame",
            "net::fanout",
        ],
    ),
    ("game", &["game", "cluster::messages"]),
    ("services", &["services"]),
    ("session", &["session"]),
    ("net", &["net"]),
    ("root", &["node", "cluster"]),
];

/// The layer of a module: that of the longest listed prefix (`cluster::messages` is in
/// the game layer, the rest of `cluster` at the root; `net::outbound`, the socket it
/// writes to (`net::socket`), the frames it writes (`net::frame`) and the crowd writer
/// (`net::fanout`) are in the store layer, the rest of `net` at the edge).
fn layer_of(module: &str) -> Option<usize> {
    LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (_, mods))| mods.iter().map(move |m| (i, *m)))
        .filter(|(_, m)| module == *m || module.starts_with(&format!("{m}::")))
        .max_by_key(|(_, m)| m.len())
        .map(|(i, _)| i)
}

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("read the source directory")
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The module path of a source file (`game/actor/mod.rs` → `["game", "actor"]`).
fn module_of(root: &Path, file: &Path) -> Vec<String> {
    let rel = file.strip_prefix(root).expect("under src");
    let mut parts: Vec<String> = rel
        .iter()
        .map(|p| p.to_string_lossy().to_string())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if stem != "mod" && stem != "lib" {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file without comments and without its unit tests.
fn code_of(text: &str) -> String {
    let mut code = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]")
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        if trimmed.starts_with("//") {
            continue;
        }
        // A trailing comment (rare in code lines, but links live there too).
        let line = match line.find(" // ") {
            Some(at) => &line[..at],
            None => line,
        };
        code.push_str(line);
        code.push('\n');
    }
    code
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The module paths a piece of code names: each `crate::` or `super::` path, with
/// grouped imports expanded one level (`crate::{a, b::c}` → `a`, `b::c`).
fn paths_in(code: &str, module: &[String]) -> Vec<Vec<String>> {
    let mut found = Vec::new();
    for (anchor, base) in [("crate::", Vec::new()), ("super::", parent(module))] {
        let mut rest = code;
        while let Some(at) = rest.find(anchor) {
            let before = rest[..at].chars().last();
            rest = &rest[at + anchor.len()..];
            if before.is_some_and(|c| is_ident(c) || c == ':') {
                continue; // `super::super::` or a longer path: counted from its start.
            }
            if let Some(group) = rest.strip_prefix('{') {
                let end = group.find('}').unwrap_or(group.len());
                for item in group[..end].split(',') {
                    let mut path = base.clone();
                    path.extend(segments(item.trim()));
                    found.push(path);
                }
            } else {
                let mut path = base.clone();
                path.extend(segments(rest));
                found.push(path);
            }
        }
    }
    found
}

/// The identifiers of a path's start: `a::b::C` → `a`, `b`, `C`.
fn segments(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let end = rest.find(|c: char| !is_ident(c)).unwrap_or(rest.len());
        if end == 0 {
            break;
        }
        out.push(rest[..end].to_string());
        match rest[end..].strip_prefix("::") {
            Some(more) => rest = more,
            None => break,
        }
    }
    out
}

/// A module's parent (the crate root's parent is the root).
fn parent(module: &[String]) -> Vec<String> {
    module[..module.len().saturating_sub(1)].to_vec()
}

/// The longest known module a path starts with.
fn resolve(path: &[String], modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    (1..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains(p))
}

/// The import graph of the server crate: module → the modules it names.
fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    // The binary's `main.rs` and its `allocator` are their own crate: they name the
    // library, not its modules.
    files.retain(|f| {
        f.file_name()
            .is_some_and(|n| n != "main.rs" && n != "allocator.rs")
    });
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&root, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let module = module_of(&root, file);
        if module.is_empty() {
            continue; // lib.rs declares everything.
        }
        let text = std::fs::read_to_string(file).expect("read a source file");
        let mut names = BTreeSet::new();
        let code = code_of(&text);
        // A child module declared here is part of this one: what it names, this one
        // depends on (`mod leases;` → `cluster::leases`).
        let children = code.lines().filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            let name = rest.strip_suffix(';')?;
            let mut child = module.clone();
            child.push(name.to_string());
            Some(child)
        });
        for child in children.collect::<Vec<_>>() {
            if modules.contains(&child) {
                names.insert(child.join("::"));
            }
        }
        for path in paths_in(&code, &module) {
            let Some(target) = resolve(&path, &modules) else {
                continue;
            };
            // Itself, an ancestor or the crate root: always in scope.
            if target.is_empty() || module.starts_with(&target) {
                continue;
            }
            names.insert(target.join("::"));
        }
        graph.insert(module.join("::"), names);
    }
    graph
}

/// The strongly connected components with more than one module (Tarjan's algorithm).
fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        graph: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        s.index.insert(v, s.next);
        s.low.insert(v, s.next);
        s.next += 1;
        s.stack.push(v);
        s.on_stack.insert(v);
        for w in s.graph.get(v).into_iter().flatten() {
            let w = w.as_str();
            if !s.index.contains_key(w) {
                visit(s, w);
                let low = s.low[v].min(s.low[w]);
                s.low.insert(v, low);
            } else if s.on_stack.contains(w) {
                let low = s.low[v].min(s.index[w]);
                s.low.insert(v, low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in graph.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.out.sort();
    s.out
}

#[test]
fn the_server_has_no_import_cycle() {
    let graph = graph();
    let found = cycles(&graph);
    let describe = |c: &BTreeSet<String>| {
        let edges: Vec<String> = c
            .iter()
            .flat_map(|m| {
                graph[m]
                    .iter()
                    .filter(|t| c.contains(*t))
                    .map(move |t| format!("{m} -> {t}"))
            })
            .collect();
        edges.join(", ")
    };
    let described: Vec<String> = found.iter().map(describe).collect();
    assert!(
        found.is_empty(),
        "import cycles among server modules (break them): {described:#?}"
    );
}

#[test]
fn every_module_has_a_layer_and_names_none_above_it() {
    let graph = graph();
    let mut violations = Vec::new();
    for (module, names) in &graph {
        let Some(own) = layer_of(module) else {
            violations.push(format!("{module} has no layer: add it to LAYERS"));
            continue;
        };
        for target in names {
            match layer_of(target) {
                Some(theirs) if theirs > own => violations.push(format!(
                    "{module} ({}) names {target} ({})",
                    LAYERS[own].0, LAYERS[theirs].0
                )),
                Some(_) => {}
                None => violations.push(format!("{target} has no layer: add it to LAYERS")),
            }
        }
    }
    assert!(violations.is_empty(), "layer violations: {violations:#?}");
}

/// The names `lib.rs` re-exports (`pub use a::{b, c};` → `b`, `c`).
fn reexports() -> BTreeSet<String> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let code = code_of(&std::fs::read_to_string(lib).expect("read lib.rs"));
    let mut names = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("pub use ") {
        rest = &rest[at + "pub use ".len()..];
        let end = rest.find(';').unwrap_or(rest.len());
        let item = &rest[..end];
        let listed = match (item.find('{'), item.rfind('}')) {
            (Some(open), Some(close)) => &item[open + 1..close],
            _ => item.rsplit("::").next().unwrap_or(item),
        };
        for name in listed.split(',') {
            let name = name.trim();
            if !name.is_empty() {
                names.insert(name.to_string());
            }
        }
        rest = &rest[end..];
    }
    names
}

/// Why: a path through a re-export (`crate::hub::Hub` for `crate::services::hub::Hub`)
/// names no module file, so the graph above would not see the edge, and the layer check
/// would pass over it. With no second path at the root, every path names its module.
#[test]
fn the_crate_root_re_exports_no_module_under_a_second_path() {
    let shims = reexports();
    assert!(shims.is_empty(), "lib.rs re-exports {shims:?}");
}

#[test]
fn the_cluster_is_named_only_by_the_composition_root() {
    let graph = graph();
    let naming: Vec<&String> = graph
        .iter()
        .filter(|(m, names)| {
            !m.starts_with("cluster") && *m != "node" && names.iter().any(|t| t == "cluster")
        })
        .map(|(m, _)| m)
        .collect();
    assert!(naming.is_empty(), "modules naming the cluster: {naming:?}");
}

#[test]
fn a_layer_above_is_a_violation_and_children_share_their_parent_layer() {
    assert_eq!(layer_of("cluster::messages"), layer_of("game"));
    assert_eq!(layer_of("cluster::bus"), layer_of("node"));
    assert_eq!(layer_of("game::actor::owner"), layer_of("game"));
    assert!(layer_of("session::rooms") > layer_of("services::hub"));
    assert!(layer_of("net::outbound") < layer_of("game::actor"));
    assert!(layer_of("net::socket") < layer_of("game::actor"));
    assert!(layer_of("net::app") > layer_of("session"));
    assert_eq!(layer_of("domain::pairing::key"), layer_of("ids"));
    assert!(layer_of("gamesx").is_none(), "a prefix is a whole segment");
}

#[test]
fn the_graph_reader_sees_each_form_of_path() {
    let module = vec!["game".to_string(), "actor".to_string()];
    let code = code_of(
        "use crate::{store::Store, ids};\n\
         use super::core::Core;\n\
         // crate::hub in a comment\n\
         fn f() { crate::cluster::messages::BusMessage::x(); }\n\
         #[cfg(test)]\n\
         mod tests { use crate::web; }\n",
    );
    let paths: Vec<String> = paths_in(&code, &module)
        .iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        paths,
        [
            "store::Store",
            "ids",
            "cluster::messages::BusMessage::x",
            "game::core::Core"
        ]
    );
    let modules: BTreeSet<Vec<String>> = [vec!["cluster"], vec!["cluster", "messages"]]
        .iter()
        .map(|m| m.iter().map(|s| s.to_string()).collect())
        .collect();
    let bus: Vec<String> = ["cluster", "messages", "BusMessage"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert_eq!(
        resolve(&bus, &modules),
        Some(vec!["cluster".to_string(), "messages".to_string()])
    );
}

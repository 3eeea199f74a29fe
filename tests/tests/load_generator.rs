//! The load generator itself, run as a user runs it: a small `stoa-load fanout` against a
//! real server. Its figures are what the README's performance tables are made of, so the
//! spectators it measures with must see every move, and the kernel's stamp of the server's
//! write (when it reached the wire) can never come after the spectator read it.

use std::collections::HashMap;
use std::process::Command;

/// The `| figure | value |` rows of a `stoa-load` report.
fn figures(report: &str) -> HashMap<String, String> {
    report
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.trim().trim_matches('|').split('|').collect();
            match cells[..] {
                [figure, value] => Some((figure.trim().to_string(), value.trim().to_string())),
                _ => None,
            }
        })
        .collect()
}

#[test]
fn fanout_spectators_see_every_move_and_the_wire_stamp_precedes_the_read() {
    stoa_tests::build_binaries();
    let out = Command::new(env!("CARGO_BIN_EXE_stoa-load"))
        .args(["--no-pin", "fanout", "--spectators", "60", "--moves", "6"])
        .args(["--interval-ms", "50"])
        .output()
        .expect("run stoa-load");
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{report}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let f = figures(&report);
    let ms = |name: &str| -> f64 {
        f.get(name)
            .unwrap_or_else(|| panic!("no {name:?} in {report}"))
            .parse()
            .unwrap()
    };
    assert_eq!(f["spectators"], "60", "{report}");
    assert_eq!(f["moves"], "6", "{report}");
    assert_eq!(f["moves every spectator received"], "6", "{report}");
    assert!(
        !f.contains_key("diffs without a kernel timestamp"),
        "{report}"
    );
    for p in ["p50", "p99"] {
        let wire = ms(&format!("{p} move → on the wire to the last spectator, ms"));
        let read = ms(&format!("{p} move → last spectator, ms"));
        // Each spectator's stamp precedes its own read; the wall clock and the monotonic
        // one may disagree by a rounding.
        assert!(
            0.0 < wire && wire <= read + 1.0,
            "{p}: {wire} > {read}\n{report}"
        );
    }
    // The broadcast's own duration (first to last spectator) is part of the move's.
    let spread = ms("p99 first → last spectator on the wire, ms");
    let wire = ms("p99 move → on the wire to the last spectator, ms");
    assert!(spread <= wire + 1.0, "{spread} > {wire}\n{report}");
    // Every recipient received one diff per move, of the size a move's diff has.
    let bytes: u64 = f["bytes per move per recipient"].parse().unwrap();
    assert!((200..2000).contains(&bytes), "{report}");
}

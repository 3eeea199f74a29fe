//! What an operator sees: one clear line per startup failure, logs without colour codes
//! when they go to a file, and JSON logs on request.

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use stoa_tests::{binary, build_binaries};

/// Runs the server with `args` until it exits (or `within`, then kills it); its stderr and
/// whether it exited by itself with a failure.
fn run(args: &[&str], within: Duration) -> (String, Option<bool>) {
    build_binaries();
    let mut child = Command::new(binary("stoa-server"))
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let deadline = Instant::now() + within;
    let failed = loop {
        if let Some(status) = child.try_wait().expect("wait") {
            break Some(!status.success());
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut err = String::new();
    let _ = child
        .stderr
        .take()
        .expect("stderr")
        .read_to_string(&mut err);
    (err, failed)
}

#[test]
fn an_address_in_use_is_one_clear_line() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (err, failed) = run(&["--listen", &addr], Duration::from_secs(20));
    assert_eq!(failed, Some(true), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("stoa-server: cannot listen on {addr}")),
        "{err}"
    );
    assert!(last.contains("--listen"), "{last}");
    assert!(!err.contains("Os {"), "no debug structs: {err}");
}

#[test]
fn redis_down_at_start_says_where_and_what_to_do() {
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = free.local_addr().unwrap().port();
    drop(free);
    let url = format!("redis://127.0.0.1:{port}/");
    let (err, failed) = run(
        &["--listen", "127.0.0.1:0", "--redis", &url],
        Duration::from_secs(30),
    );
    assert_eq!(failed, Some(true), "{err}");
    assert!(err.contains("connecting to Redis"), "{err}");
    let last = err.lines().last().unwrap_or_default();
    assert!(
        last.starts_with(&format!("stoa-server: cannot use Redis at {url}")),
        "{err}"
    );
}

#[test]
fn logs_to_a_file_carry_no_colour_and_json_is_one_object_per_line() {
    let (text, _) = run(&["--listen", "127.0.0.1:0"], Duration::from_secs(3));
    assert!(text.contains("listening"), "{text}");
    assert!(
        !text.contains('\u{1b}'),
        "ANSI escapes in a log file: {text:?}"
    );
    let (json, _) = run(
        &["--listen", "127.0.0.1:0", "--log-format", "json"],
        Duration::from_secs(3),
    );
    let lines: Vec<&str> = json.lines().filter(|l| !l.is_empty()).collect();
    assert!(!lines.is_empty());
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["level"].is_string() && v["fields"].is_object(), "{l}");
    }
}

//! A real browser for the web tests: Debian's Chromium, headless, driven over WebDriver
//! (chromedriver, fantoccini). One [`Driver`] (chromedriver on a free port) starts browser
//! sessions, each with a profile of its own; [`Web`] is the usual fixture (a driver and the
//! profiles of a test's pages); [`until`], [`screenshot`] are what most browser tests need.
//!
//! Why one module: the web, rules-page and analysis tests all drive the same Chromium the
//! same way; a fix (a flag, a timeout) belongs in one place.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder};
use serde_json::{json, Value};

use crate::temp_dir::TempDir;
use crate::Server;

/// How long one expectation may take in the browser.
pub const WAIT: Duration = Duration::from_secs(30);

/// The window of a browser from [`Driver::browser`] (a laptop's screen).
pub const WINDOW: (u32, u32) = (1280, 1000);

/// A chromedriver process on a free port, killed on drop.
pub struct Driver {
    child: Child,
    /// `http://127.0.0.1:<port>`: where chromedriver listens.
    pub url: String,
}

impl Driver {
    /// chromedriver on a free port, or `None` where it is not installed (the caller skips
    /// its test; `.ci/run` installs it).
    pub fn start() -> Option<Driver> {
        let bin = ["/usr/bin/chromedriver", "chromedriver"]
            .into_iter()
            .find(|b| {
                Command::new(b)
                    .arg("--version")
                    .output()
                    .is_ok_and(|o| o.status.success())
            })?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("free port")
            .port();
        let child = Command::new(bin)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn chromedriver");
        let deadline = Instant::now() + WAIT;
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
        })
    }

    /// A new browser with its own profile (so its own identity in local storage), in a
    /// [`WINDOW`]-sized window.
    pub async fn browser(&self, profile: &TempDir) -> Client {
        self.browser_with(profile, WINDOW, &[]).await
    }

    /// As [`Driver::browser`], in a `window` of (width, height) and with `extra` Chromium
    /// flags (such as `--hide-scrollbars` for screenshots of a page's middle).
    pub async fn browser_with(
        &self,
        profile: &TempDir,
        (width, height): (u32, u32),
        extra: &[&str],
    ) -> Client {
        let mut args: Vec<String> = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]
        .iter()
        .map(|a| a.to_string())
        .collect();
        args.push(format!("--window-size={width},{height}"));
        args.push(format!("--user-data-dir={}", profile.0.display()));
        args.extend(extra.iter().map(|a| a.to_string()));
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": chromium(), "args": args}),
        );
        // The console's messages, read back by `browser_log` (the browser's own errors, such
        // as a frame sent into a closed websocket, never reach a page's hooks).
        caps.insert("goog:loggingPrefs".into(), json!({"browser": "ALL"}));
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&self.url)
            .await
            .expect("start a browser session")
    }

    /// The browser console's entries since the last call (chromedriver's log endpoint,
    /// which fantoccini does not wrap): `{level, message, source, timestamp}` each.
    pub async fn browser_log(&self, c: &Client) -> Vec<Value> {
        let session = c.session_id().await.expect("session").expect("a session");
        let host = self.url.trim_start_matches("http://").to_string();
        let answer = tokio::task::spawn_blocking(move || post_log(&host, &session))
            .await
            .expect("log request");
        let v: Value = serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer}"));
        v["value"].as_array().cloned().unwrap_or_default()
    }
}

/// `POST /session/<id>/se/log` to chromedriver at `host`; the answer's body.
fn post_log(host: &str, session: &str) -> String {
    use std::io::{Read, Write};
    let body = r#"{"type":"browser"}"#;
    let mut s = std::net::TcpStream::connect(host).expect("chromedriver");
    write!(
        s,
        "POST /session/{session}/se/log HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .expect("ask for the log");
    // chromedriver keeps the connection open: read the head, then its Content-Length bytes.
    s.set_read_timeout(Some(WAIT)).expect("timeout");
    let mut got = Vec::new();
    let mut byte = [0u8; 1];
    while !got.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).expect("read the log's head");
        got.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&got).to_ascii_lowercase();
    let length: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no length: {head}"));
    let mut body = vec![0u8; length];
    s.read_exact(&mut body).expect("read the log");
    String::from_utf8_lossy(&body).into_owned()
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A browser test's fixture: chromedriver and the profiles of the test's browsers, each
/// browser its own profile (so its own identity in local storage); the profiles live as long
/// as the fixture.
pub struct Web {
    /// The chromedriver the pages come from.
    pub driver: Driver,
    label: &'static str,
    profiles: std::sync::Mutex<Vec<TempDir>>,
}

impl Web {
    /// chromedriver for test `label`, or `None` (said on stderr) where it is not installed:
    /// the test then passes without a browser (`.ci/run` installs it).
    pub fn start(label: &'static str) -> Option<Web> {
        let Some(driver) = Driver::start() else {
            eprintln!("chromedriver is not installed: skipping the browser test");
            return None;
        };
        Some(Web {
            driver,
            label,
            profiles: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The fixture of most tests: chromedriver and a server with the tests' defaults.
    pub fn with_server(label: &'static str) -> Option<(Web, Server)> {
        Web::with_server_args(label, crate::LOOSE)
    }

    /// chromedriver and a server started with `args`.
    pub fn with_server_args(label: &'static str, args: &[&str]) -> Option<(Web, Server)> {
        Some((Web::start(label)?, Server::start_with(args)))
    }

    /// A new browser with a profile of its own, `<label>-<who>` (the label cut short: the
    /// profile's path stays well within the length of a socket's path).
    pub async fn page(&self, who: &str) -> Client {
        self.page_with(who, WINDOW, &[]).await
    }

    /// As [`Web::page`], with a window size and extra flags as [`Driver::browser_with`].
    pub async fn page_with(&self, who: &str, window: (u32, u32), extra: &[&str]) -> Client {
        let label: String = self.label.chars().take(32).collect();
        let profile = TempDir::new(&format!("{label}-{who}"));
        let page = self.driver.browser_with(&profile, window, extra).await;
        self.profiles.lock().expect("profiles").push(profile);
        page
    }

    /// One new browser for each of `who`, in order.
    pub async fn pages<const N: usize>(&self, who: [&str; N]) -> [Client; N] {
        let mut pages = Vec::with_capacity(N);
        for w in who {
            pages.push(self.page(w).await);
        }
        pages
            .try_into()
            .unwrap_or_else(|_| unreachable!("{N} pages"))
    }
}

/// `http://host:port` of a server: where its pages are.
pub fn page_base(server: &Server) -> String {
    format!("http://{}", server.addr)
}

/// Chromium's binary (Debian's or Ubuntu's name).
pub fn chromium() -> &'static str {
    ["/usr/bin/chromium", "/usr/bin/chromium-browser"]
        .into_iter()
        .find(|p| std::path::Path::new(p).exists())
        .unwrap_or("/usr/bin/chromium")
}

/// Where screenshots go: `$STOA_SCREENSHOT_DIR`, by default `target/web-screenshots` (run
/// with `STOA_SCREENSHOT_DIR=docs/screenshots` to refresh the ones the docs show).
pub fn screenshot_dir() -> PathBuf {
    match std::env::var_os("STOA_SCREENSHOT_DIR") {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/web-screenshots"),
    }
}

/// Writes page `c` as `<name>.png` into [`screenshot_dir`].
pub async fn screenshot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    let dir = screenshot_dir();
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    std::fs::write(dir.join(format!("{name}.png")), png).expect("write screenshot");
}

/// Runs `script` (a JavaScript function body) in the page until it returns a truthy value,
/// for up to [`WAIT`]; returns that value. `what` names the wait in the failure, which
/// quotes the page's text.
pub async fn until(c: &Client, what: &str, script: &str) -> Value {
    until_within(c, what, script, WAIT).await
}

/// As [`until`], waiting up to `within` (a worker's analysis, a clock running out).
pub async fn until_within(c: &Client, what: &str, script: &str, within: Duration) -> Value {
    let deadline = Instant::now() + within;
    loop {
        let v = c.execute(script, vec![]).await.unwrap_or(Value::Null);
        if !(v.is_null() || v == false || v == "" || v == 0) {
            return v;
        }
        if Instant::now() > deadline {
            let text = c
                .execute("return document.body.innerText", vec![])
                .await
                .unwrap_or(Value::Null);
            panic!(
                "timed out waiting for {what}; the page says:\n{}",
                text.as_str().unwrap_or("")
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

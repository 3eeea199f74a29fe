//! The subcommands that talk to a server (`play`, `host`, `join`, `watch`, `lobby`, `arena`): each
//! turns its arguments into a [`Start`], then [`run`] connects with the stored identity and
//! hands over to plain mode or the terminal UI.

pub mod account;
pub mod admin;
pub mod arena;
pub mod devices;
pub mod export;
pub mod history;
pub mod host;
pub mod host_arena;
pub mod join;
pub mod learn;
pub mod lobby;
pub mod play;
pub mod players;
pub mod replay;
pub mod watch;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Args;
use serde_json::{Map, Value};

use crate::connection::{ConnectError, Connection, Target};
use crate::identity::{Identity, Keys};
use crate::session::{Session, Start};
use crate::{clock_spec, plain, tui};

/// The server address used without `--server` / `STOA_SERVER`.
pub const DEFAULT_SERVER: &str = "ws://127.0.0.1:7878/ws";

/// Options every networked subcommand takes.
#[derive(Clone, Debug, Args)]
pub struct Global {
    /// Server websocket address; several addresses of one deployment (its nodes, its load
    /// balancers), comma-separated or repeated, are tried in order, and the next stands in
    /// when one stops answering.
    #[arg(
        long,
        env = "STOA_SERVER",
        default_value = DEFAULT_SERVER,
        value_delimiter = ',',
        action = clap::ArgAction::Append,
        global = true
    )]
    pub server: Vec<String>,
    /// Line-oriented mode for scripts and screen readers (automatic when stdout is not a
    /// terminal).
    #[arg(long, global = true)]
    pub plain: bool,
    /// Display name for a new guest identity (1-24 characters).
    #[arg(long, env = "STOA_NAME", global = true)]
    pub name: Option<String>,
    /// Extra trusted certificates (PEM) for a wss:// server with a private or self-signed
    /// certificate; public certificates are trusted without it.
    #[arg(long, env = "STOA_CA_FILE", global = true)]
    pub ca_file: Option<String>,
    /// Set by `stoa bot`: a new identity is created as a computer player.
    #[arg(skip)]
    pub bot: bool,
}

/// The subcommands that never talk to a server: the networked options of [`Global`] do
/// nothing there, so their help does not list them.
const OFFLINE: &[&str] = &["rules", "tournament", "learn"];

/// The command line as built by clap, with [`Global`]'s options hidden from the help of the
/// offline subcommands and theirs. Clap copies a global option into every subcommand that
/// has no option of that id when it builds the command: each offline subcommand gets a
/// hidden copy first, which is what its own subcommands then inherit. They are still
/// accepted there, and ignored, so a `STOA_SERVER` in the environment or a `--server` in
/// a script's alias breaks nothing.
pub fn with_offline_help(mut cmd: clap::Command) -> clap::Command {
    let hidden: Vec<clap::Arg> = cmd
        .get_arguments()
        .filter(|a| a.is_global_set())
        .map(|a| a.clone().hide(true))
        .collect();
    for name in OFFLINE {
        let hidden = hidden.clone();
        cmd = cmd.mut_subcommand(name, |sub| sub.args(hidden));
    }
    cmd
}

/// Game settings shared by `play` and `host`.
#[derive(Clone, Debug, Args)]
pub struct GameSettings {
    /// Game kind: unane, staku, akron or akunur.
    pub kind: String,
    /// Game options: a JSON object or key=value pairs separated by commas
    /// (e.g. `width=6,height=5`).
    #[arg(long)]
    pub options: Option<String>,
    /// Time control: 5+3 (minutes + seconds per turn), none, delay:5m/3s,
    /// byoyomi:10m/5x30s, corr:3d, or the clock JSON object.
    #[arg(long, default_value = "5+3")]
    pub clock: String,
    /// Rated game.
    #[arg(long)]
    pub rated: bool,
}

impl GameSettings {
    /// Kind, options object and clock object, checked as far as the client can.
    pub fn resolve(&self) -> Result<(String, Value, Value), String> {
        let kind = self.kind.to_ascii_lowercase();
        if stoa_protocol::kind(&kind).is_err() {
            let known: Vec<&str> = stoa_protocol::KINDS.iter().map(|k| k.id).collect();
            return Err(format!(
                "unknown game kind '{}' (one of: {})",
                self.kind,
                known.join(", ")
            ));
        }
        let options = match &self.options {
            None => Value::Object(Map::new()),
            Some(text) => parse_options(text)?,
        };
        let clock = clock_spec::parse(&self.clock)?;
        Ok((kind, options, clock))
    }
}

/// Parses `--options`: JSON, or `key=value,key=value` where each value is read as JSON when
/// it parses (numbers, booleans) and as a string otherwise.
pub fn parse_options(text: &str) -> Result<Value, String> {
    let t = text.trim();
    if t.starts_with('{') {
        let v: Value =
            serde_json::from_str(t).map_err(|e| format!("--options JSON is invalid: {e}"))?;
        return if v.is_object() {
            Ok(v)
        } else {
            Err("--options must be a JSON object".into())
        };
    }
    let mut map = Map::new();
    for pair in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = pair
            .split_once('=')
            .ok_or_else(|| format!("--options: '{pair}' is not key=value"))?;
        let value =
            serde_json::from_str(v.trim()).unwrap_or_else(|_| Value::String(v.trim().into()));
        map.insert(k.trim().to_string(), value);
    }
    Ok(Value::Object(map))
}

/// The websocket URL for a `--server` value: `host:port` and `http://…` are accepted, and a
/// missing path means `/ws`.
pub fn server_url(text: &str) -> Result<String, String> {
    let t = text.trim();
    let (scheme, rest) = match t.split_once("://") {
        Some(("http", rest)) => ("ws", rest),
        Some(("https", rest)) => ("wss", rest),
        Some((scheme, rest)) => (scheme, rest),
        None => ("ws", t),
    };
    let rest = rest.trim_end_matches('/');
    if scheme != "ws" && scheme != "wss" {
        return Err(format!(
            "{text}: the server address must be a ws:// or wss:// URL"
        ));
    }
    if rest.is_empty() || rest.starts_with('/') {
        return Err(format!("{text}: no host in the server address"));
    }
    Ok(if rest.contains('/') {
        format!("{scheme}://{rest}")
    } else {
        format!("{scheme}://{rest}/ws")
    })
}

/// Connects as the stored player (or a new guest), then runs the session in plain mode or
/// the terminal UI.
pub fn run(global: &Global, start: Start) -> ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(run_async(global, start));
    // The stdin reader thread may be blocked in read(): do not wait for it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    code
}

/// Connects as the stored identity (a new guest when there is none).
pub async fn connect(global: &Global) -> Result<Connected, ExitCode> {
    connect_as(global, None).await
}

/// What [`connect`] gives: the connection, who we are, and the events.
pub type Connected = (
    Connection,
    crate::connection::Welcome,
    tokio::sync::mpsc::UnboundedReceiver<crate::connection::ConnEvent>,
);

/// Connects and says hello: as the stored identity, or signed in to an account (`login`);
/// the identity welcomed is stored (one it replaces is kept as a previous identity).
/// A server that does not know the stored identity is said so in words: the token is kept
/// (a server of its deployment that knows it gets it again), and the new guest is named.
pub async fn connect_as(
    global: &Global,
    login: Option<stoa_protocol::wire::Credentials>,
) -> Result<Connected, ExitCode> {
    let identity = Identity::default_location();
    let mut target = Target {
        urls: global.server.clone(),
        keys: identity.keys(&global.server),
        identity: Some(identity.clone()),
        name: global.name.clone(),
        ca_file: global.ca_file.clone(),
        bot: global.bot,
        login,
    };
    let mut refused_as = None;
    let opened = match Connection::open(target.clone()).await {
        // A banned player stays who they are: no new guest stands in.
        Err(ConnectError::Refused { code, message, .. })
            if code == "unauthorized" && is_ban(&message) =>
        {
            println!("error banned: {message}");
            return Err(ExitCode::FAILURE);
        }
        Err(ConnectError::Refused {
            code,
            message,
            offered: Some(token),
        }) if code == "unauthorized" => {
            // The server does not know this token (its store was emptied, or the device was
            // revoked): continue as a new guest, keeping the token among the previous ones.
            tracing_note(&format!(
                "the server refused the stored identity ({message})"
            ));
            refused_as = Some(token);
            target.keys = Keys::default();
            Connection::open(target.clone()).await
        }
        other => other,
    };
    let (conn, welcome, events) = match opened {
        Ok(x) => x,
        Err(e) => {
            println!("error connection: {e}");
            // A refused hello (a bad --name, say) reached a running server: the hint
            // would send the user looking in the wrong place.
            if matches!(e, ConnectError::Network(_)) {
                eprintln!("is the server running? set its address with --server or STOA_SERVER");
            }
            return Err(ExitCode::FAILURE);
        }
    };
    let offered = target.keys.token_for(
        &welcome.url,
        Some(&welcome.deployment)
            .filter(|d| !d.is_empty())
            .map(String::as_str),
    );
    let mut welcome = welcome;
    if target.login.is_none() && offered.is_none() {
        welcome.note = new_guest_note(&identity, &welcome, refused_as.is_some());
        if let Some(note) = &welcome.note {
            eprintln!("note: {note}");
        }
    }
    if let Err(e) = identity.remember(
        &welcome.url,
        &welcome.deployment,
        &welcome.token,
        &welcome.id,
        &welcome.name,
    ) {
        eprintln!("note: could not store the identity token: {e}");
    }
    Ok((conn, welcome, events))
}

/// Whether a refused `hello` says the player is banned. The server refuses a banned
/// player's hello with `unauthorized`, as an unknown token; only its message tells them
/// apart ("this account is banned…", server/src/services/moderation/mod.rs).
fn is_ban(message: &str) -> bool {
    message.starts_with("this account is banned")
}

/// Why this terminal is a new guest, when it was someone here before: the server forgot
/// its players (it knows us under no identity of this deployment), or it refused the
/// stored identity (`refused`).
fn new_guest_note(
    identity: &Identity,
    welcome: &crate::connection::Welcome,
    refused: bool,
) -> Option<String> {
    let before = identity.known_elsewhere(&welcome.url, &welcome.deployment);
    if let Some(was) = before.first() {
        return Some(format!(
            "this server does not know you any more: it forgot its players when it restarted without storage (you were {} there); you are now {}; your old identity is kept for a server that knows it (stoa identities)",
            was.name, welcome.name
        ));
    }
    refused.then(|| {
        format!(
            "you are now {}; the refused identity is kept (stoa identities)",
            welcome.name
        )
    })
}

/// A note on standard error.
fn tracing_note(text: &str) {
    eprintln!("note: {text}");
}

/// `--server` as websocket URLs (at least one, each once), or the exit status after saying
/// why not.
pub fn resolved(global: &Global) -> Result<Global, ExitCode> {
    let mut global = global.clone();
    global.server = server_urls(&global.server).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(2)
    })?;
    Ok(global)
}

/// The websocket URLs of `--server` values, each of which may list several addresses
/// separated by commas; repeats are dropped.
pub fn server_urls(values: &[String]) -> Result<Vec<String>, String> {
    let mut urls: Vec<String> = Vec::new();
    for text in values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        let url = server_url(text)?;
        if !urls.contains(&url) {
            urls.push(url);
        }
    }
    if urls.is_empty() {
        return Err("no server address given".into());
    }
    Ok(urls)
}

/// Runs an async one-shot command on a small runtime; `Err` is the exit status after the
/// failure was reported.
pub fn block_on<T>(
    f: impl std::future::Future<Output = Result<T, ExitCode>>,
) -> Result<T, ExitCode> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt.block_on(f),
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

async fn run_async(global: &Global, start: Start) -> ExitCode {
    let global = match resolved(global) {
        Ok(g) => g,
        Err(code) => return code,
    };
    let global = &global;
    let plain_mode = global.plain || !std::io::stdout().is_terminal();
    let (conn, welcome, events) = match connect(global).await {
        Ok(x) => x,
        Err(code) => return code,
    };
    if plain_mode {
        println!("connected as {} ({})", welcome.name, welcome.id);
    }
    let unfinished: Vec<String> = welcome
        .games
        .iter()
        .filter(|g| !matches!(&start, Start::Watch { target } if target == *g))
        .cloned()
        .collect();
    let identity_note = welcome.note.clone();
    let (mut session, answers) = Session::new(conn, welcome, start);
    if let Some(note) = identity_note {
        session.note_info(note);
    }
    if global.server != [DEFAULT_SERVER] {
        session.server = Some(global.server.join(","));
    }
    if !unfinished.is_empty() {
        session.note_info(format!(
            "you have unfinished games: {} (resume one with: stoa watch <id>)",
            unfinished.join(" ")
        ));
    }
    if plain_mode {
        plain::run(session, events, answers).await
    } else {
        tui::run(session, events, answers).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn server_addresses() {
        assert_eq!(
            server_url("ws://127.0.0.1:7878/ws").unwrap(),
            "ws://127.0.0.1:7878/ws"
        );
        assert_eq!(
            server_url("localhost:7878").unwrap(),
            "ws://localhost:7878/ws"
        );
        assert_eq!(
            server_url("http://example.org/").unwrap(),
            "ws://example.org/ws"
        );
        assert_eq!(server_url("ws://h/custom/ws").unwrap(), "ws://h/custom/ws");
        assert_eq!(
            server_url("wss://example.org").unwrap(),
            "wss://example.org/ws"
        );
        assert_eq!(
            server_url("https://example.org:8443/").unwrap(),
            "wss://example.org:8443/ws"
        );
        assert!(server_url("ftp://x").is_err());
        assert!(server_url("ws://").is_err());
    }

    #[test]
    fn several_server_addresses() {
        let given = |v: &[&str]| server_urls(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(
            given(&["a:1, b:2", "ws://c:3/ws", "a:1"]).unwrap(),
            ["ws://a:1/ws", "ws://b:2/ws", "ws://c:3/ws"]
        );
        assert!(given(&[" , "]).is_err());
        assert!(given(&["a:1,ftp://x"]).is_err());
    }

    #[test]
    fn server_is_comma_separated_or_repeated() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            global: Global,
        }
        let parse = |args: &[&str]| {
            Cli::try_parse_from(std::iter::once("stoa").chain(args.iter().copied()))
                .unwrap()
                .global
                .server
        };
        assert_eq!(parse(&["--server", "a:1,b:2"]), ["a:1", "b:2"]);
        assert_eq!(
            parse(&["--server", "a:1", "--server", "b:2"]),
            ["a:1", "b:2"]
        );
    }

    #[test]
    fn options_as_json_or_pairs() {
        assert_eq!(parse_options(r#"{"width":6}"#).unwrap(), json!({"width":6}));
        assert_eq!(
            parse_options("width=6, height=5,nodelay=true").unwrap(),
            json!({"width":6,"height":5,"nodelay":true})
        );
        assert!(parse_options("width").is_err());
        assert!(parse_options("[1]").is_err());
    }
}

//! `stoa admin`: the operators' console on the command line — reports, players, sanctions,
//! live games and rooms, the audit log — over the server's `/api/admin/` HTTP API with an
//! operator's token (`--token` or `STOA_ADMIN_TOKEN`; the server names its operators in
//! `--admin-file`).
//!
//! Why HTTP and not the websocket: the console is not a player; the API is the same one
//! the web console uses, so both see and do the same.

mod http;
mod show;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use super::{block_on, resolved, Global};
use http::{Api, Failure};

/// Arguments of `stoa admin`.
#[derive(Clone, Debug, Args)]
pub struct AdminArgs {
    /// The operator's token (a line of the server's --admin-file).
    #[arg(long, env = "STOA_ADMIN_TOKEN", hide_env_values = true, global = true)]
    token: Option<String>,
    /// Print the API's JSON answer as is.
    #[arg(long, global = true)]
    json: bool,
    #[command(subcommand)]
    action: Action,
}

/// What `stoa admin` does.
#[derive(Clone, Debug, Subcommand)]
enum Action {
    /// The operator this token names.
    Me,
    /// Reports, newest first (open ones; --all for every one).
    Reports {
        /// Closed reports too.
        #[arg(long)]
        all: bool,
        /// At most this many (1-500, default 100).
        #[arg(long)]
        limit: Option<usize>,
    },
    /// One report in full, with the chat lines copied with it.
    Report { id: String },
    /// A player: standing, sanctions, reports about them, devices, recent games.
    Player { id: String },
    /// Warn a player (they are told once).
    Warn {
        player: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Mute a player for a time (10m, 1h, 24h, 7d): their chat is refused.
    Mute {
        player: String,
        duration: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Ban a player (for good, or --for a time): their connections close, hello is refused.
    Ban {
        player: String,
        /// How long (10m, 1h, 24h, 7d); for good without it.
        #[arg(long = "for")]
        time: Option<String>,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Reset a player's name: they choose another.
    Rename {
        player: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Refuse new connections from an address or network (203.0.113.7, 2001:db8::/48).
    BanAddress {
        network: String,
        /// How long (10m, 1h, 24h, 7d); for good without it.
        #[arg(long = "for")]
        time: Option<String>,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// The sanctions in force (and notices not yet shown).
    Sanctions,
    /// Undo a sanction by its id.
    Undo {
        sanction: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Close a report, saying what was done.
    CloseReport {
        id: String,
        #[arg(required = true)]
        action: Vec<String>,
    },
    /// Close a waiting room by its code.
    CloseRoom {
        code: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// Abort a live game (no result, no rating change).
    Abort {
        game: String,
        #[arg(required = true)]
        reason: Vec<String>,
    },
    /// The live games of every node and the rooms waiting.
    Live,
    /// The audit log, newest first.
    Audit {
        /// At most this many (1-500, default 100).
        #[arg(long)]
        limit: Option<usize>,
    },
}

/// A duration as typed (`90s`, `10m`, `1h`, `24h`, `7d`) in ms.
pub fn duration_ms(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (n, unit) = t.split_at(split);
    let unit_ms: u64 = match unit {
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => 0,
    };
    match n.parse::<u64>() {
        Ok(n) if n > 0 && unit_ms > 0 => n
            .checked_mul(unit_ms)
            .ok_or_else(|| format!("{text}: too long")),
        _ => Err(format!(
            "'{text}' is not a duration (a number and s, m, h or d: 10m, 1h, 24h, 7d)"
        )),
    }
}

/// A path segment as typed, with anything outside the unreserved set percent-encoded.
fn segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The body of a sanction: the reason, and the duration when one is given.
fn sanction_body(reason: &[String], time: Option<&str>) -> Result<Value, String> {
    let mut body = json!({ "reason": reason.join(" ") });
    if let Some(t) = time {
        body["duration_ms"] = duration_ms(t)?.into();
    }
    Ok(body)
}

/// A request of the API: method and path, the body of a POST, and how to say the answer.
struct Call {
    path: String,
    body: Option<Value>,
    show: fn(&Value) -> Vec<String>,
}

/// A `GET` of `path`.
fn get(path: String, show: fn(&Value) -> Vec<String>) -> Call {
    Call {
        path,
        body: None,
        show,
    }
}

/// A `POST` of `body` to `path`.
fn post(path: String, body: Value, show: fn(&Value) -> Vec<String>) -> Call {
    Call {
        path,
        body: Some(body),
        show,
    }
}

impl Action {
    /// The request of an action that changes something (a sanction, an undo, a close, an
    /// abort); `None` for the readings.
    fn post_call(&self) -> Result<Option<Call>, String> {
        let player = |id: &str, what: &str| format!("/api/admin/players/{}/{what}", segment(id));
        Ok(Some(match self {
            Action::Warn { player: p, reason } => {
                post(player(p, "warn"), sanction_body(reason, None)?, sanction)
            }
            Action::Mute {
                player: p,
                duration,
                reason,
            } => post(
                player(p, "mute"),
                sanction_body(reason, Some(duration))?,
                sanction,
            ),
            Action::Ban {
                player: p,
                time,
                reason,
            } => post(
                player(p, "ban"),
                sanction_body(reason, time.as_deref())?,
                sanction,
            ),
            Action::Rename { player: p, reason } => {
                post(player(p, "rename"), sanction_body(reason, None)?, sanction)
            }
            Action::BanAddress {
                network,
                time,
                reason,
            } => {
                let mut body = sanction_body(reason, time.as_deref())?;
                body["network"] = network.as_str().into();
                post("/api/admin/addresses/ban".into(), body, sanction)
            }
            Action::Undo {
                sanction: id,
                reason,
            } => post(
                format!("/api/admin/sanctions/{}/undo", segment(id)),
                json!({ "reason": reason.join(" ") }),
                |v| vec![format!("undone: {}", show::sanction_line(v))],
            ),
            Action::CloseReport { id, action } => post(
                format!("/api/admin/reports/{}/close", segment(id)),
                json!({ "action": action.join(" ") }),
                |v| {
                    vec![format!(
                        "closed report {}",
                        v["closed"].as_str().unwrap_or("")
                    )]
                },
            ),
            Action::CloseRoom { code, reason } => post(
                format!("/api/admin/rooms/{}/close", segment(code)),
                json!({ "reason": reason.join(" ") }),
                |v| {
                    vec![format!(
                        "closed room {}",
                        v["closed"].as_str().unwrap_or("")
                    )]
                },
            ),
            Action::Abort { game, reason } => post(
                format!("/api/admin/games/{}/abort", segment(game)),
                json!({ "reason": reason.join(" ") }),
                |v| {
                    vec![format!(
                        "aborted game {}",
                        v["aborted"].as_str().unwrap_or("")
                    )]
                },
            ),
            _ => return Ok(None),
        }))
    }

    /// The request this action makes.
    fn call(&self) -> Result<Call, String> {
        Ok(match self {
            Action::Me => get("/api/admin/me".into(), |v| {
                vec![format!("operator {}", v["operator"].as_str().unwrap_or(""))]
            }),
            Action::Reports { all, limit } => {
                let mut path = format!(
                    "/api/admin/reports?status={}",
                    if *all { "all" } else { "open" }
                );
                if let Some(n) = limit {
                    path.push_str(&format!("&limit={n}"));
                }
                get(path, |v| {
                    list(&v["reports"], show::report_line, "no reports")
                })
            }
            Action::Report { id } => get(
                format!("/api/admin/reports/{}", segment(id)),
                show::report_page,
            ),
            Action::Player { id } => get(
                format!("/api/admin/players/{}", segment(id)),
                show::player_page,
            ),
            Action::Sanctions => get("/api/admin/sanctions".into(), |v| {
                list(
                    &v["sanctions"],
                    show::sanction_line,
                    "no sanctions in force",
                )
            }),
            Action::Live => get("/api/admin/live".into(), live),
            Action::Audit { limit } => get(
                match limit {
                    Some(n) => format!("/api/admin/audit?limit={n}"),
                    None => "/api/admin/audit".into(),
                },
                |v| list(&v["entries"], show::audit_line, "the audit log is empty"),
            ),
            // What changes something: a POST.
            _ => {
                return self
                    .post_call()?
                    .ok_or_else(|| "no such action".to_string())
            }
        })
    }
}

/// One line per item of `items`, or `empty` when there is none.
fn list(items: &Value, line: fn(&Value) -> String, empty: &str) -> Vec<String> {
    match items.as_array() {
        Some(a) if !a.is_empty() => a.iter().map(line).collect(),
        _ => vec![empty.to_string()],
    }
}

/// A sanction just made: `sanction <id>  <kind>  <who> …`.
fn sanction(v: &Value) -> Vec<String> {
    vec![format!("sanction {}", show::sanction_line(v))]
}

/// `live`: the games, then the rooms waiting.
fn live(v: &Value) -> Vec<String> {
    let mut lines = vec![format!(
        "live games ({}):",
        v["games"].as_array().map_or(0, Vec::len)
    )];
    lines.extend(
        list(&v["games"], show::game_line, "  none")
            .into_iter()
            .map(indent),
    );
    lines.push(format!(
        "rooms waiting ({}):",
        v["rooms"].as_array().map_or(0, Vec::len)
    ));
    lines.extend(
        list(&v["rooms"], show::room_line, "  none")
            .into_iter()
            .map(indent),
    );
    lines
}

fn indent(s: String) -> String {
    if s.starts_with("  ") {
        s
    } else {
        format!("  {s}")
    }
}

impl AdminArgs {
    /// Makes the request and prints its answer; an error says the API's message and exits
    /// with status 1 (2 for a command line that makes no request).
    pub fn run(&self, global: &Global) -> ExitCode {
        let usage = |e: String| {
            eprintln!("error: {e}");
            ExitCode::from(2)
        };
        let Some(token) = self.token.clone().filter(|t| !t.trim().is_empty()) else {
            return usage("an operator token is needed: --token or STOA_ADMIN_TOKEN".into());
        };
        let call = match self.action.call() {
            Ok(c) => c,
            Err(e) => return usage(e),
        };
        let global = match resolved(global) {
            Ok(g) => g,
            Err(code) => return code,
        };
        let Some(base) = global
            .server
            .first()
            .and_then(|u| crate::session::web_base(u))
        else {
            return usage("the server address names no host".into());
        };
        let tls = match crate::tls::client_config(global.ca_file.as_deref()) {
            Ok(t) => t,
            Err(e) => return usage(e),
        };
        let api = Api {
            base,
            token: token.trim().to_string(),
            tls,
        };
        block_on(async {
            let answer = match &call.body {
                Some(body) => api.post(&call.path, body).await,
                None => api.get(&call.path).await,
            };
            self.print(&call, answer)
        })
        .unwrap_or_else(|code| code)
    }

    fn print(&self, call: &Call, answer: Result<Value, Failure>) -> Result<ExitCode, ExitCode> {
        match answer {
            Ok(v) if self.json => println!("{v}"),
            Ok(v) => (call.show)(&v).iter().for_each(|l| println!("{l}")),
            Err(e) => {
                eprintln!("error: {e}");
                return Err(ExitCode::FAILURE);
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_segments() {
        assert_eq!(duration_ms("10m"), Ok(600_000));
        assert_eq!(duration_ms("24h"), Ok(86_400_000));
        assert_eq!(duration_ms("7d"), Ok(604_800_000));
        assert_eq!(duration_ms("90s"), Ok(90_000));
        assert!(duration_ms("10").is_err());
        assert!(duration_ms("0m").is_err());
        assert!(duration_ms("m").is_err());
        assert!(duration_ms("1w").is_err());
        assert_eq!(segment("a b/c"), "a%20b%2Fc");
    }
}

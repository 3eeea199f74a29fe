//! Accounts from the terminal: `stoa login [NAME]` (sign in from any device), `stoa account`
//! (show; `claim`, `password`, `logout`) and `stoa identities` (who this terminal was, and
//! switching back).
//!
//! Why passwords are read without echo, and from standard input only when it is not a
//! terminal: a typed password must not stay on the screen or in the shell's history (no
//! password option exists), while scripts and tests still pipe it in.

use std::io::{BufRead, IsTerminal};
use std::process::ExitCode;

use clap::{Args, Subcommand};
use stoa_protocol::wire::{ClientMessage, Credentials, Password, ServerMessage};

use super::{block_on, connect, connect_as, resolved, Global};
use crate::identity::Identity;

/// Arguments of `stoa login`.
#[derive(Clone, Debug, Args)]
pub struct LoginArgs {
    /// The account's name (asked when not given).
    // Its own id: the global `--name` (a guest's display name) is called `name` too.
    #[arg(id = "account_name", value_name = "NAME")]
    name: Option<String>,
}

/// Arguments of `stoa account`.
#[derive(Clone, Debug, Args)]
pub struct AccountArgs {
    #[command(subcommand)]
    action: Option<AccountAction>,
}

#[derive(Clone, Debug, Subcommand)]
enum AccountAction {
    /// Claim an account for this player: a unique name and a password to sign in with
    /// from any device (`stoa login`), so the player cannot be lost with a device.
    Claim {
        /// The account's name: 2-24 letters, digits, '-' or '_' (asked when not given).
        #[arg(id = "account_name", value_name = "NAME")]
        name: Option<String>,
    },
    /// Change the account's password (asks for the current one).
    Password {
        /// Also sign out every other device of this player.
        #[arg(long)]
        sign_out_others: bool,
    },
    /// Sign this terminal out: its token stops working and is forgotten here.
    Logout,
}

/// Arguments of `stoa identities`.
#[derive(Clone, Debug, Args)]
pub struct IdentitiesArgs {
    /// Switch to a previous identity (by name or player id).
    #[arg(long = "use", value_name = "NAME_OR_ID")]
    switch: Option<String>,
}

/// Reads one line from standard input after printing `prompt` (on standard error).
fn read_line(prompt: &str) -> Result<String, ExitCode> {
    eprint!("{prompt}");
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(n) if n > 0 => Ok(line.trim_end_matches(['\r', '\n']).to_string()),
        _ => {
            eprintln!("\nerror: nothing read");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Reads a password: without echo from a terminal, else a line of standard input.
fn read_password(prompt: &str) -> Result<String, ExitCode> {
    if std::io::stdin().is_terminal() {
        rpassword::prompt_password(prompt).map_err(|e| {
            eprintln!("error: cannot read the password: {e}");
            ExitCode::FAILURE
        })
    } else {
        read_line(prompt).inspect(|_| eprintln!())
    }
}

/// A new password, typed twice.
fn new_password(prompt: &str) -> Result<String, ExitCode> {
    let first = read_password(prompt)?;
    let again = read_password("the same password again: ")?;
    if first != again {
        eprintln!("error: the two passwords differ; nothing changed");
        return Err(ExitCode::FAILURE);
    }
    Ok(first)
}

fn failed(e: &crate::connection::RequestError) -> ExitCode {
    eprintln!("error {}: {}", e.code(), e.message());
    ExitCode::FAILURE
}

impl LoginArgs {
    /// Signs in to an account: this terminal becomes its player (the identity it was is
    /// kept among the previous ones).
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let global = resolved(global)?;
            let name = match &self.name {
                Some(n) => n.clone(),
                None => read_line("account name: ")?,
            };
            let password = read_password(&format!("password of {name}: "))?;
            let login = Credentials {
                name,
                password: Password(password),
            };
            let was = Identity::default_location().list(&global.server);
            let (_, me, _) = connect_as(&global, Some(login)).await?;
            println!("signed in: this terminal is {} ({})", me.name, me.id);
            let left = was
                .iter()
                .filter_map(|k| k.current.as_ref())
                .find(|c| c.id != me.id);
            if let Some(left) = left {
                println!(
                    "{} is kept as a previous identity: stoa identities --use {} switches back",
                    left.name, left.id
                );
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

impl AccountArgs {
    /// Shows, claims, changes the password of, or signs out of this player's account.
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let global = resolved(global)?;
            // Before connecting: a typo in the prompts costs no connection.
            let msg = self.request()?;
            let logout = matches!(self.action, Some(AccountAction::Logout));
            let (conn, me, _) = connect(&global).await?;
            let answer = match conn.request(msg).await {
                Ok(answer) => answer,
                // Signing out ends this connection at once: the `ok` may be lost in the
                // close. The token's fate is the truth: refused now, it is signed out.
                Err(crate::connection::RequestError::Disconnected)
                    if logout && token_refused(&global, &me).await =>
                {
                    ServerMessage::Ok {
                        rid: None,
                        seq: None,
                        game_id: None,
                    }
                }
                Err(e) => return Err(failed(&e)),
            };
            self.say(&me, answer)
        })
        .unwrap_or_else(|code| code)
    }

    /// The request the action makes, its prompts answered.
    fn request(&self) -> Result<ClientMessage, ExitCode> {
        let msg = match &self.action {
            None => ClientMessage::Account { rid: None },
            Some(AccountAction::Claim { name }) => {
                let name = match name {
                    Some(n) => n.clone(),
                    None => read_line("account name (2-24 letters, digits, - or _): ")?,
                };
                let password = new_password("password (8-256 characters): ")?;
                ClientMessage::AccountClaim {
                    rid: None,
                    name,
                    password: Password(password),
                }
            }
            Some(AccountAction::Password { sign_out_others }) => {
                let current = read_password("current password: ")?;
                let new = new_password("new password (8-256 characters): ")?;
                ClientMessage::AccountPassword {
                    rid: None,
                    current: Password(current),
                    new: Password(new),
                    revoke_others: *sign_out_others,
                }
            }
            Some(AccountAction::Logout) => ClientMessage::AccountLogout { rid: None },
        };
        Ok(msg)
    }

    /// Says what the server's answer to the action means.
    fn say(
        &self,
        me: &crate::connection::Welcome,
        answer: ServerMessage,
    ) -> Result<ExitCode, ExitCode> {
        match (&self.action, answer) {
            (
                None,
                ServerMessage::Account {
                    name: Some(name), ..
                },
            ) => {
                println!("{} ({}): claimed account '{name}'", me.name, me.id);
            }
            (None, ServerMessage::Account { name: None, .. }) => {
                println!(
                    "{} ({}): a guest, not claimed: stoa account claim keeps this player if this device is lost",
                    me.name, me.id
                );
            }
            (Some(AccountAction::Claim { .. }), ServerMessage::Account { name, .. }) => {
                let name = name.unwrap_or_default();
                println!("claimed: this player ({}) is the account '{name}'", me.id);
                println!("sign in from any device with: stoa login {name}");
            }
            (Some(AccountAction::Password { sign_out_others }), ServerMessage::Ok { .. }) => {
                println!("password changed");
                if *sign_out_others {
                    println!("every other device is signed out");
                }
            }
            (Some(AccountAction::Logout), ServerMessage::Ok { .. }) => {
                if let Err(e) = Identity::default_location().forget_token(&me.token) {
                    eprintln!("note: could not forget the token: {e}");
                }
                println!("signed out: {} is no longer on this terminal", me.name);
            }
            _ => {
                eprintln!("error: the server answered something else");
                return Err(ExitCode::FAILURE);
            }
        }
        Ok(ExitCode::SUCCESS)
    }
}

/// Whether a server of `me`'s deployment now refuses `me`'s token.
async fn token_refused(global: &Global, me: &crate::connection::Welcome) -> bool {
    let target = crate::connection::Target {
        urls: vec![me.url.clone()],
        keys: crate::identity::Keys::session(&me.url, &me.deployment, &me.token),
        identity: None,
        name: None,
        ca_file: global.ca_file.clone(),
        bot: false,
        login: None,
    };
    matches!(
        crate::connection::Connection::open(target).await,
        Err(crate::connection::ConnectError::Refused { code, .. }) if code == "unauthorized"
    )
}

impl IdentitiesArgs {
    /// Lists the identities kept for the server's deployments, or switches to one.
    pub fn run(&self, global: &Global) -> ExitCode {
        let global = match resolved(global) {
            Ok(g) => g,
            Err(code) => return code,
        };
        let identity = Identity::default_location();
        if let Some(who) = &self.switch {
            return match identity.switch(&global.server, who) {
                Ok(Some(s)) => {
                    println!("this terminal is {} ({}) again", s.name, s.id);
                    ExitCode::SUCCESS
                }
                Ok(None) => {
                    eprintln!(
                        "error: no previous identity '{who}' here (stoa identities lists them)"
                    );
                    ExitCode::FAILURE
                }
                Err(e) => {
                    eprintln!("error: could not write the identity file: {e}");
                    ExitCode::FAILURE
                }
            };
        }
        let kept = identity.list(&global.server);
        if kept.is_empty() {
            println!("no identity kept for {}", global.server.join(", "));
            return ExitCode::SUCCESS;
        }
        for k in &kept {
            println!("deployment {}:", k.deployment);
            if let Some(c) = &k.current {
                println!("* {} ({})  current", c.name, c.id);
            }
            for p in &k.previous {
                println!(
                    "  {} ({})  previous: stoa identities --use {}",
                    p.name, p.id, p.id
                );
            }
        }
        ExitCode::SUCCESS
    }
}

//! `stoa link` and `stoa devices`: one identity on several devices. `stoa link` shows a
//! one-time code to type on another device (a browser's Devices panel, or `stoa link
//! <code>` on another terminal); `stoa link <code>` redeems a code made elsewhere and keeps
//! the new token in the identity file, so this terminal is that player from now on.

use std::process::ExitCode;

use clap::Args;
use stoa_protocol::wire::{ClientMessage, DeviceInfo, ServerMessage};

use super::{block_on, connect, resolved, Global};
use crate::identity::Identity;

/// Arguments of `stoa link`.
#[derive(Clone, Debug, Args)]
pub struct LinkArgs {
    /// A code shown on another device: this terminal becomes that player. Without it, a
    /// code is shown to type on the other device.
    code: Option<String>,
    /// Link even though this terminal already is a player here; that player's token is
    /// kept as a previous identity (`stoa identities --use` switches back).
    #[arg(long)]
    replace: bool,
}

/// Arguments of `stoa devices`.
#[derive(Clone, Debug, Args)]
pub struct DevicesArgs {
    /// Revoke this device (an id from the list): its token stops working.
    #[arg(long)]
    revoke: Option<String>,
}

/// Sends `msg` as the stored identity; returns its answer and the welcome.
async fn ask(
    global: &Global,
    msg: ClientMessage,
) -> Result<(ServerMessage, crate::connection::Welcome), ExitCode> {
    let global = resolved(global)?;
    let (conn, me, _) = connect(&global).await?;
    match conn.request(msg).await {
        Ok(answer) => Ok((answer, me)),
        Err(e) => {
            eprintln!("error {}: {}", e.code(), e.message());
            Err(ExitCode::FAILURE)
        }
    }
}

fn unexpected() -> ExitCode {
    eprintln!("error: the server answered something else");
    ExitCode::FAILURE
}

impl LinkArgs {
    /// Shows a code, or redeems one and stores the token it gives.
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            let Some(code) = &self.code else {
                let (answer, me) = ask(global, ClientMessage::LinkCode { rid: None }).await?;
                let ServerMessage::LinkCode { code, .. } = answer else {
                    return Err(unexpected());
                };
                println!("link code: {code}");
                println!(
                    "type it on the other device within 5 minutes (stoa link {code}, or Devices in the browser) to be {} there too",
                    me.name
                );
                return Ok(ExitCode::SUCCESS);
            };
            let resolved_global = resolved(global)?;
            let before = Identity::default_location().keys(&resolved_global.server);
            let (conn, me, _) = connect(&resolved_global).await?;
            let deployment = Some(me.deployment.as_str()).filter(|d| !d.is_empty());
            let already = before.token_for(&me.url, deployment).is_some();
            if already && !self.replace {
                // Refused before the code is spent: it stays usable for a second try.
                eprintln!(
                    "error: this terminal already is {} ({}) on this server; linking makes it the code's player and leaves {}",
                    me.name, me.id, me.name
                );
                eprintln!(
                    "if this is {}'s only device, make {} reachable first: stoa account claim (then stoa login from anywhere)",
                    me.name, me.name
                );
                eprintln!(
                    "to link anyway and keep {}'s token here: stoa link {code} --replace (stoa identities --use {} switches back)",
                    me.name, me.id
                );
                return Err(ExitCode::FAILURE);
            }
            let msg = ClientMessage::LinkRedeem {
                rid: None,
                code: code.clone(),
                device: Some("terminal".into()),
            };
            let answer = conn.request(msg).await.map_err(|e| {
                eprintln!("error {}: {}", e.code(), e.message());
                ExitCode::FAILURE
            })?;
            let ServerMessage::LinkToken {
                token,
                player_id,
                name,
                ..
            } = answer
            else {
                return Err(unexpected());
            };
            if let Err(e) = Identity::default_location().remember(
                &me.url,
                &me.deployment,
                &token,
                &player_id,
                &name,
            ) {
                eprintln!("error: could not store the identity token: {e}");
                return Err(ExitCode::FAILURE);
            }
            println!("linked: this terminal is now {name} ({player_id})");
            if already && player_id != me.id {
                println!(
                    "{} is kept as a previous identity: stoa identities --use {} switches back",
                    me.name, me.id
                );
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

impl DevicesArgs {
    /// Lists the devices holding this identity (or revokes one).
    pub fn run(&self, global: &Global) -> ExitCode {
        block_on(async {
            if let Some(id) = &self.revoke {
                let msg = ClientMessage::DeviceRevoke {
                    rid: None,
                    id: id.clone(),
                };
                let (answer, _) = ask(global, msg).await?;
                let ServerMessage::Ok { .. } = answer else {
                    return Err(unexpected());
                };
                println!("revoked {id}");
                return Ok(ExitCode::SUCCESS);
            }
            let (answer, me) = ask(global, ClientMessage::Devices { rid: None }).await?;
            let ServerMessage::Devices { devices, .. } = answer else {
                return Err(unexpected());
            };
            println!("devices of {} ({}):", me.name, me.id);
            for d in &devices {
                println!("{}", device_line(d));
            }
            Ok(ExitCode::SUCCESS)
        })
        .unwrap_or_else(|code| code)
    }
}

/// One device as a line: its id, then label, when linked and last seen (UTC), and which is
/// this one.
fn device_line(d: &DeviceInfo) -> String {
    format!("{}  {}", d.id, crate::present::device_text(d))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_show_dates_and_this_device() {
        let d = DeviceInfo {
            id: "dabc".into(),
            label: "terminal".into(),
            created_ms: 0,
            last_seen_ms: 1_764_141_240_000,
            current: true,
        };
        assert_eq!(
            device_line(&d),
            "dabc  terminal  linked 1970-01-01 00:00  last seen 2025-11-26 07:14  (this device)"
        );
    }
}

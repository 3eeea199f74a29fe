//! Opening one websocket to one address: the upgrade, `hello` with the right token, and
//! the `welcome` (or the refusal) that answers it.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use stoa_protocol::wire::{ClientMessage, ServerMessage, PROTOCOL_VERSION};
use tokio_tungstenite::tungstenite::Message;

use super::frames::encode;
use super::{local_now_ms, ConnectError, Target, Welcome, Ws};

/// How long a connection attempt (TCP, websocket handshake, hello) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The websocket upgrade's response header naming the server's deployment.
const DEPLOYMENT_HEADER: &str = "stoa-deployment";

/// Opens the websocket to `url` and performs hello/welcome, offering the token the keys
/// give for the deployment the server announces. With `resume` (a reconnection) a server
/// that is not our deployment gets no `hello` at all (it would make us a new guest): that is
/// a `Network` failure, and the next address is tried. Returns the server time of `welcome`.
pub(super) async fn handshake(
    target: &Target,
    url: &str,
    resume: bool,
) -> Result<(Ws, Welcome, i64), ConnectError> {
    let attempt = async {
        let (mut ws, announced) = open_socket(target, url).await?;
        let token = target
            .keys
            .token_for(url, announced.as_deref())
            .filter(|_| target.login.is_none());
        if resume && token.is_none() {
            let _ = ws.close(None).await;
            return Err(ConnectError::Network(format!(
                "{url}: another deployment ({})",
                announced.as_deref().unwrap_or("unnamed")
            )));
        }
        let hello = ClientMessage::Hello {
            rid: None,
            protocol: PROTOCOL_VERSION,
            token: token.clone(),
            name: target.name.clone(),
            bot: target.bot,
            device: Some(if target.bot { "bot" } else { "terminal" }.into()),
            login: target.login.clone(),
        };
        ws.send(Message::text(encode(&hello, None)))
            .await
            .map_err(|e| ConnectError::Network(e.to_string()))?;
        let (welcome, server_time) = await_welcome(&mut ws, url, announced, token).await?;
        Ok((ws, welcome, server_time))
    };
    match tokio::time::timeout(CONNECT_TIMEOUT, attempt).await {
        Ok(r) => r,
        Err(_) => Err(ConnectError::Network(format!(
            "{url}: no welcome within {} s",
            CONNECT_TIMEOUT.as_secs()
        ))),
    }
}

/// The websocket upgrade (with TLS for `wss://`), and the deployment the server announces
/// in its response.
async fn open_socket(target: &Target, url: &str) -> Result<(Ws, Option<String>), ConnectError> {
    let connector = if url.starts_with("wss://") {
        Some(crate::tls::connector(target.ca_file.as_deref()).map_err(ConnectError::Network)?)
    } else {
        None
    };
    let (ws, response) =
        tokio_tungstenite::connect_async_tls_with_config(url, None, false, connector)
            .await
            .map_err(|e| ConnectError::Network(format!("{url}: {e}")))?;
    let announced = response
        .headers()
        .get(DEPLOYMENT_HEADER)
        .and_then(|v| v.to_str().ok())
        .filter(|v| !v.is_empty())
        .map(String::from);
    Ok((ws, announced))
}

/// Reads frames until `welcome` (or the `error` refusing the hello, which carried
/// `offered`); anything else before it is skipped.
async fn await_welcome(
    ws: &mut Ws,
    url: &str,
    announced: Option<String>,
    offered: Option<String>,
) -> Result<(Welcome, i64), ConnectError> {
    loop {
        let Some(frame) = ws.next().await else {
            return Err(ConnectError::Network(
                "the server closed the connection during hello".into(),
            ));
        };
        let frame = frame.map_err(|e| ConnectError::Network(e.to_string()))?;
        let Message::Text(text) = frame else {
            continue;
        };
        let Ok(msg) = serde_json::from_str::<ServerMessage>(text.as_str()) else {
            if let Some(refused) = unknown_refusal(text.as_str(), &offered) {
                return Err(refused);
            }
            continue;
        };
        match msg {
            ServerMessage::Welcome {
                player,
                token,
                games,
                server_time,
                deployment,
                ..
            } => {
                let welcome = Welcome {
                    id: player.id,
                    name: player.name,
                    token,
                    games,
                    deployment: Some(deployment)
                        .filter(|d| !d.is_empty())
                        .or(announced)
                        .unwrap_or_default(),
                    url: url.to_string(),
                    note: None,
                };
                let server_time = i64::try_from(server_time).unwrap_or_else(|_| local_now_ms());
                return Ok((welcome, server_time));
            }
            ServerMessage::Error { code, message, .. } => {
                return Err(ConnectError::Refused {
                    code: code.as_str().to_string(),
                    message,
                    offered,
                })
            }
            _ => continue,
        }
    }
}

/// An `error` answering the hello with a code this client does not know yet (a newer
/// server): still a refusal, in the server's words.
fn unknown_refusal(text: &str, offered: &Option<String>) -> Option<ConnectError> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    if value["t"] != "error" {
        return None;
    }
    Some(ConnectError::Refused {
        code: value["code"].as_str()?.to_string(),
        message: value["message"].as_str()?.to_string(),
        offered: offered.clone(),
    })
}

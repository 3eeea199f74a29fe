//! The operators' API over HTTP/1.1: one request per connection, `Authorization: Bearer`,
//! JSON in and out; `https://` through rustls with the same trusted roots as `wss://`.
//!
//! Why a connection per request: `stoa admin` makes one or two requests and ends; keeping
//! a connection open would save nothing.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::header::{AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Method, Request};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;

/// What a failed request says.
#[derive(Debug, PartialEq)]
pub enum Failure {
    /// 404 `not_found` with no message of its own: the API answers so to anyone who is no
    /// operator (and a server without a console answers every path so).
    NotOperator,
    /// The API's error: its code and message.
    Api { code: String, message: String },
    /// The server could not be reached or answered no JSON.
    Transport(String),
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::NotOperator => {
                write!(f, "not an operator token (or this server has no console)")
            }
            Failure::Api { code, message } => write!(f, "{code}: {message}"),
            Failure::Transport(why) => write!(f, "{why}"),
        }
    }
}

/// Where the API is and who asks.
pub struct Api {
    /// `http://host:port` or `https://host[/prefix]` (no trailing slash).
    pub base: String,
    /// The operator's token.
    pub token: String,
    /// The TLS configuration for `https://`.
    pub tls: Arc<rustls::ClientConfig>,
}

impl Api {
    /// `GET <path>` (path from `/api/admin/…`, query included).
    pub async fn get(&self, path: &str) -> Result<Value, Failure> {
        self.call(Method::GET, path, None).await
    }

    /// `POST <path>` with a JSON body.
    pub async fn post(&self, path: &str, body: &Value) -> Result<Value, Failure> {
        self.call(Method::POST, path, Some(body.to_string())).await
    }

    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<String>,
    ) -> Result<Value, Failure> {
        let (scheme, rest) = self
            .base
            .split_once("://")
            .ok_or_else(|| Failure::Transport(format!("{}: no scheme", self.base)))?;
        let (authority, prefix) = match rest.split_once('/') {
            Some((a, p)) => (a, format!("/{p}")),
            None => (rest, String::new()),
        };
        let tls = scheme == "https";
        let (host, port) = host_port(authority, if tls { 443 } else { 80 });
        let tcp = TcpStream::connect((host.as_str(), port))
            .await
            .map_err(|e| Failure::Transport(format!("cannot reach {authority}: {e}")))?;
        let request = Request::builder()
            .method(method)
            .uri(format!("{prefix}{path}"))
            .header(HOST, authority)
            .header(AUTHORIZATION, format!("Bearer {}", self.token))
            .header(CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| Failure::Transport(format!("bad request: {e}")))?;
        let (status, bytes) = if tls {
            let name = rustls::pki_types::ServerName::try_from(host.clone())
                .map_err(|e| Failure::Transport(format!("{host}: {e}")))?;
            let stream = tokio_rustls::TlsConnector::from(self.tls.clone())
                .connect(name, tcp)
                .await
                .map_err(|e| Failure::Transport(format!("TLS with {authority}: {e}")))?;
            exchange(stream, request).await?
        } else {
            exchange(tcp, request).await?
        };
        read_answer(status, &bytes)
    }
}

/// `host[:port]` (an IPv6 literal in brackets) with the scheme's port by default.
fn host_port(authority: &str, default: u16) -> (String, u16) {
    if let Some(rest) = authority.strip_prefix('[') {
        let (h, tail) = rest.split_once(']').unwrap_or((rest, ""));
        let port = tail.strip_prefix(':').and_then(|p| p.parse().ok());
        return (h.to_string(), port.unwrap_or(default));
    }
    match authority.rsplit_once(':') {
        Some((h, p)) if p.parse::<u16>().is_ok() => (h.to_string(), p.parse().unwrap_or(default)),
        _ => (authority.to_string(), default),
    }
}

/// Sends one request over `io` and reads the whole answer.
async fn exchange<S>(io: S, request: Request<Full<Bytes>>) -> Result<(u16, Bytes), Failure>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let broke = |e: hyper::Error| Failure::Transport(format!("the request failed: {e}"));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(broke)?;
    tokio::spawn(conn);
    let answer = sender.send_request(request).await.map_err(broke)?;
    let status = answer.status().as_u16();
    let bytes = answer
        .into_body()
        .collect()
        .await
        .map_err(broke)?
        .to_bytes();
    Ok((status, bytes))
}

/// The API's answer as JSON, or what its error says.
fn read_answer(status: u16, bytes: &[u8]) -> Result<Value, Failure> {
    let value: Value = serde_json::from_slice(bytes).map_err(|_| {
        Failure::Transport(format!(
            "the server answered {status} with no JSON (is this a Stoa server?)"
        ))
    })?;
    if (200..300).contains(&status) {
        return Ok(value);
    }
    let code = value["error"].as_str().unwrap_or("error").to_string();
    match value["message"].as_str() {
        None if status == 404 && code == "not_found" => Err(Failure::NotOperator),
        message => Err(Failure::Api {
            code,
            message: message.unwrap_or("no message").to_string(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_ports_and_answers() {
        assert_eq!(host_port("a.org", 443), ("a.org".into(), 443));
        assert_eq!(host_port("127.0.0.1:7878", 80), ("127.0.0.1".into(), 7878));
        assert_eq!(host_port("[::1]:81", 80), ("::1".into(), 81));
        assert_eq!(
            read_answer(404, br#"{"error":"not_found"}"#),
            Err(Failure::NotOperator)
        );
        assert_eq!(
            read_answer(404, br#"{"error":"not_found","message":"no report 'x'"}"#),
            Err(Failure::Api {
                code: "not_found".into(),
                message: "no report 'x'".into()
            })
        );
        assert_eq!(read_answer(200, br#"{"a":1}"#).unwrap()["a"], 1);
    }
}

//! The websocket opening handshake (RFC 6455 §4.2), and taking the socket over from HTTP.
//!
//! Why not axum's `WebSocketUpgrade`: it hands over a stream that owns the socket and
//! frames every message itself. Stoa writes frames encoded once for every recipient
//! ([`crate::net::frame`]) straight into each socket, which needs the socket itself; the
//! websocket library still parses what clients send ([`crate::net::connection`]).

use std::sync::Arc;

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode};
use axum::response::{IntoResponse, Response};
use hyper::upgrade::OnUpgrade;
use hyper_util::rt::TokioIo;

use crate::net::connection::Upgraded;
use crate::net::listener::Counted;

/// A valid upgrade request, ready to be answered `101` and taken over.
pub struct Upgrade {
    key: HeaderValue,
    on_upgrade: OnUpgrade,
}

/// Why a request is no websocket upgrade; answered as axum answers it.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    /// Not a `GET`.
    #[error("Request method must be `GET`")]
    MethodNotGet,
    /// No `Connection: upgrade`.
    #[error("Connection header did not include 'upgrade'")]
    Connection,
    /// No `Upgrade: websocket`.
    #[error("`Upgrade` header did not include 'websocket'")]
    UpgradeHeader,
    /// Not version 13.
    #[error("`Sec-WebSocket-Version` header did not include '13'")]
    Version,
    /// No key to answer.
    #[error("`Sec-WebSocket-Key` header missing")]
    Key,
    /// The connection cannot be upgraded (not HTTP/1.1 through our listener).
    #[error("WebSocket request couldn't be upgraded since no upgrade state was present")]
    NotUpgradable,
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let status = match self {
            Refused::MethodNotGet => StatusCode::METHOD_NOT_ALLOWED,
            Refused::NotUpgradable => StatusCode::UPGRADE_REQUIRED,
            _ => StatusCode::BAD_REQUEST,
        };
        (status, self.to_string()).into_response()
    }
}

impl Upgrade {
    /// Checks an upgrade request (method and headers), taking its upgrade handle.
    pub fn from_request(req: &mut Request<Body>) -> Result<Upgrade, Refused> {
        if req.method() != Method::GET {
            return Err(Refused::MethodNotGet);
        }
        let headers = req.headers();
        if !header_has_token(headers, header::CONNECTION, "upgrade") {
            return Err(Refused::Connection);
        }
        if !header_is(headers, header::UPGRADE, "websocket") {
            return Err(Refused::UpgradeHeader);
        }
        if !header_is(headers, header::SEC_WEBSOCKET_VERSION, "13") {
            return Err(Refused::Version);
        }
        let key = headers
            .get(header::SEC_WEBSOCKET_KEY)
            .cloned()
            .ok_or(Refused::Key)?;
        let on_upgrade = req
            .extensions_mut()
            .remove::<OnUpgrade>()
            .ok_or(Refused::NotUpgradable)?;
        Ok(Upgrade { key, on_upgrade })
    }

    /// The `101 Switching Protocols` answer, and the socket once hyper has sent it.
    pub fn accept(
        self,
    ) -> (
        Response,
        impl std::future::Future<Output = Option<Upgraded>>,
    ) {
        let accept = tungstenite::handshake::derive_accept_key(self.key.as_bytes());
        let response = Response::builder()
            .status(StatusCode::SWITCHING_PROTOCOLS)
            .header(header::CONNECTION, "upgrade")
            .header(header::UPGRADE, "websocket")
            .header(header::SEC_WEBSOCKET_ACCEPT, accept)
            .body(Body::empty())
            .unwrap_or_default();
        let on_upgrade = self.on_upgrade;
        let socket = async move {
            let upgraded = match on_upgrade.await {
                Ok(upgraded) => upgraded,
                Err(e) => {
                    tracing::debug!(error = %e, "websocket upgrade failed");
                    return None;
                }
            };
            // Our listener serves every connection over `Counted`; anything else would be
            // a wiring mistake, refused rather than served another way.
            match upgraded.downcast::<TokioIo<Counted>>() {
                Ok(parts) => Some(Upgraded {
                    socket: Arc::new(parts.io.into_inner()),
                    read_ahead: parts.read_buf.to_vec(),
                }),
                Err(_) => {
                    tracing::error!("upgraded connection is not one of our listener's sockets");
                    None
                }
            }
        };
        (response, socket)
    }
}

/// Whether a comma-separated header holds `token` (case-insensitive).
fn header_has_token(headers: &HeaderMap, name: header::HeaderName, token: &str) -> bool {
    headers.get_all(name).iter().any(|v| {
        v.to_str().is_ok_and(|v| {
            v.split(',')
                .any(|part| part.trim().eq_ignore_ascii_case(token))
        })
    })
}

/// Whether a header equals `value` (case-insensitive).
fn header_is(headers: &HeaderMap, name: header::HeaderName, value: &str) -> bool {
    headers
        .get(name)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(value.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(headers: &[(&str, &str)]) -> Request<Body> {
        let mut b = Request::builder().method(Method::GET).uri("/ws");
        for (k, v) in headers {
            b = b.header(*k, *v);
        }
        b.body(Body::empty()).unwrap()
    }

    const GOOD: [(&str, &str); 4] = [
        ("connection", "keep-alive, Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn each_missing_header_is_refused_with_its_reason() {
        let cases = [
            (0, "Connection header did not include 'upgrade'"),
            (1, "`Upgrade` header did not include 'websocket'"),
            (2, "`Sec-WebSocket-Version` header did not include '13'"),
            (3, "`Sec-WebSocket-Key` header missing"),
        ];
        for (skip, reason) in cases {
            let headers: Vec<_> = GOOD
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != skip)
                .map(|(_, h)| *h)
                .collect();
            let err = Upgrade::from_request(&mut request(&headers)).err().unwrap();
            assert_eq!(err.to_string(), reason);
        }
        // All headers but no upgrade state: not through our listener.
        let err = Upgrade::from_request(&mut request(&GOOD)).err().unwrap();
        assert!(matches!(err, Refused::NotUpgradable));
        assert_eq!(err.into_response().status(), StatusCode::UPGRADE_REQUIRED);
    }

    #[test]
    fn accept_key_is_rfc_6455s_example() {
        // RFC 6455 §1.3: this key is answered with this accept value.
        assert_eq!(
            tungstenite::handshake::derive_accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="),
            "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
        );
    }

    #[test]
    fn connection_header_tokens() {
        let mut h = HeaderMap::new();
        h.insert(header::CONNECTION, HeaderValue::from_static("upgraded"));
        assert!(!header_has_token(&h, header::CONNECTION, "upgrade"));
        h.insert(header::CONNECTION, HeaderValue::from_static("Upgrade"));
        assert!(header_has_token(&h, header::CONNECTION, "upgrade"));
    }
}

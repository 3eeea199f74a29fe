//! A light websocket client for load: it reads frames as text, parses only what it needs,
//! and counts the bytes of the `game.diff` frames it receives.
//!
//! Why not the tests' `Client`: that one parses every frame into JSON and queues it, which is
//! right for asserting behaviour and wrong for a generator that shares two cores with the
//! server it measures.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::net::{TcpSocket, TcpStream};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

/// Connections per source address: few enough for the server's per-IP cap, which is at
/// most a quarter of its connection cap (1,000 fits from an open-file limit of about
/// 4,100), and far below loopback's 28k ephemeral ports per source.
const PER_SOURCE: usize = 1_000;

/// The loopback source address for connection number `i`: 127.0.0.1, then .2, … so no
/// address passes the server's per-IP cap (room for 254,000 connections).
pub fn source(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + (i / PER_SOURCE) as u8))
}

/// Bytes read per `read` call: the server's frames are mostly under 1 KiB; a snapshot
/// just takes a few reads.
const READ_BUFFER: usize = 8 * 1024;

/// One websocket connection.
pub struct Conn {
    ws: WebSocketStream<TcpStream>,
    next_rid: i64,
    /// From `welcome`.
    pub player_id: String,
    /// Bytes of `game.diff` frames received.
    pub diff_bytes: u64,
    /// `game.diff` frames received.
    pub diffs: u64,
    /// `error` frames received.
    pub errors: u64,
}

/// The frame's type when it is one of the few the generator follows, by a prefix check
/// (the server writes `t` first).
pub fn is_type(text: &str, t: &str) -> bool {
    text.strip_prefix("{\"t\":\"")
        .and_then(|r| r.strip_prefix(t))
        .is_some_and(|r| r.starts_with('"'))
}

/// The `seq` of a frame, read without parsing the rest.
pub fn seq_of(text: &str) -> Option<u64> {
    let at = text.find("\"seq\":")? + 6;
    let digits: String = text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

impl Conn {
    /// Opens a websocket from `source` and says hello as a new guest.
    pub async fn open(server: SocketAddr, source: IpAddr) -> std::io::Result<Conn> {
        let socket = TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source, 0))?;
        let tcp = socket.connect(server).await?;
        tcp.set_nodelay(true)?;
        let url = format!("ws://{server}/ws");
        // A small read buffer: tungstenite zero-fills its whole read buffer before every
        // read, and at the default 128 KiB that memset was half of the generator's CPU,
        // which made the generator, not the server, the bottleneck of every scenario.
        let config = WebSocketConfig::default().read_buffer_size(READ_BUFFER);
        let (ws, _) = tokio_tungstenite::client_async_with_config(url, tcp, Some(config))
            .await
            .map_err(std::io::Error::other)?;
        let mut c = Conn {
            ws,
            next_rid: 1,
            player_id: String::new(),
            diff_bytes: 0,
            diffs: 0,
            errors: 0,
        };
        let w = c
            .request(json!({"t":"hello","protocol":1,"name":"load"}))
            .await;
        c.player_id = w["player"]["id"].as_str().unwrap_or_default().to_string();
        if c.player_id.is_empty() {
            return Err(std::io::Error::other(format!("hello failed: {w}")));
        }
        Ok(c)
    }

    /// Sends a request with a fresh rid (no waiting).
    pub async fn send(&mut self, mut v: Value) -> i64 {
        let rid = self.next_rid;
        self.next_rid += 1;
        v["rid"] = json!(rid);
        let _ = self.ws.send(Message::Text(v.to_string().into())).await;
        rid
    }

    /// The next text frame (`None` once closed), counting diffs and errors.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            match self.ws.next().await? {
                Ok(Message::Text(t)) => {
                    let t = t.as_str().to_string();
                    if is_type(&t, "game.diff") {
                        self.diff_bytes += t.len() as u64;
                        self.diffs += 1;
                    } else if is_type(&t, "error") {
                        self.errors += 1;
                    }
                    return Some(t);
                }
                Ok(_) => continue,
                Err(_) => return None,
            }
        }
    }

    /// Reads until a frame satisfies `pred` (on its text); returns it parsed.
    pub async fn until(&mut self, pred: impl Fn(&str) -> bool) -> Value {
        match self.until_text(pred).await {
            Some(t) => serde_json::from_str(&t).unwrap_or(Value::Null),
            None => Value::Null,
        }
    }

    /// Like [`Conn::until`] but the frame's text, unparsed (`None`: the connection ended):
    /// the move loop reads only a prefix and the seq of each frame.
    pub async fn until_text(&mut self, pred: impl Fn(&str) -> bool) -> Option<String> {
        while let Some(t) = self.next().await {
            if pred(&t) {
                return Some(t);
            }
        }
        None
    }

    /// Sends a request and waits for its answer.
    pub async fn request(&mut self, v: Value) -> Value {
        let rid = self.send(v).await;
        let tag = format!("\"rid\":{rid},");
        let tag_end = format!("\"rid\":{rid}}}");
        self.until(|t| t.contains(&tag) || t.contains(&tag_end))
            .await
    }
}

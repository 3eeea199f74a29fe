//! A light websocket client for load: it frames and reads the socket itself, parses only
//! what it needs, counts the bytes of the `game.diff` frames it receives, and keeps the
//! kernel's timestamp of when each frame's last packet was sent.
//!
//! Why not the tests' `Client`: that one parses every frame into JSON and queues it, which is
//! right for asserting behaviour and wrong for a generator that shares two cores with the
//! server it measures. Why no websocket library at all: the generator's core was busier per
//! move than the server's in `fanout` (both are reported), and a library hides the system
//! call that carries the timestamp.
//!
//! Why the timestamp (`SO_TIMESTAMPNS`): on loopback the kernel stamps a packet on the
//! sender's core as the server's write hands it to the device, before any receiving work.
//! The stamp says when the server put a frame on the wire, whatever the generator's own
//! core was busy with before it read it: the server's latency as a network would carry it.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, UNIX_EPOCH};

use nix::sys::socket::{cmsg_space, recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use nix::sys::time::TimeSpec;
use serde_json::{json, Value};
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::{TcpSocket, TcpStream};

/// Connections per source address: few enough for the server's per-IP cap, which is at
/// most a quarter of its connection cap (1,000 fits from an open-file limit of about
/// 4,100), and far below loopback's 28k ephemeral ports per source.
const PER_SOURCE: usize = 1_000;

/// The loopback source address for connection number `i`: 127.0.0.1, then .2, … so no
/// address passes the server's per-IP cap (room for 254,000 connections).
pub fn source(i: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, 1 + (i / PER_SOURCE) as u8))
}

/// Bytes read per system call: the server's frames are mostly under 1 KiB; a snapshot
/// just takes a few reads.
const CHUNK: usize = 4096;

/// The websocket frame types the generator sends or handles.
const TEXT: u8 = 0x1;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;
const PONG: u8 = 0xA;

/// One websocket connection.
pub struct Conn {
    tcp: TcpStream,
    /// Bytes read and not yet taken as whole frames.
    buffered: Vec<u8>,
    chunk: Vec<u8>,
    /// Room for the timestamp's control message.
    cmsg: Vec<u8>,
    /// The kernel's stamp of the latest read (wall clock since the Unix epoch).
    stamp: Option<Duration>,
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

/// Wall-clock time as a duration since the Unix epoch (the clock of the kernel's stamps).
pub fn wall_now() -> Duration {
    UNIX_EPOCH.elapsed().unwrap_or_default()
}

/// A masked client frame (mask key 0: the payload goes as it is; RFC 6455 asks clients to
/// mask, the key's value only matters against proxies, and there are none on loopback).
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(payload.len() + 14);
    f.push(0x80 | opcode);
    match payload.len() {
        n if n < 126 => f.push(0x80 | n as u8),
        n if n <= 0xffff => {
            f.push(0x80 | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(0x80 | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    f.extend_from_slice(&[0; 4]);
    f.extend_from_slice(payload);
    f
}

/// The first whole frame of `buf`: (opcode, payload range, frame length), or `None` when
/// `buf` holds less than a frame.
fn parse_frame(buf: &[u8]) -> Option<(u8, std::ops::Range<usize>, usize)> {
    let (&b0, rest) = buf.split_first()?;
    let &b1 = rest.first()?;
    let (len, header) = match b1 & 0x7f {
        126 => (
            u16::from_be_bytes(buf.get(2..4)?.try_into().ok()?) as usize,
            4,
        ),
        127 => (
            u64::from_be_bytes(buf.get(2..10)?.try_into().ok()?) as usize,
            10,
        ),
        n => (n as usize, 2),
    };
    // Server frames are never masked (RFC 6455); a masked one is still stepped over whole.
    let header: usize = header + if b1 & 0x80 != 0 { 4 } else { 0 };
    let end = header.checked_add(len)?;
    (buf.len() >= end).then_some((b0 & 0x0f, header..end, end))
}

impl Conn {
    /// Opens a websocket from `source` and says hello as a new guest.
    pub async fn open(server: SocketAddr, source: IpAddr) -> io::Result<Conn> {
        let socket = TcpSocket::new_v4()?;
        socket.bind(SocketAddr::new(source, 0))?;
        let mut tcp = socket.connect(server).await?;
        tcp.set_nodelay(true)?;
        setsockopt(&tcp, sockopt::ReceiveTimestampns, &true).map_err(io::Error::from)?;
        let request = format!(
            "GET /ws HTTP/1.1\r\nHost: {server}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        tcp.write_all(request.as_bytes()).await?;
        let mut c = Conn {
            tcp,
            buffered: Vec::new(),
            chunk: vec![0; CHUNK],
            cmsg: vec![0; cmsg_space::<TimeSpec>()],
            stamp: None,
            next_rid: 1,
            player_id: String::new(),
            diff_bytes: 0,
            diffs: 0,
            errors: 0,
        };
        // The answer's head; what follows it is the first frames.
        let head_end = loop {
            if let Some(at) = c.buffered.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            if c.buffered.len() > 8192 || c.read().await.is_err() {
                return Err(io::Error::other("no websocket upgrade"));
            }
        };
        let head: Vec<u8> = c.buffered.drain(..head_end).collect();
        if !head.starts_with(b"HTTP/1.1 101") {
            return Err(io::Error::other(
                String::from_utf8_lossy(&head).into_owned(),
            ));
        }
        let w = c
            .request(json!({"t":"hello","protocol":1,"name":"load"}))
            .await;
        c.player_id = w["player"]["id"].as_str().unwrap_or_default().to_string();
        if c.player_id.is_empty() {
            return Err(io::Error::other(format!("hello failed: {w}")));
        }
        Ok(c)
    }

    /// The kernel's stamp of when the frame [`Conn::next`] returned last was put on the
    /// wire (its last packet), as wall-clock time since the Unix epoch.
    pub fn stamp(&self) -> Option<Duration> {
        self.stamp
    }

    /// Sends a request with a fresh rid (no waiting).
    pub async fn send(&mut self, mut v: Value) -> i64 {
        let rid = self.next_rid;
        self.next_rid += 1;
        v["rid"] = json!(rid);
        let frame = client_frame(TEXT, v.to_string().as_bytes());
        let _ = self.tcp.write_all(&frame).await;
        rid
    }

    /// One read into the buffer, keeping its stamp (`Err` once the connection ended).
    async fn read(&mut self) -> io::Result<()> {
        let fd = self.tcp.as_raw_fd();
        let (chunk, cmsg) = (&mut self.chunk, &mut self.cmsg);
        let (n, stamp) = self
            .tcp
            .async_io(Interest::READABLE, || {
                let mut iov = [IoSliceMut::new(chunk)];
                let msg = recvmsg::<()>(fd, &mut iov, Some(cmsg.as_mut_slice()), MsgFlags::empty())
                    .map_err(io::Error::from)?;
                let stamp = msg.cmsgs().ok().and_then(|mut c| {
                    c.find_map(|m| match m {
                        ControlMessageOwned::ScmTimestampns(ts) => Some(ts),
                        _ => None,
                    })
                });
                Ok((msg.bytes, stamp))
            })
            .await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        self.stamp =
            stamp.map(|ts| Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec().max(0) as u32));
        self.buffered.extend_from_slice(&self.chunk[..n]);
        Ok(())
    }

    /// The next text frame (`None` once closed), counting diffs and errors; pings are
    /// answered on the way. A frame is only read for when no whole one is buffered, so the
    /// latest read's stamp is that of the read that completed the frame returned.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            let Some((opcode, payload, len)) = parse_frame(&self.buffered) else {
                self.read().await.ok()?;
                continue;
            };
            let payload = self.buffered[payload].to_vec();
            self.buffered.drain(..len);
            match opcode {
                TEXT => {
                    let t = String::from_utf8(payload).ok()?;
                    if is_type(&t, "game.diff") {
                        self.diff_bytes += t.len() as u64;
                        self.diffs += 1;
                    } else if is_type(&t, "error") {
                        self.errors += 1;
                        // A run's errors are counted in its table; the first few are
                        // shown whole, to say what they were.
                        static SHOWN: AtomicU64 = AtomicU64::new(0);
                        if SHOWN.fetch_add(1, Ordering::Relaxed) < 5 {
                            eprintln!("error frame: {t}");
                        }
                    }
                    return Some(t);
                }
                PING => {
                    let _ = self.tcp.write_all(&client_frame(PONG, &payload)).await;
                }
                CLOSE => return None,
                _ => {}
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A server frame (unmasked) of `opcode` around `payload`.
    fn server_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
        let mut f = client_frame(opcode, payload);
        // Unmask: clear the mask bit and drop the (zero) key.
        f[1] &= 0x7f;
        let key_at = f.len() - payload.len() - 4;
        f.drain(key_at..key_at + 4);
        f
    }

    #[test]
    fn frames_of_every_length_form_parse_whole_and_only_whole() {
        for len in [0, 1, 125, 126, 127, 65_535, 65_536, 70_000] {
            let payload: Vec<u8> = (0..len).map(|i| (i % 251) as u8).collect();
            let frame = server_frame(TEXT, &payload);
            let header = match len {
                0..=125 => 2,
                126..=65_535 => 4,
                _ => 10,
            };
            assert_eq!(frame.len(), header + len, "length {len}");
            let (opcode, range, end) = parse_frame(&frame).expect("a whole frame");
            assert_eq!((opcode, end), (TEXT, frame.len()));
            assert_eq!(&frame[range], &payload[..]);
            for cut in [0, 1, header - 1, frame.len() - 1] {
                assert_eq!(parse_frame(&frame[..cut]), None, "length {len}, cut {cut}");
            }
        }
    }

    #[test]
    fn two_frames_in_one_read_parse_one_after_the_other() {
        let mut buf = server_frame(PING, b"p");
        buf.extend(server_frame(TEXT, br#"{"t":"game.diff","seq":7}"#));
        let (opcode, range, end) = parse_frame(&buf).unwrap();
        assert_eq!((opcode, &buf[range]), (PING, &b"p"[..]));
        let (opcode, range, rest) = parse_frame(&buf[end..]).unwrap();
        assert_eq!(opcode, TEXT);
        assert_eq!(
            seq_of(std::str::from_utf8(&buf[end..][range]).unwrap()),
            Some(7)
        );
        assert_eq!(end + rest, buf.len());
    }

    #[test]
    fn client_frames_are_masked_with_the_payload_as_it_is() {
        let f = client_frame(TEXT, b"hi");
        assert_eq!(f, [0x81, 0x82, 0, 0, 0, 0, b'h', b'i']);
        let long = client_frame(PONG, &[7; 300]);
        assert_eq!(&long[..8], &[0x8A, 0x80 | 126, 1, 44, 0, 0, 0, 0]);
        assert_eq!(long.len(), 8 + 300);
    }

    #[test]
    fn types_and_seqs_are_read_from_the_text() {
        let diff = r#"{"t":"game.diff","game_id":"g","seq":42,"patch":[]}"#;
        assert!(is_type(diff, "game.diff"));
        assert!(!is_type(diff, "game"));
        assert!(!is_type(r#"{"t":"game.diffs"}"#, "game.diff"));
        assert_eq!(seq_of(diff), Some(42));
        assert_eq!(seq_of(r#"{"t":"ok"}"#), None);
    }
}

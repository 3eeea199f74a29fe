//! The spectators of `fanout`: a websocket client that reads its socket itself, so that
//! every diff it receives carries the kernel's timestamp of when the server sent it.
//!
//! Why not [`crate::conn::Conn`]: a fan-out's latency to the last spectator was measured
//! when the generator got round to reading that spectator, and the generator's one core
//! (receiving thousands of sockets, and with `--steer-receive` doing their TCP work too) was
//! busier per move than the server (`stoa-load fanout` reports both). The kernel stamps a
//! packet on loopback as the sender hands it to the device (`SO_TIMESTAMPNS`, on the
//! sender's core, before any receive work), so the stamp says when the server's write
//! reached the wire, whatever the generator does afterwards. Reading the frames here, with
//! no websocket library, also keeps the generator's own share small.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, SocketAddr};
use std::os::fd::AsRawFd;
use std::time::{Duration, UNIX_EPOCH};

use nix::sys::socket::{cmsg_space, recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use nix::sys::time::TimeSpec;
use tokio::io::{AsyncReadExt, AsyncWriteExt, Interest};
use tokio::net::{TcpSocket, TcpStream};

use crate::conn::{is_type, seq_of};

/// Bytes read per system call: a diff is about 500 bytes.
const CHUNK: usize = 4096;

/// One diff as a spectator received it.
pub struct Received {
    /// The diff's seq.
    pub seq: u64,
    /// Its payload's length.
    pub bytes: usize,
    /// When the server's write of it reached the loopback device (wall clock), when the
    /// kernel said.
    pub on_wire: Option<Duration>,
}

/// A spectator's connection, after `hello` and `game.watch`.
pub struct Watcher {
    tcp: TcpStream,
    /// A frame begun in one read and not yet complete.
    partial: Vec<u8>,
    chunk: Vec<u8>,
    /// Room for the timestamp's control message.
    cmsg: Vec<u8>,
}

/// The websocket frame types the server sends.
const TEXT: u8 = 0x1;
const CLOSE: u8 = 0x8;
const PING: u8 = 0x9;

/// A masked client frame (mask key 0: the payload goes as it is; RFC 6455 asks clients to
/// mask, the key's value only matters against proxies, and there are none on loopback).
fn client_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut f = vec![0x80 | opcode];
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

impl Watcher {
    /// Connects from `source`, upgrades to a websocket, says hello as a new guest and
    /// watches `game_id`.
    pub async fn open(server: SocketAddr, source: IpAddr, game_id: &str) -> io::Result<Watcher> {
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
        // The answer's head, read a byte at a time so nothing after it is consumed.
        let mut head = Vec::new();
        while !head.ends_with(b"\r\n\r\n") {
            if head.len() > 4096 || tcp.read_u8().await.map(|b| head.push(b)).is_err() {
                return Err(io::Error::other("no websocket upgrade"));
            }
        }
        if !head.starts_with(b"HTTP/1.1 101") {
            return Err(io::Error::other(
                String::from_utf8_lossy(&head).into_owned(),
            ));
        }
        let mut w = Watcher {
            tcp,
            partial: Vec::new(),
            chunk: vec![0; CHUNK],
            cmsg: vec![0; cmsg_space::<TimeSpec>()],
        };
        w.request(
            r#"{"t":"hello","protocol":1,"name":"load","rid":1}"#,
            1,
            "welcome",
        )
        .await?;
        let watch = format!(r#"{{"t":"game.watch","game_id":"{game_id}","rid":2}}"#);
        w.request(&watch, 2, "game.snapshot").await?;
        Ok(w)
    }

    /// Sends `text` and reads until the frame answering `rid`, which must be of type `t`.
    async fn request(&mut self, text: &str, rid: u64, t: &str) -> io::Result<()> {
        self.tcp
            .write_all(&client_frame(TEXT, text.as_bytes()))
            .await?;
        let (tag, tag_end) = (format!("\"rid\":{rid},"), format!("\"rid\":{rid}}}"));
        let mut answer: Option<Result<(), String>> = None;
        while answer.is_none() {
            self.read(&mut |frame, _| {
                if answer.is_none() && (frame.contains(&tag) || frame.contains(&tag_end)) {
                    answer = Some(match is_type(frame, t) {
                        true => Ok(()),
                        false => Err(frame.to_string()),
                    });
                }
            })
            .await?;
        }
        match answer {
            Some(Err(frame)) => Err(io::Error::other(format!("{text} answered {frame}"))),
            _ => Ok(()),
        }
    }

    /// Reads until the connection ends, calling `on_diff` for every `game.diff`.
    pub async fn run(mut self, mut on_diff: impl FnMut(Received) + Send) {
        loop {
            let read = self
                .read(&mut |text, on_wire| {
                    if is_type(text, "game.diff") {
                        if let Some(seq) = seq_of(text) {
                            on_diff(Received {
                                seq,
                                bytes: text.len(),
                                on_wire,
                            });
                        }
                    }
                })
                .await;
            if read.is_err() {
                return;
            }
        }
    }

    /// One read: every text frame it completes goes to `on_text` with the read's kernel
    /// timestamp; pings are answered. `Err` once the connection ended.
    async fn read(
        &mut self,
        on_text: &mut (impl FnMut(&str, Option<Duration>) + Send),
    ) -> io::Result<()> {
        let fd = self.tcp.as_raw_fd();
        let (chunk, cmsg) = (&mut self.chunk, &mut self.cmsg);
        let (n, on_wire) = self
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
        let on_wire =
            on_wire.map(|ts| Duration::new(ts.tv_sec().max(0) as u64, ts.tv_nsec().max(0) as u32));
        self.partial.extend_from_slice(&self.chunk[..n]);
        let mut at = 0;
        let mut pongs = Vec::new();
        while let Some((opcode, payload, len)) = parse_frame(&self.partial[at..]) {
            let payload = &self.partial[at + payload.start..at + payload.end];
            match opcode {
                TEXT => on_text(std::str::from_utf8(payload).unwrap_or_default(), on_wire),
                PING => pongs.push(client_frame(0xA, payload)),
                CLOSE => return Err(io::ErrorKind::ConnectionAborted.into()),
                _ => {}
            }
            at += len;
        }
        self.partial.drain(..at);
        for pong in pongs {
            self.tcp.write_all(&pong).await?;
        }
        Ok(())
    }
}

/// Wall-clock time as a duration since the Unix epoch (the clock of the kernel's stamps).
pub fn wall_now() -> Duration {
    UNIX_EPOCH.elapsed().unwrap_or_default()
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
        let long = client_frame(0xA, &[7; 300]);
        assert_eq!(&long[..8], &[0x8A, 0x80 | 126, 1, 44, 0, 0, 0, 0]);
        assert_eq!(long.len(), 8 + 300);
    }
}

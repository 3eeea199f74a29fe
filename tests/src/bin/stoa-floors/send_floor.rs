//! `send-floor`: what the kernel alone charges for one small send on a loopback TCP
//! socket, with no server in the way.
//!
//! Why: fan-out is one `send` per recipient, and on loopback each send also does the
//! receiver's TCP work. This measures that floor on the machine at hand (pinned as
//! `stoa-load` pins: the sender on the server's CPU, the receivers in a child process on
//! the generator's), so a fan-out figure can be read against it rather than against a
//! number from another machine.

use std::io::{ErrorKind, Write};
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::task::JoinSet;

use crate::uring::Ring;
use stoa_tests::measure::{self, Report};

/// How the sender hands its sends to the kernel.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Via {
    /// One `write` per socket, as the server's broadcast does.
    Write,
    /// A round's sends submitted together through one io_uring.
    Uring,
    /// As `uring`, with the sockets registered with the ring (no file-table lookup).
    UringFixed,
}

/// The sender: `conns` sockets, `rounds` rounds of one `bytes`-long write to each.
pub fn send_floor(
    conns: usize,
    rounds: usize,
    bytes: usize,
    via: Via,
    cpu_send: Option<usize>,
    cpu_sink: Option<usize>,
) -> Report {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let mut sink = measure::this_program_on(cpu_sink);
    let mut sink = sink
        .args(["send-floor-sink", "--addr", &addr.to_string()])
        .args(["--conns", &conns.to_string()])
        .stdin(Stdio::null())
        .spawn()
        .expect("start the receiving process");
    let mut sockets: Vec<TcpStream> = (0..conns)
        .map(|_| {
            let (s, _) = listener.accept().expect("accept");
            s.set_nodelay(true).expect("TCP_NODELAY");
            s.set_nonblocking(true).expect("non-blocking");
            s
        })
        .collect();
    if let Some(cpu) = cpu_send {
        measure::pin(std::process::id(), cpu);
    }
    // Leaked once per run: the ring's sends read it after `push` returns.
    let frame: &'static [u8] = vec![b'x'; bytes].leak();
    let mut ring = match via {
        Via::Write => None,
        Via::Uring | Via::UringFixed => Some(
            Ring::new(&sockets, via == Via::UringFixed)
                .expect("set up an io_uring (is it disabled?)"),
        ),
    };
    std::thread::sleep(Duration::from_millis(500));
    let pid = std::process::id();
    let mut cpu = 0.0;
    let mut full = 0u64;
    let started = Instant::now();
    for _ in 0..rounds {
        let before = measure::cpu_seconds(pid);
        match ring.as_mut() {
            Some(ring) => full += ring.round(frame).expect("io_uring round"),
            None => {
                for s in sockets.iter_mut() {
                    match s.write(frame) {
                        Ok(n) if n == frame.len() => {}
                        Ok(_) => full += 1,
                        Err(e) if e.kind() == ErrorKind::WouldBlock => full += 1,
                        Err(e) => panic!("send failed: {e}"),
                    }
                }
            }
        }
        cpu += measure::cpu_seconds(pid) - before;
        // As the fan-out scenario: a round every 100 ms, the receivers drained meanwhile.
        std::thread::sleep(Duration::from_millis(100));
    }
    let elapsed = started.elapsed();
    // Registered sockets stay open while the ring holds them: the ring goes first, so the
    // receivers see the end.
    drop(ring);
    drop(sockets);
    let _ = sink.wait();
    let sends = (conns * rounds) as f64;
    let mut r = Report::default();
    r.add("sockets", conns);
    r.add("rounds (one send to every socket)", rounds);
    r.add("bytes per send", bytes);
    r.add("sends handed to the kernel by", format!("{via:?}"));
    r.add("sends short or refused (buffer full)", full);
    r.add(
        "sender CPU per round, ms",
        format!("{:.2}", 1000.0 * cpu / rounds as f64),
    );
    r.add(
        "sender CPU per send, µs",
        format!("{:.2}", 1e6 * cpu / sends),
    );
    r.add("wall time, s", format!("{:.1}", elapsed.as_secs_f64()));
    r
}

/// The receiving side (a child process): connects `conns` sockets and reads them until
/// the sender closes them.
pub async fn sink(addr: &str, conns: usize) {
    let mut set = JoinSet::new();
    for _ in 0..conns {
        let mut s = tokio::net::TcpStream::connect(addr)
            .await
            .expect("connect to the sender");
        set.spawn(async move {
            let mut buf = vec![0u8; 16 * 1024];
            while matches!(s.read(&mut buf).await, Ok(n) if n > 0) {}
        });
    }
    while set.join_next().await.is_some() {}
}

//! `move-floor`: what the kernel alone charges for a move's sockets work, with no server in
//! the way: one read of the mover's frame, one write back to the mover (its `ok` and the
//! diff) and one write of the diff to the opponent, on loopback TCP.
//!
//! Why: `stoa-load throughput`'s "server CPU per move" is the server's own work plus those three
//! system calls, and on loopback each write also does the receiving socket's TCP work.
//! `send-floor` measures one send in a fan-out; this measures the move path the same way
//! (the same games, the same frame sizes, one move outstanding per game, the "server" on the
//! server's CPU and the players in a child process on the generator's), so a move's CPU
//! figure can be read against what any server on this machine must pay for it.
//!
//! The "server" is the least a server can be: one thread, one `epoll` (through mio), a read
//! per readable socket and the two writes per move, the frames written as fixed bytes.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpListener;
use std::process::Stdio;
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::task::JoinSet;

use stoa_tests::measure::{self, Report};

/// The sizes of a move's frames, as the server's on the wire (websocket headers included).
#[derive(Clone, Copy, Debug)]
pub struct Sizes {
    /// The mover's `game.move` frame (masked, as a client's).
    pub mv: usize,
    /// The mover's `ok`, written with the diff in one write.
    pub ok: usize,
    /// The diff each player gets.
    pub diff: usize,
}

/// The "server": accepts `games` pairs of players from a child process, answers every
/// complete move frame with the two writes, and reports its CPU per move.
pub fn move_floor(
    games: usize,
    moves: u64,
    sizes: Sizes,
    cpu_server: Option<usize>,
    cpu_load: Option<usize>,
) -> Report {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
    let addr = listener.local_addr().expect("its address");
    let mut players = measure::this_program_on(cpu_load);
    let per_game = moves.div_ceil(games as u64);
    let mut players = players
        .args(["move-floor-players", "--addr", &addr.to_string()])
        .args(["--games", &games.to_string()])
        .args(["--moves-per-game", &per_game.to_string()])
        .args(["--mv", &sizes.mv.to_string()])
        .args(["--ok", &sizes.ok.to_string()])
        .args(["--diff", &sizes.diff.to_string()])
        .stdin(Stdio::null())
        .spawn()
        .expect("start the players' process");
    // The players connect one game at a time, so sockets 2g and 2g+1 are one game's.
    let mut sockets: Vec<TcpStream> = Vec::with_capacity(2 * games);
    // Polled, not blocking: a players' process that fails to start must end the run with
    // an error, not leave it waiting for connections that never come.
    listener
        .set_nonblocking(true)
        .expect("non-blocking listener");
    let deadline = Instant::now() + Duration::from_secs(60);
    while sockets.len() < 2 * games {
        match listener.accept() {
            Ok((s, _)) => {
                s.set_nodelay(true).expect("TCP_NODELAY");
                s.set_nonblocking(true).expect("non-blocking");
                sockets.push(TcpStream::from_std(s));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                if let Ok(Some(status)) = players.try_wait() {
                    panic!("the players' process ended before connecting: {status}");
                }
                assert!(
                    Instant::now() < deadline,
                    "{} of {} players connected in 60 s",
                    sockets.len(),
                    2 * games
                );
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
    if let Some(cpu) = cpu_server {
        measure::pin(std::process::id(), cpu);
    }
    let mut poll = Poll::new().expect("an epoll");
    for (i, s) in sockets.iter_mut().enumerate() {
        poll.registry()
            .register(s, Token(i), Interest::READABLE)
            .expect("register a socket");
    }
    let to_mover = vec![b'o'; sizes.ok + sizes.diff];
    let to_opponent = vec![b'd'; sizes.diff];
    // Bytes of a move frame each socket has received and not yet answered.
    let mut pending = vec![0usize; sockets.len()];
    let mut buf = vec![0u8; 64 * 1024];
    let mut events = Events::with_capacity(1024);
    let total = per_game * games as u64;
    let (mut answered, mut short) = (0u64, 0u64);
    let mut open = sockets.len();
    let pid = std::process::id();
    let mut started = None;
    while open > 0 {
        poll.poll(&mut events, Some(Duration::from_secs(30)))
            .expect("epoll_wait");
        if events.is_empty() {
            panic!("the players stopped sending for 30 s");
        }
        for event in events.iter() {
            let i = event.token().0;
            // Edge-triggered: read until a short read says the queue is empty.
            loop {
                let n = match sockets[i].read(&mut buf) {
                    Ok(0) => {
                        open -= 1;
                        let _ = poll.registry().deregister(&mut sockets[i]);
                        break;
                    }
                    Ok(n) => n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(e) => panic!("read: {e}"),
                };
                pending[i] += n;
                while pending[i] >= sizes.mv {
                    pending[i] -= sizes.mv;
                    // The clock starts at the first move, after every connection's set-up.
                    started.get_or_insert_with(|| (Instant::now(), measure::cpu_split(pid)));
                    for (to, bytes) in [(i, &to_mover), (i ^ 1, &to_opponent)] {
                        match sockets[to].write(bytes) {
                            Ok(n) if n == bytes.len() => {}
                            Ok(_) | Err(_) => short += 1,
                        }
                    }
                    answered += 1;
                }
                if n < buf.len() {
                    break;
                }
            }
        }
        if answered == total {
            break;
        }
    }
    let (wall, (user0, sys0)) = started.unwrap_or((Instant::now(), (0.0, 0.0)));
    let (user1, sys1) = measure::cpu_split(pid);
    let elapsed = wall.elapsed().as_secs_f64();
    drop(sockets);
    let _ = players.wait();
    let n = answered.max(1) as f64;
    let mut r = Report::default();
    r.add("concurrent games", games);
    r.add("moves", answered);
    r.add(
        "moves/s",
        format!("{:.0}", answered as f64 / elapsed.max(1e-9)),
    );
    r.add(
        "bytes written per move (mover, opponent)",
        format!("{}, {}", to_mover.len(), to_opponent.len()),
    );
    r.add(
        "\"server\" CPU per move, µs",
        format!("{:.1}", 1e6 * (user1 - user0 + sys1 - sys0) / n),
    );
    r.add(
        "of which in user space, µs",
        format!("{:.1}", 1e6 * (user1 - user0) / n),
    );
    r.add("writes short or refused (buffer full)", short);
    r
}

/// The players (a child process): `games` games, each with one move outstanding at a time,
/// the two players taking turns as in `throughput`.
pub async fn players(addr: &str, games: usize, moves_per_game: u64, sizes: Sizes) {
    let mut tables = Vec::with_capacity(games);
    for _ in 0..games {
        let a = tokio::net::TcpStream::connect(addr).await;
        let b = tokio::net::TcpStream::connect(addr).await;
        let (Ok(a), Ok(b)) = (a, b) else {
            eprintln!("move-floor: could not connect to the \"server\"");
            std::process::exit(1);
        };
        let _ = (a.set_nodelay(true), b.set_nodelay(true));
        tables.push([a, b]);
    }
    let mut set = JoinSet::new();
    for mut seats in tables {
        set.spawn(async move {
            let frame = vec![b'm'; sizes.mv];
            let mut to_mover = vec![0u8; sizes.ok + sizes.diff];
            let mut to_opponent = vec![0u8; sizes.diff];
            for ply in 0..moves_per_game {
                let (a, b) = seats.split_at_mut(1);
                let (mover, other) = if ply % 2 == 0 {
                    (&mut a[0], &mut b[0])
                } else {
                    (&mut b[0], &mut a[0])
                };
                let done = async {
                    mover.write_all(&frame).await?;
                    other.read_exact(&mut to_opponent).await?;
                    mover.read_exact(&mut to_mover).await
                };
                if done.await.is_err() {
                    return;
                }
            }
        });
    }
    while set.join_next().await.is_some() {}
}

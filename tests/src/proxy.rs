//! A plain TCP forwarder between a client and the server whose open connections a test can
//! cut at once: a network drop, as the client and the browser see it.
//!
//! Why threads and not the tokio [`crate::fault_proxy`]: the client tests drive child
//! processes from plain `#[test]` functions with no runtime, and a cut here is a one-off
//! event, not a mode.

use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// Forwards TCP connections to `upstream`; [`Proxy::cut`] drops every open one.
pub struct Proxy {
    /// Where clients connect.
    pub addr: SocketAddr,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Proxy {
    /// Starts forwarding.
    pub fn start(upstream: SocketAddr) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind proxy");
        let addr = listener.local_addr().expect("proxy address");
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let registry = open.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(upstream) else {
                    continue;
                };
                for s in [&client, &server] {
                    registry.lock().unwrap().push(s.try_clone().expect("clone"));
                }
                for (mut from, mut to) in [
                    (client.try_clone().unwrap(), server.try_clone().unwrap()),
                    (server, client),
                ] {
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 16 * 1024];
                        loop {
                            match std::io::Read::read(&mut from, &mut buf) {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    if std::io::Write::write_all(&mut to, &buf[..n]).is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = to.shutdown(Shutdown::Both);
                        let _ = from.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Proxy { addr, open }
    }

    /// `ws://ADDR/ws`: the server's websocket, through this proxy.
    pub fn ws_url(&self) -> String {
        format!("ws://{}/ws", self.addr)
    }

    /// Drops every open connection (new ones are still forwarded).
    pub fn cut(&self) {
        for s in self.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

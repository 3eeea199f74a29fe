//! `wss://`: the reference client behind a TLS-terminating proxy (as the deploy files run the
//! server), with the proxy's self-signed certificate given to the client with `--ca-file`;
//! without it the client refuses the certificate.
#![forbid(unsafe_code)]

use std::net::SocketAddr;
use std::sync::Arc;

use stoa_tests::clients::{host_untimed_unane, Clients, CLIENT_LOOSE};
use stoa_tests::temp_dir::TempDir;
use stoa_tests::Server;
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A TLS proxy on 127.0.0.1 for `localhost` with a fresh self-signed certificate, in front
/// of a plain backend; runs on its own thread until the test ends.
struct TlsProxy {
    addr: SocketAddr,
    /// The certificate (PEM) a client must trust.
    cert_pem: std::path::PathBuf,
}

impl TlsProxy {
    fn start(backend: SocketAddr, dir: &std::path::Path) -> TlsProxy {
        let certified =
            rcgen::generate_simple_self_signed(vec!["localhost".to_string()]).expect("a cert");
        let cert_pem = dir.join("proxy.pem");
        std::fs::write(&cert_pem, certified.cert.pem()).expect("write the certificate");
        let cert = CertificateDer::from(certified.cert.der().to_vec());
        let key =
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(certified.key_pair.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("protocol versions")
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .expect("server config");
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("runtime");
            rt.block_on(async move {
                let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
                tx.send(listener.local_addr().expect("addr")).expect("send");
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        continue;
                    };
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        // A client that refuses the certificate fails the handshake here.
                        let Ok(mut tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let Ok(mut up) = TcpStream::connect(backend).await else {
                            return;
                        };
                        let _ = tokio::io::copy_bidirectional(&mut tls, &mut up).await;
                    });
                }
            });
        });
        let addr = rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .expect("proxy up");
        TlsProxy { addr, cert_pem }
    }

    fn url(&self) -> String {
        format!("wss://localhost:{}/ws", self.addr.port())
    }
}

#[test]
fn host_and_join_over_wss_through_a_tls_proxy() {
    let server = Server::start_with(CLIENT_LOOSE);
    let dir = TempDir::new("tls");
    let proxy = TlsProxy::start(server.addr, &dir.0);
    let ca = proxy.cert_pem.to_string_lossy().into_owned();
    let url = proxy.url();
    let mut clients = Clients::with_url(&url);

    // Without the certificate the client refuses the server, and says why.
    let stranger = clients.spawn("stranger", &["lobby"]);
    clients.wait(stranger, |l| {
        l.contains(&url) && (l.contains("certificate") || l.contains("UnknownIssuer"))
    });

    let host_args = [
        &["--ca-file", ca.as_str()][..],
        &host_untimed_unane("width=4,height=3"),
    ];
    let host = clients.spawn("host", &host_args.concat());
    let code = clients.room_code(host);
    let guest = clients.spawn("guest", &["--ca-file", &ca, "join", &code]);
    clients.wait(guest, |l| l.starts_with("game started "));
    clients.wait(host, |l| l.starts_with("game started "));
    clients.wait(host, |l| l == "your turn");
    clients.send(host, "resign");
    for c in [host, guest] {
        clients.wait(c, |l| l == "game over: white wins by resign");
    }
}

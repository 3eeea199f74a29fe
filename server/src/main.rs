//! `stoa-server`: the Stoa game server.
#![forbid(unsafe_code)]

use std::net::SocketAddr;

use axum::{routing::get, Json, Router};
use clap::Parser;
use serde_json::json;

/// Command-line configuration; every flag also reads an environment variable.
#[derive(Debug, Parser)]
#[command(name = "stoa-server", version, about = "Stoa game server")]
struct Config {
    /// Address to listen on.
    #[arg(long, env = "STOA_LISTEN", default_value = "127.0.0.1:7878")]
    listen: SocketAddr,
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        .init();
    let config = Config::parse();
    let app = Router::new().route("/health", get(|| async { Json(json!({"status":"ok"})) }));
    let listener = tokio::net::TcpListener::bind(config.listen).await?;
    tracing::info!(addr = %listener.local_addr()?, "listening");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
            tracing::info!("shutting down");
        })
        .await
}

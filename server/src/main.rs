//! `stoa-server`: the Stoa game server.
// Unsafe code only in `allocator` (a global allocator cannot be written without it); the
// library crate forbids it outright.
#![deny(unsafe_code)]

use std::io::IsTerminal;

use clap::Parser;
use stoa_server::config::Config;

#[cfg(not(feature = "system-alloc"))]
mod allocator;

/// See `server/Cargo.toml` for why not the system allocator, and `allocator` for why not
/// the `mimalloc` crate's wrapper. The `system-alloc` feature keeps the system's, for heap
/// profilers that hook `malloc` (heaptrack, valgrind's massif): mimalloc's allocations are
/// invisible to them.
#[cfg(not(feature = "system-alloc"))]
#[global_allocator]
static ALLOCATOR: allocator::Mimalloc = allocator::Mimalloc;

fn main() -> std::process::ExitCode {
    #[cfg(not(feature = "system-alloc"))]
    allocator::configure();
    let config = Config::parse();
    // One thread (one core: a container's quota, `taskset`) runs every task and polls the
    // sockets itself. The multi-threaded scheduler with one worker pays for work stealing
    // it cannot use: in `stoa-load throughput` its p99 move → opponent is 6–10 ms against
    // 4–4.5 ms on one thread (docs/performance.md).
    let threads = config.threads.map_or_else(
        || std::thread::available_parallelism().map_or(1, |n| n.get()),
        usize::from,
    );
    let mut runtime = if threads == 1 {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(threads);
        b
    };
    match runtime.enable_all().build() {
        Ok(runtime) => runtime.block_on(serve(config)),
        Err(e) => {
            eprintln!("stoa-server: cannot start the async runtime: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn serve(config: Config) -> std::process::ExitCode {
    let filter =
        tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into());
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    if config.log_format == "json" {
        logs.json().init();
    } else {
        // Colour codes only for a person at a terminal, never into files or journald.
        logs.with_ansi(std::io::stderr().is_terminal()).init();
    }
    // Sockets are files: hold as many as the hard limit allows.
    let files = stoa_server::net::listener::raise_file_limit();
    tracing::info!(files, "open-file limit");
    match stoa_server::node::run(config, shutdown_signal()).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // One line an operator can act on: what failed, where, what to do.
            eprintln!("stoa-server: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

//! The shipped deployment files, checked against the real binary where they can be without a
//! container engine: the Dockerfile's health check is run as Docker runs it (exec form, in
//! this machine's shell environment, which is Debian's like the image's) against a healthy and
//! an unhealthy server; the compose file's start order and Redis durability are read from it.
//!
//! Why: a health check that always fails (the old one used bash's `/dev/tcp` under dash) keeps
//! every container "unhealthy" and a health-gated proxy never starts; nothing but running the
//! command shows it.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use stoa_tests::redis::{wait_health, RedisServer};
use stoa_tests::Server;

fn deploy_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// The `HEALTHCHECK ... CMD [...]` instruction of the Dockerfile, as its exec-form argv.
fn healthcheck_argv() -> Vec<String> {
    let dockerfile = deploy_file("deploy/Dockerfile");
    // Join continuation lines, then find the instruction.
    let joined = dockerfile.replace("\\\n", " ");
    let line = joined
        .lines()
        .find(|l| l.trim_start().starts_with("HEALTHCHECK"))
        .expect("the Dockerfile has a HEALTHCHECK");
    let cmd = line
        .split_once(" CMD ")
        .map(|(_, c)| c.trim())
        .expect("HEALTHCHECK ... CMD");
    serde_json::from_str(cmd).expect("the health check is in exec form (a JSON array)")
}

/// Runs the health check against `server` (the image's port 7878 replaced by the test's).
fn run_healthcheck(server: &Server) -> bool {
    let argv: Vec<String> = healthcheck_argv()
        .into_iter()
        .map(|a| a.replace("7878", &server.addr.port().to_string()))
        .collect();
    assert!(
        argv.iter()
            .any(|a| a.contains(&server.addr.port().to_string())),
        "the health check must address the server's port: {argv:?}"
    );
    Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap_or_else(|e| panic!("run {argv:?}: {e}"))
        .success()
}

#[test]
fn dockerfile_healthcheck_passes_on_a_healthy_server_and_fails_while_redis_is_down() {
    let mut redis = RedisServer::start();
    let server = redis.start_server("deploy");
    wait_health(&server, 200, Duration::from_secs(5));
    assert!(
        run_healthcheck(&server),
        "healthy server reported unhealthy"
    );

    redis.kill9();
    wait_health(&server, 503, Duration::from_secs(5));
    assert!(
        !run_healthcheck(&server),
        "a degraded server (503) must fail the health check"
    );

    redis.restart();
    wait_health(&server, 200, Duration::from_secs(20));
    assert!(run_healthcheck(&server));
}

#[test]
fn dockerfile_healthcheck_fails_when_nothing_listens() {
    let server = Server::start();
    assert!(run_healthcheck(&server));
    let port = server.addr.port();
    drop(server);
    let argv: Vec<String> = healthcheck_argv()
        .into_iter()
        .map(|a| a.replace("7878", &port.to_string()))
        .collect();
    let ok = Command::new(&argv[0])
        .args(&argv[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run the health check")
        .success();
    assert!(!ok, "a stopped server must fail the health check");
}

#[test]
fn docker_build_context_excludes_build_output_and_history() {
    let ignore = deploy_file(".dockerignore");
    let entries: Vec<&str> = ignore
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    for needed in ["target/", ".git/"] {
        assert!(
            entries.contains(&needed),
            ".dockerignore lacks {needed}: {entries:?}"
        );
    }
}

#[test]
fn compose_starts_the_server_after_a_healthy_redis_and_syncs_every_write() {
    let compose = deploy_file("deploy/compose.yaml");
    let doc: serde_yaml::Value = serde_yaml::from_str(&compose).expect("compose.yaml is YAML");
    let services = &doc["services"];

    let redis_cmd: Vec<&str> = services["redis"]["command"]
        .as_sequence()
        .expect("redis command as a list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    let fsync = redis_cmd
        .windows(2)
        .find(|w| w[0] == "--appendfsync")
        .map(|w| w[1]);
    assert_eq!(
        fsync,
        Some("always"),
        "acknowledged moves survive a crash only with appendfsync always"
    );
    assert!(redis_cmd.windows(2).any(|w| w == ["--appendonly", "yes"]));
    assert!(
        services["redis"]["healthcheck"]["test"].is_sequence(),
        "redis needs a health check for the server to wait on"
    );
    assert_eq!(
        services["stoa"]["depends_on"]["redis"]["condition"].as_str(),
        Some("service_healthy"),
        "the server must start once Redis answers"
    );
    assert_eq!(
        services["proxy"]["depends_on"]["stoa"]["condition"].as_str(),
        Some("service_healthy")
    );
}

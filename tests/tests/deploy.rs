//! The shipped deployment files, checked against the real binary and the real tools where
//! they can be without a container engine or a cluster:
//!
//! - the Dockerfile's health check is run as Docker runs it (exec form, in this machine's shell
//!   environment, which is Debian's like the image's) against a healthy and an unhealthy
//!   server, and the image runs as a numeric non-root user;
//! - `deploy/compose.yaml` goes through `docker compose config` (or Debian's `docker-compose`),
//!   and its topology (three cluster nodes, health-gated start order, Redis durability) is read;
//! - `deploy/Caddyfile` through `caddy validate`, `deploy/nginx.conf` through `nginx -t` with a
//!   throw-away certificate, the systemd units through `systemd-analyze verify` with the real
//!   binaries, the Kubernetes manifests through `kubernetes-validate --strict` (bundled
//!   schemas, offline), `deploy/prometheus.yml` and every dashboard query through `promtool`;
//! - the Sentinel variant (`deploy/compose.sentinel.yaml` over compose.yaml, and
//!   `deploy/k8s/sentinel/`) goes through the same tools, its topology is read (three
//!   Sentinels with quorum 2 on the name the nodes ask for, a durable primary and replica
//!   started by `deploy/redis-start.sh`, nodes with `--redis-min-replicas` >= 1), and its
//!   Redis part is run on loopback from the same scripts and configuration: the Sentinels
//!   must agree, fail over, and a restarted old primary must come back as a replica;
//! - the dashboard's series are those a running cluster node exports, and the example
//!   environment file and deploy/OPERATIONS.md list exactly the variables `--help` prints.
//!
//! Each tool check also feeds the tool a deliberately broken copy and expects it rejected, so a
//! check that cannot fail is itself caught. A test whose tool is missing says so and skips
//! (`.ci/run` installs them all; under CI a missing tool fails instead).
//!
//! Why: a health check that always fails (the old one used bash's `/dev/tcp` under dash) keeps
//! every container "unhealthy" and a health-gated proxy never starts; a misspelt directive in a
//! unit or a manifest is silently ignored by the tools that later run it. Nothing but running
//! the files through the real programs shows either.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;
use serde_yaml::Value as Yaml;
use stoa_tests::redis::{wait_health, RedisServer};
use stoa_tests::{Server, Table};

/// The workspace root.
fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

fn deploy_file(name: &str) -> String {
    let path = root().join(name);
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
    // BuildKit reads deploy/Dockerfile.dockerignore (next to the Dockerfile) for
    // `docker build -f deploy/Dockerfile .`; the legacy builder reads the root's.
    for file in ["deploy/Dockerfile.dockerignore", ".dockerignore"] {
        let ignore = deploy_file(file);
        let entries: Vec<&str> = ignore
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        for needed in ["target/", ".git/"] {
            assert!(
                entries.contains(&needed),
                "{file} lacks {needed}: {entries:?}"
            );
        }
        // Nothing the build compiles may be left out of the context.
        for kept in [
            "Cargo.toml",
            "Cargo.lock",
            "protocol/",
            "server/",
            "client-cli/",
            "tests/",
        ] {
            assert!(
                !entries
                    .iter()
                    .any(|e| *e == kept || *e == kept.trim_end_matches('/') || *e == "*"),
                "{file} leaves {kept} out of the build context"
            );
        }
    }
}

#[test]
fn the_image_runs_as_a_numeric_non_root_user() {
    let dockerfile = deploy_file("deploy/Dockerfile");
    let last_stage = dockerfile
        .rsplit_once("\nFROM ")
        .map(|(_, s)| s)
        .expect("a multi-stage Dockerfile");
    let user = last_stage
        .lines()
        .filter_map(|l| l.trim().strip_prefix("USER "))
        .next_back()
        .expect("the final stage sets USER");
    // Kubernetes' runAsNonRoot can only prove a numeric user non-root.
    let uid: u32 = user
        .split(':')
        .next()
        .and_then(|u| u.trim().parse().ok())
        .unwrap_or_else(|| panic!("USER {user} is not numeric"));
    assert_ne!(uid, 0, "the image must not run as root");
    // The Kubernetes manifests run the same user.
    for doc in k8s_docs() {
        if doc["kind"] == "Deployment" && doc["metadata"]["name"] == "stoa-server" {
            let pod = &doc["spec"]["template"]["spec"]["securityContext"];
            assert_eq!(pod["runAsUser"].as_u64(), Some(u64::from(uid)));
            assert_eq!(pod["runAsNonRoot"].as_bool(), Some(true));
        }
    }
}

/// compose.yaml with its YAML merge keys (`<<: *stoa-node`) applied, as Compose reads it.
fn compose() -> Yaml {
    let mut doc: Yaml =
        serde_yaml::from_str(&deploy_file("deploy/compose.yaml")).expect("compose.yaml is YAML");
    doc.apply_merge().expect("merge keys");
    doc
}

/// The compose services that run stoa-server in cluster mode, by name.
fn compose_nodes(services: &Yaml) -> BTreeMap<String, Yaml> {
    services
        .as_mapping()
        .expect("services")
        .iter()
        .filter(|(_, s)| s["environment"]["STOA_CLUSTER"].as_str() == Some("true"))
        .map(|(n, s)| (n.as_str().expect("name").to_string(), s.clone()))
        .collect()
}

#[test]
fn compose_runs_three_nodes_after_a_healthy_redis_that_syncs_every_write() {
    let doc = compose();
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

    let nodes = compose_nodes(services);
    assert_eq!(
        nodes.keys().map(String::as_str).collect::<Vec<_>>(),
        ["stoa1", "stoa2", "stoa3"],
        "three cluster nodes"
    );
    let mut ids = BTreeSet::new();
    for (name, node) in &nodes {
        let env = &node["environment"];
        assert_eq!(
            env["REDIS_URL"].as_str(),
            Some("redis://redis:6379/"),
            "{name}"
        );
        assert_eq!(env["STOA_TRUST_PROXY"].as_str(), Some("true"), "{name}");
        assert_eq!(env["STOA_LISTEN"].as_str(), Some("0.0.0.0:7878"), "{name}");
        assert!(
            ids.insert(env["STOA_NODE_ID"].as_str().expect("a node id").to_string()),
            "{name}: node ids must be distinct"
        );
        assert_eq!(
            node["depends_on"]["redis"]["condition"].as_str(),
            Some("service_healthy"),
            "{name} must start once Redis answers"
        );
        // The drain (STOA_SHUTDOWN_GRACE_MS + 1 s) must fit in the stop grace period.
        let grace = node["stop_grace_period"]
            .as_str()
            .expect("stop_grace_period");
        let secs: u64 = grace.trim_end_matches('s').parse().expect("seconds");
        assert!(secs >= 10, "{name}: stop_grace_period {grace} is too short");
    }
    for node in nodes.keys() {
        assert_eq!(
            services["proxy"]["depends_on"][node.as_str()]["condition"].as_str(),
            Some("service_healthy"),
            "the proxy waits for {node}"
        );
    }
    let bot = &services["bot"];
    let bot_cmd: Vec<&str> = bot["command"]
        .as_sequence()
        .expect("bot command")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(
        bot_cmd,
        [
            "--plain",
            "--server",
            "ws://stoa1:7878/ws",
            "bot",
            "--serve",
            "--levels",
            "1,2,3,4,5"
        ]
    );
    assert_eq!(
        bot["depends_on"]["stoa1"]["condition"].as_str(),
        Some("service_healthy")
    );
    // An analysis worker on another node than the bot: the review queue is in Redis.
    let analysis = &services["analysis"];
    let analysis_cmd: Vec<&str> = analysis["command"]
        .as_sequence()
        .expect("analysis command")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert_eq!(
        analysis_cmd,
        [
            "--plain",
            "--server",
            "ws://stoa2:7878/ws",
            "analyse",
            "--serve"
        ]
    );
    assert_eq!(
        analysis["depends_on"]["stoa2"]["condition"].as_str(),
        Some("service_healthy")
    );
    // Only a worker with a key serves: the nodes read the keys' file from a secret, and the
    // worker's own key is required.
    assert!(
        analysis["environment"]["STOA_ANALYSIS_KEY"]
            .as_str()
            .is_some_and(|k| k.starts_with("${STOA_ANALYSIS_KEY:?")),
        "the worker's key must be required: {:?}",
        analysis["environment"]
    );
    assert_eq!(
        doc["secrets"]["analysis-keys"]["file"].as_str(),
        Some("./analysis-keys")
    );
    for (name, node) in &nodes {
        assert_eq!(
            node["environment"]["STOA_ANALYSIS_KEYS"].as_str(),
            Some("/run/secrets/analysis-keys"),
            "{name}"
        );
        assert!(
            node["secrets"]
                .as_sequence()
                .is_some_and(|s| s.iter().any(|v| v.as_str() == Some("analysis-keys"))),
            "{name} mounts the keys"
        );
    }
    for monitoring in ["prometheus", "grafana"] {
        assert_eq!(
            services[monitoring]["profiles"][0].as_str(),
            Some("monitoring"),
            "{monitoring} runs only with --profile monitoring"
        );
    }
}

/// The proxy and Prometheus address exactly the compose file's cluster nodes.
#[test]
fn caddy_and_prometheus_reach_every_compose_node() {
    let doc = compose();
    let want: BTreeSet<String> = compose_nodes(&doc["services"])
        .keys()
        .map(|n| format!("{n}:7878"))
        .collect();
    let caddy = deploy_file("deploy/Caddyfile");
    let upstreams: BTreeSet<String> = caddy
        .lines()
        .find_map(|l| l.trim().strip_prefix("reverse_proxy "))
        .expect("a reverse_proxy")
        .trim_end_matches('{')
        .split_whitespace()
        .map(str::to_string)
        .collect();
    assert_eq!(upstreams, want, "Caddy's upstreams");
    assert!(caddy.contains("health_uri /health"), "Caddy checks /health");

    let prom: Yaml =
        serde_yaml::from_str(&deploy_file("deploy/prometheus.yml")).expect("prometheus.yml");
    let stoa_job = prom["scrape_configs"]
        .as_sequence()
        .expect("scrape_configs")
        .iter()
        .find(|j| j["job_name"] == "stoa")
        .expect("a stoa job");
    let targets: BTreeSet<String> = stoa_job["static_configs"][0]["targets"]
        .as_sequence()
        .expect("targets")
        .iter()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect();
    assert_eq!(targets, want, "Prometheus' targets");
}

// ---- the real tools ---------------------------------------------------------------------

/// Whether `name` is an executable on PATH.
fn installed(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// Whether the tool is there; says why the test skips when it is not. Under CI (`CI` set),
/// where `.ci/run` installed every tool, a missing one fails the test instead.
fn require(name: &str, package: &str) -> bool {
    if installed(name) {
        return true;
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "`{name}` is not installed ({package}); .ci/run installs it"
    );
    eprintln!("skipping: `{name}` is not installed ({package}; .ci/run installs it)");
    false
}

/// A scratch directory, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("stoa-deploy-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create a scratch directory");
        Scratch(dir)
    }

    /// Writes `text` to `name` inside; returns its path.
    fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create a directory");
        }
        std::fs::write(&path, text).expect("write a scratch file");
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn run(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("run {cmd:?}: {e}"))
}

fn output_text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// `text` with `from` replaced once; `from` must be there (so a broken copy really differs).
fn break_copy(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "cannot break the copy: no {from:?}");
    text.replacen(from, to, 1)
}

#[test]
fn caddyfile_passes_caddy_validate() {
    if !require("caddy", "Debian package caddy") {
        return;
    }
    let dir = Scratch::new("caddy");
    let validate = |path: &Path| {
        // `tls internal` creates a local CA: keep it in the scratch directory.
        run(Command::new("caddy")
            .args(["validate", "--adapter", "caddyfile", "--config"])
            .arg(path)
            .current_dir(&dir.0)
            .env("HOME", &dir.0)
            .env("XDG_DATA_HOME", dir.0.join("data"))
            .env("XDG_CONFIG_HOME", dir.0.join("config")))
    };
    let caddyfile = deploy_file("deploy/Caddyfile");
    assert!(caddyfile.contains("tls {$TLS_ISSUER:internal}"));
    let out = validate(&root().join("deploy/Caddyfile"));
    assert!(
        out.status.success(),
        "caddy validate: {}",
        output_text(&out)
    );

    let broken = dir.write(
        "Caddyfile.broken",
        &break_copy(&caddyfile, "health_uri /health", "health_urii /health"),
    );
    let out = validate(&broken);
    assert!(
        !out.status.success(),
        "caddy accepted an unknown subdirective"
    );
    assert!(
        output_text(&out).contains("health_urii"),
        "{}",
        output_text(&out)
    );
}

#[test]
fn nginx_conf_passes_nginx_t_with_a_certificate() {
    if !require("nginx", "Debian package nginx") || !require("openssl", "Debian package openssl") {
        return;
    }
    let dir = Scratch::new("nginx");
    let d = dir.0.display().to_string();
    let out = run(Command::new("openssl")
        .args([
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
        ])
        .args(["-subj", "/CN=stoa.example.com", "-keyout"])
        .arg(dir.0.join("privkey.pem"))
        .arg("-out")
        .arg(dir.0.join("fullchain.pem")));
    assert!(out.status.success(), "openssl: {}", output_text(&out));

    let conf = deploy_file("deploy/nginx.conf");
    for needed in [
        "server 127.0.0.1:7878;",
        "proxy_set_header Upgrade $http_upgrade;",
        "proxy_set_header Connection $connection_upgrade;",
        "proxy_set_header X-Forwarded-For $remote_addr;",
        "listen 443 ssl",
    ] {
        assert!(conf.contains(needed), "nginx.conf lacks `{needed}`");
    }
    let site = break_copy(
        &conf,
        "/etc/ssl/stoa/fullchain.pem",
        &format!("{d}/fullchain.pem"),
    );
    let site = break_copy(
        &site,
        "/etc/ssl/stoa/privkey.pem",
        &format!("{d}/privkey.pem"),
    );
    // nginx.conf holds http-level blocks (it goes to conf.d/): wrap it in a minimal main
    // configuration whose files all live in the scratch directory.
    let main = |site: &str| {
        format!(
            "pid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n\
             access_log off;\nclient_body_temp_path {d}/body;\nproxy_temp_path {d}/proxy;\n\
             fastcgi_temp_path {d}/fastcgi;\nuwsgi_temp_path {d}/uwsgi;\nscgi_temp_path {d}/scgi;\n\
             include {site};\n}}\n"
        )
    };
    let test = |site_text: &str| {
        let site_path = dir.write("stoa.conf", site_text);
        let conf = dir.write("nginx.conf", &main(&site_path.display().to_string()));
        run(Command::new("nginx")
            .arg("-t")
            .arg("-p")
            .arg(&dir.0)
            .arg("-e")
            .arg(dir.0.join("error.log"))
            .arg("-c")
            .arg(conf))
    };
    let out = test(&site);
    assert!(out.status.success(), "nginx -t: {}", output_text(&out));
    let out = test(&break_copy(
        &site,
        "proxy_read_timeout 3600s",
        "proxy_read_timeout forever",
    ));
    assert!(!out.status.success(), "nginx accepted an invalid timeout");
    assert!(
        output_text(&out).contains("proxy_read_timeout"),
        "{}",
        output_text(&out)
    );
}

#[test]
fn systemd_units_pass_systemd_analyze_verify() {
    if !require("systemd-analyze", "Debian package systemd") {
        return;
    }
    stoa_tests::build_binaries();
    let dir = Scratch::new("systemd");
    // systemd-analyze prints what it ignores (unknown keys, bad values) and still exits 0:
    // any line about the unit counts as a failure.
    let verify = |unit: &str, text: &str| -> Result<(), String> {
        let path = dir.write(unit, text);
        let out = run(Command::new("systemd-analyze")
            .args(["verify", "--man=no"])
            .arg(&path));
        let text = output_text(&out);
        let about_unit: Vec<&str> = text.lines().filter(|l| l.contains(unit)).collect();
        if out.status.success() && about_unit.is_empty() {
            Ok(())
        } else {
            Err(text)
        }
    };
    for (unit, installed_path, binary) in [
        (
            "stoa-server.service",
            "/usr/local/bin/stoa-server",
            "stoa-server",
        ),
        ("stoa-bot.service", "/usr/local/bin/stoa ", "stoa"),
    ] {
        let text = deploy_file(&format!("deploy/{unit}"));
        for needed in [
            "DynamicUser=yes",
            "NoNewPrivileges=yes",
            "ProtectSystem=strict",
            "ProtectHome=yes",
            "PrivateTmp=yes",
            "PrivateDevices=yes",
            "ProtectKernelTunables=yes",
            "ProtectKernelModules=yes",
            "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX",
            "SystemCallFilter=@system-service",
            "CapabilityBoundingSet=\n",
            "MemoryDenyWriteExecute=yes",
            "LockPersonality=yes",
        ] {
            assert!(text.contains(needed), "{unit} lacks {needed:?}");
        }
        // ExecStart must name an existing executable: the binary just built.
        let real = stoa_tests::binary(binary).display().to_string();
        let installed_as = installed_path.trim_end();
        let here = break_copy(
            &text,
            &format!("ExecStart={installed_as}"),
            &format!("ExecStart={real}"),
        );
        verify(unit, &here).unwrap_or_else(|e| panic!("systemd-analyze verify {unit}:\n{e}"));
        assert!(
            verify(
                unit,
                &break_copy(&here, "ProtectHome=yes", "ProtectHomme=yes")
            )
            .is_err(),
            "a misspelt directive in {unit} went unnoticed"
        );
        assert!(
            verify(
                unit,
                &break_copy(&here, "ProtectSystem=strict", "ProtectSystem=very")
            )
            .is_err(),
            "an invalid value in {unit} went unnoticed"
        );
    }
    let server = deploy_file("deploy/stoa-server.service");
    assert!(server.contains("EnvironmentFile=-/etc/stoa/stoa-server.env"));
    assert!(server.contains("LimitNOFILE=200000"));
    // The server drains on SIGTERM (and SIGINT); see server/src/main.rs.
    assert!(server.contains("KillSignal=SIGTERM") || !server.contains("KillSignal="));
}

/// `docker compose` (the plugin) when the docker client has it, else Debian's `docker-compose`.
fn compose_command() -> Option<Command> {
    if installed("docker")
        && Command::new("docker")
            .args(["compose", "version"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    {
        let mut cmd = Command::new("docker");
        cmd.arg("compose");
        return Some(cmd);
    }
    require("docker-compose", "Debian package docker-compose")
        .then(|| Command::new("docker-compose"))
}

#[test]
fn compose_file_passes_docker_compose_config() {
    let Some(_) = compose_command() else {
        return;
    };
    let check = |path: &Path| {
        let mut cmd = compose_command().expect("compose");
        // Offline: `config` only parses, interpolates and validates the file (the workers'
        // key is required).
        cmd.env("STOA_ANALYSIS_KEY", "0123456789abcdef0123456789abcdef");
        run(cmd
            .arg("-f")
            .arg(path)
            .args(["--profile", "monitoring", "config", "-q"]))
    };
    let out = check(&root().join("deploy/compose.yaml"));
    assert!(
        out.status.success(),
        "compose config: {}",
        output_text(&out)
    );

    let dir = Scratch::new("compose");
    let broken = dir.write(
        "compose.yaml",
        &break_copy(
            &deploy_file("deploy/compose.yaml"),
            "healthcheck: { disable: true }",
            "healthchek: { disable: true }",
        ),
    );
    let out = check(&broken);
    assert!(
        !out.status.success(),
        "compose accepted an unknown service key"
    );
    assert!(
        output_text(&out).contains("healthchek"),
        "{}",
        output_text(&out)
    );
}

/// Every document of every manifest in deploy/k8s/.
fn k8s_docs() -> Vec<Yaml> {
    manifest_docs(&k8s_files())
}

/// Every document of every manifest in `files`.
fn manifest_docs(files: &[PathBuf]) -> Vec<Yaml> {
    let mut docs = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(path).expect("read a manifest");
        // Documents are separated by `---` lines.
        let mut doc = String::new();
        for line in text.lines().chain(std::iter::once("---")) {
            if line.trim_end() == "---" {
                let v: Yaml = serde_yaml::from_str(&doc)
                    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
                if !v.is_null() {
                    docs.push(v);
                }
                doc.clear();
            } else {
                doc.push_str(line);
                doc.push('\n');
            }
        }
    }
    docs
}

fn k8s_files() -> Vec<PathBuf> {
    manifests_in("deploy/k8s")
}

/// The Sentinel variant's manifests (deploy/k8s/sentinel/, applied instead of redis.yaml and
/// configmap.yaml).
fn k8s_sentinel_files() -> Vec<PathBuf> {
    manifests_in("deploy/k8s/sentinel")
}

/// The `*.yaml` files of `dir` (not its subdirectories, as `kubectl apply -f dir` reads it).
fn manifests_in(dir: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    files
}

#[test]
fn kubernetes_manifests_pass_strict_schema_validation() {
    if !require("kubernetes-validate", "PyPI package kubernetes-validate") {
        return;
    }
    let files = k8s_files();
    assert!(files.len() >= 4, "manifests: {files:?}");
    let sentinel = k8s_sentinel_files();
    assert_eq!(
        sentinel.len(),
        2,
        "the Sentinel variant's manifests: {sentinel:?}"
    );
    let out = run(Command::new("kubernetes-validate")
        .args(["--strict", "--quiet"])
        .args(&files)
        .args(&sentinel));
    assert!(
        out.status.success(),
        "kubernetes-validate: {}",
        output_text(&out)
    );

    let dir = Scratch::new("k8s");
    let server = std::fs::read_to_string(root().join("deploy/k8s/stoa-server.yaml")).unwrap();
    // Each with the word the validator's complaint must name.
    for (what, from, to, needle) in [
        (
            "a misspelt field",
            "failureThreshold: 30",
            "failureThreshhold: 30",
            "failureThreshhold",
        ),
        (
            "a wrong type",
            "replicas: 3",
            "replicas: three",
            "spec.replicas",
        ),
    ] {
        let broken = dir.write("stoa-server.yaml", &break_copy(&server, from, to));
        let out = run(Command::new("kubernetes-validate")
            .args(["--strict", "--quiet"])
            .arg(&broken));
        assert!(!out.status.success(), "kubernetes-validate accepted {what}");
        assert!(output_text(&out).contains(needle), "{}", output_text(&out));
    }
    let redis = deploy_file("deploy/k8s/sentinel/redis-sentinel.yaml");
    let broken = dir.write(
        "redis-sentinel.yaml",
        &break_copy(
            &redis,
            "publishNotReadyAddresses: true",
            "publishNotReadyAdresses: true",
        ),
    );
    let out = run(Command::new("kubernetes-validate")
        .args(["--strict", "--quiet"])
        .arg(&broken));
    assert!(
        !out.status.success(),
        "kubernetes-validate accepted a misspelt field in redis-sentinel.yaml"
    );
    assert!(
        output_text(&out).contains("publishNotReadyAdresses"),
        "{}",
        output_text(&out)
    );
}

/// What the schemas cannot see: the manifests agree with the server and with each other.
#[test]
fn kubernetes_manifests_run_a_drainable_hardened_cluster() {
    let docs = k8s_docs();
    let find = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    for d in &docs {
        assert!(
            d["metadata"]["namespace"].is_null(),
            "manifests carry no namespace (kubectl apply -n)"
        );
    }
    let config = find("ConfigMap", "stoa-config");
    let known: BTreeSet<String> = server_flags().into_iter().map(|f| f.env).collect();
    for (key, value) in config["data"].as_mapping().expect("data") {
        let key = key.as_str().expect("key");
        assert!(
            known.contains(key) || key == "RUST_LOG",
            "the ConfigMap sets {key}, which stoa-server does not read"
        );
        assert!(value.is_string(), "{key}: ConfigMap values are strings");
    }
    assert_eq!(config["data"]["STOA_CLUSTER"].as_str(), Some("true"));
    assert!(config["data"]["REDIS_URL"].is_string());

    let deploy = find("Deployment", "stoa-server");
    assert_eq!(deploy["spec"]["replicas"].as_u64(), Some(3));
    let pod = &deploy["spec"]["template"]["spec"];
    let c = &pod["containers"][0];
    assert_eq!(
        c["envFrom"][0]["configMapRef"]["name"].as_str(),
        Some("stoa-config")
    );
    assert_eq!(c["ports"][0]["containerPort"].as_u64(), Some(7878));
    for probe in ["readinessProbe", "livenessProbe"] {
        assert_eq!(
            c[probe]["httpGet"]["path"].as_str(),
            Some("/health"),
            "{probe}"
        );
        let port = &c[probe]["httpGet"]["port"];
        assert!(
            port.as_u64() == Some(7878) || port.as_str() == c["ports"][0]["name"].as_str(),
            "{probe} port"
        );
    }
    assert_eq!(
        c["securityContext"]["readOnlyRootFilesystem"].as_bool(),
        Some(true)
    );
    assert_eq!(
        c["securityContext"]["allowPrivilegeEscalation"].as_bool(),
        Some(false)
    );
    assert_eq!(pod["securityContext"]["runAsNonRoot"].as_bool(), Some(true));
    assert!(c["resources"]["requests"]["memory"].is_string());
    // preStop + the server's drain (grace + 1 s) within the termination grace period.
    let grace_ms: u64 = config["data"]["STOA_SHUTDOWN_GRACE_MS"]
        .as_str()
        .unwrap_or("3000")
        .parse()
        .expect("a number");
    let pre_stop: u64 = c["lifecycle"]["preStop"]["exec"]["command"][1]
        .as_str()
        .map_or(0, |s| s.parse().expect("sleep seconds"));
    let termination = pod["terminationGracePeriodSeconds"].as_u64().expect("set");
    assert!(
        termination >= pre_stop + grace_ms / 1000 + 1 + 5,
        "terminationGracePeriodSeconds {termination} leaves no room for a drain"
    );

    let pdb = find("PodDisruptionBudget", "stoa-server");
    assert_eq!(pdb["spec"]["maxUnavailable"].as_u64(), Some(1));
    assert_eq!(
        pdb["spec"]["selector"]["matchLabels"],
        deploy["spec"]["selector"]["matchLabels"]
    );
    let service = find("Service", "stoa-server");
    assert_eq!(
        service["spec"]["selector"],
        deploy["spec"]["selector"]["matchLabels"]
    );

    let redis = find("StatefulSet", "redis");
    let args: Vec<&str> = redis["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_sequence()
        .expect("redis args")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(args.windows(2).any(|w| w == ["--appendonly", "yes"]));
    assert!(args.windows(2).any(|w| w == ["--appendfsync", "always"]));
    assert!(
        redis["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"]
            .is_string()
    );
    find("Service", "redis");
    let bot = find("Deployment", "stoa-bot");
    let bot_args = &bot["spec"]["template"]["spec"]["containers"][0]["args"];
    assert_eq!(bot_args[2].as_str(), Some("ws://stoa-server:7878/ws"));
}

// ---- the Sentinel variant: compose.sentinel.yaml and k8s/sentinel/ -----------------------

/// `over` laid on `base` as Compose lays an override file on the file before it: mappings
/// key by key (a service's environment, its depends_on), anything else (a command) replaced.
fn overlay(base: &mut Yaml, over: &Yaml) {
    match (base.as_mapping_mut(), over.as_mapping()) {
        (Some(b), Some(o)) => {
            for (k, v) in o {
                match b.get_mut(k) {
                    Some(bv) => overlay(bv, v),
                    None => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => *base = over.clone(),
    }
}

/// compose.yaml with compose.sentinel.yaml laid on it, as
/// `docker compose -f compose.yaml -f compose.sentinel.yaml` reads them.
fn compose_sentinel() -> Yaml {
    let mut over: Yaml = serde_yaml::from_str(&deploy_file("deploy/compose.sentinel.yaml"))
        .expect("compose.sentinel.yaml is YAML");
    over.apply_merge().expect("merge keys");
    let mut doc = compose();
    overlay(&mut doc, &over);
    doc
}

fn str_list(v: &Yaml) -> Vec<String> {
    v.as_sequence()
        .unwrap_or_else(|| panic!("a list: {v:?}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("a string: {s:?}"))
                .to_string()
        })
        .collect()
}

/// A service's mounts as (source, target): Compose's short syntax (`src:target:mode`) or
/// the long one that `docker compose config` prints.
fn mounts(service: &Yaml) -> Vec<(String, String)> {
    service["volumes"]
        .as_sequence()
        .map(|v| v.as_slice())
        .unwrap_or_default()
        .iter()
        .map(|m| match m.as_str() {
            Some(short) => {
                let mut parts = short.split(':');
                let source = parts.next().unwrap_or_default().to_string();
                (source, parts.next().unwrap_or_default().to_string())
            }
            None => (
                m["source"].as_str().unwrap_or_default().to_string(),
                m["target"].as_str().unwrap_or_default().to_string(),
            ),
        })
        .collect()
}

/// Whether `service` mounts a file whose name ends with `file` at `target`.
fn mounts_file(service: &Yaml, file: &str, target: &str) -> bool {
    mounts(service)
        .iter()
        .any(|(s, t)| s.ends_with(file) && t == target)
}

/// Whether `service` keeps `/data` on a named volume.
fn data_on_volume(service: &Yaml) -> bool {
    mounts(service)
        .iter()
        .any(|(s, t)| t == "/data" && !s.contains('/'))
}

/// The arguments of a data server started through redis-start.sh.
#[derive(Debug)]
struct RedisStart {
    /// host:port this instance is (and announces).
    me: String,
    /// host:port of the primary when no Sentinel answers.
    first: String,
    sentinels: Vec<String>,
    master: String,
    /// redis-server's own options.
    options: Vec<String>,
}

impl RedisStart {
    /// From `[sh, <script>, me, first, sentinels, master, options...]`.
    fn parse(argv: &[String], script: &str) -> RedisStart {
        assert!(
            argv.len() >= 6 && argv[0] == "sh" && argv[1] == script,
            "not started through {script}: {argv:?}"
        );
        RedisStart {
            me: argv[2].clone(),
            first: argv[3].clone(),
            sentinels: argv[4].split(',').map(str::to_string).collect(),
            master: argv[5].clone(),
            options: argv[6..].to_vec(),
        }
    }

    /// Both data servers log every write to disk before answering it: either may be the
    /// primary.
    fn assert_durable(&self) {
        let o = &self.options;
        assert!(o.windows(2).any(|w| w == ["--appendonly", "yes"]), "{o:?}");
        assert!(
            o.windows(2).any(|w| w == ["--appendfsync", "always"]),
            "{o:?}"
        );
    }
}

/// A Sentinel configuration, as the `sentinel ...` lines that matter here.
#[derive(Debug)]
struct SentinelConf {
    port: String,
    /// `sentinel monitor <name> <host> <port> <quorum>`.
    monitor: (String, String, String, u32),
    down_after_ms: u64,
    failover_timeout_ms: u64,
    resolve_hostnames: bool,
    announce_hostnames: bool,
    announce_ip: Option<String>,
}

impl SentinelConf {
    fn parse(text: &str) -> SentinelConf {
        let lines: Vec<Vec<&str>> = text
            .lines()
            // Sentinel's rewrite quotes some values (`announce-ip "name"`).
            .map(|l| {
                l.split_whitespace()
                    .map(|w| w.trim_matches('"'))
                    .collect::<Vec<_>>()
            })
            .filter(|w| !w.is_empty() && !w[0].starts_with('#'))
            .collect();
        let find = |head: &[&str]| -> Vec<String> {
            let found: Vec<&Vec<&str>> = lines.iter().filter(|w| w.starts_with(head)).collect();
            assert!(found.len() <= 1, "{head:?} set twice: {text}");
            found
                .first()
                .map(|w| w[head.len()..].iter().map(|s| s.to_string()).collect())
                .unwrap_or_default()
        };
        let monitor = find(&["sentinel", "monitor"]);
        assert_eq!(monitor.len(), 4, "sentinel monitor: {text}");
        let name = monitor[0].clone();
        let per_master = |key: &str| -> u64 {
            let v = find(&["sentinel", key]);
            assert_eq!(v.len(), 2, "sentinel {key}: {text}");
            assert_eq!(v[0], name, "sentinel {key} of another name: {text}");
            v[1].parse().expect("a number")
        };
        SentinelConf {
            port: find(&["port"]).concat(),
            monitor: (
                name.clone(),
                monitor[1].clone(),
                monitor[2].clone(),
                monitor[3].parse().expect("a quorum"),
            ),
            down_after_ms: per_master("down-after-milliseconds"),
            failover_timeout_ms: per_master("failover-timeout"),
            resolve_hostnames: find(&["sentinel", "resolve-hostnames"]) == ["yes"],
            announce_hostnames: find(&["sentinel", "announce-hostnames"]) == ["yes"],
            announce_ip: find(&["sentinel", "announce-ip"]).first().cloned(),
        }
    }

    /// Three Sentinels, two of which find the primary down before a failover; timings that
    /// neither fail over on a hiccup nor wait minutes; names, not container addresses.
    fn assert_sound(&self, master: &str) {
        assert_eq!(self.monitor.0, master, "the nodes ask for another name");
        assert_eq!(self.monitor.3, 2, "quorum of three Sentinels");
        assert!(
            (1_000..=30_000).contains(&self.down_after_ms),
            "down-after-milliseconds {}",
            self.down_after_ms
        );
        assert!(
            self.failover_timeout_ms >= 3 * self.down_after_ms,
            "failover-timeout {}",
            self.failover_timeout_ms
        );
        assert!(
            self.resolve_hostnames && self.announce_hostnames,
            "{self:?}"
        );
    }
}

/// What compose.sentinel.yaml runs, checked: the data servers' start arguments by service,
/// and each Sentinel service's configuration as its first start writes it.
struct ComposeSentinel {
    data: BTreeMap<String, RedisStart>,
    /// By service: its start script and the configuration it writes.
    sentinels: BTreeMap<String, (String, String)>,
}

/// The Sentinel service's start script (`sh -c <script>`), with Compose's `$$` unescaped.
fn sentinel_script(service: &Yaml) -> String {
    let argv = str_list(&service["command"]);
    assert_eq!(argv.len(), 3, "sh -c <script>: {argv:?}");
    assert_eq!(argv[..2], ["sh", "-c"]);
    argv[2].replace("$$", "$")
}

/// Checks the Sentinel variant in `doc` (our overlay of the two files, or what Compose
/// printed for them): three nodes following three Sentinels that agree with them on the
/// name, a primary and a replica that start through redis-start.sh, durable, health-gated.
fn check_compose_sentinel(doc: &Yaml) -> ComposeSentinel {
    let services = &doc["services"];
    let nodes = compose_nodes(services);
    assert_eq!(nodes.len(), 3, "three cluster nodes");
    let env_of = |name: &str, key: &str| -> String {
        let v = &nodes[name]["environment"][key];
        v.as_str()
            .map(str::to_string)
            .or_else(|| v.as_u64().map(|n| n.to_string()))
            .unwrap_or_else(|| panic!("{name}: {key} unset"))
    };
    let first = nodes.keys().next().expect("a node").clone();
    let sentinel_list = env_of(&first, "STOA_REDIS_SENTINEL");
    let master = env_of(&first, "STOA_REDIS_SENTINEL_MASTER");
    for name in nodes.keys() {
        assert_eq!(env_of(name, "STOA_REDIS_SENTINEL"), sentinel_list, "{name}");
        assert_eq!(env_of(name, "STOA_REDIS_SENTINEL_MASTER"), master, "{name}");
        let min: u32 = env_of(name, "STOA_REDIS_MIN_REPLICAS")
            .parse()
            .expect("a number");
        assert!(min >= 1, "{name}: a failover would lose acknowledged moves");
        assert_eq!(env_of(name, "STOA_CLUSTER"), "true", "{name}");
        assert_eq!(
            env_of(name, "REDIS_URL"),
            "",
            "{name}: the Sentinels, not a URL"
        );
    }
    let sentinels: Vec<String> = sentinel_list.split(',').map(str::to_string).collect();

    // The Sentinel services: exactly those the nodes ask, on 26379, each named as it
    // announces itself.
    let sentinel_services: BTreeMap<String, &Yaml> = services
        .as_mapping()
        .expect("services")
        .iter()
        .filter(|(_, s)| {
            s["command"].as_sequence().is_some_and(|c| {
                c.iter().any(|a| {
                    a.as_str()
                        .is_some_and(|a| a.contains("exec redis-sentinel"))
                })
            })
        })
        .map(|(n, s)| (n.as_str().expect("name").to_string(), s))
        .collect();
    assert_eq!(sentinel_services.len(), 3, "three Sentinels");
    let want: BTreeSet<String> = sentinel_services
        .keys()
        .map(|n| format!("{n}:26379"))
        .collect();
    assert_eq!(
        sentinels.iter().cloned().collect::<BTreeSet<_>>(),
        want,
        "the nodes' STOA_REDIS_SENTINEL"
    );
    let template = deploy_file("deploy/sentinel.conf");
    let mut confs = BTreeMap::new();
    for (name, s) in &sentinel_services {
        let script = sentinel_script(s);
        for step in [
            "[ -f /data/sentinel.conf ] ||",
            "cp /etc/stoa/sentinel.conf /data/sentinel.conf",
            "echo \"sentinel announce-ip $SENTINEL_NAME\" >> /data/sentinel.conf",
            "exec redis-sentinel /data/sentinel.conf",
        ] {
            assert!(
                script.contains(step),
                "{name}'s start lacks {step:?}: {script}"
            );
        }
        assert_eq!(
            s["environment"]["SENTINEL_NAME"].as_str(),
            Some(name.as_str())
        );
        assert!(
            mounts_file(s, "/sentinel.conf", "/etc/stoa/sentinel.conf"),
            "{name} mounts the template: {:?}",
            mounts(s)
        );
        assert!(
            data_on_volume(s),
            "{name} keeps its rewritten configuration in a volume: {:?}",
            mounts(s)
        );
        let test = str_list(&s["healthcheck"]["test"]).join(" ");
        assert!(
            test.contains(&format!("ckquorum {master}")),
            "{name}: {test}"
        );
        let conf = format!("{template}sentinel announce-ip {name}\n");
        let parsed = SentinelConf::parse(&conf);
        parsed.assert_sound(&master);
        assert_eq!(parsed.port, "26379");
        assert_eq!(parsed.announce_ip.as_deref(), Some(name.as_str()));
        confs.insert(name.clone(), (script, conf));
    }

    // The data servers: one first primary, one replica of it, both durable, each started by
    // redis-start.sh with the nodes' Sentinels and name, the script mounted.
    let mut data = BTreeMap::new();
    for (name, s) in services.as_mapping().expect("services") {
        let name = name.as_str().expect("name");
        let argv = s["command"].as_sequence().map(|_| str_list(&s["command"]));
        let Some(argv) = argv.filter(|a| a.get(1).is_some_and(|s| s.ends_with("redis-start.sh")))
        else {
            continue;
        };
        let start = RedisStart::parse(&argv, "/etc/stoa/redis-start.sh");
        start.assert_durable();
        assert_eq!(
            start.me,
            format!("{name}:6379"),
            "{name} announces its service name"
        );
        assert_eq!(
            start.sentinels, sentinels,
            "{name} asks the nodes' Sentinels"
        );
        assert_eq!(start.master, master, "{name}");
        assert!(
            mounts_file(s, "/redis-start.sh", "/etc/stoa/redis-start.sh"),
            "{name} mounts the script: {:?}",
            mounts(s)
        );
        assert!(
            data_on_volume(s),
            "{name}'s AOF on a volume: {:?}",
            mounts(s)
        );
        assert!(
            s["healthcheck"]["test"].is_sequence(),
            "{name}'s health check"
        );
        data.insert(name.to_string(), start);
    }
    assert_eq!(data.len(), 2, "a primary and a replica: {:?}", data.keys());
    let primary = data
        .iter()
        .find(|(_, d)| d.me == d.first)
        .map(|(n, _)| n.clone())
        .expect("one starts as the primary");
    let replica = data
        .iter()
        .find(|(_, d)| d.me != d.first)
        .map(|(n, _)| n.clone())
        .expect("one starts as a replica");
    assert_eq!(
        data[&replica].first, data[&primary].me,
        "the replica follows the primary"
    );
    for (_, conf) in confs.values() {
        let (_, host, port, _) = SentinelConf::parse(conf).monitor;
        assert_eq!(
            format!("{host}:{port}"),
            data[&primary].me,
            "the Sentinels' first primary"
        );
    }
    assert_eq!(
        services[replica.as_str()]["depends_on"][primary.as_str()]["condition"].as_str(),
        Some("service_healthy")
    );
    for s in sentinel_services.values() {
        assert_eq!(
            s["depends_on"][primary.as_str()]["condition"].as_str(),
            Some("service_healthy"),
            "a Sentinel resolves the primary's name at start"
        );
    }
    // The nodes start once the Sentinels can fail over and the replica runs (with
    // STOA_REDIS_MIN_REPLICAS=1 no move is acknowledged before).
    for (name, node) in &nodes {
        for dep in sentinel_services.keys().chain([&replica]) {
            assert_eq!(
                node["depends_on"][dep.as_str()]["condition"].as_str(),
                Some("service_healthy"),
                "{name} waits for {dep}"
            );
        }
    }
    ComposeSentinel {
        data,
        sentinels: confs,
    }
}

#[test]
fn compose_sentinel_variant_runs_a_replica_three_sentinels_and_nodes_that_follow_them() {
    check_compose_sentinel(&compose_sentinel());
    // The override leaves the rest of compose.yaml as it is: the proxy and the bot.
    let doc = compose_sentinel();
    assert_eq!(doc["services"]["proxy"], compose()["services"]["proxy"]);
    assert_eq!(doc["services"]["bot"], compose()["services"]["bot"]);
    let script = deploy_file("deploy/redis-start.sh");
    assert!(script.starts_with("#!/bin/sh\n"), "a POSIX shell script");
    let out = run(Command::new("sh")
        .arg("-n")
        .arg(root().join("deploy/redis-start.sh")));
    assert!(
        out.status.success(),
        "sh -n redis-start.sh: {}",
        output_text(&out)
    );
}

#[test]
fn compose_sentinel_override_passes_docker_compose_config() {
    let Some(_) = compose_command() else {
        return;
    };
    let config = |override_file: &Path, quiet: bool| {
        let mut cmd = compose_command().expect("compose");
        cmd.env("STOA_ANALYSIS_KEY", "0123456789abcdef0123456789abcdef");
        cmd.arg("-f")
            .arg(root().join("deploy/compose.yaml"))
            .arg("-f")
            .arg(override_file)
            .args(["--profile", "monitoring", "config"]);
        if quiet {
            cmd.arg("-q");
        }
        run(&mut cmd)
    };
    let file = root().join("deploy/compose.sentinel.yaml");
    let out = config(&file, false);
    assert!(
        out.status.success(),
        "compose config: {}",
        output_text(&out)
    );
    // What Compose itself made of the two files passes the same checks as our overlay.
    let merged: Yaml = serde_yaml::from_slice(&out.stdout).expect("compose config prints YAML");
    check_compose_sentinel(&merged);

    let dir = Scratch::new("compose-sentinel");
    let broken = dir.write(
        "compose.sentinel.yaml",
        &break_copy(
            &deploy_file("deploy/compose.sentinel.yaml"),
            "    retries: 20",
            "    retriez: 20",
        ),
    );
    let out = config(&broken, true);
    assert!(
        !out.status.success(),
        "compose accepted an unknown health check key"
    );
    assert!(
        output_text(&out).contains("retriez"),
        "{}",
        output_text(&out)
    );
}

/// The heredoc (`<<MARK` ... `MARK`) of a shell script.
fn heredoc(script: &str, mark: &str) -> String {
    let start = script
        .find(&format!("<<{mark}\n"))
        .unwrap_or_else(|| panic!("no <<{mark} in {script}"));
    let body = &script[start..];
    let body = &body[body.find('\n').expect("a line") + 1..];
    let end = body
        .find(&format!("\n{mark}\n"))
        .unwrap_or_else(|| panic!("no end of <<{mark}"));
    format!("{}\n", &body[..end])
}

/// The headless Service naming the data pods of the Sentinel variant.
fn nodes_service(docs: &[Yaml]) -> String {
    docs.iter()
        .find(|d| d["kind"] == "StatefulSet" && d["metadata"]["name"] == "redis-node")
        .and_then(|d| d["spec"]["serviceName"].as_str())
        .expect("the redis-node StatefulSet's serviceName")
        .to_string()
}

/// The Sentinel variant for Kubernetes agrees with itself and with the server: the nodes
/// ask the three Sentinel pods by their stable names for the name they monitor, the data
/// pods start through deploy/redis-start.sh (the same text) with those Sentinels, and the
/// variant's ConfigMap differs from configmap.yaml only where the Sentinels replace the URL.
#[test]
fn kubernetes_sentinel_variant_agrees_with_the_server_and_itself() {
    let docs = manifest_docs(&k8s_sentinel_files());
    let find = |kind: &str, name: &str| {
        docs.iter()
            .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
            .unwrap_or_else(|| panic!("no {kind} {name}"))
    };
    for d in &docs {
        assert!(d["metadata"]["namespace"].is_null(), "no namespace");
    }
    let config = find("ConfigMap", "stoa-config");
    let known: BTreeSet<String> = server_flags().into_iter().map(|f| f.env).collect();
    let data = config["data"].as_mapping().expect("data");
    for (key, value) in data {
        let key = key.as_str().expect("key");
        assert!(
            known.contains(key) || key == "RUST_LOG",
            "stoa-server does not read {key}"
        );
        assert!(value.is_string(), "{key}: ConfigMap values are strings");
    }
    let get = |key: &str| config["data"][key].as_str().map(str::to_string);
    assert_eq!(
        get("REDIS_URL").as_deref(),
        Some(""),
        "the Sentinels replace REDIS_URL"
    );
    assert_eq!(get("STOA_CLUSTER").as_deref(), Some("true"));
    let min: u32 = get("STOA_REDIS_MIN_REPLICAS")
        .expect("set")
        .parse()
        .expect("a number");
    assert!(min >= 1, "a failover would lose acknowledged moves");
    let master = get("STOA_REDIS_SENTINEL_MASTER").expect("set");
    let sentinels: Vec<String> = get("STOA_REDIS_SENTINEL")
        .expect("set")
        .split(',')
        .map(str::to_string)
        .collect();
    // Everything else as in the plain ConfigMap.
    let base_docs = k8s_docs();
    let base = base_docs
        .iter()
        .find(|d| d["kind"] == "ConfigMap" && d["metadata"]["name"] == "stoa-config")
        .expect("configmap.yaml");
    for (key, value) in base["data"].as_mapping().expect("data") {
        if key.as_str() != Some("REDIS_URL") {
            assert_eq!(
                &config["data"][key], value,
                "{key:?} differs from configmap.yaml"
            );
        }
    }

    // The Sentinels: three pods with stable names behind a headless Service.
    let sts = find("StatefulSet", "redis-sentinel");
    assert_eq!(sts["spec"]["replicas"].as_u64(), Some(3));
    let svc_name = sts["spec"]["serviceName"].as_str().expect("serviceName");
    let want: Vec<String> = (0..3)
        .map(|i| format!("redis-sentinel-{i}.{svc_name}:26379"))
        .collect();
    assert_eq!(
        sentinels, want,
        "STOA_REDIS_SENTINEL names the Sentinel pods"
    );
    let svc = find("Service", svc_name);
    assert_headless_for(svc, sts);
    assert_eq!(svc["spec"]["ports"][0]["port"].as_u64(), Some(26379));
    let scripts = find("ConfigMap", "redis-sentinel-scripts");
    let sentinel_start = scripts["data"]["sentinel-start.sh"]
        .as_str()
        .expect("sentinel-start.sh");
    // The monitored primary is the one the script found; at the very first start, the
    // data pods' first.
    let first_primary = format!("redis-node-0.{} 6379", nodes_service(&docs));
    assert!(
        sentinel_start.contains(&format!("primary=\"{first_primary}\"")),
        "the Sentinels' first primary is the data pods' first: {sentinel_start}"
    );
    let conf_text = heredoc(sentinel_start, "CONF");
    assert!(conf_text.contains(" $primary "), "{conf_text}");
    let conf = SentinelConf::parse(&conf_text.replace("$primary", &first_primary));
    conf.assert_sound(&master);
    assert_eq!(conf.port, "26379");
    assert_eq!(
        conf.announce_ip.as_deref(),
        Some(format!("$POD_NAME.{svc_name}").as_str())
    );
    let c = &sts["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(
        str_list(&c["command"]),
        ["sh", "/scripts/sentinel-start.sh"]
    );
    assert_eq!(c["env"][0]["name"].as_str(), Some("POD_NAME"));
    assert_eq!(
        c["env"][0]["valueFrom"]["fieldRef"]["fieldPath"].as_str(),
        Some("metadata.name")
    );
    let probe = str_list(&c["readinessProbe"]["exec"]["command"]).join(" ");
    assert!(probe.contains(&format!("ckquorum {master}")), "{probe}");

    // The data pods: a primary and a replica, durable, started through the shared script.
    let nodes = find("StatefulSet", "redis-node");
    assert_eq!(
        nodes["spec"]["replicas"].as_u64(),
        Some(2),
        "a primary and a replica"
    );
    let node_svc = nodes["spec"]["serviceName"].as_str().expect("serviceName");
    assert_headless_for(find("Service", node_svc), nodes);
    assert_ne!(
        nodes["spec"]["selector"]["matchLabels"], sts["spec"]["selector"]["matchLabels"],
        "the Sentinels are not data pods"
    );
    let c = &nodes["spec"]["template"]["spec"]["containers"][0];
    let mut argv = str_list(&c["command"]);
    argv.extend(str_list(&c["args"]));
    let start = RedisStart::parse(&argv, "/scripts/redis-start.sh");
    start.assert_durable();
    assert_eq!(start.me, format!("$(POD_NAME).{node_svc}:6379"));
    assert_eq!(start.first, format!("redis-node-0.{node_svc}:6379"));
    assert_eq!(start.sentinels, sentinels);
    assert_eq!(start.master, master);
    assert_eq!(c["env"][0]["name"].as_str(), Some("POD_NAME"));
    assert_eq!(
        format!("{}:{}", conf.monitor.1, conf.monitor.2),
        start.first,
        "the Sentinels and the data pods start from the same primary"
    );
    assert_eq!(
        scripts["data"]["redis-start.sh"].as_str(),
        Some(deploy_file("deploy/redis-start.sh").as_str()),
        "the ConfigMap's redis-start.sh is deploy/redis-start.sh"
    );
    let pod = &nodes["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["runAsNonRoot"].as_bool(), Some(true));
    assert_eq!(
        c["securityContext"]["readOnlyRootFilesystem"].as_bool(),
        Some(true)
    );
    assert!(
        nodes["spec"]["volumeClaimTemplates"][0]["spec"]["resources"]["requests"]["storage"]
            .is_string()
    );
    for name in ["redis-node", "redis-sentinel"] {
        assert_eq!(
            find("PodDisruptionBudget", name)["spec"]["maxUnavailable"].as_u64(),
            Some(1),
            "{name}: one pod at a time"
        );
    }
    for script in ["redis-start.sh", "sentinel-start.sh"] {
        let dir = Scratch::new(&format!("sh-{script}"));
        let path = dir.write(script, scripts["data"][script].as_str().expect("script"));
        let out = run(Command::new("sh").arg("-n").arg(&path));
        assert!(
            out.status.success(),
            "sh -n {script}: {}",
            output_text(&out)
        );
    }
}

/// Child processes killed (and reaped) on drop.
#[derive(Default)]
struct Procs(BTreeMap<String, std::process::Child>);

impl Procs {
    fn kill(&mut self, name: &str) {
        if let Some(mut c) = self.0.remove(name) {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Procs {
    fn drop(&mut self) {
        let names: Vec<String> = self.0.keys().cloned().collect();
        for name in names {
            self.kill(&name);
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// `redis-cli --raw` at 127.0.0.1:`port`: its lines ("" when nothing answers).
fn redis_cli(port: u16, args: &[&str]) -> Vec<String> {
    let out = run(Command::new("redis-cli")
        .args(["-h", "127.0.0.1", "-p", &port.to_string(), "--raw"])
        .args(args));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits (up to `within`) until `ok` holds.
fn wait_for(what: &str, within: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + within;
    while !ok() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn port_of(addr: &str) -> u16 {
    addr.rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("host:port")
}

/// The compose Sentinel topology run for real, without containers: its two data servers
/// started by redis-start.sh with the services' arguments and its three Sentinels by the
/// services' own start script over sentinel.conf, every service name replaced by a loopback
/// port. The Sentinels must agree on the primary with a quorum; then a failover must move
/// them all to the replica, and the old primary, restarted with its unchanged arguments,
/// must come back as a replica of the new one (not as a second primary).
#[test]
fn compose_sentinel_topology_runs_on_loopback_agrees_and_survives_a_failover() {
    if !require("redis-server", "Debian package redis-server")
        || !require("redis-cli", "Debian package redis-tools")
    {
        return;
    }
    let began = std::time::Instant::now();
    let topo = check_compose_sentinel(&compose_sentinel());
    let dir = Scratch::new("sentinel-run");
    // Every service's address (as the others name it) -> a loopback one.
    let mut local: BTreeMap<String, String> = BTreeMap::new();
    for d in topo.data.values() {
        local.insert(d.me.clone(), format!("127.0.0.1:{}", free_port()));
    }
    for name in topo.sentinels.keys() {
        local.insert(
            format!("{name}:26379"),
            format!("127.0.0.1:{}", free_port()),
        );
    }
    let to_local = |a: &str| {
        local
            .get(a)
            .cloned()
            .unwrap_or_else(|| panic!("who is {a}?"))
    };
    // Redis runs as a Sentinel when its argv[0] says redis-sentinel (the image's command).
    let bin = dir.0.join("bin");
    std::fs::create_dir_all(&bin).expect("bin");
    let redis_server = std::env::split_paths(&std::env::var_os("PATH").expect("PATH"))
        .map(|d| d.join("redis-server"))
        .find(|p| p.is_file())
        .expect("redis-server");
    std::os::unix::fs::symlink(redis_server, bin.join("redis-sentinel")).expect("symlink");
    let path = std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(
        &std::env::var_os("PATH").expect("PATH"),
    )))
    .expect("PATH");

    let mut procs = Procs::default();
    let script = root().join("deploy/redis-start.sh");
    let start_data = |procs: &mut Procs, name: &str, log: &str| {
        let d = &topo.data[name];
        let data_dir = dir.0.join(name);
        std::fs::create_dir_all(&data_dir).expect("data dir");
        let sentinels: Vec<String> = d.sentinels.iter().map(|s| to_local(s)).collect();
        let log = std::fs::File::create(data_dir.join(log)).expect("log");
        let child = Command::new("sh")
            .arg(&script)
            .arg(to_local(&d.me))
            .arg(to_local(&d.first))
            .arg(sentinels.join(","))
            .arg(&d.master)
            .args(&d.options)
            .args(["--bind", "127.0.0.1", "--save", ""])
            .current_dir(&data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("sh redis-start.sh");
        procs.0.insert(name.to_string(), child);
        let port = port_of(&to_local(&d.me));
        wait_for(
            &format!("{name} to answer"),
            Duration::from_secs(10),
            || redis_cli(port, &["ping"]) == ["PONG"],
        );
    };
    let primary = topo
        .data
        .iter()
        .find(|(_, d)| d.me == d.first)
        .map(|(n, _)| n.clone())
        .expect("a primary");
    let replica = topo
        .data
        .keys()
        .find(|n| **n != primary)
        .expect("a replica")
        .clone();
    let master = topo.data[&primary].master.clone();
    let primary_port = port_of(&to_local(&topo.data[&primary].me));
    let replica_port = port_of(&to_local(&topo.data[&replica].me));
    start_data(&mut procs, &primary, "log");
    start_data(&mut procs, &replica, "log");

    let template = deploy_file("deploy/sentinel.conf");
    let mut sentinel_ports = Vec::new();
    for (name, (script_text, _)) in &topo.sentinels {
        let port = port_of(&to_local(&format!("{name}:26379")));
        sentinel_ports.push(port);
        let own = dir.0.join(name);
        std::fs::create_dir_all(&own).expect("sentinel dir");
        // The template with loopback addresses: its port, its first primary.
        let conf = SentinelConf::parse(&template);
        let first = format!("{}:{}", conf.monitor.1, conf.monitor.2);
        let mut text = break_copy(&template, "\nport 26379\n", &format!("\nport {port}\n"));
        let local_first = to_local(&first).replacen(':', " ", 1);
        text = break_copy(
            &text,
            &format!(" {} {} ", conf.monitor.1, conf.monitor.2),
            &format!(" {local_first} "),
        );
        text.push_str("bind 127.0.0.1\n");
        let template_path = dir.write(&format!("{name}.template.conf"), &text);
        let script = break_copy(
            &script_text.replace("/data/", &format!("{}/", own.display())),
            "/etc/stoa/sentinel.conf",
            &template_path.display().to_string(),
        );
        let child = Command::new("sh")
            .args(["-c", &script])
            .env("PATH", &path)
            .env("SENTINEL_NAME", "127.0.0.1")
            .current_dir(&own)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("the Sentinel's start");
        procs.0.insert(name.clone(), child);
    }

    // The Sentinels agree on the primary and can fail over; the replica follows it.
    let want = vec!["127.0.0.1".to_string(), primary_port.to_string()];
    wait_for("the Sentinels' quorum", Duration::from_secs(15), || {
        sentinel_ports.iter().all(|&p| {
            redis_cli(p, &["sentinel", "ckquorum", &master])
                .first()
                .is_some_and(|l| l.starts_with("OK 3 usable Sentinels"))
                && redis_cli(p, &["sentinel", "get-master-addr-by-name", &master]) == want
        })
    });
    let agreed = began.elapsed();
    let replication = redis_cli(replica_port, &["info", "replication"]).join("\n");
    assert!(
        replication.contains("role:slave")
            && replication.contains(&format!("master_port:{primary_port}")),
        "{replication}"
    );
    // What each Sentinel runs on: the file its start wrote (and Sentinel rewrote).
    for name in topo.sentinels.keys() {
        let text = std::fs::read_to_string(dir.0.join(name).join("sentinel.conf"))
            .expect("the written sentinel.conf");
        let conf = SentinelConf::parse(&text);
        conf.assert_sound(&master);
        assert_eq!(conf.announce_ip.as_deref(), Some("127.0.0.1"), "{name}");
    }

    // A failover: once every Sentinel has the replica as a healthy one.
    let healthy_replica = |p: u16| {
        let lines = redis_cli(p, &["sentinel", "replicas", &master]);
        let field = |k: &str| {
            lines
                .iter()
                .position(|l| l == k)
                .and_then(|i| lines.get(i + 1))
                .cloned()
        };
        field("port") == Some(replica_port.to_string())
            && field("flags").as_deref() == Some("slave")
            && field("master-link-status").as_deref() == Some("ok")
    };
    wait_for(
        "the Sentinels to see the replica",
        Duration::from_secs(15),
        || sentinel_ports.iter().all(|&p| healthy_replica(p)),
    );
    let failover_at = std::time::Instant::now();
    wait_for("a failover to start", Duration::from_secs(10), || {
        redis_cli(sentinel_ports[0], &["sentinel", "failover", &master]) == ["OK"]
    });
    let promoted = vec!["127.0.0.1".to_string(), replica_port.to_string()];
    wait_for(
        "every Sentinel to name the replica",
        Duration::from_secs(15),
        || {
            sentinel_ports.iter().all(|&p| {
                redis_cli(p, &["sentinel", "get-master-addr-by-name", &master]) == promoted
            })
        },
    );
    let failed_over = failover_at.elapsed();
    assert_eq!(
        redis_cli(replica_port, &["role"])
            .first()
            .map(String::as_str),
        Some("master")
    );

    // The old primary restarts with the same arguments: it asks the Sentinels and comes
    // back as the new primary's replica.
    procs.kill(&primary);
    start_data(&mut procs, &primary, "log.restart");
    let role = redis_cli(primary_port, &["role"]);
    assert_eq!(
        role.get(..3),
        Some(
            &[
                "slave".to_string(),
                "127.0.0.1".to_string(),
                replica_port.to_string()
            ][..]
        ),
        "the restarted old primary: {role:?}, {}",
        std::fs::read_to_string(dir.0.join(&primary).join("log.restart")).unwrap_or_default()
    );
    eprintln!(
        "Sentinels agreed {:.1} s after the start; a failover took {:.1} s; all in {:.1} s",
        agreed.as_secs_f64(),
        failed_over.as_secs_f64(),
        began.elapsed().as_secs_f64()
    );
}

// ---- the server's variables, documented -------------------------------------------------

/// One option of `stoa-server --help`.
#[derive(Debug)]
struct Flag {
    flag: String,
    env: String,
    default: Option<String>,
}

/// Every option of the real binary that reads an environment variable.
fn server_flags() -> Vec<Flag> {
    stoa_tests::build_binaries();
    let out = run(Command::new(stoa_tests::binary("stoa-server")).arg("--help"));
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let mut blocks: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("--") || (t.starts_with('-') && t.get(2..4) == Some(", ")) {
            blocks.push(t.to_string());
        } else if let Some(b) = blocks.last_mut() {
            b.push(' ');
            b.push_str(t);
        }
    }
    let between = |s: &str, open: &str, close: char| {
        s.split_once(open)
            .and_then(|(_, rest)| rest.split_once(close))
            .map(|(v, _)| v.to_string())
    };
    let flags: Vec<Flag> = blocks
        .iter()
        .filter_map(|b| {
            // `-h, --help`: the long name follows the short one.
            let head = if b.starts_with("--") {
                b.as_str()
            } else {
                b.split_once(", ").map_or(b.as_str(), |(_, h)| h)
            };
            let flag = head.split_whitespace().next()?.to_string();
            let env = between(b, "[env: ", '=')?;
            Some(Flag {
                flag,
                env,
                default: between(b, "[default: ", ']'),
            })
        })
        .collect();
    assert!(flags.len() > 30, "parsed {} flags from --help", flags.len());
    flags
}

#[test]
fn example_env_file_lists_every_variable_at_its_default_and_they_parse() {
    let flags = server_flags();
    let env_file = deploy_file("deploy/stoa-server.env");
    // `#NAME=value` lines: the reference list, at the defaults.
    let commented: BTreeMap<&str, &str> = env_file
        .lines()
        .filter_map(|l| l.strip_prefix('#')?.split_once('='))
        .filter(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
        .collect();
    for f in &flags {
        let value = commented
            .get(f.env.as_str())
            .unwrap_or_else(|| panic!("stoa-server.env lacks {} ({})", f.env, f.flag));
        if let Some(default) = &f.default {
            assert_eq!(value, default, "{}: not the default of {}", f.env, f.flag);
        }
    }
    let known: BTreeSet<&str> = flags.iter().map(|f| f.env.as_str()).collect();
    for name in commented.keys() {
        assert!(
            known.contains(name) || *name == "RUST_LOG",
            "stoa-server.env lists {name}, which stoa-server does not read"
        );
    }

    // The listed values are accepted by the real binary: it starts with all of them, on a
    // free port and a private Redis instead of the example's. (`STOA_CLUSTER=false` is
    // refused without a Redis URL, as the file says.) Booleans listed as `false` are off.
    let redis = RedisServer::start();
    let mut cmd = Command::new(stoa_tests::binary("stoa-server"));
    for (name, value) in &commented {
        cmd.env(name, value);
    }
    let mut child = cmd
        .env("STOA_LISTEN", "127.0.0.1:0")
        .env("REDIS_URL", redis.url())
        .env("STOA_REDIS_PREFIX", "deploy-env")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start stoa-server");
    let mut first = String::new();
    let _ = BufReader::new(child.stdout.take().expect("stdout")).read_line(&mut first);
    let health = first
        .strip_prefix("stoa-server listening on ")
        .and_then(|a| a.trim().parse().ok())
        .map(|addr| Server::attach(addr, child.id()).http_get("/health"));
    let _ = child.kill();
    let out = child.wait_with_output().expect("wait");
    let (status, body) = health.unwrap_or_else(|| {
        panic!(
            "stoa-server did not start with stoa-server.env's values: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert_eq!(status, 200, "{body}");
    let body: serde_json::Value = serde_json::from_str(&body).expect("health JSON");
    assert_eq!(body["persistence"], "redis", "{body}");
    assert!(
        body.get("node").is_none(),
        "STOA_CLUSTER=false must leave cluster mode off: {body}"
    );
}

#[test]
fn operations_guide_documents_every_flag_and_variable() {
    let guide = deploy_file("deploy/OPERATIONS.md");
    for f in server_flags() {
        let row = guide
            .lines()
            .find(|l| l.starts_with('|') && l.contains(&format!("`{}`", f.flag)))
            .unwrap_or_else(|| panic!("OPERATIONS.md has no table row for {}", f.flag));
        assert!(row.contains(&format!("`{}`", f.env)), "{}: {row}", f.env);
        if let Some(d) = &f.default {
            assert!(
                row.contains(&format!("`{d}`")),
                "{} default {d}: {row}",
                f.flag
            );
        }
    }
    let metrics = metric_families();
    for family in metrics.keys() {
        assert!(
            guide.contains(family.as_str()),
            "OPERATIONS.md does not explain {family}"
        );
    }
}

// ---- metrics: Prometheus and the Grafana dashboard ---------------------------------------

/// `# TYPE` of every stoa_* family a cluster node exports, by family name.
fn metric_families() -> BTreeMap<String, String> {
    let redis = RedisServer::start();
    let mut args = redis.server_args("deploy-metrics");
    args.extend(["--cluster".into(), "--node-id".into(), "metrics1".into()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let server = Server::start_with(&refs);
    wait_health(&server, 200, Duration::from_secs(10));
    // A game played and resigned: the families labelled by end reason have a series only
    // once a game ended.
    tokio::runtime::Runtime::new()
        .expect("a runtime")
        .block_on(async {
            let mut table = Table::open(
                &server,
                "unane",
                stoa_tests::quick_options("unane"),
                "public",
            )
            .await;
            for ply in 0..2 {
                table.step(ply).await.expect("a move");
            }
            let game_id = table.game_id.clone();
            let ok = table
                .host
                .request(json!({"t":"game.resign","game_id":game_id}))
                .await;
            assert_eq!(ok["t"], "ok", "{ok}");
        });
    let (status, text) = server.http_get("/metrics");
    assert_eq!(status, 200);
    let families: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE "))
        .filter_map(|l| l.split_once(' '))
        .filter(|(name, _)| name.starts_with("stoa_"))
        .map(|(n, t)| (n.to_string(), t.trim().to_string()))
        .collect();
    assert!(
        families.contains_key("stoa_cluster_nodes"),
        "a cluster node exports the cluster series: {text}"
    );
    families
}

/// The sample names a family's type gives it in queries (a counter's family is named
/// with its `_total` in Prometheus's text format, without it in OpenMetrics).
fn sample_names(family: &str, kind: &str) -> Vec<String> {
    match kind {
        "counter" if family.ends_with("_total") => vec![family.to_string()],
        "counter" => vec![format!("{family}_total")],
        "histogram" => ["_bucket", "_sum", "_count"]
            .iter()
            .map(|s| format!("{family}{s}"))
            .collect(),
        _ => vec![family.to_string()],
    }
}

fn dashboard() -> serde_json::Value {
    serde_json::from_str(&deploy_file("deploy/grafana/stoa-dashboard.json"))
        .expect("the dashboard is JSON")
}

fn dashboard_queries(dash: &serde_json::Value) -> Vec<String> {
    dash["panels"]
        .as_array()
        .expect("panels")
        .iter()
        .filter(|p| p["type"] != "row")
        .flat_map(|p| {
            let targets = p["targets"].as_array().cloned().unwrap_or_default();
            assert!(!targets.is_empty(), "panel {} has no query", p["title"]);
            targets
        })
        .map(|t| t["expr"].as_str().expect("an expr").to_string())
        .collect()
}

/// The `stoa_*` names a query mentions.
fn series_in(expr: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = expr;
    while let Some(at) = rest.find("stoa_") {
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(tail.len());
        names.insert(tail[..end].to_string());
        rest = &tail[end..];
    }
    names
}

#[test]
fn dashboard_shows_every_exported_family_and_only_exported_series() {
    let dash = dashboard();
    let families = metric_families();
    let exported: BTreeSet<String> = families
        .iter()
        .flat_map(|(f, k)| sample_names(f, k))
        .collect();
    let queries = dashboard_queries(&dash);
    let used: BTreeSet<String> = queries.iter().flat_map(|q| series_in(q)).collect();
    for name in &used {
        assert!(
            exported.contains(name),
            "the dashboard queries {name}, which the server does not export"
        );
    }
    for (family, kind) in &families {
        assert!(
            sample_names(family, kind).iter().any(|s| used.contains(s)),
            "the dashboard does not show {family}"
        );
    }
    // Panels use the dashboard's data source variable, and their ids are distinct.
    let mut ids = BTreeSet::new();
    for p in dash["panels"].as_array().expect("panels") {
        assert!(ids.insert(p["id"].as_u64().expect("id")), "duplicate id");
        if p["type"] != "row" {
            assert_eq!(p["datasource"]["uid"], "${datasource}", "{}", p["title"]);
        }
    }
    let vars: Vec<&str> = dash["templating"]["list"]
        .as_array()
        .expect("templating")
        .iter()
        .filter_map(|v| v["name"].as_str())
        .collect();
    assert!(vars.contains(&"datasource") && vars.contains(&"instance"));
}

#[test]
fn dashboard_queries_and_prometheus_config_pass_promtool() {
    if !require("promtool", "Debian package prometheus") {
        return;
    }
    let dir = Scratch::new("promtool");
    let out = run(Command::new("promtool")
        .args(["check", "config"])
        .arg(root().join("deploy/prometheus.yml")));
    assert!(
        out.status.success(),
        "promtool check config: {}",
        output_text(&out)
    );
    let broken = dir.write(
        "prometheus.yml",
        &break_copy(
            &deploy_file("deploy/prometheus.yml"),
            "scrape_interval: 15s",
            "scrape_interval: 15 seconds",
        ),
    );
    let out = run(Command::new("promtool")
        .args(["check", "config"])
        .arg(broken));
    assert!(!out.status.success(), "promtool accepted a bad interval");
    assert!(
        output_text(&out).contains("15 seconds"),
        "{}",
        output_text(&out)
    );

    // Every query as a recording rule: promtool parses its PromQL. Grafana's variables get
    // values first.
    let queries = dashboard_queries(&dashboard());
    let rules = |queries: &[String]| {
        let mut text = String::from("groups:\n  - name: dashboard\n    rules:\n");
        for (i, q) in queries.iter().enumerate() {
            let q = q
                .replace("$__rate_interval", "5m")
                .replace("$instance", ".*")
                .replace("$kind", ".*");
            assert!(!q.contains('$'), "an unknown variable in {q}");
            let q = serde_json::to_string(&q).expect("quote");
            text.push_str(&format!(
                "      - record: dashboard:q{i}\n        expr: {q}\n"
            ));
        }
        let path = dir.write("rules.yml", &text);
        run(Command::new("promtool").args(["check", "rules"]).arg(path))
    };
    let out = rules(&queries);
    assert!(
        out.status.success(),
        "promtool check rules: {}",
        output_text(&out)
    );
    let mut broken = queries.clone();
    broken[0] = format!("sum(rate({})", broken[0]);
    let out = rules(&broken);
    assert!(!out.status.success(), "promtool accepted a bad query");
    assert!(
        output_text(&out).contains("dashboard:q0"),
        "{}",
        output_text(&out)
    );
}

/// A StatefulSet's headless Service: no cluster IP, names published before the pods are
/// ready (a Sentinel or replica must find a peer that is still starting), and the set's
/// pods selected.
fn assert_headless_for(svc: &Yaml, set: &Yaml) {
    assert_eq!(svc["spec"]["clusterIP"].as_str(), Some("None"));
    assert_eq!(
        svc["spec"]["publishNotReadyAddresses"].as_bool(),
        Some(true)
    );
    assert_eq!(
        svc["spec"]["selector"],
        set["spec"]["selector"]["matchLabels"]
    );
}

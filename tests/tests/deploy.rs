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
    let mut docs = Vec::new();
    for path in k8s_files() {
        let text = std::fs::read_to_string(&path).expect("read a manifest");
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
    let mut files: Vec<PathBuf> = std::fs::read_dir(root().join("deploy/k8s"))
        .expect("deploy/k8s")
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
    let out = run(Command::new("kubernetes-validate")
        .args(["--strict", "--quiet"])
        .args(&files));
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

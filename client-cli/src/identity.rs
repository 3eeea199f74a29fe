//! The player's identity tokens, kept in the user's config directory.
//!
//! Why per deployment: a token is valid wherever the players it names are, which is a whole
//! deployment (every node of a cluster, and the load balancer in front of them), not one
//! address. The server names its deployment in `welcome.deployment` and, before the `hello`
//! that must carry the token, in the `stoa-deployment` header of the websocket upgrade. The
//! file keeps one entry per deployment with the addresses that welcomed us:
//!
//! ```json
//! {"deployments": {"d…": {"token": "…", "id": "p…", "name": "Ann",
//!                         "addresses": ["ws://127.0.0.1:7878/ws"]}},
//!  "ws://old.example/ws": {"token": "…", "id": "p…", "name": "Ann"}}
//! ```
//!
//! A deployment's token is offered only to a server that announces that deployment *and*
//! was reached through an address list (`--server a,b,…`) naming one of its known addresses,
//! so a server that merely claims a deployment id (ids are public) gets nobody's token.
//! Entries of earlier versions, one per address (as the second above), are still read for
//! that address and move under the deployment once the server accepts them; a server that
//! names no deployment (an older one) keeps getting entries per address. The directory is
//! `$STOA_CONFIG_DIR` when set (tests isolate two players that way), else
//! `$XDG_CONFIG_HOME/stoa`, else `~/.config/stoa`.

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

/// The file inside the config directory.
const FILE: &str = "identity.json";

/// The file's member holding the entries by deployment (the other members are the entries of
/// earlier versions, by address).
const DEPLOYMENTS: &str = "deployments";

/// The config directory this client uses.
pub fn config_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("STOA_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CONFIG_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("stoa"));
    }
    std::env::var_os("HOME")
        .filter(|d| !d.is_empty())
        .map(|home| PathBuf::from(home).join(".config").join("stoa"))
}

/// The token store of one config directory.
#[derive(Clone, Debug)]
pub struct Identity {
    path: Option<PathBuf>,
}

impl Identity {
    /// The store in the default config directory (no store when no directory is known).
    pub fn default_location() -> Self {
        Identity {
            path: config_dir().map(|d| d.join(FILE)),
        }
    }

    /// A store in an explicit directory.
    #[cfg(test)]
    pub fn in_dir(dir: &Path) -> Self {
        Identity {
            path: Some(dir.join(FILE)),
        }
    }

    /// Where the tokens are kept.
    #[cfg(test)]
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    fn read_all(&self) -> Map<String, Value> {
        self.path
            .as_ref()
            .and_then(|p| fs::read_to_string(p).ok())
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
            .and_then(|v| v.as_object().cloned())
            .unwrap_or_default()
    }

    fn deployments(all: &Map<String, Value>) -> Map<String, Value> {
        all.get(DEPLOYMENTS)
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }

    /// Which stored token to offer the servers at `urls` (one deployment's addresses, in
    /// the user's words): the tokens of the deployments known at any of them, and the
    /// entries of earlier versions for each of them.
    pub fn keys(&self, urls: &[String]) -> Keys {
        let all = self.read_all();
        let mut keys = Keys::default();
        for (deployment, entry) in &Self::deployments(&all) {
            let Some(token) = entry["token"].as_str() else {
                continue;
            };
            let addresses = addresses(entry);
            if urls.iter().any(|u| addresses.contains(u)) {
                keys.by_deployment
                    .insert(deployment.clone(), token.to_string());
            }
            for url in urls.iter().filter(|u| addresses.contains(u)) {
                keys.known_at.insert(url.clone(), token.to_string());
            }
        }
        for url in urls {
            if let Some(token) = all
                .get(url)
                .and_then(|e| e["token"].as_str())
                .filter(|_| url != DEPLOYMENTS)
            {
                keys.legacy.insert(url.clone(), token.to_string());
            }
        }
        keys
    }

    /// Notes who we are on the server at `url`, which said it is `deployment` (empty: an
    /// older server that does not say; the token is then kept for the address alone).
    pub fn remember(
        &self,
        url: &str,
        deployment: &str,
        token: &str,
        id: &str,
        name: &str,
    ) -> std::io::Result<()> {
        if self.path.is_none() {
            return Ok(());
        }
        let mut all = self.read_all();
        if deployment.is_empty() {
            all.insert(
                url.to_string(),
                json!({"token": token, "id": id, "name": name}),
            );
            return self.write_all(all);
        }
        let mut deployments = Self::deployments(&all);
        // The address serves this deployment now: it leaves any other, and a deployment
        // left without an address could never be offered its token again.
        for (d, entry) in deployments.iter_mut() {
            if d != deployment {
                if let Some(list) = entry.get_mut("addresses").and_then(Value::as_array_mut) {
                    list.retain(|a| a.as_str() != Some(url));
                }
            }
        }
        deployments.retain(|d, entry| d == deployment || !addresses(entry).is_empty());
        let mut known = deployments
            .get(deployment)
            .map(addresses)
            .unwrap_or_default();
        if !known.iter().any(|a| a == url) {
            known.push(url.to_string());
        }
        deployments.insert(
            deployment.to_string(),
            json!({"token": token, "id": id, "name": name, "addresses": known}),
        );
        // The address's entry of earlier versions is kept under the deployment from now on.
        all.remove(url);
        all.insert(DEPLOYMENTS.to_string(), Value::Object(deployments));
        self.write_all(all)
    }

    /// Forgets a token a server refused, wherever it is kept.
    pub fn forget_token(&self, token: &str) -> std::io::Result<()> {
        if self.path.is_none() {
            return Ok(());
        }
        let mut all = self.read_all();
        let mut deployments = Self::deployments(&all);
        let before = all.len() + deployments.len();
        deployments.retain(|_, e| e["token"].as_str() != Some(token));
        all.retain(|k, e| k == DEPLOYMENTS || e["token"].as_str() != Some(token));
        if all.len() + deployments.len() == before {
            return Ok(());
        }
        if all.contains_key(DEPLOYMENTS) {
            all.insert(DEPLOYMENTS.to_string(), Value::Object(deployments));
        }
        self.write_all(all)
    }

    fn write_all(&self, all: Map<String, Value>) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let text = serde_json::to_string_pretty(&Value::Object(all))?;
        // Write a sibling file and rename it, so a crash never leaves a half-written token.
        let tmp = path.with_extension("json.tmp");
        {
            let mut options = fs::OpenOptions::new();
            options.write(true).create(true).truncate(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                // The tokens are secrets: readable by their owner only.
                options.mode(0o600);
            }
            let mut file = options.open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
        }
        fs::rename(&tmp, path)
    }
}

/// The addresses a deployment entry lists.
fn addresses(entry: &Value) -> Vec<String> {
    entry["addresses"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|u| u.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// The tokens a connection may offer, and to whom (see the module's notes).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keys {
    /// By deployment id: offered to a server that announces the deployment.
    by_deployment: BTreeMap<String, String>,
    /// By address, for a server that announces no deployment: the deployment entries'
    /// tokens at the addresses that welcomed them.
    known_at: BTreeMap<String, String>,
    /// Entries of earlier versions, by address (kept until a server accepts them).
    legacy: BTreeMap<String, String>,
}

impl Keys {
    /// The identity of a session: `token`, welcomed at `url` by `deployment` (empty when the
    /// server did not say), for its reconnections.
    pub fn session(url: &str, deployment: &str, token: &str) -> Keys {
        let mut keys = Keys::default();
        if !deployment.is_empty() {
            keys.by_deployment
                .insert(deployment.to_string(), token.to_string());
        }
        keys.known_at.insert(url.to_string(), token.to_string());
        keys
    }

    /// The token to offer the server at `url`, which announced `deployment` (`None`: it did
    /// not say). `None`: nothing of ours belongs there.
    pub fn token_for(&self, url: &str, deployment: Option<&str>) -> Option<String> {
        let own = match deployment {
            Some(d) => self.by_deployment.get(d),
            None => self.known_at.get(url),
        };
        own.or_else(|| self.legacy.get(url)).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urls(list: &[&str]) -> Vec<String> {
        list.iter().map(|u| u.to_string()).collect()
    }

    #[test]
    fn tokens_belong_to_deployments() {
        let dir = std::env::temp_dir().join(format!("stoa-identity-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let id = Identity::in_dir(&dir.join("nested"));
        assert_eq!(id.keys(&urls(&["ws://a/ws"])), Keys::default());
        id.remember("ws://a/ws", "d1", "t1", "p1", "Ann").unwrap();
        id.remember("ws://x/ws", "d2", "t2", "p2", "Bob").unwrap();

        // Known at a: offered to a server at a that says it is d1, not to one that says d2.
        let keys = id.keys(&urls(&["ws://a/ws"]));
        assert_eq!(
            keys.token_for("ws://a/ws", Some("d1")).as_deref(),
            Some("t1")
        );
        assert_eq!(keys.token_for("ws://a/ws", Some("d2")), None);
        // A server that says nothing gets the token of the address that welcomed it.
        assert_eq!(keys.token_for("ws://a/ws", None).as_deref(), Some("t1"));
        // b listed with a: b is offered d1's token when it says d1 (another node).
        let keys = id.keys(&urls(&["ws://a/ws", "ws://b/ws"]));
        assert_eq!(
            keys.token_for("ws://b/ws", Some("d1")).as_deref(),
            Some("t1")
        );
        assert_eq!(keys.token_for("ws://b/ws", None), None);
        // b alone is unknown: claiming d1 is not enough.
        let keys = id.keys(&urls(&["ws://b/ws"]));
        assert_eq!(keys.token_for("ws://b/ws", Some("d1")), None);
        // Once b welcomed us as d1, it is one of d1's addresses.
        id.remember("ws://b/ws", "d1", "t1", "p1", "Ann").unwrap();
        let keys = id.keys(&urls(&["ws://b/ws"]));
        assert_eq!(
            keys.token_for("ws://b/ws", Some("d1")).as_deref(),
            Some("t1")
        );

        // x now serves another deployment: d2 is left with no address and forgotten.
        id.remember("ws://x/ws", "d3", "t3", "p3", "Cy").unwrap();
        let all = id.read_all();
        assert!(all[DEPLOYMENTS].get("d2").is_none(), "{all:?}");
        assert_eq!(
            all[DEPLOYMENTS]["d1"]["addresses"],
            json!(["ws://a/ws", "ws://b/ws"])
        );

        id.forget_token("t1").unwrap();
        let keys = id.keys(&urls(&["ws://a/ws"]));
        assert_eq!(keys.token_for("ws://a/ws", Some("d1")), None);
        assert_eq!(
            id.keys(&urls(&["ws://x/ws"]))
                .token_for("ws://x/ws", Some("d3"))
                .as_deref(),
            Some("t3")
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(id.path().unwrap())
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(
                mode & 0o077,
                0,
                "token file must not be group/world readable"
            );
        }
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn entries_per_address_of_earlier_versions_are_read_then_moved() {
        let dir = std::env::temp_dir().join(format!("stoa-identity-legacy-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let id = Identity::in_dir(&dir);
        fs::write(
            id.path().unwrap(),
            r#"{"ws://a/ws": {"token": "old", "id": "p1", "name": "Ann"},
                "ws://z/ws": {"token": "other", "id": "p9", "name": "Zed"}}"#,
        )
        .unwrap();
        let keys = id.keys(&urls(&["ws://a/ws"]));
        // Offered to the address whatever deployment it names (that is how it was kept).
        assert_eq!(
            keys.token_for("ws://a/ws", Some("d1")).as_deref(),
            Some("old")
        );
        assert_eq!(keys.token_for("ws://a/ws", None).as_deref(), Some("old"));
        id.remember("ws://a/ws", "d1", "old", "p1", "Ann").unwrap();
        let all = id.read_all();
        assert!(all.get("ws://a/ws").is_none(), "moved: {all:?}");
        assert_eq!(all[DEPLOYMENTS]["d1"]["token"], "old");
        assert_eq!(all["ws://z/ws"]["token"], "other", "others stay");
        // An older server (no deployment) keeps its entry per address.
        id.remember("ws://y/ws", "", "ty", "p4", "Yo").unwrap();
        assert_eq!(
            id.keys(&urls(&["ws://y/ws"]))
                .token_for("ws://y/ws", None)
                .as_deref(),
            Some("ty")
        );
        id.forget_token("other").unwrap();
        assert!(id.read_all().get("ws://z/ws").is_none());
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_session_offers_its_token_to_its_deployment_only() {
        let keys = Keys::session("ws://a/ws", "d1", "t1");
        assert_eq!(
            keys.token_for("ws://b/ws", Some("d1")).as_deref(),
            Some("t1")
        );
        assert_eq!(keys.token_for("ws://b/ws", Some("d2")), None);
        assert_eq!(keys.token_for("ws://a/ws", None).as_deref(), Some("t1"));
        assert_eq!(keys.token_for("ws://b/ws", None), None);
        let old = Keys::session("ws://a/ws", "", "t1");
        assert_eq!(old.token_for("ws://a/ws", None).as_deref(), Some("t1"));
    }
}

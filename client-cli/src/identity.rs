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
//!                         "addresses": ["ws://127.0.0.1:7878/ws"],
//!                         "previous": [{"token": "…", "id": "p…", "name": "Bob"}]}},
//!  "ws://old.example/ws": {"token": "…", "id": "p…", "name": "Ann"}}
//! ```
//!
//! `previous` keeps the identities a deployment's entry replaced with another player's (`stoa
//! link --replace`, `stoa login`, a new guest after the server forgot us): a token may be its
//! player's only way in, so none is thrown away; `stoa identities` lists and restores them.
//! A deployment stays kept when its addresses serve another one now (a server restarted
//! without storage is a new deployment at the same address): its token goes to a server of
//! it that knows it again.
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
    /// older server that does not say; the token is then kept for the address alone). A
    /// different player's token that this replaces is kept among the deployment's
    /// `previous` entries (`stoa identities` switches back), never thrown away: it may be
    /// that player's only device.
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
        let old = deployments.get(deployment).cloned().unwrap_or(Value::Null);
        let mut known = addresses(&old);
        if !known.iter().any(|a| a == url) {
            known.push(url.to_string());
        }
        let mut previous = previous_of(&old);
        // The address's entry of earlier versions is kept under the deployment from now on.
        let legacy = all.remove(url).filter(|_| url != DEPLOYMENTS);
        for replaced in [Some(&old), legacy.as_ref()].into_iter().flatten() {
            if let Some(other) = identity_of(replaced).filter(|o| o.id != id) {
                previous.retain(|p| p.token != other.token);
                previous.push(other);
            }
        }
        previous.retain(|p| p.token != token && p.id != id);
        let mut entry = json!({"token": token, "id": id, "name": name, "addresses": known});
        if !previous.is_empty() {
            entry["previous"] = Value::Array(previous.iter().map(Stored::to_json).collect());
        }
        deployments.insert(deployment.to_string(), entry);
        all.insert(DEPLOYMENTS.to_string(), Value::Object(deployments));
        self.write_all(all)
    }

    /// The identities kept for the servers at `urls`: per deployment known there, the
    /// current one and the previous ones.
    pub fn list(&self, urls: &[String]) -> Vec<Kept> {
        let all = self.read_all();
        let mut kept = Vec::new();
        for (deployment, entry) in &Self::deployments(&all) {
            if !urls.iter().any(|u| addresses(entry).contains(u)) {
                continue;
            }
            kept.push(Kept {
                deployment: deployment.clone(),
                current: identity_of(entry),
                previous: previous_of(entry),
            });
        }
        kept
    }

    /// Makes a previous identity (by player id or name, ignoring case) of a deployment known
    /// at `urls` the current one; the current one becomes previous. The identity switched
    /// to, or `None` when no previous identity matches.
    pub fn switch(&self, urls: &[String], who: &str) -> std::io::Result<Option<Stored>> {
        let mut all = self.read_all();
        let mut deployments = Self::deployments(&all);
        for (_, entry) in deployments.iter_mut() {
            if !urls.iter().any(|u| addresses(entry).contains(u)) {
                continue;
            }
            let mut previous = previous_of(entry);
            let Some(i) = previous
                .iter()
                .position(|p| p.id == who || p.name.eq_ignore_ascii_case(who))
            else {
                continue;
            };
            let chosen = previous.remove(i);
            if let Some(current) = identity_of(entry) {
                previous.push(current);
            }
            entry["token"] = json!(chosen.token);
            entry["id"] = json!(chosen.id);
            entry["name"] = json!(chosen.name);
            entry["previous"] = Value::Array(previous.iter().map(Stored::to_json).collect());
            all.insert(DEPLOYMENTS.to_string(), Value::Object(deployments));
            self.write_all(all)?;
            return Ok(Some(chosen));
        }
        Ok(None)
    }

    /// Identities kept at `url` for deployments other than `deployment`: who this terminal
    /// was on a server at this address before it became another deployment (a server that
    /// restarted without storage).
    pub fn known_elsewhere(&self, url: &str, deployment: &str) -> Vec<Stored> {
        let all = self.read_all();
        Self::deployments(&all)
            .iter()
            .filter(|(d, e)| d.as_str() != deployment && addresses(e).iter().any(|a| a == url))
            .filter_map(|(_, e)| identity_of(e))
            .collect()
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

/// One identity as kept: a token and the player it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stored {
    /// The secret token.
    pub token: String,
    /// The player's id.
    pub id: String,
    /// The player's name when kept.
    pub name: String,
}

impl Stored {
    fn to_json(&self) -> Value {
        json!({"token": self.token, "id": self.id, "name": self.name})
    }
}

/// The identities of one deployment, for `stoa identities`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kept {
    /// The deployment's id.
    pub deployment: String,
    /// Who this terminal is there.
    pub current: Option<Stored>,
    /// Who it was, oldest first.
    pub previous: Vec<Stored>,
}

/// The identity an entry holds (`token`, `id`, `name`).
fn identity_of(entry: &Value) -> Option<Stored> {
    Some(Stored {
        token: entry.get("token")?.as_str()?.to_string(),
        id: entry.get("id")?.as_str().unwrap_or_default().to_string(),
        name: entry.get("name")?.as_str().unwrap_or_default().to_string(),
    })
}

/// An entry's `previous` identities.
fn previous_of(entry: &Value) -> Vec<Stored> {
    entry
        .get("previous")
        .and_then(Value::as_array)
        .map(|list| list.iter().filter_map(identity_of).collect())
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

        // x now serves another deployment (a server restarted without storage): d2's
        // token is kept for a server of d2 that knows it, and d3's is offered to d3.
        id.remember("ws://x/ws", "d3", "t3", "p3", "Cy").unwrap();
        let all = id.read_all();
        assert_eq!(all[DEPLOYMENTS]["d2"]["token"], "t2", "{all:?}");
        let keys = id.keys(&urls(&["ws://x/ws"]));
        assert_eq!(
            keys.token_for("ws://x/ws", Some("d2")).as_deref(),
            Some("t2")
        );
        assert_eq!(
            keys.token_for("ws://x/ws", Some("d3")).as_deref(),
            Some("t3")
        );
        assert_eq!(
            id.known_elsewhere("ws://x/ws", "d3"),
            vec![Stored {
                token: "t2".into(),
                id: "p2".into(),
                name: "Bob".into()
            }]
        );
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
    fn another_player_replacing_an_identity_keeps_it_as_previous() {
        let dir = std::env::temp_dir().join(format!("stoa-identity-prev-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let id = Identity::in_dir(&dir);
        let urls = urls(&["ws://a/ws"]);
        id.remember("ws://a/ws", "d1", "tb", "pb", "Bob").unwrap();
        // A new token of the same player replaces the old one silently.
        id.remember("ws://a/ws", "d1", "tb2", "pb", "Bob").unwrap();
        assert!(id.list(&urls)[0].previous.is_empty());
        // Another player: Bob is kept.
        id.remember("ws://a/ws", "d1", "ta", "pa", "Alice").unwrap();
        let kept = &id.list(&urls)[0];
        assert_eq!(kept.current.as_ref().unwrap().name, "Alice");
        assert_eq!(kept.previous.len(), 1);
        assert_eq!(kept.previous[0].token, "tb2");
        // Switching back makes Bob current and keeps Alice.
        let back = id.switch(&urls, "bob").unwrap().unwrap();
        assert_eq!(back.id, "pb");
        let kept = &id.list(&urls)[0];
        assert_eq!(kept.current.as_ref().unwrap().token, "tb2");
        assert_eq!(kept.previous[0].name, "Alice");
        assert_eq!(
            id.keys(&urls).token_for("ws://a/ws", Some("d1")).as_deref(),
            Some("tb2")
        );
        assert_eq!(id.switch(&urls, "nobody").unwrap(), None);
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

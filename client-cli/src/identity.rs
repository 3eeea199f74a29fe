//! The player's identity token, kept in the user's config directory.
//!
//! Why per server: a token is only meaningful to the server that issued it, so the file maps
//! each server address to its token; playing on a test server never clobbers the identity on
//! another. The directory is `$STOA_CONFIG_DIR` when set (tests isolate two players that
//! way), else `$XDG_CONFIG_HOME/stoa`, else `~/.config/stoa`.

use std::fs;
use std::io::Write;
#[cfg(test)]
use std::path::Path;
use std::path::PathBuf;

use serde_json::{json, Map, Value};

/// The file inside the config directory.
const FILE: &str = "identity.json";

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

/// Token store for one config directory.
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

    /// The stored token for a server, if any.
    pub fn token(&self, server: &str) -> Option<String> {
        self.read_all()
            .get(server)
            .and_then(|e| e["token"].as_str())
            .map(String::from)
    }

    /// Stores the token (and the public id and name, for the user's information).
    pub fn store(&self, server: &str, token: &str, id: &str, name: &str) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut all = self.read_all();
        all.insert(
            server.to_string(),
            json!({"token": token, "id": id, "name": name}),
        );
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
                // The token is a secret: readable by its owner only.
                options.mode(0o600);
            }
            let mut file = options.open(&tmp)?;
            file.write_all(text.as_bytes())?;
            file.write_all(b"\n")?;
        }
        fs::rename(&tmp, path)
    }

    /// Forgets the token for a server (after the server refused it).
    pub fn forget(&self, server: &str) -> std::io::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut all = self.read_all();
        if all.remove(server).is_some() {
            fs::write(path, serde_json::to_string_pretty(&Value::Object(all))?)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_tokens_per_server() {
        let dir = std::env::temp_dir().join(format!("stoa-identity-test-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let id = Identity::in_dir(&dir.join("nested"));
        assert_eq!(id.token("ws://a/ws"), None);
        id.store("ws://a/ws", "t1", "p1", "Ann").unwrap();
        id.store("ws://b/ws", "t2", "p2", "Bob").unwrap();
        assert_eq!(id.token("ws://a/ws").as_deref(), Some("t1"));
        assert_eq!(id.token("ws://b/ws").as_deref(), Some("t2"));
        id.forget("ws://a/ws").unwrap();
        assert_eq!(id.token("ws://a/ws"), None);
        assert_eq!(id.token("ws://b/ws").as_deref(), Some("t2"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            id.store("ws://c/ws", "t3", "p3", "Cy").unwrap();
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
}

//! Players, accounts and devices: who is signed in, with what, from where.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Addition: an account's name and password, to sign in with (`hello.login`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Credentials {
    /// The account's name, as typed.
    pub name: String,
    /// The password.
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub password: Password,
}

/// A password as it travels in a request: the plain text on the wire, never in a debug
/// print (messages may be logged at debug level, and the password must leave no trace but
/// its hash).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Password(pub String);

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("<password>")
    }
}

/// A player as shown in `welcome` (with all ratings).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PlayerInfo {
    /// Public id.
    pub id: String,
    /// Display name.
    pub name: String,
    /// Ratings by game kind (empty until ratings exist).
    #[serde(default)]
    pub ratings: serde_json::Map<String, Value>,
    /// Addition: the account this player claimed (its name), absent for a guest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
}

/// One device holding a player's token, as `devices` lists it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DeviceInfo {
    /// The device's id (for `device.revoke`).
    pub id: String,
    /// The label the device gave.
    pub label: String,
    /// When the device was linked (its token made), ms since the epoch.
    pub created_ms: u64,
    /// The device's last `hello`, ms since the epoch.
    pub last_seen_ms: u64,
    /// Whether this is the asking connection's device.
    pub current: bool,
}

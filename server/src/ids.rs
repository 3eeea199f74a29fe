//! Random identifiers, secrets and time.
//!
//! Why one place: ids, room codes and tokens have different requirements (public and short,
//! typeable, secret), and keeping their generators together keeps those choices visible.

use std::time::{SystemTime, UNIX_EPOCH};

use rand::rngs::OsRng;
use rand::RngCore;
use sha2::{Digest, Sha256};

/// Crockford's base32 alphabet: 32 letters without I, L, O, U, easy to read and type.
pub const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// Length of room codes (private codes need at least 10 characters).
pub const ROOM_CODE_LEN: usize = 10;

/// Defines an id newtype over `String`.
///
/// Why newtypes: a game id, a player id and a room code are all strings, and a function
/// taking three of them is easy to call in the wrong order; typed, the compiler checks it.
/// They serialise as the bare string (`#[serde(transparent)]`), so every JSON, Redis and
/// bus format is unchanged, and a map keyed by them is looked up with a `&str`
/// ([`std::borrow::Borrow`]).
macro_rules! string_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(
            Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash,
            serde::Serialize, serde::Deserialize,
        )]
        #[serde(transparent)]
        pub struct $name(String);

        impl $name {
            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }

            /// The id's text, owned (for a wire message or a record).
            pub fn into_string(self) -> String {
                self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl std::borrow::Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl From<String> for $name {
            fn from(s: String) -> Self {
                $name(s)
            }
        }

        impl From<&str> for $name {
            fn from(s: &str) -> Self {
                $name(s.to_string())
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<String> for $name {
            fn eq(&self, other: &String) -> bool {
                &self.0 == other
            }
        }
    };
}

string_id!(
    /// A game's public id (`g` and 12 base32 letters when made here).
    GameId
);
string_id!(
    /// A player's public id (`p` and 12 base32 letters when made here).
    PlayerId
);
string_id!(
    /// A room's code, normalised ([`normalize_code`]).
    RoomCode
);
string_id!(
    /// An arena's id (`a` and 12 base32 letters when made here).
    ArenaId
);

/// `len` letters of Crockford's base32 from the system's randomness: 5 bits a letter
/// (exactly uniform, 32 = 2^5), one read of 128 bits per 25 letters. A `gen_range` per
/// letter was a `getrandom` system call each: 12 for every player and game id.
fn random_base32(len: usize) -> String {
    let mut out = String::with_capacity(len);
    while out.len() < len {
        let mut bytes = [0u8; 16];
        OsRng.fill_bytes(&mut bytes);
        let mut bits = u128::from_le_bytes(bytes);
        for _ in 0..(len - out.len()).min(25) {
            out.push(CROCKFORD[(bits & 31) as usize] as char);
            bits >>= 5;
        }
    }
    out
}

/// A public player id (60 random bits, lower-case base32).
pub fn player_id() -> PlayerId {
    PlayerId(format!("p{}", random_base32(12).to_ascii_lowercase()))
}

/// A public game id (60 random bits, lower-case base32).
pub fn game_id() -> GameId {
    GameId(format!("g{}", random_base32(12).to_ascii_lowercase()))
}

/// A new arena id: `a` and 12 random base32 letters.
pub fn arena_id() -> ArenaId {
    ArenaId(format!("a{}", random_base32(12).to_ascii_lowercase()))
}

/// A number for a command forwarded to another node: unique within this process, and from
/// a random start so that a node restarted under the same id does not reuse the numbers of
/// its previous life (a late answer, or a logged command id, must never match a new one).
pub fn request_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: std::sync::OnceLock<AtomicU64> = std::sync::OnceLock::new();
    NEXT.get_or_init(|| AtomicU64::new(OsRng.next_u64() >> 12))
        .fetch_add(1, Ordering::Relaxed)
}

/// A node id for a cluster node started without `--node-id`.
pub fn node_id() -> String {
    format!("n{}", random_base32(8).to_ascii_lowercase())
}

/// A deployment id (`welcome.deployment`): `d` and 80 random bits, lower-case base32. Made
/// once per deployment (see [`crate::store::Store::deployment`]).
pub fn deployment_id() -> String {
    format!("d{}", random_base32(16).to_ascii_lowercase())
}

/// A room code: [`ROOM_CODE_LEN`] Crockford base32 letters (50 random bits).
pub fn room_code() -> String {
    random_base32(ROOM_CODE_LEN)
}

/// Normalises a typed room code: upper case, and Crockford's look-alikes (I, L → 1; O → 0).
pub fn normalize_code(code: &str) -> String {
    code.trim()
        .chars()
        .filter(|c| *c != '-')
        .map(|c| match c.to_ascii_uppercase() {
            'I' | 'L' => '1',
            'O' => '0',
            c => c,
        })
        .collect()
}

impl RoomCode {
    /// The room a person named by typing `typed`: its code normalised ([`normalize_code`]),
    /// so that lookups match forgivingly.
    pub fn typed(typed: &str) -> RoomCode {
        RoomCode(normalize_code(typed))
    }
}

/// A code as the person typed it, for an error message to echo back: trimmed, control
/// characters shown as `?`, and cut at 32 characters (a message must not carry whatever
/// was sent). Codes are matched by [`normalize_code`], but a message saying "no room
/// 'HELL0'" to someone who typed `hello` reads as if the server misheard.
pub fn typed_code(code: &str) -> String {
    const MAX: usize = 32;
    let code = code.trim();
    let mut out: String = code
        .chars()
        .take(MAX)
        .map(|c| if c.is_control() { '?' } else { c })
        .collect();
    if code.chars().nth(MAX).is_some() {
        out.push('…');
    }
    out
}

/// A one-time device link code: [`LINK_CODE_LEN`] Crockford base32 letters (40 random bits;
/// no I, L, O or U to misread).
pub fn link_code() -> String {
    random_base32(LINK_CODE_LEN)
}

/// Length of [`link_code`].
pub const LINK_CODE_LEN: usize = 8;

/// A device's id: the first 16 hex digits of its token hash (public: the hash of a
/// 256-bit token reveals nothing of it, and a prefix even less).
pub fn device_id(token_hash: &str) -> String {
    format!("d{}", &token_hash[..token_hash.len().min(16)])
}

/// A secret token: 256 random bits, hex.
pub fn token() -> String {
    let mut bytes = [0u8; 32];
    OsRng.fill_bytes(&mut bytes);
    hex(&bytes)
}

/// The SHA-256 of a token, hex: the only form in which tokens are stored.
pub fn token_hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[(b >> 4) as usize] as char);
        s.push(DIGITS[(b & 15) as usize] as char);
    }
    s
}

/// Milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_letter_comes_up_at_every_place() {
        for len in [8, 25, 26, 60] {
            let mut seen = vec![[false; 32]; len];
            let mut same_as_next = vec![0u32; len - 1];
            for _ in 0..2_000 {
                let code = random_base32(len);
                assert_eq!(code.len(), len);
                let code = code.as_bytes();
                for (i, b) in code.iter().enumerate() {
                    let letter = CROCKFORD.iter().position(|c| c == b).expect("base32");
                    seen[i][letter] = true;
                    if i + 1 < len && code[i + 1] == *b {
                        same_as_next[i] += 1;
                    }
                }
            }
            // 2,000 draws miss a given letter at a place with odds of about e^-62.
            assert!(
                seen.iter().all(|place| place.iter().all(|&s| s)),
                "length {len}"
            );
            // Neighbours are independent: equal in about 1 in 32 draws (62 of 2,000, 8 of
            // deviation), not always, as letters made from the same bits would be.
            assert!(same_as_next.iter().all(|&n| n < 150), "{same_as_next:?}");
        }
    }

    #[test]
    fn shapes() {
        assert_eq!(room_code().len(), 10);
        assert!(room_code().bytes().all(|b| CROCKFORD.contains(&b)));
        assert_eq!(token().len(), 64);
        assert_ne!(token(), token());
        assert_eq!(token_hash("a"), token_hash("a"));
        assert_eq!(normalize_code("abc-ilo"), "ABC110");
        assert_eq!(typed_code(" hello "), "hello");
        assert_eq!(typed_code("a\u{1b}[2J"), "a?[2J");
        assert_eq!(typed_code(&"x".repeat(40)), format!("{}…", "x".repeat(32)));
    }

    #[test]
    fn ids_are_written_as_bare_strings_and_found_by_str() {
        let id = GameId::from("g1");
        assert_eq!(serde_json::to_string(&id).unwrap(), "\"g1\"");
        assert_eq!(serde_json::from_str::<GameId>("\"g1\"").unwrap(), id);
        let mut map = std::collections::HashMap::new();
        map.insert(PlayerId::from("pa"), 1);
        assert_eq!(map.get("pa"), Some(&1));
        assert_eq!(RoomCode::from("ABC").to_string(), "ABC");
        assert!(id == "g1");
    }
}

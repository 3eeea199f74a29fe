//! Records as Redis values: a record is a hash whose every field holds one JSON value.
//!
//! Why one JSON value per field: a record round-trips through serde (new optional fields
//! need no migration, unknown ones are ignored) and stays readable with `HGETALL`, while a
//! single field (a player's name) can still be rewritten on its own.

use std::collections::HashMap;

use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::store::{StoreError, StoreResult};

/// A record as hash fields, each one JSON value.
pub(super) fn to_fields<T: Serialize>(record: &T) -> StoreResult<Vec<(String, String)>> {
    match serde_json::to_value(record) {
        Ok(Value::Object(m)) => Ok(m.into_iter().map(|(k, v)| (k, v.to_string())).collect()),
        Ok(_) => Err(StoreError::Corrupt("record is not an object".into())),
        Err(e) => Err(StoreError::Corrupt(e.to_string())),
    }
}

/// A record from hash fields (`None` for a missing key); unknown fields are ignored.
pub(super) fn from_fields<T: DeserializeOwned>(
    fields: HashMap<String, String>,
) -> StoreResult<Option<T>> {
    if fields.is_empty() {
        return Ok(None);
    }
    let mut m = Map::new();
    for (k, v) in fields {
        let value =
            serde_json::from_str(&v).map_err(|e| StoreError::Corrupt(format!("field {k}: {e}")))?;
        m.insert(k, value);
    }
    serde_json::from_value(Value::Object(m))
        .map(Some)
        .map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// A JSON value as stored (a log entry, a final document, a rating); bad JSON is
/// corruption, not an outage.
pub(super) fn decode<T: DeserializeOwned>(text: &str) -> StoreResult<T> {
    serde_json::from_str(text).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// A value as the JSON text stored for it.
pub(super) fn encode<T: Serialize>(v: &T) -> StoreResult<String> {
    serde_json::to_string(v).map_err(|e| StoreError::Corrupt(e.to_string()))
}

/// Field/value pairs as one flat argument list, as `HSET` and the scripts take them.
pub(super) fn flat(fields: Vec<(String, String)>) -> Vec<String> {
    fields.into_iter().flat_map(|(k, v)| [k, v]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::PlayerRecord;

    #[test]
    fn fields_round_trip() {
        let p = PlayerRecord {
            id: "pabc".into(),
            name: "Zoë \"x\"".into(),
            token_hash: "00ff".into(),
            created_ms: 7,
            bot: false,
            account: None,
        };
        let fields: HashMap<String, String> = to_fields(&p).unwrap().into_iter().collect();
        assert_eq!(fields["name"], "\"Zoë \\\"x\\\"\"");
        assert_eq!(fields["created_ms"], "7");
        let back: PlayerRecord = from_fields(fields).unwrap().unwrap();
        assert_eq!(back, p);
        assert_eq!(from_fields::<PlayerRecord>(HashMap::new()).unwrap(), None);
    }
}

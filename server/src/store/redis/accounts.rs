//! Claimed accounts (see [`AccountRecord`]).
//!
//! Keys: `P:account:<sha256 of the folded name>` (string: the JSON record; hashed so a name
//! in any script stays a safe key) and the `account` field of the player's hash.
//!
//! Why no script spans the two: they live in different hash slots. The name is taken
//! first (`SET NX`: two players racing for one name cannot both get it), then the player's
//! field is written. A crash between leaves a name that signs in as its player while the
//! player's field is unset; the same player claiming again completes it.

use redis::AsyncCommands;

use super::encoding::{decode, encode};
use super::keys::key_safe;
use super::RedisStore;
use crate::ids;
use crate::store::{AccountRecord, StoreError, StoreResult};

impl RedisStore {
    fn account_key(&self, name_key: &str) -> String {
        self.key(&["account", &ids::token_hash(name_key)])
    }

    pub(super) async fn claim_account_record(&self, account: &AccountRecord) -> StoreResult<bool> {
        if !key_safe(&account.player_id) {
            return Err(StoreError::Conflict("malformed player id".into()));
        }
        let mut conn = self.conn();
        let player_key = self.player_key(&account.player_id, None);
        let claimed: Option<String> = self.run(conn.hget(&player_key, "account")).await?;
        if claimed.is_some() {
            return Ok(false);
        }
        let key = self.account_key(&account.name_key);
        let set: Option<String> = self
            .run(
                redis::cmd("SET")
                    .arg(&key)
                    .arg(encode(account)?)
                    .arg("NX")
                    .query_async(&mut conn),
            )
            .await?;
        if set.is_none() {
            // Taken: by another player, or by this one in a claim a crash cut short.
            let Some(existing) = self.account_record(&account.name_key).await? else {
                return Ok(false);
            };
            if existing.player_id != account.player_id {
                return Ok(false);
            }
            let _: () = self.run(conn.set(&key, encode(account)?)).await?;
        }
        let _: i64 = self
            .run(conn.hset(&player_key, "account", encode(&account.name)?))
            .await?;
        Ok(true)
    }

    pub(super) async fn account_record(
        &self,
        name_key: &str,
    ) -> StoreResult<Option<AccountRecord>> {
        let mut conn = self.conn();
        let text: Option<String> = self.run(conn.get(self.account_key(name_key))).await?;
        text.map(|t| decode(&t)).transpose()
    }

    pub(super) async fn set_account_password(
        &self,
        name_key: &str,
        password_hash: &str,
    ) -> StoreResult<()> {
        let Some(mut account) = self.account_record(name_key).await? else {
            return Err(StoreError::Conflict(format!("no account {name_key}")));
        };
        account.password_hash = password_hash.to_string();
        let mut conn = self.conn();
        let _: () = self
            .run(conn.set(self.account_key(name_key), encode(&account)?))
            .await?;
        Ok(())
    }
}

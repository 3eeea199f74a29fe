//! Accounts: a claimed name and a password that sign in as one player from any device
//! (Nakama's device plus email accounts, lichess's accounts).
//!
//! Why a password on top of device tokens: a token lives on one device; a player whose only
//! device is lost, wiped or replaced had no way back to their ratings and history. The
//! password is kept only as its argon2id hash (OWASP's parameters: 19 MiB, 2 passes, 1
//! lane, the `argon2` crate's defaults), hashed and checked on the blocking pool (tens of
//! milliseconds of CPU each), never logged and never sent back.
//!
//! Why every refusal of a sign-in looks the same: "wrong name or password", after the same
//! work (an unknown name is checked against a hash of a random password), so the answer
//! and its timing never tell whether a name exists. Attempts are counted per name and per
//! address across the deployment ([`Quotas::allow_attempt`]) before any hashing.

use std::net::IpAddr;
use std::sync::{Arc, OnceLock};

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use stoa_protocol::wire::ErrorCode;

use crate::domain::account::{self, Refused};
use crate::error::ApiError;
use crate::game::capabilities::timed_store_call;
use crate::metrics::Metrics;
use crate::services::topology::Topology;
use crate::store::{AccountRecord, PlayerRecord, Store};

/// The window of the sign-in quotas.
const ATTEMPT_WINDOW_MS: u64 = 60_000;

/// Claims, sign-ins and password changes.
pub struct Accounts {
    store: Arc<dyn Store>,
    metrics: Arc<Metrics>,
    /// The deployment-wide attempt counters.
    quotas: Arc<dyn Topology>,
    per_name: u32,
    per_ip: u32,
}

impl std::fmt::Debug for Accounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Accounts").finish_non_exhaustive()
    }
}

/// The one answer to a refused sign-in.
fn wrong() -> ApiError {
    ApiError::new(ErrorCode::Unauthorized, "wrong name or password")
}

fn refused(r: Refused) -> ApiError {
    ApiError::new(ErrorCode::BadRequest, r.to_string())
}

/// An argon2id hash of `password` (PHC string), made on the blocking pool.
async fn hash(password: String) -> Result<String, ApiError> {
    tokio::task::spawn_blocking(move || {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(password.as_bytes(), &salt)
            .map(|h| h.to_string())
    })
    .await
    .ok()
    .and_then(Result::ok)
    .ok_or_else(|| {
        ApiError::new(
            ErrorCode::Unavailable,
            "could not hash the password; try again",
        )
    })
}

/// Whether `password` matches `phc`, checked on the blocking pool. `None` checks against
/// a hash no password matches, at the same cost (an unknown name).
async fn verify(password: String, phc: Option<String>) -> bool {
    tokio::task::spawn_blocking(move || {
        let phc = phc.unwrap_or_else(|| decoy().to_string());
        let Ok(parsed) = PasswordHash::new(&phc) else {
            return false;
        };
        Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
    .await
    .unwrap_or(false)
}

/// A hash of a random password with the same parameters as every real one: what an
/// unknown name is checked against, so it costs what a wrong password costs.
fn decoy() -> &'static str {
    static DECOY: OnceLock<String> = OnceLock::new();
    DECOY.get_or_init(|| {
        let salt = SaltString::generate(&mut OsRng);
        Argon2::default()
            .hash_password(crate::ids::token().as_bytes(), &salt)
            .map(|h| h.to_string())
            .unwrap_or_default()
    })
}

impl Accounts {
    /// Accounts over the store, counting attempts through the deployment's quotas.
    pub fn new(
        store: Arc<dyn Store>,
        metrics: Arc<Metrics>,
        quotas: Arc<dyn Topology>,
        per_name: u32,
        per_ip: u32,
    ) -> Self {
        Accounts {
            store,
            metrics,
            quotas,
            per_name,
            per_ip,
        }
    }

    /// Claims an account named `name` for `player`, who becomes that name. `bad_request`
    /// for a name or password against the rules; `conflict` when the player has an account
    /// or the name is another's.
    pub async fn claim(
        &self,
        player: &PlayerRecord,
        name: &str,
        password: &str,
    ) -> Result<AccountRecord, ApiError> {
        let name = account::account_name(name).map_err(refused)?;
        account::password(password).map_err(refused)?;
        if let Some(mine) = &player.account {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                format!("you have claimed the account '{mine}' already"),
            ));
        }
        let name_key = account::name_key(&name);
        if self.find(&name_key).await?.is_some() {
            return Err(taken(&name));
        }
        let record = AccountRecord {
            name_key,
            name: name.clone(),
            player_id: player.id.clone(),
            password_hash: hash(password.to_string()).await?,
            created_ms: crate::ids::now_ms(),
        };
        if !timed_store_call(&self.metrics, self.store.claim_account(&record)).await? {
            // Raced: the name went to someone else, or this player claimed another meanwhile.
            return Err(taken(&name));
        }
        timed_store_call(&self.metrics, self.store.rename_player(&player.id, &name)).await?;
        Ok(record)
    }

    /// The player an account name and password sign in as, counting the attempt against the
    /// name's and the address's quotas first. Every refusal is [`wrong`] or `rate_limited`.
    pub async fn sign_in(
        &self,
        name: &str,
        password: &str,
        ip: IpAddr,
    ) -> Result<PlayerRecord, ApiError> {
        let name_key = account::name_key(name);
        let by_name = self
            .quotas
            .allow_attempt(
                &format!("login-name:{name_key}"),
                self.per_name,
                ATTEMPT_WINDOW_MS,
            )
            .await;
        let by_ip = self
            .quotas
            .allow_attempt(&format!("login-ip:{ip}"), self.per_ip, ATTEMPT_WINDOW_MS)
            .await;
        if !by_name || !by_ip {
            return Err(ApiError::new(
                ErrorCode::RateLimited,
                "too many sign-in attempts: wait a minute and try again",
            ));
        }
        let account = self.find(&name_key).await?;
        let phc = account.as_ref().map(|a| a.password_hash.clone());
        let ok = verify(password.to_string(), phc).await;
        let Some(account) = account.filter(|_| ok) else {
            tracing::info!(%ip, "sign-in refused");
            return Err(wrong());
        };
        let player = timed_store_call(&self.metrics, self.store.player(&account.player_id))
            .await?
            .ok_or_else(wrong)?;
        tracing::info!(player = %player.id, "signed in");
        Ok(player)
    }

    /// Changes `player`'s password, given the current one (`unauthorized` "wrong password"
    /// otherwise; `conflict` for a guest).
    pub async fn change_password(
        &self,
        player: &PlayerRecord,
        current: &str,
        new: &str,
    ) -> Result<(), ApiError> {
        let Some(name) = &player.account else {
            return Err(ApiError::new(
                ErrorCode::Conflict,
                "you have no account yet: claim one first",
            ));
        };
        account::password(new).map_err(refused)?;
        let name_key = account::name_key(name);
        let record = self.find(&name_key).await?;
        let phc = record.as_ref().map(|a| a.password_hash.clone());
        if !verify(current.to_string(), phc).await {
            return Err(ApiError::new(ErrorCode::Unauthorized, "wrong password"));
        }
        let new_hash = hash(new.to_string()).await?;
        timed_store_call(&self.metrics, self.store.set_password(&name_key, &new_hash)).await?;
        tracing::info!(player = %player.id, "password changed");
        Ok(())
    }

    /// `conflict` when `name` (a display name) is the name of an account other than
    /// `player_id`'s: nobody passes for a claimed player.
    pub async fn check_display_name(
        &self,
        name: &str,
        player_id: Option<&str>,
    ) -> Result<(), ApiError> {
        let key = account::name_key(name);
        match self.find(&key).await? {
            Some(a) if Some(a.player_id.as_str()) != player_id => Err(ApiError::new(
                ErrorCode::Conflict,
                format!("the name '{name}' belongs to a claimed account: sign in, or choose another name"),
            )),
            _ => Ok(()),
        }
    }

    async fn find(&self, name_key: &str) -> Result<Option<AccountRecord>, ApiError> {
        timed_store_call(&self.metrics, self.store.account(name_key)).await
    }
}

fn taken(name: &str) -> ApiError {
    ApiError::new(
        ErrorCode::Conflict,
        format!("the account name '{name}' is taken"),
    )
}

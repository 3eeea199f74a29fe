//! What the HTTP handlers share.

use std::sync::Arc;

use crate::net::connection::ConnGuard;
use crate::services::hub::Hub;

/// What every handler may use: the node's services, and the guard each live connection
/// holds (the server waits for all to close). Its own module so that the router and the
/// API handlers both use it without depending on each other.
#[derive(Clone)]
pub(super) struct AppState {
    pub(super) hub: Arc<Hub>,
    pub(super) guard: ConnGuard,
}

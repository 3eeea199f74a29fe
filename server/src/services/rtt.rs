//! Round trips of the server's websocket pings, for lag compensation.
//!
//! Each ping ([`crate::net::frame::Frame::stamped_ping`]) carries the server time it was sent at (8 bytes, big-endian milliseconds of
//! the hub's [`TimeSource`]); the pong echoes it (RFC 6455 requires the same payload), so a
//! pong alone says how long the round trip took, with no per-connection bookkeeping.
//!
//! Why samples are routed to the game actors: each player has one
//! [`stoa_protocol::clock::LagCompensator`] per game, owned by the actor like the rest of
//! the game; a sample is one small command to each live game the player sits in (a few per
//! player every ping interval), sent with `try_send` so a busy game never slows the
//! connection (a lost sample is harmless). All of a player's connections feed the same
//! estimate.
//!
//! A client can forge or delay pongs; that only moves its own estimate, which the
//! compensator clamps (10 s per sample) and caps by its quota. Payloads that are not
//! 8 bytes, or that claim a time in the future, are ignored.

use stoa_protocol::clock::TimeSource;

use crate::game::games::Games;
use crate::game::Command;
use crate::ids::PlayerId;

/// The round trip of a pong received at `now_ms`, or `None` when its payload is not one
/// of our timestamps.
pub fn rtt_of_pong(payload: &[u8], now_ms: u64) -> Option<u64> {
    let sent = u64::from_be_bytes(payload.try_into().ok()?);
    now_ms.checked_sub(sent)
}

/// A pong arrived on a connection of `player_id` (`None` before `hello`: not routed):
/// forwards its round trip to the player's live games.
pub fn on_pong(time: &dyn TimeSource, games: &Games, player_id: Option<&PlayerId>, payload: &[u8]) {
    let Some(player_id) = player_id else { return };
    let Some(rtt_ms) = rtt_of_pong(payload, time.now_ms()) else {
        return;
    };
    tracing::trace!(rtt_ms, "pong");
    for game in games.of_player(player_id) {
        let _ = game.tx.try_send(Command::Rtt {
            player_id: player_id.clone(),
            rtt_ms,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn payload_round_trip() {
        let p = 1_700_000_000_123u64.to_be_bytes();
        assert_eq!(p.len(), 8);
        assert_eq!(rtt_of_pong(&p, 1_700_000_000_200), Some(77));
        assert_eq!(rtt_of_pong(&p, 1_700_000_000_123), Some(0));
        // From the future, or not ours.
        assert_eq!(rtt_of_pong(&p, 1_700_000_000_000), None);
        assert_eq!(rtt_of_pong(b"", 5), None);
        assert_eq!(rtt_of_pong(b"hello", 5), None);
    }
}

//! Matchmaking pairing waves: being implemented.

//! The Stoa game server as a library, so that tests and benchmarks can drive its parts.
#![forbid(unsafe_code)]

pub mod pairing;
pub mod rating;

//! Wire messages of PROTOCOL.md version 1: being implemented.

//! Glicko-2 ratings: being implemented.

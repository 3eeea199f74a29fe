//! Clock maths (time controls, turn accounting, lag compensation): being implemented.

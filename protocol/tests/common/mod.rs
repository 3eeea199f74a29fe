//! What the engines' property tests share.

use proptest::prelude::*;
use stoa_protocol::Game;

/// Replaces the members `after.view_changes(before)` reports in `before.view()`: that gives
/// exactly `after.view()`, and every reported member did change (nothing missing, nothing
/// extra).
pub fn check_view_changes<G: Game>(before: &G, after: &G) -> Result<(), TestCaseError> {
    let changes = after
        .view_changes(before)
        .expect("the engine reports its changes");
    let mut view = before.view();
    for (pointer, value) in changes {
        let slot = view.pointer_mut(&pointer).expect("an existing member");
        prop_assert_ne!(&*slot, &value, "{} did not change", pointer);
        *slot = value;
    }
    prop_assert_eq!(view, after.view());
    Ok(())
}

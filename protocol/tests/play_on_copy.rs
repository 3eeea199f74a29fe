//! `AnyGame::play_on_copy` (one copy, one play: how a server decides a move it then keeps)
//! must give exactly what copying and `play_tracked` give, and leave the game untouched.

use serde_json::json;
use stoa_protocol::{AnyGame, KINDS};

/// A small deterministic generator: the same games on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn check_game(mut game: Box<dyn AnyGame>, rng: &mut Lcg, max_plies: usize) -> usize {
    let mut plies = 0;
    while plies < max_plies {
        let Some(mv) = game.pick_legal(&mut |n| rng.below(n)) else {
            break;
        };
        let before = game.position();
        let (copy, tracked) = game.play_on_copy(&mv).expect("a legal move plays");
        assert_eq!(game.position(), before, "play_on_copy changed the game");
        let mut reference = game.clone_box();
        let expected = reference.play_tracked(&mv).unwrap();
        assert_eq!(copy.position(), reference.position(), "{mv} from {before}");
        assert_eq!(tracked.played, expected.played, "{mv} from {before}");
        assert_eq!(
            tracked.view_changes, expected.view_changes,
            "{mv} from {before}"
        );
        assert_eq!(copy.to_act(), reference.to_act());
        // A refused action: an error, and nothing changes.
        assert!(game.play_on_copy("not-a-move").is_err());
        assert_eq!(game.position(), before);
        game = copy;
        plies += 1;
    }
    plies
}

#[test]
fn play_on_copy_matches_play_tracked_in_every_kind() {
    let mut rng = Lcg(7);
    for kind in KINDS {
        let mut plies = 0;
        for _ in 0..20 {
            plies += check_game(kind.start(&json!({})).unwrap(), &mut rng, 200);
        }
        assert!(plies > 100, "{}: only {plies} plies checked", kind.id);
    }
}

use super::*;
use crate::ids::GameId;
use serde_json::json;

fn now_ms() -> u64 {
    stoa_protocol::clock::SystemTimeSource.now_ms()
}

/// A running arena as stored: `ada` and `bob` joined, and a round paired (game
/// `gnever`) whose game was never created, as when the node is killed between storing
/// the pairing and creating the game.
fn paired_but_never_created() -> ArenaState {
    let now = now_ms();
    let setup = crate::domain::setup::GameSetup::parse(
        "unane",
        &json!({}),
        Some(&json!({"kind":"fischer","initial_ms":15000,"increment_ms":0})),
    )
    .unwrap();
    let mut state = ArenaState::new(state::Settings {
        id: "akilled".into(),
        name: "killed".into(),
        setup,
        rated: false,
        visibility: Visibility::Public,
        code: None,
        creator: ("pada".into(), "ada".into()),
        starts_at: now - 5_000,
        ends_at: now + 600_000,
        bots: false,
        berserk: false,
        min_draw_plies: 0,
    });
    state.join(&"pada".into(), "ada", 1500, false);
    state.join(&"pbob".into(), "bob", 1500, false);
    let pairs = state.pair_round(now - 1_000, &|_| true, &mut || "gnever".into());
    assert_eq!(pairs.len(), 1);
    state
}

/// The kill window of a pairing round: the round is stored (and watchers saw its game
/// `playing`), the node dies before the game exists. On recovery the game stays in the
/// document, `aborted`, scoring nothing, and its players are free again.
#[tokio::test]
async fn a_paired_game_never_created_ends_aborted_on_recovery() {
    let store = Arc::new(crate::store::memory::MemoryStore::new());
    let state = paired_but_never_created();
    assert_eq!(
        state.document(now_ms())["games"]["gnever"]["status"],
        "playing"
    );
    assert!(store
        .save_arena(&"akilled".into(), 1, true, &state.to_stored(4))
        .await
        .unwrap());
    let (_tx, rx) = watch::channel(false);
    let hub = crate::services::hub::Hub::new(crate::config::Config::default(), store, rx);
    hub.arenas.discover().await.expect("recovered");
    let doc = hub
        .arenas
        .document(&"akilled".into(), None)
        .await
        .unwrap()
        .expect("the arena");
    let game = &doc["games"]["gnever"];
    assert_eq!(game["status"], "aborted", "{doc}");
    assert_eq!(game["winner"], Value::Null);
    assert_eq!(game["points"], json!({}));
    for p in doc["players"].as_array().unwrap() {
        assert_eq!(p["games"], 0, "an abort scores nothing: {doc}");
        assert_ne!(p["playing"], "gnever", "free again: {doc}");
    }
}

/// The same game aborted twice (recovery, then a failed start) is aborted once; the
/// players are free, each one's last opponent the other (as after any abort).
#[test]
fn an_unstarted_game_is_aborted_once() {
    let mut state = paired_but_never_created();
    assert!(state.abort_unstarted(&"gnever".into()));
    assert!(!state.abort_unstarted(&"gnever".into()));
    assert!(!state.abort_unstarted(&"gother".into()));
    for (p, other) in state.players.iter().zip(["pbob", "pada"]) {
        assert_eq!(
            (
                p.playing.as_ref().map(GameId::as_str),
                p.last_opponent.as_ref().map(PlayerId::as_str),
            ),
            (None, Some(other))
        );
    }
    let back = ArenaState::from_stored(&state.to_stored(9)).unwrap();
    assert_eq!(ArenaState::stored_seq(&state.to_stored(9)), 9);
    assert_eq!(back.document(1)["games"]["gnever"]["status"], "aborted");
}

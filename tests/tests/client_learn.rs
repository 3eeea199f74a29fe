//! `stoa learn <kind>` driven to the end over its standard input: every step's goal and
//! board, a wrong try answered with the step's hint, the right move moving on, the progress
//! kept in the config directory, and playing on from a step against the computer.

use std::io::Write;
use std::process::{Command, Stdio};

use stoa_protocol::lessons::{self, Lesson};
use stoa_tests::temp_dir::TempDir;

/// A right and a wrong move of each step (found with the engines, as `stoa` finds them).
fn moves(lesson: &Lesson) -> Vec<(String, String)> {
    let kind = lesson.kind.as_str();
    lesson
        .steps
        .iter()
        .map(|step| {
            let legal = step.game(kind).expect("step").legal_notations();
            let right = legal.iter().find(|m| step.attempt(kind, m).unwrap().done);
            let wrong = legal.iter().find(|m| !step.attempt(kind, m).unwrap().done);
            (right.unwrap().clone(), wrong.unwrap().clone())
        })
        .collect()
}

/// Runs `stoa learn <args>` with `input` on its standard input; returns its output.
fn learn(config: &TempDir, args: &[&str], input: &str) -> String {
    stoa_tests::build_binaries();
    let mut child = Command::new(stoa_tests::binary("stoa"))
        .arg("learn")
        .args(args)
        .env("STOA_CONFIG_DIR", &config.0)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run stoa learn");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(input.as_bytes())
        .expect("write the moves");
    let out = child.wait_with_output().expect("stoa learn ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn stoa_learn_staku_is_driven_to_the_end() {
    let config = TempDir::new("learn-staku");
    let lesson = lessons::lesson("staku").unwrap();
    let mut input = String::new();
    for (right, wrong) in moves(&lesson) {
        input.push_str(&format!("{wrong}\nnot-a-move\n{right}\n\n"));
    }
    let out = learn(&config, &["staku"], &input);
    let n = lesson.steps.len();
    for (i, step) in lesson.steps.iter().enumerate() {
        let heading = format!("== Step {} of {n}: {} ==", i + 1, step.title);
        assert!(out.contains(&heading), "{heading} missing:\n{out}");
        assert!(out.contains(&format!("Goal: {}", step.goal)), "{out}");
        assert!(out.contains(&format!("hint: {}", step.hints[0])), "{out}");
        assert!(out.contains(&step.success), "{out}");
    }
    assert!(out.contains("does not reach the goal"), "{out}");
    assert!(
        out.contains("not played: unparsable move 'not-a-move'"),
        "{out}"
    );
    // The board is drawn as in plain mode: Staku's cell names and palaces.
    assert!(out.contains("g1#."), "{out}");
    assert!(
        out.trim_end()
            .ends_with(&format!("Lesson complete: {n} of {n} steps done.")),
        "{out}"
    );
    // The progress is kept: the next run starts after the last step, and --again forgets.
    let kept = std::fs::read_to_string(config.0.join("learn.json")).expect("progress");
    for step in &lesson.steps {
        assert!(kept.contains(&step.id), "{kept}");
    }
    let again = learn(&config, &["staku"], "");
    assert!(again.contains("Lesson complete: 7 of 7"), "{again}");
    let fresh = learn(&config, &["staku", "--again"], "quit\n");
    assert!(fresh.contains("== Step 1 of 7"), "{fresh}");
}

#[test]
fn a_step_is_played_on_against_the_computer() {
    let config = TempDir::new("learn-play-on");
    let lesson = lessons::lesson("unane").unwrap();
    let (right, _) = moves(&lesson)[0].clone();
    // Step 1, then play on: the computer (white) answers, then we stop and quit.
    let out = learn(
        &config,
        &["unane", "--level", "1"],
        &format!("{right}\nplay\nstop\nquit\n"),
    );
    assert!(out.contains("done: b2xc2"), "{out}");
    assert!(
        out.contains("You play black against the computer (level 1)"),
        "{out}"
    );
    assert!(out.contains("computer plays "), "{out}");
}

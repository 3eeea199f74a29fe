//! Akron: a plan view of the pyramid. Level-0 holes sit on even plan coordinates; a ball on
//! level k sits at plan `(2i+k, 2j+k)`, so raised balls appear between the holes they rest
//! on. Each plan point shows its topmost ball with one apostrophe per level (`V'`, `H"` for
//! two levels, `V3` beyond); links between same-colour neighbours are drawn at their
//! midpoints (`---`, ` | `), with `x` for a cut link. Row 1 is at the bottom.

use std::collections::HashMap;

use serde_json::Value;

use super::{marked, span, Drawing, Line, Sides, Tone};

struct Ball<'a> {
    level: i64,
    side: &'a str,
    name: &'a str,
}

struct Link<'a> {
    level: i64,
    side: &'a str,
    horizontal: bool,
    cut: bool,
}

fn plan_of(b: &Value) -> Option<(i64, i64)> {
    let p = b["plan"].as_array()?;
    Some((p.first()?.as_i64()?, p.get(1)?.as_i64()?))
}

/// The plan view's contents: the topmost ball on each plan point and the topmost link at
/// each midpoint, on a grid of `span` points a side.
struct PlanView<'a> {
    span: i64,
    top: HashMap<(i64, i64), Ball<'a>>,
    links: HashMap<(i64, i64), Link<'a>>,
}

impl<'a> PlanView<'a> {
    /// The plan view of a position's `balls` and `links`.
    fn of(state: &'a Value) -> Option<PlanView<'a>> {
        let n = state["size"].as_i64()?;
        let mut top: HashMap<(i64, i64), Ball> = HashMap::new();
        let mut plan_by_name: HashMap<&str, (i64, i64)> = HashMap::new();
        for b in state["balls"].as_array()? {
            let Some(plan) = plan_of(b) else { continue };
            let ball = Ball {
                level: b["level"].as_i64().unwrap_or(0),
                side: b["side"].as_str().unwrap_or("?"),
                name: b["point"].as_str().unwrap_or(""),
            };
            plan_by_name.insert(ball.name, plan);
            if top.get(&plan).is_none_or(|t| t.level < ball.level) {
                top.insert(plan, ball);
            }
        }
        let mut links: HashMap<(i64, i64), Link> = HashMap::new();
        for l in state["links"].as_array().map(Vec::as_slice).unwrap_or(&[]) {
            let (Some(a), Some(b)) = (
                l["a"].as_str().and_then(|a| plan_by_name.get(a)),
                l["b"].as_str().and_then(|b| plan_by_name.get(b)),
            ) else {
                continue;
            };
            let mid = ((a.0 + b.0) / 2, (a.1 + b.1) / 2);
            let link = Link {
                level: l["level"].as_i64().unwrap_or(0),
                side: l["side"].as_str().unwrap_or("?"),
                horizontal: a.1 == b.1,
                cut: l["cut"].as_bool().unwrap_or(false),
            };
            if links.get(&mid).is_none_or(|m| m.level < link.level) {
                links.insert(mid, link);
            }
        }
        Some(PlanView {
            span: 2 * n - 1,
            top,
            links,
        })
    }

    /// Plan row `py`: rank labels on the rows of holes, then per plan point its ball, link,
    /// hole or nothing.
    fn row(&self, py: i64, sides: &Sides, last: &[String]) -> Line {
        let mut line: Line = Vec::new();
        if py % 2 == 0 {
            line.push(span(format!("{:>3} ", py / 2 + 1), Tone::Dim));
        } else {
            line.push(span("    ", Tone::Plain));
        }
        for px in 0..self.span {
            if let Some(b) = self.top.get(&(px, py)) {
                let level_mark = match b.level {
                    0 => " ".to_string(),
                    1 => "'".to_string(),
                    2 => "\"".to_string(),
                    k => k.to_string(),
                };
                let mark = last.iter().any(|l| l.eq_ignore_ascii_case(b.name));
                line.push(span(" ", Tone::Plain));
                line.push(marked(
                    format!("{}{level_mark}", Sides::letter(b.side)),
                    sides.tone(b.side),
                    mark,
                ));
            } else if let Some(l) = self.links.get(&(px, py)) {
                let text = match (l.horizontal, l.cut) {
                    (true, false) => "---",
                    (true, true) => "-x-",
                    (false, false) => " | ",
                    (false, true) => " x ",
                };
                line.push(span(
                    text,
                    if l.cut { Tone::Cut } else { sides.tone(l.side) },
                ));
            } else if px % 2 == 0 && py % 2 == 0 {
                line.push(span(" . ", Tone::Dim));
            } else {
                line.push(span("   ", Tone::Plain));
            }
        }
        if py % 2 == 0 {
            line.push(span(format!(" {}", py / 2 + 1), Tone::Dim));
        }
        line
    }

    /// The file letters under the board.
    fn files(&self) -> Line {
        let mut files: Line = vec![span("    ", Tone::Plain)];
        for px in 0..self.span {
            files.push(span(
                if px % 2 == 0 {
                    format!(" {} ", (b'A' + (px / 2) as u8) as char)
                } else {
                    "   ".into()
                },
                Tone::Dim,
            ));
        }
        files
    }
}

/// Draws an Akron position.
pub(super) fn draw(state: &Value, sides: &Sides, last: &[String]) -> Option<Drawing> {
    let plan = PlanView::of(state)?;
    let mut board: Vec<Line> = (0..plan.span)
        .rev()
        .map(|py| plan.row(py, sides, last))
        .collect();
    board.push(plan.files());
    let (first, second) = (
        sides.0.first().cloned().unwrap_or_default(),
        sides.0.get(1).cloned().unwrap_or_default(),
    );
    Some(Drawing {
        board,
        facts: facts(state, sides),
        legend: format!(
            "{} {first} joins bottom-top, {} {second} joins left-right\n' raised 1 level, \" 2 levels; --- | links, x cut link",
            Sides::letter(&first),
            Sides::letter(&second)
        ),
    })
}

/// The facts under the board: piles, who is connected, the cut links, the swap.
fn facts(state: &Value, sides: &Sides) -> Vec<String> {
    let mut facts = vec![format!(
        "piles: {}",
        super::per_side(&state["piles"], sides)
    )];
    let connected: Vec<&str> = sides
        .0
        .iter()
        .filter(|s| state["connected"][s.as_str()].as_bool() == Some(true))
        .map(String::as_str)
        .collect();
    if !connected.is_empty() {
        facts.push(format!("connected: {}", connected.join(", ")));
    }
    // A cut under a prevailing crossing pair is hidden by the pair drawn on top: name it.
    let cut: Vec<String> = state["links"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .filter(|l| l["cut"].as_bool() == Some(true))
        .map(|l| {
            format!(
                "{}-{} ({})",
                l["a"].as_str().unwrap_or("?"),
                l["b"].as_str().unwrap_or("?"),
                l["side"].as_str().unwrap_or("?")
            )
        })
        .collect();
    if !cut.is_empty() {
        facts.push(format!("cut links: {}", cut.join(", ")));
    }
    if state["swap_available"].as_bool() == Some(true) {
        facts.push("swap available (type: swap)".into());
    }
    facts
}

#[cfg(test)]
mod tests {
    use super::super::draw;
    use super::super::testutil::{text, view};
    use serde_json::json;

    #[test]
    fn draws_raised_balls_and_links() {
        // Vert fills A1 B1 A2 B2 C1 (horz elsewhere), then moves C1 up onto A2' (resting on A1 B1 A2 B2).
        let (state, sides) = view(
            "akron",
            json!({"size": 4}),
            &[
                "A1", "D4", "B1", "D3", "A2", "C4", "B2", "D2", "C1", "D1", "C1-A2'",
            ],
        );
        let d = draw("akron", &state, &sides, &["a2'".into()]);
        let t = text(&d);
        let lines: Vec<&str> = t.lines().collect();
        // 7 plan rows plus the file line.
        assert_eq!(lines.len() - d.facts.len(), 8, "{t}");
        assert!(lines[7].contains("A     B     C     D"), "{t}");
        // Row 1 (plan row 0) holds A1 and B1 joined by a link.
        assert!(lines[6].starts_with("  1  V --- V"), "{t}");
        // The raised ball sits between rows 1 and 2 and columns A and B.
        assert!(lines[5].contains("V'"), "{t}");
        assert!(lines[0].starts_with("  4  .     .     H --- H"), "{t}");
        assert!(d.board[5].iter().any(|s| s.mark), "{t}");
    }

    #[test]
    fn draws_cut_links_and_raised_balls_from_a_position() {
        // Vert's raised pair A2'-B2' crosses above horz's pair B1-B2, whose link is cut.
        let k = stoa_protocol::kind("akron").unwrap();
        let g = k
            .from_position(&json!({"size": 4}), "4 v 2,6 8 A1,A2,C1,C2,A2',B2' B1,B2")
            .unwrap();
        let state = super::super::drawable("akron", &json!({"size": 4}), &g.view());
        let sides = super::super::Sides(vec!["vert".into(), "horz".into()]);
        let d = draw("akron", &state, &sides, &[]);
        let t = text(&d);
        assert!(t.contains("V'"), "{t}");
        // Every link the view reports as cut is drawn with an x.
        let cut = state["links"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|l| l["cut"] == true)
            .count();
        assert!(cut > 0, "the position has a cut link");
        let lines: Vec<&str> = t.lines().collect();
        // Plan row 1 (between ranks 1 and 2): the raised pair's link covers the cut one.
        assert!(lines[5].contains("V'--- V'"), "{t}");
        assert_eq!(cut, 1);
        assert!(t.contains("cut links: B1-B2 (horz)"), "{t}");
    }
}

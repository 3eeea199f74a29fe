//! The two text formats `GET /metrics` speaks, chosen by the scraper's `Accept` header.
//!
//! Why two: the contract promises "Prometheus text format" (version 0.0.4,
//! `text/plain`), which is what `curl` and most tools read; Prometheus itself asks for
//! OpenMetrics first, which is what the registry renders. The 0.0.4 text is derived from
//! the OpenMetrics text rather than rendered twice: the two differ only in the `# EOF`
//! line, `# UNIT` lines, and a counter's name, which OpenMetrics writes without `_total` in
//! its `# HELP`/`# TYPE` lines and 0.0.4 writes as its samples are named.

use std::collections::HashSet;

/// OpenMetrics, as the registry renders it.
pub const OPENMETRICS: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Prometheus's plain text exposition format.
pub const PROMETHEUS_TEXT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// Whether a scraper's `Accept` header asks for OpenMetrics (Prometheus does; it lists the
/// plain format after it). Anything else — no header, `*/*`, `text/plain` — gets the plain
/// format.
pub fn wants_openmetrics(accept: Option<&str>) -> bool {
    accept.is_some_and(|a| {
        a.split(',').any(|part| {
            let mut params = part.split(';');
            let media = params.next().unwrap_or("").trim();
            // A quality of 0 means "not acceptable".
            let refused = params.any(|p| {
                p.trim()
                    .strip_prefix("q=")
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q == 0.0)
            });
            media.eq_ignore_ascii_case("application/openmetrics-text") && !refused
        })
    })
}

/// The Prometheus 0.0.4 text of an OpenMetrics exposition.
pub fn prometheus_text(openmetrics: &str) -> String {
    let counters: HashSet<&str> = openmetrics
        .lines()
        .filter_map(|l| l.strip_prefix("# TYPE ")?.strip_suffix(" counter"))
        .collect();
    let mut out = String::with_capacity(openmetrics.len() + 8 * counters.len());
    for line in openmetrics.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        let named = ["# HELP ", "# TYPE "]
            .into_iter()
            .find_map(|p| line.strip_prefix(p).map(|rest| (p, rest)));
        match named {
            Some((prefix, rest)) => {
                let (name, tail) = rest.split_once(' ').unwrap_or((rest, ""));
                out.push_str(prefix);
                out.push_str(name);
                if counters.contains(name) && !name.ends_with("_total") {
                    out.push_str("_total");
                }
                if !tail.is_empty() {
                    out.push(' ');
                    out.push_str(tail);
                }
            }
            None => out.push_str(line),
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_as_their_samples_and_the_end_marker_goes() {
        let om = "# HELP stoa_moves Moves applied, by kind.\n\
                  # TYPE stoa_moves counter\n\
                  stoa_moves_total{kind=\"unane\"} 2\n\
                  # HELP stoa_open Open connections.\n\
                  # TYPE stoa_open gauge\n\
                  # UNIT stoa_open connections\n\
                  stoa_open 3\n\
                  # HELP stoa_lat Store latency.\n\
                  # TYPE stoa_lat histogram\n\
                  stoa_lat_bucket{le=\"+Inf\"} 1\n\
                  stoa_lat_sum 0.5\n\
                  stoa_lat_count 1\n\
                  # EOF\n";
        assert_eq!(
            prometheus_text(om),
            "# HELP stoa_moves_total Moves applied, by kind.\n\
             # TYPE stoa_moves_total counter\n\
             stoa_moves_total{kind=\"unane\"} 2\n\
             # HELP stoa_open Open connections.\n\
             # TYPE stoa_open gauge\n\
             stoa_open 3\n\
             # HELP stoa_lat Store latency.\n\
             # TYPE stoa_lat histogram\n\
             stoa_lat_bucket{le=\"+Inf\"} 1\n\
             stoa_lat_sum 0.5\n\
             stoa_lat_count 1\n"
        );
    }

    #[test]
    fn only_a_request_for_openmetrics_gets_it() {
        let prometheus = "application/openmetrics-text;version=1.0.0,\
                          application/openmetrics-text;version=0.0.1;q=0.75,\
                          text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(Some(prometheus)));
        assert!(wants_openmetrics(Some("Application/OpenMetrics-Text")));
        assert!(!wants_openmetrics(None));
        assert!(!wants_openmetrics(Some("*/*")));
        assert!(!wants_openmetrics(Some("text/plain; version=0.0.4")));
        assert!(!wants_openmetrics(Some(
            "application/openmetrics-text;q=0, text/plain"
        )));
    }
}

//! Moderation metrics: reports opened and closed, sanctions by kind, chat lines the word
//! filter refused — what an operator watches to see whether the public needs more of them.
//!
//! Why fixed labels: the sanction kinds are the server's own list, so nothing a client
//! types becomes a label.

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::registry::Registry;

use crate::domain::moderation::SanctionKind;

/// A sanction's kind, as a label.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SanctionLabel {
    kind: String,
}

/// Moderation's series.
#[derive(Debug)]
pub struct ModerationMetrics {
    reports_opened: Counter,
    reports_closed: Counter,
    sanctions: Family<SanctionLabel, Counter>,
    filtered: Counter,
}

impl ModerationMetrics {
    /// The moderation series, registered in `registry`.
    pub fn new(registry: &mut Registry) -> Self {
        let m = ModerationMetrics {
            reports_opened: Counter::default(),
            reports_closed: Counter::default(),
            sanctions: Family::default(),
            filtered: Counter::default(),
        };
        // Every kind shows, at 0 until used, so a dashboard never sees a gap.
        for kind in [
            SanctionKind::Warn,
            SanctionKind::Mute,
            SanctionKind::Ban,
            SanctionKind::AddressBan,
            SanctionKind::Rename,
        ] {
            let _ = m.sanctions.get_or_create(&SanctionLabel {
                kind: kind.as_str().into(),
            });
        }
        registry.register(
            "stoa_reports_opened",
            "Reports opened by players",
            m.reports_opened.clone(),
        );
        registry.register(
            "stoa_reports_closed",
            "Reports closed by operators",
            m.reports_closed.clone(),
        );
        registry.register(
            "stoa_sanctions",
            "Sanctions given by operators, by kind",
            m.sanctions.clone(),
        );
        registry.register(
            "stoa_chat_filtered",
            "Chat lines refused by the word filter",
            m.filtered.clone(),
        );
        m
    }

    /// A player opened a report.
    pub fn report_opened(&self) {
        self.reports_opened.inc();
    }

    /// An operator closed a report.
    pub fn report_closed(&self) {
        self.reports_closed.inc();
    }

    /// An operator gave a sanction of `kind`.
    pub fn sanctioned(&self, kind: SanctionKind) {
        self.sanctions
            .get_or_create(&SanctionLabel {
                kind: kind.as_str().into(),
            })
            .inc();
    }

    /// The word filter refused a chat line.
    pub fn filtered(&self) {
        self.filtered.inc();
    }
}

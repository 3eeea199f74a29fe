//! The `ModerationStore` contract (reports, sanctions, the audit log), run by
//! `store_contract.rs` over the in-memory store, Redis and a Redis Cluster.

use stoa_protocol::wire::ReportReason;
use stoa_server::domain::moderation::{
    AuditEntry, ContextLine, ReportClosed, ReportRecord, SanctionKind, SanctionRecord, Undone,
};
use stoa_server::store::Store;

fn report(id: &str, reporter: &str, target: &str, at: u64) -> ReportRecord {
    ReportRecord {
        id: id.into(),
        reporter: reporter.into(),
        reporter_name: format!("name of {reporter}"),
        target: target.into(),
        target_name: format!("name of {target}"),
        reason: ReportReason::ChatAbuse,
        text: "rude".into(),
        game_id: Some("g1".into()),
        room: None,
        context: vec![ContextLine {
            channel: Some("players".into()),
            id: target.into(),
            name: format!("name of {target}"),
            text: "a line".into(),
            ts: at,
            reported: true,
        }],
        created_ms: at,
        closed: None,
    }
}

fn sanction(id: &str, kind: SanctionKind, player: &str, at: u64) -> SanctionRecord {
    SanctionRecord {
        id: id.into(),
        kind,
        player: (kind != SanctionKind::AddressBan).then(|| player.into()),
        network: (kind == SanctionKind::AddressBan).then(|| "203.0.113.0/24".into()),
        reason: format!("reason {id}"),
        by: "ann".into(),
        at_ms: at,
        until_ms: None,
        old_name: None,
        delivered: false,
        undone: None,
    }
}

fn closed(action: &str) -> ReportClosed {
    ReportClosed {
        by: "ann".into(),
        at_ms: 9_000,
        action: action.into(),
    }
}

fn ids<T>(list: &[T], id: impl Fn(&T) -> &str) -> Vec<String> {
    list.iter().map(|x| id(x).to_string()).collect()
}

/// Reports: one open per (reporter, target) until closed, newest first, the open-only
/// filter, the reports about a player, a reporter's count since a time, closing.
async fn reports_contract(store: &dyn Store) {
    let m = store.moderation();
    assert!(m
        .open_report(&report("r1", "ma", "mb", 1_000))
        .await
        .unwrap());
    // The same pair while r1 is open: refused, nothing written.
    assert!(!m
        .open_report(&report("r2", "ma", "mb", 1_500))
        .await
        .unwrap());
    assert_eq!(m.report("r2").await.unwrap(), None);
    assert!(m
        .open_report(&report("r3", "ma", "mc", 2_000))
        .await
        .unwrap());
    assert!(m
        .open_report(&report("r4", "mc", "mb", 3_000))
        .await
        .unwrap());
    assert_eq!(
        m.report("r1").await.unwrap(),
        Some(report("r1", "ma", "mb", 1_000))
    );
    assert_eq!(m.report("nope").await.unwrap(), None);
    let all = m.reports(false, 10).await.unwrap();
    assert_eq!(ids(&all, |r| &r.id), ["r4", "r3", "r1"]);
    assert_eq!(
        ids(&m.reports(true, 2).await.unwrap(), |r| &r.id),
        ["r4", "r3"]
    );
    let about = m.reports_about(&"mb".into(), 10).await.unwrap();
    assert_eq!(ids(&about, |r| &r.id), ["r4", "r1"]);
    assert_eq!(
        ids(&m.reports_about(&"mb".into(), 1).await.unwrap(), |r| &r.id),
        ["r4"]
    );
    assert!(m.reports_about(&"ma".into(), 10).await.unwrap().is_empty());
    assert_eq!(m.reports_by_since(&"ma".into(), 0).await.unwrap(), 2);
    assert_eq!(m.reports_by_since(&"ma".into(), 1_001).await.unwrap(), 1);
    assert_eq!(m.reports_by_since(&"ma".into(), 2_001).await.unwrap(), 0);
    assert_eq!(m.reports_by_since(&"mz".into(), 0).await.unwrap(), 0);

    // Closing: unknown → None; open → Some(true); again → Some(false), unchanged.
    assert_eq!(m.close_report("nope", &closed("x")).await.unwrap(), None);
    assert_eq!(
        m.close_report("r1", &closed("muted")).await.unwrap(),
        Some(true)
    );
    assert_eq!(
        m.close_report("r1", &closed("other")).await.unwrap(),
        Some(false)
    );
    let r1 = m.report("r1").await.unwrap().unwrap();
    assert_eq!(r1.closed, Some(closed("muted")));
    assert_eq!(
        ids(&m.reports(true, 10).await.unwrap(), |r| &r.id),
        ["r4", "r3"]
    );
    assert_eq!(m.reports(false, 10).await.unwrap().len(), 3);
    // The pair may report again once its report is closed.
    assert!(m
        .open_report(&report("r5", "ma", "mb", 4_000))
        .await
        .unwrap());
    assert_eq!(
        ids(&m.reports(true, 10).await.unwrap(), |r| &r.id),
        ["r5", "r4", "r3"]
    );
    assert_eq!(m.reports_by_since(&"ma".into(), 0).await.unwrap(), 3);
}

/// Sanctions: saved and read back, a player's newest first, the standing set, the version.
async fn sanctions_contract(store: &dyn Store) {
    let m = store.moderation();
    let v0 = m.sanctions_version().await.unwrap();
    let mut mute = sanction("s1", SanctionKind::Mute, "ma", 1_000);
    mute.until_ms = Some(u64::MAX / 2);
    let warn = sanction("s2", SanctionKind::Warn, "ma", 2_000);
    let ban = sanction("s3", SanctionKind::Ban, "mb", 3_000);
    let net = sanction("s4", SanctionKind::AddressBan, "", 4_000);
    let rename = sanction("s5", SanctionKind::Rename, "ma", 5_000);
    for s in [&mute, &warn, &ban, &net, &rename] {
        m.save_sanction(s).await.unwrap();
    }
    let v1 = m.sanctions_version().await.unwrap();
    assert!(v1 != v0, "saving moves the version on");
    assert_eq!(m.sanction("s1").await.unwrap(), Some(mute.clone()));
    assert_eq!(m.sanction("nope").await.unwrap(), None);
    let of_a = m.sanctions_of(&"ma".into()).await.unwrap();
    assert_eq!(ids(&of_a, |s| &s.id), ["s5", "s2", "s1"]);
    assert!(m.sanctions_of(&"mz".into()).await.unwrap().is_empty());
    let standing = m.standing_sanctions().await.unwrap();
    let mut got = ids(&standing, |s| &s.id);
    got.sort();
    assert_eq!(got, ["s1", "s2", "s3", "s4", "s5"]);

    // A notice shown, a ban undone: out of the standing set, still the player's history.
    let mut shown = warn.clone();
    shown.delivered = true;
    m.save_sanction(&shown).await.unwrap();
    let mut renamed = rename.clone();
    renamed.delivered = true;
    m.save_sanction(&renamed).await.unwrap();
    let mut lifted = ban.clone();
    lifted.undone = Some(Undone {
        by: "bob".into(),
        at_ms: 6_000,
        reason: "appeal".into(),
    });
    m.save_sanction(&lifted).await.unwrap();
    let v2 = m.sanctions_version().await.unwrap();
    assert!(v2 != v1, "a changed sanction moves the version on");
    let mut got = ids(&m.standing_sanctions().await.unwrap(), |s| &s.id);
    got.sort();
    assert_eq!(got, ["s1", "s4"]);
    assert_eq!(m.sanction("s3").await.unwrap(), Some(lifted.clone()));
    assert_eq!(m.sanctions_of(&"mb".into()).await.unwrap(), [lifted]);
    assert_eq!(m.sanctions_of(&"ma".into()).await.unwrap().len(), 3);
    m.bump().await.unwrap();
    assert!(
        m.sanctions_version().await.unwrap() != v2,
        "bump moves it on"
    );
}

/// The audit log: newest first, at most `limit`.
async fn audit_contract(store: &dyn Store) {
    let m = store.moderation();
    assert!(m.audit_log(10).await.unwrap().is_empty());
    let entry = |n: u64| AuditEntry {
        at_ms: n,
        by: "ann".into(),
        action: "warn".into(),
        target: format!("p{n}"),
        reason: "why".into(),
        detail: if n == 2 { "more".into() } else { String::new() },
    };
    for n in 1..=4 {
        m.audit(&entry(n)).await.unwrap();
    }
    assert_eq!(
        m.audit_log(10).await.unwrap(),
        [entry(4), entry(3), entry(2), entry(1)]
    );
    assert_eq!(m.audit_log(2).await.unwrap(), [entry(4), entry(3)]);
}

/// The whole moderation contract, on a store nothing moderated yet.
pub async fn moderation_contract(store: &dyn Store) {
    reports_contract(store).await;
    sanctions_contract(store).await;
    audit_contract(store).await;
}

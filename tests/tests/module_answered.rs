//! The note of answers (issue 30; docs/design.md "Healing after an
//! unplanned failover") on real servers: a replica promoted by
//! `REPLICAOF NO ONE` notes whom it answered without logging anything, as
//! a replicated effect (its strict replica and an AOF reload reach the
//! same `DEBUG DIGEST`); `TICKET.REAPPLY` refuses a lost write of a noted
//! user or ticket, or one an entry after `SINCE` touches, changing
//! nothing; `TICKET.HEALED` closes the note (replicated, once); a node
//! never promoted notes nothing.

#[path = "support/module.rs"]
mod support;

use redis::Connection;
use support::*;
use ticketgate_tests::RedisServer;

fn note(c: &mut Connection) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = redis::cmd("HGETALL")
        .arg("ticket:{e}:answered")
        .query(c)
        .unwrap();
    all.sort();
    all
}

fn reapply(c: &mut Connection, extra: &[&str]) -> redis::RedisResult<String> {
    let mut parts = vec!["TICKET.REAPPLY", "e"];
    parts.extend_from_slice(extra);
    cmd(&parts).query(c)
}

const LOST_CANCEL: [&str; 10] = [
    "op", "cancel", "event", "e", "user", "u", "ticket", "1", "at", "5",
];

#[test]
fn a_promoted_primary_notes_answers_replicated_until_healed() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let mut p = primary.conn();
    ok(&mut p, &["TICKET.INIT", "e", "10", "HOLD", "600000"]);
    assert_eq!(claim(&mut p, "e", "u"), 1);
    let promoted = strict_replica_with(
        &primary.port().to_string(),
        &["--appendonly", "yes", "--repl-diskless-sync-delay", "0"],
    );
    wait_replicated(&mut p, 1);
    // The old primary was never promoted: its answers note nothing.
    assert_eq!(claim(&mut p, "e", "u"), 1);
    assert!(!exists(&mut p, "ticket:{e}:answered"));
    drop(p);
    drop(primary);

    let mut r = promoted.conn();
    ok(&mut r, &["REPLICAOF", "NO", "ONE"]);
    let strict = strict_replica_of(&promoted.port().to_string());
    // A repeat claim logs nothing: noted, with the user's tickets.
    assert_eq!(claim(&mut r, "e", "u"), 1);
    let noted = [
        ("t:1".to_owned(), "1".to_owned()),
        ("u:u".into(), "1".into()),
    ];
    assert_eq!(note(&mut r), noted);
    let logged = log_len(&mut r, "e");
    assert_eq!(int(&mut r, &["TICKET.CONFIRM", "e", "u"]), 1);
    assert_eq!(
        log_len(&mut r, "e"),
        logged + 1,
        "a confirm of a held order is logged"
    );
    assert_eq!(int_or_nil(&mut r, &["TICKET.CANCEL", "e", "nobody"]), None);
    assert_eq!(note(&mut r).len(), 3, "a cancel answering nil is noted");
    wait_replicated(&mut r, 1);
    let mut s = strict.conn();
    assert_eq!(note(&mut s), note(&mut r));
    assert_eq!(digest(&mut s), digest(&mut r));
    let before = digest(&mut r);
    ok(&mut r, &["DEBUG", "LOADAOF"]);
    assert_eq!(digest(&mut r), before, "the AOF holds the note");

    // A lost cancel of u's ticket is refused, and changes nothing.
    let e = reapply(&mut r, &LOST_CANCEL).unwrap_err();
    assert_eq!(e.code(), Some("CHANGED"), "{e}");
    assert!(error_line(&e).contains("answered user \"u\""), "{e}");
    let claim_of_1 = [
        "op", "claim", "event", "e", "user", "v", "ticket", "1", "at", "5",
    ];
    let e = reapply(&mut r, &claim_of_1).unwrap_err();
    assert!(error_line(&e).contains("CHANGED"), "{e}");
    expect_error(
        &mut r,
        &["TICKET.REAPPLY", "e", "SINCE", "x", "op", "open"],
        "ERR",
    );
    expect_error(&mut r, &["TICKET.HEALED", "bad id!"], "ERR");
    expect_error(&mut r, &["TICKET.HEALED"], "ERR");
    assert_eq!(digest(&mut r), before, "refusals changed nothing");

    // Healed: one field closes the note, replicated; a second time is a
    // no-op; answers of the same term note nothing more.
    assert_eq!(int(&mut r, &["TICKET.HEALED", "e"]), 1);
    let closed = note(&mut r);
    assert_eq!(closed.len(), 1);
    assert_eq!(closed[0].0, "closed");
    assert_eq!(int(&mut r, &["TICKET.HEALED", "e"]), 0);
    assert_eq!(claim(&mut r, "e", "u"), 1);
    assert_eq!(note(&mut r), closed);
    wait_replicated(&mut r, 1);
    assert_eq!(digest(&mut s), digest(&mut r));

    // With the note closed, SINCE still refuses what was logged after it:
    // u's confirm above. From the log's end, the cancel fits again.
    let entries = log(&mut r, "e");
    let before_confirm = &entries[entries.len() - 2].0;
    let mut since = vec!["SINCE", before_confirm.as_str()];
    since.extend_from_slice(&LOST_CANCEL);
    let e = reapply(&mut r, &since).unwrap_err();
    assert!(error_line(&e).contains("changed user \"u\" after"), "{e}");
    let last = &entries[entries.len() - 1].0;
    since[1] = last.as_str();
    reapply(&mut r, &since).expect("nothing since: re-applied");
    assert_eq!(int_or_nil(&mut r, &["TICKET.HOLDER", "e", "u"]), None);
    wait_replicated(&mut r, 1);
    assert_eq!(digest(&mut s), digest(&mut r));
}

#[test]
fn a_note_of_another_type_is_refused_before_anything_is_written() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let mut p = primary.conn();
    ok(&mut p, &["TICKET.INIT", "e", "10"]);
    let _: () = redis::cmd("SET")
        .arg("ticket:{e}:answered")
        .arg("x")
        .query(&mut p)
        .unwrap();
    let before = digest(&mut p);
    expect_error(&mut p, &["TICKET.HEALED", "e"], "WRONGTYPE");
    let lost = ["op", "open", "event", "e", "at", "5"];
    let e = reapply(&mut p, &lost).unwrap_err();
    assert_eq!(e.code(), Some("WRONGTYPE"), "{e}");
    assert_eq!(digest(&mut p), before);
}

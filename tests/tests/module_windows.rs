//! `OPENS`/`CLOSES` windows with real time: claims before the window are
//! `NOTOPEN`, claims after it `CLOSED`; repeat claims are always answered;
//! `TICKET.OPEN`/`TICKET.CLOSE` apply on top of the window.

#[path = "support/module.rs"]
mod support;

use std::thread::sleep;
use std::time::Duration;

use redis::{Connection, Value};
use support::*;
use ticketgate_tests::RedisServer;

/// Sleeps until Redis's clock has passed `ms` (plus a small margin).
fn wait_for_server_time(c: &mut Connection, ms: i64) {
    loop {
        let now = server_ms(c);
        if now > ms + 20 {
            return;
        }
        sleep(Duration::from_millis((ms + 25 - now).clamp(5, 100) as u64));
    }
}

#[test]
fn claims_open_when_the_window_opens() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let now = server_ms(&mut c);
    let opens = now + 400;
    let closes = now + 3_600_000;
    let (o, cl) = (opens.to_string(), closes.to_string());
    ok(
        &mut c,
        &["TICKET.INIT", "soon", "5", "OPENS", &o, "CLOSES", &cl],
    );
    ok(&mut c, &["TICKET.INIT", "soon-closed", "5", "OPENS", &o]);
    ok(&mut c, &["TICKET.CLOSE", "soon-closed"]);

    let msg = expect_error(&mut c, &["TICKET.CLAIM", "soon", "u1"], "NOTOPEN");
    assert!(msg.contains(&o), "{msg}");
    assert!(
        server_ms(&mut c) < opens,
        "the machine was too slow to observe the window before it opened"
    );
    assert_eq!(int_or_nil(&mut c, &["TICKET.HOLDER", "soon", "u1"]), None);
    assert_eq!(status_int(&mut c, "soon", "opens_at"), opens);
    assert_eq!(status_int(&mut c, "soon", "remaining"), 5);
    // Status "open" but before the window: still NOTOPEN, nothing logged.
    assert_eq!(log_len(&mut c, "soon"), 1);

    wait_for_server_time(&mut c, opens);
    assert_eq!(claim(&mut c, "soon", "u1"), 1);
    assert_eq!(claim(&mut c, "soon", "u2"), 2);
    assert_eq!(claim(&mut c, "soon", "u1"), 1);
    assert_eq!(log_len(&mut c, "soon"), 3);

    // Closed by command: the window opening does not reopen it.
    expect_error(&mut c, &["TICKET.CLAIM", "soon-closed", "u1"], "CLOSED");
    ok(&mut c, &["TICKET.OPEN", "soon-closed"]);
    assert_eq!(claim(&mut c, "soon-closed", "u1"), 1);
}

#[test]
fn claims_close_when_the_window_closes() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let now = server_ms(&mut c);
    let closes = now + 400;
    let cl = closes.to_string();
    ok(&mut c, &["TICKET.INIT", "closing", "5", "CLOSES", &cl]);
    ok(
        &mut c,
        &["TICKET.INIT", "closing2", "5", "OPENS", "1", "CLOSES", &cl],
    );
    assert_eq!(claim(&mut c, "closing", "early"), 1);
    assert_eq!(claim(&mut c, "closing2", "early"), 1);
    assert!(
        server_ms(&mut c) < closes,
        "the machine was too slow to claim before the window closed"
    );

    wait_for_server_time(&mut c, closes);
    for event in ["closing", "closing2"] {
        let msg = expect_error(&mut c, &["TICKET.CLAIM", event, "late"], "CLOSED");
        assert_eq!(msg, format!("CLOSED event '{event}' is closed"));
        // The early bird still gets its answer, without a log entry.
        let n = log_len(&mut c, event);
        assert_eq!(claim(&mut c, event, "early"), 1);
        assert_eq!(log_len(&mut c, event), n);
        let st = status(&mut c, event);
        assert_eq!(st["closes_at"], Value::Int(closes));
        assert_eq!(st["remaining"], Value::Int(4));
    }

    // TICKET.OPEN does not lift the window's end.
    ok(&mut c, &["TICKET.CLOSE", "closing"]);
    ok(&mut c, &["TICKET.OPEN", "closing"]);
    expect_error(&mut c, &["TICKET.CLAIM", "closing", "late"], "CLOSED");
    // A refund after the window still works, and nobody can take it.
    assert_eq!(
        int_or_nil(&mut c, &["TICKET.CANCEL", "closing", "early"]),
        Some(1)
    );
    expect_error(&mut c, &["TICKET.CLAIM", "closing", "early"], "CLOSED");
    assert_eq!(status_int(&mut c, "closing", "remaining"), 5);
}

#[test]
fn close_and_open_inside_the_window() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let now = server_ms(&mut c);
    let (o, cl) = ((now - 1000).to_string(), (now + 3_600_000).to_string());
    ok(
        &mut c,
        &["TICKET.INIT", "w", "3", "OPENS", &o, "CLOSES", &cl],
    );
    assert_eq!(claim(&mut c, "w", "a"), 1);
    ok(&mut c, &["TICKET.CLOSE", "w"]);
    expect_error(&mut c, &["TICKET.CLAIM", "w", "b"], "CLOSED");
    ok(&mut c, &["TICKET.OPEN", "w"]);
    assert_eq!(claim(&mut c, "w", "b"), 2);
    let ops: Vec<String> = log(&mut c, "w")
        .iter()
        .map(|e| field(e, "op").unwrap().to_string())
        .collect();
    assert_eq!(ops, ["init", "claim", "close", "open", "claim"]);
}

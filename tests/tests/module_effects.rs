//! `TICKET._APPLY`, the replicated effect, cannot be sent by a client: not
//! directly, not in a transaction, not from a script, not with a well-formed
//! effect a primary could have sent. Each attempt answers `NOPERM` and
//! leaves the dataset unchanged (`DEBUG DIGEST`). On Redis 8+ the module
//! also declares `_APPLY` `internal`, so a client is told the command does
//! not exist at all (`ERR unknown command`): the same refusal, one step
//! earlier, and tested as such when the suite runs on Redis 8.

#[path = "support/module.rs"]
mod support;

use redis::Value;
use support::*;
use ticketgate_tests::RedisServer;

/// Effects a primary could send for event `ev` (it exists, ticket 1 is free).
const FORGED: [&[&str]; 4] = [
    &[
        "TICKET._APPLY",
        "1",
        "ev",
        "claim",
        "9999999999999-0",
        "1",
        "mallory",
        "1",
        "1",
    ],
    &["TICKET._APPLY", "1", "ev", "drop"],
    &["TICKET._APPLY", "1", "ev", "close", "9999999999999-0", "1"],
    &[
        "TICKET._APPLY",
        "1",
        "ev",
        "init",
        "9999999999999-0",
        "1",
        "5",
        "0",
        "0",
    ],
];

#[test]
fn a_client_cannot_apply_an_effect() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "ev", "5"]);
    let before = digest(&mut c);
    let hidden = internal_commands_hidden(&mut c);
    let (code, why) = if hidden {
        ("ERR", "unknown command")
    } else {
        ("NOPERM", "primary or the AOF")
    };
    for forged in FORGED {
        let msg = expect_error(&mut c, forged, code);
        assert!(msg.contains(why), "{msg}");
    }
    // Inside MULTI/EXEC.
    let mut tx = redis::pipe();
    tx.atomic();
    tx.add_command(cmd(FORGED[0]));
    let err = tx
        .query::<Value>(&mut c)
        .expect_err("EXEC must carry the error");
    if hidden {
        // Redis 8 aborts the whole transaction at MULTI time.
        assert!(err.to_string().contains(why), "{err}");
    } else {
        assert!(error_line(&err).contains("NOPERM"), "{err}");
    }
    // From a script.
    let err = redis::cmd("EVAL")
        .arg("return redis.call('TICKET._APPLY', '1', KEYS[1], 'drop')")
        .arg(1)
        .arg("ev")
        .query::<Value>(&mut c)
        .expect_err("a script must not apply an effect");
    if hidden {
        assert!(err.to_string().contains("not allowed from script"), "{err}");
    } else {
        assert!(error_line(&err).contains("NOPERM"), "{err}");
    }
    assert_eq!(
        digest(&mut c),
        before,
        "a refused effect changed the dataset"
    );
    assert_eq!(
        int_or_nil(&mut c, &["TICKET.HOLDER", "ev", "mallory"]),
        None
    );
    assert_eq!(status_int(&mut c, "ev", "remaining"), 5);
}

#[test]
fn the_effect_declares_its_event_as_its_key() {
    let server = RedisServer::start();
    let mut c = server.conn();
    if internal_commands_hidden(&mut c) {
        // Redis 8: an internal command is invisible to clients, COMMAND
        // included; its key spec only serves the replication link.
        let info: Value = redis::cmd("COMMAND")
            .arg("INFO")
            .arg("TICKET._APPLY")
            .query(&mut c)
            .unwrap();
        assert_eq!(info, Value::Array(vec![Value::Nil]), "{info:?}");
        return;
    }
    let keys: Vec<String> = redis::cmd("COMMAND")
        .arg("GETKEYS")
        .arg("TICKET._APPLY")
        .arg("1")
        .arg("concert")
        .arg("drop")
        .query(&mut c)
        .unwrap();
    assert_eq!(keys, ["concert"]);
}

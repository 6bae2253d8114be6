//! Every error reply of the module: the code (first word) of each, bad input
//! of every kind, wrong arity, keys of the wrong type and corrupt values.
//! After every single error the dataset is checked to be exactly as before
//! (`DEBUG DIGEST`, plus every key's type and length, hence every log length).

#[path = "support/module.rs"]
mod support;

use redis::Connection;
use support::*;
use ticketgate_tests::RedisServer;

/// A dataset with some state in it, so an error that writes anything shows.
fn populated() -> (RedisServer, Connection) {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e1", "2"]);
    claim(&mut c, "e1", "a");
    claim(&mut c, "e1", "b");
    ok(&mut c, &["TICKET.INIT", "e2", "100"]);
    claim(&mut c, "e2", "a");
    (server, c)
}

#[test]
fn each_error_code_with_its_message() {
    let (server, mut c) = populated();
    let _ = &server;

    for parts in [
        vec!["TICKET.CLAIM", "nope", "u"],
        vec!["TICKET.CANCEL", "nope", "u"],
        vec!["TICKET.HOLDER", "nope", "u"],
        vec!["TICKET.STATUS", "nope"],
        vec!["TICKET.OPEN", "nope"],
        vec!["TICKET.CLOSE", "nope"],
    ] {
        let msg = expect_error(&mut c, &parts, "NOEVENT");
        assert_eq!(msg, "NOEVENT event 'nope' does not exist", "{parts:?}");
    }

    let msg = expect_error(&mut c, &["TICKET.INIT", "e1", "5"], "EXISTS");
    assert_eq!(msg, "EXISTS event 'e1' already exists");
    // A different total or window does not matter.
    expect_error(
        &mut c,
        &["TICKET.INIT", "e2", "100", "OPENS", "5"],
        "EXISTS",
    );

    let msg = expect_error(&mut c, &["TICKET.CLAIM", "e1", "c"], "SOLDOUT");
    assert_eq!(msg, "SOLDOUT event 'e1' is sold out");
    // Losers stay losers, every time.
    expect_error(&mut c, &["TICKET.CLAIM", "e1", "c"], "SOLDOUT");

    let msg = expect_error(&mut c, &["TICKET.DROP", "e1"], "UNSYNCED");
    assert!(
        msg.starts_with("UNSYNCED event 'e1' has 3 log entries"),
        "{msg}"
    );

    // NOTOPEN: a window that opens far in the future.
    let far = server_ms(&mut c) + 3_600_000;
    ok(
        &mut c,
        &["TICKET.INIT", "later", "5", "OPENS", &far.to_string()],
    );
    let msg = expect_error(&mut c, &["TICKET.CLAIM", "later", "u"], "NOTOPEN");
    assert_eq!(
        msg,
        format!("NOTOPEN event 'later' opens at {far} (unix ms)")
    );

    // CLOSED: by TICKET.CLOSE, and by a CLOSES in the past.
    ok(&mut c, &["TICKET.CLOSE", "e2"]);
    let msg = expect_error(&mut c, &["TICKET.CLAIM", "e2", "new"], "CLOSED");
    assert_eq!(msg, "CLOSED event 'e2' is closed");
    ok(&mut c, &["TICKET.INIT", "past", "5", "CLOSES", "1"]);
    expect_error(&mut c, &["TICKET.CLAIM", "past", "u"], "CLOSED");
    // Closed and sold out at once: still nothing changes.
    ok(&mut c, &["TICKET.CLOSE", "e1"]);
    let msg = expect_error(&mut c, &["TICKET.CLAIM", "e1", "c"], "CLOSED");
    assert!(msg.starts_with("CLOSED"), "{msg}");
    // Holders still get their answer.
    assert_eq!(claim(&mut c, "e1", "b"), 2);
    assert_eq!(claim(&mut c, "e2", "a"), 1);
}

#[test]
fn init_over_leftover_keys_is_exists() {
    let server = RedisServer::start();
    let mut c = server.conn();
    // Keys of an event without its meta hash (e.g. a half-deleted event).
    let _: () = redis::cmd("HSET")
        .arg(key("h", "holders"))
        .arg("u")
        .arg(1)
        .query(&mut c)
        .unwrap();
    expect_error(&mut c, &["TICKET.INIT", "h", "5"], "EXISTS");
    let _: () = redis::cmd("ZADD")
        .arg(key("p", "pool"))
        .arg(3)
        .arg(3)
        .query(&mut c)
        .unwrap();
    expect_error(&mut c, &["TICKET.INIT", "p", "5"], "EXISTS");
}

#[test]
fn bad_event_ids_are_refused_by_every_command() {
    let (server, mut c) = populated();
    let _ = &server;
    let long = "e".repeat(65);
    let bad: [&[u8]; 8] = [
        b"a{b}",
        b"{e1}",
        b"a b",
        long.as_bytes(),
        b"",
        "caf\u{e9}".as_bytes(),
        b"a\nb",
        b"a/b",
    ];
    for event in bad {
        let cases: [Vec<&[u8]>; 9] = [
            vec![b"TICKET.INIT", event, b"10"],
            vec![b"TICKET.CLAIM", event, b"u"],
            vec![b"TICKET.CANCEL", event, b"u"],
            vec![b"TICKET.HOLDER", event, b"u"],
            vec![b"TICKET.STATUS", event],
            vec![b"TICKET.OPEN", event],
            vec![b"TICKET.CLOSE", event],
            vec![b"TICKET.DROP", event],
            vec![b"TICKET.DROP", event, b"FORCE"],
        ];
        for parts in cases {
            let msg = expect_error_b(&mut c, &parts, "ERR");
            assert!(msg.contains("invalid event id"), "{parts:?}: {msg}");
            assert!(
                !msg.bytes().any(|b| b < 0x20),
                "raw control character in {msg:?}"
            );
        }
    }
}

#[test]
fn bad_user_ids_are_refused() {
    let (server, mut c) = populated();
    let _ = &server;
    let long = "u".repeat(65);
    let long_multibyte = "\u{e9}".repeat(33); // 66 bytes, 33 characters
    let bad: [&[u8]; 13] = [
        b"\xed\xa0\x80",     // a UTF-16 surrogate, encoded
        b"\xc0\xaf",         // overlong '/'
        b"\xf4\x90\x80\x80", // beyond U+10FFFF
        b"a\nb",
        b"a\0b",
        b"\tx",
        b"x\x7f",
        "x\u{85}".as_bytes(), // C1 control
        b"\xff\xfe",
        b"caf\xe9", // Latin-1, not UTF-8
        long.as_bytes(),
        long_multibyte.as_bytes(),
        b"",
    ];
    for user in bad {
        for name in [&b"TICKET.CLAIM"[..], b"TICKET.CANCEL", b"TICKET.HOLDER"] {
            // On an open event with tickets, a sold-out one, and a missing one.
            for event in [&b"e2"[..], b"e1", b"nope"] {
                let msg = expect_error_b(&mut c, &[name, event, user], "ERR");
                assert!(msg.contains("invalid user id"), "{user:?}: {msg}");
                assert!(!msg.bytes().any(|b| b < 0x20), "raw control in {msg:?}");
            }
        }
    }
}

#[test]
fn bad_totals_and_options_of_init_are_refused() {
    let (server, mut c) = populated();
    let _ = &server;
    for total in [
        "0",
        "-1",
        "2147483648",
        "99999999999999999999",
        "abc",
        "",
        "+5",
        " 5",
        "5 ",
        "1e3",
        "1.0",
        "0x10",
    ] {
        let msg = expect_error(&mut c, &["TICKET.INIT", "n", total], "ERR");
        assert!(msg.contains("total"), "{total:?}: {msg}");
    }
    for options in [
        vec!["LATER", "1"],
        vec!["OPENS", "1", "OPENS", "2"],
        vec!["closes", "5", "CLOSES", "6"],
        vec!["OPENS", "5", "CLOSES", "5"],
        vec!["OPENS", "10", "CLOSES", "5"],
        vec!["CLOSES", "5", "OPENS", "10"],
        vec!["OPENS"],
        vec!["OPENS", "1", "CLOSES"],
        vec!["OPENS", "-1"],
        vec!["CLOSES", "-5"],
        vec!["OPENS", "soon"],
        vec!["OPENS", ""],
        vec!["FORCE", "1"],
        vec!["1", "OPENS"],
    ] {
        let mut parts = vec!["TICKET.INIT", "n", "10"];
        parts.extend(&options);
        expect_error(&mut c, &parts, "ERR");
    }
    let msg = expect_error(&mut c, &["TICKET.DROP", "e1", "NOW"], "ERR");
    assert!(msg.contains("FORCE"), "{msg}");
    expect_error(&mut c, &["TICKET.DROP", "nope", "F"], "ERR");
    // Nothing of `n` was created by any of it.
    ok(&mut c, &["TICKET.INIT", "n", "10"]);
}

#[test]
fn wrong_arity_uses_the_standard_message() {
    let (server, mut c) = populated();
    let _ = &server;
    let cases: [&[&str]; 19] = [
        &["TICKET.INIT"],
        &["TICKET.INIT", "x"],
        &[
            "TICKET.INIT",
            "x",
            "10",
            "OPENS",
            "1",
            "CLOSES",
            "2",
            "HOLD",
            "3",
            "LIMIT",
            "4",
            "OFFER",
            "5",
            "ADMIT",
            "6",
            "DRAW",
            "SEATS",
            "{}",
            "TRANSFER_UNTIL",
            "7",
            "X",
        ],
        &["TICKET.CLAIM"],
        &["TICKET.CLAIM", "e2"],
        &["TICKET.CANCEL", "e2"],
        &["TICKET.CANCEL", "e2", "a", "b"],
        &["TICKET.HOLDER", "e2"],
        &["TICKET.HOLDER", "e2", "a", "b"],
        &["TICKET.STATUS"],
        &["TICKET.STATUS", "e2", "x"],
        &["TICKET.OPEN"],
        &["TICKET.CLOSE", "e2", "x"],
        &["TICKET.DROP"],
        &["TICKET.DROP", "e2", "FORCE", "x"],
        &["TICKET.WAIT", "e2"],
        &["TICKET.WAIT", "e2", "u", "COUNT", "1", "x"],
        &["TICKET.LEAVE", "e2"],
        &["TICKET.POSITION", "e2", "a", "b"],
    ];
    for parts in cases {
        let msg = expect_error(&mut c, parts, "ERR");
        let name = parts[0].to_ascii_lowercase();
        assert_eq!(
            msg,
            format!("ERR wrong number of arguments for '{name}' command"),
            "{parts:?}"
        );
    }
    // CLAIM takes any number of seat ids: a lone extra word is an option
    // it does not know, named.
    let msg = expect_error(&mut c, &["TICKET.CLAIM", "e2", "u", "v"], "ERR");
    assert!(msg.contains("unknown option 'v'"), "{msg}");
}

/// What a command must do when one of the event's keys has the wrong type.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Want {
    /// `WRONGTYPE` naming the key, nothing changed.
    WrongType,
    /// Another error code (the command fails before it reaches the key).
    Error(&'static str),
    /// The command does not touch that key and succeeds.
    Works,
}

/// Sets `key` to a value of a type other than the one the module expects.
fn clobber(c: &mut Connection, key: &str, variant: usize) {
    let _: () = redis::cmd("DEL").arg(key).query(c).unwrap();
    let cmd = match variant {
        0 => {
            let mut s = redis::cmd("SET");
            s.arg(key).arg("x");
            s
        }
        1 => {
            let mut s = redis::cmd("RPUSH");
            s.arg(key).arg("x");
            s
        }
        _ => {
            let mut s = redis::cmd("SADD");
            s.arg(key).arg("x");
            s
        }
    };
    let _: redis::Value = cmd.query(c).unwrap();
}

#[test]
fn wrong_key_types_error_and_change_nothing() {
    use Want::*;
    let server = RedisServer::start();
    let mut c = server.conn();
    // (command, per part: meta, pool, holders, log). `a` holds a ticket, `z`
    // does not; the event is open, so CLOSE would write but OPEN would not.
    let table: [(&[&str], [Want; 4]); 12] = [
        (
            &["TICKET.INIT", "w", "10"],
            [WrongType, Error("EXISTS"), Error("EXISTS"), Error("EXISTS")],
        ),
        (
            &["TICKET.CLAIM", "w", "z"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        // Claims and cancels check that all four keys agree before
        // anything else, so every clobbered key is an error for them.
        (
            &["TICKET.CLAIM", "w", "a"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (
            &["TICKET.CANCEL", "w", "a"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (
            &["TICKET.CANCEL", "w", "z"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (
            &["TICKET.HOLDER", "w", "a"],
            [WrongType, Works, WrongType, Works],
        ),
        (
            &["TICKET.STATUS", "w"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (&["TICKET.OPEN", "w"], [WrongType, Works, Works, Works]),
        (&["TICKET.CLOSE", "w"], [WrongType, Works, Works, WrongType]),
        (
            &["TICKET.DROP", "w"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (
            &["TICKET.DROP", "w", "FORCE"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
        (
            &["TICKET.INIT", "fresh", "10"],
            [WrongType, WrongType, WrongType, WrongType],
        ),
    ];
    let parts = ["meta", "pool", "holders", "log"];
    let expected_type = ["hash", "zset", "hash", "stream"];
    for (p, part) in parts.iter().enumerate() {
        for variant in 0..3 {
            for (command, wants) in &table {
                let _: () = redis::cmd("FLUSHALL").query(&mut c).unwrap();
                ok(&mut c, &["TICKET.INIT", "w", "10"]);
                claim(&mut c, "w", "a");
                claim(&mut c, "w", "b");
                ok(&mut c, &["TICKET.INIT", "other", "10"]);
                claim(&mut c, "other", "a");
                let target = if command[1] == "fresh" { "fresh" } else { "w" };
                let k = key(target, part);
                clobber(&mut c, &k, variant);
                let what = format!("{command:?} with {k} clobbered (variant {variant})");
                match wants[p] {
                    WrongType => {
                        let msg = expect_error(&mut c, command, "WRONGTYPE");
                        assert_eq!(
                            msg,
                            format!(
                                "WRONGTYPE key '{k}' holds the wrong kind of value (expected {})",
                                expected_type[p]
                            ),
                            "{what}"
                        );
                    }
                    Error(code) => {
                        expect_error(&mut c, command, code);
                    }
                    Works => {
                        cmd(command)
                            .query::<redis::Value>(&mut c)
                            .unwrap_or_else(|e| panic!("{what}: {e}"));
                    }
                }
                // The clobbered key and the other event survive in any case.
                let kind: String = redis::cmd("TYPE").arg(&k).query(&mut c).unwrap();
                assert_ne!(kind, "none", "{what}: the clobbered key vanished");
                assert_eq!(claim(&mut c, "other", "b"), 2, "{what}");
            }
        }
    }
}

/// Keys that disagree with each other — a holder missing for a minted
/// number, or no log — are what a cluster slot migration leaves on the
/// importing node while it has moved some of an event's keys and not the
/// others. Writing then could hand a number out twice, so claims and cancels
/// answer TRYAGAIN and change nothing; reads still answer.
#[test]
fn keys_that_disagree_make_writes_try_again() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "10"]);
    for u in ["a", "b", "c"] {
        claim(&mut c, "e", u);
    }
    let _: () = redis::cmd("HDEL")
        .arg(key("e", "holders"))
        .arg("b")
        .query(&mut c)
        .unwrap();
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "TRYAGAIN");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "a"], "TRYAGAIN");
    expect_error(&mut c, &["TICKET.CANCEL", "e", "a"], "TRYAGAIN");
    let held: i64 = redis::cmd("TICKET.HOLDER")
        .arg("e")
        .arg("a")
        .query(&mut c)
        .unwrap();
    assert_eq!(held, 1);

    // Put the holder back: consistent again, claims go on from 4.
    let _: () = redis::cmd("HSET")
        .arg(key("e", "holders"))
        .arg("b")
        .arg(2)
        .query(&mut c)
        .unwrap();
    assert_eq!(claim(&mut c, "e", "z"), 4);

    // A missing log (only meta, pool and holders moved so far).
    let _: () = redis::cmd("DEL")
        .arg(key("e", "log"))
        .query(&mut c)
        .unwrap();
    expect_error(&mut c, &["TICKET.CLAIM", "e", "y"], "TRYAGAIN");
}

#[test]
fn corrupt_values_are_reported_not_trusted() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let reset = |c: &mut Connection| {
        let _: () = redis::cmd("FLUSHALL").query(c).unwrap();
        ok(c, &["TICKET.INIT", "e", "10"]);
        claim(c, "e", "a");
    };
    let hset = |c: &mut Connection, k: &str, f: &str, v: &str| {
        let _: () = redis::cmd("HSET").arg(k).arg(f).arg(v).query(c).unwrap();
    };

    reset(&mut c);
    hset(&mut c, &key("e", "meta"), "status", "maybe");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "CORRUPT");
    expect_error(&mut c, &["TICKET.STATUS", "e"], "CORRUPT");

    reset(&mut c);
    hset(&mut c, &key("e", "meta"), "opens_at", "soon");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "CORRUPT");

    reset(&mut c);
    hset(&mut c, &key("e", "holders"), "a", "one");
    expect_error(&mut c, &["TICKET.HOLDER", "e", "a"], "CORRUPT");
    expect_error(&mut c, &["TICKET.CLAIM", "e", "a"], "CORRUPT");
    expect_error(&mut c, &["TICKET.CANCEL", "e", "a"], "CORRUPT");

    reset(&mut c);
    let _: () = redis::cmd("ZADD")
        .arg(key("e", "pool"))
        .arg(0)
        .arg("zero")
        .query(&mut c)
        .unwrap();
    // One more pooled number than `minted` accounts for: the keys disagree.
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "TRYAGAIN");
    // With the count right again, the bad member itself is reported.
    let _: () = redis::cmd("HDEL")
        .arg(key("e", "holders"))
        .arg("a")
        .query(&mut c)
        .unwrap();
    expect_error(&mut c, &["TICKET.CLAIM", "e", "z"], "CORRUPT");
    // The server is still fine afterwards.
    let pong: String = redis::cmd("PING").query(&mut c).unwrap();
    assert_eq!(pong, "PONG");
}

#[test]
fn bad_checkout_options_and_confirms_are_refused_and_change_nothing() {
    let (server, mut c) = populated();
    let _ = &server;
    ok(
        &mut c,
        &["TICKET.INIT", "shop", "10", "HOLD", "600000", "LIMIT", "3"],
    );
    claim(&mut c, "shop", "held");
    // expect_error checks the digest before and after each of these.
    for (options, why) in [
        (vec!["HOLD", "-1"], "HOLD must be between 0 and 604800000"),
        (vec!["HOLD", "604800001"], "HOLD must be"),
        (vec!["HOLD", "soon"], "HOLD must be an integer"),
        (vec!["LIMIT", "0"], "LIMIT must be between 1 and 1000"),
        (vec!["LIMIT", "1001"], "LIMIT must be"),
        (vec!["LIMIT", "2", "limit", "3"], "option LIMIT given twice"),
        (vec!["HOLD"], "option HOLD needs a value"),
    ] {
        let mut parts = vec!["TICKET.INIT", "n", "10"];
        parts.extend(&options);
        let msg = expect_error(&mut c, &parts, "ERR");
        assert!(msg.contains(why), "{options:?}: {msg}");
    }
    for (options, code, why) in [
        (
            vec!["COUNT", "0"],
            "ERR",
            "COUNT must be between 1 and 1000",
        ),
        (vec!["COUNT", "1001"], "ERR", "COUNT must be"),
        (vec!["COUNT", "two"], "ERR", "COUNT must be an integer"),
        (
            vec!["COUNT", "1", "count", "1"],
            "ERR",
            "option COUNT given twice",
        ),
        (
            vec!["HOLD", "1", "HOLD", "1"],
            "ERR",
            "option HOLD given twice",
        ),
        (vec!["HOLD", "-5"], "ERR", "HOLD must be between"),
        (
            vec!["SOON", "1"],
            "ERR",
            "unknown option 'SOON' (expected COUNT, HOLD, SECTION, CATEGORY, ACCESSIBLE, FROM, KEY, SPLIT, SEATS)",
        ),
        (
            vec!["COUNT", "4"],
            "LIMIT",
            "allows at most 3 tickets per user, asked for 4",
        ),
        (vec!["COUNT", "10"], "LIMIT", "asked for 10"),
    ] {
        let mut parts = vec!["TICKET.CLAIM", "shop", "new"];
        parts.extend(&options);
        let msg = expect_error(&mut c, &parts, code);
        assert!(msg.contains(why), "{options:?}: {msg}");
    }
    // All or nothing: 9 are free, 3 asked by each of three users, then a fourth.
    for user in ["x", "y", "z"] {
        value(&mut c, &["TICKET.CLAIM", "shop", user, "COUNT", "3"]);
    }
    let msg = expect_error(
        &mut c,
        &["TICKET.CLAIM", "shop", "w", "COUNT", "2"],
        "SOLDOUT",
    );
    assert_eq!(msg, "SOLDOUT event 'shop' is sold out");
    let msg = expect_error(&mut c, &["TICKET.CONFIRM", "shop", "nobody"], "NOHOLD");
    assert!(
        msg.starts_with("NOHOLD user 'nobody' holds no tickets of event 'shop'"),
        "{msg}"
    );
    expect_error(&mut c, &["TICKET.CONFIRM", "nope", "u"], "NOEVENT");
    expect_error(&mut c, &["TICKET.ORDER", "nope", "u"], "NOEVENT");
    expect_error(&mut c, &["TICKET.CONFIRM", "shop"], "ERR");
    expect_error(&mut c, &["TICKET.ORDER", "shop", "a", "b"], "ERR");
    expect_error(&mut c, &["TICKET.CONFIRM", "shop", "a\nb"], "ERR");
    // Confirming a sold order changes nothing and says how many it holds.
    let before = digest(&mut c);
    assert_eq!(int(&mut c, &["TICKET.CONFIRM", "shop", "held"]), 1);
    assert_ne!(digest(&mut c), before, "the first confirm sells");
    let before = digest(&mut c);
    assert_eq!(int(&mut c, &["TICKET.CONFIRM", "shop", "held"]), 1);
    assert_eq!(digest(&mut c), before, "a repeat confirm is a no-op");
}

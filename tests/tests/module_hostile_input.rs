//! The hostile inputs issue 39 found, each a regression test on a real
//! server: names a client passes on (non-ASCII, a character whose code
//! point is a multiple of 256, bytes that are not UTF-8) never crash
//! Redis and come back escaped as `\xNN` in a reply that is valid UTF-8;
//! a layout whose stored form is too large is refused whole (by `INIT`
//! and `RESTORE`, on a primary and its replica alike); and the errors a
//! new user met say what to do. After each error the keyspace is as it
//! was (`DEBUG DIGEST`).
//!
//! Replies are read as raw RESP bytes here: a client library would decode
//! (or refuse) invalid UTF-8 before the test could see it.

#[path = "support/module.rs"]
mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;

use redis::Connection;
use support::*;
use ticketgate_tests::RedisServer;

/// The raw reply line of one command sent as a RESP array of bytes (an
/// error or status reply: one line, `\r\n` cut off).
fn raw_line(server: &RedisServer, args: &[&[u8]]) -> Vec<u8> {
    let mut stream = TcpStream::connect(("127.0.0.1", server.port())).unwrap();
    let mut request = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args {
        request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        request.extend_from_slice(arg);
        request.extend_from_slice(b"\r\n");
    }
    stream.write_all(&request).unwrap();
    let mut line = Vec::new();
    BufReader::new(stream).read_until(b'\n', &mut line).unwrap();
    assert!(line.ends_with(b"\r\n"), "a reply line: {line:?}");
    line.truncate(line.len() - 2);
    line
}

/// Sends `args`, expects an error reply starting with `code` that is
/// printable ASCII (so valid UTF-8 and one line), and the server alive
/// with its keyspace unchanged; returns the error text.
fn hostile(server: &RedisServer, c: &mut Connection, args: &[&[u8]], code: &str) -> String {
    let before = digest(c);
    let line = raw_line(server, args);
    let text = String::from_utf8(line.clone())
        .unwrap_or_else(|_| panic!("not UTF-8: {line:?} for {args:?}"));
    assert!(
        line.iter().all(|b| (0x20..=0x7e).contains(b)),
        "not printable ASCII: {text:?}"
    );
    assert!(
        text.starts_with(&format!("-{code} ")),
        "{args:?}: expected {code}, got {text}"
    );
    let pong: String = redis::cmd("PING").query(c).expect("the server lives on");
    assert_eq!(pong, "PONG");
    assert_eq!(digest(c), before, "{args:?} changed the keyspace");
    text[1..].to_owned()
}

fn layout_named(section: &str, row: &str, category: &str) -> String {
    format!(
        r#"{{"sections":[{{"name":"{section}","category":"{category}","rows":[{{"name":"{row}","seats":1}}]}}]}}"#
    )
}

#[test]
fn names_with_any_character_are_refused_and_quoted_not_fatal() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "kept", "3"]);
    // Code points that are multiples of 256 (U+0100, U+4E00, U+1F600) once
    // became NUL bytes in the crate's error reply and aborted the server.
    for name in ["一", "一楼", "Ā", "😀", "Ä", "a\u{0}b", "a\r\nb", "\u{7f}"] {
        for layout in [
            layout_named(name, "1", "general"),
            layout_named("A", name, "general"),
            layout_named("A", "1", name),
            format!(
                r#"{{"sections":[{{"name":"A","rows":[{{"name":"1","seats":1,"{name}":1}}]}}]}}"#
            ),
        ] {
            let args: [&[u8]; 5] = [b"TICKET.INIT", b"x", b"1", b"SEATS", layout.as_bytes()];
            let error = hostile(&server, &mut c, &args, "ERR");
            assert!(error.starts_with("ERR invalid layout: "), "{error}");
        }
    }
    let error = hostile(
        &server,
        &mut c,
        &[
            b"TICKET.INIT",
            b"x",
            b"1",
            b"SEATS",
            layout_named("\u{4e00}", "1", "g").as_bytes(),
        ],
        "ERR",
    );
    assert!(error.contains(r#"section name "\xe4\xb8\x80""#), "{error}");
    // Bytes that are not UTF-8 at all.
    let error = hostile(
        &server,
        &mut c,
        &[b"TICKET.INIT", b"x", b"1", b"SEATS", b"{\xff\xfe}"],
        "ERR",
    );
    assert!(error.contains("not UTF-8"), "{error}");
}

#[test]
fn restore_and_reapply_arguments_are_quoted_not_fatal() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(&mut c, &["TICKET.INIT", "e", "3"]);
    for value in ["Ā", "一", "😀", "Ä", "\u{0}"] {
        let v = value.as_bytes();
        hostile(&server, &mut c, &[b"TICKET.RESTORE", b"rr", v], "ERR");
        hostile(
            &server,
            &mut c,
            &[b"TICKET.RESTORE", b"rr", b"BEGIN", v],
            "ERR",
        );
        hostile(
            &server,
            &mut c,
            &[b"TICKET.REAPPLY", b"e", b"1-1", v],
            "ERR",
        );
        hostile(
            &server,
            &mut c,
            &[b"TICKET.REAPPLY", b"e", v, b"claim"],
            "ERR",
        );
        hostile(
            &server,
            &mut c,
            &[b"TICKET.REAPPLY", b"e", b"op", b"claim", b"user", v],
            "ERR",
        );
    }
}

#[test]
fn a_layout_changed_by_hand_is_corrupt_not_fatal() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &[
            "TICKET.INIT",
            "s",
            "1",
            "SEATS",
            &layout_named("A", "1", "general"),
        ],
    );
    let _: () = redis::cmd("HSET")
        .arg(key("s", "meta"))
        .arg("layout")
        .arg(layout_named("一", "1", "Ā"))
        .query(&mut c)
        .unwrap();
    let error = hostile(&server, &mut c, &[b"TICKET.CLAIM", b"s", b"u"], "CORRUPT");
    assert!(error.contains(r"\xe4\xb8\x80"), "{error}");
    hostile(&server, &mut c, &[b"TICKET.SEATMAP", b"s"], "CORRUPT");
}

/// `sections` sections of `rows` one-seat rows: small to send, about ten
/// times larger stored (every default filled in).
fn one_seat_rows(sections: usize, rows: usize) -> String {
    let row_list: Vec<String> = (0..rows)
        .map(|i| format!(r#"{{"name":"{i}","seats":1}}"#))
        .collect();
    let list: Vec<String> = (0..sections)
        .map(|i| format!(r#"{{"name":"S{i}","rows":[{}]}}"#, row_list.join(",")))
        .collect();
    format!(r#"{{"sections":[{}]}}"#, list.join(","))
}

#[test]
fn a_layout_too_large_once_stored_is_refused_by_init_and_restore() {
    let primary = RedisServer::start_with(&["--repl-diskless-sync-delay", "0"]);
    let replica = strict_replica_of(&primary.port().to_string());
    let mut c = primary.conn();
    let big = one_seat_rows(35, 1000);
    assert!(big.len() < 1 << 20, "sent: {} bytes", big.len());
    let error = hostile(
        &primary,
        &mut c,
        &[b"TICKET.INIT", b"big", b"35000", b"SEATS", big.as_bytes()],
        "ERR",
    );
    assert!(
        error.contains("stored form") && error.contains("4194304"),
        "{error}"
    );
    let begin: Vec<&[u8]> = vec![
        b"TICKET.RESTORE",
        b"big",
        b"BEGIN",
        b"00000000000000aa",
        b"35000",
        b"35000",
        b"open",
        b"0",
        b"0",
        b"0",
        b"1",
        b"600000",
        b"0",
        b"0-0",
        b"SEATS",
        big.as_bytes(),
    ];
    let error = hostile(&primary, &mut c, &begin, "ERR");
    assert!(error.contains("stored form"), "{error}");
    // Just under the limit once stored: accepted, and the event works on
    // the primary and on its replica, byte for byte.
    let fits = one_seat_rows(3, 1000);
    ok(&mut c, &["TICKET.INIT", "fits", "3000", "SEATS", &fits]);
    assert_eq!(claim(&mut c, "fits", "u"), 1);
    wait_replicated(&mut c, 1);
    let mut r = replica.conn();
    assert_eq!(digest(&mut r), digest(&mut c));
}

fn venue() -> String {
    // Section A: row 1 (front, 4 seats, a wheelchair space at 1), row 2
    // (general, 4 seats); section B: row 1 (general, 6 seats, 2 wheelchair
    // spaces at its ends).
    r#"{"sections":[
      {"name":"A","rows":[
        {"name":"1","seats":4,"category":"front","accessible":[1]},
        {"name":"2","seats":4}]},
      {"name":"B","rows":[{"name":"1","seats":6,"accessible":[1,6]}]}]}"#
        .to_string()
}

#[test]
fn requests_no_row_could_ever_seat_say_what_to_change() {
    let server = RedisServer::start();
    let mut c = server.conn();
    ok(
        &mut c,
        &["TICKET.INIT", "v", "14", "LIMIT", "8", "SEATS", &venue()],
    );
    let claim_with = |c: &mut Connection, rest: &[&str]| {
        let mut args = vec!["TICKET.CLAIM", "v", "u"];
        args.extend_from_slice(rest);
        expect_error(c, &args, "ERR")
    };
    let e = claim_with(&mut c, &["SECTION", "B", "CATEGORY", "front"]);
    assert!(
        e.contains("section 'B' in category 'front': there are none"),
        "{e}"
    );
    let e = claim_with(&mut c, &["COUNT", "4", "ACCESSIBLE", "4"]);
    assert!(
        e.contains("ACCESSIBLE 4: the venue's rows have 3 wheelchair spaces in all"),
        "{e}"
    );
    let e = claim_with(&mut c, &["COUNT", "2", "ACCESSIBLE", "2", "SECTION", "B"]);
    assert!(
        e.contains("no 2 adjacent seats of the rows of section 'B' hold 2"),
        "{e}"
    );
    let e = claim_with(&mut c, &["COUNT", "7"]);
    assert!(e.contains("(at most 4); ask for fewer or add SPLIT"), "{e}");
    let e = claim_with(&mut c, &["COUNT", "8", "SECTION", "A", "SPLIT"]);
    assert!(e.contains("have only 7 seats"), "{e}");
    // Seats that exist but are taken are still NOTOGETHER / SOLDOUT.
    let full: Vec<String> = (2..=4).map(|s| s.to_string()).collect();
    let mut pick = vec!["TICKET.CLAIM", "v", "taker", "SEATS"];
    pick.extend(full.iter().map(String::as_str));
    value(&mut c, &pick);
    expect_error(
        &mut c,
        &["TICKET.CLAIM", "v", "w", "CATEGORY", "front"],
        "SOLDOUT",
    );
}

#[test]
fn a_pick_leaving_its_own_neighbour_alone_says_to_pick_that_seat() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":3}]}]}"#;
    ok(&mut c, &["TICKET.INIT", "o", "3", "SEATS", layout]);
    let e = expect_error(&mut c, &["TICKET.CLAIM", "o", "u", "SEATS", "2"], "ORPHAN");
    assert_eq!(
        e,
        "ORPHAN seat 'A-1-1' would be left alone: pick it instead, which leaves none"
    );
}

#[test]
fn a_repeat_pick_of_other_seats_is_holding_the_same_pick_is_answered() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":6}]}]}"#;
    ok(
        &mut c,
        &["TICKET.INIT", "p", "6", "LIMIT", "2", "SEATS", layout],
    );
    let pick = ["TICKET.CLAIM", "p", "u", "SEATS", "1", "2"];
    let first = value(&mut c, &pick);
    assert_eq!(
        value(&mut c, &["TICKET.CLAIM", "p", "u", "SEATS", "2", "1"]),
        first
    );
    let before = digest(&mut c);
    let e = expect_error(
        &mut c,
        &["TICKET.CLAIM", "p", "u", "SEATS", "5", "6"],
        "HOLDING",
    );
    assert_eq!(
        e,
        "HOLDING user 'u' holds 'A-1-1' 'A-1-2' (CANCEL first to pick other seats)"
    );
    assert_eq!(digest(&mut c), before);
    // COUNT alone still answers the seats held, as for any repeat claim.
    assert_eq!(
        value(&mut c, &["TICKET.CLAIM", "p", "u", "COUNT", "2"]),
        first
    );
}

#[test]
fn two_seats_may_never_share_a_name() {
    let server = RedisServer::start();
    let mut c = server.conn();
    let layout = r#"{"sections":[{"name":"A","rows":[{"name":"1-2","seats":1}]},{"name":"A-1","rows":[{"name":"2","seats":1}]}]}"#;
    let args: [&[u8]; 5] = [b"TICKET.INIT", b"n", b"2", b"SEATS", layout.as_bytes()];
    let e = hostile(&server, &mut c, &args, "ERR");
    assert!(e.contains("two seats would be named A-1-2-1"), "{e}");
    let typed = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":"4"}]}]}"#;
    let args: [&[u8]; 5] = [b"TICKET.INIT", b"n", b"4", b"SEATS", typed.as_bytes()];
    let e = hostile(&server, &mut c, &args, "ERR");
    assert!(
        e.contains(r#"sections[0].rows[0].seats: expected an integer, got a string "4""#),
        "{e}"
    );
}

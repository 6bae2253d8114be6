//! The live-server sweep of hostile input (docs/design.md "Hostile input:
//! nothing a client sends can crash Redis or stall the drain"): every
//! `TICKET.*` command the server lists (`COMMAND LIST FILTERBY MODULE
//! ticket`, so a new command is swept with no change here), at every
//! argument position of its templates, gets every value of a hostile set:
//! non-ASCII (code points that are multiples of 256, CJK, emoji, Latin-1),
//! invalid UTF-8, control bytes (NUL, `\r`, `\n`), empty, 1 MiB, numbers at
//! and beyond every bound, option keywords in the wrong place, layouts with
//! hostile names, field lists of `RESTORE`, `REAPPLY` and `_APPLY`; and
//! each template is also cut short, and has its last option repeated.
//!
//! The templates: one per command from its `COMMAND DOCS` arguments (the
//! required ones, then each optional one alone), and hand-written valid
//! calls of the known commands that reach deep (seated claims, a restore's
//! steps, heal and effect field lists), on a fixture of five events:
//! general admission, held orders, a seated hall, a draw, a waiting list.
//!
//! After each call: the server still answers `PING` on the same
//! connection (no reply broke the protocol); every string of the reply,
//! nested ones too, is valid UTF-8, and an error has no `\r`, `\n` or NUL;
//! an error left `DEBUG DIGEST` as it was just before the call; a call
//! that answered and changed the dataset left its event usable (`STATUS`
//! answers). A call that kills the server is recorded, and the server
//! restarted with a fresh fixture, so one run lists every failure; then
//! the test fails with that list. It prints how many calls it made.
//! `TICKETGATE_REDIS_SERVER` picks the server (e.g. Redis 8).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use protocol::record::{Checkout, Incarnation, Status};
use protocol::restore::{Begin, Step, RESTORE_COMMAND};
use protocol::StreamId;
use ticketgate_tests::RedisServer;

// ---------------------------------------------------------------------------
// A raw RESP client: replies exactly as the server sent their bytes.
// ---------------------------------------------------------------------------

/// One reply, its strings as raw bytes (RESP2 and RESP3 types).
#[derive(Debug, Clone, PartialEq)]
enum Reply {
    /// `+`, `-`, `:`, `,`, `(`, `#`, `_`: a line (kind, content).
    Line(u8, Vec<u8>),
    /// `$`, `=`, `!`: a blob, `None` for a null bulk.
    Blob(u8, Option<Vec<u8>>),
    /// `*`, `~`, `>`, `%`, `|`: an aggregate (maps flattened), `None` for a
    /// null array.
    Many(u8, Option<Vec<Reply>>),
}

impl Reply {
    fn is_error(&self) -> bool {
        matches!(self, Reply::Line(b'-', _) | Reply::Blob(b'!', _))
    }

    /// The text of a line or blob reply, lossy.
    fn text(&self) -> String {
        match self {
            Reply::Line(_, t) | Reply::Blob(_, Some(t)) => String::from_utf8_lossy(t).into_owned(),
            other => format!("{other:?}"),
        }
    }
}

/// Why a reply could not be read: the connection broke, or went quiet.
#[derive(Debug)]
struct Broken(String);

/// A connection that writes commands as RESP arrays and reads raw replies.
struct Raw {
    reader: BufReader<TcpStream>,
}

impl Raw {
    fn connect(port: u16, timeout: Duration) -> Result<Raw, Broken> {
        let stream = TcpStream::connect(("127.0.0.1", port)).map_err(|e| Broken(e.to_string()))?;
        stream
            .set_read_timeout(Some(timeout))
            .map_err(|e| Broken(e.to_string()))?;
        Ok(Raw {
            reader: BufReader::new(stream),
        })
    }

    /// Sends all `commands` at once (one round trip), then reads a reply
    /// for each: what the server answered, up to the first broken one.
    fn pipeline(&mut self, commands: &[Vec<Vec<u8>>]) -> (Vec<Reply>, Option<Broken>) {
        let mut out = Vec::new();
        for argv in commands {
            out.extend(format!("*{}\r\n", argv.len()).as_bytes());
            for arg in argv {
                out.extend(format!("${}\r\n", arg.len()).as_bytes());
                out.extend(arg);
                out.extend(b"\r\n");
            }
        }
        if let Err(e) = self.reader.get_mut().write_all(&out) {
            return (Vec::new(), Some(Broken(format!("write: {e}"))));
        }
        let mut replies = Vec::new();
        for _ in commands {
            match self.read() {
                Ok(r) => replies.push(r),
                Err(b) => return (replies, Some(b)),
            }
        }
        (replies, None)
    }

    fn call(&mut self, argv: &[&[u8]]) -> Result<Reply, Broken> {
        let argv: Vec<Vec<u8>> = argv.iter().map(|a| a.to_vec()).collect();
        let (mut replies, broken) = self.pipeline(&[argv]);
        match broken {
            Some(b) => Err(b),
            None => Ok(replies.remove(0)),
        }
    }

    /// One line without its `\r\n` (a lone `\r` or `\n` stays in it).
    fn line(&mut self) -> Result<Vec<u8>, Broken> {
        let mut line = Vec::new();
        loop {
            let n = self
                .reader
                .read_until(b'\n', &mut line)
                .map_err(|e| Broken(e.to_string()))?;
            if n == 0 {
                return Err(Broken("the connection closed".into()));
            }
            if line.ends_with(b"\r\n") {
                line.truncate(line.len() - 2);
                return Ok(line);
            }
        }
    }

    fn read(&mut self) -> Result<Reply, Broken> {
        let line = self.line()?;
        let (&kind, rest) = line
            .split_first()
            .ok_or_else(|| Broken("an empty line".into()))?;
        let len = || -> Result<i64, Broken> {
            let text = String::from_utf8_lossy(rest);
            text.parse()
                .map_err(|_| Broken(format!("a bad length {text:?}")))
        };
        match kind {
            b'+' | b'-' | b':' | b',' | b'(' | b'#' | b'_' => Ok(Reply::Line(kind, rest.to_vec())),
            b'$' | b'=' | b'!' => self.blob(kind, len()?),
            b'*' | b'~' | b'>' => self.many(kind, len()?, 1),
            b'%' | b'|' => self.many(kind, len()?, 2),
            other => Err(Broken(format!(
                "a reply of unknown type {:?}",
                other as char
            ))),
        }
    }

    fn blob(&mut self, kind: u8, len: i64) -> Result<Reply, Broken> {
        let Ok(len) = usize::try_from(len) else {
            return Ok(Reply::Blob(kind, None));
        };
        let mut body = vec![0; len + 2];
        std::io::Read::read_exact(&mut self.reader, &mut body)
            .map_err(|e| Broken(e.to_string()))?;
        if !body.ends_with(b"\r\n") {
            return Err(Broken("a blob not followed by \\r\\n".into()));
        }
        body.truncate(len);
        Ok(Reply::Blob(kind, Some(body)))
    }

    fn many(&mut self, kind: u8, len: i64, per_item: usize) -> Result<Reply, Broken> {
        let Ok(len) = usize::try_from(len) else {
            return Ok(Reply::Many(kind, None));
        };
        let items: Result<Vec<Reply>, Broken> = (0..len * per_item).map(|_| self.read()).collect();
        Ok(Reply::Many(kind, Some(items?)))
    }
}

/// Owned arguments from text.
fn args(parts: &[&str]) -> Vec<Vec<u8>> {
    parts.iter().map(|p| p.as_bytes().to_vec()).collect()
}

// ---------------------------------------------------------------------------
// What a reply must be.
// ---------------------------------------------------------------------------

/// What is wrong with a reply's bytes: a string that is not UTF-8
/// (nested ones too), an error line with `\r`, `\n` or NUL.
fn reply_problems(reply: &Reply) -> Vec<(&'static str, String)> {
    let mut problems = Vec::new();
    walk(reply, &mut |r| match r {
        Reply::Line(kind, t) | Reply::Blob(kind, Some(t)) => {
            if std::str::from_utf8(t).is_err() {
                problems.push(("reply not UTF-8", shown(t)));
            }
            let error = matches!(kind, b'-' | b'!');
            if error && t.iter().any(|b| matches!(b, b'\r' | b'\n' | 0)) {
                problems.push(("error with CR, LF or NUL", shown(t)));
            }
        }
        _ => {}
    });
    problems
}

fn walk(reply: &Reply, f: &mut impl FnMut(&Reply)) {
    f(reply);
    if let Reply::Many(_, Some(items)) = reply {
        items.iter().for_each(|item| walk(item, f));
    }
}

/// Bytes as an escaped string, cut to 80 characters.
fn shown(bytes: &[u8]) -> String {
    let escaped = bytes.escape_ascii().to_string();
    match escaped.len() {
        0..=80 => escaped,
        _ => format!("{}... ({} bytes)", &escaped[..80], bytes.len()),
    }
}

fn shown_argv(argv: &[Vec<u8>]) -> String {
    let parts: Vec<String> = argv.iter().map(|a| format!("'{}'", shown(a))).collect();
    parts.join(" ")
}

// ---------------------------------------------------------------------------
// The fixture and the hostile values.
// ---------------------------------------------------------------------------

/// A seated hall: two rows of three seats, an accessible one.
const HALL: &str = r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":3,"accessible":[3]},{"name":"2","seats":3}]}]}"#;

/// An hour: no hold of the fixture expires during the sweep (an expiry
/// between the digest and the call would look like an error that wrote).
const HOUR: &str = "3600000";

/// The fixture: a few events in every state a command can meet.
fn fixture() -> Vec<Vec<Vec<u8>>> {
    let calls: [&[&str]; 17] = [
        &["TICKET.INIT", "ga", "100"],
        &["TICKET.CLAIM", "ga", "alice"],
        &["TICKET.CLAIM", "ga", "bob"],
        &[
            "TICKET.ALLOCATE",
            "ga",
            "promoter",
            "COUNT",
            "5",
            "KEY",
            "pw",
        ],
        &[
            "TICKET.ALLOCATE",
            "ga",
            "house",
            "COUNT",
            "2",
            "RELEASE",
            "4102444800000",
        ],
        &["TICKET.INIT", "held", "10", "HOLD", HOUR, "LIMIT", "4"],
        &["TICKET.CLAIM", "held", "alice", "COUNT", "2"],
        &[
            "TICKET.INIT",
            "hall",
            "6",
            "HOLD",
            HOUR,
            "LIMIT",
            "4",
            "SEATS",
            HALL,
        ],
        &["TICKET.CLAIM", "hall", "alice", "COUNT", "2"],
        &["TICKET.CONFIRM", "hall", "alice"],
        &["TICKET.ALLOCATE", "hall", "camera", "SEATS", "3"],
        &["TICKET.INIT", "draw", "2", "HOLD", HOUR, "DRAW"],
        &["TICKET.WAIT", "draw", "alice"],
        &["TICKET.INIT", "wl", "1", "HOLD", HOUR],
        &["TICKET.CLAIM", "wl", "alice"],
        &["TICKET.WAIT", "wl", "bob"],
        &["TICKET.WAIT", "wl", "carol", "COUNT", "1"],
    ];
    calls.iter().map(|c| args(c)).collect()
}

/// Layouts that look valid but carry hostile names, numbers or shapes.
fn hostile_layouts() -> Vec<Vec<u8>> {
    let one = |section: &str, row: &str| {
        format!(r#"{{"sections":[{{"name":"{section}","rows":[{row}]}}]}}"#)
    };
    let mut out: Vec<Vec<u8>> = [
        one("\u{4e00}", r#"{"name":"1","seats":1}"#),
        one("\u{100}", r#"{"name":"1","seats":1}"#),
        one("A", r#"{"name":"\u0100","seats":1}"#),
        one("\\u0000", r#"{"name":"1","seats":1}"#),
        one("A", r#"{"name":"1","seats":1,"category":"Ä"}"#),
        one("A", r#"{"name":"1","seats":3,"center":1e308}"#),
        one("A", r#"{"name":"1","seats":1,"\u4e00":1}"#),
        r#"{"sections":[{"name":"A","rows":[{"name":"1-2","seats":1}]},{"name":"A-1","rows":[{"name":"2","seats":1}]}]}"#.into(),
        "[".repeat(100_000),
    ]
    .into_iter()
    .map(String::into_bytes)
    .collect();
    out.push(b"{\"sections\":[{\"name\":\"\xff\",\"rows\":[]}]}".to_vec());
    out
}

/// The hostile values every argument position gets, one or a few of
/// each kind (the sweep's time goes into positions, not into variants).
fn hostile_values() -> Vec<Vec<u8>> {
    let texts = [
        // Non-ASCII: multiples of 256 (issue 39), CJK, emoji, Latin-1.
        "\u{100}",
        "\u{4e00}",
        "\u{1f39f}",
        "\u{c4}",
        "a\u{100}b",
        "\u{10ffff}",
        // Control bytes.
        "\0",
        "a\0b",
        "\r\n",
        "x\r\n-ERR forged",
        "\x01",
        "\x7f",
        // Empty and blank.
        "",
        " ",
        // Numbers at and beyond every bound.
        "0",
        "-1",
        "+1",
        "1.5",
        "2147483648",
        "9223372036854775807",
        "9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "NaN",
        // Stream ids, ticket lists, incarnations.
        "0-0",
        "18446744073709551615-18446744073709551615",
        "1-",
        "1,2,3",
        "3,2,1",
        "0000000000000000",
        // Option keywords and words of the formats in the wrong place.
        "COUNT",
        "SEATS",
        "FORCE",
        "BEGIN",
        "op",
    ];
    let mut values: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
    let invalid_utf8: [&[u8]; 4] = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"a\xffb"];
    values.extend(invalid_utf8.iter().map(|b| b.to_vec()));
    values.push(vec![b'a'; 65]);
    values.push(vec![b'a'; 1 << 20]);
    values.push("\u{100}".repeat(1 << 19).into_bytes());
    values.extend(hostile_layouts());
    values
}

// ---------------------------------------------------------------------------
// The calls: templates from COMMAND DOCS and hand-written ones, varied.
// ---------------------------------------------------------------------------

/// A valid call and the positions the sweep varies (earlier positions
/// are varied by another template).
struct Template {
    argv: Vec<Vec<u8>>,
    from: usize,
}

/// The module's commands as the server lists them.
fn module_commands(c: &mut Raw) -> Vec<String> {
    let listed = c
        .call(&[b"COMMAND", b"LIST", b"FILTERBY", b"MODULE", b"ticket"])
        .expect("COMMAND LIST FILTERBY MODULE ticket");
    let Reply::Many(_, Some(names)) = listed else {
        panic!("COMMAND LIST: {listed:?}");
    };
    let mut names: Vec<String> = names.iter().map(Reply::text).collect();
    names.sort();
    names
}

/// An argument of `COMMAND DOCS`: name, type, token, optional.
struct DocArg {
    name: String,
    kind: String,
    token: Option<String>,
    optional: bool,
}

/// The field `name` of a flat `[name, value, ...]` reply.
fn field<'a>(pairs: &'a [Reply], name: &str) -> Option<&'a Reply> {
    pairs.chunks(2).find(|p| p[0].text() == name).map(|p| &p[1])
}

fn doc_args(c: &mut Raw, command: &str) -> Vec<DocArg> {
    let docs = c
        .call(&[b"COMMAND", b"DOCS", command.as_bytes()])
        .expect("COMMAND DOCS");
    let Reply::Many(_, Some(top)) = docs else {
        panic!("COMMAND DOCS {command}: {docs:?}");
    };
    let Some(Reply::Many(_, Some(doc))) = top.get(1) else {
        return Vec::new();
    };
    let Some(Reply::Many(_, Some(args))) = field(doc, "arguments") else {
        return Vec::new();
    };
    args.iter().filter_map(doc_arg).collect()
}

fn doc_arg(arg: &Reply) -> Option<DocArg> {
    let Reply::Many(_, Some(pairs)) = arg else {
        return None;
    };
    let flags = match field(pairs, "flags") {
        Some(Reply::Many(_, Some(f))) => f.iter().map(Reply::text).collect(),
        _ => Vec::new(),
    };
    Some(DocArg {
        name: field(pairs, "name")?.text(),
        kind: field(pairs, "type")?.text(),
        token: field(pairs, "token").map(Reply::text),
        optional: flags.iter().any(|f| f == "optional"),
    })
}

/// A plausible value of a documented argument, on the fixture.
fn doc_value(arg: &DocArg) -> &'static str {
    match (arg.kind.as_str(), arg.name.as_str()) {
        ("key", _) => "held",
        (_, "user") => "alice",
        _ => "1",
    }
}

/// From `COMMAND DOCS`: the required arguments, then each optional one
/// alone (only its own positions varied).
fn doc_templates(name: &str, args: &[DocArg]) -> Vec<Template> {
    let mut base = vec![name.to_uppercase().into_bytes()];
    base.extend(
        args.iter()
            .filter(|a| !a.optional)
            .map(|a| doc_value(a).as_bytes().to_vec()),
    );
    let mut out = vec![Template {
        argv: base.clone(),
        from: 1,
    }];
    for arg in args.iter().filter(|a| a.optional) {
        let mut argv = base.clone();
        argv.extend(arg.token.iter().map(|t| t.as_bytes().to_vec()));
        if arg.kind != "pure-token" {
            argv.push(doc_value(arg).as_bytes().to_vec());
        }
        out.push(Template {
            argv,
            from: base.len(),
        });
    }
    out
}

/// `TICKET.RESTORE <event> BEGIN ... FORCE` as the sidecar's rebuild
/// writes it: an open event of `total`, all minted, one order, seated
/// when `layout` is given.
fn restore_begin(event: &str, total: i64, layout: Option<&str>) -> Vec<String> {
    let begin = Begin {
        incarnation: Incarnation(0xff),
        total,
        minted: total,
        status: Status::Open,
        opens_at: 0,
        closes_at: 0,
        checkout: Checkout::default(),
        orders: 1,
        from: StreamId::new(17, 2),
        layout: layout.map(str::to_owned),
    };
    let step: Step = Step::Begin { begin, force: true };
    let mut args = vec![RESTORE_COMMAND.to_owned()];
    args.extend(step.args(event).as_slice().iter().map(|v| v.to_string()));
    args
}

/// Hand-written valid calls that reach deep into the known commands, one
/// a line, words split at spaces (`HALL`: the hall's layout).
const KNOWN: &str = "\
TICKET.INIT new 10 OPENS 0 CLOSES 0 HOLD 60000 LIMIT 2 OFFER 60000
TICKET.INIT new 10 HOLD 60000 DRAW ADMIT 5
TICKET.INIT new 6 HOLD 60000 SEATS HALL
TICKET.CLAIM held carol COUNT 2 HOLD 60000
TICKET.CLAIM hall carol COUNT 2 SECTION A CATEGORY general SPLIT
TICKET.CLAIM hall carol ACCESSIBLE 1 COUNT 1
TICKET.CLAIM hall carol SEATS 5 6
TICKET.WAIT wl dave COUNT 1
TICKET.ALLOCATE ga partner COUNT 3 KEY k RELEASE 4102444800000
TICKET.ALLOCATE hall extra COUNT 1 KEY k RELEASE 4102444800000
TICKET.ALLOCATE hall extra COUNT 1 SECTION A CATEGORY general
TICKET.ALLOCATE ga house KEY k
TICKET.CLAIM ga carol COUNT 2 FROM promoter KEY pw HOLD 60000
TICKET.CLAIM hall carol FROM camera SEATS 3
TICKET.RELEASE ga promoter COUNT 2
TICKET.RELEASE ga house SEATS 8
TICKET.ALLOCATIONS ga
TICKET.WAIT draw dave
TICKET.DROP ga FORCE
TICKET.RESTORE rr ORDERS u1 1,2 0 u2 5 99
TICKET.RESTORE rr ALLOCATION fan 3,4 2 1893456000000 u1 u2
TICKET.RESTORE rr FREE 3 6-9
TICKET.RESTORE rr COMMIT
TICKET.REAPPLY held SINCE 0-0 op claim event held user dave tickets 5,6 at 1
TICKET.REAPPLY ga op open event ga at 1
TICKET._APPLY 3 ga claim 1700 3 7 u1 ticket 7 at 1699
TICKET._APPLY 1 ga init 5-0 4 10 0 0 0 1 600000 000000000000beef
TICKET._APPLY 1 ga restore-orders u1 1,2 0
TICKET._APPLY 1 ga restore-allocation fan 3,4 2 - u1";

/// The hand-written calls, and a restore's `BEGIN` as the sidecar writes
/// it (plain and seated).
fn known_templates() -> Vec<Template> {
    let mut calls: Vec<Vec<String>> = KNOWN
        .lines()
        .map(|line| line.split(' ').map(|w| w.replace("HALL", HALL)).collect())
        .collect();
    calls.push(restore_begin("rr", 100, None));
    calls.push(restore_begin("rs", 6, Some(HALL)));
    let template = |c: Vec<String>| Template {
        argv: c.into_iter().map(String::into_bytes).collect(),
        from: 1,
    };
    calls.into_iter().map(template).collect()
}

/// Every call of the sweep, from every template.
fn calls(templates: &[Template], keywords: &[String]) -> Vec<Vec<Vec<u8>>> {
    let values = hostile_values();
    let mut out = Vec::new();
    for t in templates {
        out.extend(replaced(t, &values));
        out.extend(cut_and_repeated(t));
        out.extend(keywords_inserted(t, keywords));
    }
    out
}

/// Each varied position of `t` replaced by each hostile value.
fn replaced(t: &Template, values: &[Vec<u8>]) -> Vec<Vec<Vec<u8>>> {
    let positions = t.from.max(1)..t.argv.len();
    let each = |i: usize| {
        values.iter().map(move |v| {
            let mut argv = t.argv.clone();
            argv[i] = v.clone();
            argv
        })
    };
    positions.flat_map(each).collect()
}

/// `t` cut short at every length, and with its last two arguments (an
/// option and its value) repeated.
fn cut_and_repeated(t: &Template) -> Vec<Vec<Vec<u8>>> {
    let mut out: Vec<Vec<Vec<u8>>> = (1..t.argv.len()).map(|k| t.argv[..k].to_vec()).collect();
    let mut repeated = t.argv.clone();
    repeated.extend_from_slice(&t.argv[t.argv.len().saturating_sub(2).max(1)..]);
    out.push(repeated);
    out
}

/// Each keyword of the module put after the event of `t`, and at its end.
fn keywords_inserted(t: &Template, keywords: &[String]) -> Vec<Vec<Vec<u8>>> {
    let mut out = Vec::new();
    for word in keywords {
        for at in [2.min(t.argv.len()), t.argv.len()] {
            let mut argv = t.argv.clone();
            argv.insert(at, word.as_bytes().to_vec());
            out.push(argv);
        }
    }
    out
}

// ---------------------------------------------------------------------------
// The sweep.
// ---------------------------------------------------------------------------

/// One thing the sweep found.
struct Finding {
    kind: &'static str,
    command: String,
    argv: String,
    detail: String,
}

/// The server under the sweep, its connection, and what it found.
struct Sweep {
    server: RedisServer,
    conn: Raw,
    findings: Vec<Finding>,
    calls: usize,
    restarts: usize,
}

/// How long one call may take before the sweep calls it a stall.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

impl Sweep {
    fn start() -> Sweep {
        let server = RedisServer::start();
        let mut conn = fresh(&server);
        digest_sees_a_write(&mut conn);
        Sweep {
            server,
            conn,
            findings: Vec::new(),
            calls: 0,
            restarts: 0,
        }
    }

    /// Starts the server again (after a crash or a stall) with a fresh
    /// fixture.
    fn restart(&mut self) {
        self.server.kill();
        self.server.start_again();
        self.conn = fresh(&self.server);
        self.restarts += 1;
    }

    fn found(&mut self, kind: &'static str, argv: &[Vec<u8>], detail: String) {
        self.findings.push(Finding {
            kind,
            command: String::from_utf8_lossy(&argv[0]).to_uppercase(),
            argv: shown_argv(argv),
            detail: detail.chars().take(240).collect(),
        });
    }

    /// One hostile call and every check after it, in one round trip:
    /// the digest before, the call, `PING`, the digest after.
    fn check(&mut self, argv: &[Vec<u8>]) {
        self.calls += 1;
        let digest = args(&["DEBUG", "DIGEST"]);
        let batch = [digest.clone(), argv.to_vec(), args(&["PING"]), digest];
        let (replies, broken) = self.conn.pipeline(&batch);
        if let Some(broken) = broken {
            return self.broke(argv, replies.len(), broken);
        }
        let [before, reply, pong, after] = &replies[..] else {
            unreachable!("four replies");
        };
        for (kind, detail) in reply_problems(reply) {
            self.found(kind, argv, detail);
        }
        if *pong != Reply::Line(b'+', b"PONG".to_vec()) {
            self.found("PING answered wrong", argv, format!("{pong:?}"));
            return self.restart();
        }
        match (reply.is_error(), before == after) {
            (true, false) => {
                self.found("error changed the dataset", argv, reply.text());
                self.refresh(argv);
            }
            (false, false) => self.changed(argv, reply),
            _ => {}
        }
    }

    /// A call broke the connection: a crash, or a stall.
    fn broke(&mut self, argv: &[Vec<u8>], answered: usize, broken: Broken) {
        let alive = Raw::connect(self.server.port(), Duration::from_secs(2))
            .and_then(|mut c| c.call(&[b"PING"]))
            .is_ok();
        let (kind, detail) = match (alive, answered) {
            (false, _) => ("crash", last_panic(&self.server)),
            (true, 1) => ("stall or broken reply", broken.0),
            (true, _) => ("PING or DIGEST failed", broken.0),
        };
        self.found(kind, argv, detail);
        self.restart();
    }

    /// A call that answered and changed the dataset: its event must still
    /// answer `STATUS`; then the fixture is made again.
    fn changed(&mut self, argv: &[Vec<u8>], reply: &Reply) {
        let event = argv
            .iter()
            .skip(1)
            .find(|a| FIXTURE_EVENTS.iter().any(|e| e.as_bytes() == a.as_slice()));
        if let Some(event) = event.cloned() {
            match self.conn.call(&[b"TICKET.STATUS", &event]) {
                Ok(status) if status.is_error() && !status.text().starts_with("NOEVENT") => {
                    let detail =
                        format!("answered {}, then STATUS: {}", reply.text(), status.text());
                    self.found("event unusable after a reply", argv, detail);
                }
                Ok(_) => {}
                Err(broken) => return self.broke(argv, 0, broken),
            }
        }
        self.refresh(argv);
    }

    /// Makes the fixture again, so the next call meets the same state.
    fn refresh(&mut self, argv: &[Vec<u8>]) {
        if let Err(broken) = reset(&mut self.conn) {
            self.broke(argv, 0, broken);
        }
    }
}

/// The check "an error left the dataset as it was" can fail: a write
/// changes `DEBUG DIGEST` (the server allows `DEBUG`), and the fixture is
/// made again after it.
fn digest_sees_a_write(conn: &mut Raw) {
    let digest = args(&["DEBUG", "DIGEST"]);
    let batch = [digest.clone(), args(&["TICKET.CLAIM", "ga", "zed"]), digest];
    let (replies, broken) = conn.pipeline(&batch);
    assert!(broken.is_none(), "{broken:?}");
    assert!(
        !replies[0].is_error(),
        "DEBUG DIGEST: {}",
        replies[0].text()
    );
    // 3 to 9 are the fixture's allocations: public claims go around them.
    assert_eq!(
        replies[1],
        Reply::Line(b':', b"10".to_vec()),
        "a claim of the fixture"
    );
    assert_ne!(replies[0], replies[2], "DEBUG DIGEST did not see a claim");
    reset(conn).expect("the fixture");
}

/// The fixture's events and those the templates create.
const FIXTURE_EVENTS: [&str; 8] = ["ga", "held", "hall", "draw", "wl", "new", "rr", "rs"];

/// A connection to `server` holding a fresh fixture.
fn fresh(server: &RedisServer) -> Raw {
    let mut conn = Raw::connect(server.port(), CALL_TIMEOUT).expect("connect to redis-server");
    reset(&mut conn).expect("the fixture");
    conn
}

/// Empties the server and makes the fixture again; every step must work.
fn reset(conn: &mut Raw) -> Result<(), Broken> {
    let mut batch = vec![args(&["FLUSHALL"])];
    batch.extend(fixture());
    let (replies, broken) = conn.pipeline(&batch);
    if let Some(broken) = broken {
        return Err(broken);
    }
    for (call, reply) in batch.iter().zip(&replies) {
        assert!(
            !reply.is_error(),
            "fixture {}: {}",
            shown_argv(call),
            reply.text()
        );
    }
    Ok(())
}

/// The last panic the server's stderr shows: where, and its message.
fn last_panic(server: &RedisServer) -> String {
    let stderr = std::fs::read_to_string(server.dir().join("redis.stderr")).unwrap_or_default();
    let lines: Vec<&str> = stderr.lines().collect();
    let Some(i) = lines.iter().rposition(|l| l.contains("panicked at")) else {
        return "the server died (no panic message on stderr)".into();
    };
    let place = lines[i].rsplit('/').next().unwrap_or(lines[i]);
    let message = lines.get(i + 1).copied().unwrap_or("");
    format!(
        "panicked at {place} {}",
        nul_error_text(message).unwrap_or(message.to_owned())
    )
}

/// A `NulError(at, [bytes])` as the text it held: the error reply the
/// module was making when a NUL stopped it.
fn nul_error_text(message: &str) -> Option<String> {
    let (_, rest) = message.split_once("NulError(")?;
    let (at, rest) = rest.split_once(", [")?;
    let bytes: Vec<u8> = rest
        .split(']')
        .next()?
        .split(", ")
        .filter_map(|b| b.parse().ok())
        .collect();
    Some(format!(
        "NulError at byte {at} of {:?}",
        String::from_utf8_lossy(&bytes)
    ))
}

/// Findings counted by kind and command, then listed.
fn report(findings: &[Finding]) -> String {
    let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    for f in findings {
        *counts.entry((f.kind, f.command.as_str())).or_default() += 1;
    }
    let mut out = format!("{} failures:\n", findings.len());
    for ((kind, command), n) in &counts {
        out.push_str(&format!("  {n:5}  {kind:32} {command}\n"));
    }
    for f in findings {
        out.push_str(&format!(
            "{} | {} | {} | {}\n",
            f.kind, f.command, f.argv, f.detail
        ));
    }
    out
}

/// A line on stderr even when libtest captures the output (the count of
/// calls belongs in every run's log).
fn say(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Every keyword the module's commands take (their documented tokens).
fn keywords(c: &mut Raw, commands: &[String]) -> Vec<String> {
    let mut words: Vec<String> = commands
        .iter()
        .flat_map(|name| doc_args(c, name))
        .filter_map(|a| a.token)
        .collect();
    words.sort();
    words.dedup();
    words
}

/// The reply checks catch what they look for, nested too, and only that.
#[test]
fn reply_checks_catch_bad_bytes_anywhere() {
    let fine = Reply::Many(
        b'*',
        Some(vec![
            Reply::Blob(b'$', Some("\u{100}".into())),
            Reply::Line(b':', b"1".to_vec()),
        ]),
    );
    assert!(reply_problems(&fine).is_empty());
    let nested = Reply::Many(
        b'*',
        Some(vec![Reply::Many(
            b'%',
            Some(vec![Reply::Blob(b'$', Some(b"\xc4".to_vec()))]),
        )]),
    );
    assert_eq!(reply_problems(&nested)[0].0, "reply not UTF-8");
    let error = Reply::Line(b'-', b"ERR a\0b".to_vec());
    assert_eq!(reply_problems(&error)[0].0, "error with CR, LF or NUL");
    // A bulk string may hold a NUL; only an error may not.
    assert!(reply_problems(&Reply::Blob(b'$', Some(b"a\0b".to_vec()))).is_empty());
    let text = "called `Result::unwrap()` on an `Err` value: NulError(5, [69, 82, 82, 32, 97, 0])";
    assert_eq!(
        nul_error_text(text).as_deref(),
        Some("NulError at byte 5 of \"ERR a\\0\"")
    );
}

#[test]
fn no_hostile_call_crashes_the_server_or_breaks_a_reply_or_the_data() {
    let started = Instant::now();
    let mut sweep = Sweep::start();
    let commands = module_commands(&mut sweep.conn);
    assert!(
        commands.iter().any(|c| c == "ticket.claim"),
        "the module's commands: {commands:?}"
    );
    let mut templates: Vec<Template> = Vec::new();
    for name in &commands {
        templates.extend(doc_templates(name, &doc_args(&mut sweep.conn, name)));
    }
    // A command the server hides from clients (`_APPLY` on Redis 8) is
    // out of their reach; Redis itself answers it "unknown command",
    // quoting the arguments as they came.
    let listed =
        |t: &Template| commands.contains(&String::from_utf8_lossy(&t.argv[0]).to_lowercase());
    templates.extend(known_templates().into_iter().filter(listed));
    let words = keywords(&mut sweep.conn, &commands);
    let calls = calls(&templates, &words);
    for (i, argv) in calls.iter().enumerate() {
        sweep.check(argv);
        if (i + 1) % 2000 == 0 {
            let secs = started.elapsed().as_secs_f64();
            let failures = sweep.findings.len();
            let total = calls.len();
            say(&format!(
                "module_hostile: {}/{total} calls, {failures} failures, {secs:.0} s",
                i + 1
            ));
        }
    }
    let line = format!(
        "module_hostile: {} calls ({} commands, {} templates), {} failures, {} restarts, in {:.1} s",
        sweep.calls,
        commands.len(),
        templates.len(),
        sweep.findings.len(),
        sweep.restarts,
        started.elapsed().as_secs_f64()
    );
    say(&line);
    assert!(sweep.calls >= 2000, "only {} calls", sweep.calls);
    assert!(sweep.findings.is_empty(), "{}", report(&sweep.findings));
}

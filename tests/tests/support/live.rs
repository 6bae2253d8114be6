//! Shared helpers of the `live_*` end-to-end tests (included with `#[path]`
//! from tests/tests/live_*.rs): [`Live`] runs the real
//! `target/release/ticketgate-live` binary as a child process,
//! [`SseStream`] is a small Server-Sent Events client (reqwest's blocking
//! body read line by line on a thread, messages handed over on a channel),
//! [`venue`] writes a seated layout and [`SeatView`] follows a seat-map
//! stream as the page does.
#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use ticketgate_tests::{release_bin, wait_until};

/// Generous upper bound for anything the live server should push "at once".
pub const SOON: Duration = Duration::from_secs(10);

/// Runs a Redis command given as words; panics on an error reply.
pub fn run(c: &mut redis::Connection, parts: &[&str]) -> redis::Value {
    let mut cmd = redis::cmd(parts[0]);
    for p in &parts[1..] {
        cmd.arg(*p);
    }
    cmd.query(c).unwrap_or_else(|e| panic!("{parts:?}: {e}"))
}

/// Path of the release `ticketgate-live` (see [`release_bin`]).
pub fn live_bin() -> PathBuf {
    release_bin("ticketgate-live", "ticketgate-live")
}

/// A running `ticketgate-live` on a kernel-chosen port; killed on drop.
pub struct Live {
    pub child: Child,
    pub log: PathBuf,
    pub port: u16,
    _dir: tempfile::TempDir,
}

impl Live {
    /// Starts it against `redis_url` with extra flags (`--max-rate`, ...).
    pub fn start(redis_url: &str, extra: &[&str]) -> Live {
        let dir = tempfile::Builder::new()
            .prefix("tg-live-")
            .tempdir()
            .expect("tempdir");
        let log = dir.path().join("live.log");
        let f = fs::File::create(&log).expect("create live log");
        let child = Command::new(live_bin())
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .env("TICKETGATE_REDIS_URL", redis_url)
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(f.try_clone().expect("dup log"))
            .stderr(f)
            .spawn()
            .expect("spawn ticketgate-live");
        let mut live = Live {
            child,
            log,
            port: 0,
            _dir: dir,
        };
        live.port = live.logged_port();
        live
    }

    /// The live server's log so far.
    pub fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    fn logged_port(&self) -> u16 {
        let mut port = None;
        wait_until(
            Duration::from_secs(15),
            "ticketgate-live logs its address",
            || {
                port = self.log().lines().find_map(|l| {
                    let rest = l.split("listening on http://127.0.0.1:").nth(1)?;
                    rest.split('/').next()?.parse().ok()
                });
                port.is_some()
            },
        );
        port.unwrap_or_else(|| panic!("no address in the log:\n{}", self.log()))
    }

    /// `http://127.0.0.1:<port>`
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// GET `path`: (status, body).
    pub fn get(&self, path: &str) -> (u16, String) {
        let resp = reqwest::blocking::get(format!("{}{path}", self.base()))
            .unwrap_or_else(|e| panic!("GET {path}: {e}\n{}", self.log()));
        let status = resp.status().as_u16();
        (status, resp.text().unwrap_or_default())
    }

    /// The value of one unlabelled series on `/metrics`.
    pub fn metric(&self, name: &str) -> f64 {
        let (_, text) = self.get("/metrics");
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in /metrics:\n{text}"))
    }

    /// Opens `/events/{event}/stock`, with `Last-Event-ID` when given.
    pub fn subscribe(&self, event: &str, last_id: Option<u64>) -> SseStream {
        match SseStream::open(&format!("{}/events/{event}/stock", self.base()), last_id) {
            Ok(s) => s,
            Err((status, body)) => {
                panic!("stock of {event}: HTTP {status}: {body}\n{}", self.log())
            }
        }
    }
}

impl Live {
    /// Opens `/events/{event}/seatmap`.
    pub fn seatmap(&self, event: &str) -> SseStream {
        let url = format!("{}/events/{event}/seatmap", self.base());
        SseStream::open(&url, None)
            .unwrap_or_else(|(status, body)| panic!("seatmap of {event}: HTTP {status}: {body}"))
    }

    /// The live process's resident memory in kB.
    pub fn rss_kb(&self) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc/<pid>/status");
        status
            .lines()
            .find_map(|l| {
                l.strip_prefix("VmRSS:")?
                    .split_whitespace()
                    .next()?
                    .parse()
                    .ok()
            })
            .expect("VmRSS")
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One SSE message (or a comment line, with `comment` set).
#[derive(Debug, Clone, Default)]
pub struct Message {
    pub event: String,
    pub id: Option<u64>,
    pub data: String,
    pub comment: Option<String>,
}

impl Message {
    /// `data` as JSON (panics if it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("data {:?}: {e}", self.data))
    }

    /// An integer field of the JSON data.
    pub fn int(&self, field: &str) -> i64 {
        self.json()[field]
            .as_i64()
            .unwrap_or_else(|| panic!("no integer {field} in {:?}", self.data))
    }
}

/// An open `text/event-stream` response being read on a thread.
pub struct SseStream {
    pub content_type: String,
    pub headers: reqwest::header::HeaderMap,
    rx: Receiver<Message>,
}

impl SseStream {
    /// GET `url` as an event stream; `Err((status, body))` unless 200.
    pub fn open(url: &str, last_id: Option<u64>) -> Result<SseStream, (u16, String)> {
        Self::open_gated(url, last_id, None)
    }

    /// Like [`SseStream::open`], but nothing is read from the connection
    /// (so the server's socket fills up) until `go` is signalled.
    pub fn open_paused(url: &str) -> (SseStream, Sender<()>) {
        let (go, wait) = channel();
        let s = Self::open_gated(url, None, Some(wait))
            .unwrap_or_else(|(status, body)| panic!("GET {url}: HTTP {status}: {body}"));
        (s, go)
    }

    fn open_gated(
        url: &str,
        last_id: Option<u64>,
        gate: Option<Receiver<()>>,
    ) -> Result<SseStream, (u16, String)> {
        let client = reqwest::blocking::Client::builder()
            .timeout(None)
            .build()
            .expect("http client");
        let mut req = client.get(url).header("Accept", "text/event-stream");
        if let Some(id) = last_id {
            req = req.header("Last-Event-ID", id.to_string());
        }
        let resp = req.send().unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let status = resp.status().as_u16();
        if status != 200 {
            return Err((status, resp.text().unwrap_or_default()));
        }
        let headers = resp.headers().clone();
        let content_type = headers
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            if let Some(gate) = gate {
                let _ = gate.recv();
            }
            let mut msg = Message::default();
            for line in BufReader::new(resp).lines() {
                let Ok(line) = line else { return };
                let done = parse_line(&line, &mut msg);
                if done && tx.send(std::mem::take(&mut msg)).is_err() {
                    return;
                }
            }
        });
        Ok(SseStream {
            content_type,
            headers,
            rx,
        })
    }

    /// The next message or comment within `timeout`.
    pub fn next(&self, timeout: Duration) -> Option<Message> {
        match self.rx.recv_timeout(timeout) {
            Ok(m) => Some(m),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => panic!("the event stream ended"),
        }
    }

    /// The next `event: stock` message (comments skipped); panics after `timeout`.
    pub fn stock(&self, timeout: Duration) -> Message {
        self.until(timeout, "a stock message", |m| m.event == "stock")
    }

    /// Skips messages until one satisfies `f`; panics after `timeout`.
    pub fn until(&self, timeout: Duration, what: &str, f: impl Fn(&Message) -> bool) -> Message {
        let deadline = Instant::now() + timeout;
        let mut seen = Vec::new();
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.next(left) {
                Some(m) if f(&m) => return m,
                Some(m) => seen.push(m),
                None => break,
            }
        }
        panic!("no {what} within {timeout:?}; got {seen:?}");
    }
}

/// Adds one line to `msg`; true when the line ends a message (a blank line
/// after fields, or a comment, which is handed over as its own message).
fn parse_line(line: &str, msg: &mut Message) -> bool {
    if line.is_empty() {
        return !msg.event.is_empty() || !msg.data.is_empty();
    }
    if let Some(c) = line.strip_prefix(':') {
        *msg = Message {
            comment: Some(c.trim().to_owned()),
            ..Message::default()
        };
        return true;
    }
    let (field, value) = line.split_once(':').unwrap_or((line, ""));
    let value = value.strip_prefix(' ').unwrap_or(value);
    match field {
        "event" => msg.event = value.to_owned(),
        "id" => msg.id = value.parse().ok(),
        "data" => msg.data.push_str(value),
        _ => {}
    }
    false
}

/// A seated layout of `sections` x `rows` x `seats`: sections `S0`, `S1`,
/// ..., rows `1`.., categories `front` (the first half of the sections) and
/// `back`; in each section, row 1's first and last positions are
/// wheelchair spaces.
pub fn venue(sections: usize, rows: usize, seats: usize) -> String {
    let section = |s: usize| {
        let rows: Vec<serde_json::Value> = (1..=rows)
            .map(|r| {
                let accessible = if r == 1 { vec![1, seats] } else { vec![] };
                serde_json::json!({"name": r.to_string(), "seats": seats, "accessible": accessible})
            })
            .collect();
        let category = if s < sections.div_ceil(2) {
            "front"
        } else {
            "back"
        };
        serde_json::json!({"name": format!("S{s}"), "category": category, "rows": rows})
    };
    let sections: Vec<serde_json::Value> = (0..sections).map(section).collect();
    serde_json::json!({ "sections": sections }).to_string()
}

/// A seat map as a viewer of `/events/{E}/seatmap` knows it.
#[derive(Debug, Default)]
pub struct SeatView {
    pub layout: Option<String>,
    pub seats: Vec<u8>,
    /// The id of the last map or changes message.
    pub id: Option<u64>,
    pub wholes: usize,
    pub changes: usize,
    /// Bytes of `data:` received.
    pub bytes: usize,
}

impl SeatView {
    /// Takes one message: a layout, a whole map, or changes (whose `base`
    /// must be the last id, their runs inside the map).
    pub fn take(&mut self, m: &Message) {
        self.bytes += m.data.len();
        match m.event.as_str() {
            "layout" => self.layout = Some(m.data.clone()),
            "seats" => {
                assert!(self.layout.is_some(), "a map before any layout");
                self.seats = m.json()["seats"]
                    .as_str()
                    .expect("seats")
                    .as_bytes()
                    .to_vec();
                self.wholes += 1;
                self.next_id(m);
            }
            "changes" => {
                let j = m.json();
                assert_eq!(
                    j["base"].as_u64(),
                    self.id,
                    "changes not based on the last map: {j}"
                );
                for run in j["runs"].as_array().expect("runs") {
                    let first = run[0].as_u64().expect("run id") as usize;
                    let states = run[1].as_str().expect("run states").as_bytes();
                    assert!(
                        first >= 1 && first - 1 + states.len() <= self.seats.len(),
                        "{run}"
                    );
                    self.seats[first - 1..first - 1 + states.len()].copy_from_slice(states);
                }
                self.changes += 1;
                self.next_id(m);
            }
            _ => {}
        }
    }

    fn next_id(&mut self, m: &Message) {
        let id = m.id.expect("a map message has an id");
        assert!(self.id.is_none_or(|last| id > last), "ids must grow");
        self.id = Some(id);
    }

    /// Reads `s` until the map equals `want`; panics after `timeout`.
    pub fn until_equal(&mut self, s: &SseStream, want: &[u8], timeout: Duration) {
        let deadline = Instant::now() + timeout;
        while self.seats != want {
            let left = deadline
                .checked_duration_since(Instant::now())
                .unwrap_or_else(|| {
                    panic!("the map never became TICKET.SEATMAP within {timeout:?}")
                });
            if let Some(m) = s.next(left) {
                self.take(&m);
            }
        }
    }
}

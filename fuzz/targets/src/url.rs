//! Targets `redis_url` and `sentinel_url`: the Redis URL the sidecar and
//! `ticketgate-live` take (`--redis-url`, `TICKETGATE_REDIS_URL`), checked
//! at start by `conn::RedisTls::load` and opened by `RedisTls::client`;
//! and the Sentinel URL parsed in one place, `conn::sentinel::SentinelUrl`.
//!
//! Input: a URL; or three lines `prefix`, `password`, `suffix` that make
//! the URL `prefix + password + suffix`, where the password stands where a
//! URL carries one (`...://user:` before it, `@` after it).
//!
//! Beyond "no panic": no text made of the URL (an error, a URL shown in a
//! log) shows a password that stands where one is written; and a Sentinel
//! URL that parses names sentinels and a master, shows itself in a form
//! that parses back to the same sentinels, master and user, and gives the
//! sentinels' and the data nodes' URLs the `redis` crate opens, so a bad
//! address fails at start, never at every later connection.

use std::path::PathBuf;
use std::sync::OnceLock;

use conn::sentinel::SentinelUrl;
use conn::{RedisTls, RedisTlsArgs, SentinelAuth, Server};

use crate::check::lines;

/// The body of `redis_url`.
pub fn redis_run(data: &[u8]) {
    let Some((url, secret)) = url_of(data) else {
        return;
    };
    let texts = redis_texts(&url);
    if let Some(secret) = secret {
        hidden(&url, &secret, &texts, redis_texts);
    }
}

/// The body of `sentinel_url`.
pub fn sentinel_run(data: &[u8]) {
    let Some((url, secret)) = url_of(data) else {
        return;
    };
    if let Ok(parsed) = SentinelUrl::parse(&url) {
        well_formed(&parsed);
    }
    if let Some(secret) = secret {
        hidden(&url, &secret, &sentinel_texts(&url), sentinel_texts);
    }
}

/// A password where a URL carries one, and the same URL with another
/// password of the same shape.
struct Secret {
    password: String,
    other_url: String,
}

/// The URL of an input, and its [`Secret`] when the password stands where
/// a URL carries one.
fn url_of(data: &[u8]) -> Option<(String, Option<Secret>)> {
    let text = std::str::from_utf8(data).ok()?;
    let parts = lines(data);
    let [prefix, password, suffix] = parts.as_slice() else {
        return Some((text.to_owned(), None));
    };
    let (prefix, password, suffix) = (
        std::str::from_utf8(prefix).ok()?,
        std::str::from_utf8(password).ok()?,
        std::str::from_utf8(suffix).ok()?,
    );
    let url = format!("{prefix}{password}{suffix}");
    let placed = match prefix.split_once("://") {
        Some((_, userinfo)) => userinfo.ends_with(':') && !userinfo.contains(['/', '@', '?', '#']),
        None => false,
    };
    let placed =
        placed && suffix.starts_with('@') && !password.is_empty() && !password.contains('@');
    let secret = placed.then(|| Secret {
        password: password.to_owned(),
        other_url: format!("{prefix}{}{suffix}", disguised(password)),
    });
    Some((url, secret))
}

/// Another password of the same shape: each letter and digit the next
/// one, every other character kept, so the URL parses the same way.
fn disguised(password: &str) -> String {
    let next = |c: char, first: u8, count: u8| char::from(first + (c as u8 - first + 1) % count);
    password
        .chars()
        .map(|c| match c {
            'a'..='z' => next(c, b'a', 26),
            'A'..='Z' => next(c, b'A', 26),
            '0'..='9' => next(c, b'0', 10),
            c => c,
        })
        .collect()
}

/// Asserts that every text made of `url` shows its password only where
/// the same text made with a disguised password shows it too (a scheme,
/// a host or words of the message that happen to be spelled like it).
fn hidden(url: &str, secret: &Secret, texts: &[String], make: fn(&str) -> Vec<String>) {
    let password = secret.password.as_str();
    let others = make(&secret.other_url);
    for (text, without) in texts.iter().zip(&others) {
        assert!(
            !text.contains(password) || without.contains(password),
            "the password {password:?} of {url:?} shows in {text:?}"
        );
    }
}

/// What the programs make of a Redis URL: the start-up check's errors
/// (without and with certificates) and the client's.
fn redis_texts(url: &str) -> Vec<String> {
    let plain = RedisTls::load(&RedisTlsArgs::default(), Some(url));
    let with_ca = RedisTls::load(&ca_args(), Some(url));
    let client = RedisTls::default().client(url).map(|_| ());
    let hint = conn::hint(Server::Redis, url, "connection refused");
    vec![
        plain.err().unwrap_or_default(),
        with_ca.err().unwrap_or_default(),
        client.err().map(|e| e.to_string()).unwrap_or_default(),
        hint.map(|h| h.text).unwrap_or_default(),
    ]
}

/// What the programs make of a Sentinel URL: its error, or how it is shown.
fn sentinel_texts(url: &str) -> Vec<String> {
    vec![match SentinelUrl::parse(url) {
        Ok(parsed) => parsed.to_string(),
        Err(e) => e,
    }]
}

/// `--redis-ca` naming a file (its content is not a certificate: the
/// URL's checks come first).
fn ca_args() -> RedisTlsArgs {
    static CA: OnceLock<PathBuf> = OnceLock::new();
    let path = CA.get_or_init(|| {
        let path = std::env::temp_dir().join(format!("tg-fuzz-ca-{}.pem", std::process::id()));
        std::fs::write(&path, "not a certificate").expect("write a file for --redis-ca");
        path
    });
    RedisTlsArgs {
        redis_ca: Some(path.clone()),
        ..RedisTlsArgs::default()
    }
}

fn well_formed(url: &SentinelUrl) {
    assert!(!url.sentinels.is_empty(), "no sentinel in {url:?}");
    assert!(!url.master.is_empty() && !url.master.contains('/'));
    let shown = url.to_string();
    let again = SentinelUrl::parse(&shown)
        .unwrap_or_else(|e| panic!("{url:?} shows as {shown:?}, which does not parse: {e}"));
    assert_eq!(
        (&again.sentinels, &again.master, again.tls),
        (&url.sentinels, &url.master, url.tls)
    );
    assert_eq!(again.user(), url.user(), "the user of {shown:?}");
    let auth = SentinelAuth::default();
    for addr in &url.sentinels {
        for made in [url.sentinel_url(addr, &auth), url.node_url(addr)] {
            let client = RedisTls::default().client(&made);
            assert!(
                client.is_ok(),
                "{url:?} gives the URL {made:?}, which the redis crate refuses: {:?}",
                client.err()
            );
        }
    }
}

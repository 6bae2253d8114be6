//! A real browser: Debian's headless Chromium, driven through chromedriver
//! (WebDriver, via `fantoccini`), opens the live page of an event served by
//! the real `ticketgate-live`; claims happen in Redis and the number on the
//! page follows. Leaves a screenshot in `target/live-page.png` (the README's
//! `docs/live-page.png` is a copy of it). Fails — never skips — when
//! chromium or chromedriver is missing (`scripts/install-deps.sh` installs them).

#[path = "support/live.rs"]
mod support;

use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fantoccini::{Client, ClientBuilder, Locator};
use support::*;
use ticketgate_tests::{free_port, wait_until, workspace_root, RedisServer};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

/// chromedriver on a free port; killed on drop.
struct Driver {
    child: Child,
    port: u16,
}

impl Driver {
    fn start() -> Driver {
        for bin in [CHROMIUM, CHROMEDRIVER] {
            assert!(
                Path::new(bin).is_file(),
                "{bin} missing: install Debian's chromium and chromium-driver \
                 (bash scripts/install-deps.sh does)"
            );
        }
        let port = free_port();
        let child = Command::new(CHROMEDRIVER)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn chromedriver");
        wait_until(Duration::from_secs(20), "chromedriver listens", || {
            TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
        Driver { child, port }
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn browser(driver: &Driver, profile: &Path) -> Client {
    let args = [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--window-size=420,720",
    ];
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    let caps = serde_json::json!({
        "browserName": "chrome",
        "goog:chromeOptions": { "binary": CHROMIUM, "args": args },
    });
    let serde_json::Value::Object(caps) = caps else {
        unreachable!("a JSON object literal")
    };
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{}", driver.port))
        .await
        .expect("a chromium session")
}

async fn text_of(c: &Client, css: &str) -> String {
    match c.find(Locator::Css(css)).await {
        Ok(e) => e.text().await.unwrap_or_default(),
        Err(_) => String::new(),
    }
}

/// Waits (up to 20 s) until the element's text is `want`.
async fn until_text(c: &Client, css: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let got = text_of(c, css).await;
        if got == want {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{css} shows {got:?}, want {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

fn claims(c: &mut redis::Connection, event: &str, users: std::ops::Range<u32>) {
    for u in users {
        let _: i64 = redis::cmd("TICKET.CLAIM")
            .arg(event)
            .arg(format!("fan{u}"))
            .query(c)
            .unwrap();
    }
}

#[tokio::test(flavor = "current_thread")]
async fn the_page_shows_the_remaining_tickets_live() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    let _: () = redis::cmd("TICKET.INIT")
        .arg("premiere")
        .arg(20)
        .query(&mut c)
        .unwrap();
    claims(&mut c, "premiere", 0..2);
    let live = Live::start(&redis.url(), &[]);
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let b = browser(&driver, profile.path()).await;
    b.goto(&format!("{}/events/premiere", live.base()))
        .await
        .unwrap();
    until_text(&b, "#remaining", "18").await;

    claims(&mut c, "premiere", 2..7);
    until_text(&b, "#remaining", "13").await;
    let bar = b.find(Locator::Css("progress")).await.unwrap();
    assert_eq!(bar.attr("value").await.unwrap().as_deref(), Some("13"));
    assert_eq!(bar.attr("max").await.unwrap().as_deref(), Some("20"));
    let region = b.find(Locator::Css("[aria-live]")).await.unwrap();
    assert_eq!(
        region.attr("aria-live").await.unwrap().as_deref(),
        Some("polite")
    );
    assert!(text_of(&b, "#title").await.contains("premiere"));
    let png = b.screenshot().await.unwrap();
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 2000,
        "{} bytes",
        png.len()
    );
    std::fs::write(workspace_root().join("target/live-page.png"), &png).unwrap();

    claims(&mut c, "premiere", 7..20);
    until_text(&b, "#remaining", "0").await;
    until_text(&b, "#state", "Sold out.").await;
    b.close().await.unwrap();
}

/// `TICKET.STATUS event field` as text.
fn status_field(c: &mut redis::Connection, event: &str, field: &str) -> Option<String> {
    let s: std::collections::HashMap<String, String> =
        redis::cmd("TICKET.STATUS").arg(event).query(c).unwrap();
    s.get(field).cloned()
}

#[tokio::test(flavor = "current_thread")]
async fn a_draw_event_shows_its_commitment_then_its_seed() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    let _: () = redis::cmd("TICKET.INIT")
        .arg(&["lottery", "10", "HOLD", "60000", "DRAW"][..])
        .query(&mut c)
        .unwrap();
    let commitment = status_field(&mut c, "lottery", "draw").expect("a commitment");
    let live = Live::start(&redis.url(), &[]);
    let driver = Driver::start();
    let profile = tempfile::tempdir().unwrap();
    let b = browser(&driver, profile.path()).await;
    b.goto(&format!("{}/events/lottery", live.base()))
        .await
        .unwrap();
    until_text(&b, "#commitment", &commitment).await;
    // the seed is secret until the draw: its line is hidden and empty
    assert_eq!(text_of(&b, "#seed").await, "");
    let _: i64 = redis::cmd("TICKET.WAIT")
        .arg("lottery")
        .arg("fan0")
        .query(&mut c)
        .unwrap();
    let () = redis::cmd("TICKET.OPEN")
        .arg("lottery")
        .query(&mut c)
        .unwrap();
    let seed = status_field(&mut c, "lottery", "seed").expect("the seed, once drawn");
    until_text(&b, "#seed", &seed).await;
    assert_eq!(text_of(&b, "#commitment").await, commitment);
    let png = b.screenshot().await.unwrap();
    std::fs::write(workspace_root().join("target/live-draw-page.png"), &png).unwrap();
    b.close().await.unwrap();
}

//! `ticketgate-ref-live`: the reference design's live stock, for
//! `ticketgate-bench live` only — a job reads `ticket_stock.remaining_stock`
//! from MySQL once a second (the reference uses a Quartz job) and every
//! change is pushed over Server-Sent Events, with the same fan-out as
//! `ticketgate-live` (a `tokio::sync::watch` channel, axum's SSE), so that
//! the two differ only in where and how often they read.
//!
//! `ticketgate-ref-live MYSQL_URL EVENT [HOST:PORT]`; serves
//! `GET /events/{EVENT}/stock` and logs `listening on http://ADDR/`.

use std::convert::Infallible;
use std::time::{Duration, Instant};

use axum::response::sse::{Event, KeepAlive, Sse};
use axum::routing::get;
use futures_util::stream::{self, Stream};
use mysql::prelude::Queryable;
use tokio::sync::watch;

/// The reference design's polling period.
const PERIOD: Duration = Duration::from_secs(1);

/// Reads the stock every [`PERIOD`] on a thread of its own and publishes
/// changes as `(id, remaining)`.
fn poll(url: String, event: String, tx: watch::Sender<(u64, i64)>) {
    let mut conn = None;
    let mut next = Instant::now();
    let mut id = 0;
    loop {
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
        next += PERIOD;
        if conn.is_none() {
            conn = mysql::Opts::from_url(&url)
                .ok()
                .and_then(|o| mysql::Conn::new(o).ok());
        }
        let Some(c) = conn.as_mut() else { continue };
        let read: Result<Option<i64>, _> = c.exec_first(
            "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
            (&event,),
        );
        match read {
            Ok(Some(remaining)) if tx.borrow().1 != remaining || id == 0 => {
                id += 1;
                tx.send_replace((id, remaining));
            }
            Ok(_) => {}
            Err(e) => {
                eprintln!("mysql: {e}");
                conn = None;
            }
        }
    }
}

fn messages(
    event: String,
    mut rx: watch::Receiver<(u64, i64)>,
) -> impl Stream<Item = Result<Event, Infallible>> {
    rx.mark_changed();
    stream::unfold((event, rx), |(event, mut rx)| async move {
        let (id, remaining) = loop {
            rx.changed().await.ok()?;
            let (id, remaining) = *rx.borrow_and_update();
            if id > 0 {
                break (id, remaining);
            }
        };
        let data = format!(r#"{{"event":"{event}","remaining":{remaining},"at":0}}"#);
        let msg = Event::default()
            .event("stock")
            .id(id.to_string())
            .data(data);
        Some((Ok(msg), (event, rx)))
    })
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(url), Some(event)) = (args.first().cloned(), args.get(1).cloned()) else {
        eprintln!("usage: ticketgate-ref-live MYSQL_URL EVENT [HOST:PORT]");
        return std::process::ExitCode::from(2);
    };
    let listen = args.get(2).cloned().unwrap_or_else(|| "127.0.0.1:0".into());
    let (tx, rx) = watch::channel((0, 0));
    let polled = event.clone();
    std::thread::spawn(move || poll(url, polled, tx));
    let path = format!("/events/{event}/stock");
    let app = axum::Router::new().route(
        &path,
        get(move || {
            let sse = Sse::new(messages(event.clone(), rx.clone()));
            async move { sse.keep_alive(KeepAlive::new().interval(Duration::from_secs(15))) }
        }),
    );
    let listener = match tokio::net::TcpListener::bind(&listen).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cannot listen on {listen}: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    if let Ok(addr) = listener.local_addr() {
        eprintln!("listening on http://{addr}/");
    }
    match axum::serve(listener, app).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("http: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

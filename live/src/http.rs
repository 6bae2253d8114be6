//! The HTTP side (axum): `GET /events/{E}/stock` and `GET
//! /events/{E}/seatmap` (Server-Sent Events), `GET /events/{E}` and `GET
//! /events/{E}/seats` (the pages, compiled into the binary), `/healthz` and
//! `/metrics`.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::stream::{self, Stream};
use tokio::sync::watch;

use crate::feed::Feed;
use crate::hub::StockHub;
use crate::metrics::Metrics;
use crate::seatmap::feed::MapFeed;
use crate::seatmap::read::SeatHub;
use crate::seatmap::stream::{to_send, Out, Sent};
use crate::seatmap::PAGE as SEATS_PAGE;
use crate::source::Source;
use crate::stock::send_current;
use protocol::keys::valid_event;

/// How long a first subscriber waits for the first read of an event.
const FIRST_READ: Duration = Duration::from_secs(5);

/// The page, served as is.
const PAGE: &str = include_str!("page.html");

/// What every handler shares.
pub struct App {
    pub hub: Arc<StockHub>,
    pub seats: Arc<SeatHub>,
    pub source: Arc<Source>,
    pub metrics: Metrics,
    pub heartbeat: Duration,
}

/// All routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/events/{event}/stock", get(stock))
        .route("/events/{event}/seatmap", get(seatmap))
        .route("/events/{event}", get(page))
        .route("/events/{event}/seats", get(seats_page))
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .with_state(app)
}

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

fn bad_event(event: &str) -> Response {
    text(
        StatusCode::BAD_REQUEST,
        format!("invalid event id {event:?}: 1-64 characters of A-Z a-z 0-9 _ . : -\n"),
    )
}

async fn page(Path(event): Path<String>) -> Response {
    if !valid_event(&event) {
        return bad_event(&event);
    }
    Html(PAGE).into_response()
}

async fn seats_page(Path(event): Path<String>) -> Response {
    if !valid_event(&event) {
        return bad_event(&event);
    }
    Html(SEATS_PAGE).into_response()
}

async fn healthz(State(app): State<Arc<App>>) -> Response {
    if app.source.ping().await {
        text(StatusCode::OK, "ok\n".into())
    } else {
        text(
            StatusCode::SERVICE_UNAVAILABLE,
            "redis unreachable\n".into(),
        )
    }
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let ctype = "text/plain; version=0.0.4; charset=utf-8";
    ([(header::CONTENT_TYPE, ctype)], app.metrics.render()).into_response()
}

async fn stock(
    State(app): State<Arc<App>>,
    Path(event): Path<String>,
    headers: HeaderMap,
) -> Response {
    if !valid_event(&event) {
        return bad_event(&event);
    }
    let mut rx = app.hub.subscribe(&event);
    let first = first_feed(&mut rx, |f| *f == Feed::Pending)
        .await
        .unwrap_or_else(|| Feed::Down("no answer from redis yet".into()));
    if let Feed::Missing { .. } = first {
        let msg = format!("no event {event:?}: TICKET.STATUS answered NOEVENT\n");
        return text(StatusCode::NOT_FOUND, msg);
    }
    let Some(id) = first.id() else {
        return unreachable_redis();
    };
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    let pending = send_current(last, id).then_some(first);
    let sub = Subscriber::new(event, rx, pending, app.metrics.clone());
    event_stream(messages(sub), app.heartbeat)
}

/// The first published value of a fresh receiver (None: none within
/// [`FIRST_READ`]).
async fn first_feed<F: Clone>(
    rx: &mut watch::Receiver<F>,
    pending: impl Fn(&F) -> bool,
) -> Option<F> {
    match tokio::time::timeout(FIRST_READ, rx.wait_for(|f| !pending(f))).await {
        Ok(Ok(feed)) => Some(feed.clone()),
        _ => None,
    }
}

fn unreachable_redis() -> Response {
    let headers = [(header::RETRY_AFTER, "2")];
    (
        StatusCode::SERVICE_UNAVAILABLE,
        headers,
        "redis unreachable, try again\n",
    )
        .into_response()
}

/// An SSE response with heartbeats, not to be buffered by proxies.
fn event_stream<S>(messages: S, heartbeat: Duration) -> Response
where
    S: Stream<Item = Result<Event, Infallible>> + Send + 'static,
{
    let keep_alive = KeepAlive::new().interval(heartbeat).text("heartbeat");
    let sse = Sse::new(messages).keep_alive(keep_alive);
    let no_buffering = [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        ),
    ];
    (no_buffering, sse).into_response()
}

/// `GET /events/{E}/seatmap`: the layout and the whole map at once, then
/// the changes (see `seatmap::stream`). `Last-Event-ID` is not used: a
/// reconnecting page is sent the whole map again, which is what it needs
/// after missing any number of versions.
async fn seatmap(State(app): State<Arc<App>>, Path(event): Path<String>) -> Response {
    if !valid_event(&event) {
        return bad_event(&event);
    }
    let mut rx = app.seats.subscribe(&event);
    let first = first_feed(&mut rx, |f| *f == MapFeed::Pending).await;
    match first {
        Some(MapFeed::Missing { .. }) => {
            let msg = format!("no event {event:?}: TICKET.SEATMAP answered NOEVENT\n");
            text(StatusCode::NOT_FOUND, msg)
        }
        Some(MapFeed::Unseated { .. }) => {
            let msg = format!(
                "event {event:?} is general admission: no seat map (its stock: /events/{event}/stock)\n"
            );
            text(StatusCode::NOT_FOUND, msg)
        }
        Some(feed @ MapFeed::Map(_)) => {
            let sub = MapSubscriber::new(event, rx, feed, app.metrics.clone());
            event_stream(map_messages(sub), app.heartbeat)
        }
        Some(MapFeed::Pending | MapFeed::Down(_)) | None => unreachable_redis(),
    }
}

/// One open stream: its receiver, the message to send first (if any) and
/// its share of the subscribers gauge.
struct Subscriber {
    event: String,
    rx: watch::Receiver<Feed>,
    pending: Option<Feed>,
    metrics: Metrics,
}

impl Subscriber {
    fn new(
        event: String,
        rx: watch::Receiver<Feed>,
        pending: Option<Feed>,
        metrics: Metrics,
    ) -> Subscriber {
        metrics.subscribers.inc();
        Subscriber {
            event,
            rx,
            pending,
            metrics,
        }
    }

    /// The next feed to send: the pending one, else the next change (the
    /// newest value when several changes happened meanwhile).
    async fn next(&mut self) -> Option<Feed> {
        if let Some(f) = self.pending.take() {
            return Some(f);
        }
        self.rx.changed().await.ok()?;
        let feed = self.rx.borrow_and_update().clone();
        Some(feed)
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.metrics.subscribers.dec();
    }
}

/// The SSE message for a feed: `event: stock` with the JSON, or `event:
/// missing` when the event was dropped; nothing for the other states.
fn message(event: &str, feed: &Feed) -> Option<Event> {
    match feed {
        Feed::Stock { id, json, .. } => Some(
            Event::default()
                .event("stock")
                .id(id.to_string())
                .data(&**json),
        ),
        Feed::Missing { id } => Some(
            Event::default()
                .event("missing")
                .id(id.to_string())
                .data(serde_json::json!({ "event": event }).to_string()),
        ),
        Feed::Pending | Feed::Down(_) => None,
    }
}

fn messages(sub: Subscriber) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(sub, |mut sub| async move {
        loop {
            let feed = sub.next().await?;
            if let Some(event) = message(&sub.event, &feed) {
                sub.metrics.messages_sent.inc();
                return Some((Ok(event), sub));
            }
        }
    })
}

/// One open seat-map stream: its receiver, the messages due and what it
/// was sent last.
struct MapSubscriber {
    event: String,
    rx: watch::Receiver<MapFeed>,
    due: VecDeque<Out>,
    sent: Option<Sent>,
    metrics: Metrics,
}

impl MapSubscriber {
    fn new(
        event: String,
        rx: watch::Receiver<MapFeed>,
        first: MapFeed,
        metrics: Metrics,
    ) -> MapSubscriber {
        metrics.subscribers.inc();
        let mut sent = None;
        let due = to_send(&mut sent, &first).into();
        MapSubscriber {
            event,
            rx,
            due,
            sent,
            metrics,
        }
    }

    /// The next message: one due, else those of the next change (the
    /// newest version when several were published meanwhile).
    async fn next(&mut self) -> Option<Out> {
        loop {
            if let Some(out) = self.due.pop_front() {
                return Some(out);
            }
            self.rx.changed().await.ok()?;
            let feed = self.rx.borrow_and_update().clone();
            self.due = to_send(&mut self.sent, &feed).into();
        }
    }
}

impl Drop for MapSubscriber {
    fn drop(&mut self) {
        self.metrics.subscribers.dec();
    }
}

/// The SSE message of a seat-map [`Out`] of `event`.
fn map_message(event: &str, out: Out) -> Event {
    let named = || serde_json::json!({ "event": event }).to_string();
    match out {
        Out::Layout(json) => Event::default().event("layout").data(&*json),
        Out::Whole { id, json } => Event::default()
            .event("seats")
            .id(id.to_string())
            .data(&*json),
        Out::Changes { id, json } => Event::default()
            .event("changes")
            .id(id.to_string())
            .data(&*json),
        Out::Missing { id } => Event::default()
            .event("missing")
            .id(id.to_string())
            .data(named()),
        Out::Unseated { id } => Event::default()
            .event("unseated")
            .id(id.to_string())
            .data(named()),
    }
}

fn map_messages(sub: MapSubscriber) -> impl Stream<Item = Result<Event, Infallible>> {
    stream::unfold(sub, |mut sub| async move {
        let out = sub.next().await?;
        sub.metrics.messages_sent.inc();
        Some((Ok(map_message(&sub.event, out)), sub))
    })
}

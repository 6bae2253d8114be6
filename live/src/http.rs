//! The HTTP side (axum): `GET /events/{E}/stock` (Server-Sent Events),
//! `GET /events/{E}` (the page, compiled into the binary), `/healthz` and
//! `/metrics`.

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
use crate::hub::Hub;
use crate::metrics::Metrics;
use crate::source::Source;
use crate::stock::send_current;
use protocol::keys::valid_event;

/// How long a first subscriber waits for the first read of an event.
const FIRST_READ: Duration = Duration::from_secs(5);

/// The page, served as is.
const PAGE: &str = include_str!("page.html");

/// What every handler shares.
pub struct App {
    pub hub: Arc<Hub>,
    pub source: Arc<Source>,
    pub metrics: Metrics,
    pub heartbeat: Duration,
}

/// All routes.
pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route("/events/{event}/stock", get(stock))
        .route("/events/{event}", get(page))
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
    let first = match tokio::time::timeout(FIRST_READ, rx.wait_for(|f| *f != Feed::Pending)).await {
        Ok(Ok(feed)) => feed.clone(),
        _ => Feed::Down("no answer from redis yet".into()),
    };
    if let Feed::Missing { .. } = first {
        let msg = format!("no event {event:?}: TICKET.STATUS answered NOEVENT\n");
        return text(StatusCode::NOT_FOUND, msg);
    }
    let Some(id) = first.id() else {
        let headers = [(header::RETRY_AFTER, "2")];
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            headers,
            "redis unreachable, try again\n",
        )
            .into_response();
    };
    let last = headers.get("last-event-id").and_then(|v| v.to_str().ok());
    let pending = send_current(last, id).then_some(first);
    let sub = Subscriber::new(event, rx, pending, app.metrics.clone());
    let keep_alive = KeepAlive::new().interval(app.heartbeat).text("heartbeat");
    let sse = Sse::new(messages(sub)).keep_alive(keep_alive);
    let no_buffering = [
        (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        (
            header::HeaderName::from_static("x-accel-buffering"),
            HeaderValue::from_static("no"),
        ),
    ];
    (no_buffering, sse).into_response()
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

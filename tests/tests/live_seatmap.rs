//! End-to-end: the seat map of `ticketgate-live` against a private
//! redis-server with the module — a viewer that connects mid-sale gets the
//! layout and the whole map, then changes whose sum is `TICKET.SEATMAP`,
//! at most `--max-rate` a second; a viewer that stops reading skips to the
//! newest map and nothing piles up in the server meanwhile; allocated seats
//! (`a`) and their release travel like any other change; Redis serves
//! one `TICKET.SEATMAP` a tick with 1 viewer and with 40; a
//! general-admission event has no seat map.

#[path = "support/live.rs"]
mod support;

use std::time::{Duration, Instant};

use support::*;
use ticketgate_tests::RedisServer;

fn seatmap(c: &mut redis::Connection, event: &str) -> Vec<u8> {
    redis::cmd("TICKET.SEATMAP")
        .arg(event)
        .query(c)
        .expect("TICKET.SEATMAP")
}

fn init_seated(c: &mut redis::Connection, event: &str, layout: &str, total: usize, limit: u32) {
    let (total, limit) = (total.to_string(), limit.to_string());
    run(
        c,
        &[
            "TICKET.INIT",
            event,
            &total,
            "LIMIT",
            &limit,
            "SEATS",
            layout,
        ],
    );
}

/// Party `i` of a sale: 1 to 8 seats; every third one only held.
fn party(c: &mut redis::Connection, event: &str, i: usize) {
    let count = (1 + i * 5 % 8).to_string();
    let user = format!("party{i}");
    let mut cmd = vec!["TICKET.CLAIM", event, &user, "COUNT", &count];
    if i.is_multiple_of(3) {
        cmd.extend(["HOLD", "600000"]);
    }
    let mut claim = redis::cmd(cmd[0]);
    for p in &cmd[1..] {
        claim.arg(*p);
    }
    // A party that cannot sit together is a clear refusal, not a failure.
    if let Err(e) = claim.query::<redis::Value>(c) {
        let code = e.code().unwrap_or_default();
        assert!(matches!(code, "NOTOGETHER" | "SOLDOUT"), "{cmd:?}: {e}");
    }
}

#[test]
fn a_viewer_joining_mid_sale_gets_the_map_then_changes_that_add_up() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    let layout = venue(8, 10, 25);
    init_seated(&mut c, "hall", &layout, 2000, 8);
    let live = Live::start(&redis.url(), &["--max-rate", "5"]);
    run(&mut c, &["TICKET.ALLOCATE", "hall", "house", "COUNT", "40"]);
    for i in 0..100 {
        party(&mut c, "hall", i);
    }
    let s = live.seatmap("hall");
    assert!(s.content_type.starts_with("text/event-stream"));
    let first = s.next(SOON).expect("a first message");
    assert_eq!(first.event, "layout", "{first:?}");
    let stored: String = redis::cmd("TICKET.LAYOUT")
        .arg("hall")
        .query(&mut c)
        .unwrap();
    assert_eq!(first.data, stored, "the layout as TICKET.LAYOUT has it");
    let mut view = SeatView::default();
    view.take(&first);
    let whole = s.next(SOON).expect("the whole map");
    assert_eq!(whole.event, "seats", "{whole:?}");
    view.take(&whole);
    assert_eq!(view.seats.len(), 2000);
    assert!(view.seats.contains(&b's') && view.seats.contains(&b'h'));
    let allocated = |seats: &[u8]| seats.iter().filter(|b| **b == b'a').count();
    assert_eq!(allocated(&view.seats), 40, "the house seats, as 'a'");

    let (burst, bytes_before) = (Instant::now(), view.bytes);
    for i in 100..300 {
        party(&mut c, "hall", i);
        if i == 200 {
            run(&mut c, &["TICKET.RELEASE", "hall", "house", "COUNT", "15"]);
        }
        if i % 20 == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let want = seatmap(&mut c, "hall");
    view.until_equal(&s, &want, SOON);
    let took = burst.elapsed().as_secs_f64();
    println!(
        "{} changes messages, {} bytes of data in {took:.2} s ({:.0} B/s) for 200 parties",
        view.changes,
        view.bytes - bytes_before,
        (view.bytes - bytes_before) as f64 / took
    );
    assert_eq!(view.wholes, 1, "a reader that keeps up gets only changes");
    assert!(view.changes >= 2, "{} changes", view.changes);
    // At most 5 versions a second (one tick of slack at each end).
    let bound = (took * 5.0).ceil() as usize + 2;
    assert!(
        view.changes <= bound,
        "{} changes in {took:.2}s",
        view.changes
    );
    assert_eq!(allocated(&view.seats), 25, "15 of 40 released");
    let free = want.iter().filter(|b| **b == b'.').count();
    assert!(free > 0 && free < 2000 - 500, "{free} free");

    // A general-admission event: 404 saying so; an unknown one: 404.
    run(&mut c, &["TICKET.INIT", "standing", "10"]);
    let url = format!("{}/events/standing/seatmap", live.base());
    let (status, body) = SseStream::open(&url, None).err().expect("no stream");
    assert_eq!(status, 404);
    assert!(body.contains("general admission"), "{body}");
    let url = format!("{}/events/nope/seatmap", live.base());
    let (status, body) = SseStream::open(&url, None).err().expect("no stream");
    assert_eq!((status, body.contains("NOEVENT")), (404, true), "{body}");
    let (status, page) = live.get("/events/hall/seats");
    assert_eq!(status, 200);
    assert!(page.contains("<svg") && page.contains("/seatmap"), "{page}");
    assert_eq!(live.get("/events/a%7Bb%7D/seats").0, 400);
}

/// Claims then cancels `rows` whole rows of 1,000 seats of `event`: each
/// tick's map differs from the last in most seats.
fn churn(c: &mut redis::Connection, event: &str, rows: usize) {
    for r in 0..rows {
        run(
            c,
            &["TICKET.CLAIM", event, &format!("row{r}"), "COUNT", "1000"],
        );
    }
    for r in 0..rows {
        run(c, &["TICKET.CANCEL", event, &format!("row{r}")]);
    }
}

#[test]
fn a_viewer_that_stops_reading_skips_to_the_newest_map() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    // 200,000 seats (the most an event has): a whole map is 200 KB. Row 1
    // of each section has wheelchair spaces, which a plain claim leaves:
    // the other 180 rows are claimed and cancelled whole.
    let rows = 180;
    init_seated(&mut c, "arena", &venue(20, 10, 1000), 200_000, 1000);
    let live = Live::start(&redis.url(), &["--max-rate", "10"]);
    let fast = live.seatmap("arena");
    let mut fast_view = SeatView::default();
    fast_view.until_equal(&fast, &seatmap(&mut c, "arena"), SOON);
    let url = format!("{}/events/arena/seatmap", live.base());
    let (slow, go) = SseStream::open_paused(&url);
    let rss_before = live.rss_kb();

    // Far more than the sockets between them hold (a few MB) is published
    // while the slow viewer reads nothing. Alone this takes ~40 s here; the
    // bound is only how long to wait for it on a busy machine.
    let mut published = 0usize;
    let started = Instant::now();
    while published < 24 << 20 && started.elapsed() < Duration::from_secs(180) {
        churn(&mut c, "arena", rows);
        while let Some(m) = fast.next(Duration::from_millis(20)) {
            published += m.data.len();
            fast_view.take(&m);
        }
    }
    assert!(published >= 24 << 20, "only {published} bytes published");
    let grown_kb = live.rss_kb().saturating_sub(rss_before);
    println!(
        "{} MB published to a reader while another stalled; live grew {grown_kb} kB",
        published >> 20
    );
    assert!(
        grown_kb < 8 << 10,
        "live grew {grown_kb} kB while a viewer stalled"
    );

    run(&mut c, &["TICKET.CLAIM", "arena", "last", "COUNT", "7"]);
    let want = seatmap(&mut c, "arena");
    fast_view.until_equal(&fast, &want, SOON);
    go.send(()).expect("resume the slow viewer");
    let mut slow_view = SeatView::default();
    slow_view.until_equal(&slow, &want, Duration::from_secs(30));
    println!(
        "fast viewer: {} maps + {} changes; slow viewer: {} maps + {} changes",
        fast_view.wholes, fast_view.changes, slow_view.wholes, slow_view.changes
    );
    assert!(
        slow_view.wholes >= 2,
        "the slow viewer skipped to a whole map"
    );
    assert!(
        slow_view.wholes + slow_view.changes < fast_view.wholes + fast_view.changes,
        "the slow viewer was sent fewer messages"
    );
}

fn seatmap_calls(c: &mut redis::Connection) -> u64 {
    let info: String = redis::cmd("INFO").arg("commandstats").query(c).unwrap();
    info.lines()
        .find_map(|l| {
            let rest = l.strip_prefix("cmdstat_ticket.seatmap:calls=")?;
            rest.split(',').next()?.parse().ok()
        })
        .unwrap_or(0)
}

/// `TICKET.SEATMAP` calls a second over 2 s.
fn seatmap_rate(c: &mut redis::Connection) -> f64 {
    let before = seatmap_calls(c);
    std::thread::sleep(Duration::from_secs(2));
    (seatmap_calls(c) - before) as f64 / 2.0
}

#[test]
fn redis_reads_do_not_grow_with_viewers() {
    let redis = RedisServer::start();
    let mut c = redis.conn();
    init_seated(&mut c, "crowd", &venue(2, 5, 20), 200, 4);
    let live = Live::start(&redis.url(), &["--max-rate", "10"]);
    let now = seatmap(&mut c, "crowd");
    let one = live.seatmap("crowd");
    SeatView::default().until_equal(&one, &now, SOON);
    let with_one = seatmap_rate(&mut c);
    let mut many: Vec<(SseStream, SeatView)> = (0..40)
        .map(|_| (live.seatmap("crowd"), SeatView::default()))
        .collect();
    for (s, view) in &mut many {
        view.until_equal(s, &now, SOON);
    }
    let with_many = seatmap_rate(&mut c);
    println!("TICKET.SEATMAP/s: {with_one} with 1 viewer, {with_many} with 41");
    assert!(
        (5.0..=15.0).contains(&with_one),
        "{with_one}/s with one viewer"
    );
    assert!(
        with_many <= with_one + 3.0,
        "{with_many}/s with 41 viewers vs {with_one}/s with one"
    );
    run(&mut c, &["TICKET.CLAIM", "crowd", "u", "COUNT", "3"]);
    let want = seatmap(&mut c, "crowd");
    assert_ne!(want, now);
    for (s, view) in &mut many {
        view.until_equal(s, &want, SOON);
    }
}

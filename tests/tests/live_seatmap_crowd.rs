//! The seat map's cost with a crowd (docs/performance.md "The seat map"):
//! `ticketgate-live` reading from a strict replica, one event of 2,000
//! seats, `--max-rate 10`. Measures and bounds the replica's commands a
//! second with 1 viewer and with 1,000 (one `TICKET.SEATMAP` a tick
//! whatever the number of viewers), and the bytes a second one viewer gets
//! during a burst of 300 parties on the primary; prints the figures.

#[path = "support/module.rs"]
mod msupport;
#[path = "support/live.rs"]
mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use support::*;
use ticketgate_tests::{wait_until, RedisServer};

const VIEWERS: usize = 1000;

/// `total_commands_processed` and `TICKET.SEATMAP` calls of a server.
fn counts(c: &mut redis::Connection) -> (u64, u64) {
    let total = msupport::info_field(c, "stats", "total_commands_processed")
        .and_then(|v| v.parse().ok())
        .expect("INFO stats total_commands_processed");
    let info: String = redis::cmd("INFO").arg("commandstats").query(c).unwrap();
    let seatmaps = info
        .lines()
        .find_map(|l| {
            let rest = l.strip_prefix("cmdstat_ticket.seatmap:calls=")?;
            rest.split(',').next()?.parse().ok()
        })
        .unwrap_or(0);
    (total, seatmaps)
}

/// The replica's commands a second and `TICKET.SEATMAP`s a second over
/// 3 s (the two `INFO` calls of each reading excluded).
fn rates(c: &mut redis::Connection) -> (f64, f64) {
    let (t0, s0) = counts(c);
    std::thread::sleep(Duration::from_secs(3));
    let (t1, s1) = counts(c);
    ((t1 - t0 - 2) as f64 / 3.0, (s1 - s0) as f64 / 3.0)
}

/// A crowd of raw viewers: each sends the seat map's GET and is read
/// (and counted) by one thread, so 1,000 cost the test little.
struct Crowd {
    streams: Vec<TcpStream>,
    received: Vec<usize>,
}

impl Crowd {
    fn open(port: u16, event: &str, n: usize) -> Crowd {
        let request = format!(
            "GET /events/{event}/seatmap HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n"
        );
        let streams: Vec<TcpStream> = (0..n)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                s.write_all(request.as_bytes()).expect("send GET");
                s.set_nonblocking(true).expect("nonblocking");
                s
            })
            .collect();
        Crowd {
            received: vec![0; n],
            streams,
        }
    }

    /// Reads what every viewer has waiting.
    fn drain(&mut self) {
        let mut buf = [0u8; 65536];
        for (s, got) in self.streams.iter_mut().zip(&mut self.received) {
            loop {
                match s.read(&mut buf) {
                    Ok(0) => panic!("a viewer's stream ended"),
                    Ok(n) => *got += n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("a viewer's read: {e}"),
                }
            }
        }
    }
}

#[test]
fn a_thousand_viewers_cost_the_replica_what_one_does() {
    msupport::raise_fd_limit(4096);
    let primary = RedisServer::start();
    let replica = msupport::strict_replica_of(&primary.port().to_string());
    let mut p = primary.conn();
    let layout = venue(8, 10, 25);
    let (total, limit) = ("2000", "8");
    run(
        &mut p,
        &[
            "TICKET.INIT",
            "hall",
            total,
            "LIMIT",
            limit,
            "SEATS",
            &layout,
        ],
    );
    msupport::wait_replicated(&mut p, 1);
    let live = Live::start(&replica.url(), &["--max-rate", "10"]);
    let mut r = replica.conn();
    let one = live.seatmap("hall");
    let mut view = SeatView::default();
    view.until_equal(&one, &vec![b'.'; 2000], SOON);
    let (cmds_one, maps_one) = rates(&mut r);

    let port = live.base().rsplit(':').next().and_then(|p| p.parse().ok());
    let mut crowd = Crowd::open(port.expect("the live port"), "hall", VIEWERS - 1);
    let whole_map = view.bytes;
    wait_until(SOON, "every viewer got the layout and the map", || {
        crowd.drain();
        crowd.received.iter().all(|n| *n >= whole_map)
    });
    let (cmds_many, maps_many) = rates(&mut r);
    crowd.drain();

    // A burst on the primary while everyone watches: bytes to one viewer.
    let (burst, bytes_before) = (Instant::now(), view.bytes);
    for i in 0..300 {
        let (user, count) = (format!("party{i}"), (1 + i * 5 % 8).to_string());
        let claim = redis::cmd("TICKET.CLAIM")
            .arg("hall")
            .arg(&user)
            .arg("COUNT")
            .arg(&count)
            .query::<redis::Value>(&mut p);
        if let Err(e) = claim {
            let code = e.code().unwrap_or_default().to_owned();
            assert!(matches!(code.as_str(), "NOTOGETHER" | "SOLDOUT"), "{e}");
        }
        if i % 30 == 0 {
            crowd.drain();
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let want: Vec<u8> = redis::cmd("TICKET.SEATMAP")
        .arg("hall")
        .query(&mut p)
        .unwrap();
    view.until_equal(&one, &want, SOON);
    let took = burst.elapsed().as_secs_f64();
    let per_viewer = (view.bytes - bytes_before) as f64 / took;
    crowd.drain();
    println!(
        "replica: {cmds_one:.1} commands/s ({maps_one:.1} TICKET.SEATMAP/s) with 1 viewer, \
         {cmds_many:.1} ({maps_many:.1}) with {VIEWERS}; one viewer got {} bytes of data in \
         {took:.2} s ({per_viewer:.0} B/s) during a burst of 300 parties; the map at connect: \
         {whole_map} bytes",
        view.bytes - bytes_before
    );
    assert!((5.0..=15.0).contains(&maps_one), "{maps_one} maps/s");
    assert!(
        maps_many <= maps_one + 3.0,
        "{maps_many} maps/s with {VIEWERS} viewers"
    );
    assert!(
        cmds_many <= cmds_one + 5.0,
        "{cmds_many} commands/s with {VIEWERS} viewers"
    );
    // Changes only, at most 10 a second: far below a whole map a tick.
    assert!(view.wholes == 1 && view.changes >= 1, "{view:?}");
    assert!(per_viewer < 10.0 * 2000.0, "{per_viewer} B/s");
}

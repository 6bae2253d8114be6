//! How long Redis is blocked at a time while a scenario runs: a second
//! connection PINGing in a loop (the longest PING covers commands and the
//! module's sweep alike), and the slow log (a command's own time in Redis).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::*;

/// A thread PINGing until stopped; the longest round trip it saw.
pub struct Pinger {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Result<Duration>>,
}

impl Pinger {
    pub fn start(servers: &Servers) -> Result<Pinger> {
        let stop = Arc::new(AtomicBool::new(false));
        let mut p = servers.redis()?;
        let flag = stop.clone();
        let thread = std::thread::spawn(move || -> Result<Duration> {
            let mut longest = Duration::ZERO;
            while !flag.load(Ordering::Relaxed) {
                let t = Instant::now();
                let _: String = redis::cmd("PING").query(&mut p)?;
                longest = longest.max(t.elapsed());
            }
            Ok(longest)
        });
        Ok(Pinger { stop, thread })
    }

    /// Stops the thread: the longest PING.
    pub fn stop(self) -> Result<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        self.thread
            .join()
            .map_err(|_| anyhow::anyhow!("the PING thread panicked"))?
    }
}

/// Logs every command of 1 ms or more in the slow log, with room for `calls` entries;
/// false when the server does not allow it (a shared Redis).
pub fn slowlog_on(c: &mut redis::Connection, calls: usize) -> bool {
    let set = |c: &mut redis::Connection, name: &str, value: String| {
        redis::cmd("CONFIG")
            .arg("SET")
            .arg(name)
            .arg(value)
            .query::<()>(c)
            .is_ok()
    };
    // From 1 ms: the PINGs (µs each) must not push the calls out.
    set(c, "slowlog-max-len", (calls + 128).to_string())
        && set(c, "slowlog-log-slower-than", "1000".into())
        && redis::cmd("SLOWLOG").arg("RESET").query::<()>(c).is_ok()
}

/// The longest command named `name` in the slow log (its execution time in
/// Redis, without the network), or of any command when `name` is `None`;
/// the slow log back to its default.
pub fn longest_in_slowlog(c: &mut redis::Connection, name: Option<&str>) -> Result<Duration> {
    let entries: Vec<redis::Value> = redis::cmd("SLOWLOG").arg("GET").arg(-1).query(c)?;
    let mut longest = 0;
    for entry in entries {
        let redis::Value::Array(fields) = entry else {
            continue;
        };
        let (Some(redis::Value::Int(us)), Some(redis::Value::Array(argv))) =
            (fields.get(2), fields.get(3))
        else {
            continue;
        };
        let named = match (name, argv.first()) {
            (None, _) => true,
            (Some(want), Some(redis::Value::BulkString(got))) => {
                got.eq_ignore_ascii_case(want.as_bytes())
            }
            _ => false,
        };
        if named {
            longest = longest.max(*us);
        }
    }
    let () = redis::cmd("CONFIG")
        .arg("SET")
        .arg("slowlog-log-slower-than")
        .arg(10_000)
        .query(c)?;
    Ok(Duration::from_micros(longest.max(0) as u64))
}

//! `ticketgate-sidecar`: drains ticketgate's Redis event logs into MySQL
//! exactly once, and the admin commands around it (`migrate`, `reconcile`,
//! `rebuild`, `audit-draw`, `audit-seats`).
//!
//! Configuration comes from flags or the environment
//! (`TICKETGATE_REDIS_URL`, `TICKETGATE_MYSQL_URL`, ...), so secrets never
//! have to appear on a command line. Logging goes through `log` +
//! `env_logger` (`RUST_LOG`, default `info`).

mod admin;
mod batch;
mod daemon;
mod io;
mod loss;
mod model;
mod sync;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};

use crate::admin::{audit, rebuild, reconcile, seat_audit};
use crate::io::backoff::{sleep_unless, Backoff};
use crate::io::mysql as db;
use crate::io::redis::connect::{detect_cluster, Conn};

#[derive(Parser, Debug)]
#[command(
    name = "ticketgate-sidecar",
    version,
    about = "Drains ticketgate's Redis event logs into MySQL exactly once"
)]
struct Cli {
    /// Redis URL, e.g. redis://127.0.0.1:6379/, redis+unix:///run/redis.sock, or
    /// `redis+sentinel://[user:pass@]host:26379,host2:26379/<master-name>` (rediss+sentinel:// for TLS)
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_REDIS_URL",
        hide_env_values = true
    )]
    redis_url: Option<String>,

    /// MySQL/MariaDB URL, e.g. mysql://user:pass@127.0.0.1:3306/ticketgate
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_MYSQL_URL",
        hide_env_values = true
    )]
    mysql_url: Option<String>,

    /// Give up (exit 2) if Redis or MySQL stay unreachable this long at startup
    #[arg(
        long,
        global = true,
        env = "TICKETGATE_STARTUP_TIMEOUT",
        default_value_t = 30,
        value_name = "SECS"
    )]
    startup_timeout: u64,

    #[command(flatten)]
    redis_tls: conn::RedisTlsArgs,

    #[command(flatten)]
    sentinel: conn::SentinelArgs,

    #[command(flatten)]
    mysql_tls: conn::MysqlTlsArgs,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Run the daemon: drain every event log into MySQL until SIGTERM/SIGINT
    Run {
        /// Entries read per stream per XREAD (and written per transaction)
        #[arg(long, env = "TICKETGATE_BATCH_SIZE", default_value_t = 500, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        batch_size: u32,
        /// Writer threads, each with one MySQL connection; an event always uses the same writer
        #[arg(long, env = "TICKETGATE_WRITERS", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
        writers: u32,
        /// Serve Prometheus /metrics and /healthz on HOST:PORT
        #[arg(long, env = "TICKETGATE_METRICS_ADDR", value_name = "HOST:PORT")]
        metrics_addr: Option<String>,
        /// Seconds between safety-net SCANs for event logs (new events are
        /// normally found at once via the ticket:events channel)
        #[arg(
            long,
            env = "TICKETGATE_RESCAN_INTERVAL",
            default_value_t = 30,
            value_name = "SECS"
        )]
        rescan_interval: u64,
        /// XREAD BLOCK timeout in milliseconds
        #[arg(
            long,
            env = "TICKETGATE_BLOCK_MS",
            default_value_t = 200,
            value_name = "MS"
        )]
        block_ms: u64,
        /// Apply migrations before starting
        #[arg(long, env = "TICKETGATE_MIGRATE")]
        migrate: bool,
        /// Seconds between two checks of every synced event against Redis
        /// (lost, restarted or re-created events are quarantined); also
        /// after every Redis reconnect
        #[arg(
            long,
            env = "TICKETGATE_VERIFY_INTERVAL",
            default_value_t = 10,
            value_name = "SECS"
        )]
        verify_interval: u64,
    },
    /// Apply the schema migrations (idempotent)
    Migrate,
    /// Compare Redis with MySQL; exit 0 if consistent, 1 on drift, 2 on error
    Reconcile {
        /// Only this event (default: every event known to Redis or MySQL)
        #[arg(long)]
        event: Option<String>,
        /// Wait up to SECS for the sidecar to write what is still in the
        /// logs (unsynced = 0), then compare each event again while it
        /// differs with a change under way
        #[arg(long, value_name = "SECS", default_value_t = 0)]
        wait: u64,
        /// Report an event STUCK when its first entry beyond MySQL's
        /// offset has waited longer than SECS
        #[arg(long, value_name = "SECS", default_value_t = 60)]
        stuck_after: u64,
    },
    /// Restore an event in Redis from MySQL (prints the plan; acts with --apply)
    Rebuild {
        /// The event
        #[arg(long)]
        event: String,
        /// Restore it (without: print the plan only)
        #[arg(long)]
        apply: bool,
        /// Overwrite the event even though it is live in Redis
        #[arg(long)]
        force: bool,
        /// Most tickets per TICKET.RESTORE ORDERS/FREE call
        #[arg(long, value_name = "N", default_value_t = protocol::restore::DEFAULT_CHUNK as u64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
        chunk: u64,
    },
    /// Check a draw event's order from MySQL alone: SHA-256(seed) is the
    /// commitment and every offer went to the lowest-ranked entrant still
    /// waiting; exit 0 (fair), 1 (the first violation), 2 on error
    AuditDraw {
        /// The draw event
        #[arg(long)]
        event: String,
    },
    /// Check a seated event's seats from MySQL alone: replayed in log
    /// order, no seat held twice, every best-available and split order got
    /// exactly the seats the rule gives, every pick obeyed the orphan rule;
    /// exit 0, 1 (the first violation), 2 on error
    AuditSeats {
        /// The seated event
        #[arg(long)]
        event: String,
    },
}

/// A URL with its password replaced by `***`, safe to log.
fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((a, h)) => (a, h),
        None => return url.to_owned(),
    };
    match auth.split_once(':') {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

fn need(value: Option<String>, flag: &str, env: &str) -> Result<String, String> {
    match value {
        Some(v) if !v.trim().is_empty() => Ok(v),
        _ => Err(format!(
            "missing {flag} (or the {env} environment variable)"
        )),
    }
}

/// Connects with retries until `timeout`; a clear error after that, with a
/// hint when the failure may be about TLS. A certificate or protocol
/// mismatch (a fatal [`conn::Hint`]) is a configuration error: no retry.
fn connect_retry<T, E: std::fmt::Display>(
    what: conn::Server,
    url: &str,
    timeout: Duration,
    stop: &AtomicBool,
    mut f: impl FnMut() -> Result<T, E>,
) -> Result<T, String> {
    let start = Instant::now();
    let mut backoff = Backoff::standard();
    loop {
        match f() {
            Ok(v) => return Ok(v),
            Err(e) => {
                let e = e.to_string();
                let hint = conn::hint(what, url, &e);
                if let Some(h) = hint.as_ref().filter(|h| h.fatal) {
                    let url = redact(url);
                    return Err(format!(
                        "cannot connect to {what} at {url}: {e} -- {}",
                        h.text
                    ));
                }
                if start.elapsed() >= timeout || stop.load(Ordering::Relaxed) {
                    let h = hint.map(|h| format!(" -- {}", h.text)).unwrap_or_default();
                    return Err(format!("cannot reach {what} at {}: {e}{h}", redact(url)));
                }
                log::warn!("cannot reach {what} at {} yet: {e}; retrying", redact(url));
                sleep_unless(stop, backoff.next_delay());
            }
        }
    }
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"))
        .format_timestamp_millis()
        .init();
    let cli = Cli::parse();
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(sig, stop.clone()) {
            log::error!("cannot install signal handler: {e}");
            return ExitCode::from(2);
        }
    }
    match real_main(cli, stop) {
        Ok(code) => code,
        Err(e) => {
            log::error!("{e}");
            eprintln!("ticketgate-sidecar: {e}");
            ExitCode::from(2)
        }
    }
}

/// Installs the TLS settings of the servers the subcommand talks to, then
/// runs it.
fn real_main(cli: Cli, stop: Arc<AtomicBool>) -> Result<ExitCode, String> {
    let timeout = Duration::from_secs(cli.startup_timeout);
    let redis_url = match cli.command {
        Command::Migrate | Command::AuditDraw { .. } | Command::AuditSeats { .. } => None,
        _ => cli.redis_url.as_deref(),
    };
    install_settings(&cli, redis_url)?;
    let urls = Urls {
        redis: cli.redis_url,
        mysql: cli.mysql_url,
        timeout,
    };
    run_command(cli.command, urls, stop)
}

/// Runs the subcommand against the servers at `urls`.
fn run_command(command: Command, urls: Urls, stop: Arc<AtomicBool>) -> Result<ExitCode, String> {
    match command {
        Command::Migrate => migrate(urls, &stop),
        Command::AuditDraw { event } => audit_with(urls, &stop, |my| audit::run(my, &event)),
        Command::AuditSeats { event } => audit_with(urls, &stop, |my| seat_audit::run(my, &event)),
        Command::Run {
            batch_size,
            writers,
            metrics_addr,
            rescan_interval,
            block_ms,
            migrate,
            verify_interval,
        } => {
            let opts = RunOpts {
                batch_size: batch_size as usize,
                writers: writers as usize,
                block_ms,
                rescan_interval: Duration::from_secs(rescan_interval.max(1)),
                metrics_addr,
                verify_interval: Duration::from_secs(verify_interval.max(1)),
                migrate,
            };
            run(urls, opts, stop)
        }
        Command::Reconcile {
            event,
            wait,
            stuck_after,
        } => {
            let (mut my, mut rc, redis_url) = admin_conns(urls, &stop)?;
            let opts = reconcile::Options {
                only: event,
                wait: Duration::from_secs(wait),
                stuck_after: Duration::from_secs(stuck_after),
            };
            reconcile::run(&mut my, &mut rc, &redis_url, opts, &stop)
        }
        Command::Rebuild {
            event,
            apply,
            force,
            chunk,
        } => {
            let (mut my, mut rc, _) = admin_conns(urls, &stop)?;
            let args = rebuild::Args {
                event,
                apply,
                force,
                chunk: chunk as usize,
            };
            rebuild::run(&mut my, &mut rc, &args)
        }
    }
}

/// Loads the TLS files and the sentinels' credentials for every connection
/// of the process; `redis_url` is the URL the command will use, if any.
fn install_settings(cli: &Cli, redis_url: Option<&str>) -> Result<(), String> {
    conn::install(conn::Tls {
        redis: conn::RedisTls::load(&cli.redis_tls, redis_url)?,
        mysql: conn::MysqlTls::load(&cli.mysql_tls)?,
        sentinel: cli.sentinel.auth(),
    })
}

/// The server URLs of the command line and how long to wait for them.
struct Urls {
    redis: Option<String>,
    mysql: Option<String>,
    timeout: Duration,
}

impl Urls {
    fn redis(&self) -> Result<String, String> {
        need(self.redis.clone(), "--redis-url", "TICKETGATE_REDIS_URL")
    }

    fn mysql(&self) -> Result<String, String> {
        need(self.mysql.clone(), "--mysql-url", "TICKETGATE_MYSQL_URL")
    }

    /// A MySQL connection, retried until the startup timeout.
    fn connect_mysql(&self, url: &str, stop: &AtomicBool) -> Result<mysql::Conn, String> {
        connect_retry(conn::Server::Mysql, url, self.timeout, stop, || {
            db::connect(url)
        })
    }
}

/// `migrate`: applies the schema migrations.
fn migrate(urls: Urls, stop: &AtomicBool) -> Result<ExitCode, String> {
    let url = urls.mysql()?;
    let mut conn = urls.connect_mysql(&url, stop)?;
    let written = db::migrate(&mut conn).map_err(|e| format!("migration failed: {e}"))?;
    if written.is_empty() {
        println!("schema up to date");
    }
    for m in written {
        println!("applied {m}");
    }
    Ok(ExitCode::SUCCESS)
}

/// `audit-draw` and `audit-seats`: `audit` checks an event from MySQL
/// alone (no Redis).
fn audit_with(
    urls: Urls,
    stop: &AtomicBool,
    audit: impl FnOnce(&mut mysql::Conn) -> Result<ExitCode, String>,
) -> Result<ExitCode, String> {
    let url = urls.mysql()?;
    let mut my = urls.connect_mysql(&url, stop)?;
    audit(&mut my)
}

/// The options of `run` besides the URLs.
struct RunOpts {
    batch_size: usize,
    writers: usize,
    block_ms: u64,
    rescan_interval: Duration,
    metrics_addr: Option<String>,
    verify_interval: Duration,
    migrate: bool,
}

/// `run`: checks MySQL's schema and finds out whether Redis is a cluster,
/// then runs the daemon until SIGTERM/SIGINT.
fn run(urls: Urls, opts: RunOpts, stop: Arc<AtomicBool>) -> Result<ExitCode, String> {
    let redis_url = urls.redis()?;
    let mysql_url = urls.mysql()?;
    let mut conn = urls.connect_mysql(&mysql_url, &stop)?;
    if opts.migrate {
        for m in db::migrate(&mut conn).map_err(|e| format!("migration failed: {e}"))? {
            log::info!("applied migration {m}");
        }
    }
    db::events(&mut conn).map_err(|e| {
        format!("MySQL schema not usable ({e}); run `ticketgate-sidecar migrate` first")
    })?;
    drop(conn);
    let cluster = connect_retry(conn::Server::Redis, &redis_url, urls.timeout, &stop, || {
        detect_cluster(&redis_url)
    })?;
    log::info!(
        "draining {}{} into {}",
        redact(&redis_url),
        if cluster { " (Redis Cluster)" } else { "" },
        redact(&mysql_url)
    );
    let cfg = daemon::Config {
        redis_url,
        mysql_url,
        batch_size: opts.batch_size,
        writers: opts.writers,
        block_ms: opts.block_ms,
        rescan_interval: opts.rescan_interval,
        metrics_addr: opts.metrics_addr,
        cluster,
        verify_interval: opts.verify_interval,
    };
    daemon::run(cfg, stop)?;
    Ok(ExitCode::SUCCESS)
}

/// MySQL and Redis connections of an admin command (reconcile, rebuild),
/// and the Redis URL.
fn admin_conns(urls: Urls, stop: &AtomicBool) -> Result<(mysql::Conn, Conn, String), String> {
    let redis_url = urls.redis()?;
    let mysql_url = urls.mysql()?;
    let my = urls.connect_mysql(&mysql_url, stop)?;
    let rc = connect_retry(conn::Server::Redis, &redis_url, urls.timeout, stop, || {
        let cluster = detect_cluster(&redis_url)?;
        Conn::open(&redis_url, Duration::from_secs(10), cluster)
    })?;
    Ok((my, rc, redis_url))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redacts_passwords() {
        assert_eq!(
            redact("mysql://app:s3cret@db:3306/tg"),
            "mysql://app:***@db:3306/tg"
        );
        assert_eq!(redact("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
        assert_eq!(redact("redis://:pw@h:1/"), "redis://:***@h:1/");
        assert_eq!(
            redact("mysql://root@localhost/x"),
            "mysql://root@localhost/x"
        );
    }

    #[test]
    fn cli_parses() {
        let cli = Cli::try_parse_from([
            "x",
            "run",
            "--batch-size",
            "10",
            "--redis-url",
            "redis://a/",
            "--mysql-url",
            "mysql://b/c",
        ])
        .unwrap();
        assert!(matches!(cli.command, Command::Run { batch_size: 10, .. }));
        assert!(Cli::try_parse_from(["x", "run", "--batch-size", "0"]).is_err());
        assert!(need(None, "--redis-url", "TICKETGATE_REDIS_URL")
            .unwrap_err()
            .contains("TICKETGATE_REDIS_URL"));
    }
}

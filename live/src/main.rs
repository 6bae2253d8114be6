//! `ticketgate-live`: pushes the remaining tickets of ticketgate events,
//! and the seat map of seated ones, to browsers over Server-Sent Events,
//! reading only Redis (a replica, or any node of a cluster) — one
//! `TICKET.STATUS` (or `TICKET.SEATMAP`) per watched event per tick,
//! however many people watch.
//!
//! Configuration comes from flags or the environment
//! (`TICKETGATE_REDIS_URL`, `TICKETGATE_LIVE_LISTEN`, ...). Logging goes
//! through `log` + `env_logger` (`RUST_LOG`, default `info`).

mod feed;
mod http;
mod hub;
mod metrics;
mod seatmap;
mod source;
mod stock;

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;

use crate::http::App;
use crate::hub::{Hub, StockReader};
use crate::metrics::Metrics;
use crate::seatmap::read::SeatReader;
use crate::source::Source;

#[derive(Parser, Debug)]
#[command(
    name = "ticketgate-live",
    version,
    about = "Live stock of ticketgate events over Server-Sent Events"
)]
struct Cli {
    /// Redis URL (a replica is best; any node of a cluster works), e.g. redis://10.0.0.5:6379/,
    /// or a Sentinel URL redis+sentinel://host:26379,host2:26379/<master-name> (reads a replica it lists)
    #[arg(long, env = "TICKETGATE_REDIS_URL", hide_env_values = true)]
    redis_url: String,

    /// Address to serve HTTP on (port 0: any free port, logged at start)
    #[arg(
        long,
        env = "TICKETGATE_LIVE_LISTEN",
        default_value = "127.0.0.1:8080",
        value_name = "HOST:PORT"
    )]
    listen: String,

    /// Most messages per second per event; also how often each watched event is read
    #[arg(long, env = "TICKETGATE_LIVE_MAX_RATE", default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=1000))]
    max_rate: u32,

    #[command(flatten)]
    tls: conn::RedisTlsArgs,

    #[command(flatten)]
    sentinel: conn::SentinelArgs,

    /// Seconds between heartbeat comments on idle streams
    #[arg(long, env = "TICKETGATE_LIVE_HEARTBEAT", default_value_t = 15, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=3600))]
    heartbeat: u64,
}

fn main() -> ExitCode {
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info")).init();
    let cli = Cli::parse();
    // rustls needs one process-wide crypto provider for rediss:// (ring, as
    // the sidecar's TLS uses); an error only means one is installed already.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            log::error!("cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            log::error!("{e}");
            ExitCode::from(2)
        }
    }
}

async fn run(cli: Cli) -> Result<(), String> {
    if !conn::sentinel::is_sentinel_url(&cli.redis_url) {
        redis::Client::open(cli.redis_url.as_str())
            .map_err(|e| format!("invalid --redis-url: {e}"))?;
    }
    let metrics = Metrics::new().map_err(|e| format!("metrics: {e}"))?;
    let tls = conn::RedisTls::load(&cli.tls, Some(&cli.redis_url))?;
    let auth = cli.sentinel.auth();
    let source = Arc::new(Source::new(cli.redis_url, tls, auth, metrics.clone())?);
    let tick = Duration::from_secs(1) / cli.max_rate;
    let app = Arc::new(App {
        hub: Hub::new(StockReader(source.clone()), metrics.clone(), tick),
        seats: Hub::new(SeatReader(source.clone()), metrics.clone(), tick),
        source,
        metrics,
        heartbeat: Duration::from_secs(cli.heartbeat),
    });
    let listener = tokio::net::TcpListener::bind(&cli.listen)
        .await
        .map_err(|e| format!("cannot listen on {}: {e}", cli.listen))?;
    let addr = listener
        .local_addr()
        .map_err(|e| format!("listener address: {e}"))?;
    log::info!(
        "listening on http://{addr}/ (max {} messages/s per event)",
        cli.max_rate
    );
    tokio::select! {
        served = axum::serve(listener, http::router(app)) => {
            served.map_err(|e| format!("http server: {e}"))
        }
        () = shutdown() => {
            log::info!("stopping");
            Ok(())
        }
    }
}

/// Resolves on SIGTERM or SIGINT (streams are endless: no graceful drain).
async fn shutdown() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(e) => {
                log::warn!("cannot watch SIGTERM: {e}");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}

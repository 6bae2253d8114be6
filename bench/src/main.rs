//! `ticketgate-bench`: ticketgate (module + sidecar) side by side with the
//! Lua-script design and the MySQL-only design, against the same servers in
//! one process run. See bench/README.md.

mod chart;
mod demo;
mod env;
mod info;
mod load;
mod lua;
mod mysqlpath;
mod report;
mod resp;
mod scenarios;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use crate::report::{render, render_summary, BenchOutput, RunInfo, ScenarioReport};

#[derive(Parser, Debug)]
#[command(
    name = "ticketgate-bench",
    version,
    about = "Benchmarks ticketgate against a Lua script and a MySQL-only path, with correctness checks"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Option<Cmd>,
    #[command(flatten)]
    opts: Opts,
}

#[derive(Subcommand, Debug, Clone, Copy, PartialEq, Eq)]
enum Cmd {
    /// 1,000 connections claim once at the same instant on 100 tickets
    Burst,
    /// 30,000 claims from 300 connections on 30,000 tickets
    Coupon,
    /// Pipelined claims/s: module vs Lua script vs raw ZPOPMIN
    Throughput,
    /// Winners/s the sidecar writes into MySQL vs the MySQL-only path's claims/s
    Drain,
    /// TICKET.INIT of 10,000,000 tickets vs a materialised ZSet
    BigEvent,
    /// 10,000 SSE subscribers of ticketgate-live while an event sells out
    Live,
    /// 100,000 users claim 10,000 tickets with holds; 30% abandon, the rest confirm
    Checkout,
    /// 1,000,000 users join a sold-out event's waiting list; cancels are offered in-command, expiries handed on
    Waitlist,
    /// TICKET.RESTORE of 1,000,000 orders in chunks while another connection PINGs
    Restore,
    /// Every scenario (the default)
    All,
    /// The README demo: 1,000 users burst 100 tickets, MySQL checked against Redis
    Demo,
}

/// Options shared by all subcommands.
#[derive(Args, Debug, Clone)]
pub struct Opts {
    /// Use this Redis (with the ticketgate module loaded) instead of a private one
    #[arg(long, global = true, env = "TICKETGATE_BENCH_REDIS_URL")]
    redis_url: Option<String>,
    /// Use this MySQL/MariaDB server instead of a private one (two new databases are created on it)
    #[arg(long, global = true, env = "TICKETGATE_BENCH_MYSQL_URL")]
    mysql_url: Option<String>,
    /// Extra argument for the private redis-server (repeat it), e.g.
    /// `--redis-arg=--appendonly --redis-arg=yes` to measure with AOF
    #[arg(long, global = true, allow_hyphen_values = true, value_name = "ARG")]
    redis_arg: Vec<String>,
    /// The sidecar binary [default: <workspace>/target/release/ticketgate-sidecar]
    #[arg(long, global = true)]
    sidecar: Option<PathBuf>,
    /// Print the results as JSON on stdout (tables go to stderr)
    #[arg(long, global = true)]
    json: bool,
    /// Write an SVG chart (throughput bars, burst latency percentiles)
    #[arg(long, global = true, value_name = "PATH")]
    chart: Option<PathBuf>,
    /// Print the tables as Markdown (for the README) instead of plain text
    #[arg(long, global = true)]
    markdown: bool,
    /// Do not run anything: re-render the tables (and --chart) from a saved --json output
    #[arg(long, global = true, value_name = "PATH")]
    from_json: Option<PathBuf>,
    /// Tiny sizes everywhere (smoke test); explicit size options still win
    #[arg(long, global = true)]
    quick: bool,
    /// No progress bars
    #[arg(long, global = true)]
    no_progress: bool,
    /// Client threads generating Redis load
    #[arg(long, global = true)]
    client_threads: Option<usize>,

    /// burst: users (one connection and one claim each)
    #[arg(long, global = true)]
    burst_users: Option<u64>,
    /// burst: tickets
    #[arg(long, global = true)]
    burst_tickets: Option<u64>,
    /// burst: bursts per path (interleaved; medians are reported)
    #[arg(long, global = true)]
    burst_repeats: Option<usize>,
    /// coupon: claims (= tickets)
    #[arg(long, global = true)]
    coupon_claims: Option<u64>,
    /// coupon: connections
    #[arg(long, global = true)]
    coupon_conns: Option<u64>,
    /// throughput: claims per round and path
    #[arg(long, global = true)]
    throughput_claims: Option<u64>,
    /// throughput: connections
    #[arg(long, global = true)]
    throughput_conns: Option<usize>,
    /// throughput: commands in flight per connection
    #[arg(long, global = true)]
    pipeline: Option<usize>,
    /// throughput: interleaved rounds (the median is reported)
    #[arg(long, global = true)]
    rounds: Option<usize>,
    /// drain: winners claimed before the sidecar starts
    #[arg(long, global = true)]
    drain_claims: Option<u64>,
    /// drain: claims made through the MySQL-only path
    #[arg(long, global = true)]
    mysql_claims: Option<u64>,
    /// drain: MySQL-only connections
    #[arg(long, global = true)]
    mysql_conns: Option<u64>,
    /// big-event: tickets
    #[arg(long, global = true)]
    big_tickets: Option<u64>,
    /// Lua path: threads writing its winners into MySQL
    #[arg(long, global = true)]
    lua_writers: Option<usize>,
    /// live: concurrent SSE subscribers
    #[arg(long, global = true)]
    live_subscribers: Option<u64>,
    /// live: tickets sold out while they watch
    #[arg(long, global = true)]
    live_tickets: Option<u64>,
    /// live: sell-outs per row (each at another phase of the poll tick)
    #[arg(long, global = true)]
    live_rounds: Option<usize>,
    /// checkout: users
    #[arg(long, global = true)]
    checkout_users: Option<u64>,
    /// checkout: tickets
    #[arg(long, global = true)]
    checkout_tickets: Option<u64>,
    /// checkout: connections (split over the client threads)
    #[arg(long, global = true)]
    checkout_conns: Option<u64>,
    /// checkout: HOLD of each claim, ms
    #[arg(long, global = true)]
    checkout_hold_ms: Option<u64>,
    /// checkout: mean think time before a confirm, ms (± 50%)
    #[arg(long, global = true)]
    checkout_think_ms: Option<u64>,
    /// checkout: mean wait before a sold-out claim is retried, ms (± 50%)
    #[arg(long, global = true)]
    checkout_retry_ms: Option<u64>,
    /// checkout: percent of the users who never confirm
    #[arg(long, global = true)]
    checkout_abandon_pct: Option<u64>,
    /// checkout: a path fails when not sold out after this many seconds
    #[arg(long, global = true)]
    checkout_deadline_s: Option<u64>,
    /// waitlist: users joining the waiting list
    #[arg(long, global = true)]
    waitlist_users: Option<u64>,
    /// waitlist: tickets (sold out before anyone joins)
    #[arg(long, global = true)]
    waitlist_tickets: Option<u64>,
    /// waitlist: tickets cancelled (offered, then left to expire)
    #[arg(long, global = true)]
    waitlist_cancels: Option<u64>,
    /// waitlist: the event's OFFER, ms
    #[arg(long, global = true)]
    waitlist_offer_ms: Option<u64>,
    /// restore: orders in the snapshot
    #[arg(long, global = true)]
    restore_orders: Option<u64>,
    /// restore: most tickets per ORDERS or FREE call
    #[arg(long, global = true)]
    restore_chunk: Option<usize>,
}

/// Sizes after applying `--quick` and explicit options.
#[derive(Debug, Clone)]
pub struct Sizes {
    pub client_threads: usize,
    pub burst_users: u64,
    pub burst_tickets: u64,
    pub burst_repeats: usize,
    pub coupon_claims: u64,
    pub coupon_conns: u64,
    pub throughput_claims: u64,
    pub throughput_conns: usize,
    pub pipeline: usize,
    pub rounds: usize,
    pub drain_claims: u64,
    pub mysql_claims: u64,
    pub mysql_conns: u64,
    pub big_tickets: u64,
    pub lua_writers: usize,
    pub live_subscribers: u64,
    pub live_tickets: u64,
    pub live_rounds: usize,
    pub checkout_users: u64,
    pub checkout_tickets: u64,
    pub checkout_conns: u64,
    pub checkout_hold_ms: u64,
    pub checkout_think_ms: u64,
    pub checkout_retry_ms: u64,
    pub checkout_abandon_pct: u64,
    pub checkout_deadline_s: u64,
    pub waitlist_users: u64,
    pub waitlist_tickets: u64,
    pub waitlist_cancels: u64,
    pub waitlist_offer_ms: u64,
    pub restore_orders: u64,
    pub restore_chunk: usize,
}

impl Sizes {
    fn resolve(o: &Opts) -> Sizes {
        let q = o.quick;
        let pick =
            |v: Option<u64>, full: u64, quick: u64| v.unwrap_or(if q { quick } else { full });
        let picku =
            |v: Option<usize>, full: usize, quick: usize| v.unwrap_or(if q { quick } else { full });
        Sizes {
            client_threads: picku(o.client_threads, 4, 2).max(1),
            burst_users: pick(o.burst_users, 1000, 200).max(1),
            burst_tickets: pick(o.burst_tickets, 100, 20).max(1),
            burst_repeats: picku(o.burst_repeats, 5, 1).max(1),
            coupon_claims: pick(o.coupon_claims, 30_000, 2_000).max(1),
            coupon_conns: pick(o.coupon_conns, 300, 40).max(1),
            throughput_claims: pick(o.throughput_claims, 400_000, 20_000).max(1),
            throughput_conns: picku(o.throughput_conns, 50, 8).max(1),
            pipeline: picku(o.pipeline, 16, 16).max(1),
            rounds: picku(o.rounds, 3, 1).max(1),
            drain_claims: pick(o.drain_claims, 100_000, 5_000).max(1),
            mysql_claims: pick(o.mysql_claims, 20_000, 1_000).max(1),
            mysql_conns: pick(o.mysql_conns, 50, 10).max(1),
            big_tickets: pick(o.big_tickets, 10_000_000, 100_000).max(1),
            lua_writers: picku(o.lua_writers, 32, 8).max(1),
            live_subscribers: pick(o.live_subscribers, 10_000, 300).max(1),
            live_tickets: pick(o.live_tickets, 1000, 100).max(1),
            live_rounds: picku(o.live_rounds, 10, 2).max(1),
            checkout_users: pick(o.checkout_users, 100_000, 2_000).max(1),
            checkout_tickets: pick(o.checkout_tickets, 10_000, 200).max(1),
            checkout_conns: pick(o.checkout_conns, 200, 20).max(1),
            checkout_hold_ms: pick(o.checkout_hold_ms, 2_000, 500).max(1),
            checkout_think_ms: pick(o.checkout_think_ms, 500, 100),
            checkout_retry_ms: pick(o.checkout_retry_ms, 500, 100),
            checkout_abandon_pct: pick(o.checkout_abandon_pct, 30, 30),
            checkout_deadline_s: pick(o.checkout_deadline_s, 180, 60).max(1),
            waitlist_users: pick(o.waitlist_users, 1_000_000, 2_000).max(2),
            waitlist_tickets: pick(o.waitlist_tickets, 1_000, 50).max(1),
            waitlist_cancels: pick(o.waitlist_cancels, 100, 10).max(1),
            waitlist_offer_ms: pick(o.waitlist_offer_ms, 2_000, 500).max(1),
            restore_orders: pick(o.restore_orders, 1_000_000, 20_000).max(1),
            restore_chunk: picku(o.restore_chunk, protocol::restore::DEFAULT_CHUNK, 1_000).max(1),
        }
    }
}

/// Output helpers: progress bars (stderr, only on a terminal) and status lines.
#[derive(Clone, Copy)]
pub struct Ui {
    pub progress: bool,
    pub json: bool,
}

impl Ui {
    /// A progress bar over `len` items; hidden unless wanted.
    pub fn bar(&self, len: u64, msg: &str) -> ProgressBar {
        if !self.progress {
            return ProgressBar::hidden();
        }
        let pb = ProgressBar::new(len);
        let style = ProgressStyle::with_template(
            "{msg:28} [{bar:32.cyan/blue}] {human_pos}/{human_len} {rate:>10} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "rate",
            |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{}/s", report::fmt_num(s.per_sec(), 0));
            },
        )
        .progress_chars("=> ");
        pb.set_style(style);
        pb.set_message(msg.to_string());
        pb.enable_steady_tick(Duration::from_millis(200));
        pb
    }

    /// A status line on stderr.
    pub fn say(&self, msg: &str) {
        eprintln!("{msg}");
    }

    /// Human output: stdout normally, stderr with `--json`.
    pub fn print(&self, text: &str) {
        if self.json {
            eprint!("{text}");
        } else {
            print!("{text}");
            let _ = std::io::stdout().flush();
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let cmd = cli.cmd.unwrap_or(Cmd::All);
    let ui = Ui {
        progress: !cli.opts.no_progress && std::io::IsTerminal::is_terminal(&std::io::stderr()),
        json: cli.opts.json,
    };
    let result = match cmd {
        Cmd::Demo => demo::run(&cli.opts, ui),
        _ => run_bench(cmd, &cli.opts, ui),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("ticketgate-bench: error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn loadavg() -> Option<f64> {
    report::parse_loadavg(&std::fs::read_to_string("/proc/loadavg").ok()?)
}

fn finish(output: &BenchOutput, opts: &Opts, ui: Ui) -> Result<ExitCode> {
    if opts.markdown {
        ui.print(&report::render_markdown(output));
    } else {
        ui.print(&format!("\n{}", render_summary(output)));
    }
    if let Some(path) = &opts.chart {
        chart::write(path, &output.scenarios)?;
        ui.say(&format!("chart written to {}", path.display()));
    }
    if opts.json {
        println!("{}", serde_json::to_string_pretty(output)?);
    }
    Ok(if output.violations > 0 {
        eprintln!(
            "ticketgate-bench: {} correctness violation(s) — see VIOLATION lines",
            output.violations
        );
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn rerender(path: &std::path::Path, opts: &Opts, ui: Ui) -> Result<ExitCode> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let output: BenchOutput = serde_json::from_str(&text)
        .with_context(|| format!("parse {} as ticketgate-bench --json output", path.display()))?;
    if !opts.markdown {
        for r in &output.scenarios {
            ui.print(&format!("\n{}", render(r)));
        }
    }
    finish(&output, opts, ui)
}

fn run_bench(cmd: Cmd, opts: &Opts, ui: Ui) -> Result<ExitCode> {
    if let Some(path) = &opts.from_json {
        return rerender(path, opts, ui);
    }
    let sizes = Sizes::resolve(opts);
    ui.say(&format!(
        "setting up: {}, {}, two databases migrated by ticketgate-sidecar migrate...",
        if opts.redis_url.is_some() {
            "the given Redis"
        } else {
            "a private redis-server with the module"
        },
        if opts.mysql_url.is_some() {
            "the given MySQL"
        } else {
            "a private MariaDB"
        },
    ));
    let servers = env::Servers::setup(
        opts.redis_url.as_deref(),
        opts.mysql_url.as_deref(),
        opts.sidecar.as_deref(),
        &opts.redis_arg,
    )?;
    let run = RunInfo {
        started_unix_ms: env::unix_ms(),
        quick: opts.quick,
        redis_version: servers.redis_version(),
        mysql_version: servers.mysql_version(),
        cpus: std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        private_redis: servers.private_redis,
        private_mysql: servers.private_mysql,
        load_start: loadavg(),
        load_end: None,
        duration_s: 0.0,
    };
    let t0 = std::time::Instant::now();
    ui.say(&format!(
        "redis {} ({}), mysql {} ({}), {} cpus",
        run.redis_version,
        if run.private_redis {
            "private"
        } else {
            "given"
        },
        run.mysql_version,
        if run.private_mysql {
            "private"
        } else {
            "given"
        },
        run.cpus
    ));
    let ctx = scenarios::Ctx {
        servers: &servers,
        sizes: &sizes,
        ui,
        run_id: env::run_id(),
    };
    let list: Vec<Cmd> = match cmd {
        Cmd::All => vec![
            Cmd::Burst,
            Cmd::Coupon,
            Cmd::Throughput,
            Cmd::Drain,
            Cmd::BigEvent,
            Cmd::Live,
            Cmd::Checkout,
            Cmd::Waitlist,
            Cmd::Restore,
        ],
        c => vec![c],
    };
    let mut reports: Vec<ScenarioReport> = Vec::new();
    for c in list {
        let r = match c {
            Cmd::Burst => scenarios::burst(&ctx),
            Cmd::Coupon => scenarios::coupon(&ctx),
            Cmd::Throughput => scenarios::throughput(&ctx),
            Cmd::Drain => scenarios::drain(&ctx),
            Cmd::BigEvent => scenarios::big_event(&ctx),
            Cmd::Live => scenarios::live(&ctx),
            Cmd::Checkout => scenarios::checkout(&ctx),
            Cmd::Waitlist => scenarios::waitlist(&ctx),
            Cmd::Restore => scenarios::restore(&ctx),
            Cmd::All | Cmd::Demo => continue,
        }?;
        if opts.markdown {
            eprint!("\n{}", render(&r));
        } else {
            ui.print(&format!("\n{}", render(&r)));
        }
        reports.push(r);
    }
    let mut run = run;
    run.load_end = loadavg();
    run.duration_s = t0.elapsed().as_secs_f64();
    let output = BenchOutput::new(run, reports);
    finish(&output, opts, ui)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_command_is_all_and_sizes_resolve() {
        let cli = Cli::parse_from(["ticketgate-bench"]);
        assert!(cli.cmd.is_none());
        let s = Sizes::resolve(&cli.opts);
        assert_eq!((s.burst_users, s.burst_tickets), (1000, 100));
        assert_eq!((s.coupon_claims, s.coupon_conns), (30_000, 300));
        assert_eq!(s.big_tickets, 10_000_000);
        assert_eq!((s.checkout_users, s.checkout_tickets), (100_000, 10_000));
    }

    #[test]
    fn quick_shrinks_but_explicit_options_win() {
        let cli = Cli::parse_from([
            "ticketgate-bench",
            "all",
            "--quick",
            "--burst-users",
            "77",
            "--json",
        ]);
        assert_eq!(cli.cmd, Some(Cmd::All));
        assert!(cli.opts.json);
        let s = Sizes::resolve(&cli.opts);
        assert_eq!(s.burst_users, 77);
        assert_eq!(s.burst_tickets, 20);
        assert_eq!(s.rounds, 1);
        let cli = Cli::parse_from([
            "b",
            "throughput",
            "--redis-arg=--appendonly",
            "--redis-arg",
            "yes",
        ]);
        assert_eq!(cli.opts.redis_arg, ["--appendonly", "yes"]);
    }

    #[test]
    fn subcommands_parse() {
        for (arg, cmd) in [
            ("burst", Cmd::Burst),
            ("coupon", Cmd::Coupon),
            ("throughput", Cmd::Throughput),
            ("drain", Cmd::Drain),
            ("big-event", Cmd::BigEvent),
            ("checkout", Cmd::Checkout),
            ("waitlist", Cmd::Waitlist),
            ("restore", Cmd::Restore),
            ("demo", Cmd::Demo),
        ] {
            assert_eq!(Cli::parse_from(["b", arg]).cmd, Some(cmd));
        }
        Cli::command_for_test();
    }

    impl Cli {
        fn command_for_test() {
            use clap::CommandFactory;
            Cli::command().debug_assert();
        }
    }
}

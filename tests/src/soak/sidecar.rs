//! The soak's sidecar: the release `ticketgate-sidecar run` binary as a
//! child process draining the current primary into MySQL, killed and started
//! again by the nemesis (its log appended across restarts), and its
//! `migrate`, `reconcile` and `audit-seats` subcommands.

use std::fs;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};

use tempfile::TempDir;

use crate::release_bin;

/// The running daemon (at most one at a time) and its log.
pub struct SidecarProcess {
    child: Option<Child>,
    mysql_url: String,
    log: PathBuf,
    _dir: TempDir,
}

fn sidecar(redis_url: &str, mysql_url: &str) -> Command {
    let mut cmd = Command::new(release_bin("ticketgate-sidecar", "ticketgate-sidecar"));
    cmd.env("TICKETGATE_REDIS_URL", redis_url)
        .env("TICKETGATE_MYSQL_URL", mysql_url)
        .env("TICKETGATE_STARTUP_TIMEOUT", "10")
        .stdin(Stdio::null());
    cmd
}

impl SidecarProcess {
    /// `migrate`, then `run` against `redis_url`.
    pub fn start(redis_url: &str, mysql_url: &str) -> SidecarProcess {
        let dir = tempfile::Builder::new()
            .prefix("tg-soak-sidecar-")
            .tempdir()
            .expect("tempdir for the soak's sidecar");
        let (status, out) = run_to_end(sidecar("redis://127.0.0.1:1/", mysql_url).arg("migrate"));
        assert!(status.success(), "sidecar migrate failed: {out}");
        let mut process = SidecarProcess {
            child: None,
            mysql_url: mysql_url.to_owned(),
            log: dir.path().join("sidecar.log"),
            _dir: dir,
        };
        process.spawn(redis_url);
        process
    }

    fn spawn(&mut self, redis_url: &str) {
        let log = fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .expect("open the sidecar log");
        let child = sidecar(redis_url, &self.mysql_url)
            .args(["run", "--verify-interval", "2"])
            .env("TICKETGATE_RESCAN_INTERVAL", "2")
            .env("TICKETGATE_BATCH_SIZE", "200")
            .env("RUST_LOG", "info")
            .stdout(log.try_clone().expect("dup the sidecar log"))
            .stderr(log)
            .spawn()
            .expect("spawn ticketgate-sidecar run");
        self.child = Some(child);
    }

    /// kill -9 (and reap).
    pub fn kill9(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// kill -9, then `run` again against `redis_url`.
    pub fn restart(&mut self, redis_url: &str) {
        self.kill9();
        self.spawn(redis_url);
    }

    /// Restarts it on `redis_url` if it exited by itself; returns whether it had.
    pub fn ensure_running(&mut self, redis_url: &str) -> bool {
        let exited = !matches!(self.child.as_mut().map(|c| c.try_wait()), Some(Ok(None)));
        if exited {
            self.restart(redis_url);
        }
        exited
    }

    /// `reconcile --wait <secs>` against `redis_url`: exit status and output.
    pub fn reconcile(&self, redis_url: &str, wait_secs: u64) -> (ExitStatus, String) {
        run_to_end(sidecar(redis_url, &self.mysql_url).args([
            "reconcile",
            "--wait",
            &wait_secs.to_string(),
        ]))
    }

    /// `audit-seats --event <event>` against `redis_url`: exit status and output.
    pub fn audit_seats(&self, redis_url: &str, event: &str) -> (ExitStatus, String) {
        run_to_end(sidecar(redis_url, &self.mysql_url).args(["audit-seats", "--event", event]))
    }

    /// Copies the daemon's log (all its runs) to `to`.
    pub fn save_log(&self, to: &std::path::Path) -> std::io::Result<u64> {
        fs::copy(&self.log, to)
    }

    /// How many lines of the daemon's log (all its runs) contain `needle`.
    pub fn count_lines(&self, needle: &str) -> usize {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().filter(|l| l.contains(needle)).count()
    }

    /// The last `lines` lines of the daemon's log (all its runs).
    pub fn log_tail(&self, lines: usize) -> String {
        let text = fs::read_to_string(&self.log).unwrap_or_default();
        let all: Vec<&str> = text.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

impl Drop for SidecarProcess {
    fn drop(&mut self) {
        self.kill9();
    }
}

fn run_to_end(cmd: &mut Command) -> (ExitStatus, String) {
    let out = cmd.output().expect("run ticketgate-sidecar");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status, text)
}

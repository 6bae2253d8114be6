//! The watcher: one thread per Sentinel URL in a process that keeps the
//! current master's address for the synchronous code that connects (the
//! sidecar). It asks the sentinels at start, follows `+switch-master` on
//! one of them, re-asks every second and whenever told ([`Watcher::reask`]:
//! after a connection error or a `READONLY`), and keeps the last master it
//! had when no sentinel answers — it never forgets a master for lack of
//! news. It also counts the sentinels that answer and asks
//! `SENTINEL CKQUORUM`, logging each change ([`Health`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use tokio::sync::Notify;

use super::lookup::{parse_switch, Answer, Lookup};
use super::url::{Addr, SentinelUrl};

/// Between two rounds of questions when nothing happens.
const POLL: Duration = Duration::from_secs(1);

/// How the sentinels of a URL are doing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Health {
    /// Sentinels that answered the last round.
    pub reachable: usize,
    /// Sentinels in the URL.
    pub total: usize,
    /// `SENTINEL CKQUORUM` said a failover can be authorised.
    pub quorum: bool,
    /// Master switches seen since the start.
    pub switches: u64,
}

#[derive(Default)]
struct State {
    master: Option<Addr>,
    generation: u64,
    health: Health,
    /// Set when every sentinel that answered monitors no such master.
    unknown: Option<String>,
    /// The last problem, for a caller waiting for a first master.
    last_error: Option<String>,
}

/// The watcher of one Sentinel URL (see the module doc).
pub struct Watcher {
    url: SentinelUrl,
    state: Mutex<State>,
    changed: Condvar,
    wake: Notify,
}

/// Bumped at every master switch of any watcher, so retry loops can cut a
/// backoff short ([`switches`]).
static SWITCHES: AtomicU64 = AtomicU64::new(0);

/// Master switches seen by every watcher of the process so far.
pub fn switches() -> u64 {
    SWITCHES.load(Ordering::Relaxed)
}

fn registry() -> &'static Mutex<HashMap<String, Arc<Watcher>>> {
    static R: OnceLock<Mutex<HashMap<String, Arc<Watcher>>>> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The watcher of `url` (a Sentinel URL), started on first use with the
/// process's installed settings ([`crate::install`]).
pub fn watcher(url: &str) -> Result<Arc<Watcher>, String> {
    let mut all = registry().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(w) = all.get(url) {
        return Ok(w.clone());
    }
    let parsed = SentinelUrl::parse(url)?;
    let settings = crate::installed();
    let lookup = Lookup::new(
        parsed.clone(),
        settings.sentinel.clone(),
        settings.redis.certs(),
    );
    let w = Arc::new(Watcher {
        url: parsed,
        state: Mutex::new(State::default()),
        changed: Condvar::new(),
        wake: Notify::new(),
    });
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the Sentinel watcher: {e}"))?;
    let (me, name) = (w.clone(), format!("sentinel-{}", w.url.master));
    std::thread::Builder::new()
        .name(name)
        .spawn(move || runtime.block_on(me.run(lookup)))
        .map_err(|e| format!("cannot start the Sentinel watcher: {e}"))?;
    all.insert(url.to_owned(), w.clone());
    Ok(w)
}

/// Every watcher of the process (for metrics).
pub fn watchers() -> Vec<Arc<Watcher>> {
    let all = registry().lock().unwrap_or_else(|e| e.into_inner());
    all.values().cloned().collect()
}

impl Watcher {
    /// The URL watched.
    pub fn url(&self) -> &SentinelUrl {
        &self.url
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The current master and its generation (bumped at every switch).
    pub fn master(&self) -> Option<(Addr, u64)> {
        let s = self.state();
        s.master.clone().map(|m| (m, s.generation))
    }

    /// The generation of the current master.
    pub fn generation(&self) -> u64 {
        self.state().generation
    }

    /// The sentinels' health at the last round.
    pub fn health(&self) -> Health {
        self.state().health.clone()
    }

    /// Asks the sentinels again now (after an error on the master).
    pub fn reask(&self) {
        self.wake.notify_one();
    }

    /// Waits up to `timeout` for a master. A wrong master name is an error
    /// at once (every sentinel that answered monitors no such master).
    pub fn wait_master(&self, timeout: Duration) -> Result<(Addr, u64), String> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state();
        loop {
            if let Some(m) = &s.master {
                return Ok((m.clone(), s.generation));
            }
            if let Some(e) = &s.unknown {
                return Err(e.clone());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let why = s
                    .last_error
                    .clone()
                    .unwrap_or_else(|| "no answer yet".into());
                return Err(format!(
                    "no master {:?} from the sentinels at {}: {why}",
                    self.url.master,
                    self.url.sentinel_list()
                ));
            }
            s = self
                .changed
                .wait_timeout(s, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Waits up to `timeout` for a master other than generation `seen`.
    pub fn wait_switch(&self, seen: u64, timeout: Duration) -> bool {
        let s = self.state();
        let (s, _) = self
            .changed
            .wait_timeout_while(s, timeout, |s| s.generation == seen)
            .unwrap_or_else(|e| e.into_inner());
        s.generation != seen
    }

    /// The thread's loop: a round, then the next switch message, a re-ask
    /// or a second, whichever comes first.
    async fn run(self: Arc<Self>, lookup: Lookup) {
        let mut switches = None;
        loop {
            self.round(&lookup).await;
            if switches.is_none() {
                switches = self.subscribe(&lookup).await;
            }
            let next = async {
                match switches.as_mut() {
                    Some(s) => s.next().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                msg = next => match msg {
                    Some(m) => self.on_switch_message(&m),
                    None => switches = None,
                },
                () = tokio::time::sleep(POLL) => {}
                () = self.wake.notified() => {}
            }
        }
    }

    /// Subscribes to `+switch-master` on the first sentinel that accepts.
    async fn subscribe(&self, lookup: &Lookup) -> Option<redis::aio::PubSubStream> {
        for addr in &self.url.sentinels {
            let Ok(client) = lookup.sentinel_client(addr) else {
                continue;
            };
            let sub = async {
                let mut ps = client.get_async_pubsub().await?;
                ps.subscribe("+switch-master").await?;
                Ok::<_, redis::RedisError>(ps.into_on_message())
            };
            if let Ok(Ok(s)) = tokio::time::timeout(super::lookup::ASK_TIMEOUT, sub).await {
                log::debug!("sentinel: following +switch-master on {addr}");
                return Some(s);
            }
        }
        None
    }

    fn on_switch_message(&self, msg: &redis::Msg) {
        let payload: String = msg.get_payload().unwrap_or_default();
        if let Some((old, new)) = parse_switch(&payload, &self.url.master) {
            log::warn!(
                "sentinel: +switch-master {}: {old} -> {new}",
                self.url.master
            );
            self.set_master(new);
        }
    }

    /// One round: every sentinel's answer, the quorum, and the master
    /// (verified) when the answers name another one than ours.
    async fn round(&self, lookup: &Lookup) {
        let answers = lookup.ask_all().await;
        let first = answers
            .iter()
            .position(|a| !matches!(a, Answer::Unreachable(_)));
        let reachable = answers
            .iter()
            .filter(|a| !matches!(a, Answer::Unreachable(_)))
            .count();
        let named: Vec<&Addr> = answers
            .iter()
            .filter_map(|a| match a {
                Answer::Master(m) => Some(m),
                _ => None,
            })
            .collect();
        if let (Some(i), true) = (first, named.is_empty()) {
            let known = lookup.monitored(i).await.unwrap_or_default();
            self.set_unknown(&known);
            return;
        }
        let current = self.master().map(|(m, _)| m);
        if current.is_none() || named.iter().any(|m| Some(*m) != current.as_ref()) {
            match lookup.master().await {
                Ok(m) => self.set_master(m),
                Err(e) => self.state().last_error = Some(e),
            }
        }
        let quorum = match first {
            Some(i) => lookup.quorum(i).await.ok(),
            None => None,
        };
        self.set_health(&answers, reachable, quorum);
    }

    fn set_master(&self, m: Addr) {
        let mut s = self.state();
        s.unknown = None;
        if s.master.as_ref() == Some(&m) {
            return;
        }
        match &s.master {
            Some(old) => log::warn!(
                "sentinel: the master {} moved from {old} to {m}; reconnecting there",
                self.url.master
            ),
            None => log::info!("sentinel: the master {} is {m}", self.url.master),
        }
        if s.master.is_some() {
            s.health.switches += 1;
            SWITCHES.fetch_add(1, Ordering::Relaxed);
        }
        s.master = Some(m);
        s.generation += 1;
        self.changed.notify_all();
    }

    fn set_unknown(&self, known: &[String]) {
        let msg = format!(
            "no sentinel at {} monitors a master named {:?} (they monitor: {}); check the name after the last / of the Sentinel URL",
            self.url.sentinel_list(),
            self.url.master,
            if known.is_empty() { "nothing".into() } else { known.join(", ") }
        );
        let mut s = self.state();
        if s.unknown.is_none() {
            log::error!("sentinel: {msg}");
        }
        s.unknown = Some(msg);
        self.changed.notify_all();
    }

    /// Records the round's health and logs what changed.
    fn set_health(&self, answers: &[Answer], reachable: usize, quorum: Option<(bool, String)>) {
        let mut s = self.state();
        let before = s.health.clone();
        let ok = quorum.as_ref().is_some_and(|(ok, _)| *ok);
        s.health.reachable = reachable;
        s.health.total = answers.len();
        s.health.quorum = ok;
        if reachable == 0 {
            s.last_error = answers.iter().find_map(|a| match a {
                Answer::Unreachable(e) => Some(e.clone()),
                _ => None,
            });
        }
        let master = s.master.as_ref().map_or("none yet".into(), Addr::to_string);
        if (reachable, ok) == (before.reachable, before.quorum) && before.total != 0 {
            return;
        }
        let down: Vec<String> = self
            .url
            .sentinels
            .iter()
            .zip(answers)
            .filter(|(_, a)| matches!(a, Answer::Unreachable(_)))
            .map(|(addr, _)| addr.to_string())
            .collect();
        let name = &self.url.master;
        let total = answers.len();
        match (ok, down.is_empty()) {
            (true, true) => log::info!("sentinel: {total} of {total} sentinels answer for {name}; quorum reachable"),
            (true, false) => log::warn!(
                "sentinel: {reachable} of {total} sentinels answer for {name} (down: {}); quorum still reachable; master {master}",
                down.join(", ")
            ),
            (false, _) => log::warn!(
                "sentinel: NO QUORUM for {name}: {reachable} of {total} sentinels answer (down: {}){}; no failover can happen now; still draining the master it has, {master}",
                if down.is_empty() { "none".into() } else { down.join(", ") },
                quorum.map(|(_, why)| format!(" ({why})")).unwrap_or_default()
            ),
        }
    }
}

//! Asking the sentinels (async, every call bounded by a timeout).
//!
//! The master and a replica come from the `redis` crate's own Sentinel
//! client ([`redis::sentinel::SentinelClient`]): it asks each sentinel in
//! turn, skips masters flagged down, and checks with `ROLE` that the node
//! it names is a master (or a replica). What that client does not do is
//! here: one sentinel's own answer (`SENTINEL GET-MASTER-ADDR-BY-NAME`, to
//! count the sentinels that answer and to tell a wrong master name from an
//! unreachable one), `SENTINEL CKQUORUM`, the names the sentinels monitor,
//! and the `+switch-master` subscription.

use std::time::Duration;

use futures_util::future::join_all;
use redis::aio::MultiplexedConnection;
use redis::sentinel::{SentinelClient, SentinelClientBuilder, SentinelServerType};
use redis::{AsyncConnectionConfig, Client, ConnectionAddr, TlsCertificates, TlsMode, Value};
use tokio::sync::Mutex;
use tokio::time::timeout;

use super::url::{Addr, SentinelAuth, SentinelUrl};

/// The longest one question to the sentinels may take (connect included).
pub const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// What one sentinel said about the master's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// It monitors the name; the master's address.
    Master(Addr),
    /// It answered, and monitors no master of that name.
    Unknown,
    /// No answer (the error).
    Unreachable(String),
}

/// The sentinels of one URL, and the clients that ask them.
pub struct Lookup {
    pub url: SentinelUrl,
    auth: SentinelAuth,
    certs: Option<TlsCertificates>,
    master: Mutex<Option<SentinelClient>>,
    replica: Mutex<Option<SentinelClient>>,
    /// One cached connection per sentinel, for [`Lookup::ask_all`].
    conns: Vec<Mutex<Option<MultiplexedConnection>>>,
}

impl Lookup {
    /// The sentinels of `url`; `certs` (the `--redis-*` files) serve TLS to
    /// the sentinels and to the data nodes alike.
    pub fn new(url: SentinelUrl, auth: SentinelAuth, certs: Option<TlsCertificates>) -> Lookup {
        let conns = url.sentinels.iter().map(|_| Mutex::new(None)).collect();
        Lookup {
            url,
            auth,
            certs,
            master: Mutex::new(None),
            replica: Mutex::new(None),
            conns,
        }
    }

    /// The master, as the crate's Sentinel client finds it (verified with `ROLE`).
    pub async fn master(&self) -> Result<Addr, String> {
        self.node(&self.master, SentinelServerType::Master).await
    }

    /// A replica the sentinels list (verified with `ROLE`), chosen at random.
    pub async fn replica(&self) -> Result<Addr, String> {
        self.node(&self.replica, SentinelServerType::Replica).await
    }

    async fn node(
        &self,
        slot: &Mutex<Option<SentinelClient>>,
        kind: SentinelServerType,
    ) -> Result<Addr, String> {
        let mut slot = slot.lock().await;
        if slot.is_none() {
            *slot = Some(self.client(kind).map_err(|e| e.to_string())?);
        }
        let Some(client) = slot.as_mut() else {
            return Err("no Sentinel client".into());
        };
        let found = timeout(ASK_TIMEOUT, client.async_get_client()).await;
        match found {
            Ok(Ok(c)) => addr_of(c.get_connection_info().addr())
                .ok_or_else(|| "the sentinels named a node that is not host:port".into()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => {
                // Dropped mid-question: start over with fresh connections.
                *slot = None;
                Err(format!(
                    "no answer from the sentinels within {ASK_TIMEOUT:?}"
                ))
            }
        }
    }

    fn client(&self, kind: SentinelServerType) -> redis::RedisResult<SentinelClient> {
        let tls = self.url.tls;
        let addrs = self.url.sentinels.iter().map(|a| match tls {
            true => ConnectionAddr::TcpTls {
                host: a.host.clone(),
                port: a.port,
                insecure: false,
                tls_params: None,
            },
            false => ConnectionAddr::Tcp(a.host.clone(), a.port),
        });
        let mut b = SentinelClientBuilder::new(addrs, &self.url.master, kind)?;
        if let Some(u) = &self.auth.user {
            b = b.set_client_to_sentinel_username(u);
        }
        if let Some(p) = &self.auth.password {
            b = b.set_client_to_sentinel_password(p);
        }
        if let Some(u) = self.url.user() {
            b = b.set_client_to_redis_username(u);
        }
        if let Some(p) = self.url.password() {
            b = b.set_client_to_redis_password(p);
        }
        if tls {
            b = b.set_client_to_redis_tls_mode(TlsMode::Secure);
            if let Some(certs) = &self.certs {
                b = b
                    .set_client_to_sentinel_certificates(certs.clone())
                    .set_client_to_redis_certificates(certs.clone());
            }
        }
        b.build()
    }

    /// A plain client for the sentinel at `addr` (its credentials, the certificates).
    pub fn sentinel_client(&self, addr: &Addr) -> redis::RedisResult<Client> {
        let url = self.url.sentinel_url(addr, &self.auth);
        match (&self.certs, self.url.tls) {
            (Some(certs), true) => Client::build_with_tls(url, certs.clone()),
            _ => Client::open(url),
        }
    }

    /// Every sentinel's `SENTINEL GET-MASTER-ADDR-BY-NAME`, asked at once.
    pub async fn ask_all(&self) -> Vec<Answer> {
        let asks = (0..self.url.sentinels.len()).map(|i| self.ask(i));
        join_all(asks).await
    }

    async fn ask(&self, i: usize) -> Answer {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg("GET-MASTER-ADDR-BY-NAME").arg(&self.url.master);
        match self.query(i, &cmd).await {
            Ok(Value::Nil) => Answer::Unknown,
            Ok(Value::Array(v)) if v.len() == 2 => {
                let host = text(&v[0]).unwrap_or_default();
                match text(&v[1]).and_then(|p| p.parse().ok()) {
                    Some(port) if !host.is_empty() => Answer::Master(Addr::new(host, port)),
                    _ => Answer::Unreachable(format!("unexpected reply {v:?}")),
                }
            }
            Ok(other) => Answer::Unreachable(format!("unexpected reply {other:?}")),
            Err(e) => Answer::Unreachable(e),
        }
    }

    /// `SENTINEL CKQUORUM <master>` on sentinel `i`: `Ok(true)` when a
    /// failover could be authorised, `Ok(false)` (with the sentinel's words)
    /// when not.
    pub async fn quorum(&self, i: usize) -> Result<(bool, String), String> {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg("CKQUORUM").arg(&self.url.master);
        match self.query(i, &cmd).await {
            Ok(v) => Ok((true, text(&v).unwrap_or_default())),
            Err(e) if e.contains("NOQUORUM") => Ok((false, e)),
            Err(e) => Err(e),
        }
    }

    /// The master names sentinel `i` monitors (`SENTINEL MASTERS`).
    pub async fn monitored(&self, i: usize) -> Result<Vec<String>, String> {
        let mut cmd = redis::cmd("SENTINEL");
        cmd.arg("MASTERS");
        let v = self.query(i, &cmd).await?;
        Ok(master_names(&v))
    }

    /// `cmd` on sentinel `i` through its cached connection (dropped on error).
    async fn query(&self, i: usize, cmd: &redis::Cmd) -> Result<Value, String> {
        let Some(slot) = self.conns.get(i) else {
            return Err(format!("no sentinel number {i}"));
        };
        let mut slot = slot.lock().await;
        let conn = match slot.take() {
            Some(c) => c,
            None => self.connect(i).await?,
        };
        let mut c = conn.clone();
        match timeout(ASK_TIMEOUT, cmd.query_async::<Value>(&mut c)).await {
            Ok(Ok(v)) => {
                *slot = Some(conn);
                Ok(v)
            }
            Ok(Err(e)) if e.code().is_some() => {
                *slot = Some(conn);
                Err(e.to_string())
            }
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!("no answer within {ASK_TIMEOUT:?}")),
        }
    }

    async fn connect(&self, i: usize) -> Result<MultiplexedConnection, String> {
        let addr = &self.url.sentinels[i];
        let client = self.sentinel_client(addr).map_err(|e| e.to_string())?;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(ASK_TIMEOUT))
            .set_response_timeout(Some(ASK_TIMEOUT));
        client
            .get_multiplexed_async_connection_with_config(&config)
            .await
            .map_err(|e| e.to_string())
    }
}

/// `host:port` of a TCP address.
fn addr_of(a: &ConnectionAddr) -> Option<Addr> {
    match a {
        ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. } => {
            Some(Addr::new(host.clone(), *port))
        }
        _ => None,
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => Some(String::from_utf8_lossy(b).into_owned()),
        Value::SimpleString(s) => Some(s.clone()),
        Value::Okay => Some("OK".into()),
        Value::Int(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The `name` of every master in a `SENTINEL MASTERS` reply (RESP2 flat
/// arrays or RESP3 maps).
pub fn master_names(v: &Value) -> Vec<String> {
    let Value::Array(masters) = v else {
        return Vec::new();
    };
    let mut names: Vec<String> = masters
        .iter()
        .filter_map(|m| {
            let pairs: Vec<(&Value, &Value)> = match m {
                Value::Array(a) => a
                    .chunks(2)
                    .filter_map(|c| Some((c.first()?, c.get(1)?)))
                    .collect(),
                Value::Map(m) => m.iter().map(|(k, v)| (k, v)).collect(),
                _ => return None,
            };
            pairs
                .into_iter()
                .find(|(k, _)| text(k).as_deref() == Some("name"))
                .and_then(|(_, v)| text(v))
        })
        .collect();
    names.sort();
    names
}

/// The `+switch-master` message for `master`: the new master's address.
/// (`<name> <old-ip> <old-port> <new-ip> <new-port>`.)
pub fn parse_switch(payload: &str, master: &str) -> Option<(Addr, Addr)> {
    let f: Vec<&str> = payload.split_whitespace().collect();
    if f.len() != 5 || f[0] != master {
        return None;
    }
    let old = Addr::new(f[1], f[2].parse().ok()?);
    let new = Addr::new(f[3], f[4].parse().ok()?);
    Some((old, new))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bs(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn switch_messages() {
        assert_eq!(
            parse_switch("mymaster 10.0.0.1 6379 10.0.0.2 6380", "mymaster"),
            Some((Addr::new("10.0.0.1", 6379), Addr::new("10.0.0.2", 6380)))
        );
        assert_eq!(
            parse_switch("other 10.0.0.1 6379 10.0.0.2 6380", "mymaster"),
            None
        );
        assert_eq!(
            parse_switch("mymaster 10.0.0.1 6379 10.0.0.2", "mymaster"),
            None
        );
        assert_eq!(parse_switch("mymaster a b c d", "mymaster"), None);
    }

    #[test]
    fn names_of_monitored_masters() {
        let resp2 = Value::Array(vec![
            Value::Array(vec![bs("name"), bs("tg"), bs("ip"), bs("127.0.0.1")]),
            Value::Array(vec![bs("ip"), bs("x"), bs("name"), bs("cache")]),
        ]);
        assert_eq!(master_names(&resp2), ["cache", "tg"]);
        let resp3 = Value::Array(vec![Value::Map(vec![(bs("name"), bs("m"))])]);
        assert_eq!(master_names(&resp3), ["m"]);
        assert!(master_names(&Value::Nil).is_empty());
    }
}

//! Redis glue: connecting, discovering event logs, reading and trimming them.
//!
//! Replies are parsed from raw [`redis::Value`]s (RESP2 arrays or RESP3 maps)
//! so that a strange entry becomes a [`protocol::record::Malformed`] instead of a
//! client-side type error that would stall the stream; each entry keeps its
//! size and SHA-256 as read ([`Entry::read`]). Key names follow
//! docs/design.md, "Keys": `ticket:{E}:log`, `ticket:{E}:meta`, `ticket:{E}:holders`.

use std::collections::HashMap;
use std::time::Duration;

use redis::cluster::{ClusterClient, ClusterConnection};
use redis::{Connection, ConnectionLike, RedisResult, Value};

use super::sentinel::{self, Guarded};
use crate::model::live::redis_users;
use crate::model::{Entry, Live};
use protocol::keys::{self, Part};
use protocol::StreamId;

/// The log key of an event.
pub fn log_key(event: &str) -> String {
    keys::key(event, Part::Log)
}

/// The event id of a key `ticket:{E}:<part>`, if well-formed.
pub fn event_of_key(key: &str, part: Part) -> Option<&str> {
    keys::event_of_key(key.as_bytes(), part)
}

/// Opens a connection with bounded connect and I/O timeouts; for a
/// Sentinel URL, to the master the sentinels name (see [`Conn::open`] for
/// a connection that also stops at a failover).
pub fn connect(url: &str, io_timeout: Duration) -> RedisResult<Connection> {
    if conn::sentinel::is_sentinel_url(url) {
        return sentinel::connect_master(url, io_timeout).map(Guarded::into_inner);
    }
    let client = conn::installed().redis.client(url)?;
    let conn = client.get_connection_with_timeout(Duration::from_secs(5))?;
    conn.set_read_timeout(Some(io_timeout))?;
    conn.set_write_timeout(Some(io_timeout))?;
    Ok(conn)
}

/// A connection to a single Redis, to the master of a Sentinel URL, or to
/// a Redis Cluster. In cluster mode every command is routed by its key
/// (following `MOVED`/`ASK` and topology changes), so a multi-key command
/// must keep its keys in one slot.
pub enum Conn {
    /// One server.
    Single(Connection),
    /// The master the sentinels name; unusable once they name another.
    Sentinel(Box<Guarded>),
    /// A cluster, reached through any of its nodes.
    Cluster(Box<ClusterConnection>),
}

impl Conn {
    /// Connects to `url`, as a cluster client when `cluster` is set.
    ///
    /// A cluster connection is seeded with `url` and with every node seen
    /// in `CLUSTER NODES` since the process started, so it can be opened
    /// again after the node of `url` died (a master killed and failed over).
    pub fn open(url: &str, io_timeout: Duration, cluster: bool) -> RedisResult<Conn> {
        if conn::sentinel::is_sentinel_url(url) {
            return sentinel::connect_master(url, io_timeout).map(|g| Conn::Sentinel(Box::new(g)));
        }
        if !cluster {
            return connect(url, io_timeout).map(Conn::Single);
        }
        let mut builder = ClusterClient::builder(cluster_seeds(url))
            .connection_timeout(Duration::from_secs(5))
            .response_timeout(io_timeout);
        if let Some(certs) = conn::installed().redis.certs() {
            builder = builder.certs(certs);
        }
        let client = builder.build()?;
        let mut conn = client.get_connection()?;
        if let Ok(nodes) = redis::cmd("CLUSTER")
            .arg("NODES")
            .query::<String>(&mut conn)
        {
            remember_cluster_nodes(&nodes);
        }
        Ok(Conn::Cluster(Box::new(conn)))
    }

    /// The connection for `Cmd::query`.
    pub fn as_dyn(&mut self) -> &mut dyn ConnectionLike {
        match self {
            Conn::Single(c) => c,
            Conn::Sentinel(c) => c.as_mut(),
            Conn::Cluster(c) => c.as_mut(),
        }
    }
}

/// True if the server at `url` runs with `cluster-enabled yes`.
pub fn detect_cluster(url: &str) -> RedisResult<bool> {
    let mut c = connect(url, Duration::from_secs(5))?;
    let info: String = redis::cmd("INFO").arg("cluster").query(&mut c)?;
    Ok(info.lines().any(|l| l.trim() == "cluster_enabled:1"))
}

/// Masters (`host:port`) in the output of `CLUSTER NODES` that serve slots
/// and are not failing.
pub fn parse_cluster_masters(nodes: &str) -> Vec<String> {
    // Fewer than 9 fields: the master serves no slots.
    node_addrs(nodes, 9, |flags| {
        flags.split(',').any(|x| x == "master")
            && !flags.contains("fail")
            && !flags.contains("noaddr")
    })
}

/// Addresses (`host:port`) of every node, master or replica, in the output
/// of `CLUSTER NODES` that is not failing, without an address, or in a
/// handshake.
pub fn parse_cluster_addrs(nodes: &str) -> Vec<String> {
    node_addrs(nodes, 8, |flags| {
        !flags.contains("fail") && !flags.contains("noaddr") && !flags.contains("handshake")
    })
}

/// The sorted, distinct `host:port` of the `CLUSTER NODES` lines that have
/// at least `min_fields` fields and whose flags (third field) are `wanted`.
fn node_addrs(nodes: &str, min_fields: usize, wanted: impl Fn(&str) -> bool) -> Vec<String> {
    let mut out: Vec<String> = nodes
        .lines()
        .filter_map(|line| {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < min_fields || !wanted(f[2]) {
                return None;
            }
            // ip:port@cport[,hostname]
            let addr = f[1].split(['@', ',']).next().unwrap_or("");
            (!addr.is_empty() && !addr.starts_with(':')).then(|| addr.to_owned())
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Cluster nodes seen so far (see [`Conn::open`]).
fn known_nodes() -> &'static std::sync::Mutex<Vec<String>> {
    static KNOWN: std::sync::OnceLock<std::sync::Mutex<Vec<String>>> = std::sync::OnceLock::new();
    KNOWN.get_or_init(|| std::sync::Mutex::new(Vec::new()))
}

/// Adds the nodes of a `CLUSTER NODES` reply to the known nodes (a node
/// is never forgotten: a dead one merely costs a refused connection).
pub fn remember_cluster_nodes(nodes: &str) {
    let mut known = known_nodes().lock().unwrap_or_else(|e| e.into_inner());
    known.extend(parse_cluster_addrs(nodes));
    known.sort();
    known.dedup();
}

/// Seed URLs of a cluster connection: `url` first, then every known node
/// (with the scheme, credentials and database of `url`).
pub fn cluster_seeds(url: &str) -> Vec<String> {
    let known = known_nodes().lock().unwrap_or_else(|e| e.into_inner());
    let mut seeds = vec![url.to_owned()];
    for addr in known.iter() {
        let u = node_url(url, addr);
        if !seeds.contains(&u) {
            seeds.push(u);
        }
    }
    seeds
}

/// `url` with its `host:port` replaced by `hostport` (scheme, credentials,
/// database and query kept).
pub fn node_url(url: &str, hostport: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return format!("redis://{hostport}/");
    };
    let (auth, hostpath) = match rest.rsplit_once('@') {
        Some((a, h)) => (format!("{a}@"), h),
        None => (String::new(), rest),
    };
    let tail = hostpath
        .find(['/', '?'])
        .map(|i| &hostpath[i..])
        .unwrap_or("");
    format!("{scheme}://{auth}{hostport}{tail}")
}

/// Redis Cluster hash slot of every key of `event` (its hash tag).
pub fn key_slot(event: &str) -> u16 {
    crc16_xmodem(event.as_bytes()) % 16384
}

fn crc16_xmodem(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &b in data {
        crc ^= u16::from(b) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// Events with a `ticket:{E}:<suffix>` key of `type_`: one SCAN on the
/// server, or on every master of the cluster (SCAN is per node).
pub fn scan_all(
    seed_url: &str,
    conn: &mut Conn,
    part: Part,
    type_: &str,
) -> RedisResult<Vec<String>> {
    match conn {
        Conn::Single(c) => scan_events(c, part, type_),
        Conn::Sentinel(c) => scan_events(c.as_mut(), part, type_),
        Conn::Cluster(c) => {
            let nodes: String = redis::cmd("CLUSTER").arg("NODES").query(c.as_mut())?;
            remember_cluster_nodes(&nodes);
            let mut out = Vec::new();
            for m in parse_cluster_masters(&nodes) {
                let mut node = connect(&node_url(seed_url, &m), Duration::from_secs(10))?;
                out.extend(scan_events(&mut node, part, type_)?);
            }
            out.sort();
            out.dedup();
            Ok(out)
        }
    }
}

/// Bytes of a string-like reply value.
pub fn bytes(v: &Value) -> Option<Vec<u8>> {
    match v {
        Value::BulkString(b) => Some(b.clone()),
        Value::SimpleString(s) => Some(s.as_bytes().to_vec()),
        Value::Int(i) => Some(i.to_string().into_bytes()),
        Value::Okay => Some(b"OK".to_vec()),
        Value::VerbatimString { text, .. } => Some(text.as_bytes().to_vec()),
        _ => None,
    }
}

/// A string-like reply value as text (lossy).
pub fn text(v: &Value) -> Option<String> {
    bytes(v).map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// Pairs of a RESP2 flat array or a RESP3 map.
pub fn pairs(v: &Value) -> Vec<(Value, Value)> {
    match v {
        Value::Map(m) => m.clone(),
        Value::Array(a) => a
            .chunks(2)
            .filter(|c| c.len() == 2)
            .map(|c| (c[0].clone(), c[1].clone()))
            .collect(),
        _ => Vec::new(),
    }
}

/// Parses one stream's entries (`[[id, [f, v, ...]], ...]`) for `event`.
pub fn parse_entries(event: &str, v: &Value) -> Vec<Entry> {
    take_entries(event, v.clone())
}

/// [`parse_entries`], taking the reply apart: the field names and values
/// move into the decoder's pairs instead of being copied (the reader's
/// XREAD replies hold thousands of them).
pub fn take_entries(event: &str, v: Value) -> Vec<Entry> {
    let Value::Array(items) = v else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let Value::Array(parts) = item else { continue };
        let mut parts = parts.into_iter();
        let head = parts.next();
        let Some(id) = head
            .as_ref()
            .and_then(text)
            .and_then(|t| StreamId::parse(&t))
        else {
            log::error!("event {event}: stream entry without a parsable id: {head:?}");
            continue;
        };
        let fields = parts.next().map(take_pairs).unwrap_or_default();
        out.push(Entry::read(event, id, &fields));
    }
    out
}

/// The bytes of a string-like reply value, moved out of a bulk string.
fn into_bytes(v: Value) -> Vec<u8> {
    match v {
        Value::BulkString(b) => b,
        other => bytes(&other).unwrap_or_default(),
    }
}

/// The (field, value) byte pairs of a RESP2 flat array or a RESP3 map,
/// moved out of it (an odd last element is left out, as in [`pairs`]).
fn take_pairs(v: Value) -> Vec<(Vec<u8>, Vec<u8>)> {
    match v {
        Value::Map(m) => m
            .into_iter()
            .map(|(k, v)| (into_bytes(k), into_bytes(v)))
            .collect(),
        Value::Array(a) => {
            let mut out = Vec::with_capacity(a.len() / 2);
            let mut items = a.into_iter();
            while let (Some(k), Some(v)) = (items.next(), items.next()) {
                out.push((into_bytes(k), into_bytes(v)));
            }
            out
        }
        _ => Vec::new(),
    }
}

/// Parses an `XREAD` reply into (log key, entries) per stream, moving
/// each stream's entries out of the reply.
fn take_xread(v: Value) -> Vec<(String, Value)> {
    match v {
        Value::Map(m) => m
            .into_iter()
            .filter_map(|(k, v)| Some((text(&k)?, v)))
            .collect(),
        Value::Array(streams) => streams
            .into_iter()
            .filter_map(|s| match s {
                Value::Array(kv) if kv.len() == 2 => {
                    let mut kv = kv.into_iter();
                    let key = kv.next().as_ref().and_then(text)?;
                    Some((key, kv.next()?))
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

/// `XREAD COUNT count [BLOCK ms] STREAMS k.. id..` over `events` (event,
/// cursor); returns decoded entries per event.
pub fn xread(
    conn: &mut dyn ConnectionLike,
    events: &[(String, StreamId)],
    count: usize,
    block_ms: Option<u64>,
) -> RedisResult<Vec<(String, Vec<Entry>)>> {
    let mut cmd = redis::cmd("XREAD");
    cmd.arg("COUNT").arg(count);
    if let Some(ms) = block_ms {
        cmd.arg("BLOCK").arg(ms);
    }
    cmd.arg("STREAMS");
    for (e, _) in events {
        cmd.arg(log_key(e));
    }
    for (_, id) in events {
        cmd.arg(id.to_string());
    }
    let reply: Value = cmd.query(conn)?;
    Ok(take_xread(reply)
        .into_iter()
        .filter_map(|(key, v)| {
            let event = event_of_key(&key, Part::Log)?.to_owned();
            let entries = take_entries(&event, v);
            Some((event, entries))
        })
        .collect())
}

/// All event ids with a `ticket:{E}:<suffix>` key of `type_` (one SCAN).
pub fn scan_events(
    conn: &mut dyn ConnectionLike,
    part: Part,
    type_: &str,
) -> RedisResult<Vec<String>> {
    let pattern = keys::key("*", part);
    let mut cursor: u64 = 0;
    let mut out = Vec::new();
    loop {
        let (next, keys): (u64, Vec<String>) = redis::cmd("SCAN")
            .arg(cursor)
            .arg("MATCH")
            .arg(&pattern)
            .arg("TYPE")
            .arg(type_)
            .arg("COUNT")
            .arg(1000)
            .query(conn)?;
        out.extend(
            keys.iter()
                .filter_map(|k| event_of_key(k, part))
                .map(str::to_owned),
        );
        if next == 0 {
            break;
        }
        cursor = next;
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// `XTRIM ticket:{E}:log MINID = <next id after offset>`: drops the applied
/// entries (and only those). Returns the number of entries removed.
pub fn trim(conn: &mut dyn ConnectionLike, event: &str, offset: StreamId) -> RedisResult<u64> {
    let Some(minid) = offset.next() else {
        return Ok(0);
    };
    redis::cmd("XTRIM")
        .arg(log_key(event))
        .arg("MINID")
        .arg("=")
        .arg(minid.to_string())
        .query(conn)
}

/// Entries left in each log and the age in ms of its oldest entry (0 if
/// empty), for many events in one pipelined round trip.
/// In cluster mode the keys live on different nodes, so the commands are
/// sent one by one (routed by key) instead of pipelined.
pub fn lag_all(
    conn: &mut dyn ConnectionLike,
    events: &[String],
    now_ms: u64,
    pipelined: bool,
) -> RedisResult<Vec<(u64, u64)>> {
    let mut replies: Vec<Value> = Vec::with_capacity(events.len() * 2);
    let mut p = redis::pipe();
    for e in events {
        let key = log_key(e);
        let mut xlen = redis::cmd("XLEN");
        xlen.arg(&key);
        let mut first = redis::cmd("XRANGE");
        first.arg(&key).arg("-").arg("+").arg("COUNT").arg(1);
        if pipelined {
            p.add_command(xlen).add_command(first);
        } else {
            replies.push(xlen.query(conn)?);
            replies.push(first.query(conn)?);
        }
    }
    if pipelined {
        replies = p.query(conn)?;
    }
    Ok(replies
        .chunks(2)
        .map(|c| {
            let len = match c.first() {
                Some(Value::Int(n)) => (*n).max(0) as u64,
                _ => 0,
            };
            let oldest = c.get(1).and_then(first_id);
            let age = if len == 0 {
                0
            } else {
                oldest.map(|id| now_ms.saturating_sub(id.ms)).unwrap_or(0)
            };
            (len, age)
        })
        .collect())
}

/// [`lag_all`] for one event.
pub fn lag(conn: &mut dyn ConnectionLike, event: &str, now_ms: u64) -> RedisResult<(u64, u64)> {
    Ok(lag_all(conn, &[event.to_owned()], now_ms, false)?
        .first()
        .copied()
        .unwrap_or((0, 0)))
}

/// The meta hash of an event as `TICKET.STATUS` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Meta {
    /// `open`, `closed` or `restoring`.
    pub status: String,
    /// 16 hex digits; None for an event created before 0.3.
    pub incarnation: Option<String>,
    /// Users on the waiting list.
    pub waiting: i64,
    /// Tickets claimed (held or sold).
    pub claimed: i64,
}

/// The fields of `TICKET.STATUS event` (nil values left out); `None`
/// when the event has no meta (`-NOEVENT`).
fn status_fields(
    conn: &mut dyn ConnectionLike,
    event: &str,
) -> RedisResult<Option<HashMap<String, String>>> {
    Ok(status_value(conn, event)?.map(|status| fields_of(&status)))
}

/// The raw `TICKET.STATUS` reply of `event`; `None` on `-NOEVENT`.
fn status_value(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<Value>> {
    match redis::cmd("TICKET.STATUS").arg(event).query(conn) {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.code() == Some("NOEVENT") => Ok(None),
        Err(e) => Err(e),
    }
}

/// The text fields of a `TICKET.STATUS` reply.
fn fields_of(status: &Value) -> HashMap<String, String> {
    pairs(status)
        .iter()
        .filter_map(|(k, v)| Some((text(k)?, text(v)?)))
        .collect()
}

/// A seated event's `categories` (name, free seats) from its
/// `TICKET.STATUS` reply, sorted by name; `None` for an unseated event.
fn categories_of(status: &Value) -> Option<Vec<(String, i64)>> {
    let (_, v) = pairs(status)
        .into_iter()
        .find(|(k, _)| text(k).as_deref() == Some("categories"))?;
    let mut out: Vec<(String, i64)> = pairs(&v)
        .iter()
        .filter_map(|(k, n)| Some((text(k)?, text(n)?.parse().ok()?)))
        .collect();
    out.sort();
    Some(out)
}

/// `TICKET.STATUS` of `event`; `None` when it has no meta (`-NOEVENT`).
pub fn read_meta(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<Meta>> {
    let Some(fields) = status_fields(conn, event)? else {
        return Ok(None);
    };
    let num = |name: &str| fields.get(name).and_then(|v| v.parse::<i64>().ok());
    Ok(Some(Meta {
        status: fields.get("status").cloned().unwrap_or_default(),
        incarnation: fields.get("incarnation").cloned(),
        waiting: num("waiting").unwrap_or(0),
        claimed: num("claimed").unwrap_or(0),
    }))
}

/// `XINFO STREAM` of `event`'s log: last generated id, entries added,
/// length; `None` when the log does not exist.
pub fn stream_info(
    conn: &mut dyn ConnectionLike,
    event: &str,
) -> RedisResult<Option<(StreamId, u64, u64)>> {
    let info: Value = match redis::cmd("XINFO")
        .arg("STREAM")
        .arg(log_key(event))
        .query(conn)
    {
        Ok(v) => v,
        Err(e) if e.to_string().contains("no such key") => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut last = None;
    let (mut added, mut length) = (None, None);
    for (k, v) in pairs(&info) {
        let n = || match &v {
            Value::Int(n) => Some((*n).max(0) as u64),
            other => text(other).and_then(|t| t.parse().ok()),
        };
        match text(&k).as_deref() {
            Some("last-generated-id") => last = text(&v).and_then(|t| StreamId::parse(&t)),
            Some("entries-added") => added = n(),
            Some("length") => length = n(),
            _ => {}
        }
    }
    match (last, added, length) {
        (Some(l), Some(a), Some(n)) => Ok(Some((l, a, n))),
        _ => Err(redis::RedisError::from((
            redis::ErrorKind::UnexpectedReturnType,
            "XINFO STREAM without last-generated-id / entries-added / length (Redis 7 needed)",
        ))),
    }
}

/// `XRANGE` of `event`'s log after `after` (exclusive), at most `count`.
fn range_after(
    conn: &mut dyn ConnectionLike,
    event: &str,
    after: StreamId,
    count: usize,
) -> RedisResult<Value> {
    redis::cmd("XRANGE")
        .arg(log_key(event))
        .arg(format!("({after}"))
        .arg("+")
        .arg("COUNT")
        .arg(count)
        .query(conn)
}

/// Entries of `event`'s log after `after` (exclusive), at most `count`.
pub fn entries_after(
    conn: &mut dyn ConnectionLike,
    event: &str,
    after: StreamId,
    count: usize,
) -> RedisResult<Vec<Entry>> {
    Ok(parse_entries(
        event,
        &range_after(conn, event, after, count)?,
    ))
}

/// The id of the first entry of `event`'s log after `after`, if any
/// (the entry itself is not decoded).
pub fn first_after(
    conn: &mut dyn ConnectionLike,
    event: &str,
    after: StreamId,
) -> RedisResult<Option<StreamId>> {
    Ok(first_id(&range_after(conn, event, after, 1)?))
}

/// The id of the first entry of an `XRANGE` reply.
fn first_id(v: &Value) -> Option<StreamId> {
    let Value::Array(items) = v else { return None };
    match items.first()? {
        Value::Array(p) => p.first().and_then(text).and_then(|t| StreamId::parse(&t)),
        _ => None,
    }
}

/// The server's clock (`TIME`), in unix ms: stream ids are stamped by it.
pub fn time_ms(conn: &mut dyn ConnectionLike) -> RedisResult<u64> {
    let (secs, micros): (u64, u64) = redis::cmd("TIME").query(conn)?;
    Ok(secs.saturating_mul(1000).saturating_add(micros / 1000))
}

/// How many entries of `event`'s log are at or below `offset` (at most
/// `cap`: reconcile's count of applied entries not yet trimmed).
pub fn count_upto(
    conn: &mut dyn ConnectionLike,
    event: &str,
    offset: StreamId,
    cap: usize,
) -> RedisResult<u64> {
    let v: Value = redis::cmd("XRANGE")
        .arg(log_key(event))
        .arg("-")
        .arg(offset.to_string())
        .arg("COUNT")
        .arg(cap)
        .query(conn)?;
    Ok(match v {
        Value::Array(items) => items.len() as u64,
        _ => 0,
    })
}

/// What reconcile needs from Redis about one event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RedisEvent {
    /// Users with tickets, sold or held (see [`redis_users`]).
    pub users: HashMap<String, Live>,
    /// Tickets remaining.
    pub remaining: i64,
    /// Tickets in live holds, when `TICKET.STATUS` reports `held`.
    pub held: Option<i64>,
    /// Entries in the log (not yet applied and trimmed).
    pub unsynced: i64,
    /// A seated event's free seats by category (sorted by name).
    pub categories: Option<Vec<(String, i64)>>,
}

/// The zset of `event`'s live holds (member user, score deadline ms), as
/// the module half is expected to keep it.
fn holds_key(event: &str) -> String {
    format!("ticket:{{{event}}}:holds")
}

/// Reads `TICKET.STATUS`, the holders hash and the holds zset of `event`;
/// `None` if it does not exist (`-NOEVENT`).
pub fn read_event(conn: &mut dyn ConnectionLike, event: &str) -> RedisResult<Option<RedisEvent>> {
    let Some(status) = status_value(conn, event)? else {
        return Ok(None);
    };
    let fields = fields_of(&status);
    let num = |name: &str| fields.get(name).and_then(|v| v.parse::<i64>().ok());
    let (Some(remaining), Some(unsynced)) = (num("remaining"), num("unsynced")) else {
        return Ok(None);
    };
    let holders: HashMap<String, String> = redis::cmd("HGETALL")
        .arg(keys::key(event, Part::Holders))
        .query(conn)?;
    let holds: Vec<(String, f64)> = redis::cmd("ZRANGE")
        .arg(holds_key(event))
        .arg(0)
        .arg(-1)
        .arg("WITHSCORES")
        .query(conn)?;
    let holds = holds.into_iter().map(|(u, s)| (u, s as i64)).collect();
    Ok(Some(RedisEvent {
        users: redis_users(holders, &holds),
        remaining,
        held: num("held"),
        unsynced,
        categories: categories_of(&status),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bs(s: &str) -> Value {
        Value::BulkString(s.as_bytes().to_vec())
    }

    #[test]
    fn status_categories_of_a_seated_event() {
        let status = Value::Array(vec![
            bs("remaining"),
            Value::Int(5),
            bs("categories"),
            Value::Array(vec![bs("front"), Value::Int(2), bs("box"), Value::Int(3)]),
        ]);
        assert_eq!(
            categories_of(&status),
            Some(vec![("box".into(), 3), ("front".into(), 2)])
        );
        assert_eq!(
            fields_of(&status).get("remaining").map(String::as_str),
            Some("5")
        );
        assert_eq!(
            categories_of(&Value::Array(vec![bs("remaining"), Value::Int(5)])),
            None
        );
    }

    #[test]
    fn cluster_helpers() {
        // reference values: the CRC16 check value and CLUSTER KEYSLOT
        assert_eq!(crc16_xmodem(b"123456789"), 0x31C3);
        assert_eq!(key_slot("foo"), 12182);
        let nodes = "\
07c3 127.0.0.1:30004@40004 slave e7d1 0 1426238317239 4 connected
67ed 127.0.0.1:30002@40002,host-b master - 0 1426238316232 2 connected 5461-10922
292f 127.0.0.1:30003@40003 master - 0 1426238318243 3 connected 10923-16383
6ec2 127.0.0.1:30005@40005 master,fail - 0 1426238316232 5 connected 1-2
824f 127.0.0.1:30006@40006 master - 0 0 6 connected
e7d1 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460";
        assert_eq!(
            parse_cluster_masters(nodes),
            ["127.0.0.1:30001", "127.0.0.1:30002", "127.0.0.1:30003"]
        );
        assert_eq!(
            node_url("redis://:pw@10.0.0.1:7000/0", "127.0.0.1:30001"),
            "redis://:pw@127.0.0.1:30001/0"
        );
        assert_eq!(node_url("redis://h:1", "n:2"), "redis://n:2");
        assert_eq!(
            node_url("rediss://u:p@h:1/?x=1", "n:2"),
            "rediss://u:p@n:2/?x=1"
        );
    }

    #[test]
    fn cluster_seeds_include_every_known_node() {
        let nodes = "\
07c3 10.0.0.4:30004@40004 slave e7d1 0 1426238317239 4 connected
67ed 10.0.0.2:30002@40002,host-b master - 0 1426238316232 2 connected 5461-10922
6ec2 10.0.0.5:30005@40005 master,fail - 0 1426238316232 5 connected
1a2b :0@0 master,noaddr - 0 0 0 disconnected
e7d1 10.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460";
        assert_eq!(
            parse_cluster_addrs(nodes),
            ["10.0.0.1:30001", "10.0.0.2:30002", "10.0.0.4:30004"]
        );
        remember_cluster_nodes(nodes);
        let seeds = cluster_seeds("redis://:pw@10.0.0.1:30001/");
        assert_eq!(seeds[0], "redis://:pw@10.0.0.1:30001/");
        for n in ["10.0.0.2:30002", "10.0.0.4:30004"] {
            assert!(seeds.contains(&format!("redis://:pw@{n}/")), "{seeds:?}");
        }
        assert_eq!(
            seeds
                .iter()
                .filter(|s| s.contains("10.0.0.1:30001"))
                .count(),
            1,
            "{seeds:?}"
        );
        assert!(!seeds.iter().any(|s| s.contains("30005")), "{seeds:?}");
    }

    #[test]
    fn parses_resp2_xread() {
        let reply = Value::Array(vec![Value::Array(vec![
            bs("ticket:{e1}:log"),
            Value::Array(vec![
                Value::Array(vec![
                    bs("5-1"),
                    Value::Array(vec![
                        bs("op"),
                        bs("open"),
                        bs("event"),
                        bs("e1"),
                        bs("at"),
                        bs("5"),
                    ]),
                ]),
                Value::Array(vec![bs("6-0"), Value::Array(vec![bs("op"), bs("bogus")])]),
                Value::Array(vec![bs("not-an-id"), Value::Array(vec![])]),
            ]),
        ])]);
        let streams = take_xread(reply);
        assert_eq!(streams.len(), 1);
        let entries = parse_entries("e1", &streams[0].1);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].id, StreamId::new(5, 1));
        assert!(entries[0].rec.is_ok());
        assert!(entries[1].rec.is_err());
        assert!(take_xread(Value::Nil).is_empty());
    }

    fn arb_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Nil),
            any::<i64>().prop_map(Value::Int),
            "[a-z0-9{}:-]{0,12}".prop_map(|s| Value::BulkString(s.into_bytes())),
            Just(Value::BulkString(b"ticket:{e1}:log".to_vec())),
            Just(Value::BulkString(b"1-1".to_vec())),
            Just(Value::Okay),
        ];
        leaf.prop_recursive(4, 64, 6, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                proptest::collection::vec((inner.clone(), inner), 0..4).prop_map(Value::Map),
            ]
        })
    }

    proptest::proptest! {
        /// Whatever a server (or a proxy) answers, parsing never panics.
        #[test]
        fn xread_parsing_never_panics(v in arb_value()) {
            for (key, streams) in take_xread(v.clone()) {
                let _ = event_of_key(&key, Part::Log);
                let _ = take_entries("e1", streams);
            }
            let _ = parse_entries("e1", &v);
        }
    }

    #[test]
    fn parses_resp3_map() {
        let reply = Value::Map(vec![(
            bs("ticket:{e2}:log"),
            Value::Array(vec![Value::Array(vec![
                bs("7-0"),
                Value::Map(vec![
                    (bs("op"), bs("close")),
                    (bs("event"), bs("e2")),
                    (bs("at"), bs("7")),
                ]),
            ])]),
        )]);
        let streams = take_xread(reply);
        let entries = parse_entries("e2", &streams[0].1);
        assert_eq!(entries.len(), 1);
        assert!(entries[0].rec.is_ok());
    }
}

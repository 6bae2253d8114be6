//! MySQL: connecting (UTC session, found-rows, timeouts, TLS from the
//! `conn` crate, the server's `max_allowed_packet` noted), migrating, and
//! the queries shared by the layers above — writing a conflict or a
//! quarantine, and the reads of offsets, events, stock and live tickets.
//! Record-level server errors (duplicate key, value out of range, a packet
//! too large, ...) are told apart here ([`is_record_level`]): they mean
//! "this data is wrong", everything else is retried. Writing a batch
//! lives in `batch`.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use mysql::consts::CapabilityFlags;
use mysql::prelude::Queryable;
use mysql::{Conn, Opts, OptsBuilder, Transaction};
use mysql_common::proto::codec::error::PacketCodecError;

use crate::model::entry::MIN_PACKET;
use crate::model::live::mysql_users;
use crate::model::{Conflict, Evidence, Live};
use protocol::StreamId;

mod embedded {
    refinery::embed_migrations!("../migrations");
}

/// Server error codes that describe the data of one record rather than the
/// health of the server: these become conflicts, everything else is retried.
const RECORD_LEVEL_CODES: &[u16] = &[
    1048, // column cannot be null
    1062, // duplicate entry
    1153, // a packet larger than max_allowed_packet
    1264, // out of range
    1265, // data truncated
    1292, // incorrect datetime value
    1301, // a result larger than max_allowed_packet
    1366, // incorrect string value
    1406, // data too long
    1452, // a foreign key (added by hand) refuses the row
    3819, // MySQL: check constraint violated
    4025, // MariaDB: check constraint violated
];

/// True when `e` is an error about one record's data: a server error of
/// [`RECORD_LEVEL_CODES`], or a statement the client refused to send
/// because it is larger than the session's `max_allowed_packet`.
pub fn is_record_level(e: &mysql::Error) -> bool {
    match e {
        mysql::Error::MySqlError(me) => RECORD_LEVEL_CODES.contains(&me.code),
        mysql::Error::CodecError(PacketCodecError::PacketTooLarge) => true,
        _ => false,
    }
}

/// True when `e` is a lock wait that ran out (`innodb_lock_wait_timeout`).
pub fn is_lock_wait(e: &mysql::Error) -> bool {
    matches!(e, mysql::Error::MySqlError(me) if me.code == 1205)
}

/// How long a writer or the verifier waits for a row lock (the default is
/// 50 s): a thread that serves many events must not sit that long on one
/// whose offset row another session holds; the batch is retried later.
pub const LOCK_WAIT_SECS: u32 = 2;

/// `max_allowed_packet` of the last session opened (0 before the first).
static PACKET: AtomicU64 = AtomicU64::new(0);

/// The server's `max_allowed_packet`, as the last connection read it (0:
/// not known yet).
pub fn packet_limit() -> u64 {
    PACKET.load(Ordering::Relaxed)
}

/// Opens a connection: UTC session, found-rows semantics for UPDATE (a
/// no-op `remaining_stock - 0` still counts as matched), bounded timeouts,
/// TLS when `--mysql-ca` is given (see `conn::mysql`); notes the server's
/// `max_allowed_packet` ([`packet_limit`]).
pub fn connect(url: &str) -> Result<Conn, mysql::Error> {
    open(url, Vec::new())
}

/// [`connect`], for a thread that takes offset locks beside the drain (a
/// writer, the verifier): lock waits end after [`LOCK_WAIT_SECS`].
pub fn connect_locking(url: &str) -> Result<Conn, mysql::Error> {
    open(
        url,
        vec![format!(
            "SET SESSION innodb_lock_wait_timeout = {LOCK_WAIT_SECS}"
        )],
    )
}

fn open(url: &str, mut init: Vec<String>) -> Result<Conn, mysql::Error> {
    let url_opts = Opts::from_url(url)?;
    init.insert(0, "SET time_zone = '+00:00'".into());
    let opts = conn::installed()
        .mysql
        .opts(OptsBuilder::from_opts(url_opts.clone()), &url_opts)
        .additional_capabilities(CapabilityFlags::CLIENT_FOUND_ROWS)
        .tcp_connect_timeout(Some(Duration::from_secs(5)))
        .read_timeout(Some(Duration::from_secs(30)))
        .write_timeout(Some(Duration::from_secs(30)))
        .init(init);
    let mut c = Conn::new(opts)?;
    note_packet(c.query_first("SELECT @@max_allowed_packet")?.unwrap_or(0));
    Ok(c)
}

/// Remembers the server's `max_allowed_packet`; a change is logged, and a
/// warning given below [`MIN_PACKET`].
fn note_packet(packet: u64) {
    if PACKET.swap(packet, Ordering::Relaxed) == packet {
        return;
    }
    if packet < MIN_PACKET {
        log::warn!("MySQL's max_allowed_packet is {packet} bytes, below the {MIN_PACKET} the sidecar needs: raise it (docs/operations.md)");
    } else {
        log::info!("MySQL's max_allowed_packet is {packet} bytes");
    }
}

/// Applies the embedded `migrations/` (idempotent); returns applied names.
pub fn migrate(conn: &mut Conn) -> Result<Vec<String>, String> {
    let report = embedded::migrations::runner()
        .run(conn)
        .map_err(|e| e.to_string())?;
    Ok(report
        .applied_migrations()
        .iter()
        .map(|m| m.to_string())
        .collect())
}

/// Writes conflict `c` unless the same entry already has one with its
/// reason; true when written.
pub fn record_conflict_once(
    tx: &mut Transaction<'_>,
    event: &str,
    c: &Conflict,
) -> Result<bool, mysql::Error> {
    insert_conflict(tx, event, c, true)
}

/// Writes conflict `c`'s row, bounded by [`Conflict::row`] so no value
/// can make it fail; with `once`, only when the entry has no conflict of
/// that reason yet. True when written.
pub fn insert_conflict(
    tx: &mut Transaction<'_>,
    event: &str,
    c: &Conflict,
    once: bool,
) -> Result<bool, mysql::Error> {
    let r = c.row(event);
    let unless = match once {
        true => " WHERE NOT EXISTS (SELECT 1 FROM ticket_conflict WHERE event_id = ? AND stream_id = ? AND reason = ?)",
        false => "",
    };
    let mut params: Vec<mysql::Value> = vec![
        r.event.as_str().into(),
        r.stream_id.as_str().into(),
        r.user.into(),
        r.ticket.into(),
        r.reason.as_str().into(),
        r.detail.into(),
        r.sha256.into(),
    ];
    if once {
        params.extend([r.event.into(), r.stream_id.into(), r.reason.into()]);
    }
    tx.exec_drop(
        format!(
            "INSERT INTO ticket_conflict (event_id, stream_id, user_id, ticket_number, reason, detail, entry_sha256, created_at) \
             SELECT ?, ?, ?, ?, ?, ?, ?, NOW(3) FROM DUAL{unless}"
        ),
        params,
    )?;
    Ok(tx.affected_rows() > 0)
}

/// Marks `event` quarantined with `ev` (a quarantine already there stays,
/// with its first evidence).
pub fn quarantine(tx: &mut impl Queryable, event: &str, ev: &Evidence) -> Result<(), mysql::Error> {
    tx.exec_drop(
        "UPDATE ticket_event SET quarantined_at = NOW(3), quarantine_reason = ? WHERE event_id = ? AND quarantined_at IS NULL",
        (ev.stored(), event),
    )
}

/// Every event's committed offset (rows that do not parse are left out).
pub fn offsets(conn: &mut Conn) -> Result<HashMap<String, StreamId>, mysql::Error> {
    let rows: Vec<(String, String)> =
        conn.query("SELECT event_id, last_stream_id FROM ticket_sync_offset")?;
    Ok(rows
        .into_iter()
        .filter_map(|(e, id)| StreamId::parse(&id).map(|id| (e, id)))
        .collect())
}

/// Live (held or sold) tickets of `event`, by user.
pub fn live_users(
    conn: &mut impl Queryable,
    event: &str,
) -> Result<HashMap<String, Live>, mysql::Error> {
    let rows: Vec<(String, i64, String, Option<i64>)> = conn.exec(
        "SELECT user_id, ticket_number, CAST(status AS CHAR), CAST(ROUND(UNIX_TIMESTAMP(held_until) * 1000) AS SIGNED) \
         FROM ticket_participation WHERE event_id = ? AND live_ticket IS NOT NULL ORDER BY ticket_number",
        (event,),
    )?;
    Ok(mysql_users(rows))
}

/// The listed tickets buyers hold (migrations/V11): (buyer, ticket,
/// deadline in unix ms). Redis counts each in its buyer's held order;
/// MySQL keeps it on the listing row, not as a participation row.
pub fn listing_holds(
    conn: &mut impl Queryable,
    event: &str,
) -> Result<Vec<(String, i64, Option<i64>)>, mysql::Error> {
    conn.exec(
        "SELECT buyer, ticket_number, CAST(ROUND(UNIX_TIMESTAMP(held_until) * 1000) AS SIGNED) \
         FROM ticket_listing WHERE event_id = ? AND state = 'listed' AND buyer IS NOT NULL",
        (event,),
    )
}

/// How many live resale listings `event` has (migrations/V11).
pub fn live_listings(conn: &mut impl Queryable, event: &str) -> Result<usize, mysql::Error> {
    let n: Option<i64> = conn.exec_first(
        "SELECT COUNT(*) FROM ticket_listing WHERE event_id = ? AND state = 'listed'",
        (event,),
    )?;
    Ok(n.unwrap_or(0) as usize)
}

/// `remaining_stock` of `event`, if it has a stock row.
pub fn remaining_stock(conn: &mut Conn, event: &str) -> Result<Option<i64>, mysql::Error> {
    conn.exec_first(
        "SELECT remaining_stock FROM ticket_stock WHERE event_id = ?",
        (event,),
    )
}

/// All event ids known to MySQL.
pub fn events(conn: &mut Conn) -> Result<HashSet<String>, mysql::Error> {
    let rows: Vec<String> = conn.query("SELECT event_id FROM ticket_event")?;
    Ok(rows.into_iter().collect())
}

/// A seated event's category stocks (name, remaining), sorted by name;
/// empty for an unseated event.
pub fn category_stocks(conn: &mut Conn, event: &str) -> Result<Vec<(String, i64)>, mysql::Error> {
    conn.exec(
        "SELECT category, remaining FROM ticket_seat_stock WHERE event_id = ? ORDER BY category",
        (event,),
    )
}

/// An event's live allocations (name, free tickets, release time in unix
/// ms), sorted by name (migrations/V8).
pub fn live_allocations(
    conn: &mut impl Queryable,
    event: &str,
) -> Result<Vec<(String, i64, Option<i64>)>, mysql::Error> {
    conn.exec(
        "SELECT name, remaining_stock, release_at FROM ticket_allocation WHERE event_id = ? AND released_at IS NULL ORDER BY name",
        (event,),
    )
}

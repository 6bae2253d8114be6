//! The evidence of what MySQL wrote, on both sides (I/O), kept by the
//! drain itself: the writer journals each batch and checks the anchor, the
//! trimmer names the anchor before it trims. The heal (`loss::heal`) reads
//! it back; it lives here, below the heal, so the drain never imports it.
//!
//! * MySQL: `ticket_journal` holds the written entries of each event (ids
//!   and canonical content), one row per batch of up to [`PER_ROW`] entries,
//!   in a ring of [`SLOTS`] rows (the daemon's MySQL user may not DELETE;
//!   a row also closes at [`ROW_BYTES`], a statement at [`STATEMENT_BYTES`],
//!   so both fit any `max_allowed_packet` of 1 MiB or more),
//!   and `ticket_sync_offset.anchor` the digest of the entry at the
//!   offset; both are written in the batch's own transaction: the rows
//!   ([`rows`], pure) in one multi-row upsert ([`write_rows`]), the
//!   anchor and the next `journal_seq` in the writer's UPDATE of the
//!   offset (it read `journal_seq` with the offset's lock); [`record`]
//!   does the same on its own for the heal. Rows of up to 500 entries,
//!   not one per entry, so the drain pays little for it.
//! * Redis: `ticket:{E}:synced` holds `<id> <digest>` of the last written
//!   entry. [`trim`] sets it **before** `XTRIM MINID next(id)`, on one
//!   connection: a replica (and so a promoted replica) always has an
//!   anchor at or below every entry it lacks, and every entry after it.
//!   Without a digest (an offset from before V4) the anchor is cleared
//!   instead (set to `none`): no evidence is better than stale evidence.
//! * [`anchored`]: the writer's check, under the offset lock, that a batch
//!   read from before the offset carries the offset's entry with the
//!   anchor's content (a batch read from a primary that has since been
//!   replaced does not).

use std::collections::{HashMap, VecDeque};
use std::fmt::Write;
use std::sync::{Mutex, PoisonError};

use mysql::prelude::Queryable;
use mysql::Transaction;
use redis::ConnectionLike;

use crate::io::redis::{stream, trim::trim as xtrim};
use crate::model::entry;
use crate::model::Entry;
use protocol::StreamId;

/// Journal rows (batches) per event: a promoted replica's anchor must be
/// among them (it lags MySQL's offset by its replication lag).
pub const SLOTS: i64 = 4096;

/// Most entries in one journal row.
pub const PER_ROW: usize = 500;

/// A journal row takes no more entries once its content reaches this
/// (a sale's 500 entries are about 50 KB; a seated init's stand-in 150 B).
pub const ROW_BYTES: usize = 256 << 10;

/// Separates entries in a journal row, and an entry's id from its text.
pub const ENTRY_SEP: char = '\u{1e}';
pub const ID_SEP: char = '\u{1d}';

/// Digests of the entries the writers wrote last, per event, for the
/// trimmer (which only learns committed offsets): a few per event.
static RECENT: Mutex<Option<Recent>> = Mutex::new(None);

/// Per event: (entry id, digest), oldest first.
type Recent = HashMap<String, VecDeque<(StreamId, String)>>;

/// How many digests [`RECENT`] keeps per event.
const RECENT_PER_EVENT: usize = 64;

fn remember(event: &str, id: StreamId, digest: &str) {
    if let Ok(mut guard) = RECENT.lock() {
        let q = guard
            .get_or_insert_with(HashMap::new)
            .entry(event.to_owned())
            .or_default();
        q.retain(|(i, _)| *i != id);
        q.push_back((id, digest.to_owned()));
        if q.len() > RECENT_PER_EVENT {
            q.pop_front();
        }
    }
}

/// The digest a writer stored for `event`'s entry `id`, if it is recent.
pub fn digest_of(event: &str, id: StreamId) -> Option<String> {
    let guard = RECENT.lock().ok()?;
    let q = guard.as_ref()?.get(event)?;
    q.iter()
        .rev()
        .find(|(i, _)| *i == id)
        .map(|(_, d)| d.clone())
}

/// The Redis key of `event`'s anchor.
pub fn anchor_key(event: &str) -> String {
    format!("ticket:{{{event}}}:synced")
}

/// The journal rows of a batch, before they are written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Journal {
    /// (seq, the row's last entry, content), one per [`PER_ROW`] entries.
    pub rows: Vec<(i64, StreamId, String)>,
    /// The digest of the last entry's content (None: no entries).
    pub anchor: Option<String>,
    /// The last entry's id.
    pub last: Option<StreamId>,
    /// `journal_seq` after these rows.
    pub next_seq: i64,
}

impl Journal {
    /// Hands the anchor to the trimmer (after the rows are written).
    pub fn remember(&self, event: &str) {
        if let (Some(id), Some(anchor)) = (self.last, &self.anchor) {
            remember(event, id, anchor);
        }
    }
}

/// The journal rows of `written` (ascending, just written) from row
/// `seq` on, and the anchor: pure, so the writer sends them in one
/// statement (see [`write_rows`]). A row closes at [`PER_ROW`] entries or
/// once its content reaches [`ROW_BYTES`], so a row (each text bounded by
/// `entry::MAX_TEXT_BYTES`) always fits a statement.
pub fn rows(event: &str, written: &[Entry], seq: i64) -> Journal {
    let mut out = Journal {
        rows: Vec::with_capacity(written.len().div_ceil(PER_ROW)),
        anchor: None,
        last: written.last().map(|e| e.id),
        next_seq: seq,
    };
    let mut content = String::new();
    let mut count = 0;
    for (i, e) in written.iter().enumerate() {
        if count > 0 {
            content.push(ENTRY_SEP);
        }
        // Writing into a String cannot fail.
        let _ = write!(content, "{}{ID_SEP}", e.id);
        let from = content.len();
        entry::write_text(&mut content, event, e);
        count += 1;
        let last = i + 1 == written.len();
        if last {
            out.anchor = Some(entry::digest(&content[from..]));
        }
        if last || count == PER_ROW || content.len() >= ROW_BYTES {
            out.rows
                .push((out.next_seq, e.id, std::mem::take(&mut content)));
            out.next_seq += 1;
            count = 0;
        }
    }
    out
}

/// Journals `written` (ascending, just written) and stores the digest of
/// the last as the offset's anchor (the heal's path; the writer's reads
/// `journal_seq` with the offset's lock and sets it with the offset).
pub fn record(tx: &mut Transaction<'_>, event: &str, written: &[Entry]) -> mysql::Result<()> {
    if written.is_empty() {
        return Ok(());
    }
    let next: Option<i64> = tx.exec_first(
        "SELECT journal_seq FROM ticket_sync_offset WHERE event_id = ?",
        (event,),
    )?;
    let journal = rows(event, written, next.unwrap_or(0));
    write_rows(tx, event, &journal.rows)?;
    tx.exec_drop(
        "UPDATE ticket_sync_offset SET anchor = ?, journal_seq = ? WHERE event_id = ?",
        (&journal.anchor, journal.next_seq, event),
    )?;
    journal.remember(event);
    Ok(())
}

/// Most journal rows in one statement (16 x 500 entries of a sale: about
/// 800 KB).
const ROWS_PER_STATEMENT: usize = 16;

/// A statement takes no more rows once their content reaches this: with a
/// row of at most [`ROW_BYTES`] plus one text, a statement stays under
/// `model::entry::MIN_PACKET`.
pub const STATEMENT_BYTES: usize = 512 << 10;

/// Writes journal rows (seq, last entry, content) of `event`, each in its
/// slot of the ring: one statement for up to [`ROWS_PER_STATEMENT`] rows
/// or [`STATEMENT_BYTES`] of content.
pub fn write_rows(
    tx: &mut impl Queryable,
    event: &str,
    rows: &[(i64, StreamId, String)],
) -> mysql::Result<()> {
    for chunk in statements(rows) {
        let mut params: Vec<mysql::Value> = Vec::with_capacity(chunk.len() * 5);
        for (seq, last, content) in chunk {
            params.extend([
                event.into(),
                (seq % SLOTS).into(),
                (*seq).into(),
                last.to_string().into(),
                content.as_str().into(),
            ]);
        }
        let values = vec!["(?, ?, ?, ?, ?)"; chunk.len()].join(", ");
        tx.exec_drop(
            format!(
                "INSERT INTO ticket_journal (event_id, slot, seq, stream_id, content) VALUES {values} \
                 ON DUPLICATE KEY UPDATE seq = VALUES(seq), stream_id = VALUES(stream_id), content = VALUES(content)"
            ),
            params,
        )?;
    }
    Ok(())
}

/// `rows` cut into the groups [`write_rows`] sends as one statement each.
fn statements(rows: &[(i64, StreamId, String)]) -> Vec<&[(i64, StreamId, String)]> {
    let mut out = Vec::new();
    let (mut start, mut bytes) = (0, 0);
    for (i, (_, _, content)) in rows.iter().enumerate() {
        if i > start && (i - start == ROWS_PER_STATEMENT || bytes >= STATEMENT_BYTES) {
            out.push(&rows[start..i]);
            (start, bytes) = (i, 0);
        }
        bytes += content.len();
    }
    if start < rows.len() {
        out.push(&rows[start..]);
    }
    out
}

/// Writes journal row `seq` (its slot in the ring) of `event`.
pub fn write_row(
    tx: &mut impl Queryable,
    event: &str,
    seq: i64,
    last: StreamId,
    content: &str,
) -> mysql::Result<()> {
    write_rows(tx, event, &[(seq, last, content.to_owned())])
}

/// The stored anchor (digest of the entry at the offset), if known.
pub fn stored_anchor(tx: &mut impl Queryable, event: &str) -> mysql::Result<Option<String>> {
    let row: Option<Option<String>> = tx.exec_first(
        "SELECT anchor FROM ticket_sync_offset WHERE event_id = ?",
        (event,),
    )?;
    Ok(row.flatten())
}

/// The writer's check: a batch read from before `offset` must carry the
/// offset's entry with the anchor's content. Err(why) when it does not.
pub fn anchored(
    tx: &mut impl Queryable,
    event: &str,
    after: StreamId,
    offset: StreamId,
    entries: &[Entry],
) -> mysql::Result<Result<(), String>> {
    if after >= offset {
        return Ok(Ok(()));
    }
    let Some(anchor) = stored_anchor(tx, event)? else {
        return Ok(Ok(()));
    };
    let found = entries.iter().find(|e| e.id == offset);
    Ok(match found {
        Some(e) if entry::has_digest(event, e, &anchor) => Ok(()),
        Some(_) => Err(format!(
            "the entry at the offset {offset} has other content than MySQL applied"
        )),
        None => Err(format!(
            "the batch read after {after} lacks the offset's entry {offset}"
        )),
    })
}

/// Serialises [`trim`] within the process.
static TRIMS: Mutex<()> = Mutex::new(());

/// `SET ticket:{E}:synced "<offset> <digest>"`, then `XTRIM
/// ticket:{E}:log MINID = next(offset)`; the entries removed. Only when
/// Redis holds the offset's entry with that content: a trim queued before
/// a failover must neither name a lost entry as the anchor nor delete
/// entries of the new primary that MySQL never wrote (the heal needs
/// them). Nor when Redis names a later anchor already (a newer trim ran
/// first). Without a digest (an offset from before V4) the anchor is
/// cleared (`none`) and the log trimmed as before.
pub fn trim(
    conn: &mut dyn ConnectionLike,
    event: &str,
    offset: StreamId,
    digest: Option<&str>,
) -> redis::RedisResult<u64> {
    let Some(d) = digest else {
        // "none" never parses as an anchor (no DEL: the ACL grants only SET).
        redis::cmd("SET")
            .arg(anchor_key(event))
            .arg("none")
            .query::<()>(conn)?;
        return xtrim(conn, event, offset);
    };
    // One trim at a time in this process, and never back: the verifier
    // (under the offset lock, at MySQL's offset) and the trimmer thread
    // (at an offset committed before) both trim. Interleaved, the older
    // trim's SET landed after the newer XTRIM: Redis then named an anchor
    // below entries already trimmed, and the next check took those
    // entries for writes a failover lost and undid them.
    let _one = TRIMS.lock().unwrap_or_else(PoisonError::into_inner);
    if !moves_forward(redis_anchor(conn, event)?, offset) {
        return Ok(0);
    }
    let at = offset.to_string();
    let held = stream::range(conn, event, (&at, &at), None)?
        .first()
        .is_some_and(|e| e.id == offset && entry::has_digest(event, e, d));
    if !held {
        // Trimmed at this offset already (the anchor says so), or the
        // entry is not there: leave the log to the verifier.
        if redis_anchor(conn, event)?.is_none_or(|a| a != (offset, d.to_owned())) {
            log::debug!("event {event}: not trimming at {offset}: Redis does not hold that entry");
        }
        return Ok(0);
    }
    redis::cmd("SET")
        .arg(anchor_key(event))
        .arg(format!("{offset} {d}"))
        .query::<()>(conn)?;
    xtrim(conn, event, offset)
}

/// Whether a trim at `offset` may name its anchor over the one Redis
/// names (`named`): never one below it.
fn moves_forward(named: Option<(StreamId, String)>, offset: StreamId) -> bool {
    named.is_none_or(|(id, _)| id <= offset)
}

/// The anchor Redis has for `event`: (id, digest).
pub fn redis_anchor(
    conn: &mut dyn ConnectionLike,
    event: &str,
) -> redis::RedisResult<Option<(StreamId, String)>> {
    let v: Option<String> = redis::cmd("GET").arg(anchor_key(event)).query(conn)?;
    Ok(v.and_then(|t| {
        let (id, digest) = t.split_once(' ')?;
        Some((StreamId::parse(id)?, digest.to_owned()))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use protocol::record::{Op, Record, Tickets};

    #[test]
    fn a_trim_never_names_an_anchor_below_the_named_one() {
        let id = |ms| StreamId::new(ms, 0);
        let named = |ms| Some((id(ms), "d".to_owned()));
        assert!(moves_forward(None, id(5)));
        assert!(moves_forward(named(4), id(5)));
        assert!(moves_forward(named(5), id(5)));
        assert!(!moves_forward(named(6), id(5)));
    }

    fn claim(ms: u64, user: &str) -> Entry {
        Entry::new(
            StreamId::new(ms, 0),
            Ok(Record {
                op: Op::Claim {
                    from: None,
                    pick: None,
                    user: user.into(),
                    tickets: Tickets::from_sorted(vec![ms as i64]),
                },
                at: ms as i64,
            }),
        )
    }

    #[test]
    fn rows_hold_ids_and_canonical_texts_and_the_last_as_anchor() {
        let written: Vec<Entry> = (1..=PER_ROW as u64 + 2)
            .map(|ms| claim(ms, &format!("u{ms}")))
            .collect();
        let j = rows("e", &written, 7);
        assert_eq!(j.rows.len(), 2, "{PER_ROW} entries per row");
        assert_eq!((j.rows[0].0, j.rows[1].0, j.next_seq), (7, 8, 9));
        assert_eq!(j.rows[0].1, StreamId::new(PER_ROW as u64, 0));
        let last = written.last().map(|e| e.id);
        assert_eq!((j.rows[1].1, j.last), (StreamId::new(502, 0), last));
        // each entry: `<id>ID_SEP<canonical text>`, joined by ENTRY_SEP
        let want: Vec<String> = written[PER_ROW..]
            .iter()
            .map(|e| format!("{}{ID_SEP}{}", e.id, entry::text("e", e)))
            .collect();
        assert_eq!(j.rows[1].2, want.join(&ENTRY_SEP.to_string()));
        let last_text = entry::text("e", &written[PER_ROW + 1]);
        assert_eq!(j.anchor, Some(entry::digest(&last_text)));
    }

    #[test]
    fn no_entries_no_rows_and_no_anchor() {
        let j = rows("e", &[], 3);
        assert!(j.rows.is_empty());
        assert_eq!((j.anchor, j.last, j.next_seq), (None, None, 3));
    }

    #[test]
    fn rows_and_statements_stay_under_their_byte_bounds() {
        // 60 KB texts (under entry::MAX_TEXT_BYTES): a row closes at the
        // fifth, once it holds 256 KiB
        let written: Vec<Entry> = (1..=12)
            .map(|ms| Entry::test_init(ms, Some(60 << 10)))
            .collect();
        let j = rows("e", &written, 0);
        let sizes: Vec<usize> = j
            .rows
            .iter()
            .map(|r| r.2.split(ENTRY_SEP).count())
            .collect();
        assert_eq!(sizes, [5, 5, 2]);
        let most = ROW_BYTES + entry::MAX_TEXT_BYTES;
        assert!(j.rows.iter().all(|r| r.2.len() <= most));
        let groups: Vec<usize> = statements(&j.rows).iter().map(|g| g.len()).collect();
        assert_eq!(
            groups,
            [2, 1],
            "a statement closes at {STATEMENT_BYTES} bytes"
        );
        for g in statements(&j.rows) {
            let bytes: usize = g.iter().map(|r| r.2.len()).sum();
            assert!(bytes < crate::model::entry::MIN_PACKET as usize - (64 << 10));
        }
        // small rows: 16 to a statement
        let many: Vec<(i64, StreamId, String)> = (0..40)
            .map(|i| (i, StreamId::new(i as u64, 0), "x".into()))
            .collect();
        let groups: Vec<usize> = statements(&many).iter().map(|g| g.len()).collect();
        assert_eq!(groups, [16, 16, 8]);
        assert!(statements(&[]).is_empty());
    }
}

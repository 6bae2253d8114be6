//! MySQL's journal as the heal reads and cuts it (I/O): each written entry
//! with its position in the ring of rows that `batch::journal` writes (which
//! also holds the anchors and the anchored trim, re-exported here).

use mysql::prelude::Queryable;

pub use crate::batch::journal::{record, redis_anchor, stored_anchor};
use crate::batch::journal::{write_row, ENTRY_SEP, ID_SEP};
use crate::model::entry::{self, Logged};
use protocol::StreamId;

/// Where an entry is in the journal: its row's seq and its place in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pos {
    pub seq: i64,
    pub index: usize,
}

/// The rows of the journal, newest last (ring rows a heal cut off, at or
/// after `journal_seq`, left out).
const ROWS_SQL: &str = "SELECT j.seq, j.content FROM ticket_journal j JOIN ticket_sync_offset o ON o.event_id = j.event_id \
     WHERE j.event_id = ? AND j.seq < o.journal_seq";

/// The journal of `event`, oldest first, with each entry's position.
pub fn load(tx: &mut impl Queryable, event: &str) -> mysql::Result<Vec<(Pos, Logged)>> {
    let rows: Vec<(i64, String)> = tx.exec(format!("{ROWS_SQL} ORDER BY j.seq"), (event,))?;
    Ok(entries(event, rows))
}

/// The entries of the journal's last `n` rows, oldest first.
fn load_last(tx: &mut impl Queryable, event: &str, n: i64) -> mysql::Result<Vec<(Pos, Logged)>> {
    let mut rows: Vec<(i64, String)> = tx.exec(
        format!("{ROWS_SQL} ORDER BY j.seq DESC LIMIT ?"),
        (event, n),
    )?;
    rows.reverse();
    Ok(entries(event, rows))
}

/// Rows read from the journal most verifier rounds need: the new
/// primary's anchor is the offset of a recent trim.
const TAIL_ROWS: i64 = 8;

/// What the journal holds after the anchor Redis names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tail {
    /// The anchor is in the journal, with its content: the entries after it.
    After(Vec<Logged>),
    /// The journal has the anchor's id with other content.
    Other,
    /// The anchor is older than the journal's ring.
    Older,
}

/// The journal's entries after `(id, digest)`, the anchor Redis names.
/// Reads the last few rows first and the whole ring only when the anchor
/// is older.
pub fn after_anchor(
    tx: &mut impl Queryable,
    event: &str,
    (id, digest): (StreamId, &str),
) -> mysql::Result<Tail> {
    for n in [TAIL_ROWS, crate::batch::journal::SLOTS] {
        let part = load_last(tx, event, n)?;
        if let Some(at) = part.iter().rposition(|(_, l)| l.id == id) {
            if entry::digest(&part[at].1.text) != digest {
                return Ok(Tail::Other);
            }
            let rest = part[at + 1..].iter().map(|(_, l)| l.clone());
            return Ok(Tail::After(rest.collect()));
        }
    }
    Ok(Tail::Older)
}

/// The entries of journal rows `(seq, content)`, in the rows' order.
fn entries(event: &str, rows: Vec<(i64, String)>) -> Vec<(Pos, Logged)> {
    let mut out = Vec::new();
    for (seq, content) in rows {
        for (index, item) in content.split(ENTRY_SEP).enumerate() {
            let Some((id, text)) = item.split_once(ID_SEP) else {
                continue;
            };
            let Some(id) = StreamId::parse(id) else {
                continue;
            };
            // A text a release before the bound journaled in full reads
            // as the stand-in the Redis side now computes.
            let text = entry::bounded(text);
            let rec = entry::record_of(event, &text);
            out.push((Pos { seq, index }, Logged { id, text, rec }));
        }
    }
    out
}

/// Forgets the journal after `journal[d]` (the lost entries): its row is
/// cut after it, and the next rows overwrite the later ones.
pub fn forget_after(
    tx: &mut impl Queryable,
    event: &str,
    journal: &[(Pos, Logged)],
    d: usize,
) -> mysql::Result<()> {
    let (pos, last) = &journal[d];
    let kept: Vec<String> = journal[..=d]
        .iter()
        .filter(|(p, _)| p.seq == pos.seq)
        .map(|(_, l)| format!("{}{ID_SEP}{}", l.id, l.text))
        .collect();
    write_row(
        tx,
        event,
        pos.seq,
        last.id,
        &kept.join(&ENTRY_SEP.to_string()),
    )?;
    tx.exec_drop(
        "UPDATE ticket_sync_offset SET journal_seq = ? WHERE event_id = ?",
        (pos.seq + 1, event),
    )
}

//! The seat-map poller's Redis side (thin glue): one `TICKET.SEATMAP` a
//! tick, plus `TICKET.LAYOUT` when [`needs_layout`] says so, then
//! [`next_map`] decides.

use std::sync::Arc;

use redis::Value;

use super::diff::check_seats;
use super::feed::{needs_layout, next_map, MapFeed, MapPoll, MapRead};
use crate::hub::{now_ms, Hub, Reader};
use crate::source::{ReadError, Source};
use crate::stock::next_id;

/// Reads seat maps from `Source`.
pub struct SeatReader(pub Arc<Source>);

/// The seat-map hub.
pub type SeatHub = Hub<SeatReader>;

impl Reader for SeatReader {
    type Feed = MapFeed;
    type Memory = MapPoll;

    fn pending(&self) -> MapFeed {
        MapFeed::Pending
    }

    async fn tick(&self, event: &str, current: &MapFeed, memory: &mut MapPoll) -> Option<MapFeed> {
        let read = self.read(event, current, *memory).await;
        if let Err(ReadError::Unavailable(why)) = &read {
            log::debug!("{event}: seat map: {why}");
        }
        let (publish, next) =
            next_map(
                event,
                current,
                *memory,
                read,
                now_ms(),
                || next_id(now_ms()),
            );
        *memory = next;
        publish
    }
}

impl SeatReader {
    async fn read(
        &self,
        event: &str,
        current: &MapFeed,
        poll: MapPoll,
    ) -> Result<MapRead, ReadError> {
        let seats = match self.0.read("TICKET.SEATMAP", event).await? {
            Value::Nil => return Ok(MapRead::Unseated),
            other => bytes(other, "TICKET.SEATMAP")?,
        };
        check_seats(&seats).map_err(|e| unavailable(event, e))?;
        let layout = if needs_layout(current, poll, seats.len()) {
            match self.0.read("TICKET.LAYOUT", event).await? {
                // Recreated unseated between the two reads.
                Value::Nil => return Ok(MapRead::Unseated),
                other => Some(
                    String::from_utf8(bytes(other, "TICKET.LAYOUT")?)
                        .map_err(|_| unavailable(event, "TICKET.LAYOUT is not UTF-8".into()))?,
                ),
            }
        } else {
            None
        };
        Ok(MapRead::Seated { seats, layout })
    }
}

fn unavailable(event: &str, why: String) -> ReadError {
    log::warn!("{event}: {why}");
    ReadError::Unavailable(why)
}

/// The bytes of a bulk (or simple) string reply.
fn bytes(v: Value, command: &str) -> Result<Vec<u8>, ReadError> {
    match v {
        Value::BulkString(b) => Ok(b),
        Value::SimpleString(s) => Ok(s.into_bytes()),
        other => Err(ReadError::Unavailable(format!(
            "{command} answered {other:?}, not a string"
        ))),
    }
}

//! One entry of an event's log as the sidecar reads it: its stream id and
//! the record decoded from its fields, or why it could not be decoded.

use protocol::record::{Malformed, Record};
use protocol::StreamId;

/// One stream entry, decoded or not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The stream id.
    pub id: StreamId,
    /// The decoded record, or why it could not be decoded.
    pub rec: Result<Record, Malformed>,
}

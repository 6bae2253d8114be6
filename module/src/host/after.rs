//! An event's hashes after the sale in Redis (`ticket:{E}:gens`,
//! `ticket:{E}:scans` and `ticket:{E}:resale`; what they hold:
//! `protocol::keys::after_key` and `resale_key`),
//! through the same side-hash handle as the allocations. Opened by the
//! commands after the sale and by a cancel or expiry: never on a claim.

use protocol::keys::{after_key, resale_key};

use super::ffi::{rstr, HASH_DELETE};
use super::note::SideHash;
use super::store::RedisStore;
use crate::error::TicketError;
use crate::pool::store::After;

impl RedisStore<'_> {
    fn after_hash(&self, hash: After, write: bool) -> SideHash {
        SideHash::open_named(self, &self.after_name(hash), write)
    }

    fn after_name(&self, hash: After) -> String {
        match hash {
            After::Resale => resale_key(self.event),
            hash => after_key(self.event, hash == After::Scans),
        }
    }

    /// Every field of one of the hashes, as (ticket, value); fields that
    /// are not numbers are skipped.
    pub(super) fn read_after_fields(
        &mut self,
        hash: After,
    ) -> Result<Vec<(i64, String)>, TicketError> {
        let name = self.after_name(hash);
        Ok(self
            .read_side_fields(&name)?
            .into_iter()
            .filter_map(|(field, value)| Some((field.parse().ok()?, value)))
            .collect())
    }

    pub(super) fn read_after_field(
        &mut self,
        hash: After,
        ticket: i64,
    ) -> Result<Option<String>, TicketError> {
        self.after_hash(hash, false).field(&ticket.to_string())
    }

    /// Sets or removes a ticket's field; removing from an absent hash
    /// writes nothing (a cancel of a ticket never transferred or scanned).
    pub(super) fn write_after_field(&mut self, hash: After, ticket: i64, value: Option<&str>) {
        let side = self.after_hash(hash, true);
        let field = ticket.to_string();
        match value {
            Some(value) => side.set(&field, rstr(value.as_bytes()).inner),
            None if matches!(side.hash(), Ok(Some(_))) => side.set(&field, HASH_DELETE),
            None => return,
        }
        side.signal();
    }

    /// Deletes the hashes with the event's state; how many existed.
    pub(super) fn delete_after(&mut self) -> i64 {
        [After::Gens, After::Scans, After::Resale]
            .into_iter()
            .filter(|hash| {
                let side = self.after_hash(*hash, true);
                let existed = side.delete();
                if existed {
                    side.signal();
                }
                existed
            })
            .count() as i64
    }
}

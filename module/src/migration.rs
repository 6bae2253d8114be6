//! The slots this node is importing by an atomic slot migration (Valkey
//! 9's `CLUSTER MIGRATESLOTS`). While an import runs, the server already
//! shows the imported keys to the module (`OpenKey` finds them, a scan
//! does not) though they still belong to the source: the source expires
//! their holds and its effects reach this node in the migration's stream.
//! So the sweep leaves every event of an importing slot alone until the
//! import completes (then the expiry index is rebuilt from the keys) or
//! is aborted (then the server has deleted them). Filled by the host from
//! the server's migration events; read by the sweep.

use std::cell::RefCell;
use std::ops::RangeInclusive;

/// An import: the migration job's name and its slot ranges.
type Import = (Vec<u8>, Vec<RangeInclusive<u16>>);

thread_local! {
    /// Imports in progress (server events and the cron run on the main
    /// thread only).
    static IMPORTING: RefCell<Vec<Import>> = const { RefCell::new(Vec::new()) };
}

/// An import of `ranges` by job `job` has started.
pub fn import_started(job: &[u8], ranges: Vec<RangeInclusive<u16>>) {
    IMPORTING.with(|i| i.borrow_mut().push((job.to_vec(), ranges)));
}

/// Import `job` completed or was aborted.
pub fn import_ended(job: &[u8]) {
    IMPORTING.with(|i| i.borrow_mut().retain(|(name, _)| name != job));
}

/// Whether `event`'s slot is being imported.
pub fn importing(event: &str) -> bool {
    IMPORTING.with(|i| {
        let imports = i.borrow();
        if imports.is_empty() {
            return false;
        }
        let slot = protocol::keys::slot_of(event);
        imports
            .iter()
            .any(|(_, ranges)| ranges.iter().any(|r| r.contains(&slot)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_is_importing_from_start_to_end_of_its_slots_import() {
        let slot = protocol::keys::slot_of("e1");
        assert!(!importing("e1"));
        import_started(b"job-a", vec![0..=10, slot..=slot + 1]);
        import_started(b"job-b", vec![100..=200]);
        assert!(importing("e1"));
        import_ended(b"job-b");
        assert!(importing("e1"));
        import_ended(b"job-a");
        assert!(!importing("e1"));
    }
}

//! The allocation gate: keeps the seated event's allocation operations out
//! of reach of a fault, for a heal that cannot undo a lost one (it
//! quarantines the event instead). When on, each operation that moves
//! allocated stock (a partner's claim, cancel or confirm, the box office's
//! allocate and release) passes the gate and is acknowledged by `WAIT 1`
//! before it lets the nemesis strike, which holds the gate shut while it
//! does; the box office also holds it over the fan club's timed release.
//! Off, passing it costs nothing (`DEFAULT_ALLOC_GATE` says which is the
//! default).

use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// Shared by the writers, the box office and the nemesis.
#[derive(Debug, Clone, Default)]
pub struct Gate(Option<Arc<RwLock<()>>>);

impl Gate {
    /// A gate that is on when `on`.
    pub fn new(on: bool) -> Gate {
        Gate(on.then(Arc::default))
    }

    pub fn is_on(&self) -> bool {
        self.0.is_some()
    }

    /// Held while an allocation operation runs and is acknowledged: no
    /// fault meanwhile.
    pub fn pass(&self) -> Option<RwLockReadGuard<'_, ()>> {
        self.0
            .as_ref()
            .map(|l| l.read().unwrap_or_else(|e| e.into_inner()))
    }

    /// Like [`Gate::pass`], but `Err` at once when the gate is shut (a
    /// fault strikes or waits to): a writer then does something else, so
    /// the other writes go on and the nemesis sees the primary move.
    #[allow(clippy::result_unit_err)]
    pub fn try_pass(&self) -> Result<Option<RwLockReadGuard<'_, ()>>, ()> {
        match &self.0 {
            None => Ok(None),
            Some(l) => match l.try_read() {
                Ok(g) => Ok(Some(g)),
                Err(std::sync::TryLockError::Poisoned(e)) => Ok(Some(e.into_inner())),
                Err(std::sync::TryLockError::WouldBlock) => Err(()),
            },
        }
    }

    /// Held while a fault strikes: no allocation operation meanwhile.
    pub fn strike(&self) -> Option<RwLockWriteGuard<'_, ()>> {
        self.0
            .as_ref()
            .map(|l| l.write().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_open_gate_holds_nothing_and_a_shut_one_excludes() {
        let off = Gate::new(false);
        assert!(off.pass().is_none() && off.strike().is_none());
        let on = Gate::new(true);
        let passing = on.pass();
        assert!(passing.is_some());
        let lock = on.0.as_ref().unwrap();
        assert!(lock.try_write().is_err(), "no strike while an op passes");
        drop(passing);
        let striking = on.strike();
        assert!(striking.is_some() && lock.try_read().is_err());
        assert!(on.try_pass().is_err() && off.try_pass().is_ok_and(|p| p.is_none()));
    }
}

//! End-to-end: what the soak's unplanned failovers found the heal's
//! divergence check missing (issue 30; docs/design.md "Healing after an
//! unplanned failover"), each as one scripted failover (see
//! `support/failover.rs`): the replica cut off, writes the sidecar applies
//! to MySQL, the primary killed, the stale replica promoted; then the
//! sidecar heals, MySQL equals Redis, `reconcile` is clean, the strict
//! replica and an AOF reload reach the same `DEBUG DIGEST`.

#[path = "support/failover.rs"]
mod failover;
#[path = "support/module.rs"]
mod msupport;
#[path = "support/sidecar.rs"]
mod support;

use failover::{acked, order, Failover};
use protocol::record::{Op, Record};
use support::*;

/// Two primaries can log the same record at the same id after different
/// histories: in the soak (seeds 3003, 3004, 13693333185817233285), the
/// old primary and the replica promoted while it still took writes both
/// expired a hold in the same millisecond, and that expiry was the last
/// entry MySQL applied. The new primary then holds the entry at MySQL's
/// offset with the very content MySQL applied, yet lacks writes before it.
/// Here both log `op=open` at one id (an `XADD` of the same fields) after
/// u's claim, which only the old primary has. The heal must find the lost
/// claim (and re-apply it: nothing on the new primary touched u or its
/// ticket), not take the event for intact: that quarantined it
/// (`entries_lost`: MySQL counted more entries than the new primary's log
/// had seen) or, when the new primary had logged more writes of its own,
/// applied its diverged log as ordinary entries (conflicts, Redis != MySQL).
#[test]
fn the_same_entry_at_the_same_id_on_both_primaries_proves_nothing() {
    let mut f = Failover::start("heal_same_id", &["TICKET.INIT", "e", "10"]);
    let mut p = f.conn();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "a"], 1), 1);
    f.cut_off();
    assert_eq!(acked::<i64>(&mut p, &["TICKET.CLAIM", "e", "u"], 0), 2);
    let open = Record {
        op: Op::<&str>::Open,
        at: msupport::server_ms(&mut p),
    };
    let id = xadd_at(&mut p, "e", "*", &open);
    // MySQL applies u's claim and the open: its offset is `id`.
    f.promote();
    let mut r = f.conn();
    assert_eq!(xadd_at(&mut r, "e", &id, &open), id);
    f.heal();

    let log = f.sidecar.log();
    assert!(!log.contains("QUARANTINED"), "{}", tail(&log, 20));
    assert!(
        log.contains("2 lost applied write(s): 2 re-applied"),
        "u's claim re-applied, the open found on the new primary: {}",
        tail(&log, 20)
    );
    assert_eq!(order(&mut r, "u"), Some((vec![2], "sold".into())));
    assert_eq!(order(&mut r, "a"), Some((vec![1], "sold".into())));
    assert!(f.conflicts().is_empty(), "{:?}", f.conflicts());
    f.consistent();
}

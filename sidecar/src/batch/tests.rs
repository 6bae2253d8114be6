//! The tests of the batch's transaction: which entries it takes, and the
//! gate.

mod above {
    use super::super::*;
    use protocol::record::{Op, Record};

    fn entries(ms: &[u64]) -> Vec<Entry> {
        ms.iter()
            .map(|ms| {
                Entry::new(
                    StreamId::new(*ms, 0),
                    Ok(Record {
                        op: Op::Open,
                        at: *ms as i64,
                    }),
                )
            })
            .collect()
    }

    fn ids(e: &[Entry]) -> Vec<u64> {
        e.iter().map(|e| e.id.ms).collect()
    }

    #[test]
    fn above_the_offset_borrows_ascending_entries_and_filters_others() {
        let asc = entries(&[1, 2, 3, 5]);
        let todo = above(&asc, StreamId::new(2, 0));
        assert!(matches!(todo, Cow::Borrowed(_)));
        assert_eq!(ids(&todo), [3, 5]);
        assert!(above(&asc, StreamId::new(5, 0)).is_empty());
        assert_eq!(ids(&above(&asc, StreamId::ZERO)), [1, 2, 3, 5]);
        let unordered = entries(&[3, 1, 4, 2]);
        let todo = above(&unordered, StreamId::new(2, 0));
        assert!(matches!(todo, Cow::Owned(_)));
        assert_eq!(ids(&todo), [3, 4]);
    }
}

mod gate {
    use super::super::*;
    use protocol::record::{Checkout, Record, Tickets};

    fn entry(ms: u64, op: Op) -> Entry {
        Entry::new(StreamId::new(ms, 0), Ok(Record { op, at: ms as i64 }))
    }

    fn init(inc: Option<u64>) -> Op {
        Op::Init {
            transfer_until: None,
            layout: None,
            total: 5,
            opens_at: 0,
            closes_at: 0,
            checkout: Checkout::default(),
            incarnation: inc.map(Incarnation),
            draw: None,
        }
    }

    fn restore(inc: u64, from: u64) -> Op {
        Op::Restore {
            incarnation: Incarnation(inc),
            status: Status::Open,
            from: StreamId::new(from, 0),
        }
    }

    fn claim(u: &str) -> Op {
        Op::Claim {
            from: None,
            pick: None,
            user: u.into(),
            tickets: Tickets::One(1),
        }
    }

    fn state(inc: Option<u64>, quarantined: bool) -> EventState {
        EventState {
            incarnation: inc.map(Incarnation),
            quarantined,
            dropped: false,
        }
    }

    fn offset(ms: u64) -> StreamId {
        StreamId::new(ms, 0)
    }

    #[test]
    fn a_reused_id_of_a_dropped_event_leaves_quarantine_by_its_own_drop() {
        let dropped = |quarantined| EventState {
            incarnation: Some(Incarnation(7)),
            quarantined,
            dropped: true,
        };
        let todo = [
            entry(10, init(Some(8))),
            entry(11, claim("a")),
            entry(12, Op::Drop),
            entry(13, claim("b")),
        ];
        let q = dropped(true);
        assert_eq!(
            gate("e", Some(&q), offset(5), &todo),
            Gate::Discard {
                upto: 2,
                lifted: true
            }
        );
        // before its drop arrives: discarded, still quarantined
        assert_eq!(
            gate("e", Some(&q), offset(5), &todo[..2]),
            Gate::Discard {
                upto: 1,
                lifted: false
            }
        );
        // the re-init itself quarantines, naming the way out
        let Gate::Refuse {
            quarantine: Some(ev),
            ..
        } = gate("e", Some(&dropped(false)), offset(5), &todo[..2])
        else {
            panic!("not refused");
        };
        assert!(ev.text.contains("DROP it again"), "{}", ev.text);
        // a drop of an event that is merely quarantined (not dropped) is
        // not a way out: that takes a rebuild
        assert!(matches!(
            gate("e", Some(&state(Some(7), true)), offset(5), &todo),
            Gate::Refuse { .. }
        ));
    }

    #[test]
    fn plain_batches_write() {
        let todo = [entry(1, init(Some(7))), entry(2, claim("a"))];
        let write = Gate::Write {
            from: 0,
            restore: None,
        };
        assert_eq!(gate("e", None, StreamId::ZERO, &todo), write);
        // the same incarnation again is a duplicate_init, not a quarantine
        assert_eq!(
            gate("e", Some(&state(Some(7), false)), offset(0), &todo),
            write
        );
    }

    #[test]
    fn another_incarnation_quarantines() {
        let todo = [entry(9, claim("x")), entry(10, init(Some(8)))];
        for mine in [Some(7), None] {
            let Gate::Refuse {
                quarantine: Some(ev),
                conflict: None,
            } = gate("e", Some(&state(mine, false)), offset(5), &todo)
            else {
                panic!("not refused");
            };
            assert_eq!(ev.reason, Reason::IncarnationChanged);
            assert!(
                ev.text.contains("10-0") && ev.text.contains("0000000000000008"),
                "{}",
                ev.text
            );
        }
        // a record from before 0.3 against a MySQL incarnation, too
        let old = [entry(10, init(None))];
        assert!(matches!(
            gate("e", Some(&state(Some(7), false)), offset(5), &old),
            Gate::Refuse { .. }
        ));
    }

    #[test]
    fn quarantined_events_wait_for_their_restore() {
        let q = state(Some(7), true);
        let todo = [entry(9, claim("x"))];
        let refuse = Gate::Refuse {
            quarantine: None,
            conflict: None,
        };
        assert_eq!(gate("e", Some(&q), offset(5), &todo), refuse);
        let todo = [
            entry(9, claim("x")),
            entry(10, restore(7, 5)),
            entry(11, claim("y")),
        ];
        let Gate::Write {
            from: 1,
            restore: Some(r),
        } = gate("e", Some(&q), offset(5), &todo)
        else {
            panic!("restore not applied");
        };
        assert_eq!(
            (r.id, r.incarnation),
            (StreamId::new(10, 0), Incarnation(7))
        );
        // a pre-0.3 event takes the restore's incarnation
        assert!(matches!(
            gate("e", Some(&state(None, true)), offset(5), &todo),
            Gate::Write { from: 1, .. }
        ));
    }

    #[test]
    fn a_mismatched_restore_is_a_conflict() {
        let todo = [entry(10, restore(7, 4))];
        let Gate::Refuse {
            quarantine,
            conflict: Some(c),
        } = gate("e", Some(&state(Some(7), true)), offset(5), &todo)
        else {
            panic!("applied");
        };
        assert_eq!(quarantine, None, "already quarantined");
        assert_eq!((c.reason, c.id), ("restore_mismatch", StreamId::new(10, 0)));
        let todo = [entry(10, restore(8, 5))];
        let Gate::Refuse {
            quarantine: Some(ev),
            ..
        } = gate("e", Some(&state(Some(7), false)), offset(5), &todo)
        else {
            panic!("applied");
        };
        assert_eq!(ev.reason, Reason::RestoreMismatch);
    }
}

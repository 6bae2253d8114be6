//! The tests of `model::entry`: an entry as read, its canonical text,
//! and what MySQL can never take.

mod as_read {
    use super::super::*;

    fn pairs(v: &[(&[u8], &[u8])]) -> Vec<(Vec<u8>, Vec<u8>)> {
        v.iter().map(|(k, v)| (k.to_vec(), v.to_vec())).collect()
    }

    #[test]
    fn the_digest_is_of_netstrings_so_field_borders_count() {
        let a = Raw::of(&pairs(&[(b"ab", b"c")]));
        let b = Raw::of(&pairs(&[(b"a", b"bc")]));
        assert_ne!(a.sha256, b.sha256);
        assert_eq!((a.bytes, b.bytes), (3, 3));
        // sha256("2:ab,1:c,"), as `printf '2:ab,1:c,' | sha256sum` says
        let want = hex(&Sha256::digest(b"2:ab,1:c,"));
        assert_eq!(a.sha256_hex(), Some(want));
        let long = Raw::of(&pairs(&[(b"abcdefghijkl", b"")]));
        let want = hex(&Sha256::digest(b"12:abcdefghijkl,0:,"));
        assert_eq!(long.sha256_hex(), Some(want));
        assert_eq!(Raw::default().sha256_hex(), None);
    }

    #[test]
    fn an_entry_beyond_the_bound_is_not_decoded_and_shows_its_head() {
        let big = vec![b'x'; MAX_ENTRY_BYTES as usize];
        let fields = pairs(&[(b"op", b"init"), (b"layout", &big)]);
        let e = Entry::read("e", StreamId::new(1, 0), &fields);
        assert!(e.raw.too_large());
        let Err(m) = &e.rec else {
            panic!("decoded: {e:?}")
        };
        assert!(m.reason.contains("more than the 8388608"), "{}", m.reason);
        assert_eq!(m.raw.chars().count(), SHOWN_CHARS);
        assert!(m.raw.starts_with("op=init layout=xxx"), "{}", m.raw);
        let small = pairs(&[(b"op", b"open"), (b"event", b"e"), (b"at", b"5")]);
        let e = Entry::read("e", StreamId::new(5, 0), &small);
        assert!(e.rec.is_ok() && !e.raw.too_large() && e.raw.sha256.is_some());
    }

    #[test]
    fn shown_drops_control_bytes_and_bad_utf8_and_stops_at_the_limit() {
        let fields = pairs(&[(b"us\0er", b"a\xff\x01b"), (b"k", b"v")]);
        assert_eq!(shown(&fields, 100), "user=a\u{fffd}b k=v");
        assert_eq!(shown(&fields, 4), "user");
        assert_eq!(shown(&[], 4), "");
    }
}

mod canonical_text {
    use super::super::*;
    use protocol::record::{Malformed, Op, Tickets};
    use protocol::StreamId;

    fn entry(op: Op) -> Entry {
        Entry::new(StreamId::new(5, 0), Ok(Record { op, at: 77 }))
    }

    #[test]
    fn records_round_trip_through_their_text() {
        let ops = [
            Op::Claim {
                from: None,
                pick: None,
                user: "a=b c".into(),
                tickets: Tickets::One(43),
            },
            Op::Hold {
                from: None,
                pick: None,
                user: "ü".into(),
                tickets: Tickets::Many(vec![1, 2]),
                until: 99,
            },
            Op::Close,
        ];
        for op in ops {
            let e = entry(op);
            let t = text("e1", &e);
            assert_eq!(record_of("e1", &t).as_ref(), e.rec.as_ref().ok(), "{t}");
        }
    }

    #[test]
    fn content_tells_writes_apart_and_malformed_never_decodes() {
        let a = text(
            "e",
            &entry(Op::Claim {
                from: None,
                pick: None,
                user: "u1".into(),
                tickets: Tickets::One(43),
            }),
        );
        let b = text(
            "e",
            &entry(Op::Claim {
                from: None,
                pick: None,
                user: "u2".into(),
                tickets: Tickets::One(43),
            }),
        );
        assert_ne!(digest(&a), digest(&b));
        assert_eq!(digest(&a), digest(&a.clone()));
        assert_eq!(digest(&a).len(), 16);
        let bad = Entry::new(
            StreamId::new(1, 0),
            Err(Malformed {
                reason: "x".into(),
                user: None,
                ticket: None,
                raw: "op=claim user=u".into(),
            }),
        );
        let t = text("e", &bad);
        assert!(record_of("e", &t).is_none());
        assert!(text_fields(&t).is_empty());
    }

    #[test]
    fn a_long_text_is_a_stand_in_naming_its_op_length_and_digest() {
        let small = Entry::test_init(5, Some(100));
        assert!(record_of("e", &text("e", &small)).is_some());
        let big = Entry::test_init(5, Some(MAX_TEXT_BYTES));
        let mut full = String::new();
        write_full(&mut full, "e", &big);
        let t = text("e", &big);
        let sha = hex(&Sha256::digest(full.as_bytes()));
        assert_eq!(
            t,
            format!(
                "stand_in{SEP}op=init{SEP}bytes={}{SEP}sha256={sha}",
                full.len()
            )
        );
        assert_eq!(stand_in_op(&t), Some("init"));
        assert_eq!(stand_in_op(&text("e", &small)), None);
        assert!(record_of("e", &t).is_none() && text_fields(&t).is_empty());
        // a journal row of a release before the bound reads the same
        assert_eq!(bounded(&full), t);
        assert_eq!(bounded("op=open"), "op=open");
        // and its anchor (the digest of the whole text) is still known
        assert!(has_digest("e", &big, &digest(&full)));
        assert!(has_digest("e", &big, &digest(&t)));
        assert!(!has_digest("e", &small, &digest(&full)));
    }

    #[test]
    fn an_entry_beyond_the_bound_is_its_size_and_sha256() {
        let huge = vec![b'x'; MAX_ENTRY_BYTES as usize + 1];
        let fields = vec![
            (b"op".to_vec(), b"init".to_vec()),
            (b"layout".to_vec(), huge),
        ];
        let e = Entry::read("e", StreamId::new(9, 0), &fields);
        let t = text("e", &e);
        let sha = e.raw.sha256_hex().unwrap_or_default();
        assert_eq!(
            t,
            format!("too_large{SEP}bytes={}{SEP}sha256={sha}", e.raw.bytes)
        );
        assert!(record_of("e", &t).is_none() && text_fields(&t).is_empty());
        let mut other = fields.clone();
        other[1].1[0] = b'y';
        assert_ne!(text("e", &Entry::read("e", StreamId::new(9, 0), &other)), t);
    }
}

mod refusals {
    use super::super::*;

    #[test]
    fn a_seated_init_beyond_the_packet_is_refused_naming_both_sizes() {
        let mib = 1 << 20;
        let e = Entry::test_init(1, Some(2 * mib as usize));
        let (reason, detail) = refusal(&e, mib).unwrap_or_default();
        assert_eq!(reason, "too_large_for_packet");
        assert!(detail.contains(&format!("{}", 2 * mib + STATEMENT_OVERHEAD)));
        assert!(detail.contains(&format!("max_allowed_packet of {mib}")));
        assert_eq!(refusal(&e, 16 * mib), None, "fits a 16 MiB packet");
        assert_eq!(refusal(&e, 0), None, "packet not known");
        assert_eq!(refusal(&Entry::test_init(1, None), 1024), None, "unseated");
    }

    #[test]
    fn an_entry_beyond_the_bound_is_refused_whatever_the_packet() {
        let mut e = Entry::test_init(1, None);
        e.raw.bytes = MAX_ENTRY_BYTES + 1;
        let (reason, detail) = refusal(&e, 1 << 30).unwrap_or_default();
        assert_eq!(reason, "too_large");
        assert!(
            detail.contains(&format!("{}", MAX_ENTRY_BYTES + 1)),
            "{detail}"
        );
        e.raw.bytes = MAX_ENTRY_BYTES;
        assert_eq!(refusal(&e, 1 << 30), None, "the bound itself is legal");
    }
}

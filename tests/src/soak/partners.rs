//! The seated event's allocations (issue 42): the partners whose users
//! claim `FROM` them (the promoter with a `KEY`, the fan club with a
//! `RELEASE` time that passes during the run), the house seats, what the
//! box office sets aside before the sale, and which user buys through
//! which partner. Plain data, no I/O.

use super::history::Book;

/// A partner channel: an allocation whose users claim `FROM` it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partner {
    pub name: &'static str,
    /// The `KEY` its claims give (none: made without one).
    pub key: Option<&'static str>,
}

/// The promoter: row A-3, claimed with a key.
pub const PROMOTER: Partner = Partner {
    name: "promoter",
    key: Some("promoter-secret"),
};

/// The fan club: row B-3, released by themselves mid-run.
pub const FAN_CLUB: Partner = Partner {
    name: "fanclub",
    key: None,
};

/// The partners, in the order of [`user_name`]'s users.
pub const PARTNERS: [Partner; 2] = [PROMOTER, FAN_CLUB];

/// The most tickets a partner's user claims at once.
pub const PARTY: i64 = 2;

/// House seats: allocated before the sale, partly released by hand.
pub const HOUSE: &str = "house";

/// Seats the box office allocates during the sale, and releases part of.
pub const LATE: &str = "late";

/// The promoter's seats (row A-3).
pub const PROMOTER_SEATS: [i64; 10] = [21, 22, 23, 24, 25, 26, 27, 28, 29, 30];

/// The fan club's seats (row B-3).
pub const FAN_CLUB_SEATS: [i64; 10] = [71, 72, 73, 74, 75, 76, 77, 78, 79, 80];

/// A seated writer's user `u`: one in ten buys through the promoter (u0,
/// u10, ...), one in ten through the fan club (u1, u11, ...); the name
/// says which (`w6-promoter-u10`).
pub fn user_name(writer: usize, u: usize) -> String {
    match PARTNERS.get(u % 10) {
        Some(p) => format!("w{writer}-{}-u{u}", p.name),
        None => format!("w{writer}-u{u}"),
    }
}

/// The partner a user buys through, by its name; none: the public.
pub fn partner_of(user: &str) -> Option<&'static Partner> {
    let middle = user.split('-').nth(1)?;
    PARTNERS.iter().find(|p| p.name == middle)
}

/// What the box office allocates before the sale: the promoter's and the
/// fan club's seats (the latter released at `release_ms`), and four house
/// seats of section A chosen by the module.
pub fn before_sale(release_ms: i64) -> Vec<Book> {
    let seats = |name: &str, ids: &[i64], key: Option<&str>, release_ms| Book::Allocate {
        name: name.into(),
        count: ids.len() as i64,
        section: None,
        seats: Some(ids.to_vec()),
        key: key.map(str::to_owned),
        release_ms,
    };
    vec![
        seats(PROMOTER.name, &PROMOTER_SEATS, PROMOTER.key, None),
        seats(FAN_CLUB.name, &FAN_CLUB_SEATS, None, Some(release_ms)),
        Book::Allocate {
            name: HOUSE.into(),
            count: 4,
            section: Some("A".into()),
            seats: None,
            key: None,
            release_ms: None,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partner_users_are_named_by_their_partner() {
        assert_eq!(user_name(6, 10), "w6-promoter-u10");
        assert_eq!(partner_of(&user_name(6, 10)), Some(&PROMOTER));
        assert_eq!(partner_of(&user_name(7, 21)), Some(&FAN_CLUB));
        assert_eq!(partner_of(&user_name(7, 22)), None);
        assert_eq!(partner_of("w0-u1"), None);
        let partners = (0..100).filter(|u| partner_of(&user_name(6, *u)).is_some());
        assert_eq!(partners.count(), 20);
    }

    #[test]
    fn the_partners_seats_are_apart_and_in_the_venue() {
        let all: std::collections::BTreeSet<i64> = PROMOTER_SEATS
            .iter()
            .chain(&FAN_CLUB_SEATS)
            .copied()
            .collect();
        assert_eq!(all.len(), 20);
        assert!(all
            .iter()
            .all(|s| (1..=super::super::seated::TOTAL).contains(s)));
        assert_eq!(before_sale(5).len(), 3);
    }
}

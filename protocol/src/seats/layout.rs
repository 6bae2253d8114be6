//! A seated event's layout (docs/design.md "Reserved seating"): sections of
//! rows of positions, parsed strictly from JSON once per event, and the
//! mapping between seat ids, positions and names.
//!
//! Seat ids are `1..=total` in layout order (section by section, row by
//! row, position by position, blocked positions skipped), so a seat id is a
//! ticket number everywhere. The stored form ([`Layout::to_json`]) is the
//! input with every default filled in and each row's `first_id` added; it
//! parses back to the same layout (a `first_id` must then be the computed
//! one).

use serde::Deserialize;

/// Most bytes of layout JSON accepted (checked before parsing).
pub const MAX_LAYOUT_BYTES: usize = 4 << 20;
/// Deepest nesting of arrays and objects accepted (the schema needs 6:
/// layout, sections, section, rows, row, blocked; checked before parsing).
pub const MAX_DEPTH: usize = 6;

/// The first character of a JSON object: a layout is one.
const OBJECT_START: char = '{';

pub const MAX_SECTIONS: usize = 1_000;
pub const MAX_ROWS: usize = 1_000;
pub const MAX_SEATS: u32 = 200_000;
/// Most positions in one row.
pub const MAX_POSITIONS: i64 = 1_000;
/// Labels (`first` and up) and ranks stay in `0..=MAX_LABEL` / `MAX_RANK`.
pub const MAX_LABEL: i64 = 1_000_000_000;
pub const MAX_RANK: i64 = 1_000_000_000;
/// The category of a section that names none.
pub const DEFAULT_CATEGORY: &str = "general";

/// Why a layout was refused (the module replies `ERR invalid layout: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutError(pub String);

impl std::fmt::Display for LayoutError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad<T>(why: impl Into<String>) -> Result<T, LayoutError> {
    Err(LayoutError(why.into()))
}

/// What one position of a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spot {
    Seat,
    Accessible,
    Blocked,
}

/// One row, with every default resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// Index of its section in [`Layout::sections`].
    pub section: u32,
    pub name: String,
    /// Positions, `1..=1000`.
    pub positions: u32,
    /// The label of position 1.
    pub first: i64,
    /// Blocked positions, ascending.
    pub blocked: Vec<u32>,
    /// Accessible positions, ascending.
    pub accessible: Vec<u32>,
    pub rank: i64,
    /// Twice the center (the center is a multiple of 0.5).
    pub center2: i64,
    /// Index in [`Layout::categories`].
    pub category: u32,
    /// The seat id of its first seat (of the next row's when it has none).
    pub first_id: u32,
    /// Seats (positions not blocked).
    pub seats: u32,
    /// What each position is (index `position - 1`).
    pub spots: Vec<Spot>,
}

impl Row {
    /// What `position` (1-based) is.
    #[inline]
    pub fn spot(&self, position: u32) -> Spot {
        self.spots[position as usize - 1]
    }

    /// The position of the seat `offset` seats into the row (0-based).
    pub fn position_of(&self, offset: u32) -> u32 {
        let mut position = offset + 1;
        for &b in &self.blocked {
            if b <= position {
                position += 1;
            } else {
                break;
            }
        }
        position
    }

    /// The seat id at `position` (not blocked).
    pub fn id_at(&self, position: u32) -> u32 {
        let before = self.blocked.partition_point(|b| *b < position) as u32;
        self.first_id + position - 1 - before
    }
}

/// One section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    /// The section's category (its rows may override it).
    pub category: u32,
    /// Its rows: indices `rows.0..rows.1` of [`Layout::rows`].
    pub rows: (u32, u32),
}

/// A parsed, validated layout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub sections: Vec<Section>,
    /// Every row, in layout order.
    pub rows: Vec<Row>,
    /// Distinct categories in order of first appearance.
    pub categories: Vec<String>,
    /// Row indices by `(rank, index)`: the order the search visits them.
    pub by_rank: Vec<u32>,
    /// The number of seats.
    pub total: u32,
}

/// Where a seat is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SeatPlace {
    pub row: u32,
    pub position: u32,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a layout: an object with \"sections\""
)]
struct RawLayout {
    sections: Vec<RawSection>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a section: an object with \"name\" and \"rows\""
)]
struct RawSection {
    name: String,
    category: Option<String>,
    rows: Vec<RawRow>,
}

#[derive(Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a row: an object with \"name\" and \"seats\""
)]
struct RawRow {
    name: String,
    seats: i64,
    first: Option<i64>,
    blocked: Option<Vec<i64>>,
    accessible: Option<Vec<i64>>,
    rank: Option<i64>,
    center: Option<f64>,
    category: Option<String>,
    first_id: Option<i64>,
}

/// A JSON error in plain words, naming the field it is about
/// (`sections[0].rows[2].seats: expected an integer, got a string "5"`).
fn json_error(e: &serde_path_to_error::Error<serde_json::Error>) -> LayoutError {
    let message = plain_words(&e.inner().to_string());
    match e.path().to_string().as_str() {
        "." => LayoutError(message),
        path => LayoutError(format!("{path}: {message}")),
    }
}

/// serde's words for Rust types made the layout's: what a field must be.
fn plain_words(message: &str) -> String {
    let (what, position) = match message.rsplit_once(" at line ") {
        Some((what, at)) => (what, format!(" (at line {at})")),
        None => (message, String::new()),
    };
    let what = match what.strip_prefix("invalid type: ") {
        Some(rest) => match rest.split_once(", expected ") {
            Some((got, want)) => format!("expected {}, got {}", plain_type(want), plain_value(got)),
            None => rest.to_owned(),
        },
        None => what.to_owned(),
    };
    format!("{what}{position}")
}

/// What serde expected (`i64`, `a sequence`), as a layout's reader says it.
fn plain_type(want: &str) -> &str {
    match want {
        "i64" | "u32" => "an integer",
        "f64" => "a number",
        "a sequence" => "a list",
        "a map" => "an object",
        other => other,
    }
}

/// What serde found (`string "5"`, `integer `3``, `sequence`).
fn plain_value(got: &str) -> String {
    let bare = got.replace('`', "");
    match bare.split_once(' ') {
        Some(("string", text)) => format!("a string {text}"),
        Some(("integer" | "floating", _)) => {
            format!("the number {}", bare.rsplit(' ').next().unwrap_or(""))
        }
        Some(("boolean", value)) => value.to_owned(),
        _ => match bare.as_str() {
            "sequence" => "a list".to_owned(),
            "map" => "an object".to_owned(),
            other => other.to_owned(),
        },
    }
}

/// 1-`max` bytes of `[A-Za-z0-9_.-]`.
fn check_name(what: &str, name: &str, max: usize) -> Result<(), LayoutError> {
    let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-');
    if name.is_empty() || name.len() > max || !name.bytes().all(ok) {
        let shown: String = name.chars().take(40).collect();
        return bad(format!(
            "{what} {shown:?} must be 1-{max} bytes of [A-Za-z0-9_.-]"
        ));
    }
    Ok(())
}

/// The deepest nesting of `[`/`{` in `json`, outside strings.
fn depth(json: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in json {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Sorted, distinct positions of `1..=positions`.
fn positions_list(
    what: &str,
    row: &str,
    list: Option<Vec<i64>>,
    positions: i64,
) -> Result<Vec<u32>, LayoutError> {
    let mut list = list.unwrap_or_default();
    if let Some(p) = list.iter().find(|p| !(1..=positions).contains(*p)) {
        return bad(format!(
            "row {row}: {what} position {p} is outside 1..={positions}"
        ));
    }
    list.sort_unstable();
    if let Some(w) = list.windows(2).find(|w| w[0] == w[1]) {
        return bad(format!("row {row}: {what} position {} given twice", w[0]));
    }
    Ok(list.into_iter().map(|p| p as u32).collect())
}

impl Layout {
    /// Parses and validates layout JSON (the input form or the stored one).
    pub fn parse(json: &str) -> Result<Layout, LayoutError> {
        if json.len() > MAX_LAYOUT_BYTES {
            return bad(format!(
                "{} bytes is more than the {MAX_LAYOUT_BYTES} a layout may have",
                json.len()
            ));
        }
        if depth(json.as_bytes()) > MAX_DEPTH {
            return bad(format!("nested deeper than {MAX_DEPTH} levels"));
        }
        if !json.trim_start().starts_with(OBJECT_START) {
            return bad("a layout is a JSON object with \"sections\"");
        }
        let mut reader = serde_json::Deserializer::from_str(json);
        let raw: RawLayout =
            serde_path_to_error::deserialize(&mut reader).map_err(|e| json_error(&e))?;
        reader
            .end()
            .map_err(|e| LayoutError(plain_words(&e.to_string())))?;
        build(raw)
    }

    /// The stored form of the layout JSON `json` for an event of `total`
    /// seats: every check of [`Layout::parse`], its seats `total`, and the
    /// stored form itself (every default filled in, often several times
    /// the input) within [`MAX_LAYOUT_BYTES`], so what `TICKET.INIT` and
    /// `TICKET.RESTORE` accept always parses back, on the primary and on
    /// its replicas alike.
    pub fn stored(json: &str, total: i64) -> Result<String, LayoutError> {
        let layout = Layout::parse(json)?;
        layout.check_total(total)?;
        let stored = layout.to_json();
        if stored.len() > MAX_LAYOUT_BYTES {
            return bad(format!(
                "its stored form (every default filled in) is {} bytes, more than the {MAX_LAYOUT_BYTES} a layout may have",
                stored.len()
            ));
        }
        Ok(stored)
    }

    /// Whether `total` is the number of seats (`TICKET.INIT`'s check).
    pub fn check_total(&self, total: i64) -> Result<(), LayoutError> {
        if total != i64::from(self.total) {
            return bad(format!(
                "total {total} does not match the layout's {} seats",
                self.total
            ));
        }
        Ok(())
    }

    /// The row and position of seat `id`, if it is one.
    pub fn place(&self, id: u32) -> Option<SeatPlace> {
        if id == 0 || id > self.total {
            return None;
        }
        let row = self.rows.partition_point(|r| r.first_id + r.seats <= id);
        let r = self.rows.get(row)?;
        Some(SeatPlace {
            row: row as u32,
            position: r.position_of(id - r.first_id),
        })
    }

    /// The row of seat `id` (a valid id).
    pub fn row_of(&self, id: u32) -> Option<&Row> {
        self.place(id).map(|p| &self.rows[p.row as usize])
    }

    /// `<section>-<row>-<label>`, e.g. `A-2-103`.
    pub fn seat_name(&self, id: u32) -> String {
        match self.place(id) {
            Some(p) => {
                let row = &self.rows[p.row as usize];
                let section = &self.sections[row.section as usize].name;
                let label = row.first + i64::from(p.position) - 1;
                format!("{section}-{}-{label}", row.name)
            }
            None => format!("#{id}"),
        }
    }

    /// The category of seat `id`.
    pub fn category_of(&self, id: u32) -> Option<&str> {
        let row = self.row_of(id)?;
        Some(&self.categories[row.category as usize])
    }

    /// Whether seat `id` is a wheelchair space.
    pub fn is_accessible(&self, id: u32) -> bool {
        match self.place(id) {
            Some(p) => self.rows[p.row as usize].spot(p.position) == Spot::Accessible,
            None => false,
        }
    }

    /// The index of the section named `name`.
    pub fn section_index(&self, name: &str) -> Option<u32> {
        self.sections
            .iter()
            .position(|s| s.name == name)
            .map(|i| i as u32)
    }

    /// The index of the category named `name`.
    pub fn category_index(&self, name: &str) -> Option<u32> {
        self.categories
            .iter()
            .position(|c| c == name)
            .map(|i| i as u32)
    }

    /// The stored form: every default filled in, each row's `first_id`.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(self.rows.len() * 128 + 16);
        out.push_str("{\"sections\":[");
        for (i, section) in self.sections.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!(
                "{{\"name\":\"{}\",\"category\":\"{}\",\"rows\":[",
                section.name, self.categories[section.category as usize]
            ));
            let rows = &self.rows[section.rows.0 as usize..section.rows.1 as usize];
            for (j, row) in rows.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                self.row_json(row, &mut out);
            }
            out.push_str("]}");
        }
        out.push_str("]}");
        out
    }

    fn row_json(&self, row: &Row, out: &mut String) {
        let list = |v: &[u32]| {
            let items: Vec<String> = v.iter().map(u32::to_string).collect();
            items.join(",")
        };
        let center = match row.center2 % 2 {
            0 => format!("{}", row.center2 / 2),
            _ => format!("{}.5", row.center2 / 2),
        };
        out.push_str(&format!(
            "{{\"name\":\"{}\",\"seats\":{},\"first\":{},\"blocked\":[{}],\"accessible\":[{}],\"rank\":{},\"center\":{center},\"category\":\"{}\",\"first_id\":{}}}",
            row.name,
            row.positions,
            row.first,
            list(&row.blocked),
            list(&row.accessible),
            row.rank,
            self.categories[row.category as usize],
            row.first_id
        ));
    }
}

/// Builds a [`Layout`] from the raw JSON values, checking each rule.
fn build(raw: RawLayout) -> Result<Layout, LayoutError> {
    if raw.sections.is_empty() {
        return bad("a layout needs at least one section");
    }
    if raw.sections.len() > MAX_SECTIONS {
        return bad(format!(
            "{} sections is more than {MAX_SECTIONS}",
            raw.sections.len()
        ));
    }
    let mut layout = Layout {
        sections: Vec::with_capacity(raw.sections.len()),
        rows: Vec::new(),
        categories: Vec::new(),
        by_rank: Vec::new(),
        total: 0,
    };
    for section in raw.sections {
        add_section(&mut layout, section)?;
    }
    unique_seat_names(&layout)?;
    let mut by_rank: Vec<u32> = (0..layout.rows.len() as u32).collect();
    by_rank.sort_by_key(|i| (layout.rows[*i as usize].rank, *i));
    layout.by_rank = by_rank;
    Ok(layout)
}

/// No two seats share a name. A name is `<section>-<row>-<label>` and a
/// label has no `-`, so two rows' names can meet only when their
/// `<section>-<row>` do (section `A` row `1-2`, section `A-1` row `2`):
/// then their labels must not.
fn unique_seat_names(layout: &Layout) -> Result<(), LayoutError> {
    let mut rows_by_prefix: std::collections::HashMap<String, Vec<&Row>> =
        std::collections::HashMap::new();
    for row in &layout.rows {
        let section = &layout.sections[row.section as usize].name;
        rows_by_prefix
            .entry(format!("{section}-{}", row.name))
            .or_default()
            .push(row);
    }
    for (prefix, rows) in rows_by_prefix.iter().filter(|(_, rows)| rows.len() > 1) {
        let mut labels = std::collections::HashSet::new();
        for row in rows {
            for position in (1..=row.positions).filter(|p| row.spot(*p) != Spot::Blocked) {
                let label = row.first + i64::from(position) - 1;
                if !labels.insert(label) {
                    return bad(format!(
                        "two seats would be named {prefix}-{label}: a section and row name that meet at a '-' (rename one)"
                    ));
                }
            }
        }
    }
    Ok(())
}

fn category(layout: &mut Layout, name: &str) -> Result<u32, LayoutError> {
    check_name("category", name, 32)?;
    Ok(match layout.category_index(name) {
        Some(i) => i,
        None => {
            layout.categories.push(name.to_owned());
            layout.categories.len() as u32 - 1
        }
    })
}

fn add_section(layout: &mut Layout, raw: RawSection) -> Result<(), LayoutError> {
    check_name("section name", &raw.name, 16)?;
    if layout.sections.iter().any(|s| s.name == raw.name) {
        return bad(format!("section name {:?} given twice", raw.name));
    }
    if raw.rows.is_empty() {
        return bad(format!("section {} has no rows", raw.name));
    }
    if raw.rows.len() > MAX_ROWS {
        return bad(format!(
            "section {} has {} rows, more than {MAX_ROWS}",
            raw.name,
            raw.rows.len()
        ));
    }
    let cat = category(layout, raw.category.as_deref().unwrap_or(DEFAULT_CATEGORY))?;
    let index = layout.sections.len() as u32;
    let first_row = layout.rows.len() as u32;
    for (i, row) in raw.rows.iter().enumerate() {
        if raw.rows[..i].iter().any(|r| r.name == row.name) {
            return bad(format!(
                "row name {:?} given twice in section {}",
                row.name, raw.name
            ));
        }
    }
    layout.sections.push(Section {
        name: raw.name.clone(),
        category: cat,
        rows: (first_row, first_row),
    });
    for row in raw.rows {
        add_row(layout, index, cat, row)?;
    }
    layout.sections[index as usize].rows.1 = layout.rows.len() as u32;
    Ok(())
}

fn add_row(layout: &mut Layout, section: u32, cat: u32, raw: RawRow) -> Result<(), LayoutError> {
    let where_ = format!("{}-{}", layout.sections[section as usize].name, raw.name);
    check_name("row name", &raw.name, 16)?;
    let first = check_span(&where_, &raw)?;
    let blocked = positions_list("blocked", &where_, raw.blocked, raw.seats)?;
    let accessible = positions_list("accessible", &where_, raw.accessible, raw.seats)?;
    if let Some(p) = accessible.iter().find(|p| blocked.binary_search(p).is_ok()) {
        return bad(format!(
            "row {where_}: position {p} is both blocked and accessible"
        ));
    }
    let index = layout.rows.len() as i64;
    let rank = raw.rank.unwrap_or(index);
    if !(0..=MAX_RANK).contains(&rank) {
        return bad(format!(
            "row {where_}: rank {rank} is outside 0..={MAX_RANK}"
        ));
    }
    let center2 = center2(&where_, raw.center, raw.seats)?;
    let category = match &raw.category {
        Some(name) => category(layout, name)?,
        None => cat,
    };
    let seats = raw.seats as u32 - blocked.len() as u32;
    let first_id = layout.total + 1;
    if layout.total + seats > MAX_SEATS {
        return bad(format!("more than {MAX_SEATS} seats"));
    }
    if let Some(given) = raw.first_id.filter(|g| *g != i64::from(first_id)) {
        return bad(format!(
            "row {where_}: first_id {given} is not its first seat id {first_id}"
        ));
    }
    let spots = spots(raw.seats as usize, &blocked, &accessible);
    layout.total += seats;
    layout.rows.push(Row {
        section,
        name: raw.name,
        positions: raw.seats as u32,
        first,
        blocked,
        accessible,
        rank,
        center2,
        category,
        first_id,
        seats,
        spots,
    });
    Ok(())
}

/// What each position is.
fn spots(positions: usize, blocked: &[u32], accessible: &[u32]) -> Vec<Spot> {
    let mut spots = vec![Spot::Seat; positions];
    accessible
        .iter()
        .for_each(|p| spots[*p as usize - 1] = Spot::Accessible);
    blocked
        .iter()
        .for_each(|p| spots[*p as usize - 1] = Spot::Blocked);
    spots
}

/// The row's positions are `1..=1000` and its labels start in
/// `0..=MAX_LABEL`; returns the first label.
fn check_span(row: &str, raw: &RawRow) -> Result<i64, LayoutError> {
    if !(1..=MAX_POSITIONS).contains(&raw.seats) {
        return bad(format!(
            "row {row}: seats {} is outside 1..={MAX_POSITIONS}",
            raw.seats
        ));
    }
    let first = raw.first.unwrap_or(1);
    if !(0..=MAX_LABEL).contains(&first) {
        return bad(format!(
            "row {row}: first {first} is outside 0..={MAX_LABEL}"
        ));
    }
    Ok(first)
}

/// Twice the row's center: a multiple of 0.5 in `1..=seats`, default
/// `(seats + 1) / 2`.
fn center2(row: &str, center: Option<f64>, seats: i64) -> Result<i64, LayoutError> {
    let Some(c) = center else {
        return Ok(seats + 1);
    };
    let twice = c * 2.0;
    if !(twice.fract() == 0.0 && c >= 1.0 && c <= seats as f64) {
        return bad(format!(
            "row {row}: center {c} must be a multiple of 0.5 in 1..={seats}"
        ));
    }
    Ok(twice as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HALL: &str = r#"{"sections": [
      {"name": "A", "category": "front", "rows": [
        {"name": "1", "seats": 20},
        {"name": "2", "seats": 24, "first": 101, "blocked": [12, 13],
         "accessible": [1, 24], "rank": 0, "center": 12.5, "category": "box"}]}]}"#;

    #[test]
    fn the_spec_example_parses_with_its_defaults() {
        let l = Layout::parse(HALL).unwrap();
        assert_eq!(l.total, 42);
        assert_eq!(l.categories, ["front", "box"]);
        let (r1, r2) = (&l.rows[0], &l.rows[1]);
        assert_eq!((r1.rank, r1.center2, r1.first, r1.first_id), (0, 21, 1, 1));
        assert_eq!(
            (r2.rank, r2.center2, r2.first, r2.first_id),
            (0, 25, 101, 21)
        );
        assert_eq!(l.by_rank, [0, 1]);
        // Row 2: positions 1..=11 are ids 21..=31, 14..=24 are 32..=42.
        assert_eq!(l.seat_name(21), "A-2-101");
        assert_eq!(l.seat_name(31), "A-2-111");
        assert_eq!(l.seat_name(32), "A-2-114");
        assert_eq!(l.seat_name(42), "A-2-124");
        assert_eq!(l.seat_name(20), "A-1-20");
        assert_eq!(r2.id_at(14), 32);
        assert!(l.is_accessible(21) && l.is_accessible(42) && !l.is_accessible(22));
        assert_eq!(l.category_of(5), Some("front"));
        assert_eq!(l.category_of(40), Some("box"));
        assert!(l.place(0).is_none() && l.place(43).is_none());
        assert!(l.check_total(42).is_ok());
        let err = l.check_total(40).unwrap_err().0;
        assert!(err.contains("40") && err.contains("42"), "{err}");
    }

    #[test]
    fn the_stored_form_round_trips() {
        let l = Layout::parse(HALL).unwrap();
        let stored = l.to_json();
        assert!(stored.contains("\"first_id\":21"), "{stored}");
        assert!(stored.contains("\"center\":12.5"), "{stored}");
        assert!(stored.contains("\"center\":10.5"), "{stored}");
        assert_eq!(Layout::parse(&stored), Ok(l.clone()));
        let wrong = stored.replace("\"first_id\":21", "\"first_id\":22");
        assert!(Layout::parse(&wrong).unwrap_err().0.contains("first_id 22"));
    }

    fn err(json: &str) -> String {
        Layout::parse(json).unwrap_err().0
    }

    fn one_row(row: &str) -> String {
        format!(r#"{{"sections":[{{"name":"A","rows":[{row}]}}]}}"#)
    }

    #[test]
    fn every_rule_is_checked_with_a_clear_message() {
        let cases = [
            (one_row(r#"{"name":"1","seats":5,"colour":"red"}"#), "unknown field `colour`"),
            (r#"{"sections":[],"extra":1}"#.to_string(), "unknown field `extra`"),
            (r#"{"sections":[]}"#.to_string(), "at least one section"),
            (one_row(r#"{"name":"1 2","seats":5}"#), "row name \"1 2\""),
            (one_row(r#"{"name":"","seats":5}"#), "row name \"\""),
            (one_row(r#"{"name":"12345678901234567","seats":5}"#), "1-16 bytes"),
            (one_row(r#"{"name":"1","seats":0}"#), "seats 0 is outside 1..=1000"),
            (one_row(r#"{"name":"1","seats":1001}"#), "seats 1001"),
            (one_row(r#"{"name":"1","seats":5,"blocked":[6]}"#), "blocked position 6 is outside 1..=5"),
            (one_row(r#"{"name":"1","seats":5,"accessible":[0]}"#), "accessible position 0"),
            (one_row(r#"{"name":"1","seats":5,"blocked":[2,2]}"#), "given twice"),
            (one_row(r#"{"name":"1","seats":5,"blocked":[2],"accessible":[2]}"#), "both blocked and accessible"),
            (one_row(r#"{"name":"1","seats":5,"center":2.25}"#), "center 2.25"),
            (one_row(r#"{"name":"1","seats":5,"center":0.5}"#), "center 0.5"),
            (one_row(r#"{"name":"1","seats":5,"center":5.5}"#), "center 5.5"),
            (one_row(r#"{"name":"1","seats":5,"rank":-1}"#), "rank -1"),
            (one_row(r#"{"name":"1","seats":5,"first":-3}"#), "first -3"),
            (one_row(r#"{"name":"1","seats":5,"category":"x y"}"#), "category \"x y\""),
            (one_row(r#"{"name":"1","seats":5},{"name":"1","seats":3}"#), "row name \"1\" given twice"),
            (r#"{"sections":[{"name":"A","rows":[{"name":"1","seats":1}]},{"name":"A","rows":[{"name":"1","seats":1}]}]}"#.to_string(), "section name \"A\" given twice"),
            (r#"{"sections":[{"name":"A","rows":[]}]}"#.to_string(), "has no rows"),
            (one_row(r#"{"name":"1","seats":"5"}"#), "sections[0].rows[0].seats: expected an integer, got a string \"5\""),
            ("[]".to_string(), "a layout is a JSON object"),
            (r#"{"sections":[1]}"#.to_string(), "sections[0]: expected a section: an object with \"name\" and \"rows\", got the number 1"),
            (one_row(r#"{"name":"1","seats":5,"blocked":3}"#), "sections[0].rows[0].blocked: expected a list, got the number 3"),
            (one_row(r#"{"name":"1","seats":5,"blocked":[1.5]}"#), "blocked[0]: expected an integer, got the number 1.5"),
            (one_row(r#"{"name":"1","seats":5,"center":"x"}"#), "center: expected a number"),
            (r#"{"sections":[{"name":"A","rows":[{"name":"1-2","seats":2}]},{"name":"A-1","rows":[{"name":"2","seats":2}]}]}"#.to_string(), "two seats would be named A-1-2-1"),
            (r#"{"sections":[]} x"#.to_string(), "trailing characters"),
            ("{\"sections\":[[[[[[[1]]]]]]]}".to_string(), "nested deeper than 6"),
            (" ".repeat(MAX_LAYOUT_BYTES + 1), "more than the 4194304"),
            ("{".to_string(), "EOF"),
        ];
        for (json, want) in cases {
            let e = err(&json);
            assert!(e.contains(want), "{}: {e}", &json[..json.len().min(80)]);
        }
        // Depth counts brackets outside strings only.
        assert!(Layout::parse(&one_row(r#"{"name":"1","seats":5,"category":"a"}"#)).is_ok());
        assert_eq!(depth(br#"{"a":"[[[[[[[[["}"#), 1);
        assert_eq!(depth(br#"{"a":"\"[[[[[[[[["}"#), 1);
    }

    #[test]
    fn rows_that_meet_at_a_dash_may_share_a_prefix_when_labels_differ() {
        let json = r#"{"sections":[{"name":"A","rows":[{"name":"1-2","seats":2}]},{"name":"A-1","rows":[{"name":"2","seats":2,"first":3}]}]}"#;
        let l = Layout::parse(json).unwrap();
        assert_eq!(
            (l.seat_name(2), l.seat_name(3)),
            ("A-1-2-2".into(), "A-1-2-3".into())
        );
    }

    #[test]
    fn the_stored_form_is_held_to_the_size_limit() {
        // 160,000 one-seat rows: about 2 MB sent, about 20 MB stored.
        let rows: Vec<String> = (0..1000)
            .map(|i| format!(r#"{{"name":"{i}","seats":1}}"#))
            .collect();
        let sections: Vec<String> = (0..160)
            .map(|i| format!(r#"{{"name":"S{i}","rows":[{}]}}"#, rows.join(",")))
            .collect();
        let json = format!(r#"{{"sections":[{}]}}"#, sections.join(","));
        assert!(json.len() < MAX_LAYOUT_BYTES);
        let e = Layout::stored(&json, 160_000).unwrap_err().0;
        assert!(e.contains("stored form") && e.contains("4194304"), "{e}");
        let small = Layout::stored(HALL, 42).unwrap();
        assert_eq!(Layout::parse(&small).map(|l| l.total), Ok(42));
        assert!(Layout::stored(HALL, 41).unwrap_err().0.contains("41"));
    }

    #[test]
    fn limits_of_sections_rows_and_seats() {
        let rows: Vec<String> = (0..1001)
            .map(|i| format!(r#"{{"name":"{i}","seats":1}}"#))
            .collect();
        assert!(err(&one_row(&rows.join(","))).contains("1001 rows, more than 1000"));
        let sections: Vec<String> = (0..1001)
            .map(|i| format!(r#"{{"name":"S{i}","rows":[{{"name":"1","seats":1}}]}}"#))
            .collect();
        let json = format!(r#"{{"sections":[{}]}}"#, sections.join(","));
        assert!(err(&json).contains("1001 sections"));
        let rows: Vec<String> = (0..201)
            .map(|i| format!(r#"{{"name":"{i}","seats":1000}}"#))
            .collect();
        assert!(err(&one_row(&rows.join(","))).contains("more than 200000 seats"));
    }

    #[test]
    fn a_fully_blocked_row_has_no_seats_and_ids_skip_it() {
        let l = Layout::parse(&one_row(
            r#"{"name":"1","seats":2},{"name":"2","seats":2,"blocked":[1,2]},{"name":"3","seats":2}"#,
        ))
        .unwrap();
        assert_eq!(l.total, 4);
        assert_eq!(l.seat_name(3), "A-3-1");
        assert_eq!(l.place(3).map(|p| p.row), Some(2));
    }
}

package io.ticketgate;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A seated event's layout as {@code TICKET.LAYOUT} reports it (every default filled in): seat ids
 * 1..{@link #total()} in layout order (section, row, position; blocked positions skipped).
 *
 * @param sections the sections, in layout order
 */
public record Layout(List<Section> sections) {

  public Layout {
    sections = List.copyOf(sections);
  }

  /**
   * One section.
   *
   * @param name its name
   * @param category its rows' default category
   * @param rows its rows, in order
   */
  public record Section(String name, String category, List<Row> rows) {
    public Section {
      rows = List.copyOf(rows);
    }
  }

  /**
   * One row.
   *
   * @param name its name
   * @param seats positions, blocked ones included
   * @param first the label of position 1
   * @param blocked positions with no seat
   * @param accessible wheelchair spaces (positions)
   * @param rank the row's quality, lower is better
   * @param center its best position
   * @param category its category
   * @param firstId the seat id of its first seat
   */
  public record Row(
      String name,
      int seats,
      long first,
      List<Integer> blocked,
      List<Integer> accessible,
      long rank,
      double center,
      String category,
      long firstId) {
    public Row {
      blocked = List.copyOf(blocked);
      accessible = List.copyOf(accessible);
    }

    /** The position of the row's n-th seat (0-based), blocked positions skipped; 0 if none. */
    int position(long n) {
      for (int p = 1; p <= seats; p++) {
        if (!blocked.contains(p) && n-- == 0) {
          return p;
        }
      }
      return 0;
    }
  }

  /**
   * Where a seat id is.
   *
   * @param id the seat id
   * @param section its section's name
   * @param row its row's name
   * @param position its 1-based position in the row
   * @param label its label
   * @param category its category
   * @param accessible whether it is a wheelchair space
   */
  public record Seat(
      long id,
      String section,
      String row,
      int position,
      long label,
      String category,
      boolean accessible) {
    /** {@code A-2-103}: section, row and label. */
    public String name() {
      return section + "-" + row + "-" + label;
    }
  }

  /** The number of seats. */
  public long total() {
    long n = 0;
    for (Section s : sections) {
      for (Row r : s.rows()) {
        n += r.seats() - r.blocked().size();
      }
    }
    return n;
  }

  /** Every category, in layout order. */
  public List<String> categories() {
    LinkedHashSet<String> out = new LinkedHashSet<>();
    sections.forEach(s -> s.rows().forEach(r -> out.add(r.category())));
    return List.copyOf(out);
  }

  /** The seat of an id, or empty for an id not in the layout. */
  public Optional<Seat> seat(long id) {
    for (Section s : sections) {
      for (Row r : s.rows()) {
        long n = id - r.firstId();
        if (n < 0 || n >= r.seats() - r.blocked().size()) {
          continue;
        }
        int p = r.position(n);
        return Optional.of(
            new Seat(
                id,
                s.name(),
                r.name(),
                p,
                r.first() + p - 1,
                r.category(),
                r.accessible().contains(p)));
      }
    }
    return Optional.empty();
  }

  /** {@code A-2-103}: the name of a seat id; {@link IllegalArgumentException} if not in it. */
  public String seatName(long id) {
    return seat(id)
        .orElseThrow(() -> new IllegalArgumentException("seat id " + id + " is not in the layout"))
        .name();
  }

  /** The layout from {@code TICKET.LAYOUT}'s JSON. */
  static Layout parse(String json) {
    Map<?, ?> doc = (Map<?, ?>) Json.parse(json);
    List<Section> sections = new ArrayList<>();
    for (Object s : (List<?>) doc.get("sections")) {
      Map<?, ?> section = (Map<?, ?>) s;
      List<Row> rows = new ArrayList<>();
      for (Object r : (List<?>) section.get("rows")) {
        rows.add(row((Map<?, ?>) r));
      }
      sections.add(
          new Section((String) section.get("name"), (String) section.get("category"), rows));
    }
    return new Layout(sections);
  }

  private static Row row(Map<?, ?> r) {
    return new Row(
        (String) r.get("name"),
        ((Number) r.get("seats")).intValue(),
        ((Number) r.get("first")).longValue(),
        ints(r.get("blocked")),
        ints(r.get("accessible")),
        ((Number) r.get("rank")).longValue(),
        ((Number) r.get("center")).doubleValue(),
        (String) r.get("category"),
        ((Number) r.get("first_id")).longValue());
  }

  private static List<Integer> ints(Object list) {
    List<Integer> out = new ArrayList<>();
    for (Object n : (List<?>) list) {
      out.add(((Number) n).intValue());
    }
    return out;
  }
}

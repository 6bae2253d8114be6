package io.ticketgate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The options of a claim of several tickets, built fluently: {@code
 * ClaimOptions.count(4).section("A").accessible(1)}. Each call returns a new value; they are sent
 * in the order COUNT HOLD SECTION CATEGORY ACCESSIBLE SPLIT FROM KEY whatever the order of the
 * calls. On a seated event the claim takes the best {@code count} seats together ({@link
 * NotTogetherException} if none are).
 */
public final class ClaimOptions {
  private final int count;
  private final Long hold;
  private final String section;
  private final String category;
  private final Integer accessible;
  private final boolean split;
  private final String from;
  private final String key;

  private ClaimOptions(
      int count,
      Long hold,
      String section,
      String category,
      Integer accessible,
      boolean split,
      String from,
      String key) {
    this.count = count;
    this.hold = hold;
    this.section = section;
    this.category = category;
    this.accessible = accessible;
    this.split = split;
    this.from = from;
    this.key = key;
  }

  /** {@code count} tickets (seats), all or nothing. */
  public static ClaimOptions count(int count) {
    return new ClaimOptions(count, null, null, null, null, false, null, null);
  }

  /** Holds them this long (overrides the event's default; zero: a final sale). */
  public ClaimOptions hold(Duration hold) {
    return new ClaimOptions(
        count, hold.toMillis(), section, category, accessible, split, from, key);
  }

  /** A seated event: only rows of this section. */
  public ClaimOptions section(String name) {
    return new ClaimOptions(count, hold, name, category, accessible, split, from, key);
  }

  /** A seated event: only rows of this category. */
  public ClaimOptions category(String name) {
    return new ClaimOptions(count, hold, section, name, accessible, split, from, key);
  }

  /** A seated event: at least this many wheelchair spaces (without it, none are taken). */
  public ClaimOptions accessible(int spaces) {
    return new ClaimOptions(count, hold, section, category, spaces, split, from, key);
  }

  /** A seated event: the best single seats when {@code count} are not together. */
  public ClaimOptions split() {
    return new ClaimOptions(count, hold, section, category, accessible, true, from, key);
  }

  /**
   * Only from this allocation, which was made without a key: {@link SoldOutException} naming it
   * when it has too few, {@link NoAllocationException} for an unknown name.
   */
  public ClaimOptions from(String allocation) {
    return from(allocation, null);
  }

  /**
   * Only from this allocation, with its key ({@link NoKeyException} without the right one; null:
   * none).
   */
  public ClaimOptions from(String allocation, String secret) {
    return new ClaimOptions(count, hold, section, category, accessible, split, allocation, secret);
  }

  /** The options as command arguments, in the module's documented order. */
  List<String> words() {
    List<String> words = new ArrayList<>(List.of("COUNT", Integer.toString(count)));
    if (hold != null) {
      words.addAll(List.of("HOLD", Long.toString(hold)));
    }
    addText(words, "SECTION", section);
    addText(words, "CATEGORY", category);
    if (accessible != null) {
      words.addAll(List.of("ACCESSIBLE", Integer.toString(accessible)));
    }
    if (split) {
      words.add("SPLIT");
    }
    addText(words, "FROM", from);
    addText(words, "KEY", key);
    return words;
  }

  /** Adds {@code word value} when the value is given. */
  static void addText(List<String> words, String word, String value) {
    if (value != null) {
      words.addAll(List.of(word, value));
    }
  }

  /** Adds {@code SEATS id ...}: last, as the module takes every id after it. */
  static void addSeats(List<String> words, List<Long> seats) {
    words.add("SEATS");
    seats.forEach(id -> words.add(Long.toString(id)));
  }
}

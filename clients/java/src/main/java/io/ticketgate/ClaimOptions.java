package io.ticketgate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The options of a claim of several tickets, built fluently: {@code
 * ClaimOptions.count(4).section("A").accessible(1)}. Each call returns a new value; they are sent
 * in the order COUNT HOLD SECTION CATEGORY ACCESSIBLE SPLIT whatever the order of the calls. On a
 * seated event the claim takes the best {@code count} seats together ({@link NotTogetherException}
 * if none are).
 */
public final class ClaimOptions {
  private final int count;
  private final Long hold;
  private final String section;
  private final String category;
  private final Integer accessible;
  private final boolean split;

  private ClaimOptions(
      int count, Long hold, String section, String category, Integer accessible, boolean split) {
    this.count = count;
    this.hold = hold;
    this.section = section;
    this.category = category;
    this.accessible = accessible;
    this.split = split;
  }

  /** {@code count} tickets (seats), all or nothing. */
  public static ClaimOptions count(int count) {
    return new ClaimOptions(count, null, null, null, null, false);
  }

  /** Holds them this long (overrides the event's default; zero: a final sale). */
  public ClaimOptions hold(Duration hold) {
    return new ClaimOptions(count, hold.toMillis(), section, category, accessible, split);
  }

  /** A seated event: only rows of this section. */
  public ClaimOptions section(String name) {
    return new ClaimOptions(count, hold, name, category, accessible, split);
  }

  /** A seated event: only rows of this category. */
  public ClaimOptions category(String name) {
    return new ClaimOptions(count, hold, section, name, accessible, split);
  }

  /** A seated event: at least this many wheelchair spaces (without it, none are taken). */
  public ClaimOptions accessible(int spaces) {
    return new ClaimOptions(count, hold, section, category, spaces, split);
  }

  /** A seated event: the best single seats when {@code count} are not together. */
  public ClaimOptions split() {
    return new ClaimOptions(count, hold, section, category, accessible, true);
  }

  /** The options as command arguments, in the module's documented order. */
  List<String> words() {
    List<String> words = new ArrayList<>(List.of("COUNT", Integer.toString(count)));
    if (hold != null) {
      words.addAll(List.of("HOLD", Long.toString(hold)));
    }
    if (section != null) {
      words.addAll(List.of("SECTION", section));
    }
    if (category != null) {
      words.addAll(List.of("CATEGORY", category));
    }
    if (accessible != null) {
      words.addAll(List.of("ACCESSIBLE", Integer.toString(accessible)));
    }
    if (split) {
      words.add("SPLIT");
    }
    return words;
  }
}

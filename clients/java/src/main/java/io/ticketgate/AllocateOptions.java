package io.ticketgate;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * What {@link TicketGate#allocate} sets aside, built fluently: {@code
 * AllocateOptions.count(4).section("A").key("s3cret").release(at)} or {@code
 * AllocateOptions.seats(List.of(9L, 10L))}. Each call returns a new value; they are sent in the
 * order COUNT SECTION CATEGORY KEY RELEASE SEATS whatever the order of the calls.
 */
public final class AllocateOptions {
  private final Integer count;
  private final List<Long> seats;
  private final String section;
  private final String category;
  private final String key;
  private final Long release;

  private AllocateOptions(
      Integer count, List<Long> seats, String section, String category, String key, Long release) {
    this.count = count;
    this.seats = seats;
    this.section = section;
    this.category = category;
    this.key = key;
    this.release = release;
  }

  /** The {@code count} lowest free tickets; on a seated event free seats in SPLIT order. */
  public static AllocateOptions count(int count) {
    return new AllocateOptions(count, null, null, null, null, null);
  }

  /** Exactly these free seats (ids). */
  public static AllocateOptions seats(List<Long> seats) {
    return new AllocateOptions(null, List.copyOf(seats), null, null, null, null);
  }

  /** A seated event, with a count: only seats of this section. */
  public AllocateOptions section(String name) {
    return new AllocateOptions(count, seats, name, category, key, release);
  }

  /** A seated event, with a count: only seats of this category. */
  public AllocateOptions category(String name) {
    return new AllocateOptions(count, seats, section, name, key, release);
  }

  /** The secret a claim from this allocation must give ({@link ClaimOptions#from}). */
  public AllocateOptions key(String secret) {
    return new AllocateOptions(count, seats, section, category, secret, release);
  }

  /** What is still free at this time goes back to public sale. */
  public AllocateOptions release(Instant at) {
    return new AllocateOptions(count, seats, section, category, key, at.toEpochMilli());
  }

  /** The options as command arguments, SEATS last (the module takes every id after it). */
  List<String> words() {
    List<String> words = new ArrayList<>();
    if (count != null) {
      words.addAll(List.of("COUNT", Integer.toString(count)));
    }
    ClaimOptions.addText(words, "SECTION", section);
    ClaimOptions.addText(words, "CATEGORY", category);
    ClaimOptions.addText(words, "KEY", key);
    if (release != null) {
      words.addAll(List.of("RELEASE", Long.toString(release)));
    }
    if (seats != null) {
      ClaimOptions.addSeats(words, seats);
    }
    return words;
  }
}

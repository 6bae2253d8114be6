package io.ticketgate;

import java.util.Map;
import java.util.Optional;

/**
 * An event's state as {@code TICKET.STATUS} reports it. Times are unix milliseconds (0 = none).
 *
 * @param total tickets of the event, numbered 1..=total
 * @param remaining free tickets
 * @param claimed held + sold tickets
 * @param status {@code open} or {@code closed} (a string, so that states added later still read)
 * @param opensAt claims are refused before this time
 * @param closesAt claims are refused from this time on
 * @param unsynced log entries not yet drained to MySQL
 * @param held tickets in live holds
 * @param waiting length of the waiting list
 * @param incarnation the event's incarnation, when the server reports one
 * @param draw a draw event's commitment, hex(SHA-256(seed)), published from the start
 * @param seed a draw event's seed (64 hex digits), once drawn
 * @param admit a draw event's most offers per second, when set
 * @param categories a seated event's free seats per category, in layout order (every category)
 * @param accessible a seated event's free wheelchair spaces
 * @param allocated free allocated tickets (not in {@code remaining}), when there are any
 * @param resale tickets listed for resale that no buyer holds (in {@code claimed}); 0 when none
 */
public record Status(
    long total,
    long remaining,
    long claimed,
    String status,
    long opensAt,
    long closesAt,
    long unsynced,
    long held,
    long waiting,
    Optional<String> incarnation,
    Optional<String> draw,
    Optional<String> seed,
    Optional<Long> admit,
    Optional<Map<String, Long>> categories,
    Optional<Long> accessible,
    Optional<Long> allocated,
    long resale) {

  /** Whether a draw event has drawn (its seed is revealed). */
  public boolean isDrawn() {
    return seed.isPresent();
  }

  /** Whether the event accepts claims as far as its status goes. */
  public boolean isOpen() {
    return "open".equals(status);
  }
}

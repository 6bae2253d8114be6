package io.ticketgate;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The options of {@code TICKET.INIT}, built fluently from {@link #defaults()}: {@code
 * InitOptions.defaults().hold(Duration.ofMinutes(15)).limit(4)}. Each call returns a new value;
 * they are sent in the order OPENS CLOSES HOLD LIMIT OFFER DRAW ADMIT TRANSFER_UNTIL SEATS whatever
 * the order of the calls.
 */
public final class InitOptions {
  private static final String[] NAMES = {
    "OPENS", "CLOSES", "HOLD", "LIMIT", "OFFER", "DRAW", "ADMIT", "TRANSFER_UNTIL"
  };
  private static final int OPENS = 0;
  private static final int CLOSES = 1;
  private static final int HOLD = 2;
  private static final int LIMIT = 3;
  private static final int OFFER = 4;

  /** The one option sent as a bare flag. */
  private static final int DRAW = 5;

  private static final int ADMIT = 6;
  private static final int TRANSFER_UNTIL = 7;

  private final Long[] values;

  /** A seated event's layout (JSON), or null. */
  private final String layout;

  private InitOptions(Long[] values, String layout) {
    this.values = values;
    this.layout = layout;
  }

  /** No options: open now, never closes, claims are final sales, one ticket per user. */
  public static InitOptions defaults() {
    return new InitOptions(new Long[NAMES.length], null);
  }

  /**
   * A seated event: {@code layoutJson} is its layout (sections of rows, see the module's
   * docs/commands.md), the event's total its number of seats.
   */
  public InitOptions seats(String layoutJson) {
    return new InitOptions(values, layoutJson);
  }

  /** Claims are refused ({@link NotOpenException}) before this time. */
  public InitOptions opensAt(Instant at) {
    return with(OPENS, at.toEpochMilli());
  }

  /** Claims are refused ({@link ClosedException}) from this time on. */
  public InitOptions closesAt(Instant at) {
    return with(CLOSES, at.toEpochMilli());
  }

  /** A claim holds its tickets this long until confirmed (zero: claims are final sales). */
  public InitOptions hold(Duration hold) {
    return with(HOLD, hold.toMillis());
  }

  /** The most tickets one user may hold (default 1). */
  public InitOptions limit(int perUser) {
    return with(LIMIT, perUser);
  }

  /** How long an offer to the head of the waiting list is held. */
  public InitOptions offer(Duration offer) {
    return with(OFFER, offer.toMillis());
  }

  /**
   * A draw event (needs {@link #hold} &gt; 0 or {@link #offer}): created not yet open, it opens and
   * draws the order of those who entered ({@code waitFor}) at {@code open} or at {@link #opensAt}.
   */
  public InitOptions draw() {
    return with(DRAW, 1);
  }

  /** A draw event's most offers per second (1..=1,000,000). */
  public InitOptions admit(int perSecond) {
    return with(ADMIT, perSecond);
  }

  /**
   * No {@link TicketGate#transfer} after this time ({@link ClosedException}; default {@link
   * #closesAt}; closing the event alone does not stop transfers).
   */
  public InitOptions transferUntil(Instant at) {
    return with(TRANSFER_UNTIL, at.toEpochMilli());
  }

  /** The options as command arguments, in the module's documented order. */
  List<String> words() {
    List<String> words = new ArrayList<>();
    for (int i = 0; i < NAMES.length; i++) {
      if (values[i] != null) {
        words.add(NAMES[i]);
        if (i != DRAW) {
          words.add(Long.toString(values[i]));
        }
      }
    }
    if (layout != null) {
      words.add("SEATS");
      words.add(layout);
    }
    return words;
  }

  private InitOptions with(int option, long value) {
    Long[] next = values.clone();
    next[option] = value;
    return new InitOptions(next, layout);
  }
}

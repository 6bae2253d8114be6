package io.ticketgate;

/** {@code CORRUPT}: the event's keys hold values the module never writes. */
public final class CorruptException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code CORRUPT}. */
  public CorruptException(String serverMessage) {
    super("CORRUPT", serverMessage);
  }
}

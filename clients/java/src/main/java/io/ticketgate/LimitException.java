package io.ticketgate;

/** {@code LIMIT}: more tickets than the event's per-user limit. */
public final class LimitException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code LIMIT}. */
  public LimitException(String serverMessage) {
    super("LIMIT", serverMessage);
  }
}

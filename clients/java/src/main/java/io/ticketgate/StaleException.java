package io.ticketgate;

/**
 * {@code STALE}: a scan at a generation that is not the ticket's: it was transferred since, so the
 * credential shown is an old one (the message gives the current generation).
 */
public final class StaleException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code STALE}. */
  public StaleException(String serverMessage) {
    super("STALE", serverMessage);
  }
}

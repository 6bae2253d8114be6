package io.ticketgate;

/**
 * {@code NOHOLD}: {@code confirm} for a user who holds nothing (never claimed, cancelled, or
 * expired).
 */
public final class NoHoldException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOHOLD}. */
  public NoHoldException(String serverMessage) {
    super("NOHOLD", serverMessage);
  }
}

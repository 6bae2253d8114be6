package io.ticketgate;

/** {@code CLOSED}: the event was closed, or its closing time has passed. */
public final class ClosedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code CLOSED}. */
  public ClosedException(String serverMessage) {
    super("CLOSED", serverMessage);
  }
}

package io.ticketgate;

/** {@code EXISTS}: {@code init} of an event that already exists. */
public final class ExistsException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code EXISTS}. */
  public ExistsException(String serverMessage) {
    super("EXISTS", serverMessage);
  }
}

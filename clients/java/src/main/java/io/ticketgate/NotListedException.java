package io.ticketgate;

/**
 * {@code NOTLISTED}: an unlist of a ticket that is not listed by the user, or that a buyer holds.
 */
public final class NotListedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOTLISTED}. */
  public NotListedException(String serverMessage) {
    super("NOTLISTED", serverMessage);
  }
}

package io.ticketgate;

/** {@code LISTED}: a transfer of a ticket listed for resale (reserved: resale lands separately). */
public final class ListedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code LISTED}. */
  public ListedException(String serverMessage) {
    super("LISTED", serverMessage);
  }
}

package io.ticketgate;

/**
 * {@code LISTED}: a resell of a ticket listed already, or a transfer (or cancel) of one listed for
 * resale.
 */
public final class ListedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code LISTED}. */
  public ListedException(String serverMessage) {
    super("LISTED", serverMessage);
  }
}

package io.ticketgate;

/**
 * {@code NOTSOLD}: a transfer or scan of a ticket that is not sold: free, held (or the receiver's
 * order is held), listed for resale, or not the giver's.
 */
public final class NotSoldException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOTSOLD}. */
  public NotSoldException(String serverMessage) {
    super("NOTSOLD", serverMessage);
  }
}

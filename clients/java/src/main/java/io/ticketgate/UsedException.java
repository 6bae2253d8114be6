package io.ticketgate;

/**
 * {@code USED}: a scan of a ticket scanned already (the message says when and at which gate), or
 * its transfer.
 */
public final class UsedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code USED}. */
  public UsedException(String serverMessage) {
    super("USED", serverMessage);
  }
}

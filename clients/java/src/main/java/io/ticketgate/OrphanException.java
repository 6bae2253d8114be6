package io.ticketgate;

/**
 * {@code ORPHAN}: the picked seats would leave a single seat alone that another pick of the row
 * would not.
 */
public final class OrphanException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code ORPHAN}. */
  public OrphanException(String serverMessage) {
    super("ORPHAN", serverMessage);
  }
}

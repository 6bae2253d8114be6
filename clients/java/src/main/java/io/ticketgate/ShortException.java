package io.ticketgate;

/**
 * {@code SHORT}: an allocation (or a release of a count) asked for more than is free; nothing
 * changed. The message says how many are.
 */
public final class ShortException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code SHORT}. */
  public ShortException(String serverMessage) {
    super("SHORT", serverMessage);
  }
}

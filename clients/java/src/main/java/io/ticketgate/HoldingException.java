package io.ticketgate;

/** {@code HOLDING}: {@code waitFor} by a user who already holds tickets. */
public final class HoldingException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code HOLDING}. */
  public HoldingException(String serverMessage) {
    super("HOLDING", serverMessage);
  }
}

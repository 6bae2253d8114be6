package io.ticketgate;

/** {@code INCOMPLETE}: a restore committed before it was complete. */
public final class IncompleteException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code INCOMPLETE}. */
  public IncompleteException(String serverMessage) {
    super("INCOMPLETE", serverMessage);
  }
}

package io.ticketgate;

/** {@code TAKEN}: a picked seat is held or sold. */
public final class TakenException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code TAKEN}. */
  public TakenException(String serverMessage) {
    super("TAKEN", serverMessage);
  }
}

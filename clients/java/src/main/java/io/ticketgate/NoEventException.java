package io.ticketgate;

/** {@code NOEVENT}: the event does not exist. */
public final class NoEventException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOEVENT}. */
  public NoEventException(String serverMessage) {
    super("NOEVENT", serverMessage);
  }
}

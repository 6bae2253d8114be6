package io.ticketgate;

/** {@code NOTRESTORING}: a restore step on an event that is not being restored. */
public final class NotRestoringException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOTRESTORING}. */
  public NotRestoringException(String serverMessage) {
    super("NOTRESTORING", serverMessage);
  }
}

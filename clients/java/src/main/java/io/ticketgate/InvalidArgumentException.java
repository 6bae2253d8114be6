package io.ticketgate;

/** {@code ERR}: malformed input (event id, user id, number, option) or wrong arity. */
public final class InvalidArgumentException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code ERR}. */
  public InvalidArgumentException(String serverMessage) {
    super("ERR", serverMessage);
  }
}

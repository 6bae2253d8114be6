package io.ticketgate;

/**
 * {@code NOKEY}: a claim from an allocation without its key (or with a wrong one), or allocating
 * again to a name with another key.
 */
public final class NoKeyException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOKEY}. */
  public NoKeyException(String serverMessage) {
    super("NOKEY", serverMessage);
  }
}

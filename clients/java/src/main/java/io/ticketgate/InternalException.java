package io.ticketgate;

/** {@code INTERNAL}: a bug caught inside the module; nothing changed. */
public final class InternalException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code INTERNAL}. */
  public InternalException(String serverMessage) {
    super("INTERNAL", serverMessage);
  }
}

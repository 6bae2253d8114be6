package io.ticketgate;

/** {@code NOALLOCATION}: the event has no allocation of that name. */
public final class NoAllocationException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOALLOCATION}. */
  public NoAllocationException(String serverMessage) {
    super("NOALLOCATION", serverMessage);
  }
}

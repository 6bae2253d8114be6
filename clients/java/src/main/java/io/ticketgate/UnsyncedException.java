package io.ticketgate;

/** {@code UNSYNCED}: {@code drop} while the event's log still has entries for MySQL. */
public final class UnsyncedException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code UNSYNCED}. */
  public UnsyncedException(String serverMessage) {
    super("UNSYNCED", serverMessage);
  }
}

package io.ticketgate;

/** {@code SOLDOUT}: fewer free tickets than asked for (or others are waiting for them). */
public final class SoldOutException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code SOLDOUT}. */
  public SoldOutException(String serverMessage) {
    super("SOLDOUT", serverMessage);
  }
}

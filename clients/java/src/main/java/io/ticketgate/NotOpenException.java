package io.ticketgate;

/** {@code NOTOPEN}: a claim before the event opens. */
public final class NotOpenException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOTOPEN}. */
  public NotOpenException(String serverMessage) {
    super("NOTOPEN", serverMessage);
  }
}

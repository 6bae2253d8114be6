package io.ticketgate;

/**
 * {@code NOTOGETHER}: a seated claim: no {@code count} seats together where allowed ({@link
 * ClaimOptions#split} takes single seats).
 */
public final class NotTogetherException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code NOTOGETHER}. */
  public NotTogetherException(String serverMessage) {
    super("NOTOGETHER", serverMessage);
  }
}

package io.ticketgate;

/**
 * {@code TRYAGAIN}: the event's keys disagree (a slot migration) or it is being restored; nothing
 * changed, retry.
 */
public final class TryAgainException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code TRYAGAIN}. */
  public TryAgainException(String serverMessage) {
    super("TRYAGAIN", serverMessage);
  }
}

package io.ticketgate;

/**
 * {@code QUEUE}: a claim by a user without an offer while a draw event's drawn entrants still wait;
 * the event sells through its queue: join it with {@code waitFor}.
 */
public final class QueueException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code QUEUE}. */
  public QueueException(String serverMessage) {
    super("QUEUE", serverMessage);
  }
}

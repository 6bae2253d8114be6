package io.ticketgate;

/** {@code QUEUE}: the event sells through its waiting list: join it with {@code waitFor}. */
public final class QueueException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code QUEUE}. */
  public QueueException(String serverMessage) {
    super("QUEUE", serverMessage);
  }
}

package io.ticketgate;

/** {@code WRONGTYPE}: one of the event's keys holds another Redis type. */
public final class WrongTypeException extends TicketGateException {
  private static final long serialVersionUID = 1L;

  /** An error reply whose code is {@code WRONGTYPE}. */
  public WrongTypeException(String serverMessage) {
    super("WRONGTYPE", serverMessage);
  }
}

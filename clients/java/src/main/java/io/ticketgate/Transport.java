package io.ticketgate;

import java.util.List;

/**
 * Sends one command to the event's node through an underlying Redis client and returns the reply
 * normalised: {@code Long}, {@code String}, {@code List<Object>}, {@code Map<String, Object>} (a
 * RESP3 map, in server order) or {@code null}. Error replies are thrown as {@link
 * TicketGateException}.
 */
interface Transport extends AutoCloseable {
  Object send(TicketCommand command, String event, List<String> args);

  /** Releases what the transport opened itself (a connection made from a client). */
  @Override
  void close();
}

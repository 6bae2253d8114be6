package io.ticketgate;

import java.nio.charset.StandardCharsets;

/** The module's commands as sent on the wire; each takes the event as its first argument. */
enum TicketCommand {
  INIT,
  OPEN,
  CLOSE,
  CLAIM,
  CONFIRM,
  CANCEL,
  HOLDER,
  ORDER,
  STATUS,
  DROP,
  WAIT,
  LEAVE,
  POSITION,
  LAYOUT,
  SEATMAP,
  ALLOCATE,
  RELEASE,
  ALLOCATIONS,
  TRANSFER,
  RESELL,
  UNLIST,
  SCAN;

  private final byte[] wireName =
      ("ticket." + name().toLowerCase(java.util.Locale.ROOT)).getBytes(StandardCharsets.US_ASCII);

  /**
   * The command's name as sent, lower-case ({@code ticket.claim}): clients that look commands up by
   * name find module commands that way.
   */
  byte[] wireName() {
    return wireName; // shared, never written: the drivers only copy it to the socket
  }

  String wireString() {
    return new String(wireName, StandardCharsets.US_ASCII);
  }
}

package io.ticketgate;

import java.util.List;

/**
 * A user's tickets as {@code TICKET.ORDER} reports them.
 *
 * @param tickets the user's ticket numbers, ascending
 * @param state whether the order is held (awaiting confirmation) or sold
 * @param expiresAt when a held order expires (unix ms); 0 when sold
 */
public record Order(List<Long> tickets, State state, long expiresAt) {

  /** The state of an order. */
  public enum State {
    /** Held until {@code expiresAt}: confirm it to buy. */
    HELD,
    /** Sold: final. */
    SOLD
  }

  public Order {
    tickets = List.copyOf(tickets);
  }
}

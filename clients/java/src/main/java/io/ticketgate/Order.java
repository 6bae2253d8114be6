package io.ticketgate;

import java.util.List;

/**
 * A user's tickets as {@code TICKET.ORDER} reports them.
 *
 * @param tickets the user's ticket numbers, ascending
 * @param state whether the order is held (awaiting confirmation) or sold
 * @param expiresAt when a held order expires (unix ms); 0 when sold
 * @param seats a seated event's seat names ({@code A-2-103}), in ticket order; empty otherwise
 * @param gens each ticket's generation, in ticket order: 1 at sale, one up per transfer; a ticket's
 *     door credential is (event, ticket, gen), see {@link TicketGate#scan}
 */
public record Order(
    List<Long> tickets, State state, long expiresAt, List<String> seats, List<Long> gens) {

  /** An order of an event that is not seated, every ticket at generation 1. */
  public Order(List<Long> tickets, State state, long expiresAt) {
    this(tickets, state, expiresAt, List.of());
  }

  /** An order every ticket of which is at generation 1. */
  public Order(List<Long> tickets, State state, long expiresAt, List<String> seats) {
    this(tickets, state, expiresAt, seats, tickets.stream().map(t -> 1L).toList());
  }

  /** The state of an order. */
  public enum State {
    /** Held until {@code expiresAt}: confirm it to buy. */
    HELD,
    /** Sold: final. */
    SOLD
  }

  public Order {
    tickets = List.copyOf(tickets);
    seats = List.copyOf(seats);
    gens = List.copyOf(gens);
  }
}

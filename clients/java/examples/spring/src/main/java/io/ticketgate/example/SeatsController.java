package io.ticketgate.example;

import io.ticketgate.ClaimOptions;
import io.ticketgate.Order;
import io.ticketgate.TicketGate;
import java.util.ArrayList;
import java.util.List;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code POST /events/{event}/seats}: the best seats left together for a party, in one atomic
 * claim. Body: {@code {"userId": "u1", "count": 4}} and optionally {@code "section"}, {@code
 * "category"}, {@code "accessible"} (wheelchair spaces among them) and {@code "split": true}
 * (single seats when no block is left). Reply: {@code {"userId": "u1", "seats": [{"id": 12, "name":
 * "A-2-103"}, ...], "state": "SOLD", "expiresAt": 0}} (a repeat request gets the user's seats
 * again). Errors ({@link Problems}): 409 {@code NOTOGETHER} (no {@code count} seats together where
 * asked; retry with {@code split} or another section), 409 {@code SOLDOUT}, 404, 400 (a bad option,
 * a party above the event's {@code LIMIT}).
 */
@RestController
public class SeatsController {
  private final TicketGate gate;

  SeatsController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body: who, how many, and where. */
  public record SeatRequest(
      String userId,
      Integer count,
      String section,
      String category,
      Integer accessible,
      Boolean split) {
    public SeatRequest {
      Problems.required(userId, "userId");
    }
  }

  /** One seat: its id (the ticket number) and its name ({@code section-row-label}). */
  public record Seat(long id, String name) {}

  /** The party's seats, and whether they are held (until {@code expiresAt}, unix ms) or sold. */
  public record Seats(String userId, List<Seat> seats, Order.State state, long expiresAt) {}

  @PostMapping("/events/{event}/seats")
  Seats claim(@PathVariable String event, @RequestBody SeatRequest body) {
    gate.claim(event, body.userId(), options(body));
    // ORDER names the seats (the claim's reply is their ids); a hold can only have lapsed in
    // between if the event holds seats for a few milliseconds.
    Order order =
        gate.order(event, body.userId())
            .orElseThrow(() -> new ResponseStatusException(HttpStatus.CONFLICT, "hold lapsed"));
    List<Seat> seats = new ArrayList<>();
    for (int i = 0; i < order.tickets().size(); i++) {
      seats.add(new Seat(order.tickets().get(i), order.seats().get(i)));
    }
    return new Seats(body.userId(), seats, order.state(), order.expiresAt());
  }

  private static ClaimOptions options(SeatRequest body) {
    ClaimOptions options = ClaimOptions.count(body.count() == null ? 1 : body.count());
    if (body.section() != null) {
      options = options.section(body.section());
    }
    if (body.category() != null) {
      options = options.category(body.category());
    }
    if (body.accessible() != null) {
      options = options.accessible(body.accessible());
    }
    return Boolean.TRUE.equals(body.split()) ? options.split() : options;
  }
}

package io.ticketgate.example;

import io.ticketgate.TicketGate;
import java.util.List;
import java.util.function.ToLongBiFunction;
import java.util.function.ToLongFunction;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * Face-value resale. {@code POST /events/{event}/resell {"userId": "u1", "tickets": [12]}} lists
 * the user's sold tickets (all not listed yet when {@code tickets} is absent); reply {@code
 * {"userId": "u1", "listed": 1}}. A listed ticket stays the seller's until a buyer's claim (which
 * takes one only when no free ticket fits, e.g. {@code participate} on a sold-out event) is final
 * or confirmed: then it is the buyer's, a generation up. {@code POST /events/{event}/unlist} takes
 * listed tickets back that no buyer holds, same body; reply {@code {"userId": "u1", "unlisted": 1}}
 * (0: none listed). Errors ({@link Problems}): 409 {@code LISTED} (listed already), {@code
 * NOTLISTED} (not listed by the user, or a buyer holds it), {@code USED} (scanned), {@code CLOSED}
 * (after the event's {@code TRANSFER_UNTIL}); 404 {@code NOTSOLD} (held, or not the user's), {@code
 * NOHOLD} (the user has no tickets) or no such event; 400 (a bad id).
 */
@RestController
public class ResaleController {
  private final TicketGate gate;

  ResaleController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body: whose tickets, and which (null: all). */
  public record Resale(String userId, List<Long> tickets) {
    public Resale {
      Problems.required(userId, "userId");
    }
  }

  /** How many tickets the user listed. */
  public record Listed(String userId, long listed) {}

  /** How many listed tickets the user took back. */
  public record Unlisted(String userId, long unlisted) {}

  @PostMapping("/events/{event}/resell")
  Listed resell(@PathVariable String event, @RequestBody Resale body) {
    long listed = onTickets(body, u -> gate.resell(event, u), (u, t) -> gate.resell(event, u, t));
    return new Listed(body.userId(), listed);
  }

  @PostMapping("/events/{event}/unlist")
  Unlisted unlist(@PathVariable String event, @RequestBody Resale body) {
    long unlisted = onTickets(body, u -> gate.unlist(event, u), (u, t) -> gate.unlist(event, u, t));
    return new Unlisted(body.userId(), unlisted);
  }

  /** The call on all of the user's tickets, or on those the body names. */
  private static long onTickets(
      Resale body, ToLongFunction<String> all, ToLongBiFunction<String, List<Long>> named) {
    return body.tickets() == null
        ? all.applyAsLong(body.userId())
        : named.applyAsLong(body.userId(), body.tickets());
  }
}

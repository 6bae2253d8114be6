package io.ticketgate.example;

import io.ticketgate.TicketGate;
import java.util.List;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /events/{event}/transfer {"from": "ann", "to": "ben", "tickets": [12]}}: gives sold
 * tickets to another user in one step (all of {@code from}'s when {@code tickets} is absent), each
 * a generation up, so the giver's old credential is {@code STALE} at the door; reply {@code
 * {"from": "ann", "to": "ben", "moved": 1}}. Errors ({@link Problems}): 409 {@code USED} (scanned),
 * {@code LISTED} (listed for resale: unlist it first), {@code CLOSED} (after the event's {@code
 * TRANSFER_UNTIL}); 404 {@code NOTSOLD} (held, or not the giver's), {@code NOHOLD} (the giver has
 * no tickets) or no such event; 400 (a bad id, giver and receiver the same, or more than the
 * receiver's {@code LIMIT}).
 */
@RestController
public class TransferController {
  private final TicketGate gate;

  TransferController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body: from whom, to whom, which tickets (null: all). */
  public record Transfer(String from, String to, List<Long> tickets) {
    public Transfer {
      Problems.required(from, "from");
      Problems.required(to, "to");
    }
  }

  /** How many tickets changed hands. */
  public record Moved(String from, String to, long moved) {}

  @PostMapping("/events/{event}/transfer")
  Moved transfer(@PathVariable String event, @RequestBody Transfer body) {
    long moved =
        body.tickets() == null
            ? gate.transfer(event, body.from(), body.to())
            : gate.transfer(event, body.from(), body.to(), body.tickets());
    return new Moved(body.from(), body.to(), moved);
  }
}

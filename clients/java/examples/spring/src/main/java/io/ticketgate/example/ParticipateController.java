package io.ticketgate.example;

import io.ticketgate.TicketGate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /events/{event}/participate {"userId": "..."}}: claims a ticket for the user (the
 * same one again if the user already has it); 409 when sold out, closed or not open yet ({@link
 * Problems}).
 */
@RestController
public class ParticipateController {
  private final TicketGate gate;

  ParticipateController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body. */
  public record Participation(String userId) {
    public Participation {
      Problems.required(userId, "userId");
    }
  }

  /** A won ticket. */
  public record Ticket(String userId, long ticket) {}

  @PostMapping("/events/{event}/participate")
  Ticket participate(@PathVariable String event, @RequestBody Participation body) {
    return new Ticket(body.userId(), gate.claim(event, body.userId()));
  }
}

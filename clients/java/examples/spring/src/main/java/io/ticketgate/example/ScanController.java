package io.ticketgate.example;

import io.ticketgate.TicketGate;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /events/{event}/scan}: the door. A scanner reads a ticket's credential (ticket and
 * generation, from {@code TICKET.ORDER}'s {@code gens}) and posts it with its gate: {@code
 * {"ticket": 12, "gen": 2, "gate": "north"}} (gate optional). Reply 200 {@code {"ticket": 12,
 * "gen": 2, "admitted": true}}: the first scan of that ticket at its current generation, once.
 * Errors ({@link Problems}): 409 {@code USED} (scanned before: the message says when and at which
 * gate) or {@code STALE} (the ticket was transferred since: an old screenshot), 404 {@code NOTSOLD}
 * (free, held or listed: no ticket to admit) or no such event, 400 (a bad ticket, gen or gate).
 */
@RestController
public class ScanController {
  private final TicketGate gate;

  ScanController(TicketGate gate) {
    this.gate = gate;
  }

  /** The credential presented, and where. */
  public record Scan(Long ticket, Long gen, String gate) {
    public Scan {
      Problems.required(ticket, "ticket");
      Problems.required(gen, "gen");
      Problems.required(gate, "gate");
    }
  }

  /** Let them in. */
  public record Admitted(long ticket, long gen, boolean admitted) {}

  @PostMapping("/events/{event}/scan")
  Admitted scan(@PathVariable String event, @RequestBody Scan body) {
    gate.scan(event, body.ticket(), body.gen(), body.gate());
    return new Admitted(body.ticket(), body.gen(), true);
  }
}

package io.ticketgate.example;

import io.ticketgate.ClaimOptions;
import io.ticketgate.TicketGate;
import java.util.List;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /events/{event}/allocations/{allocation}/claim}: a partner (a promoter, a fan club)
 * claims tickets for one of its customers from the allocation the box office set aside for it,
 * proving it is that partner with the allocation's key in the {@code X-Allocation-Key} header.
 * Body: {@code {"userId": "u1", "count": 2}} (count defaults to 1). Reply: {@code {"userId": "u1",
 * "allocation": "fanclub", "tickets": [9, 10]}} (a repeat request gets the user's tickets again).
 * Errors ({@link Problems}): 403 {@code NOKEY} (no key or a wrong one), 409 {@code SOLDOUT} (the
 * allocation has too few left) or {@code SHORT}, 404 (no such event or allocation), 400.
 */
@RestController
public class PartnerController {
  private final TicketGate gate;

  PartnerController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body: for whom, and how many. */
  public record PartnerClaim(String userId, Integer count) {
    public PartnerClaim {
      Problems.required(userId, "userId");
    }
  }

  /** The customer's tickets, all from the allocation. */
  public record PartnerTickets(String userId, String allocation, List<Long> tickets) {}

  @PostMapping("/events/{event}/allocations/{allocation}/claim")
  PartnerTickets claim(
      @PathVariable String event,
      @PathVariable String allocation,
      @RequestHeader(name = "X-Allocation-Key", required = false) String key,
      @RequestBody PartnerClaim body) {
    ClaimOptions options =
        ClaimOptions.count(body.count() == null ? 1 : body.count()).from(allocation, key);
    return new PartnerTickets(body.userId(), allocation, gate.claim(event, body.userId(), options));
  }
}

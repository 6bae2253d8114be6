package io.ticketgate.example;

import io.ticketgate.ClosedException;
import io.ticketgate.InvalidArgumentException;
import io.ticketgate.NoEventException;
import io.ticketgate.NotOpenException;
import io.ticketgate.SoldOutException;
import io.ticketgate.TicketGate;
import io.ticketgate.TicketGateException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /events/{event}/participate {"userId": "..."}}: claims a ticket for the user (the
 * same one again if the user already has it); 409 when sold out, closed or not open yet.
 */
@RestController
public class ParticipateController {
  private final TicketGate gate;

  ParticipateController(TicketGate gate) {
    this.gate = gate;
  }

  /** The request body. */
  public record Participation(String userId) {}

  /** A won ticket. */
  public record Ticket(String userId, long ticket) {}

  /** An error body: the module's code and message. */
  public record Problem(String code, String message) {}

  @PostMapping("/events/{event}/participate")
  Ticket participate(@PathVariable String event, @RequestBody Participation body) {
    return new Ticket(body.userId(), gate.claim(event, body.userId()));
  }

  @ExceptionHandler({SoldOutException.class, ClosedException.class, NotOpenException.class})
  ResponseEntity<Problem> conflict(TicketGateException e) {
    return problem(HttpStatus.CONFLICT, e);
  }

  @ExceptionHandler(NoEventException.class)
  ResponseEntity<Problem> notFound(TicketGateException e) {
    return problem(HttpStatus.NOT_FOUND, e);
  }

  @ExceptionHandler(InvalidArgumentException.class)
  ResponseEntity<Problem> badRequest(TicketGateException e) {
    return problem(HttpStatus.BAD_REQUEST, e);
  }

  private static ResponseEntity<Problem> problem(HttpStatus status, TicketGateException e) {
    return ResponseEntity.status(status).body(new Problem(e.code(), e.serverMessage()));
  }
}

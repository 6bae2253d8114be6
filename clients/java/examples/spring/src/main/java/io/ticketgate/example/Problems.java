package io.ticketgate.example;

import io.ticketgate.ClosedException;
import io.ticketgate.InvalidArgumentException;
import io.ticketgate.LimitException;
import io.ticketgate.ListedException;
import io.ticketgate.NoAllocationException;
import io.ticketgate.NoEventException;
import io.ticketgate.NoHoldException;
import io.ticketgate.NoKeyException;
import io.ticketgate.NotListedException;
import io.ticketgate.NotOpenException;
import io.ticketgate.NotSoldException;
import io.ticketgate.NotTogetherException;
import io.ticketgate.OrphanException;
import io.ticketgate.ShortException;
import io.ticketgate.SoldOutException;
import io.ticketgate.StaleException;
import io.ticketgate.TakenException;
import io.ticketgate.TicketGateException;
import io.ticketgate.UsedException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.http.converter.HttpMessageNotReadableException;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * The module's errors as HTTP statuses, for every controller, with a body {@code {"code":
 * "SOLDOUT", "message": "..."}} to branch on. 409 Conflict when the same request could succeed on
 * another state of the event (sold out, closed (for resale and transfers: past {@code
 * TRANSFER_UNTIL}), not open yet; seated: no seats together {@code NOTOGETHER}, a picked seat taken
 * {@code TAKEN}, a pick leaving a single seat alone {@code ORPHAN}; allocations: too few left
 * {@code SHORT}; the door: a ticket scanned already {@code USED}, an old credential {@code STALE};
 * resale: a ticket listed {@code LISTED} or not {@code NOTLISTED}); 403 for a claim from an
 * allocation without its key ({@code NOKEY}); 404 for an unknown event or allocation, a ticket not
 * sold at the door or not the user's in a resale or transfer ({@code NOTSOLD}), a user with no
 * tickets ({@code NOHOLD}); 400 for a request no state makes valid (a bad id or option, more
 * tickets than the event's {@code LIMIT}), and with code {@code BADREQUEST} for a body that is not
 * JSON or lacks a required field (the message names it).
 */
@RestControllerAdvice
public class Problems {
  /** An error body: the module's code and message. */
  public record Problem(String code, String message) {}

  @ExceptionHandler({
    SoldOutException.class,
    ClosedException.class,
    NotOpenException.class,
    NotTogetherException.class,
    TakenException.class,
    OrphanException.class,
    ShortException.class,
    UsedException.class,
    StaleException.class,
    ListedException.class,
    NotListedException.class
  })
  ResponseEntity<Problem> conflict(TicketGateException e) {
    return problem(HttpStatus.CONFLICT, e);
  }

  @ExceptionHandler(NoKeyException.class)
  ResponseEntity<Problem> forbidden(TicketGateException e) {
    return problem(HttpStatus.FORBIDDEN, e);
  }

  @ExceptionHandler({
    NoEventException.class,
    NoAllocationException.class,
    NotSoldException.class,
    NoHoldException.class
  })
  ResponseEntity<Problem> notFound(TicketGateException e) {
    return problem(HttpStatus.NOT_FOUND, e);
  }

  @ExceptionHandler({InvalidArgumentException.class, LimitException.class})
  ResponseEntity<Problem> badRequest(TicketGateException e) {
    return problem(HttpStatus.BAD_REQUEST, e);
  }

  /**
   * A request body's field that must be present: checked when the body is read, so a request
   * without it is a 400 naming the field, never a call with a null user.
   */
  static void required(Object value, String field) {
    if (value == null) {
      throw new IllegalArgumentException("\"" + field + "\" is required");
    }
  }

  @ExceptionHandler(HttpMessageNotReadableException.class)
  ResponseEntity<Problem> unreadable(HttpMessageNotReadableException e) {
    String why = e.getMostSpecificCause().getMessage();
    return ResponseEntity.badRequest().body(new Problem("BADREQUEST", "request body: " + why));
  }

  private static ResponseEntity<Problem> problem(HttpStatus status, TicketGateException e) {
    return ResponseEntity.status(status).body(new Problem(e.code(), e.serverMessage()));
  }
}

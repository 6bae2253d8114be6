package io.ticketgate.example;

import static io.ticketgate.example.ParticipateConcurrencyTest.assertProblem;
import static io.ticketgate.example.ParticipateConcurrencyTest.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ticketgate.InitOptions;
import io.ticketgate.Order;
import io.ticketgate.TicketGate;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;

/**
 * The door over HTTP ({@link ScanController}, run by {@link ParticipateConcurrencyTest}): ann buys
 * two tickets and gives one to ben, whose credential is then at generation 2. Ben's credential
 * shown at 20 gates at once gets exactly one 200 and 19 409 {@code USED} naming the gate that
 * admitted it; the screenshot ann kept (generation 1) gets 409 {@code STALE}; a ticket nobody
 * bought gets 404 {@code NOTSOLD}; ann's own ticket is admitted once.
 */
final class DoorContest {
  private DoorContest() {}

  static void assertContest(TicketGate gate, int port) throws Exception {
    String event = "spring-door-" + System.nanoTime();
    gate.init(event, 10, InitOptions.defaults().limit(2));
    List<Long> bought = gate.claim(event, "ann", 2);
    assertEquals(1, gate.transfer(event, "ann", "ben", List.of(bought.get(1))));
    Order ben = gate.order(event, "ben").orElseThrow();
    long ticket = ben.tickets().get(0);
    assertEquals(List.of(2L), ben.gens());
    String path = "/events/" + event + "/scan";

    List<String> bodies = new ArrayList<>();
    for (int g = 0; g < 20; g++) {
      bodies.add(scan(ticket, 2, "gate-" + g));
    }
    List<HttpResponse<String>> replies = ParticipateConcurrencyTest.postAll(port, path, bodies);
    String admittedAt = null;
    for (int g = 0; g < replies.size(); g++) {
      HttpResponse<String> r = replies.get(g);
      if (r.statusCode() == 200) {
        assertEquals(null, admittedAt, "admitted twice: " + r.body());
        assertTrue(r.body().contains("\"admitted\":true"), r.body());
        admittedAt = "gate-" + g;
      }
    }
    assertTrue(admittedAt != null, "nobody admitted");
    for (HttpResponse<String> r : replies) {
      if (r.statusCode() != 200) {
        assertProblem(r, 409, "USED");
        assertTrue(r.body().contains("at gate '" + admittedAt + "'"), r.body());
      }
    }

    HttpResponse<String> screenshot = post(port, path, scan(ticket, 1, "north"));
    assertProblem(screenshot, 409, "STALE");
    assertTrue(screenshot.body().contains("generation 2 now"), screenshot.body());
    assertProblem(post(port, path, scan(9, 1, "north")), 404, "NOTSOLD");
    long own = bought.get(0);
    assertEquals(200, post(port, path, scan(own, 1, "north")).statusCode());
    assertProblem(post(port, path, scan(own, 1, "south")), 409, "USED");
  }

  private static String scan(long ticket, long gen, String gate) {
    return "{\"ticket\":" + ticket + ",\"gen\":" + gen + ",\"gate\":\"" + gate + "\"}";
  }
}

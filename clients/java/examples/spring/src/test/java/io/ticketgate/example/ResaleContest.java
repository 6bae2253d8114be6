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
 * Resale and transfer over HTTP ({@link ResaleController}, {@link TransferController}, run by
 * {@link ParticipateConcurrencyTest}): sam buys both tickets of a sold-out event and lists one;
 * listing it again is 409 {@code LISTED}, unlisting the other (never listed) 409 {@code NOTLISTED}.
 * 10 buyers participate at once: exactly one 200, holding the listed ticket (now theirs, generation
 * 2), 9 409 {@code SOLDOUT}; sam listing it again is 404 {@code NOTSOLD} (not his). Sam lists his
 * other ticket and takes it back (unlisted: the next buyer gets 409 {@code SOLDOUT}), then gives it
 * to tom over {@code transfer}; with nothing left, sam's next transfer or listing is 404 {@code
 * NOHOLD}.
 */
final class ResaleContest {
  private ResaleContest() {}

  static void assertContest(TicketGate gate, int port) throws Exception {
    String event = "spring-resale-" + System.nanoTime();
    gate.init(event, 2, InitOptions.defaults().limit(2));
    List<Long> bought = gate.claim(event, "sam", 2);
    long listed = bought.get(0);
    long kept = bought.get(1);
    String resell = "/events/" + event + "/resell";

    HttpResponse<String> first = post(port, resell, resale("sam", listed));
    assertEquals(200, first.statusCode(), first.body());
    assertTrue(first.body().contains("\"listed\":1"), first.body());
    assertProblem(post(port, resell, resale("sam", listed)), 409, "LISTED");
    assertProblem(
        post(port, "/events/" + event + "/unlist", resale("sam", kept)), 409, "NOTLISTED");
    assertEquals(1, gate.status(event).resale());

    assertOneBuyerGets(gate, port, event, listed);
    assertEquals(List.of(kept), gate.order(event, "sam").orElseThrow().tickets());
    assertProblem(post(port, resell, resale("sam", listed)), 404, "NOTSOLD");
    assertTakenBackThenGiven(gate, port, event, kept);
  }

  /** 10 buyers claim at once: one gets the listed ticket, a generation up; 9 409 SOLDOUT. */
  private static void assertOneBuyerGets(TicketGate gate, int port, String event, long listed)
      throws Exception {
    List<String> buyers = new ArrayList<>();
    for (int u = 0; u < 10; u++) {
      buyers.add("{\"userId\":\"buyer-" + u + "\"}");
    }
    List<HttpResponse<String>> replies =
        ParticipateConcurrencyTest.postAll(port, "/events/" + event + "/participate", buyers);
    String winner = null;
    for (int u = 0; u < replies.size(); u++) {
      HttpResponse<String> r = replies.get(u);
      if (r.statusCode() == 200) {
        assertEquals(null, winner, "resold twice: " + r.body());
        assertTrue(r.body().contains("\"ticket\":" + listed), r.body());
        winner = "buyer-" + u;
      } else {
        assertProblem(r, 409, "SOLDOUT");
      }
    }
    assertTrue(winner != null, "nobody bought the listed ticket");
    Order resold = gate.order(event, winner).orElseThrow();
    assertEquals(List.of(listed), resold.tickets());
    assertEquals(List.of(2L), resold.gens());
    assertEquals(0, gate.status(event).resale());
  }

  /** Sam lists his last ticket, takes it back (nobody can buy it), gives it to tom, has none. */
  private static void assertTakenBackThenGiven(TicketGate gate, int port, String event, long kept)
      throws Exception {
    String path = "/events/" + event + "/";
    assertEquals(200, post(port, path + "resell", "{\"userId\":\"sam\"}").statusCode());
    HttpResponse<String> back = post(port, path + "unlist", "{\"userId\":\"sam\"}");
    assertEquals(200, back.statusCode(), back.body());
    assertTrue(back.body().contains("\"unlisted\":1"), back.body());
    assertProblem(post(port, path + "participate", "{\"userId\":\"late\"}"), 409, "SOLDOUT");

    String gift = "{\"from\":\"sam\",\"to\":\"tom\"}";
    HttpResponse<String> given = post(port, path + "transfer", gift);
    assertEquals(200, given.statusCode(), given.body());
    assertTrue(given.body().contains("\"moved\":1"), given.body());
    assertEquals(List.of(kept), gate.order(event, "tom").orElseThrow().tickets());
    assertProblem(post(port, path + "transfer", gift), 404, "NOHOLD");
    assertProblem(post(port, path + "resell", resale("sam", kept)), 404, "NOHOLD");
  }

  private static String resale(String user, long ticket) {
    return "{\"userId\":\"" + user + "\",\"tickets\":[" + ticket + "]}";
  }
}

package io.ticketgate.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ticketgate.AllocateOptions;
import io.ticketgate.TicketGate;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A partner's claims over HTTP ({@link PartnerController}, run by {@link
 * ParticipateConcurrencyTest}): the box office sets 5 of 20 tickets aside for a fan club with a
 * key; 10 fan-club customers and 20 public users claim at once. The fan club's 5 winners get
 * exactly the allocated tickets, the other 5 get 409 {@code SOLDOUT}; the public gets only the
 * other 15 tickets. Without the key or with a wrong one: 403 {@code NOKEY}; an unknown allocation:
 * 404.
 */
final class PartnerContest {
  private static final Pattern TICKETS = Pattern.compile("\"tickets\":\\[([0-9,]*)\\]");
  private static final Pattern TICKET = Pattern.compile("\"ticket\":(\\d+)");

  private PartnerContest() {}

  static void assertContest(TicketGate gate, int port) throws Exception {
    String event = "spring-partner-" + System.nanoTime();
    gate.init(event, 20);
    List<Long> allocated = gate.allocate(event, "fanclub", AllocateOptions.count(5).key("fc-key"));
    String path = "/events/" + event + "/allocations/fanclub/claim";

    assertProblem(post(port, path, null, "nokey"), 403, "NOKEY");
    assertProblem(post(port, path, "wrong", "wrongkey"), 403, "NOKEY");
    assertProblem(post(port, "/events/" + event + "/allocations/other/claim", "x", "u"), 404, null);

    List<HttpResponse<String>> partner = new ArrayList<>();
    List<String> bodies = new ArrayList<>();
    for (int u = 0; u < 20; u++) {
      bodies.add("{\"userId\":\"public-" + u + "\"}");
    }
    Thread fans =
        new Thread(
            () -> {
              for (int u = 0; u < 10; u++) {
                partner.add(post(port, path, "fc-key", "fan-" + u));
              }
            });
    fans.start();
    List<HttpResponse<String>> crowd =
        ParticipateConcurrencyTest.postAll(port, "/events/" + event + "/participate", bodies);
    fans.join();

    Set<Long> fanTickets = new HashSet<>();
    for (HttpResponse<String> r : partner) {
      if (r.statusCode() == 409) {
        assertProblem(r, 409, "SOLDOUT");
        continue;
      }
      assertEquals(200, r.statusCode(), r.body());
      Matcher m = TICKETS.matcher(r.body());
      assertTrue(m.find(), r.body());
      assertTrue(fanTickets.add(Long.parseLong(m.group(1))), r.body());
    }
    assertEquals(Set.copyOf(allocated), fanTickets);
    Set<Long> publicTickets = new HashSet<>();
    for (HttpResponse<String> r : crowd) {
      Matcher m = TICKET.matcher(r.body());
      if (r.statusCode() == 200 && m.find()) {
        publicTickets.add(Long.parseLong(m.group(1)));
      } else {
        assertProblem(r, 409, "SOLDOUT");
      }
    }
    assertEquals(15, publicTickets.size());
    publicTickets.retainAll(fanTickets);
    assertTrue(publicTickets.isEmpty(), "public users got allocated tickets: " + publicTickets);
    assertEquals(0, gate.status(event).remaining());
  }

  private static HttpResponse<String> post(int port, String path, String key, String user) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"userId\":\"" + user + "\"}"));
    if (key != null) {
      request.header("X-Allocation-Key", key);
    }
    try {
      return HttpClient.newHttpClient().send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static void assertProblem(HttpResponse<String> r, int status, String code) {
    assertEquals(status, r.statusCode(), r.body());
    if (code != null) {
      assertTrue(r.body().contains("\"code\":\"" + code + "\""), r.body());
    }
  }
}

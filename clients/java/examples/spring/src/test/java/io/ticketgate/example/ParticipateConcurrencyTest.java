package io.ticketgate.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.ticketgate.TicketGate;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The reference design's concurrency test over HTTP: 1,000 concurrent users participate in an event
 * of 100 tickets; exactly 100 get 200 with tickets 1..=100, 900 get 409 SOLDOUT. Runs on the
 * standalone server of clients/testenv.py; {@link ClusterParticipateTest} on its cluster.
 */
@EnabledIfEnvironmentVariable(named = "TICKETGATE_TEST_REDIS", matches = ".+")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ParticipateConcurrencyTest {
  private static final Pattern TICKET = Pattern.compile("\"ticket\":(\\d+)");

  @LocalServerPort int port;
  @Autowired TicketGate gate;

  @DynamicPropertySource
  static void redis(DynamicPropertyRegistry registry) {
    String url = System.getenv("TICKETGATE_TEST_REDIS");
    registry.add("spring.data.redis.url", () -> url == null ? "redis://127.0.0.1:1" : url);
  }

  @Test
  void thousandUsersOnHundredTickets() throws Exception {
    assertContest(gate, port);
  }

  @Test
  void partiesOnAVenue() throws Exception {
    SeatedContest.assertContest(gate, port);
  }

  @Test
  void partnerClaimsOnlyItsAllocationWithItsKey() throws Exception {
    PartnerContest.assertContest(gate, port);
  }

  @Test
  void theDoorAdmitsEachTicketOnceAtItsGeneration() throws Exception {
    DoorContest.assertContest(gate, port);
  }

  @Test
  void aListedTicketGoesToOneBuyerAtFaceValue() throws Exception {
    ResaleContest.assertContest(gate, port);
  }

  @Test
  void aBodyWithoutARequiredFieldIsA400NamingIt() throws Exception {
    String event = "spring-bad-" + System.nanoTime();
    gate.init(event, 10);
    String[][] cases = {
      {"/participate", "{}", "userId"},
      {"/participate", "{\"userId\":null}", "userId"},
      {"/seats", "{\"count\":2}", "userId"},
      {"/resell", "{\"tickets\":[1]}", "userId"},
      {"/unlist", "{}", "userId"},
      {"/transfer", "{\"from\":\"a\"}", "to"},
      {"/scan", "{\"ticket\":1,\"gate\":\"north\"}", "gen"},
      {"/allocations/house/claim", "{\"count\":1}", "userId"},
      {"/participate", "{\"userId\":", "request body"},
    };
    for (String[] c : cases) {
      HttpResponse<String> r = post(port, "/events/" + event + c[0], c[1]);
      assertProblem(r, 400, "BADREQUEST");
      assertEquals(true, r.body().contains(c[2]), c[0] + " " + c[1] + ": " + r.body());
    }
    assertEquals(10, gate.status(event).remaining(), "nothing claimed");
  }

  static void assertContest(TicketGate gate, int port) throws Exception {
    String event = "spring-" + System.nanoTime();
    gate.init(event, 100);
    List<HttpResponse<String>> responses = participate(port, event, 1000);
    List<Long> tickets = new ArrayList<>();
    int conflicts = 0;
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 200) {
        Matcher m = TICKET.matcher(r.body());
        assertEquals(true, m.find(), r.body());
        tickets.add(Long.parseLong(m.group(1)));
      } else {
        assertEquals(409, r.statusCode(), r.body());
        assertEquals(true, r.body().contains("\"code\":\"SOLDOUT\""), r.body());
        conflicts++;
      }
    }
    assertEquals(100, tickets.size());
    assertEquals(900, conflicts);
    TreeSet<Long> expected = new TreeSet<>();
    for (long t = 1; t <= 100; t++) {
      expected.add(t);
    }
    assertEquals(expected, new TreeSet<>(tickets));
    assertEquals(0, gate.status(event).remaining());
  }

  /**
   * One POST, sent again when the connection fails (a loaded machine's Tomcat may reset some of
   * 1,000 connections opened at once): a claim is safe to retry with the same user id, it gives the
   * ticket the user already holds.
   */
  private static CompletableFuture<HttpResponse<String>> send(
      HttpClient http, HttpRequest request, int attempts) {
    return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
        .handle(
            (response, error) -> {
              if (error == null) {
                return CompletableFuture.completedFuture(response);
              }
              boolean connection =
                  error instanceof IOException || error.getCause() instanceof IOException;
              return connection && attempts > 1
                  ? send(http, request, attempts - 1)
                  : CompletableFuture.<HttpResponse<String>>failedFuture(error);
            })
        .thenCompose(Function.identity());
  }

  /** Users POSTing at once (the client's 64 threads handle the replies). */
  private static List<HttpResponse<String>> participate(int port, String event, int users)
      throws Exception {
    List<String> bodies = new ArrayList<>();
    for (int u = 0; u < users; u++) {
      bodies.add("{\"userId\":\"user-" + u + "\"}");
    }
    return postAll(port, "/events/" + event + "/participate", bodies);
  }

  /** One POST of a JSON body to {@code path}. */
  static HttpResponse<String> post(int port, String path, String body) throws Exception {
    return postAll(port, path, List.of(body)).get(0);
  }

  /** A {@link Problems} reply: this status, this module error code. */
  static void assertProblem(HttpResponse<String> r, int status, String code) {
    assertEquals(status, r.statusCode(), r.body());
    assertEquals(true, r.body().contains("\"code\":\"" + code + "\""), r.body());
  }

  /** One POST of each JSON body to {@code path}, all at once; the replies in the bodies' order. */
  static List<HttpResponse<String>> postAll(int port, String path, List<String> bodies)
      throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(64);
    HttpClient http = HttpClient.newBuilder().executor(pool).build();
    try {
      List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
      for (String body : bodies) {
        HttpRequest request =
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body))
                .build();
        calls.add(send(http, request, 3));
      }
      List<HttpResponse<String>> out = new ArrayList<>();
      for (CompletableFuture<HttpResponse<String>> call : calls) {
        out.add(call.get());
      }
      return out;
    } finally {
      pool.shutdown();
    }
  }
}

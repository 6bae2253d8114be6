package io.ticketgate.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.ticketgate.InitOptions;
import io.ticketgate.TicketGate;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The concurrency test's seated variant over HTTP: 300 parties of 1 to 4 (every third asking for
 * section A) POST {@code /events/{e}/seats} at once on a venue of 200 seats (two sections of five
 * rows of 20). Each 200 reply holds exactly its party's count of adjacent seats of one row; no seat
 * is given twice; every other reply is 409 {@code NOTOGETHER} or {@code SOLDOUT}; the seats given
 * are exactly those the event no longer has (STATUS and the seat map).
 */
final class SeatedContest {
  private static final Pattern SEAT = Pattern.compile("\"id\":(\\d+),\"name\":\"([^\"]+)\"");
  private static final Pattern CODE = Pattern.compile("\"code\":\"([A-Z]+)\"");
  private static final int PARTIES = 300;

  private SeatedContest() {}

  static String venue() {
    StringBuilder json = new StringBuilder("{\"sections\":[");
    for (String section : List.of("A", "B")) {
      json.append(section.equals("A") ? "" : ",").append("{\"name\":\"").append(section);
      json.append("\",\"category\":\"").append(section.equals("A") ? "front" : "back");
      json.append("\",\"rows\":[");
      for (int row = 1; row <= 5; row++) {
        json.append(row == 1 ? "" : ",").append("{\"name\":\"").append(row);
        json.append("\",\"seats\":20}");
      }
      json.append("]}");
    }
    return json.append("]}").toString();
  }

  static void assertContest(TicketGate gate, int port) throws Exception {
    String event = "spring-seats-" + System.nanoTime();
    gate.init(event, 200, InitOptions.defaults().limit(4).seats(venue()));
    List<String> bodies = new ArrayList<>();
    for (int u = 0; u < PARTIES; u++) {
      String section = u % 3 == 0 ? ",\"section\":\"A\"" : "";
      bodies.add("{\"userId\":\"party-" + u + "\",\"count\":" + size(u) + section + "}");
    }
    List<HttpResponse<String>> replies =
        ParticipateConcurrencyTest.postAll(port, "/events/" + event + "/seats", bodies);
    Set<Long> given = new HashSet<>();
    int seated = 0;
    Set<String> refusals = new HashSet<>();
    for (int u = 0; u < PARTIES; u++) {
      HttpResponse<String> r = replies.get(u);
      if (r.statusCode() != 200) {
        assertEquals(409, r.statusCode(), r.body());
        Matcher code = CODE.matcher(r.body());
        assertTrue(code.find(), r.body());
        assertTrue(Set.of("NOTOGETHER", "SOLDOUT").contains(code.group(1)), r.body());
        refusals.add(code.group(1));
        continue;
      }
      List<String> names = new ArrayList<>();
      Matcher m = SEAT.matcher(r.body());
      while (m.find()) {
        assertTrue(given.add(Long.parseLong(m.group(1))), "seat given twice: " + r.body());
        names.add(m.group(2));
      }
      assertEquals(size(u), names.size(), r.body());
      assertTogether(names, u % 3 == 0, r.body());
      seated++;
    }
    assertTrue(seated > 0 && !refusals.isEmpty(), seated + " parties seated, " + refusals);
    assertEquals(200 - given.size(), gate.status(event).remaining());
    String map = gate.seatmap(event).orElseThrow();
    for (int id = 1; id <= 200; id++) {
      assertEquals(given.contains((long) id), map.charAt(id - 1) != '.', "seat " + id);
    }
  }

  private static int size(int party) {
    return 1 + party % 4;
  }

  /** Seat names {@code S-R-L}: one section and row, consecutive labels (section A if asked). */
  private static void assertTogether(List<String> names, boolean sectionA, String body) {
    String row = names.get(0).substring(0, names.get(0).lastIndexOf('-') + 1);
    assertTrue(!sectionA || row.startsWith("A-"), body);
    int first = Integer.parseInt(names.get(0).substring(row.length()));
    for (int i = 0; i < names.size(); i++) {
      assertEquals(row + (first + i), names.get(i), body);
    }
  }
}

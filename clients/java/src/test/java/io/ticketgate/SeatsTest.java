package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Seated events against the real servers, every backend: a seated sale (best available, picked
 * seats and their errors, the layout naming seat ids, the seat map, STATUS's categories, ORDER's
 * seats), and on the clusters every seat command reaching the event's master first time.
 */
class SeatsTest {
  /** Section A: row 1 of six seats (ids 1-6), row 2 of four from 101 (ids 7-10). */
  static final String HALL =
      "{\"sections\":[{\"name\":\"A\",\"category\":\"front\",\"rows\":[{\"name\":\"1\","
          + "\"seats\":6},{\"name\":\"2\",\"seats\":4,\"first\":101,\"accessible\":[1],"
          + "\"category\":\"box\"}]}]}";

  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void aSeatedSale(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = IntegrationTest.newEvent(backend);
      gate.init(e, 10, InitOptions.defaults().hold(Duration.ofHours(1)).limit(4).seats(HALL));
      Layout layout = gate.layout(e).orElseThrow();
      assertEquals(10, layout.total());
      assertEquals(Optional.of(".........."), gate.seatmap(e));
      List<Long> ann = gate.claim(e, "ann", ClaimOptions.count(2));
      assertEquals(List.of("A-1-3", "A-1-4"), ann.stream().map(layout::seatName).toList());
      TakenException taken =
          assertThrows(TakenException.class, () -> gate.claimSeats(e, "bob", List.of(4L)));
      assertEquals("seat 'A-1-4' is taken", taken.serverMessage());
      assertThrows(OrphanException.class, () -> gate.claimSeats(e, "bob", List.of(8L)));
      assertEquals(List.of(5L, 6L), gate.claimSeats(e, "bob", List.of(5L, 6L), Duration.ZERO));
      assertEquals(List.of(7L, 8L), gate.claim(e, "cy", ClaimOptions.count(2).accessible(1)));
      assertThrows(NotTogetherException.class, () -> gate.claim(e, "dee", ClaimOptions.count(3)));
      assertEquals(List.of(1L, 2L, 9L), gate.claim(e, "dee", ClaimOptions.count(3).split()));
      assertEquals(List.of(10L), gate.claim(e, "eve", ClaimOptions.count(1).category("box")));
      Status status = gate.status(e);
      Map<String, Long> free = new LinkedHashMap<>(Map.of("front", 0L));
      free.put("box", 0L);
      assertEquals(Optional.of(free), status.categories());
      assertEquals(List.of("front", "box"), List.copyOf(status.categories().get().keySet()));
      assertEquals(Optional.of(0L), status.accessible());
      assertEquals(List.of("A-2-101", "A-2-102"), gate.order(e, "cy").orElseThrow().seats());
      assertEquals(Optional.of("hhhhsshhhh"), gate.seatmap(e));
      assertEquals(Optional.of(1L), gate.cancel(e, "dee"), "every seat of the order back");
      assertEquals(Optional.of("..hhsshh.h"), gate.seatmap(e));
      String plain = e + "-plain";
      gate.init(plain, 1);
      assertTrue(gate.layout(plain).isEmpty() && gate.seatmap(plain).isEmpty());
      assertTrue(gate.status(plain).categories().isEmpty());
    }
  }

  /**
   * Allocations on a seated event: house seats with a release time and a partner with a key, claims
   * from them, the errors, a public claim skipping allocated seats, release.
   */
  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void allocations(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = IntegrationTest.newEvent(backend);
      gate.init(e, 10, InitOptions.defaults().limit(4).seats(HALL));
      java.time.Instant in2100 = java.time.Instant.ofEpochMilli(4102444800000L);
      AllocateOptions house = AllocateOptions.seats(List.of(5L, 6L)).release(in2100);
      assertEquals(List.of(5L, 6L), gate.allocate(e, "house", house));
      AllocateOptions fanclub = AllocateOptions.count(2).category("box").key("fc");
      assertEquals(List.of(8L, 9L), gate.allocate(e, "fanclub", fanclub));
      assertThrows(
          NoKeyException.class,
          () -> gate.allocate(e, "fanclub", AllocateOptions.count(1).key("other")));
      ShortException shortOf =
          assertThrows(
              ShortException.class, () -> gate.allocate(e, "more", AllocateOptions.count(7)));
      assertEquals("event '" + e + "' has 5 free", shortOf.serverMessage(), "no wheelchair space");
      assertEquals(Optional.of("....aa.aa."), gate.seatmap(e));
      assertEquals(Optional.of(4L), gate.status(e).allocated());
      assertThrows(
          NoKeyException.class, () -> gate.claim(e, "fan1", ClaimOptions.count(2).from("fanclub")));
      assertEquals(
          List.of(8L, 9L), gate.claim(e, "fan1", ClaimOptions.count(2).from("fanclub", "fc")));
      assertThrows(
          SoldOutException.class,
          () -> gate.claim(e, "fan2", ClaimOptions.count(1).from("fanclub", "fc")));
      assertThrows(
          NoAllocationException.class,
          () -> gate.claimSeats(e, "fan2", List.of(5L), null, "nope", null));
      assertEquals(List.of(1L, 2L, 3L, 4L), gate.claim(e, "pub", ClaimOptions.count(4)));
      assertEquals(
          List.of(
              new Allocation("fanclub", 0, 2, Optional.empty()),
              new Allocation("house", 2, 0, Optional.of(in2100.toEpochMilli()))),
          gate.allocations(e));
      assertEquals(1, gate.releaseSeats(e, "house", List.of(5L)));
      assertEquals(1, gate.release(e, "house"));
      Status status = gate.status(e);
      assertEquals(4, status.remaining());
      assertTrue(status.allocated().isEmpty());
      assertEquals(Optional.of("ssss...ss."), gate.seatmap(e));
    }
  }

  @ParameterizedTest
  @EnumSource(
      value = Servers.Backend.class,
      names = {"LETTUCE_CLUSTER", "LETTUCE_CLUSTER_DEFAULTS", "JEDIS_CLUSTER"})
  void seatCommandsReachTheEventsMaster(Servers.Backend backend) throws Exception {
    assumeTrue(backend.available(), "no cluster: run through clients/testenv.py");
    try (Servers.Session s = backend.open();
        Servers.NodeStats stats = new Servers.NodeStats()) {
      TicketGate gate = s.gate();
      List<String> events = new java.util.ArrayList<>();
      for (int i = 0; i < 12; i++) {
        String e = IntegrationTest.newEvent(backend);
        gate.init(e, 10, InitOptions.defaults().limit(2).seats(HALL));
        events.add(e);
      }
      events.forEach(gate::status); // the client's slot map is loaded
      stats.reset();
      Map<String, Long> expected = new HashMap<>();
      Servers.clusterNodes().forEach(n -> expected.put(n, 0L));
      for (String e : events) {
        assertEquals(List.of(3L, 4L), gate.claim(e, "a", ClaimOptions.count(2).section("A")));
        assertEquals(List.of(5L, 6L), gate.claimSeats(e, "b", List.of(5L, 6L)));
        assertEquals("A-2-101", gate.layout(e).orElseThrow().seatName(7));
        assertEquals(Optional.of("..ssss...."), gate.seatmap(e));
        expected.merge(stats.owner("ticket:{" + e + "}:meta"), 1L, Long::sum);
      }
      assertEquals(expected, stats.calls("ticket.layout"), "layouts per node");
      assertEquals(expected, stats.calls("ticket.seatmap"), "seat maps per node");
      Map<String, Long> zeros = new HashMap<>();
      Servers.clusterNodes().forEach(n -> zeros.put(n, 0L));
      assertEquals(zeros, stats.moved(), "MOVED per node");
    }
  }
}

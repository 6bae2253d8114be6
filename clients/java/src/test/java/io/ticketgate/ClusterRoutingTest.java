package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * In a 3-master cluster every command reaches the event's master first time (per node: the calls it
 * served equal the commands for events it owns, and it answered no MOVED), and after a reshard the
 * client recovers and is back to no MOVED.
 */
class ClusterRoutingTest {
  private static final int EVENTS = 30;
  private static final int CLAIMS_PER_EVENT = 5;

  @ParameterizedTest
  @EnumSource(
      value = Servers.Backend.class,
      names = {"LETTUCE_CLUSTER", "LETTUCE_CLUSTER_DEFAULTS", "JEDIS_CLUSTER"})
  void everyCommandReachesTheEventsMaster(Servers.Backend backend) throws Exception {
    assumeTrue(backend.available(), "no cluster: run through clients/testenv.py");
    try (Servers.Session s = backend.open();
        Servers.NodeStats stats = new Servers.NodeStats()) {
      List<String> events = createEvents(s.gate(), backend);
      warmUp(s.gate(), events);
      stats.reset();
      Map<String, Long> expected = claimAll(s.gate(), events, stats);
      assertEquals(expected, stats.calls("ticket.claim"), "claims per node");
      assertEquals(zeros(stats), stats.moved(), "MOVED per node");
      System.out.printf(
          "%s: claims per node %s, MOVED per node %s%n", backend, expected, stats.moved());

      String event = events.get(0);
      String from = stats.owner("ticket:{" + event + "}:meta");
      String to = Servers.clusterNodes().stream().filter(n -> !n.equals(from)).findFirst().get();
      Servers.moveSlot("ticket:{" + event + "}:meta", to);
      int movedWhileSettling = settle(s.gate(), event, stats);
      assertEquals(CLAIMS_PER_EVENT + 1, s.gate().status(event).claimed(), "the event moved whole");
      stats.reset();
      for (int i = 1; i <= 20; i++) {
        s.gate().claim(event, "after-move-" + i);
      }
      assertEquals(zeros(stats), stats.moved(), "MOVED per node after the reshard settled");
      System.out.printf(
          "%s: after the reshard %d MOVED before the slot map caught up, then 0%n",
          backend, movedWhileSettling);
      assertEquals(20L, stats.calls("ticket.claim").get(to));
    }
  }

  /**
   * Claims once after the reshard (the client follows MOVED), then polls until a command goes
   * through without a MOVED (Lettuce refreshes its topology asynchronously); returns the MOVED
   * answered meanwhile.
   */
  private static int settle(TicketGate gate, String event, Servers.NodeStats stats)
      throws InterruptedException {
    stats.reset();
    gate.claim(event, "after-move-0");
    long moved = total(stats.moved());
    for (int attempt = 0; attempt < 100; attempt++) {
      stats.reset();
      gate.holder(event, "after-move-0");
      long now = total(stats.moved());
      if (now == 0) {
        return (int) moved;
      }
      moved += now;
      Thread.sleep(50);
    }
    throw new AssertionError("the client still gets MOVED 5 s after the reshard");
  }

  private static long total(Map<String, Long> perNode) {
    return perNode.values().stream().mapToLong(Long::longValue).sum();
  }

  private static List<String> createEvents(TicketGate gate, Servers.Backend backend) {
    List<String> events = new java.util.ArrayList<>();
    for (int i = 0; i < EVENTS; i++) {
      String e = IntegrationTest.newEvent(backend);
      gate.init(e, 1000);
      events.add(e);
    }
    return events;
  }

  /** One command per event first, so the client's slot map is loaded. */
  private static void warmUp(TicketGate gate, List<String> events) {
    events.forEach(gate::status);
  }

  private static Map<String, Long> claimAll(
      TicketGate gate, List<String> events, Servers.NodeStats stats) {
    Map<String, Long> perNode = zeros(stats);
    for (String e : events) {
      String owner = stats.owner("ticket:{" + e + "}:meta");
      for (int u = 0; u < CLAIMS_PER_EVENT; u++) {
        gate.claim(e, "user-" + u);
      }
      perNode.merge(owner, (long) CLAIMS_PER_EVENT, Long::sum);
    }
    return perNode;
  }

  private static Map<String, Long> zeros(Servers.NodeStats stats) {
    Map<String, Long> out = new HashMap<>();
    Servers.clusterNodes().forEach(n -> out.put(n, 0L));
    return out;
  }
}

package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every command against a real redis-server with the module, standalone and a 3-master cluster,
 * over Lettuce and Jedis; skipped when clients/testenv.py did not start servers.
 */
class IntegrationTest {
  private static final AtomicInteger EVENTS = new AtomicInteger();

  static String newEvent(Servers.Backend backend) {
    return "jv-"
        + backend.name().toLowerCase()
        + "-"
        + System.nanoTime()
        + "-"
        + EVENTS.incrementAndGet();
  }

  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void saleLifecycle(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = newEvent(backend);
      gate.init(e, 3, InitOptions.defaults().hold(Duration.ofMinutes(10)).limit(2));
      assertThrows(ExistsException.class, () -> gate.init(e, 3));
      assertEquals(List.of(1L, 2L), gate.claim(e, "alice", 2));
      assertEquals(1L, gate.claim(e, "alice"), "a holder gets her lowest ticket back");
      Order held = gate.order(e, "alice").orElseThrow();
      assertEquals(Order.State.HELD, held.state());
      assertTrue(held.expiresAt() > Instant.now().toEpochMilli());
      assertEquals(2L, gate.confirm(e, "alice"));
      assertEquals(new Order(List.of(1L, 2L), Order.State.SOLD, 0), gate.order(e, "alice").get());
      assertThrows(LimitException.class, () -> gate.claim(e, "bob", 3));
      assertEquals(3L, gate.claim(e, "bob", Duration.ZERO), "a final sale");
      assertThrows(SoldOutException.class, () -> gate.claim(e, "carol"));
      assertThrows(NoHoldException.class, () -> gate.confirm(e, "carol"));
      assertEquals(Optional.of(3L), gate.holder(e, "bob"));
      assertEquals(Optional.empty(), gate.holder(e, "carol"));
      Status status = gate.status(e);
      assertEquals(3, status.total());
      assertEquals(0, status.remaining());
      assertEquals(3, status.claimed());
      assertTrue(status.isOpen());
      assertTrue(status.unsynced() > 0, "the log holds the sales");
      assertTrue(status.draw().isEmpty());
      assertThrows(UnsyncedException.class, () -> gate.drop(e));
      assertTrue(gate.dropForce(e) > 0);
      assertThrows(NoEventException.class, () -> gate.status(e));
    }
  }

  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void waitingListAndOpening(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = newEvent(backend);
      String later = e + "-later";
      gate.init(later, 1, InitOptions.defaults().opensAt(Instant.now().plusSeconds(3600)));
      assertThrows(NotOpenException.class, () -> gate.claim(later, "alice"));
      gate.init(e, 1);
      gate.close(e);
      assertThrows(ClosedException.class, () -> gate.claim(e, "alice"));
      gate.open(e);
      assertEquals(1L, gate.claim(e, "alice"));
      assertThrows(HoldingException.class, () -> gate.waitFor(e, "alice"));
      assertEquals(1L, gate.waitFor(e, "bob"));
      assertEquals(2L, gate.waitFor(e, "carol", 1));
      assertEquals(Optional.of(2L), gate.position(e, "carol"));
      assertTrue(gate.leave(e, "carol"));
      assertFalse(gate.leave(e, "carol"));
      assertEquals(Optional.empty(), gate.position(e, "carol"));
      assertEquals(Optional.of(1L), gate.cancel(e, "alice"));
      assertEquals(Optional.of(1L), gate.holder(e, "bob"), "the returned ticket is offered");
      assertEquals(Order.State.HELD, gate.order(e, "bob").orElseThrow().state());
      assertEquals(Optional.of(0L), gate.position(e, "bob"), "offered: position 0");
      gate.close(e);
      assertThrows(ClosedException.class, () -> gate.claim(e, "dave"));
      assertEquals(1L, gate.confirm(e, "bob"), "confirming after close completes a payment");
      assertEquals("closed", gate.status(e).status());
      assertThrows(InvalidArgumentException.class, () -> gate.claim(e, "bad\u0001user"));
    }
  }

  /** A sold ticket changes hands, a generation up, and is admitted at the door once. */
  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void transferAndScan(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = newEvent(backend);
      gate.init(e, 5, InitOptions.defaults().hold(Duration.ofMinutes(10)).limit(2));
      assertEquals(List.of(1L, 2L), gate.claim(e, "ann", 2, Duration.ZERO));
      assertEquals(List.of(1L, 1L), gate.order(e, "ann").orElseThrow().gens());
      assertEquals(1L, gate.transfer(e, "ann", "ben", List.of(2L)));
      assertEquals(List.of(2L), gate.order(e, "ben").orElseThrow().gens());
      gate.scan(e, 2, 2, "north");
      UsedException used = assertThrows(UsedException.class, () -> gate.scan(e, 2, 2));
      assertTrue(used.serverMessage().endsWith("at gate 'north'"), used.getMessage());
      assertThrows(StaleException.class, () -> gate.scan(e, 1, 2));
      assertThrows(NotSoldException.class, () -> gate.scan(e, 5, 1));
      assertThrows(UsedException.class, () -> gate.transfer(e, "ben", "cy"));
      assertEquals(List.of(3L), gate.claim(e, "dee", 1));
      assertThrows(NotSoldException.class, () -> gate.transfer(e, "dee", "cy"));
      assertThrows(NoHoldException.class, () -> gate.transfer(e, "nobody", "cy"));
      assertEquals(List.of(4L, 5L), gate.claim(e, "eve", 2, Duration.ZERO));
      assertThrows(LimitException.class, () -> gate.transfer(e, "ann", "eve"));
      assertEquals(1L, gate.transfer(e, "ann", "fay"));
      gate.scan(e, 1, 2);
    }
  }

  /** Listed tickets go to a buyer once the free ones are gone; every refusal is typed. */
  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void resellAndUnlist(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = newEvent(backend);
      gate.init(e, 6, InitOptions.defaults().hold(Duration.ofMinutes(10)).limit(4));
      assertEquals(List.of(1L, 2L), gate.claim(e, "ann", 2, Duration.ZERO));
      assertEquals(3L, gate.claim(e, "ben", Duration.ZERO));
      gate.scan(e, 3, 1);
      assertEquals(4L, gate.claim(e, "cy"));
      assertEquals(0L, gate.status(e).resale());
      assertEquals(1L, gate.resell(e, "ann", List.of(2L)));
      ListedException listed =
          assertThrows(ListedException.class, () -> gate.resell(e, "ann", List.of(2L)));
      assertEquals("ticket 2 is listed already", listed.serverMessage());
      assertThrows(ListedException.class, () -> gate.transfer(e, "ann", "zoe"));
      assertEquals(1L, gate.status(e).resale());
      assertThrows(NotSoldException.class, () -> gate.resell(e, "cy"));
      assertThrows(UsedException.class, () -> gate.resell(e, "ben"));
      assertThrows(NoHoldException.class, () -> gate.resell(e, "nobody"));
      assertThrows(NotListedException.class, () -> gate.unlist(e, "ann", List.of(1L)));
      assertEquals(List.of(5L, 6L), gate.claim(e, "dee", 2));
      assertEquals(2L, gate.claim(e, "eve")); // the listed ticket
      assertEquals(1L, gate.confirm(e, "eve"));
      assertEquals(List.of(2L), gate.order(e, "eve").orElseThrow().gens());
      assertEquals(1L, gate.resell(e, "ann"));
      assertEquals(1L, gate.unlist(e, "ann"));
      assertEquals(0L, gate.unlist(e, "ann"));
      assertEquals(0L, gate.status(e).resale());
    }
  }

  /** The reference design's test: 1,000 concurrent users on 100 tickets. */
  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void thousandUsersOnHundredTickets(Servers.Backend backend) throws Exception {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      String e = newEvent(backend);
      s.gate().init(e, 100);
      Contest result = Contest.run(s.gate(), e, 1000, 64);
      assertEquals(100, result.winners().size());
      assertEquals(new TreeSet<>(range(1, 100)), new TreeSet<>(result.winners()));
      assertEquals(900, result.soldOut());
      assertEquals(0, s.gate().status(e).remaining());
    }
  }

  static List<Long> range(long first, long last) {
    List<Long> out = new ArrayList<>();
    for (long i = first; i <= last; i++) {
      out.add(i);
    }
    return out;
  }

  /** Users claiming at once; counts the tickets won and the sold-out answers. */
  record Contest(List<Long> winners, int soldOut) {
    static Contest run(TicketGate gate, String event, int users, int threads) throws Exception {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Long>> claims = new ArrayList<>();
      try {
        for (int u = 0; u < users; u++) {
          String user = "user-" + u;
          claims.add(
              pool.submit(
                  () -> {
                    start.await();
                    try {
                      return gate.claim(event, user);
                    } catch (SoldOutException e) {
                      return -1L;
                    }
                  }));
        }
        start.countDown();
        List<Long> winners = new ArrayList<>();
        int soldOut = 0;
        for (Future<Long> claim : claims) {
          long ticket = claim.get();
          if (ticket < 0) {
            soldOut++;
          } else {
            winners.add(ticket);
          }
        }
        return new Contest(winners, soldOut);
      } finally {
        pool.shutdownNow();
      }
    }
  }
}

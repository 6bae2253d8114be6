package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A draw event against a real redis-server with the module, on every backend: 50 users enter, OPEN
 * reveals the seed (which hashes to the commitment), offers follow the order recomputed here, a
 * claim without an offer throws {@link QueueException}.
 */
class DrawTest {

  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void fiftyEntrantsTenTickets(Servers.Backend backend) throws GeneralSecurityException {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = IntegrationTest.newEvent(backend);
      gate.init(e, 10, InitOptions.defaults().hold(Duration.ofHours(1)).draw());
      Status before = gate.status(e);
      assertEquals("closed", before.status());
      assertFalse(before.isDrawn());
      assertEquals(64, before.draw().orElseThrow().length());
      List<String> users = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        users.add(String.format("fan-%02d", i));
        assertEquals(TicketGate.ENTERED, gate.waitFor(e, users.get(i)));
      }
      assertEquals(Optional.of(TicketGate.ENTERED), gate.position(e, "fan-07"));
      assertThrows(NotOpenException.class, () -> gate.claim(e, "fan-07"));
      gate.open(e);
      List<String> order = checkDrawn(gate, e, before.draw().orElseThrow(), users);
      QueueException queue = assertThrows(QueueException.class, () -> gate.claim(e, order.get(10)));
      assertEquals("QUEUE", queue.code());
      assertEquals("event '" + e + "' sells through its queue: TICKET.WAIT", queue.serverMessage());
      assertEquals(Optional.of(1L), gate.position(e, order.get(10)));
      assertEquals(1L, gate.claim(e, order.get(0)), "the first drawn claims her offer");
      assertEquals(41L, gate.waitFor(e, "late"), "a joiner after the draw queues behind");
    }
  }

  @ParameterizedTest
  @EnumSource(Servers.Backend.class)
  void drawOptionsAreChecked(Servers.Backend backend) {
    assumeTrue(backend.available(), "no servers: run through clients/testenv.py");
    try (Servers.Session s = backend.open()) {
      TicketGate gate = s.gate();
      String e = IntegrationTest.newEvent(backend);
      assertThrows(
          InvalidArgumentException.class, () -> gate.init(e, 5, InitOptions.defaults().draw()));
      gate.init(e, 5, InitOptions.defaults().offer(Duration.ofHours(1)).draw().admit(20));
      assertEquals(Optional.of(20L), gate.status(e).admit());
    }
  }

  /** The seed hashes to the commitment; tickets 1..=10 are offered down the recomputed order. */
  private static List<String> checkDrawn(
      TicketGate gate, String e, String commitment, List<String> users)
      throws GeneralSecurityException {
    Status after = gate.status(e);
    assertTrue(after.isDrawn());
    assertEquals(Optional.of(commitment), after.draw());
    byte[] seed = HexFormat.of().parseHex(after.seed().orElseThrow());
    byte[] digest = MessageDigest.getInstance("SHA-256").digest(seed);
    assertEquals(commitment, HexFormat.of().formatHex(digest));
    assertEquals(List.of(10L, 40L, 0L), List.of(after.held(), after.waiting(), after.remaining()));
    List<String> order = drawnOrder(seed, users);
    for (int i = 0; i < 10; i++) {
      Order offer = gate.order(e, order.get(i)).orElseThrow();
      assertEquals(List.of(i + 1L), offer.tickets(), order.get(i));
      assertEquals(Order.State.HELD, offer.state());
    }
    return order;
  }

  /**
   * The draw's order as a buyer recomputes it: rank = the first 6 bytes (big-endian) of
   * HMAC-SHA256(seed, user id), ties by the id bytes.
   */
  static List<String> drawnOrder(byte[] seed, List<String> users) throws GeneralSecurityException {
    Mac mac = Mac.getInstance("HmacSHA256");
    mac.init(new SecretKeySpec(seed, "HmacSHA256"));
    List<String> order = new ArrayList<>(users);
    order.sort(
        Comparator.<String>comparingLong(u -> rank(mac, u))
            .thenComparing((a, b) -> Arrays.compareUnsigned(bytes(a), bytes(b))));
    return order;
  }

  private static long rank(Mac mac, String user) {
    byte[] digest = mac.doFinal(bytes(user));
    long rank = 0;
    for (int i = 0; i < 6; i++) {
      rank = (rank << 8) | (digest[i] & 0xff);
    }
    return rank;
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}

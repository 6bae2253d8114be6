package io.ticketgate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import io.lettuce.core.sentinel.api.StatefulRedisSentinelConnection;
import java.net.SocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.junit.jupiter.api.Test;

/**
 * Over Redis Sentinel (clients/testenv.py --sentinel): the gate on a Lettuce client built from a
 * Sentinel {@link RedisURI} sells, {@code SENTINEL FAILOVER} promotes the replica, and the same
 * gate follows it (the sentinels close the old master's clients; Lettuce reconnects through them):
 * every claim acknowledged by {@code WAIT 1} before the switch is on the new master, and claims go
 * on there.
 */
class SentinelTest {
  private static final ProtocolKeyword CLAIM =
      () -> "TICKET.CLAIM".getBytes(StandardCharsets.US_ASCII);

  static RedisURI sentinelUri() {
    String nodes = System.getenv("TICKETGATE_TEST_SENTINELS");
    String master = System.getenv("TICKETGATE_TEST_SENTINEL_MASTER");
    assumeTrue(nodes != null && master != null, "no sentinels: run through testenv.py --sentinel");
    RedisURI.Builder uri = null;
    for (String node : nodes.split(",")) {
      String[] hp = node.split(":");
      int port = Integer.parseInt(hp[1]);
      uri =
          uri == null
              ? RedisURI.Builder.sentinel(hp[0], port, master)
              : uri.withSentinel(hp[0], port);
    }
    return uri.withTimeout(Duration.ofSeconds(2)).build();
  }

  @Test
  void aLettuceSentinelClientFollowsAFailover() throws Exception {
    RedisURI uri = sentinelUri();
    RedisClient client = RedisClient.create(uri);
    try (StatefulRedisConnection<String, String> conn = client.connect();
        TicketGate gate = LettuceTicketGate.create(client)) {
      String e = "java-sentinel-" + System.nanoTime();
      gate.init(e, 100);
      Map<String, Long> acked = new LinkedHashMap<>();
      RedisCommands<String, String> raw = conn.sync();
      for (int i = 0; i < 10; i++) {
        String user = "before" + i;
        long ticket =
            raw.dispatch(
                CLAIM,
                new IntegerOutput<>(StringCodec.UTF8),
                new CommandArgs<>(StringCodec.UTF8).add(e).add(user));
        assertTrue(raw.waitForReplication(1, 2000) >= 1, "WAIT 1: the replica has the claim");
        acked.put(user, ticket);
      }
      String name = uri.getSentinelMasterId();
      RedisURI first = uri.getSentinels().get(0);
      try (StatefulRedisSentinelConnection<String, String> sentinel =
          client.connectSentinel(RedisURI.create(first.getHost(), first.getPort()))) {
        SocketAddress old = sentinel.sync().getMasterAddrByName(name);
        // A sentinel refuses while its previous failover is too recent: retried.
        retry(() -> sentinel.sync().failover(name));
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (sentinel.sync().getMasterAddrByName(name).equals(old)) {
          assertTrue(System.nanoTime() < deadline, "no failover within 30 s");
          Thread.sleep(100);
        }
      }
      for (Map.Entry<String, Long> a : acked.entrySet()) {
        assertEquals(Optional.of(a.getValue()), retry(() -> gate.holder(e, a.getKey())));
      }
      assertEquals(11L, retry(() -> gate.claim(e, "after")));
    } finally {
      client.shutdown();
    }
  }

  /** {@code f}, again while a failover makes it fail (an application does the same). */
  static <T> T retry(Supplier<T> f) {
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (true) {
      try {
        return f.get();
      } catch (RuntimeException ex) {
        if (System.nanoTime() > deadline || ex instanceof TicketGateException) {
          throw ex;
        }
        try {
          Thread.sleep(100);
        } catch (InterruptedException interrupted) {
          Thread.currentThread().interrupt();
          throw ex;
        }
      }
    }
  }
}

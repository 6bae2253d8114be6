package io.ticketgate;

import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.ClusterClientOptions;
import io.lettuce.core.cluster.ClusterTopologyRefreshOptions;
import io.lettuce.core.cluster.RedisClusterClient;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.JedisCluster;
import redis.clients.jedis.RedisClient;

/**
 * The real servers of the integration tests, as clients/testenv.py announces them
 * (TICKETGATE_TEST_REDIS, TICKETGATE_TEST_CLUSTER), and the gates of each backend over them.
 */
final class Servers {
  private Servers() {}

  static String standalone() {
    return System.getenv("TICKETGATE_TEST_REDIS");
  }

  static String cluster() {
    return System.getenv("TICKETGATE_TEST_CLUSTER");
  }

  static List<String> clusterNodes() {
    return List.of(cluster().split(","));
  }

  /** The ways to reach the module: a gate and what must be closed after it. */
  enum Backend {
    LETTUCE_STANDALONE(false),
    JEDIS_STANDALONE(false),
    LETTUCE_CLUSTER(true),
    /** Lettuce with its default cluster options (adaptive refresh on by default since 7.0). */
    LETTUCE_CLUSTER_DEFAULTS(true),
    JEDIS_CLUSTER(true);

    final boolean cluster;

    Backend(boolean cluster) {
      this.cluster = cluster;
    }

    boolean available() {
      return (cluster ? cluster() : standalone()) != null;
    }

    Session open() {
      return switch (this) {
        case LETTUCE_STANDALONE -> {
          io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create(standalone());
          yield new Session(LettuceTicketGate.create(client), client::shutdown);
        }
        case JEDIS_STANDALONE -> {
          RedisClient jedis = RedisClient.create(java.net.URI.create(standalone()));
          yield new Session(JedisTicketGate.create(jedis), jedis::close);
        }
        case LETTUCE_CLUSTER -> {
          RedisClusterClient client = lettuceCluster();
          yield new Session(LettuceTicketGate.create(client), client::shutdown);
        }
        case LETTUCE_CLUSTER_DEFAULTS -> {
          List<RedisURI> seeds = new ArrayList<>();
          clusterNodes().forEach(n -> seeds.add(RedisURI.create("redis://" + n)));
          RedisClusterClient client = RedisClusterClient.create(seeds);
          yield new Session(LettuceTicketGate.create(client), client::shutdown);
        }
        case JEDIS_CLUSTER -> {
          Set<HostAndPort> nodes = new HashSet<>();
          clusterNodes().forEach(n -> nodes.add(HostAndPort.from(n)));
          JedisCluster jedis = new JedisCluster(nodes);
          yield new Session(JedisTicketGate.create(jedis), jedis::close);
        }
      };
    }
  }

  /**
   * A Lettuce cluster client as we recommend it: adaptive topology refresh on, so that a MOVED
   * after a reshard updates the slot map instead of redirecting every later command.
   */
  static RedisClusterClient lettuceCluster() {
    List<RedisURI> seeds = new ArrayList<>();
    clusterNodes().forEach(n -> seeds.add(RedisURI.create("redis://" + n)));
    RedisClusterClient client = RedisClusterClient.create(seeds);
    client.setOptions(
        ClusterClientOptions.builder()
            .topologyRefreshOptions(
                ClusterTopologyRefreshOptions.builder().enableAllAdaptiveRefreshTriggers().build())
            .build());
    return client;
  }

  /** A gate and the client under it. */
  record Session(TicketGate gate, Runnable closeClient) implements AutoCloseable {
    @Override
    public void close() {
      gate.close();
      closeClient.run();
    }
  }

  /** Per-node counters of one cluster: INFO commandstats and errorstats. */
  static final class NodeStats implements AutoCloseable {
    private final Map<String, StatefulRedisConnection<String, String>> nodes = new HashMap<>();
    private final io.lettuce.core.RedisClient client = io.lettuce.core.RedisClient.create();

    NodeStats() {
      for (String node : clusterNodes()) {
        nodes.put(node, client.connect(RedisURI.create("redis://" + node)));
      }
    }

    void reset() {
      nodes.values().forEach(c -> c.sync().configResetstat());
    }

    /** Calls of one command on each node (e.g. {@code ticket.claim}). */
    Map<String, Long> calls(String command) {
      return stat("commandstats", "cmdstat_" + command, "calls");
    }

    /** MOVED errors each node answered. */
    Map<String, Long> moved() {
      return stat("errorstats", "errorstat_MOVED", "count");
    }

    /** The node that owns a key's slot. */
    String owner(String key) {
      RedisCommands<String, String> any = nodes.values().iterator().next().sync();
      long slot = any.clusterKeyslot(key);
      for (Object range : any.clusterSlots()) {
        List<?> r = (List<?>) range;
        if ((Long) r.get(0) <= slot && slot <= (Long) r.get(1)) {
          List<?> master = (List<?>) r.get(2);
          return master.get(0) + ":" + master.get(1);
        }
      }
      throw new IllegalStateException("no owner for slot " + slot);
    }

    private Map<String, Long> stat(String section, String name, String field) {
      Map<String, Long> out = new HashMap<>();
      nodes.forEach((node, c) -> out.put(node, field(c.sync().info(section), name, field)));
      return out;
    }

    private static long field(String info, String name, String field) {
      for (String line : info.split("\r?\n")) {
        if (line.startsWith(name + ":")) {
          for (String pair : line.substring(name.length() + 1).split(",")) {
            String[] kv = pair.split("=");
            if (kv[0].equals(field)) {
              return Long.parseLong(kv[1]);
            }
          }
        }
      }
      return 0;
    }

    @Override
    public void close() {
      nodes.values().forEach(StatefulRedisConnection::close);
      client.shutdown();
    }
  }

  /** Moves the slot of a key, with its keys, to another master (clients/testenv.py move-slot). */
  static void moveSlot(String key, String to) throws IOException, InterruptedException {
    Path testenv = Path.of("..", "testenv.py");
    Process p =
        new ProcessBuilder(
                "python3",
                testenv.toString(),
                "move-slot",
                "--cluster",
                cluster(),
                "--key",
                key,
                "--to",
                to)
            .inheritIO()
            .start();
    if (p.waitFor() != 0) {
      throw new IllegalStateException("move-slot failed");
    }
  }
}

package io.ticketgate;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.output.IntegerOutput;
import io.lettuce.core.protocol.CommandArgs;
import io.lettuce.core.protocol.ProtocolKeyword;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import redis.clients.jedis.UnifiedJedis;
import redis.clients.jedis.commands.ProtocolCommand;

/**
 * Claims per second through the wrapper against raw {@code ticket.claim} from the same client in
 * the same run, concurrent threads on one client (Lettuce pipelines them on its connection; Jedis
 * uses its pool). Rounds alternate wrapper and raw (the order swapping each round); the medians of
 * throughput and of this process's CPU time per claim are compared (CPU time is the steadier
 * measure on a shared machine).
 *
 * <p>Run with {@code python3 clients/testenv.py --no-cluster -- clients/java/bench.sh}.
 */
public final class ClaimBench {
  private static final int THREADS = 32;
  private static final int CLAIMS_PER_ROUND = 16_000;
  private static final int ROUNDS = 11;
  private static final AtomicLong USERS = new AtomicLong();
  private static final com.sun.management.OperatingSystemMXBean CPU =
      (com.sun.management.OperatingSystemMXBean)
          java.lang.management.ManagementFactory.getOperatingSystemMXBean();

  /** One claim of a fresh user on the event. */
  interface Claim {
    void run(String event, String user);
  }

  public static void main(String[] args) throws Exception {
    String url = System.getenv("TICKETGATE_TEST_REDIS");
    RedisClient lettuceClient = RedisClient.create(url);
    try (StatefulRedisConnection<String, String> conn = lettuceClient.connect();
        UnifiedJedis jedis = redis.clients.jedis.RedisClient.create(java.net.URI.create(url))) {
      TicketGate overLettuce = LettuceTicketGate.create(conn);
      ProtocolKeyword keyword = new RawKeyword();
      compare(
          "lettuce",
          overLettuce,
          overLettuce::claim,
          (e, u) ->
              conn.sync()
                  .dispatch(
                      keyword,
                      new IntegerOutput<>(StringCodec.UTF8),
                      new CommandArgs<>(StringCodec.UTF8).addKey(e).add(u)));
      TicketGate overJedis = JedisTicketGate.create(jedis);
      ProtocolCommand command = () -> "ticket.claim".getBytes(StandardCharsets.US_ASCII);
      compare(
          "jedis",
          overJedis,
          overJedis::claim,
          (e, u) ->
              jedis.sendCommand(e.getBytes(StandardCharsets.UTF_8), command, bytes(e), bytes(u)));
    } finally {
      lettuceClient.shutdown();
    }
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void compare(String name, TicketGate gate, Claim wrapped, Claim raw)
      throws Exception {
    String event = "bench-" + name + "-" + System.nanoTime();
    gate.init(event, 2_000_000_000L);
    round(event, wrapped);
    round(event, raw);
    List<double[]> wrappedRounds = new ArrayList<>();
    List<double[]> rawRounds = new ArrayList<>();
    for (int r = 0; r < ROUNDS; r++) {
      if (r % 2 == 0) {
        wrappedRounds.add(round(event, wrapped));
        rawRounds.add(round(event, raw));
      } else {
        rawRounds.add(round(event, raw));
        wrappedRounds.add(round(event, wrapped));
      }
    }
    double w = median(wrappedRounds, 0);
    double rw = median(rawRounds, 0);
    double wCpu = median(wrappedRounds, 1);
    double rCpu = median(rawRounds, 1);
    System.out.printf(
        "%s: wrapper %.0f claims/s, raw %.0f claims/s (%+.1f%%); client CPU per claim: wrapper"
            + " %.1f us, raw %.1f us (%+.1f%%); medians of %d rounds of %d claims, %d threads%n",
        name,
        w,
        rw,
        100 * (w - rw) / rw,
        wCpu,
        rCpu,
        100 * (wCpu - rCpu) / rCpu,
        ROUNDS,
        CLAIMS_PER_ROUND,
        THREADS);
    gate.dropForce(event);
  }

  /** Claims per second of one round, and this process's CPU microseconds per claim. */
  private static double[] round(String event, Claim claim) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      long cpuStart = CPU.getProcessCpuTime();
      long start = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < CLAIMS_PER_ROUND / THREADS; i++) {
                    claim.run(event, "u" + USERS.incrementAndGet());
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      int claims = (CLAIMS_PER_ROUND / THREADS) * THREADS;
      double seconds = (System.nanoTime() - start) / 1e9;
      double cpuMicros = (CPU.getProcessCpuTime() - cpuStart) / 1e3 / claims;
      return new double[] {claims / seconds, cpuMicros};
    } finally {
      pool.shutdown();
    }
  }

  private static double median(List<double[]> rounds, int column) {
    List<Double> sorted = new ArrayList<>();
    rounds.forEach(r -> sorted.add(r[column]));
    Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }

  /** The raw command's name for Lettuce. */
  private static final class RawKeyword implements ProtocolKeyword {
    @Override
    public byte[] getBytes() {
      return "ticket.claim".getBytes(StandardCharsets.US_ASCII);
    }

    @Override
    public String toString() {
      return "ticket.claim";
    }
  }
}

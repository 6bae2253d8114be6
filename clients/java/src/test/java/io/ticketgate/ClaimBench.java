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
 * uses its pool). Many short rounds alternate wrapper and raw (the order swapping each round), so
 * both see the same machine; compared are the median throughput and this process's mean CPU time
 * per claim (the client-side cost, steadier than throughput on a shared machine).
 *
 * <p>Run with {@code python3 clients/testenv.py --no-cluster -- clients/java/bench.sh}.
 */
public final class ClaimBench {
  private static final int LETTUCE_THREADS = 32;

  /** Jedis's default pool has 8 connections: more threads only queue on the pool's lock. */
  private static final int JEDIS_THREADS = 8;

  private static final int CLAIMS_PER_ROUND = 4_000;
  private static final int ROUNDS = 41;
  private static final AtomicLong USERS = new AtomicLong();
  private static final com.sun.management.OperatingSystemMXBean CPU =
      (com.sun.management.OperatingSystemMXBean)
          java.lang.management.ManagementFactory.getOperatingSystemMXBean();

  /** One claim of a fresh user on the event. */
  interface Claim {
    void run(String event, String user);
  }

  public static void main(String[] args) throws Exception {
    wrapperAlone();
    String url = System.getenv("TICKETGATE_TEST_REDIS");
    if (url == null) {
      System.err.println("no server: run through clients/testenv.py --no-cluster");
      System.exit(2);
    }
    RedisClient lettuceClient = RedisClient.create(url);
    try (StatefulRedisConnection<String, String> conn = lettuceClient.connect();
        UnifiedJedis jedis = redis.clients.jedis.RedisClient.create(java.net.URI.create(url))) {
      TicketGate overLettuce = LettuceTicketGate.create(conn);
      ProtocolKeyword keyword = new RawKeyword();
      compare(
          "lettuce",
          LETTUCE_THREADS,
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
          JEDIS_THREADS,
          overJedis,
          overJedis::claim,
          (e, u) ->
              jedis.sendCommand(e.getBytes(StandardCharsets.UTF_8), command, bytes(e), bytes(u)));
    } finally {
      lettuceClient.shutdown();
    }
  }

  /**
   * The wrapper's own work per claim (arguments, dispatch, reply decoding) over a transport that
   * answers at once: CPU-bound, so steady even on a loaded machine.
   */
  private static void wrapperAlone() {
    Transport instant =
        new Transport() {
          @Override
          public Object send(TicketCommand command, String event, List<String> args) {
            return (long) (event.length() + args.get(0).length()); // reads what it is given
          }

          @Override
          public void close() {}
        };
    TicketGate gate = new TicketGate(instant);
    String[] users = new String[1 << 20];
    for (int i = 0; i < users.length; i++) {
      users[i] = "user-" + i;
    }
    long sink = 0;
    for (int i = 0; i < 4_000_000; i++) {
      sink += gate.claim("event", users[i & (users.length - 1)]);
    }
    int calls = 20_000_000;
    long start = System.nanoTime();
    for (int i = 0; i < calls; i++) {
      sink += gate.claim("event", users[i & (users.length - 1)]);
    }
    double nanos = (System.nanoTime() - start) / (double) calls;
    System.out.printf("wrapper alone: %.0f ns per claim (checksum %d)%n", nanos, sink);
  }

  private static byte[] bytes(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private static void compare(String name, int threads, TicketGate gate, Claim wrapped, Claim raw)
      throws Exception {
    String event = "bench-" + name + "-" + System.nanoTime();
    gate.init(event, 2_000_000_000L);
    round(event, threads, wrapped);
    round(event, threads, raw);
    List<double[]> wrappedRounds = new ArrayList<>();
    List<double[]> rawRounds = new ArrayList<>();
    for (int r = 0; r < ROUNDS; r++) {
      if (r % 2 == 0) {
        wrappedRounds.add(round(event, threads, wrapped));
        rawRounds.add(round(event, threads, raw));
      } else {
        rawRounds.add(round(event, threads, raw));
        wrappedRounds.add(round(event, threads, wrapped));
      }
    }
    double w = median(wrappedRounds, 0);
    double rw = median(rawRounds, 0);
    double wCpu = mean(wrappedRounds, 1);
    double rCpu = mean(rawRounds, 1);
    System.out.printf(
        "%s: wrapper %.0f claims/s, raw %.0f claims/s (%+.1f%%, medians); client CPU per claim:"
            + " wrapper %.1f us, raw %.1f us (%+.1f%%, means); %d rounds of %d claims, %d"
            + " threads%n",
        name,
        w,
        rw,
        100 * (w - rw) / rw,
        wCpu,
        rCpu,
        100 * (wCpu - rCpu) / rCpu,
        ROUNDS,
        CLAIMS_PER_ROUND,
        threads);
    gate.dropForce(event);
  }

  /** Claims per second of one round, and this process's CPU microseconds per claim. */
  private static double[] round(String event, int threads, Claim claim) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    try {
      long cpuStart = CPU.getProcessCpuTime();
      long start = System.nanoTime();
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(
            pool.submit(
                () -> {
                  for (int i = 0; i < CLAIMS_PER_ROUND / threads; i++) {
                    claim.run(event, "u" + USERS.incrementAndGet());
                  }
                  return null;
                }));
      }
      for (Future<?> f : done) {
        f.get();
      }
      int claims = (CLAIMS_PER_ROUND / threads) * threads;
      double seconds = (System.nanoTime() - start) / 1e9;
      double cpuMicros = (CPU.getProcessCpuTime() - cpuStart) / 1e3 / claims;
      return new double[] {claims / seconds, cpuMicros};
    } finally {
      pool.shutdown();
    }
  }

  /** The mean over all rounds: CPU time is counted in scheduler ticks, too coarse for one round. */
  private static double mean(List<double[]> rounds, int column) {
    return rounds.stream().mapToDouble(r -> r[column]).average().orElse(Double.NaN);
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

package io.ticketgate;

import io.lettuce.core.RedisClient;
import java.time.Duration;

/** The README's example, compiled with the tests (it needs a server to run). */
final class ReadmeExample {
  private ReadmeExample() {}

  static void example() {
    RedisClient redis = RedisClient.create("redis://localhost:6379");
    try (TicketGate gate = LettuceTicketGate.create(redis)) {
      gate.init("concert", 100, InitOptions.defaults().hold(Duration.ofMinutes(15)));
      try {
        long ticket = gate.claim("concert", "alice");
        gate.confirm("concert", "alice");
        System.out.println("alice holds " + ticket);
      } catch (SoldOutException e) {
        System.out.println(e.code() + ": " + e.serverMessage());
      }
    }
  }
}

package io.ticketgate.example;

import io.ticketgate.TicketGate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfEnvironmentVariable;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The same 1,000-on-100 test with Spring Data Redis configured for Redis Sentinel ({@code
 * spring.data.redis.sentinel.master} and {@code .nodes}): the gate runs on the master the sentinels
 * name (clients/testenv.py --sentinel).
 */
@EnabledIfEnvironmentVariable(named = "TICKETGATE_TEST_SENTINELS", matches = ".+")
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class SentinelParticipateTest {
  @LocalServerPort int port;
  @Autowired TicketGate gate;

  @DynamicPropertySource
  static void redis(DynamicPropertyRegistry registry) {
    String nodes = System.getenv("TICKETGATE_TEST_SENTINELS");
    String master = System.getenv("TICKETGATE_TEST_SENTINEL_MASTER");
    registry.add("spring.data.redis.sentinel.master", () -> master == null ? "tg" : master);
    registry.add("spring.data.redis.sentinel.nodes", () -> nodes == null ? "127.0.0.1:1" : nodes);
  }

  @Test
  void thousandUsersOnHundredTickets() throws Exception {
    ParticipateConcurrencyTest.assertContest(gate, port);
  }
}
